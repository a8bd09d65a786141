//! Path templates: `/users/{id:int}/files/{rest:path}` → an axum route plus typed parameters.

use crate::params::ScalarKind;
use crate::path_expression::{one_line, PathExpression};

/// A parsed path template.
#[derive(Debug, Clone, PartialEq)]
pub struct PathTemplate {
    /// The same path in axum's syntax: `/users/{id}/files/{*rest}`. For a route the router
    /// cannot hold ([`PathTemplate::pattern`]), the path as the OpenAPI document writes it
    /// (`/files/{name}.{ext}`), or a `RouteSpec::pattern` route's label.
    pub axum_path: String,
    pub params: Vec<PathParam>,
    /// The regular expression a request's path (in its canonical spelling) is matched by, for a
    /// route the router cannot hold: a parameter that shares its segment with text
    /// (`/files/{name}.{ext}`, `/near/:lat-:lng`), one with an expression of its own
    /// (`/at/:hour(^\d{2})h`), a `{rest:path}` before the end, or a `RouteSpec::pattern`.
    /// Anchored at both ends; each parameter is a group of its name.
    pub pattern: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PathParam {
    pub name: String,
    pub kind: ScalarKind,
    /// A `{name:path}` that matches across slashes (the rest of the path, as a rule).
    pub wildcard: bool,
    /// Whether the template names the type (`{id:int}`); `{id}` and `:id` leave it to the
    /// route's parameter schema (Fastify's `schema.params`), a string when there is none.
    pub typed: bool,
    /// A group of a `RouteSpec::pattern` that may take no part in a match (`(\.json)?`):
    /// not required.
    pub optional: bool,
}

/// A template read into its parts: text as written, and parameters (with a `:name(regex)`'s
/// own expression, or the `{…}` a braced one was written as).
enum Piece<'a> {
    Text(&'a str),
    Param(PathParam, Option<&'a str>),
    Braced(PathParam, &'a str),
}

impl PathTemplate {
    /// The template in the core's own spelling: `:name` parameters as `{name}`, or the message
    /// that says how to write what cannot be read. For bindings that read a template's
    /// parameter names themselves (Python's signature analysis).
    pub fn normalize(template: &str) -> Result<String, String> {
        let mut out = String::with_capacity(template.len() + 8);
        for piece in pieces(template)? {
            match piece {
                Piece::Text(text) | Piece::Braced(_, text) => out.push_str(text),
                Piece::Param(param, None) => out.push_str(&format!("{{{}}}", param.name)),
                // The braced spelling has no place for it, and leaving it out would serve what
                // it refuses (found on review).
                Piece::Param(param, Some(own)) => {
                    return Err(format!(
                        "path `{template}`: `:{}({own})`: write `{{{}}}` and give the parameter a `pattern` (`Path(pattern=...)`)",
                        param.name, param.name
                    ))
                }
            }
        }
        Ok(out)
    }

    /// A route's path: its [`RouteSpec::pattern`](crate::spec::RouteSpec::pattern) when it
    /// has one, else its template.
    pub fn of_route(spec: &crate::spec::RouteSpec) -> Result<PathTemplate, String> {
        match &spec.pattern {
            Some(pattern) => PathTemplate::from_pattern(&spec.path, pattern),
            None => PathTemplate::parse(&spec.path),
        }
    }

    pub fn parse(template: &str) -> Result<PathTemplate, String> {
        if !template.starts_with('/') {
            return Err(format!("path `{template}` must start with `/`"));
        }
        let pieces = pieces(template)?;
        let mut params: Vec<PathParam> = Vec::new();
        for piece in &pieces {
            if let Piece::Param(param, _) | Piece::Braced(param, _) = piece {
                if params.iter().any(|p| p.name == param.name) {
                    return Err(format!("path `{template}`: parameter `{}` appears twice", param.name));
                }
                params.push(param.clone());
            }
        }
        // The router holds a parameter that is a whole segment, a `{rest:path}` only at the end.
        let last = pieces.len().saturating_sub(1);
        let routable = pieces.iter().enumerate().all(|(at, piece)| match piece {
            Piece::Text(_) => true,
            Piece::Param(param, _) | Piece::Braced(param, _) => {
                let own = if let Piece::Param(_, own) = piece { *own } else { None };
                let starts_segment = at > 0 && matches!(pieces[at - 1], Piece::Text(text) if text.ends_with('/'));
                let ends_segment = at == last || matches!(pieces[at + 1], Piece::Text(text) if text.starts_with('/'));
                own.is_none() && starts_segment && ends_segment && (!param.wildcard || at == last)
            }
        });
        let mut axum_path = String::with_capacity(template.len());
        let mut pattern = (!routable).then(|| String::from(r"\A"));
        for piece in &pieces {
            match piece {
                Piece::Text(text) => {
                    let spelled = crate::canonical_path::canonical(text);
                    let text = spelled.as_deref().unwrap_or(text);
                    axum_path.push_str(text);
                    if let Some(pattern) = &mut pattern {
                        pattern.push_str(&regex::escape(text));
                    }
                }
                Piece::Param(param, _) | Piece::Braced(param, _) => {
                    let own = if let Piece::Param(_, own) = piece { *own } else { None };
                    let name = &param.name;
                    axum_path.push_str(&if param.wildcard && routable { format!("{{*{name}}}") } else { format!("{{{name}}}") });
                    if let Some(pattern) = &mut pattern {
                        // Greedy, as Starlette's `[^/]+`, Mustermann's and find-my-way's
                        // parameters are: `{name}.{ext}` reads `a.b.c` as `a.b` and `c`.
                        let matches = match own {
                            // Its own groups are no parameters (`(^(en|fr)$)`).
                            Some(own) => format!("(?:{})", non_capturing(unanchored(own))),
                            None if param.wildcard => String::from(".*"),
                            None => String::from("[^/]+"),
                        };
                        if let Some(own) = own {
                            regex::Regex::new(&matches).map_err(|e| format!("path `{template}`: `:{name}({own})`: {}", one_line(&e)))?;
                        }
                        pattern.push_str(&format!("(?P<{name}>{matches})"));
                    }
                }
            }
        }
        if let Some(pattern) = &mut pattern {
            pattern.push_str(r"\z");
            PathExpression::new(pattern).map_err(|e| format!("path `{template}`: {e}"))?;
        }
        Ok(PathTemplate { axum_path, params, pattern })
    }

    /// A route matched by a regular expression of its own (Sinatra's Regexp routes), in Rust's
    /// `regex` syntax, against the whole path in its canonical spelling. Each group is a path
    /// parameter: a named one by its name, another by its number (`1`, `2`, …). `label` names
    /// the route (in messages, logs and metrics); the OpenAPI document leaves the route out,
    /// as an expression is no OpenAPI path.
    pub fn from_pattern(label: &str, pattern: &str) -> Result<PathTemplate, String> {
        let anchored = format!(r"\A(?:{pattern})\z");
        let compiled = PathExpression::new(&anchored).map_err(|e| format!("{label}: the pattern is not one this router reads: {e}"))?;
        let params = compiled
            .names()
            .iter()
            .map(|name| PathParam {
                name: name.to_string(),
                kind: ScalarKind::Str,
                wildcard: false,
                typed: false,
                optional: true,
            })
            .collect();
        Ok(PathTemplate { axum_path: label.to_owned(), params, pattern: Some(anchored) })
    }
}

/// A `:name(regex)`'s expression without the `^` and `$` find-my-way lets it carry: it is
/// matched against its part of the path, not the whole.
fn unanchored(own: &str) -> &str {
    let own = own.strip_prefix('^').unwrap_or(own);
    match own.strip_suffix('$') {
        Some(rest) if !rest.ends_with('\\') => rest,
        _ => own,
    }
}

/// `expression` with each plain group `(…)` made `(?:…)`: escapes and character classes
/// skipped.
fn non_capturing(expression: &str) -> String {
    let mut out = String::with_capacity(expression.len() + 8);
    let (mut in_class, mut escaped) = (false, false);
    let mut chars = expression.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class && chars.peek() != Some(&'?') => out.push_str("?:"),
            _ => {}
        }
    }
    out
}

/// The template's text and parameters. A parameter is `{name}`, `{name:type}`, `{*name}`, or
/// (Express, Fastify, Sinatra, Rails) `:name` where a segment starts or after another `:name`
/// in its segment (`/near/:lat-:lng`), optionally with an expression of its own
/// (`:file(^\d+).png`, find-my-way's). A `:` elsewhere is text (`/v1/items:batch`).
fn pieces(template: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut pieces = Vec::new();
    let mut text_from = 0;
    let mut colon_in_segment = false;
    let mut at = 0;
    let bytes = template.as_bytes();
    let segment_at = |at: usize| {
        let start = template[..at].rfind('/').map_or(0, |s| s + 1);
        let end = template[at..].find('/').map_or(template.len(), |e| at + e);
        &template[start..end]
    };
    while at < bytes.len() {
        let starts_segment = at > 0 && bytes[at - 1] == b'/';
        match bytes[at] {
            b'/' => {
                colon_in_segment = false;
                at += 1;
            }
            // Found by Sinatra's corpus: `/posts/?:format?` (Sinatra's optional parts) was
            // taken with a literal `?`, which no request's path holds, so the route silently
            // matched nothing.
            mark @ (b'?' | b'#') => {
                let what = if mark == b'?' { "starts the query" } else { "starts the fragment" };
                return Err(format!(
                    "path `{template}`: a request's path never holds `{}` (it {what}); an optional part is two routes, one with it and one without",
                    mark as char
                ));
            }
            b'*' if starts_segment => {
                let star = segment_at(at);
                let name = if star.len() > 1 { &star[1..] } else { "rest" };
                return Err(format!("path `{template}`: `{star}` is not a segment; write `{{{name}:path}}` for the rest of the path"));
            }
            b'{' => {
                let close = template[at..].find('}').map(|c| at + c).ok_or_else(|| format!("path `{template}`: unclosed `{{`"))?;
                let inner = &template[at + 1..close];
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
                let kind = ScalarKind::from_template(ty).ok_or_else(|| {
                    format!("path `{template}`: unknown type `{ty}` (use int, float, bool, uuid, date, datetime, str or path)")
                })?;
                pieces.push(Piece::Text(&template[text_from..at]));
                pieces.push(Piece::Braced(PathParam { name: name.to_owned(), kind, wildcard, typed, optional: false }, &template[at..=close]));
                at = close + 1;
                text_from = at;
            }
            b'}' => return Err(format!("path `{template}`: unmatched `}}`")),
            b':' if starts_segment || colon_in_segment => {
                let name_len = template[at + 1..].bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
                if name_len == 0 {
                    let segment = segment_at(at);
                    return Err(format!("path `{template}`: `{segment}` is not a parameter segment; write `{{name}}`"));
                }
                let name = &template[at + 1..at + 1 + name_len];
                let mut next = at + 1 + name_len;
                let own = if bytes.get(next) == Some(&b'(') {
                    let close = group_end(&template[next..]).ok_or_else(|| format!("path `{template}`: the `(` after `:{name}` is not closed"))?;
                    let own = &template[next + 1..next + close - 1];
                    next += close;
                    Some(own)
                } else {
                    None
                };
                pieces.push(Piece::Text(&template[text_from..at]));
                pieces.push(Piece::Param(PathParam { name: name.to_owned(), kind: ScalarKind::Str, wildcard: false, typed: false, optional: false }, own));
                colon_in_segment = true;
                at = next;
                text_from = at;
            }
            _ => at += 1,
        }
    }
    pieces.push(Piece::Text(&template[text_from..]));
    pieces.retain(|piece| !matches!(piece, Piece::Text("")));
    Ok(pieces)
}

/// Where the group that `text` starts with (at its `(`) ends, just past its `)`: escapes and
/// character classes (`[)]`) skipped.
fn group_end(text: &str) -> Option<usize> {
    let (mut depth, mut in_class, mut escaped) = (0usize, false, false);
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class => depth += 1,
            ')' if !in_class => {
                depth -= 1;
                if depth == 0 {
                    return Some(at + 1);
                }
            }
            _ => {}
        }
    }
    None
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
            crate::spec::ParamSpec { required: Some(!p.optional), ..crate::spec::ParamSpec::new(p.name.clone(), schema) }
        })
        .collect()
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

    // Found running find-my-way's and Starlette's tests: a parameter beside text in its segment
    // was refused (`{name}.{ext}`, `:lat-:lng`), as was one with an expression of its own.
    #[test]
    fn a_path_the_router_cannot_hold_is_an_expression_and_documented_as_a_template() {
        for (template, documented, pattern) in [
            ("/files/{name}.{ext}", "/files/{name}.{ext}", r"\A/files/(?P<name>[^/]+)\.(?P<ext>[^/]+)\z"),
            ("/files/:name.:ext", "/files/{name}.{ext}", r"\A/files/(?P<name>[^/]+)\.(?P<ext>[^/]+)\z"),
            ("/near/:lat-:lng/r", "/near/{lat}-{lng}/r", r"\A/near/(?P<lat>[^/]+)\-(?P<lng>[^/]+)/r\z"),
            ("/img/:file(^\\d+).png", "/img/{file}.png", r"\A/img/(?P<file>(?:\d+))\.png\z"),
            ("/v{version}/items", "/v{version}/items", r"\A/v(?P<version>[^/]+)/items\z"),
            ("/f/{rest:path}/edit", "/f/{rest}/edit", r"\A/f/(?P<rest>.*)/edit\z"),
            ("/r/:id(^\\d+$)", "/r/{id}", r"\A/r/(?P<id>(?:\d+))\z"),
            ("/l/:lang(^(en|fr)$)", "/l/{lang}", r"\A/l/(?P<lang>(?:(?:en|fr)))\z"),
        ] {
            let parsed = PathTemplate::parse(template).unwrap();
            assert_eq!((parsed.axum_path.as_str(), parsed.pattern.as_deref()), (documented, Some(pattern)), "{template}");
        }
        let typed = PathTemplate::parse("/a/{id:int}.json").unwrap();
        assert_eq!((typed.params[0].kind, typed.params[0].typed), (ScalarKind::Int, true));
        assert_eq!(PathTemplate::parse("/users/:id").unwrap().pattern, None, "a whole segment stays the router's");
        assert_eq!(PathTemplate::parse("/v1/items:batch").unwrap().pattern, None, "a colon after text is text");
        assert_eq!(PathTemplate::normalize("/near/:lat-:lng").unwrap(), "/near/{lat}-{lng}");
        assert_eq!(PathTemplate::normalize("/items/{id:int}/{rest:path}").unwrap(), "/items/{id:int}/{rest:path}", "a braced one as written");
        assert!(PathTemplate::normalize("/r/:id(^\\d+$)").unwrap_err().contains("give the parameter a `pattern`"));
    }

    #[test]
    fn a_colon_segment_is_a_string_parameter() {
        let colon = PathTemplate::parse("/users/:id/posts/:post_id").unwrap();
        assert_eq!(colon, PathTemplate::parse("/users/{id}/posts/{post_id}").unwrap());
        for (template, advice) in [("/o/:id?", "two routes"), ("/r/:id(^\\d+$", "is not closed"), ("/r/:id(\\d+(?=x))", "`:id(")] {
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
