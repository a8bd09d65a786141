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
    pub fn parse(template: &str) -> Result<PathTemplate, String> {
        if !template.starts_with('/') {
            return Err(format!("path `{template}` must start with `/`"));
        }
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
}
