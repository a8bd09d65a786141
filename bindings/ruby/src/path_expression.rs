//! `Ferrule::PathExpression`: a filter's pattern (`before "/f/:name.:ext"`) matched by the
//! core's [`ferrule_core::PathExpression`], in time linear in the path, where Ruby's own
//! engine backtracks (see that module for why and what it cost).

use magnus::{Error, RArray, Ruby};

#[magnus::wrap(class = "Ferrule::PathExpression", free_immediately, size)]
pub struct PathExpression(ferrule_core::PathExpression);

impl PathExpression {
    /// `PathExpression.new(source)`: an ArgumentError with `regex`'s message, in one line, when
    /// the source is not one it reads.
    pub fn new(ruby: &Ruby, source: String) -> Result<Self, Error> {
        ferrule_core::PathExpression::new(&source).map(PathExpression).map_err(|e| Error::new(ruby.exception_arg_error(), e))
    }

    /// `match?(path)`.
    pub fn is_match(&self, path: String) -> bool {
        self.0.is_match(&path)
    }

    /// `captures(path)`: each group's text in order (nil for one that took no part), or nil
    /// when the path does not match.
    pub fn captures(ruby: &Ruby, rb_self: &Self, path: String) -> Result<Option<RArray>, Error> {
        let Some(spans) = rb_self.0.spans(&path) else { return Ok(None) };
        let found = ruby.ary_new_capa(spans.len());
        for span in spans {
            match span {
                Some((start, len)) => found.push(ruby.str_new(&path[start..start + len]))?,
                None => found.push(ruby.qnil())?,
            }
        }
        Ok(Some(found))
    }
}
