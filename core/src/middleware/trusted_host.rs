//! The hosts an app answers for (`allowed_hosts`): a request whose `Host` names another is
//! refused with a 400 before anything else sees it, as Starlette's `TrustedHostMiddleware`,
//! Django's `ALLOWED_HOSTS` and Rack::Protection's `HostAuthorization` refuse it.
//!
//! Why an app sets it: a handler that builds links from `Host` (a password-reset mail, a
//! redirect, Starlette's `request.url_for`) would build them to whatever host a client sent, and
//! a cache in front may keep that answer for everyone (host-header injection, cache poisoning).
//!
//! Patterns, as Starlette reads them: `example.com` is that host, `*.example.com` any host under
//! it (not `example.com` itself), `*` any host. Unlike Starlette, names match in any case (hosts
//! are case-insensitive, RFC 4343), a name's trailing dot is its own name (`example.com.`), and
//! an IPv6 literal is read to its `]` (Starlette cuts `[::1]:8000` at its first colon). The port
//! is never part of the match.
//!
//! With `www_redirect` (on, as in Starlette), a request for `example.com` where `www.example.com`
//! is listed is redirected there (307, the same path and query) rather than refused.
//!
//! Cost: none for an app without the setting (the layer is not in the stack); with it, one
//! header lookup, the value's text checked, and a comparison per pattern: with three patterns,
//! the Rust server's json-small request took 29,515 instructions against 29,122 without
//! (callgrind, 3,000 requests; about 500 of the difference is this layer, the rest the
//! runtime's noise). The matrix prices it as `ferrule-rust+allowed-hosts`.

use super::gate::{Gate, GateLayer};
use crate::problem::Problem;
use axum::extract::Request;
use axum::response::Response;
use http::{header, HeaderValue, StatusCode};
use std::sync::Arc;

/// `allowed_hosts`, read once: exact names and the suffixes of `*.` patterns, lower-cased.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AllowedHosts {
    names: Vec<String>,
    /// `.example.com` for `*.example.com`.
    suffixes: Vec<String>,
    any: bool,
    www_redirect: bool,
}

impl AllowedHosts {
    /// The patterns checked: a `*` anywhere but in a leading `*.`, or an empty one, is refused
    /// naming it (Starlette asserts the same).
    pub(crate) fn new(patterns: &[String], www_redirect: bool) -> Result<Self, String> {
        let mut hosts = AllowedHosts { names: Vec::new(), suffixes: Vec::new(), any: false, www_redirect };
        for pattern in patterns {
            let refused = |why: &str| Err(format!("allowed_hosts: `{pattern}` {why}"));
            if pattern == "*" {
                hosts.any = true;
            } else if let Some(domain) = pattern.strip_prefix("*.") {
                if domain.is_empty() || domain.contains('*') {
                    return refused("is no pattern: a wildcard is `*.example.com` (any host under it) or `*` (any host)");
                }
                hosts.suffixes.push(format!(".{}", name_of(domain)));
            } else if pattern.contains('*') {
                return refused("is no pattern: a wildcard is `*.example.com` (any host under it) or `*` (any host)");
            } else if pattern.is_empty() || pattern.contains(['/', ' ', ',', '@']) {
                return refused("is not a host name");
            } else if let Ok(address) = pattern.trim_start_matches('[').trim_end_matches(']').parse::<std::net::Ipv6Addr>() {
                // `Host` writes an IPv6 address in brackets; the list may or may not.
                hosts.names.push(format!("[{address}]"));
            } else if pattern.contains(':') {
                return refused("names a port: list the host alone (the port is no part of the match)");
            } else {
                hosts.names.push(name_of(pattern));
            }
        }
        Ok(hosts)
    }

    /// `name`: a host without its port or trailing dot, in any case (the list is lower case).
    fn admits(&self, name: &[u8]) -> bool {
        self.any
            || self.names.iter().any(|allowed| name.eq_ignore_ascii_case(allowed.as_bytes()))
            || self.suffixes.iter().any(|suffix| name.len() > suffix.len() && name[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes()))
    }

    /// Whether `www.` + `name` is listed.
    fn lists_www_of(&self, name: &[u8]) -> bool {
        !name.is_empty() && self.names.iter().any(|allowed| allowed.strip_prefix("www.").is_some_and(|rest| name.eq_ignore_ascii_case(rest.as_bytes())))
    }

    /// What a request with this `Host` gets: `None` to go on; otherwise its answer. No
    /// allocation on the way to `None`.
    fn answer_for(&self, host: Option<&HeaderValue>, target: &http::Uri, forwarded_scheme: Option<&str>) -> Option<Response> {
        let sent = host.and_then(|host| host.to_str().ok()).unwrap_or("");
        let name = without_port(sent);
        let name = name.strip_suffix('.').unwrap_or(name).as_bytes();
        if self.admits(name) {
            return None;
        }
        if self.www_redirect && self.lists_www_of(name) {
            // Starlette's `url.replace(netloc="www." + netloc)`: the port kept, the scheme the
            // request's (a trusted proxy's word, or an HTTP/1 target in absolute form names one;
            // otherwise `http`).
            let scheme = forwarded_scheme.or(target.scheme_str()).unwrap_or("http");
            let path = target.path_and_query().map_or("/", |p| p.as_str());
            let location = format!("{scheme}://www.{sent}{path}");
            if let Ok(location) = HeaderValue::from_str(&location) {
                let mut response = http::Response::new(axum::body::Body::empty());
                *response.status_mut() = StatusCode::TEMPORARY_REDIRECT;
                response.headers_mut().insert(header::LOCATION, location);
                return Some(response);
            }
        }
        // The host is not echoed: an attacker's text has no place in an answer a cache may keep.
        Some(Problem::status(StatusCode::BAD_REQUEST).with_detail("Invalid host header: the request names a host this app does not serve.").into_http())
    }
}

/// A `Host` value without its port: `example.com:8000` → `example.com`, `[::1]:80` → `[::1]`.
/// A byte loop: `split_once(':')`'s searcher cost 128 instructions a request on
/// `127.0.0.1:8000` (callgrind, json-small).
fn without_port(host: &str) -> &str {
    let end = match host.as_bytes().first() {
        Some(b'[') => host.bytes().position(|b| b == b']').map_or(host.len(), |end| end + 1),
        _ => host.bytes().position(|b| b == b':').unwrap_or(host.len()),
    };
    &host[..end]
}

/// A listed name as requests' hosts are compared with it: lower case, without the root's
/// trailing dot.
fn name_of(host: &str) -> String {
    let host = host.strip_suffix('.').unwrap_or(host);
    host.to_ascii_lowercase()
}

/// The layer that refuses the hosts `hosts` does not list.
pub(crate) fn trusted_host_layer(hosts: AllowedHosts) -> GateLayer<Arc<AllowedHosts>> {
    GateLayer(Arc::new(hosts))
}

impl Gate for Arc<AllowedHosts> {
    /// Judges the host the app will use: a trusted proxy's `X-Forwarded-Host` when it sent one
    /// (`crate::forwarded`), else `Host`. Judging `Host` alone let a proxy that passes a
    /// client's `X-Forwarded-Host` through hand any host to the app's links (found on review;
    /// Django checks its forwarded host the same way).
    fn refusal(&self, request: &Request) -> Option<Response> {
        let forwarded = request.extensions().get::<crate::Forwarded>();
        let scheme = forwarded.and_then(|forwarded| forwarded.scheme);
        match forwarded.and_then(|forwarded| forwarded.host.as_deref()) {
            Some(host) => self.answer_for(HeaderValue::from_str(host).ok().as_ref(), request.uri(), scheme),
            None => self.answer_for(request.headers().get(header::HOST), request.uri(), scheme),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(patterns: &[&str]) -> AllowedHosts {
        AllowedHosts::new(&patterns.iter().map(|p| p.to_string()).collect::<Vec<_>>(), true).unwrap()
    }

    fn status(hosts: &AllowedHosts, host: Option<&str>) -> u16 {
        let host = host.map(|h| HeaderValue::from_str(h).unwrap());
        hosts.answer_for(host.as_ref(), &"/a?b=1".parse().unwrap(), None).map_or(200, |r| r.status().as_u16())
    }

    #[test]
    fn a_name_matches_in_any_case_with_any_port_and_a_wildcard_only_below_its_domain() {
        let allowed = hosts(&["Example.com", "*.example.ORG", "[::1]", "fe80::2"]);
        for host in ["example.com", "EXAMPLE.com:8000", "example.com.", "a.example.org", "a.B.example.org:1", "[::1]:8000", "[::1]", "[fe80::2]:80"] {
            assert_eq!(status(&allowed, Some(host)), 200, "{host}");
        }
        for host in ["example.org", "evil.com", "example.com.evil.com", "notexample.com", "xexample.org", "[::2]:80", ""] {
            assert_eq!(status(&allowed, Some(host)), 400, "{host}");
        }
        assert_eq!(status(&allowed, None), 400, "no Host at all");
        assert_eq!(status(&hosts(&["*"]), Some("anything.example")), 200);
        assert_eq!(status(&hosts(&[]), Some("example.com")), 400, "an empty list admits nothing, as Starlette's");
    }

    #[test]
    fn a_host_whose_www_name_is_listed_is_redirected_there_keeping_port_path_and_query() {
        let allowed = hosts(&["www.example.com"]);
        let answer = allowed.answer_for(Some(&HeaderValue::from_static("example.com:8000")), &"/a?b=1".parse().unwrap(), None).unwrap();
        assert_eq!(answer.status(), 307);
        assert_eq!(answer.headers()[header::LOCATION], "http://www.example.com:8000/a?b=1");
        // Behind a trusted proxy that ended TLS, the scheme it names.
        let answer = allowed.answer_for(Some(&HeaderValue::from_static("example.com")), &"/a".parse().unwrap(), Some("https")).unwrap();
        assert_eq!(answer.headers()[header::LOCATION], "https://www.example.com/a");
        let off = AllowedHosts::new(&["www.example.com".to_owned()], false).unwrap();
        assert_eq!(status(&off, Some("example.com")), 400);
        assert_eq!(status(&allowed, Some("other.com")), 400);
    }

    #[test]
    fn behind_a_trusted_proxy_the_host_it_names_is_judged() {
        let allowed = Arc::new(hosts(&["www.shop.example"]));
        let request = |forwarded_host: Option<&str>| {
            let mut request = Request::new(axum::body::Body::empty());
            request.headers_mut().insert(header::HOST, HeaderValue::from_static("www.shop.example"));
            *request.uri_mut() = "/a".parse().unwrap();
            let proxy = "10.0.0.2:1".parse().unwrap();
            request.extensions_mut().insert(crate::Forwarded { scheme: Some("https"), host: forwarded_host.map(str::to_owned), proxy });
            request
        };
        assert!(allowed.refusal(&request(None)).is_none(), "no forwarded host: Host is judged");
        assert!(allowed.refusal(&request(Some("www.shop.example:443"))).is_none());
        let refused = allowed.refusal(&request(Some("evil.example"))).expect("a forwarded host not listed");
        assert_eq!(refused.status(), 400);
        let moved = allowed.refusal(&request(Some("shop.example"))).expect("the www twin is listed");
        assert_eq!(moved.headers()[header::LOCATION], "https://www.shop.example/a");
    }

    #[test]
    fn a_pattern_that_is_no_pattern_is_refused_naming_it() {
        for pattern in ["*example.com", "a.*.com", "*.", "", "exa mple.com", "*.*.com", "example.com:8000", "u@example.com"] {
            let error = AllowedHosts::new(&[pattern.to_owned()], true).unwrap_err();
            assert!(error.starts_with(&format!("allowed_hosts: `{pattern}`")), "{error}");
        }
    }
}
