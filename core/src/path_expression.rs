//! A path matched by a regular expression whose groups are its parameters: the routes a radix
//! tree cannot hold (`pattern_routes`) and a binding's pattern filters (Sinatra's
//! `before "/f/:name.:ext"`) both match through one.
//!
//! Why `regex` and not the language's own engine: a Sinatra parameter is greedy, so
//! `/f/:name.:ext` reads `a.tar.gz` as `a.tar` and `gz`. A backtracking engine (Ruby's, up to
//! 3.1) tries every split of a path that fails late, quadratic in its length: that expression
//! took 2.0 s on one request's 20 KB path of dots in Ruby 3.1. `regex` does not backtrack, so a
//! match is linear in the path whatever the expression, and a filter that runs for every
//! request cannot be made slow by the path a client sends. It reads greedy groups as a
//! backtracking engine does (leftmost-first), so the parameters are the same.

use std::sync::Arc;

/// A compiled expression and the name of each of its groups.
pub struct PathExpression {
    expression: regex::Regex,
    /// Group 1's name first: a named group by its name, another by its number (`"1"`).
    names: Arc<[Arc<str>]>,
}

impl PathExpression {
    /// `source` in `regex`'s syntax; it matches where it matches, so anchor it (`\A…\z`) to
    /// match a whole path. The error is `regex`'s message as one line.
    pub fn new(source: &str) -> Result<PathExpression, String> {
        let expression = regex::Regex::new(source).map_err(|e| one_line(&e))?;
        let names = expression.capture_names().enumerate().skip(1).map(|(number, name)| Arc::from(name.map_or_else(|| number.to_string(), str::to_owned))).collect();
        Ok(PathExpression { expression, names })
    }

    /// Each group's parameter name, in the expression's order.
    pub fn names(&self) -> &Arc<[Arc<str>]> {
        &self.names
    }

    pub fn is_match(&self, path: &str) -> bool {
        self.expression.is_match(path)
    }

    /// Where each group matched in `path` (start, length), in [`Self::names`]' order, `None`
    /// for a group that took no part (`(\.json)?` without it); `None` when `path` does not
    /// match.
    pub fn spans(&self, path: &str) -> Option<Vec<Option<(usize, usize)>>> {
        let captures = self.expression.captures(path)?;
        Some(captures.iter().skip(1).map(|found| found.map(|found| (found.start(), found.len()))).collect())
    }
}

/// `regex`'s message (several lines, with a caret under the spot) as one line.
pub(crate) fn one_line(error: &regex::Error) -> String {
    let text = error.to_string();
    let last = text.lines().map(str::trim).rfind(|line| !line.is_empty() && !line.chars().all(|c| c == '^' || c == ' '));
    last.map_or("invalid", |line| line.trim_start_matches("error: ")).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found<'p>(expression: &PathExpression, path: &'p str) -> Option<Vec<Option<&'p str>>> {
        Some(expression.spans(path)?.into_iter().map(|span| span.map(|(start, len)| &path[start..start + len])).collect())
    }

    #[test]
    fn groups_are_named_by_name_or_number_and_one_that_took_no_part_is_none() {
        let expression = PathExpression::new(r"\A/f/(?<name>[^/?#]+)\.(?<ext>[^/?#]+)(/x)?\z").unwrap();
        assert_eq!(expression.names().iter().map(|n| &**n).collect::<Vec<_>>(), ["name", "ext", "3"]);
        assert_eq!(found(&expression, "/f/a.tar.gz"), Some(vec![Some("a.tar"), Some("gz"), None]), "greedy, as Sinatra reads it");
        assert_eq!(found(&expression, "/f/a.b/x"), Some(vec![Some("a"), Some("b"), Some("/x")]));
        assert_eq!(found(&expression, "/f/ab"), None);
        assert!(expression.is_match("/f/a.b") && !expression.is_match("/g/a.b"));
    }

    #[test]
    fn a_greedy_expression_on_a_path_that_fails_at_its_end_is_refused() {
        // What took Ruby's engine 2.0 s (20 KB of dots); `regex` makes no guess to go back on.
        let expression = PathExpression::new(r"\A/f/(?<name>[^/?#]+)\.(?<ext>[^/?#]+)\z").unwrap();
        assert_eq!(expression.spans(&format!("/f/{}/x", ".".repeat(40_000))), None);
    }

    #[test]
    fn an_expression_regex_cannot_read_is_named_in_one_line() {
        let error = PathExpression::new("/(?=x)").err().unwrap();
        assert!(error.starts_with("look-around") && !error.contains('\n'), "{error}");
    }
}
