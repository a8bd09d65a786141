//! WebSockets on the route table: a route declared with [`crate::spec::SocketSpec`] validates
//! its path, query, header and cookie parameters like any route — a bad request gets its
//! problem response and is never upgraded — then answers 101 and hands its handler a
//! [`Socket`].
//!
//! The protocol itself (framing, masking, fragments, UTF-8 of text, control frames, the close
//! handshake) is tungstenite's, the implementation axum's WebSocket support uses. What is
//! decided here, once for every language:
//! * **Close codes.** A broken frame closes with 1002, text that is not UTF-8 with 1007, a
//!   message over `ws_max_message_bytes` with 1009, a handler that fails with 1011, shutdown
//!   with 1001 (the drain then waits for the closing handshake, not for the handler); a
//!   handler that returns without closing closes with 1000.
//! * **Bounds.** Reading stops while a batch of arrivals waits untaken; sends past
//!   `ws_send_buffer_bytes` unread close with 1008 ([`handle`]); a silent connection is pinged
//!   and, still silent, closed ([`session`]). Memory per connection is bounded either way,
//!   and a quiet connection gives its buffers back until the client sends again ([`rest`]).
//! * **Crossings.** A binding takes everything that arrived in one call ([`Socket::take`])
//!   and is woken only when a take found nothing: a burst of messages is one wake-up of its
//!   interpreter, not one per message — the cost model of streamed responses
//!   ([`crate::stream::batch`]).
//!
//! Not offered: permessage-deflate (tungstenite does not implement it; a client that offers it
//! gets an uncompressed connection, as RFC 7692 allows), and WebSockets over HTTP/2 (RFC 8441).

mod handle;
mod handshake;
mod rest;
mod session;

pub use handle::{Socket, SocketClosed, Taken};

pub(crate) use handshake::SocketRoute;

use bytes::Bytes;
use futures_util::FutureExt;
use tokio_tungstenite::tungstenite::Utf8Bytes;
use std::future::Future;
use std::panic::AssertUnwindSafe;

/// A message, as received from the client or sent to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    Text(Text),
    Binary(Bytes),
}

/// The text of a message: UTF-8 (checked as it arrived), shared rather than copied — a
/// message read from one connection is sent on to others as it is.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Text(Utf8Bytes);

impl Text {
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Text(text.into())
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Text(text.into())
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Text {
    pub(crate) fn from_frame(text: Utf8Bytes) -> Self {
        Text(text)
    }

    pub(crate) fn into_frame(self) -> Utf8Bytes {
        self.0
    }
}

impl Message {
    pub fn len(&self) -> usize {
        match self {
            Message::Text(text) => text.len(),
            Message::Binary(data) => data.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How a connection ended: the close code and reason the client sent (or the server sent, when
/// it closed first; 1005 when a close frame carried no code, 1006 when the connection dropped
/// without one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closed {
    pub code: u16,
    pub reason: String,
}

impl Closed {
    pub fn new(code: u16, reason: impl Into<String>) -> Self {
        Closed { code, reason: reason.into() }
    }

    /// A close a handler may ask for: a code a server may put on the wire (RFC 6455 §7.4.1:
    /// 1000–1003, 1007–1014, 3000–4999; 1005, 1006 and 1015 are never sent) and a reason that
    /// fits a control frame (123 bytes of UTF-8). Anything else is refused, as `ws` and
    /// `websockets` refuse it, rather than sent as some other close than the one asked for.
    pub fn sendable(code: i64, reason: &str) -> Result<Self, UnsendableClose> {
        let sendable = u16::try_from(code).ok().filter(|c| matches!(c, 1000..=1003 | 1007..=1014 | 3000..=4999));
        let code = sendable.ok_or(UnsendableClose::Code(code))?;
        if reason.len() > MAX_CLOSE_REASON_BYTES {
            return Err(UnsendableClose::ReasonTooLong(reason.len()));
        }
        Ok(Closed { code, reason: reason.to_owned() })
    }
}

/// A close frame's body is at most 125 bytes, two of them the code.
const MAX_CLOSE_REASON_BYTES: usize = 123;

/// Why [`Closed::sendable`] refused a close: each binding raises it as its language's
/// argument error (Python `ValueError`, Node `TypeError` or `RangeError` as `ws`, Ruby
/// `ArgumentError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnsendableClose {
    Code(i64),
    ReasonTooLong(usize),
}

impl std::fmt::Display for UnsendableClose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnsendableClose::Code(code) => write!(f, "{code} is not a close code a server may send (1000-1003, 1007-1014, 3000-4999)"),
            UnsendableClose::ReasonTooLong(bytes) => write!(f, "a WebSocket close reason is at most {MAX_CLOSE_REASON_BYTES} bytes of UTF-8, not {bytes}"),
        }
    }
}

impl std::error::Error for UnsendableClose {}

/// What runs a WebSocket route: told once the connection is upgraded, it holds the socket for
/// as long as it likes (a binding's handler runs in its interpreter; a Rust closure as a task).
///
/// Rust closures `Fn(RequestData, Socket) -> impl Future<Output = ()>` get it for free: the
/// future runs as a task, and when it returns the socket closes with 1000 (1011 if it panics).
pub trait SocketHandler: Send + Sync + 'static {
    fn open(&self, request: crate::RequestData, socket: Socket);

    /// What must see the handshake before the upgrade (a binding's `on_request` and
    /// `pre_handler` hooks, which may refuse it), or `None` (the default): nothing, the upgrade
    /// follows the checks at once. An answer with status 101 lets the upgrade go on (its
    /// headers and body are not sent: the handshake's are); any other answer is sent instead,
    /// and the socket never opens. It runs within the route's time limit.
    fn admission(&self, _request: &crate::RequestData) -> Option<Admission> {
        None
    }

    /// The socket of a handshake whose [`Admission`] kept something ([`Admission::keeping`]),
    /// with what it kept. By default the kept value is dropped and [`SocketHandler::open`] runs.
    fn open_admitted(&self, request: crate::RequestData, socket: Socket, kept: Kept) {
        drop(kept);
        self.open(request, socket);
    }
}

/// What an [`Admission`] keeps for the socket it lets through.
pub type Kept = Box<dyn std::any::Any + Send>;

/// A handshake's admission ([`SocketHandler::admission`]): the answer that lets the upgrade go
/// on (101) or refuses it, and what the handler keeps from it for the socket — a binding's
/// hooks set values on their request (Node's `ctx.user`, Python's `request.state`) that its
/// socket handler must see. The kept value reaches [`SocketHandler::open_admitted`] once the
/// connection is upgraded, and is dropped where it is not: a refused handshake, one past its
/// time limit, a client gone before the upgrade, a server stopping.
pub struct Admission {
    pub(crate) answer: crate::HandlerFuture,
    pub(crate) kept: Option<Kept>,
}

impl Admission {
    pub fn new(answer: crate::HandlerFuture) -> Self {
        Admission { answer, kept: None }
    }

    pub fn keeping(self, kept: impl std::any::Any + Send) -> Self {
        Admission { kept: Some(Box::new(kept)), ..self }
    }
}

impl<F, Fut> SocketHandler for F
where
    F: Fn(crate::RequestData, Socket) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    fn open(&self, request: crate::RequestData, socket: Socket) {
        let conversation = AssertUnwindSafe(self(request, socket.clone())).catch_unwind();
        tokio::spawn(async move {
            match conversation.await {
                Ok(()) => socket.close_with(Closed::new(1000, "")),
                Err(_) => {
                    tracing::error!(target: "ferrule::handler", "a WebSocket handler panicked");
                    socket.close_with(Closed::new(1011, ""))
                }
            }
        });
    }
}

