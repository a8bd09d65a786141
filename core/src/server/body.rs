//! A request body with a pace: a pause between two reads may not exceed the body read timeout,
//! and once that long has passed the body must average at least `min_body_rate` bytes per
//! second (a client sending one byte every two seconds never pauses for long, but is 500 times
//! too slow). Whoever reads the body — the core's body reader, the lingering drain after an
//! early answer, a streaming handler — gets [`BodyTimeout`] as the frame's error.
//!
//! Cost: a body that arrives with its head (most small requests) is never timed, not even by a
//! clock read; the clock is read and a timer made only when a read has to wait. The pace is
//! counted from the body's first wait, which is when the server starts waiting for it.

use super::limits::ConnectionLimits;
use super::registry::ConnState;
use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

/// The client sent its request body too slowly.
#[derive(Debug)]
pub struct BodyTimeout;

impl std::fmt::Display for BodyTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body did not arrive in time")
    }
}

impl std::error::Error for BodyTimeout {}

/// Whether a body read failed because the client was too slow (through any wrapping).
pub fn is_body_timeout(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        if e.is::<BodyTimeout>() {
            return true;
        }
        current = e.source();
    }
    false
}

/// A request body that broke for a reason of its stream's own (over HTTP/2: a Content-Length
/// the DATA frames do not add up to, trailers that are not trailers, a window pushed past
/// 2^31 − 1). The route's problem carries it to the connection, which resets that stream with
/// the protocol's reason (RFC 9113 §8.1.1) rather than answering: hyper finds the h2 reason in
/// this error's sources.
#[derive(Clone, Debug)]
pub struct StreamError(std::sync::Arc<axum::Error>);

impl StreamError {
    pub(crate) fn new(error: axum::Error) -> Self {
        StreamError(std::sync::Arc::new(error))
    }
}

impl PartialEq for StreamError {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the request's stream failed: {}", self.0)
    }
}

impl std::error::Error for StreamError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

/// The clock is read only when the body has to wait for the client: the time of a read
/// matters only to the deadline of the wait after it. A body that arrives with its head (every
/// small request, and every request without a body) costs no clock read at all, where one at
/// creation and one per chunk cost two per request (about 20 ns each on this machine's vDSO
/// clock; json-small-unvalidated is about 10 µs).
pub(crate) struct PacedBody {
    inner: Incoming,
    limits: Arc<ConnectionLimits>,
    /// The connection, counted busy (`in_flight`) until this body has been read to its end or
    /// let go. Its answer can come first (an early 413, a route that takes no body: the rest
    /// is drained after it, `crate::body::discard`), and until the body's end the connection is
    /// not between requests: resting then (`super::io::REST_AFTER`) gave the socket to a new
    /// hyper connection that read the rest of the body as requests, so a client that paused
    /// for a second had its body's bytes served as requests (found by an attack pass).
    /// `None` for a request that came without a body. Cost (callgrind, release, 1,000 requests
    /// after 200, three runs each, medians): json-small 33,954 → 34,164 instructions a request,
    /// path-simple 24,047 → 24,167. The count is about 45 of them; the rest is the body's box, a
    /// pointer bigger, taking a slower path through the allocator.
    unfinished: Option<Arc<ConnState>>,
    /// When the body first had to wait, and when it last received bytes before a wait; `None`
    /// until its first wait.
    times: Option<Times>,
    /// Bytes arrived since the last wait (`last_read` is due).
    fresh: bool,
    received: u64,
    timer: Option<Pin<Box<Sleep>>>,
}

#[derive(Clone, Copy)]
struct Times {
    started: Instant,
    last_read: Instant,
}

impl PacedBody {
    pub fn new(inner: Incoming, limits: Arc<ConnectionLimits>, connection: &Arc<ConnState>) -> Self {
        let unfinished = (!inner.is_end_stream()).then(|| {
            connection.in_flight.fetch_add(1, Ordering::AcqRel);
            connection.clone()
        });
        PacedBody { inner, limits, unfinished, times: None, fresh: false, received: 0, timer: None }
    }

    /// The body has been read to its end, has failed, or is let go: the connection may be
    /// between requests again.
    fn finished(&mut self) {
        if let Some(connection) = self.unfinished.take() {
            connection.in_flight.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Notes the time at the start of a wait: the first one starts the clock, and bytes since
    /// the last one moved the last read to now.
    fn waiting(&mut self) -> Times {
        match &mut self.times {
            Some(times) => {
                if std::mem::take(&mut self.fresh) {
                    times.last_read = Instant::now();
                }
                *times
            }
            None => {
                let now = Instant::now();
                self.fresh = false;
                *self.times.insert(Times { started: now, last_read: now })
            }
        }
    }

    fn deadline(&mut self) -> Option<Instant> {
        let grace = self.limits.body_read?;
        let Times { started, last_read } = self.waiting();
        let pause = last_read + grace;
        if self.limits.min_body_rate == 0 {
            return Some(pause);
        }
        let earned = Duration::from_secs_f64(self.received as f64 / self.limits.min_body_rate as f64);
        Some(pause.min(started + grace + earned))
    }
}

impl Drop for PacedBody {
    fn drop(&mut self) {
        self.finished();
    }
}

impl Body for PacedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.received += data.len() as u64;
                    this.fresh = true;
                }
                if this.inner.is_end_stream() {
                    this.finished();
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                this.finished();
                Poll::Ready(Some(Err(e.into())))
            }
            Poll::Ready(None) => {
                this.finished();
                Poll::Ready(None)
            }
            Poll::Pending => {
                let Some(deadline) = this.deadline() else { return Poll::Pending };
                let timer = match &mut this.timer {
                    Some(timer) => {
                        if timer.deadline() != deadline {
                            timer.as_mut().reset(deadline);
                        }
                        timer
                    }
                    None => this.timer.insert(Box::pin(tokio::time::sleep_until(deadline))),
                };
                match timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimeout)))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
