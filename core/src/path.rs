//! Path templates: `/users/{id:int}/files/{rest:path}` → an axum route plus typed parameters.

use crate::params::ScalarKind;

/// A parsed path template.
#[derive(Debug, Clone, PartialEq)]
pub struct PathTemplate {
    /// The same path in axum's syntax: `/users/{id}/files/{*rest}`.
    pub axum_path: String,
    pub params: Vec<PathParam>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PathParam {
    pub name: String,
    pub kind: ScalarKind,
    /// A trailing `{name:path}` that matches the rest of the path, slashes included.
    pub wildcard: bool,
}

impl PathTemplate {
    /// The template in the core's own spelling: `:name` segments as `{name}`, or the message
    /// that says how to write what cannot be read. For bindings that read a template's
    /// parameter names themselves (Python's signature analysis).
    pub fn normalize(template: &str) -> Result<String, String> {
        colon_segments_braced(template)
    }

    pub fn parse(template: &str) -> Result<PathTemplate, String> {
        if !template.starts_with('/') {
            return Err(format!("path `{template}` must start with `/`"));
        }
        let braced = colon_segments_braced(template)?;
        let template = braced.as_str();
        let mut axum_path = String::with_capacity(template.len());
        let mut params: Vec<PathParam> = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            let close = rest[open..]
                .find('}')
                .map(|c| open + c)
                .ok_or_else(|| format!("path `{template}`: unclosed `{{`"))?;
            axum_path.push_str(&rest[..open]);
            let inner = &rest[open + 1..close];
            let (name, ty, wildcard) = match inner.strip_prefix('*') {
                Some(name) => (name, "path", true),
                None => match inner.split_once(':') {
                    Some((name, ty)) => (name, ty, ty == "path"),
                    None => (inner, "str", false),
                },
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!("path `{template}`: `{inner}` is not a valid parameter name"));
            }
            if params.iter().any(|p| p.name == name) {
                return Err(format!("path `{template}`: parameter `{name}` appears twice"));
            }
            let kind = ScalarKind::from_template(ty).ok_or_else(|| {
                format!(
                    "path `{template}`: unknown type `{ty}` (use int, float, bool, uuid, date, datetime, str or path)"
                )
            })?;
            rest = &rest[close + 1..];
            if wildcard {
                if !rest.is_empty() {
                    return Err(format!("path `{template}`: `{{{inner}}}` must be the last segment"));
                }
                axum_path.push_str(&format!("{{*{name}}}"));
            } else {
                axum_path.push_str(&format!("{{{name}}}"));
            }
            params.push(PathParam { name: name.to_owned(), kind, wildcard });
        }
        if rest.contains('}') {
            return Err(format!("path `{template}`: unmatched `}}`"));
        }
        axum_path.push_str(rest);
        Ok(PathTemplate { axum_path, params })
    }
}

/// The path parameters a route validates: each template parameter's type as a schema, with the
/// keywords the route adds for it (`minimum`, `pattern`, …) where the type says nothing.
pub(crate) fn param_specs(template: &PathTemplate, extra: &[crate::spec::ParamSpec]) -> Vec<crate::spec::ParamSpec> {
    template
        .params
        .iter()
        .map(|p| {
            let mut schema = p.kind.schema();
            if let Some(extra) = extra.iter().find(|e| e.name == p.name) {
                if let (Some(target), Some(source)) = (schema.as_object_mut(), extra.schema.as_object()) {
                    for (key, value) in source {
                        target.entry(key.clone()).or_insert_with(|| value.clone());
                    }
                }
            }
            crate::spec::ParamSpec { required: Some(true), ..crate::spec::ParamSpec::new(p.name.clone(), schema) }
        })
        .collect()
}

/// Express, Fastify, Sinatra and Rails write a parameter as a `:name` segment; it means
/// `{name}` here (a string). A colon inside a segment (`/a:b`, `/files/:name.json`) is refused
/// with the braced spelling to use, rather than left for the router to misread; so is a `*`
/// segment (`{rest:path}` matches the rest of the path).
fn colon_segments_braced(template: &str) -> Result<String, String> {
    if let Some(star) = template.split('/').find(|s| s.starts_with('*')) {
        let name = if star.len() > 1 { &star[1..] } else { "rest" };
        return Err(format!("path `{template}`: `{star}` is not a segment; write `{{{name}:path}}` for the rest of the path"));
    }
    if !template.contains("/:") {
        return Ok(template.to_owned());
    }
    let mut out = String::with_capacity(template.len() + 8);
    for (i, segment) in template.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        match segment.strip_prefix(':') {
            Some(name) if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                out.push('{');
                out.push_str(name);
                out.push('}');
            }
            Some(_) => {
                let name: String = segment[1..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                let rest = &segment[1 + name.len()..];
                return Err(format!(
                    "path `{template}`: `{segment}` is not a parameter segment; write `{{{}}}{rest}`",
                    if name.is_empty() { "name" } else { &name }
                ));
            }
            None => out.push_str(segment),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_and_wildcard_params() {
        let t = PathTemplate::parse("/users/{id:int}/posts/{slug}/{rest:path}").unwrap();
        assert_eq!(t.axum_path, "/users/{id}/posts/{slug}/{*rest}");
        assert_eq!(t.params.iter().map(|p| p.kind).collect::<Vec<_>>(), [ScalarKind::Int, ScalarKind::Str, ScalarKind::Str]);
        assert!(t.params[2].wildcard);
    }

    #[test]
    fn mistakes_are_explained() {
        assert!(PathTemplate::parse("/a/{id:integer}").unwrap_err().contains("unknown type `integer`"));
        assert!(PathTemplate::parse("/a/{rest:path}/b").unwrap_err().contains("last segment"));
        assert!(PathTemplate::parse("/a/{id").unwrap_err().contains("unclosed"));
        assert!(PathTemplate::parse("/a/{id}/{id}").unwrap_err().contains("twice"));
        assert!(PathTemplate::parse("a").unwrap_err().contains("start with"));
    }

    #[test]
    fn a_colon_segment_is_a_string_parameter() {
        let colon = PathTemplate::parse("/users/:id/posts/:post_id").unwrap();
        assert_eq!(colon, PathTemplate::parse("/users/{id}/posts/{post_id}").unwrap());
        let inside = PathTemplate::parse("/files/:name.json").unwrap_err();
        assert!(inside.contains("write `{name}.json`"), "{inside}");
        assert!(PathTemplate::parse("/a/:").unwrap_err().contains("write `{name}`"));
        assert!(PathTemplate::parse("/static/*").unwrap_err().contains("write `{rest:path}`"));
    }
}
