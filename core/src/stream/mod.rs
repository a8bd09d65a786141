//! Streamed response bodies: bytes a handler produces over time, sent as they come.
//!
//! **Backpressure is the body's poll.** hyper asks a body for its next chunk only once the
//! connection has taken the previous one, so a producer runs at most one chunk ahead of its
//! client; a binding's stream asks its interpreter for the next batch while the current one is
//! written, so it runs at most one batch ahead ([`crate::host::Inbox::stream`]). A client that
//! reads slowly therefore holds the socket's buffers plus one batch — never a queue that grows —
//! and one that stops reading is cut off after `send_timeout_ms`, like any response.
//!
//! **Failures.** A stream that fails part-way is logged with its route. A byte stream is then
//! cut off (HTTP/1.1: the connection closes without the last chunk; HTTP/2: the stream is
//! reset), so a client never takes half a download for a whole one. An event stream ends
//! normally instead: its events are whole messages, and `EventSource` reconnects either way.
//!
//! **Batches.** A producer that pushes hands over everything it made since the last pull in one
//! crossing, within the bounds of [`batch`]; one that is asked item by item is never asked for
//! more than one item ahead (see there).
//!
//! **Not compressed.** A compressor holds chunks back until its buffer fills, which would
//! delay every token of a live stream; streams are sent as produced (`middleware::compression`).

pub mod batch;
mod event;

pub use batch::Batch;
pub use event::{unknown_field, Event, InvalidEvent, EVENT_FIELDS};

use bytes::Bytes;
use futures_util::Stream;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// Marks a response whose body is a stream: the compression layer leaves it alone, even when
/// its length is declared (a download keeps its `Content-Length`, and its progress).
#[derive(Clone, Copy, Debug)]
pub struct Streamed;

/// Any error a stream may end with.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The body of a streamed response: chunks in order, or an error that ends it.
pub struct BodyStream {
    chunks: Pin<Box<dyn Stream<Item = Result<Bytes, BoxError>> + Send>>,
    /// The length its handler declared (`Content-Length`), sent as the response's and held to.
    length: Option<u64>,
    /// An event stream's own keep-alive period, in place of the app's `sse_keep_alive_ms`.
    keep_alive: Option<std::time::Duration>,
}

/// An event stream's own keep-alive period (a zero one: none), on its response for the
/// connection to read (`server::streaming`).
#[derive(Clone, Copy, Debug)]
pub struct KeepAlive(pub std::time::Duration);

impl std::fmt::Debug for BodyStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BodyStream")
    }
}

impl BodyStream {
    pub fn new<S, B, E>(chunks: S) -> Self
    where
        S: Stream<Item = Result<B, E>> + Send + 'static,
        B: Into<Bytes> + 'static,
        E: Into<BoxError> + 'static,
    {
        use futures_util::TryStreamExt;
        BodyStream { chunks: Box::pin(chunks.map_ok(Into::into).map_err(Into::into)), length: None, keep_alive: None }
    }

    /// The length the producer will send, as its handler declared it (`Content-Length` on a
    /// streamed file): the response says it, so a client shows a download's progress, and the
    /// producer is held to it. One that sends more, or ends short, fails as a broken stream
    /// does (cut off, logged): a length that did not match would leave the client waiting, or
    /// run the extra bytes into the connection's next response.
    pub fn declare_length(&mut self, length: u64) {
        self.length = Some(length);
    }

    /// An event stream that sends its keep-alive comment after `every` of quiet, in place of
    /// the app's `sse_keep_alive_ms` (sse_starlette's `ping=`); zero: never.
    pub fn keep_alive_every(mut self, every: std::time::Duration) -> Self {
        self.keep_alive = Some(every);
        self
    }

    pub(crate) fn keep_alive(&self) -> Option<std::time::Duration> {
        self.keep_alive
    }

    /// Server-Sent Events: each event encoded as it comes (an event that cannot be encoded
    /// ends the stream as a failure would).
    pub fn events<S>(events: S) -> Self
    where
        S: Stream<Item = Event> + Send + 'static,
    {
        use futures_util::StreamExt;
        BodyStream::new(events.map(|event| event.encode()))
    }

    /// Logs a failure with the route that produced it; an event stream then ends normally,
    /// a byte stream ends with the error (see the module's doc).
    pub(crate) fn logged(self, route: Arc<str>, event_stream: bool) -> Self {
        // An event stream has no length: its events go on until it ends.
        let length = self.length.filter(|_| !event_stream);
        let logged = Logged { chunks: self.chunks, route, event_stream, done: false, failed: None, remaining: length, declared: length.unwrap_or(0), last: None };
        BodyStream { chunks: Box::pin(logged), length, keep_alive: self.keep_alive }
    }

    pub(crate) fn into_body(self) -> axum::body::Body {
        match self.length {
            Some(length) => axum::body::Body::new(Declared { chunks: self.chunks, length }),
            None => axum::body::Body::from_stream(self.chunks),
        }
    }
}

impl Stream for BodyStream {
    type Item = Result<Bytes, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.chunks.as_mut().poll_next(cx)
    }
}

/// A stream's producer failed; the message is for the log, never for the client.
#[derive(Debug)]
pub struct StreamFailed(pub String);

impl std::fmt::Display for StreamFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StreamFailed {}

struct Logged {
    chunks: Pin<Box<dyn Stream<Item = Result<Bytes, BoxError>> + Send>>,
    route: Arc<str>,
    event_stream: bool,
    done: bool,
    /// A byte stream's failure, passed on at the next poll (see below).
    failed: Option<BoxError>,
    /// What is left of a declared length, and the length.
    remaining: Option<u64>,
    declared: u64,
    /// The chunk that completed the declared length, held until the producer is seen to end:
    /// hyper stops asking once it has the length, so bytes past it went unnoticed when they
    /// came in a later chunk (found by a probe: 3 × 5 bytes for a length of 10 sent 10, kept
    /// the connection, logged nothing).
    last: Option<Bytes>,
}

impl Logged {
    /// Holds `item` to the declared length: a chunk past it, or an end before it, is a failure.
    fn within_length(&mut self, item: Option<Result<Bytes, BoxError>>) -> Option<Result<Bytes, BoxError>> {
        let Some(remaining) = self.remaining.as_mut() else { return item };
        match item {
            Some(Ok(chunk)) if chunk.len() as u64 > *remaining => Some(Err(Box::new(StreamFailed(format!("the stream sent more than the {} bytes its Content-Length declares", self.declared))))),
            Some(Ok(chunk)) => {
                *remaining -= chunk.len() as u64;
                Some(Ok(chunk))
            }
            None if *remaining > 0 => Some(Err(Box::new(StreamFailed(format!("the stream ended {} bytes short of its Content-Length", *remaining))))),
            other => other,
        }
    }
}

/// A stream whose length is known: hyper sends it with that `Content-Length`.
struct Declared {
    chunks: Pin<Box<dyn Stream<Item = Result<Bytes, BoxError>> + Send>>,
    length: u64,
}

impl hyper::body::Body for Declared {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<hyper::body::Frame<Bytes>, BoxError>>> {
        self.chunks.as_mut().poll_next(cx).map(|item| item.map(|chunk| chunk.map(hyper::body::Frame::data)))
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        hyper::body::SizeHint::with_exact(self.length)
    }
}

impl Stream for Logged {
    type Item = Result<Bytes, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(error) = self.failed.take() {
            self.done = true;
            return Poll::Ready(Some(Err(error)));
        }
        if self.done {
            return Poll::Ready(None);
        }
        let item = loop {
            let item = std::task::ready!(self.chunks.as_mut().poll_next(cx));
            if self.last.is_some() {
                match item {
                    None => {
                        self.done = true;
                        return Poll::Ready(self.last.take().map(Ok));
                    }
                    Some(Ok(chunk)) if chunk.is_empty() => continue,
                    // The held chunk is dropped: the body stops short of its length, so the
                    // client sees it cut off, as for any failure.
                    Some(Ok(_)) => break Some(Err(Box::new(StreamFailed(format!("the stream sent more than the {} bytes its Content-Length declares", self.declared))) as BoxError)),
                    Some(Err(error)) => break Some(Err(error)),
                }
            }
            match self.within_length(item) {
                Some(Ok(chunk)) if self.remaining == Some(0) => self.last = Some(chunk),
                other => break other,
            }
        };
        match item {
            Some(Err(error)) => {
                tracing::error!(target: "ferrule::handler", route = %self.route, "stream of {} failed: {error}", self.route);
                if self.event_stream {
                    self.done = true;
                    return Poll::Ready(None);
                }
                // hyper drops what it has not written yet when a body fails; one `Pending`
                // first lets it write out the chunks before the failure, so the client has
                // them, cut off rather than lost.
                self.failed = Some(error);
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            other => Poll::Ready(other),
        }
    }
}

#[cfg(test)]
mod tests;
