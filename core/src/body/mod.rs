//! Request bodies: limits (413), content types (415), then parsing and validation (422).

mod complete;
mod form;
pub(crate) mod json;
mod multipart;

use crate::params::{FormatValues, ParamSet, RawPairs};
use crate::problem::{Issue, Problem};
use crate::request::Body;
use crate::spec::{BodyKind, BodySpec, ParamSpec};
use crate::validation::{CompiledSchema, SchemaError};
use futures_util::future::Either;
use http::{header, HeaderMap, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value as Json;
use std::future::Future;

/// A route's body rules, compiled once.
#[derive(Debug)]
pub struct BodyReader {
    kind: BodyKind,
    required: bool,
    limit: usize,
    max_file_size: Option<usize>,
    max_json_depth: usize,
    refuse_prototype_keys: bool,
    multipart_limits: multipart::Limits,
    /// JSON bodies: the compiled schema, when it constrains anything.
    schema: Option<CompiledSchema>,
    /// JSON bodies: the schema's defaults and integers, given to valid bodies.
    completion: Option<complete::Completion>,
    /// Form and multipart bodies: fields coerced and validated like query parameters.
    fields: Option<ParamSet>,
    /// Form and multipart bodies: what the schema says beyond each field (see `form`).
    form_rules: Option<form::FormRules>,
}

/// The app-wide limits on what one body may contain.
#[derive(Debug, Clone, Copy)]
pub struct InputLimits {
    pub max_json_depth: usize,
    pub refuse_prototype_keys: bool,
    pub multipart: multipart::Limits,
}

impl InputLimits {
    pub fn from_config(config: &crate::spec::AppConfig) -> Self {
        InputLimits {
            max_json_depth: config.max_json_depth,
            refuse_prototype_keys: config.refuse_prototype_keys,
            multipart: multipart::Limits {
                max_parts: config.max_multipart_parts,
                max_part_header_bytes: config.max_part_header_bytes,
                max_filename_bytes: config.max_filename_bytes,
            },
        }
    }
}

/// A multipart body's parts as sent (text, bytes that are not UTF-8, or a file), bounded by
/// `config`'s multipart limits: for a handler that reads a body its route did not declare
/// (Python's `await request.form()`), parsed by the same parser and limits as a declared one.
/// A malformed body is the 400 problem a declared one gets.
pub async fn multipart_parts(content_type: &str, body: bytes::Bytes, config: &crate::spec::AppConfig) -> Result<crate::params::RawPairs<'static>, Problem> {
    multipart::parse(content_type, body, None, InputLimits::from_config(config).multipart).await
}

impl Default for InputLimits {
    fn default() -> Self {
        InputLimits::from_config(&crate::spec::AppConfig::default())
    }
}

/// Whether a JSON body's schema can refuse anything: all but `true`, `{}` and a schema of
/// annotations alone. A JSON body is never coerced, so none of its keywords is proven before
/// validation. (It was asked of [`crate::params::has_constraints`], which is for parameters,
/// whose coercion has made their type: `{"items": {"type": "integer"}}` took `[1, "x"]`, and
/// an untyped `{"format": "date"}` took `"2024-13-01"`, found by a differential run.)
fn json_constrains(schema: &Json) -> bool {
    const ANNOTATIONS: [&str; 9] = ["title", "description", "default", "examples", "deprecated", "$comment", "$schema", "contentMediaType", "contentEncoding"];
    match schema {
        Json::Bool(accepts) => !accepts,
        Json::Object(map) => map.keys().any(|keyword| !ANNOTATIONS.contains(&keyword.as_str())),
        _ => true,
    }
}

impl BodyReader {
    /// `formats`: how a form field's uuid, date or date-time is handed over.
    pub fn compile(spec: &BodySpec, limit: usize, inputs: InputLimits, formats: FormatValues) -> Result<Self, SchemaError> {
        let (schema, fields) = match (spec.kind, &spec.schema) {
            (BodyKind::Json, Some(schema)) if json_constrains(schema) => (Some(CompiledSchema::compile_for_documents(schema)?), None),
            (BodyKind::Form | BodyKind::Multipart, Some(schema)) => {
                (None, Some(ParamSet::compile_as("body", &form_fields(schema), formats)?.empty_as_missing()))
            }
            _ => (None, None),
        };
        let form_rules = match (spec.kind, &spec.schema) {
            (BodyKind::Form | BodyKind::Multipart, Some(schema)) => form::FormRules::compile(schema)?,
            _ => None,
        };
        let completion = match (spec.kind, &spec.schema) {
            (BodyKind::Json, Some(schema)) => Some(complete::Completion::compile(schema)).filter(|c| !c.is_empty()),
            _ => None,
        };
        Ok(BodyReader {
            kind: spec.kind,
            required: spec.required,
            limit,
            max_file_size: spec.max_file_size,
            max_json_depth: inputs.max_json_depth,
            refuse_prototype_keys: inputs.refuse_prototype_keys,
            multipart_limits: inputs.multipart,
            schema,
            completion,
            fields,
            form_rules,
        })
    }

    /// Reads and checks the body. `Err` is a request-ending problem (413, 415); issues that
    /// belong in a 422 next to parameter issues are pushed to `issues`.
    /// Reads the body (within the limit) and parses it; returns it parsed and as sent (the
    /// same bytes, shared, for handlers that want the raw body).
    ///
    /// A plain function that returns the reading's future, not an `async fn`: the checks on the
    /// head need no wait, and an `async fn` keeps its arguments twice in every request's future.
    pub fn read<'a>(&'a self, headers: &'a HeaderMap, body: axum::body::Body, issues: &'a mut Vec<Issue>) -> impl Future<Output = Result<(Body, bytes::Bytes), Problem>> + Send + 'a {
        // Only what parsing needs is kept across the read (each route's future is copied whole).
        let multipart = {
            let head = BodyHead::of(headers);
            let content_type = head.content_type.and_then(|v| v.to_str().ok()).unwrap_or("");
            let essence = media_type(content_type);
            // A body of a type the route does not take is refused on the head, unread (a
            // declared length past the limit is refused first, by `read_within`, as before).
            let sent = !axum::body::HttpBody::is_end_stream(&body);
            if sent && !self.accepts(&essence) && !declared_length(&body).is_some_and(|length| length > self.limit as u64) {
                return Either::Left(std::future::ready(Err(refused_unread(body, headers, unsupported(self.kind, content_type)))));
            }
            // A body in a content coding is not read as if it were none: gzip sent as JSON was a
            // 422 `json_invalid`, plain JSON labelled gzip was taken, and `br` or `foo` were
            // ignored (found by a probe). RFC 9110 §15.5.16: a coding not taken is a 415.
            if let Some(coding) = head.content_coding.filter(|coding| sent && !coding.as_bytes().eq_ignore_ascii_case(b"identity")) {
                let coding = String::from_utf8_lossy(coding.as_bytes()).into_owned();
                return Either::Left(std::future::ready(Err(refused_unread(body, headers, Problem::status(StatusCode::UNSUPPORTED_MEDIA_TYPE).with_detail(format!("A body in the content coding `{coding}` is not taken: send it without Content-Encoding."))))));
            }
            essence == "multipart/form-data"
        };
        Either::Right(async move {
            let bytes = read_within(body, self.limit, headers).await?;
            let parsed = self.parse(headers, multipart, bytes.clone(), issues).await?;
            Ok((parsed, bytes))
        })
    }

    /// The body read: empty, or of a type the route takes ([`Self::read`] refused any other
    /// before reading), `multipart/form-data` or not.
    async fn parse(&self, headers: &HeaderMap, multipart: bool, bytes: bytes::Bytes, issues: &mut Vec<Issue>) -> Result<Body, Problem> {
        if bytes.is_empty() {
            if self.required {
                if self.fields.is_some() {
                    // A form names what it misses field by field, as FastAPI's Form() does;
                    // one whose fields all have defaults takes them.
                    return Ok(Body::Form(self.fields(&RawPairs::new(), issues)));
                }
                issues.push(Issue::missing(vec!["body".into()]));
            }
            return Ok(Body::None);
        }
        Ok(match self.kind {
            BodyKind::Json => match json::parse(&bytes, self.max_json_depth) {
                Ok(value) if self.refuse_prototype_keys && value.has_prototype_keys() && json::prototype_key(&value).is_some() => {
                    // Refused before validation: its issue is the only one that matters.
                    issues.extend(json::prototype_key(&value));
                    Body::None
                }
                Ok(mut value) => {
                    let mut found = self.schema.as_ref().map(|s| s.document_issues(&value, &["body".into()])).unwrap_or_default();
                    // A property both required and defaulted, sent without it: Ajv fills
                    // defaults before it checks `required` (Fastify's `useDefaults`), so the body
                    // is taken with its default there. It was a 422 `missing` here (found by a
                    // differential run beside Fastify). Only a refusal that misses something pays
                    // for trying again; pydantic's schemas never require a defaulted field.
                    let mut finished = false;
                    if let (Some(schema), Some(completion)) = (&self.schema, &self.completion) {
                        if completion.has_defaults() && found.iter().any(|issue| issue.kind == "missing") {
                            let mut filled = value.clone();
                            if completion.apply(&mut filled, &["body".into()]).is_ok() {
                                let again = schema.document_issues(&filled, &["body".into()]);
                                if again.is_empty() {
                                    (value, found, finished) = (filled, again, true);
                                }
                            }
                        }
                    }
                    // Defaults are not user input: filled in only once the input itself is
                    // valid; a whole float is an integer only once `integer` accepted it.
                    if let (true, false, Some(completion)) = (found.is_empty(), finished, &self.completion) {
                        if let Err(oversized) = completion.apply(&mut value, &["body".into()]) {
                            issues.extend(oversized);
                            return Ok(Body::None);
                        }
                    }
                    issues.extend(found);
                    Body::Json(value)
                }
                Err(issue) => {
                    issues.push(issue);
                    Body::None
                }
            },
            // A form whose fields include files may still come url-encoded when no file is sent
            // (an optional one), as FastAPI reads it (found by a probe: a 415).
            BodyKind::Form | BodyKind::Multipart if !multipart => Body::Form(self.fields(&RawPairs::from_urlencoded(&bytes), issues)),
            BodyKind::Form | BodyKind::Multipart => {
                let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
                // Boxed: the parser's state is most of a route's future, and every route's
                // future (no body, JSON) would otherwise be as large and copied as often.
                let pairs = Box::pin(multipart::parse(content_type, bytes, self.max_file_size, self.multipart_limits)).await?;
                Body::Form(self.fields(&pairs, issues))
            }
            BodyKind::Text => match String::from_utf8(bytes.to_vec()) {
                Ok(text) => Body::Text(text),
                Err(_) => {
                    issues.push(Issue::new(
                        "string_unicode",
                        vec!["body".into()],
                        "Input should be a valid string, unable to parse raw data as a unicode string",
                        Json::Null,
                    ));
                    Body::None
                }
            },
            BodyKind::Bytes => Body::Bytes(bytes),
        })
    }

    fn fields(&self, pairs: &RawPairs<'_>, issues: &mut Vec<Issue>) -> crate::value::Params {
        match &self.fields {
            Some(fields) => {
                let first_issue = issues.len();
                let params = fields.extract(pairs, issues);
                if let Some(rules) = &self.form_rules {
                    rules.check(&params, pairs, issues);
                    fields.in_declaration_order(&mut issues[first_issue..]);
                }
                params
            }
            // No schema: every field as text, last value wins.
            None => {
                let mut out = crate::value::Params::new();
                for (key, value) in pairs.iter() {
                    let value = match value {
                        crate::params::RawValue::Text(t) => crate::value::Value::Str(t.to_string()),
                        crate::params::RawValue::File(f) => crate::value::Value::File((**f).clone()),
                        crate::params::RawValue::Invalid(b) => crate::value::Value::Str(String::from_utf8_lossy(b).into_owned()),
                    };
                    out.push(std::sync::Arc::from(key), value);
                }
                out
            }
        }
    }

    fn accepts(&self, essence: &str) -> bool {
        match self.kind {
            BodyKind::Json => essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json")),
            // An HTML form may be sent either way (`enctype`), and Starlette reads both.
            BodyKind::Form => essence == "application/x-www-form-urlencoded" || essence == "multipart/form-data",
            BodyKind::Multipart => essence == "multipart/form-data" || essence == "application/x-www-form-urlencoded",
            BodyKind::Text => essence.starts_with("text/"),
            BodyKind::Bytes => true,
        }
    }
}

/// The object schema of a form body as one parameter per property.
fn form_fields(schema: &Json) -> Vec<ParamSpec> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Json::as_array)
        .map(|r| r.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Json::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, prop)| ParamSpec { required: Some(required.contains(&name.as_str())), ..ParamSpec::new(name.clone(), prop.clone()) })
                .collect()
        })
        .unwrap_or_default()
}

/// A content type's media type (`application/json` of `Application/JSON; charset=utf-8`),
/// lower-cased.
fn media_type(content_type: &str) -> std::borrow::Cow<'_, str> {
    // One byte loop finds the end and any upper case, not `split(';')` and a second pass: on a
    // value as short as `application/json` the searcher cost 155 instructions a request, two
    // passes with their trims 274, this 222 (callgrind, json-small).
    let bytes = content_type.as_bytes();
    let mut end = bytes.len();
    let mut upper = false;
    for (at, &b) in bytes.iter().enumerate() {
        if b == b';' {
            end = at;
            break;
        }
        upper |= b.is_ascii_uppercase();
    }
    // `;` is ASCII, so `end` is a character boundary; only ASCII white space is trimmed, as
    // HTTP's optional white space is spaces and tabs.
    let essence = content_type[..end].trim_matches(|c: char| c == ' ' || c == '\t');
    // Lower-cased only when it needs it: a copy per request for the usual spelling.
    match upper {
        true => std::borrow::Cow::Owned(essence.to_ascii_lowercase()),
        false => std::borrow::Cow::Borrowed(essence),
    }
}

/// Whether the client waits for `100 Continue` before it sends its body (`Expect:
/// 100-continue`, as curl sends with a body over 1 MiB). hyper sends the 100 when the body is
/// first read, so a request refused on its head alone (a declared length past the limit, a
/// content type the route does not take, no route) is answered without reading it: the client
/// is never asked for the body, and the connection closes after the answer, since bytes of it
/// may still come (RFC 9110 §10.1.1). Reading it first asked for megabytes only to drop them,
/// and the refusal came after them. Looked up on those paths only: a request that is served
/// pays nothing for it.
pub(crate) fn expects_continue(headers: &HeaderMap) -> bool {
    headers.get(header::EXPECT).is_some_and(|value| value.as_bytes().eq_ignore_ascii_case(b"100-continue"))
}

/// `problem`, the answer to a request refused on its head alone, its body unread: drained after
/// the answer as [`discard`] does, or, for a client waiting for `100 Continue`
/// ([`expects_continue`]), never asked for, the connection closing after the answer.
fn refused_unread(body: axum::body::Body, headers: &HeaderMap, problem: Problem) -> Problem {
    if expects_continue(headers) {
        drop(body);
        return problem.closing();
    }
    discard(body);
    problem
}

/// A whole body of at most `limit` bytes (413 past it, refused on its declared length alone,
/// unread, when that says so). The headers are read here, before the future is made: it does
/// not keep them.
fn read_within(body: axum::body::Body, limit: usize, headers: &HeaderMap) -> impl Future<Output = Result<bytes::Bytes, Problem>> {
    if declared_length(&body).is_some_and(|length| length > limit as u64) {
        return Either::Left(std::future::ready(Err(refused_unread(body, headers, too_large(limit)))));
    }
    Either::Right(read_limited(body, limit))
}

/// The body's bytes, up to `limit` (413 past it).
///
/// A body that comes in one frame, as most small ones do, is that frame's bytes, shared with
/// the socket's read buffer as hyper handed them (as the request's header values already are:
/// a body kept past its request keeps that buffer, up to hyper's read buffer size). A body in
/// pieces is put together in one buffer, sized at its second piece by what the body says is
/// left, up to [`FIRST_RESERVE`]: a client that declares a large body and sends it a byte at
/// a time gets no more memory than it has sent. Copying every body into a buffer grown as it
/// came, and looking its length up in the headers, cost (callgrind, release, 1,000 requests
/// after 200, median of 5–6 runs, instructions a request) json-small 34,851 → 34,430,
/// json-medium 111,129 → 110,191, json-large 851,049 → 834,811.
async fn read_limited(mut body: axum::body::Body, limit: usize) -> Result<bytes::Bytes, Problem> {
    let mut first = bytes::Bytes::new();
    let mut joined: Option<bytes::BytesMut> = None;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(unreadable)?;
        let Ok(data) = frame.into_data() else { continue };
        let read = joined.as_ref().map_or(first.len(), |joined| joined.len());
        if read + data.len() > limit {
            discard(body);
            return Err(too_large(limit));
        }
        if joined.is_none() && first.is_empty() {
            first = data;
            continue;
        }
        let reserve = first_reserve(read + data.len(), declared_length(&body), limit);
        let joined = joined.get_or_insert_with(|| {
            let mut joined = bytes::BytesMut::with_capacity(reserve);
            joined.extend_from_slice(&first);
            joined
        });
        joined.extend_from_slice(&data);
    }
    Ok(joined.map_or(first, bytes::BytesMut::freeze))
}

/// The most a body in pieces reserves ahead of what it has sent: its declared length is the
/// client's word, not bytes (found on review: a declared 2 MiB and two bytes sent held 2 MiB).
/// Past it the buffer grows as bytes come, doubling.
const FIRST_RESERVE: usize = 64 * 1024;

/// What a body in pieces reserves once `received` bytes have come and the body says `left`
/// more are to come: the bytes it has, and what is left up to [`FIRST_RESERVE`], within
/// `limit`.
fn first_reserve(received: usize, left: Option<u64>, limit: usize) -> usize {
    let ahead = left.map_or(0, |left| left.min(FIRST_RESERVE as u64) as usize);
    (received + ahead).min(limit)
}

/// The body's length as its sender declared it (`Content-Length`, as hyper framed the body by
/// it), or what is left of it once part is read; `None` for a body sent in chunks. Asked of
/// the body, not the headers: the body knows it without a lookup, and knows it as the bytes
/// are framed (a `Content-Length` beside `Transfer-Encoding` frames nothing).
fn declared_length(body: &axum::body::Body) -> Option<u64> {
    axum::body::HttpBody::size_hint(body).exact()
}

fn unreadable(error: axum::Error) -> Problem {
    if crate::server::is_body_timeout(&error) {
        // The client is too slow to wait for: answer, and end the connection.
        Problem::status(StatusCode::REQUEST_TIMEOUT).with_detail("The request body was not received in time.").closing()
    } else {
        let mut problem = Problem::status(StatusCode::BAD_REQUEST).with_detail("The request body could not be read.");
        problem.stream_error = Some(crate::server::StreamError::new(error));
        problem
    }
}

/// A body on a route that takes none: read to its end (up to `limit` bytes, then the rest is
/// drained after the answer, as [`discard`] does) before the route answers. Answering first
/// would let a broken body go unnoticed: over HTTP/2, a Content-Length that the DATA frames do
/// not add up to, or a flow-control window pushed past 2^31 − 1, must reset the stream
/// (RFC 9113 §8.1.1, §6.9.1), and only reading the stream finds them. Costs nothing for the
/// usual request, whose head already says there is no body. With `keep` (a route or a
/// fallback, whose handler may read its raw body) what was read is returned, and a body past
/// the limit is a 413 as on any route: a handler must see the whole body or none, never an
/// empty one that looks as if the client sent nothing. Without (404, 405) the bytes are only
/// counted, and the refusal stands; a client waiting for `100 Continue` is not asked for them
/// ([`expects_continue`]).
pub(crate) async fn read_unwanted(mut body: axum::body::Body, limit: usize, keep: bool, headers: &HeaderMap) -> Result<Option<bytes::Bytes>, Problem> {
    if axum::body::HttpBody::is_end_stream(&body) {
        return Ok(Some(bytes::Bytes::new()));
    }
    if keep {
        return read_within(body, limit, headers).await.map(Some);
    }
    if expects_continue(headers) {
        // Never asked for (see `expects_continue`): hyper closes the connection after the answer.
        drop(body);
        return Ok(None);
    }
    let mut read = 0;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(unreadable)?;
        read += frame.data_ref().map_or(0, bytes::Bytes::len);
        if read > limit {
            discard(body);
            return Ok(None);
        }
    }
    Ok(Some(bytes::Bytes::new()))
}

/// Most HTTP/1.1 clients send the whole body before they read the response. If the server
/// answers early (413, or a route that takes no body) and closes with unread bytes pending,
/// the client gets a broken pipe or a reset instead of the answer. So, like nginx's lingering
/// close, keep reading and dropping what is left, within a byte and time budget; past it the
/// connection is closed as before.
pub(crate) fn discard(body: axum::body::Body) {
    const MAX_BYTES: usize = 16 * 1024 * 1024;
    const MAX_TIME: std::time::Duration = std::time::Duration::from_secs(5);
    if axum::body::HttpBody::is_end_stream(&body) {
        return;
    }
    tokio::spawn(async move {
        let mut body = body;
        let drain = async {
            let mut read = 0;
            while let Some(Ok(frame)) = body.frame().await {
                read += frame.data_ref().map_or(0, |d| d.len());
                if read > MAX_BYTES {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(MAX_TIME, drain).await;
    });
}

fn too_large(limit: usize) -> Problem {
    Problem::status(StatusCode::PAYLOAD_TOO_LARGE).with_detail(format!("The request body exceeds the limit of {limit} bytes."))
}

/// The two headers a body is read by, found in one walk over the head: for the few headers
/// most requests carry, comparing each name costs less than two lookups, which each hash the
/// name and probe the map (the connection reads `Host` and the rest the same way,
/// `server::connection::HeadNames`). The first of each, as `HeaderMap::get` gives it.
struct BodyHead<'a> {
    content_type: Option<&'a http::HeaderValue>,
    content_coding: Option<&'a http::HeaderValue>,
}

impl<'a> BodyHead<'a> {
    fn of(headers: &'a HeaderMap) -> Self {
        let mut head = BodyHead { content_type: None, content_coding: None };
        for (name, value) in headers {
            if name == header::CONTENT_TYPE {
                head.content_type.get_or_insert(value);
            } else if name == header::CONTENT_ENCODING {
                head.content_coding.get_or_insert(value);
            }
        }
        head
    }
}

fn unsupported(kind: BodyKind, got: &str) -> Problem {
    let expected = match kind {
        BodyKind::Json => "application/json",
        BodyKind::Form => "application/x-www-form-urlencoded or multipart/form-data",
        BodyKind::Multipart => "multipart/form-data (or application/x-www-form-urlencoded without files)",
        BodyKind::Text => "text/*",
        BodyKind::Bytes => "any",
    };
    let got = if got.is_empty() { "none".to_owned() } else { format!("`{got}`") };
    Problem::status(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        .with_detail(format!("Expected a body of type {expected}, got {got}."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_required_property_with_a_default_takes_it_as_ajv_does() {
        // Fastify 5 answers these 200 with the default filled; they were 422 `missing`.
        let schema = serde_json::json!({"type": "object", "required": ["a", "lines"], "properties": {
            "a": {"type": "integer", "default": 5},
            "lines": {"type": "array", "items": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer", "default": 0}}}},
            "b": {"type": "string"}}});
        let reader = BodyReader::compile(&BodySpec::json(schema), 1 << 20, InputLimits::default(), FormatValues::Typed).unwrap();
        let reader = &reader;
        let read = |body: &'static str| async move {
            let mut issues = Vec::new();
            let parsed = reader.parse(&HeaderMap::new(), false, bytes::Bytes::from(body), &mut issues).await.unwrap();
            let value = match parsed {
                Body::Json(document) => document.to_tree(),
                _ => serde_json::Value::Null,
            };
            (value, issues.iter().map(|issue| (issue.kind, serde_json::to_value(&issue.loc).unwrap())).collect::<Vec<_>>())
        };
        assert_eq!(read(r#"{"lines": [{"n": 1}, {}]}"#).await, (serde_json::json!({"lines": [{"n": 1}, {"n": 0}], "a": 5}), vec![]));
        // What a default cannot mend is refused as it was sent.
        let (_, issues) = read(r#"{"lines": [{}], "b": 1}"#).await;
        assert_eq!(issues, vec![("missing", serde_json::json!(["body", "a"])), ("missing", serde_json::json!(["body", "lines", 0, "n"])), ("string_type", serde_json::json!(["body", "b"]))]);
    }

    #[tokio::test]
    async fn a_json_schema_without_a_type_is_still_enforced() {
        // Found by a differential run against the JSON Schema test suite: these were never
        // validated, since only a `type` or a parameter's kind of constraint compiled one.
        for (schema, body) in [
            (serde_json::json!({"items": {"type": "integer"}}), r#"[1, "x"]"#),
            (serde_json::json!({"items": {"type": "string", "format": "uuid"}}), r#"["x"]"#),
            (serde_json::json!({"items": {"type": ["integer", "null"]}}), r#"["x"]"#),
            (serde_json::json!({"format": "date"}), r#""2024-13-01""#),
            (serde_json::json!(false), "1"),
        ] {
            let reader = BodyReader::compile(&BodySpec::json(schema.clone()), 1 << 20, InputLimits::default(), FormatValues::Typed).unwrap();
            let mut issues = Vec::new();
            let _ = reader.parse(&HeaderMap::new(), false, bytes::Bytes::from(body), &mut issues).await;
            assert!(!issues.is_empty(), "{schema} took {body}");
        }
        // What cannot refuse anything compiles no validator.
        for schema in [serde_json::json!({}), serde_json::json!(true), serde_json::json!({"title": "Anything", "description": "…"})] {
            assert!(!json_constrains(&schema), "{schema}");
        }
    }

    #[test]
    fn the_media_type_is_the_essence_lower_cased_and_borrowed_when_it_can_be() {
        for (sent, essence, borrowed) in [
            ("application/json", "application/json", true),
            ("application/json; charset=utf-8", "application/json", true),
            (" application/json\t;charset=UTF-8", "application/json", true),
            ("Application/JSON; charset=utf-8", "application/json", false),
            ("text/plain;Charset=ASCII", "text/plain", true),
            ("", "", true),
            (";", "", true),
        ] {
            let found = media_type(sent);
            assert_eq!((&*found, matches!(found, std::borrow::Cow::Borrowed(_))), (essence, borrowed), "{sent:?}");
        }
    }
    use bytes::Bytes;
    use std::time::Duration;

    fn streamed() -> (tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>, axum::body::Body) {
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        let stream = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) });
        (tx, axum::body::Body::from_stream(stream))
    }

    #[tokio::test]
    async fn an_early_413_keeps_reading_what_the_client_still_sends() {
        let reader = BodyReader::compile(&BodySpec::of_kind(BodyKind::Bytes, None), 8, InputLimits::default(), FormatValues::Typed).unwrap();
        let (tx, body) = streamed();
        tx.send(Ok(Bytes::from_static(b"0123456789abcdef"))).await.unwrap();
        let problem = reader.read(&HeaderMap::new(), body, &mut Vec::new()).await.unwrap_err();
        assert_eq!(problem.status, 413);
        // Had the body been dropped, the "client" would see the connection go away here.
        for _ in 0..64 {
            let sent = tokio::time::timeout(Duration::from_secs(2), tx.send(Ok(Bytes::from_static(b"more")))).await;
            assert!(matches!(sent, Ok(Ok(()))), "the rest of the body was not drained");
        }
    }

    #[tokio::test]
    async fn bodies_within_the_limit_are_read_whole() {
        let reader = BodyReader::compile(&BodySpec::of_kind(BodyKind::Bytes, None), 8, InputLimits::default(), FormatValues::Typed).unwrap();
        let (tx, body) = streamed();
        tokio::spawn(async move {
            for chunk in [&b"abcd"[..], b"efgh"] {
                tx.send(Ok(Bytes::from_static(chunk))).await.unwrap();
            }
        });
        let (body, raw) = reader.read(&HeaderMap::new(), body, &mut Vec::new()).await.unwrap();
        assert_eq!(body, Body::Bytes(Bytes::from_static(b"abcdefgh")));
        assert_eq!(raw, Bytes::from_static(b"abcdefgh"));
    }

    // A body in one frame is that frame, not a copy of it; one in pieces is put together in
    // order, an empty piece and one past the limit included.
    #[tokio::test]
    async fn a_body_in_one_frame_is_shared_and_one_in_pieces_is_joined() {
        let frame = Bytes::from(b"{\"id\": 1}".to_vec());
        let read = read_limited(axum::body::Body::from(frame.clone()), 64).await.unwrap();
        assert_eq!(read.as_ptr(), frame.as_ptr());
        let pieces = |chunks: Vec<&'static [u8]>| axum::body::Body::from_stream(futures_util::stream::iter(chunks.into_iter().map(|c| Ok::<_, std::io::Error>(Bytes::from_static(c)))));
        assert_eq!(read_limited(pieces(vec![b"ab", b"", b"cd", b"e"]), 5).await.unwrap(), Bytes::from_static(b"abcde"));
        assert_eq!(read_limited(pieces(vec![b"", b"abc"]), 5).await.unwrap(), Bytes::from_static(b"abc"));
        assert_eq!(read_limited(pieces(vec![b"abc", b"def"]), 5).await.unwrap_err().status, 413);
        assert_eq!(read_limited(pieces(vec![]), 5).await.unwrap(), Bytes::new());
        // Refused on its declared length before a byte is read.
        assert_eq!(read_within(axum::body::Body::from(vec![0u8; 6]), 5, &HeaderMap::new()).await.unwrap_err().status, 413);
    }

    // Found on review: a body in pieces reserved all its declared length at its second piece,
    // so a client that declared 2 MiB and sent two bytes held 2 MiB of the server's memory.
    #[test]
    fn a_body_in_pieces_reserves_what_it_sent_and_a_bounded_part_of_what_it_declared() {
        assert_eq!(first_reserve(2, Some(2 * 1024 * 1024), 2 * 1024 * 1024), 2 + FIRST_RESERVE);
        assert_eq!(first_reserve(2, Some(10), 1024), 12);
        assert_eq!(first_reserve(2, None, 1024), 2);
        assert_eq!(first_reserve(100, Some(100), 150), 150);
    }
}
