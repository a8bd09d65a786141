//! `Ferrule::RawParts`: what a request carried as sent (body, query string, headers), kept in
//! Rust and converted only when a block asks (`req.raw_body`, `query_pairs`, `raw_headers`,
//! `cookie_pairs`, `header`), so a request whose block reads none of them pays for one small
//! object instead of Strings and Arrays for every header.

use ferrule_core::bytes::Bytes;
use ferrule_core::http::HeaderMap;
use ferrule_core::RequestData;
use magnus::{Error, RArray, RString, Ruby};

#[magnus::wrap(class = "Ferrule::RawParts", free_immediately, size)]
pub struct RawParts {
    body: Bytes,
    query: String,
    headers: HeaderMap,
    client: Option<std::net::SocketAddr>,
    /// What a trusted proxy said (`trusted_proxies`): the scheme and host.
    forwarded: Option<ferrule_core::Forwarded>,
    /// Whether the route declares a body: without one, `req.body` is an IO of the bytes, as
    /// Sinatra's `request.body` (lib/ferrule/types.rb).
    declares_body: bool,
}

impl RawParts {
    /// Moves the raw parts out of `request` (no copy).
    pub fn take(request: &mut RequestData, declares_body: bool) -> Self {
        RawParts {
            body: std::mem::take(&mut request.raw_body),
            query: std::mem::take(&mut request.raw_query),
            headers: std::mem::take(&mut request.raw_headers),
            client: request.client,
            forwarded: request.forwarded.take(),
            declares_body,
        }
    }

    pub fn declares_body(&self) -> bool {
        self.declares_body
    }

    /// The body as sent, a binary String.
    pub fn body(ruby: &Ruby, rb_self: &Self) -> RString {
        ruby.str_from_slice(&rb_self.body)
    }

    pub fn query_string(&self) -> String {
        self.query.clone()
    }

    /// Every query pair, decoded, as `[name, value, …]`.
    pub fn query_pairs(ruby: &Ruby, rb_self: &Self) -> Result<RArray, Error> {
        flat(ruby, ferrule_core::query_pairs(&rb_self.query).iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }

    /// Every header, as `[name, value, …]` (values as `ferrule_core::header_value_text` reads them).
    pub fn header_pairs(ruby: &Ruby, rb_self: &Self) -> Result<RArray, Error> {
        let pairs: Vec<_> = rb_self.headers.iter().map(|(n, v)| (n.as_str(), ferrule_core::header_value_text(v))).collect();
        flat(ruby, pairs.iter().map(|(n, v)| (*n, v.as_ref())))
    }

    /// One header (`name` in lower case), repeated ones joined with ", "; nil when absent.
    pub fn header(&self, name: String) -> Option<String> {
        ferrule_core::header_text(&self.headers, &name).map(std::borrow::Cow::into_owned)
    }

    /// The client that sent the request: `[address, port]` (the peer's, or the client a
    /// trusted proxy names, port 0), or nil for a request made in process.
    pub fn client(&self) -> Option<(String, u16)> {
        self.client.map(|client| (client.ip().to_string(), client.port()))
    }

    /// What a trusted proxy said: `[scheme or nil, host or nil]`, or nil.
    pub fn forwarded(&self) -> Option<(Option<&'static str>, Option<String>)> {
        self.forwarded.as_ref().map(|forwarded| (forwarded.scheme, forwarded.host.clone()))
    }

    /// The caller's W3C trace: `[traceparent, trace id]`, or nil without a valid `traceparent`.
    pub fn trace(&self) -> Option<(String, String)> {
        ferrule_core::trace::TraceContext::of(&self.headers).map(|t| (t.header(), t.trace_id_hex()))
    }

    /// Every cookie as `[name, value, …]`.
    pub fn cookie_pairs(ruby: &Ruby, rb_self: &Self) -> Result<RArray, Error> {
        flat(ruby, ferrule_core::cookie_pairs(&rb_self.headers).iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }
}

fn flat<'a>(ruby: &Ruby, pairs: impl Iterator<Item = (&'a str, &'a str)>) -> Result<RArray, Error> {
    let array = ruby.ary_new();
    for (name, value) in pairs {
        array.push(ruby.str_new(name))?;
        array.push(ruby.str_new(value))?;
    }
    Ok(array)
}
