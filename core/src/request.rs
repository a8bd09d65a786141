//! What a handler receives: every declared input already parsed, coerced and validated.

use crate::value::{Params, Value};
use bytes::Bytes;
use http::{HeaderMap, Method};
use serde::de::DeserializeOwned;

/// A request body after content-type checks, parsing and validation.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    None,
    /// A JSON body, parsed once by the core's engine ([`crate::document`]).
    Json(crate::document::Document),
    /// Url-encoded or multipart fields, coerced by the body schema (files as [`Value::File`]).
    Form(Params),
    Bytes(Bytes),
    Text(String),
}

impl Body {
    pub fn is_none(&self) -> bool {
        matches!(self, Body::None)
    }

    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Body::None => serde_json::Value::Null,
            Body::Json(json) => json.to_tree(),
            Body::Form(fields) => serde_json::to_value(fields).unwrap_or_default(),
            Body::Bytes(bytes) => serde_json::Value::String(String::from_utf8_lossy(bytes).into_owned()),
            Body::Text(text) => serde_json::Value::String(text.clone()),
        }
    }
}

/// The language-neutral request every handler (Rust, Python, Node, Ruby) is called with.
#[derive(Debug, Clone)]
pub struct RequestData {
    pub method: Method,
    /// The request path, percent-encoded in the one spelling routes are matched in
    /// (`canonical_path`: `/caf%c3%a9` and `/%65xact` arrive as `/caf%C3%A9` and `/exact`).
    pub path: String,
    pub path_params: Params,
    pub query: Params,
    /// Declared headers, under their declared (lower-case) names.
    pub headers: Params,
    pub cookies: Params,
    pub body: Body,
    /// All request headers, for handlers that need undeclared ones; the request ID
    /// ([`RequestData::request_id`]) and trace ([`RequestData::trace`]) are read from here.
    pub raw_headers: HeaderMap,
    /// The query string as sent (percent-encoded, without `?`), for undeclared parameters.
    pub raw_query: String,
    /// The body as sent (within the body limit), on any route: beside the parsed body where one
    /// is declared (the same bytes, shared), alone where none is.
    pub raw_body: Bytes,
    /// When the handler's time limit (`timeout_ms`) runs out: the core answers 504 then, and a
    /// binding cancels what it can (a Python task, a Node `AbortSignal`). `None`: no limit.
    pub deadline: Option<std::time::Instant>,
    /// The address of the client that sent the request: the peer, or, from a trusted proxy
    /// (`trusted_proxies`), the client its `X-Forwarded-For` names (port 0); for a request
    /// made in process, what its caller says ([`ClientAddr`]). `None` only for a request given
    /// to the router directly (`App::router`), which nobody said.
    pub client: Option<std::net::SocketAddr>,
    /// What a trusted proxy said about the request (its scheme and host); `None` from any
    /// other peer, or when it said nothing ([`crate::forwarded`]).
    pub forwarded: Option<crate::forwarded::Forwarded>,
}

/// The peer's address, put on each request by the connection that read it. A request made in
/// process carries the one its caller knows (a Rack server's `REMOTE_ADDR`), else
/// [`ClientAddr::IN_PROCESS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub std::net::SocketAddr);

impl ClientAddr {
    /// A request made in this process (a test client's): loopback, as Fastify's `inject()`
    /// and Rack::Test say, with no port.
    pub const IN_PROCESS: ClientAddr = ClientAddr(std::net::SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0));
}

/// The peer address a request came with ([`RequestData::client`]).
pub(crate) fn client_of(parts: &http::request::Parts) -> Option<std::net::SocketAddr> {
    parts.extensions.get::<ClientAddr>().map(|client| client.0)
}

/// A typed view that did not fit the handler's Rust type.
#[derive(Debug)]
pub struct ExtractError(pub String);

impl std::fmt::Display for ExtractError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ExtractError {}

impl RequestData {
    /// A request refused before its values were typed: what it carried as sent, and nothing
    /// declared.
    pub(crate) fn refused(parts: http::request::Parts, raw_body: Bytes) -> Self {
        RequestData {
            // Read before anything is moved out of `parts`.
            client: client_of(&parts),
            forwarded: crate::forwarded::forwarded_of(&parts),
            method: parts.method,
            path: parts.uri.path().to_owned(),
            path_params: Params::default(),
            query: Params::default(),
            headers: Params::default(),
            cookies: Params::default(),
            body: Body::None,
            raw_query: parts.uri.query().unwrap_or("").to_owned(),
            raw_body,
            raw_headers: parts.headers,
            deadline: None,
        }
    }

    /// The scheme the client used: `"https"` when a trusted proxy says so, else `"http"` (the
    /// server speaks no TLS itself).
    pub fn scheme(&self) -> &'static str {
        self.forwarded.as_ref().and_then(|forwarded| forwarded.scheme).unwrap_or("http")
    }

    /// The host (and port) the client asked for: a trusted proxy's `X-Forwarded-Host`, else
    /// the `Host` header (which HTTP/2's `:authority` becomes); `None` without either. Read
    /// from [`RequestData::raw_headers`], so asked before a binding moves them out.
    pub fn host(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self.forwarded.as_ref().and_then(|forwarded| forwarded.host.as_deref()) {
            Some(host) => Some(std::borrow::Cow::Borrowed(host)),
            None => header_text(&self.raw_headers, "host"),
        }
    }

    /// The request's `x-request-id`: the client's, or the one the core gave it (`request_id`
    /// setting), when it is text.
    ///
    /// Read from [`RequestData::raw_headers`] when asked, as is [`RequestData::trace`], so a
    /// binding asks before it moves the raw headers out. Most handlers never ask: copied into
    /// the request as a `String` on every request, with the trace looked up beside it, the
    /// two cost a json-small request (`ferrule-bench serve ferrule-rust`, callgrind, 3,000
    /// requests) about 450 of its 29,600 instructions.
    pub fn request_id(&self) -> Option<&str> {
        crate::middleware::request_id_in(&self.raw_headers)
    }

    /// The caller's W3C trace (`traceparent`), when it sent a valid one ([`crate::trace`]).
    pub fn trace(&self) -> Option<crate::trace::TraceContext> {
        crate::trace::TraceContext::of(&self.raw_headers)
    }

    pub fn path_param(&self, name: &str) -> Option<&Value> {
        self.path_params.get(name)
    }

    pub fn query_param(&self, name: &str) -> Option<&Value> {
        self.query.get(name)
    }

    pub fn header(&self, name: &str) -> Option<&Value> {
        self.headers.get(name)
    }

    pub fn cookie(&self, name: &str) -> Option<&Value> {
        self.cookies.get(name)
    }

    /// Every query parameter as sent, declared or not, decoded, in order (a repeated name
    /// appears once per value).
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        query_pairs(&self.raw_query)
    }

    /// Every cookie as sent, declared or not, in order.
    pub fn cookie_pairs(&self) -> Vec<(String, String)> {
        cookie_pairs(&self.raw_headers)
    }

    /// Every header as sent, declared or not: lower-case names, values as text
    /// ([`header_value_text`]), a repeated name once per value.
    pub fn header_pairs(&self) -> Vec<(&str, std::borrow::Cow<'_, str>)> {
        self.raw_headers.iter().map(|(name, value)| (name.as_str(), header_value_text(value))).collect()
    }

    /// The path parameters as a Rust type (`#[derive(Deserialize)] struct UserPath { id: i64 }`).
    pub fn path_as<T: DeserializeOwned>(&self) -> Result<T, ExtractError> {
        from_json(serde_json::to_value(&self.path_params))
    }

    pub fn query_as<T: DeserializeOwned>(&self) -> Result<T, ExtractError> {
        from_json(serde_json::to_value(&self.query))
    }

    /// The validated body as a Rust type.
    pub fn body_as<T: DeserializeOwned>(&self) -> Result<T, ExtractError> {
        match &self.body {
            // Through the tree: a typed Rust extractor is the one reader that wants serde's data model.
            Body::Json(json) => T::deserialize(json.to_tree()).map_err(|e| ExtractError(e.to_string())),
            other => from_json(Ok(other.to_json())),
        }
    }
}

/// Every pair of a query string as sent, decoded, in order ([`RequestData::query_pairs`], for
/// bindings that keep the raw parts apart from the request).
pub fn query_pairs(raw_query: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(raw_query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

/// Every cookie of a request's headers, in order ([`RequestData::cookie_pairs`]).
pub fn cookie_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    cookie_items(headers).map(|(k, v)| (k.to_owned(), v.into_owned())).collect()
}

/// Header `name` (any case) as every binding's `header(name)` gives it: its values as text
/// ([`header_value_text`]) joined with ", " (RFC 9110 §5.3), none when absent. One value, the
/// usual case, is borrowed: a hook that reads one header per request costs no copy here.
pub fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<std::borrow::Cow<'a, str>> {
    let mut values = headers.get_all(name).iter().map(header_value_text);
    let first = values.next()?;
    Some(match values.next() {
        None => first,
        Some(second) => std::borrow::Cow::Owned([first, second].into_iter().chain(values).collect::<Vec<_>>().join(", ")),
    })
}

/// A header value as text, in every binding: visible ASCII as it is (borrowed), and a value
/// with bytes past ASCII (RFC 9110 §5.5's obs-text) read as ISO-8859-1, one character per
/// byte, as Starlette and Node's `http` read it. So nothing a client sent is dropped, and
/// the bytes are recoverable (`value.encode("latin-1")`, `Buffer.from(value, 'latin1')`).
pub fn header_value_text(value: &http::HeaderValue) -> std::borrow::Cow<'_, str> {
    match value.to_str() {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => std::borrow::Cow::Owned(value.as_bytes().iter().map(|&byte| char::from(byte)).collect()),
    }
}

/// The `name=value` pairs of every `Cookie` header (RFC 6265 §5.4), quotes around a value
/// removed and, inside them, the escapes undone that Python's `http.cookies` (and so
/// Starlette's `set_cookie`) writes for what a cookie cannot hold: `"a b\073c"` is `a b;c`.
/// A value without quotes, or without a backslash, is borrowed as sent.
pub(crate) fn cookie_items(headers: &HeaderMap) -> impl Iterator<Item = (&str, std::borrow::Cow<'_, str>)> {
    headers.get_all(http::header::COOKIE).iter().filter_map(|header| std::str::from_utf8(header.as_bytes()).ok()).flat_map(|text| {
        text.split(';').filter_map(|item| {
            let (name, value) = item.split_once('=')?;
            let value = value.trim();
            let value = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
                Some(quoted) if quoted.contains('\\') => std::borrow::Cow::Owned(unescaped(quoted)),
                Some(quoted) => std::borrow::Cow::Borrowed(quoted),
                None => std::borrow::Cow::Borrowed(value),
            };
            Some((name.trim(), value))
        })
    })
}

/// A quoted cookie value's escapes undone: `\ooo` (three octal digits) is that byte, `\x` is
/// `x`; bytes that do not make UTF-8 are replaced, as a cookie's text is read everywhere else.
fn unescaped(quoted: &str) -> String {
    let bytes = quoted.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            let octal = bytes.get(i + 1..i + 4).filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)) && d[0] <= b'3');
            match octal {
                Some(digits) => {
                    out.push(digits.iter().fold(0u8, |n, d| n * 8 + (d - b'0')));
                    i += 4;
                }
                None => {
                    out.push(bytes[i + 1]);
                    i += 2;
                }
            }
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn from_json<T: DeserializeOwned>(json: serde_json::Result<serde_json::Value>) -> Result<T, ExtractError> {
    json.and_then(serde_json::from_value).map_err(|e| ExtractError(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::header_text;
    use http::{HeaderMap, HeaderValue};

    /// Found by a README-driven probe: Python's `set_cookie("s", "a b;c")` sends `"a b\073c"`,
    /// and the value read back was `a b\073c`.
    #[test]
    fn a_quoted_cookie_reads_back_with_its_escapes_undone() {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::COOKIE, HeaderValue::from_static(r#"s="a b\073c"; q="say \"hi\""; plain=x\y; bare="ok"; e="\303\251""#));
        let pairs = super::cookie_pairs(&headers);
        let expected = [("s", "a b;c"), ("q", "say \"hi\""), ("plain", "x\\y"), ("bare", "ok"), ("e", "é")];
        assert_eq!(pairs, expected.map(|(k, v)| (k.to_owned(), v.to_owned())));
    }

    #[test]
    fn a_header_is_found_in_any_case_and_repeated_ones_are_joined() {
        let mut headers = HeaderMap::new();
        headers.append("user-agent", HeaderValue::from_static("curl/8"));
        headers.append("accept", HeaderValue::from_static("text/html"));
        headers.append("accept", HeaderValue::from_static("application/json"));
        headers.append("x-binary", HeaderValue::from_bytes(b"\xff").unwrap());
        assert!(matches!(header_text(&headers, "User-Agent"), Some(std::borrow::Cow::Borrowed("curl/8"))), "one value is borrowed");
        assert_eq!(header_text(&headers, "accept").as_deref(), Some("text/html, application/json"));
        assert_eq!(header_text(&headers, "x-binary").as_deref(), Some("\u{ff}"), "a byte past ASCII is its Latin-1 character");
        assert_eq!(header_text(&headers, "missing"), None);
        assert_eq!(header_text(&headers, "not a name"), None);
    }
}
