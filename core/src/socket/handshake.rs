//! The opening handshake (RFC 6455 §4.2), answered by the core: a request that is no WebSocket
//! upgrade gets a problem response saying what is missing, and a valid one — once the route's
//! parameters have passed — gets 101 and a connection of its own ([`super::session`]).

use super::{Socket, SocketHandler};
use crate::problem::Problem;
use crate::request::RequestData;
use crate::server::UpgradeSlot;
use crate::spec::{AppConfig, SocketSpec};
use futures_util::future::OptionFuture;
use futures_util::FutureExt;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use std::sync::Arc;
use std::time::Duration;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

/// A WebSocket route's handler and settings, compiled once.
pub(crate) struct SocketRoute {
    handler: Arc<dyn SocketHandler>,
    subprotocols: Vec<String>,
    max_message_bytes: usize,
    send_limit: usize,
    idle: Option<Duration>,
}

/// A request that asked for a WebSocket properly: what the 101 carries.
pub(crate) struct Accepted {
    accept: String,
    subprotocol: Option<String>,
}

impl SocketRoute {
    pub(crate) fn new(handler: Arc<dyn SocketHandler>, spec: &SocketSpec, config: &AppConfig) -> Self {
        SocketRoute {
            handler,
            subprotocols: spec.subprotocols.clone(),
            max_message_bytes: spec.max_message_bytes.unwrap_or(config.ws_max_message_bytes),
            send_limit: config.ws_send_buffer_bytes,
            idle: Some(Duration::from_millis(config.ws_idle_timeout_ms)).filter(|d| !d.is_zero()),
        }
    }

    /// Checked before the parameters: a browser that opens the URL as a page learns it needs a
    /// WebSocket (426) rather than which parameter is wrong.
    pub(crate) fn check(&self, version: http::Version, headers: &HeaderMap) -> Result<Accepted, axum::response::Response> {
        if version != http::Version::HTTP_11 {
            return Err(upgrade_required("WebSockets are served over HTTP/1.1; this request came over another version."));
        }
        if !has_token(headers, header::CONNECTION, "upgrade") || !has_token(headers, header::UPGRADE, "websocket") {
            return Err(upgrade_required("This path is a WebSocket endpoint: send `Connection: Upgrade` and `Upgrade: websocket`."));
        }
        if headers.get(header::SEC_WEBSOCKET_VERSION).map(HeaderValue::as_bytes) != Some(b"13") {
            let mut response = upgrade_required("Only WebSocket version 13 is spoken here.");
            response.headers_mut().insert(header::SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
            return Err(response);
        }
        let Some(key) = the_key(headers) else {
            return Err(Problem::status(StatusCode::BAD_REQUEST)
                .with_detail("Sec-WebSocket-Key must be 16 bytes in base64, sent once.")
                .into_http());
        };
        let offered: Vec<&str> = headers
            .get_all(header::SEC_WEBSOCKET_PROTOCOL)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect();
        let subprotocol = self.subprotocols.iter().find(|p| offered.contains(&p.as_str())).cloned();
        Ok(Accepted { accept: derive_accept_key(key), subprotocol })
    }

    /// The answer to a handshake that came without a connection to upgrade (an in-process one).
    pub(crate) fn no_connection() -> axum::response::Response {
        upgrade_required("This connection cannot be upgraded (it was not received by a Ferrule server).")
    }

    /// What must see the handshake before the upgrade (see [`SocketHandler::admission`]).
    pub(crate) fn admission(&self, request: &RequestData) -> Option<super::Admission> {
        self.handler.admission(request)
    }

    /// 101, and the connection handed to a session once hyper lets go of it: on the server's
    /// own connections through `slot` (the drain then knows of it), otherwise as a task. What
    /// the handshake's admission `kept` goes to the handler with the socket, or is dropped with
    /// the session's future when the upgrade fails.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn upgrade(
        &self,
        accepted: Accepted,
        on_upgrade: hyper::upgrade::OnUpgrade,
        slot: Option<UpgradeSlot>,
        mut request: RequestData,
        label: Arc<str>,
        kept: Option<super::Kept>,
    ) -> axum::response::Response {
        values_of_their_own(&mut request.raw_headers);
        let socket = Socket::new(accepted.subprotocol.clone(), self.send_limit);
        let handler = self.handler.clone();
        let config = super::session::Settings { max_message_bytes: self.max_message_bytes, idle: self.idle };
        let going_away = slot.as_ref().map(UpgradeSlot::going_away);
        // Chained, not one `async` block: the block would keep the request (416 bytes) and its
        // other captures for the whole session, beside the session's own future. `then` drops
        // the closure, and what it holds, once the upgrade is done.
        let session = on_upgrade.then(move |upgraded| {
            let session = upgraded.ok().map(|upgraded| {
                match kept {
                    Some(kept) => handler.open_admitted(request, socket.clone(), kept),
                    None => handler.open(request, socket.clone()),
                }
                super::session::run(hyper_util::rt::TokioIo::new(upgraded), socket, config, going_away, label)
            });
            OptionFuture::from(session).map(drop)
        });
        match slot {
            Some(slot) => slot.put(Box::pin(session)),
            None => {
                tokio::spawn(session);
            }
        }
        let mut response = axum::response::Response::new(axum::body::Body::empty());
        *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        let headers = response.headers_mut();
        headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        if let Ok(accept) = HeaderValue::from_str(&accepted.accept) {
            headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
        }
        if let Some(protocol) = accepted.subprotocol.and_then(|p| HeaderValue::from_str(&p).ok()) {
            headers.insert(header::SEC_WEBSOCKET_PROTOCOL, protocol);
        }
        response
    }
}

fn upgrade_required(detail: &str) -> axum::response::Response {
    let mut response = Problem::status(StatusCode::UPGRADE_REQUIRED).with_detail(detail).into_http();
    response.headers_mut().insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    response
}

/// Whether a comma-separated header (any of its lines) lists `token`, in any case.
fn has_token(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

/// 16 bytes in base64: 22 symbols and `==`.
/// The handshake's key, when it came once and is a nonce. Once: RFC 6455 §11.3.1 says the
/// header must not appear more than once, and two leave which one the answer is for to chance
/// (found by a probe: accepted with a 101).
fn the_key(headers: &HeaderMap) -> Option<&[u8]> {
    let mut keys = headers.get_all(header::SEC_WEBSOCKET_KEY).iter();
    let key = keys.next()?.as_bytes();
    (is_nonce(key) && keys.next().is_none()).then_some(key)
}

fn is_nonce(key: &[u8]) -> bool {
    key.len() == 24
        && key.ends_with(b"==")
        && key[..22].iter().all(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/')
        && matches!(key[21], b'A' | b'Q' | b'g' | b'w')
}

/// Copies every header value into one buffer of the session's own. hyper parses a request's
/// header values as slices of its read buffer (8 KiB at least) and a new request ID is a slice
/// of a text of 32 (`middleware::request_id`): a session keeps its request's headers (the
/// handler's request object) for as long as it lasts, and kept both whole. The copy is the
/// values' own length (a few hundred bytes for a typical handshake; not measured).
fn values_of_their_own(headers: &mut HeaderMap) {
    let mut text = bytes::BytesMut::with_capacity(headers.values().map(HeaderValue::len).sum());
    for value in headers.values() {
        text.extend_from_slice(value.as_bytes());
    }
    let mut text = text.freeze();
    for value in headers.values_mut() {
        let own = text.split_to(value.len());
        // The same bytes, which passed as a header value already.
        if let Ok(mut own) = HeaderValue::from_maybe_shared(own) {
            own.set_sensitive(value.is_sensitive());
            *value = own;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sessions_header_values_keep_no_read_buffer() {
        let read_buffer = bytes::Bytes::from(b"websocket\0Upgrade\0dGhlIHNhbXBsZSBub25jZQ==\0a\0b".repeat(100));
        let mut headers = HeaderMap::new();
        let mut at = 0;
        for (name, length) in [(header::UPGRADE, 9), (header::CONNECTION, 7), (header::SEC_WEBSOCKET_KEY, 24), (header::COOKIE, 1), (header::COOKIE, 1)] {
            headers.append(name, HeaderValue::from_maybe_shared(read_buffer.slice(at..at + length)).unwrap());
            at += length + 1;
        }
        let before = headers.clone();
        values_of_their_own(&mut headers);
        assert_eq!(headers, before);
        let buffer = read_buffer.as_ptr_range();
        for value in headers.values() {
            assert!(!buffer.contains(&value.as_bytes().as_ptr()), "{value:?} is still a slice of the read buffer");
        }
    }

    #[test]
    fn a_key_is_sixteen_bytes_of_base64() {
        assert!(is_nonce(b"dGhlIHNhbXBsZSBub25jZQ=="));
        assert!(!is_nonce(b"dGhlIHNhbXBsZSBub25jZR=="), "stray bits in the last symbol");
        assert!(!is_nonce(b"short=="));
        assert_eq!(derive_accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", "RFC 6455 §1.3's example");
    }

    #[test]
    fn a_handshake_has_one_key() {
        let mut headers = HeaderMap::new();
        assert_eq!(the_key(&headers), None);
        headers.insert(header::SEC_WEBSOCKET_KEY, HeaderValue::from_static("dGhlIHNhbXBsZSBub25jZQ=="));
        assert_eq!(the_key(&headers), Some(&b"dGhlIHNhbXBsZSBub25jZQ=="[..]));
        headers.append(header::SEC_WEBSOCKET_KEY, HeaderValue::from_static("AAAAAAAAAAAAAAAAAAAAAA=="));
        assert_eq!(the_key(&headers), None, "two keys");
    }

    #[test]
    fn upgrade_tokens_are_found_in_lists_in_any_case() {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONNECTION, HeaderValue::from_static("keep-alive, Upgrade"));
        assert!(has_token(&headers, header::CONNECTION, "upgrade"));
        assert!(!has_token(&headers, header::UPGRADE, "websocket"));
    }
}
