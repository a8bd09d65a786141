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
    /// Whether the template names the type (`{id:int}`); `{id}` and `:id` leave it to the
    /// route's parameter schema (Fastify's `schema.params`), a string when there is none.
    pub typed: bool,
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
            let inner = &rest[open + 1..close];
            // The router matches a parameter as a whole segment; said here, by name, instead of
            // its own "only one parameter per segment" for a segment that has one.
            let starts_segment = rest[..open].is_empty() && axum_path.ends_with('/') || rest[..open].ends_with('/');
            let ends_segment = rest[close + 1..].is_empty() || rest[close + 1..].starts_with('/');
            if !(starts_segment && ends_segment) {
                let segment = template.split('/').find(|s| s.contains(&format!("{{{inner}}}"))).unwrap_or(inner);
                return Err(format!("path `{template}`: `{segment}`: {}", whole_segment_advice(inner.split(':').next().unwrap_or(inner))));
            }
            push_literal(&mut axum_path, &rest[..open]);
            let (name, ty, wildcard, typed) = match inner.strip_prefix('*') {
                Some(name) => (name, "path", true, true),
                None => match inner.split_once(':') {
                    Some((name, ty)) => (name, ty, ty == "path", true),
                    None => (inner, "str", false, false),
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
            params.push(PathParam { name: name.to_owned(), kind, wildcard, typed });
        }
        if rest.contains('}') {
            return Err(format!("path `{template}`: unmatched `}}`"));
        }
        push_literal(&mut axum_path, rest);
        Ok(PathTemplate { axum_path, params })
    }
}

/// A router path's captures in order, each with the literal before it, and the literal after
/// the last: `/u/{id}/x/{*rest}` → `[("/u/", "id"), ("/x/", "*rest")]` and `""`. The one
/// reading of an `axum_path` for what needs its parameters' places or names.
pub(crate) fn router_captures(axum_path: &str) -> (Vec<(&str, &str)>, &str) {
    let mut captures = Vec::new();
    let mut rest = axum_path;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| open + c) else { break };
        captures.push((&rest[..open], &rest[open + 1..close]));
        rest = &rest[close + 1..];
    }
    (captures, rest)
}

/// A literal part of a template in the one spelling requests are matched in
/// (`canonical_path`): a character a URI path cannot carry as it is (a space, `é`)
/// percent-encoded in UTF-8 with upper-case hex (RFC 3986 §2.1), an escape of one it can
/// carry (`%7E`) decoded, so `/café` matches `/caf%C3%A9` and `/caf%c3%a9`, and is the same
/// route as a template that wrote it so.
fn push_literal(out: &mut String, literal: &str) {
    match crate::canonical_path::canonical(literal) {
        Some(spelled) => out.push_str(&spelled),
        None => out.push_str(literal),
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
                    // An untyped segment takes its type from the schema (`:id` with
                    // `{ type: 'integer', minimum: 1 }` is an integer of at least 1, coerced
                    // and checked), a union's too (`anyOf: [integer, boolean]` was a string
                    // that no branch took: every value a 422, found beside Fastify); a typed
                    // one keeps the template's.
                    let schema_types = !p.typed && ["type", "anyOf", "oneOf"].iter().any(|key| source.contains_key(*key));
                    if schema_types {
                        *target = source.clone();
                    } else {
                        for (key, value) in source {
                            target.entry(key.clone()).or_insert_with(|| value.clone());
                        }
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
    // Found by Sinatra's corpus: `/posts/?:format?` (Sinatra's optional parts) was taken with a
    // literal `?`, which no request's path holds, so the route silently matched nothing.
    if let Some(mark) = template.find(['?', '#']) {
        let what = if template[mark..].starts_with('?') { "starts the query" } else { "starts the fragment" };
        return Err(format!(
            "path `{template}`: a request's path never holds `{}` (it {what}); an optional part is two routes, one with it and one without",
            &template[mark..=mark]
        ));
    }
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
                let name = if name.is_empty() { "name" } else { &name };
                let advice = match rest.chars().next() {
                    None => format!("write `{{{name}}}`"),
                    Some('(') => format!("write `{{{name}}}` and give its schema a `pattern` (or a type: `{{{name}:int}}`)"),
                    Some(_) => whole_segment_advice(name),
                };
                return Err(format!("path `{template}`: `{segment}` is not a parameter segment; {advice}"));
            }
            None => out.push_str(segment),
        }
    }
    Ok(out)
}

/// What to write for a parameter that shares its segment with text (`:file.png`, `{a}-{b}`).
fn whole_segment_advice(name: &str) -> String {
    format!("a parameter is a whole segment here: write `{{{name}}}` and check the rest of the segment in the handler (or with a schema `pattern`)")
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

    // Found by a README-driven probe: Fastify's `schema.params` typing `:id` as an integer was
    // merged under the segment's `string`, so `abc` passed and `minimum` meant nothing.
    #[test]
    fn an_untyped_segment_takes_its_type_from_the_schema_and_a_typed_one_keeps_its_own() {
        let extra = [crate::spec::ParamSpec::new("id", serde_json::json!({"type": "integer", "minimum": 1}))];
        let untyped = param_specs(&PathTemplate::parse("/x/:id").unwrap(), &extra);
        assert_eq!(untyped[0].schema, serde_json::json!({"type": "integer", "minimum": 1}));
        let extra = [crate::spec::ParamSpec::new("id", serde_json::json!({"type": "string", "maxLength": 3}))];
        let typed = param_specs(&PathTemplate::parse("/x/{id:int}").unwrap(), &extra);
        assert_eq!(typed[0].schema["type"], "integer");
        assert_eq!(typed[0].schema["maxLength"], 3);
        // A union types it too: it was `type: string` beside the union, which nothing matched.
        let union = serde_json::json!({"anyOf": [{"type": "integer"}, {"type": "boolean"}]});
        let either = param_specs(&PathTemplate::parse("/x/:id").unwrap(), &[crate::spec::ParamSpec::new("id", union.clone())]);
        assert_eq!(either[0].schema, union);
    }

    // Found by a README-driven probe: `/café` and `/a b` matched no request a client sends.
    #[test]
    fn literal_characters_a_path_cannot_carry_are_matched_as_clients_encode_them() {
        assert_eq!(PathTemplate::parse("/café/{name}").unwrap().axum_path, "/caf%C3%A9/{name}");
        assert_eq!(PathTemplate::parse("/a b").unwrap().axum_path, "/a%20b");
        assert_eq!(PathTemplate::parse("/a%20b").unwrap().axum_path, "/a%20b", "one route, however it was written");
        assert_eq!(PathTemplate::parse("/caf%c3%a9/%7Eme").unwrap().axum_path, "/caf%C3%A9/~me");
        assert_eq!(PathTemplate::parse("/v1/items:batch@x").unwrap().axum_path, "/v1/items:batch@x");
    }

    #[test]
    fn a_colon_segment_is_a_string_parameter() {
        let colon = PathTemplate::parse("/users/:id/posts/:post_id").unwrap();
        assert_eq!(colon, PathTemplate::parse("/users/{id}/posts/{post_id}").unwrap());
        // Found running find-my-way's tests: the advice was `{name}.json`, which the router
        // then refused as "only one parameter per segment".
        for (template, advice) in [
            ("/files/:name.json", "write `{name}` and check the rest of the segment"),
            ("/files/{name}.json", "write `{name}` and check the rest of the segment"),
            ("/a/{p1}-{p2}", "write `{p1}` and check the rest"),
            ("/o/:id?", "two routes"),
            ("/r/:id(^\\d+$)", "a `pattern`"),
        ] {
            let error = PathTemplate::parse(template).unwrap_err();
            assert!(error.contains(advice), "{template}: {error}");
        }
        assert!(PathTemplate::parse("/a/:").unwrap_err().contains("write `{name}`"));
        assert!(PathTemplate::parse("/{a}/x/{b}").is_ok());
        assert!(PathTemplate::parse("/static/*").unwrap_err().contains("write `{rest:path}`"));
        for template in ["/posts/?:format?", "/posts/?", "/a?b", "/{id}?", "/page#top"] {
            assert!(PathTemplate::parse(template).unwrap_err().contains("an optional part is two routes"), "{template}");
        }
    }
}
