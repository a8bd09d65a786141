//! A streamed response as its connection sends it.
//!
//! * **Busy until sent.** A connection counts as idle only between requests; a streamed body
//!   keeps its request in flight until the last chunk, so making room for new clients never
//!   closes a connection in the middle of a stream.
//! * **Event streams end at a close.** A stream of Server-Sent Events never ends by itself:
//!   when the connection is asked to close (shutdown, or the server making room), the stream
//!   ends after its current event, the response completes, and the drain need not wait for
//!   its deadline. A client's `EventSource` reconnects — to another instance, or this one
//!   restarted — and sends `Last-Event-ID`.
//! * **Kept alive while quiet.** An event stream quiet for `sse_keep_alive_ms` gets a comment
//!   line (`:`), which clients ignore and which keeps proxies and load balancers from closing
//!   it as idle.
//!
//! Cost: nothing for a whole body (its size is known, it is not wrapped); a streamed one gets
//! one wrapper, and an event stream one timer.

use super::registry::ConnState;
use crate::response::is_event_stream;
use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Sleep;

const KEEP_ALIVE: &[u8] = b":\n\n";

/// Whether `response`'s body is produced over time (its size is not known in advance).
///
/// A body that is not whole when its response is made must say so here (no exact size hint):
/// it then keeps its connection in flight until it ends, and the socket relies on that to
/// tell hyper's answer to an unparsable head from a response's bytes
/// (`super::io::GuardedIo::poll_instead_of_refusal`).
pub(crate) fn is_streamed(response: &axum::response::Response) -> bool {
    response.body().size_hint().exact().is_none()
}

/// Wraps a streamed response's body so it holds its connection's in-flight count until it
/// ends; an event stream also gets keep-alive comments and ends when the connection closes.
pub(crate) fn track(response: axum::response::Response, state: Arc<ConnState>, keep_alive: Option<Duration>) -> axum::response::Response {
    let event_stream = is_event_stream(response.headers());
    let (parts, body) = response.into_parts();
    // The stream's own period, when it has one (zero: none).
    let keep_alive = match parts.extensions.get::<crate::stream::KeepAlive>() {
        Some(own) => Some(own.0).filter(|every| !every.is_zero()),
        None => keep_alive,
    };
    let events = event_stream.then(|| EventExtras {
        keep_alive: keep_alive.map(|every| (every, Box::pin(tokio::time::sleep(every)))),
        closed: closed(state.clone()),
    });
    let tracked = Tracked { body, state, events };
    axum::response::Response::from_parts(parts, axum::body::Body::new(tracked))
}

/// Resolves once the connection is asked to close.
pub(super) fn closed(state: Arc<ConnState>) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(async move {
        let notified = state.end_streams.notified();
        tokio::pin!(notified);
        // Registered before the flag is read, so a close between the two is not missed.
        notified.as_mut().enable();
        if state.closing.load(Ordering::Acquire) {
            return;
        }
        notified.await;
    })
}

struct EventExtras {
    keep_alive: Option<(Duration, Pin<Box<Sleep>>)>,
    closed: Pin<Box<dyn Future<Output = ()> + Send>>,
}

struct Tracked {
    body: axum::body::Body,
    state: Arc<ConnState>,
    events: Option<EventExtras>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.state.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        let Some(events) = &mut this.events else {
            return Pin::new(&mut this.body).poll_frame(cx);
        };
        if events.closed.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.body).poll_frame(cx) {
            Poll::Ready(frame) => {
                if let Some((every, timer)) = &mut events.keep_alive {
                    timer.as_mut().reset(tokio::time::Instant::now() + *every);
                }
                Poll::Ready(frame)
            }
            Poll::Pending => {
                let Some((every, timer)) = &mut events.keep_alive else { return Poll::Pending };
                if timer.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                timer.as_mut().reset(tokio::time::Instant::now() + *every);
                Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(KEEP_ALIVE)))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
