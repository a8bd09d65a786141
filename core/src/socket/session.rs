//! One WebSocket connection's task: reads what the client sends into the socket's arrivals,
//! writes what the handler queued, keeps a silent connection checked, and closes with the code
//! that says why.
//!
//! One task, not a reader and a writer: writes are fed in a batch and flushed once, and while a
//! write waits for a slow client no more is read — the client that does not read is the one
//! held back. The write itself is bounded by the connection's `send_timeout_ms`.

use super::handle::Outgoing;
use super::{Closed, Message, Socket};
use futures_util::task::{waker, ArcWake, AtomicWaker};
use futures_util::{SinkExt, Stream, StreamExt};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
use tokio_tungstenite::tungstenite::protocol::{frame::coding::CloseCode, CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message as Frame;
use tokio_tungstenite::WebSocketStream;

pub(super) struct Settings {
    pub max_message_bytes: usize,
    pub idle: Option<Duration>,
}

/// How long a close we sent waits for the client's answering close.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

type GoingAway = Pin<Box<dyn Future<Output = ()> + Send>>;

pub(super) async fn run<S>(io: S, socket: Socket, settings: Settings, going_away: Option<GoingAway>, label: std::sync::Arc<str>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let config = WebSocketConfig::default()
        .max_message_size(Some(settings.max_message_bytes))
        .max_frame_size(Some(settings.max_message_bytes))
        // Allocated up front for every connection: tungstenite's 128 KiB default would make
        // 10,000 idle connections cost 1.25 GB. Measured on 64 KiB echoes against plain axum
        // (its 128 KiB): 4 KiB reads ran at 0.7x its rate, 16 KiB at 0.8–0.95x (2 s runs).
        .read_buffer_size(16 * 1024)
        .write_buffer_size(0);
    let ws = WebSocketStream::from_raw_socket(io, Role::Server, Some(config)).await;
    let (mut sink, mut stream) = ws.split();
    let mut going_away = going_away.unwrap_or_else(|| Box::pin(std::future::pending()));
    let mut leaving = false;
    let mut heard = Instant::now();
    let mut pinged = false;
    // Armed once and moved only when it fires early (as the connection's own deadlines are):
    // a busy connection does not touch the timer per message.
    let idle = settings.idle.unwrap_or(Duration::MAX);
    let mut idle_timer = Box::pin(tokio::time::sleep_until(heard + idle.min(Duration::from_secs(86_400 * 365))));
    let mut out = Vec::new();
    let reads = ReadGate::new();
    let ended = loop {
        // What the handler queued goes first, and with it the close it asked for.
        let close = socket.take_sends(&mut out);
        if !out.is_empty() {
            let mut written = Ok(());
            for outgoing in out.drain(..) {
                let frame = match outgoing {
                    Outgoing::Message(Message::Text(text)) => Frame::Text(text.into_frame()),
                    Outgoing::Message(Message::Binary(data)) => Frame::Binary(data),
                    Outgoing::Ping(data) => Frame::Ping(data),
                };
                written = sink.feed(frame).await;
                if written.is_err() {
                    break;
                }
            }
            if written.is_err() || sink.flush().await.is_err() {
                out.clear();
                break Closed::new(1006, "the connection broke while writing");
            }
        }
        if let Some(close) = close {
            break close_from_here(&mut sink, &mut stream, close).await;
        }
        let room = socket.has_room();
        tokio::select! {
            biased;
            () = &mut going_away, if !leaving => {
                leaving = true;
                socket.close(1001, "server shutting down");
            }
            () = socket.session_notified() => {}
            () = &mut idle_timer, if settings.idle.is_some() => {
                let due = heard + if pinged { idle * 2 } else { idle };
                if Instant::now() < due {
                    idle_timer.as_mut().reset(due);
                } else if pinged {
                    socket.close(1001, "idle timeout");
                } else {
                    pinged = true;
                    let _ = socket.ping(bytes::Bytes::new());
                    idle_timer.as_mut().reset(heard + idle * 2);
                }
            }
            read = std::future::poll_fn(|cx| reads.poll_next(&mut stream, cx)), if room => {
                heard = Instant::now();
                pinged = false;
                match read {
                    Some(Ok(Frame::Text(text))) => socket.arrive(Message::Text(super::Text::from_frame(text))),
                    Some(Ok(Frame::Binary(data))) => socket.arrive(Message::Binary(data)),
                    Some(Ok(Frame::Ping(_) | Frame::Pong(_) | Frame::Frame(_))) => {}
                    Some(Ok(Frame::Close(frame))) => {
                        // tungstenite has queued the answering close; it goes out with this flush.
                        let _ = sink.flush().await;
                        break frame.map_or(Closed::new(1005, ""), |f| Closed::new(u16::from(f.code), f.reason.as_str()));
                    }
                    Some(Err(error)) => match violation(&error) {
                        Some(close) => {
                            tracing::debug!(target: "ferrule::socket", route = %label, "closing a WebSocket with {}: {error}", close.code);
                            break close_from_here(&mut sink, &mut stream, close).await;
                        }
                        None => break Closed::new(1006, "the connection dropped without a close"),
                    },
                    None => break Closed::new(1006, "the connection dropped without a close"),
                }
            }
        }
    };
    socket.end(ended);
}

/// Polls the read side only when it can make progress: after a message (more may be buffered),
/// or once the socket said it has data. The task also wakes for every send the handler queues,
/// and tungstenite prepares a read by zeroing its whole read buffer (16 KiB) before asking the
/// socket, even when the socket has nothing: a broadcast to 1,000 members spent 0.4 µs a
/// message on that memset and 0.5 µs on readiness checks (perf; `ws-broadcast-1000`, 6.3
/// CPU-µs a delivered message against axum's 4.9, whose reader is a task of its own).
struct ReadGate {
    readiness: Arc<Readiness>,
    /// Handed to the socket's reads: wakes the task with `ready` set.
    socket_waker: Waker,
}

struct Readiness {
    /// Whether the next poll may find something: set by a message read and by the socket.
    ready: AtomicBool,
    /// The session's task.
    task: AtomicWaker,
}

impl ArcWake for Readiness {
    fn wake_by_ref(readiness: &Arc<Self>) {
        readiness.ready.store(true, Ordering::Release);
        readiness.task.wake();
    }
}

impl ReadGate {
    fn new() -> Self {
        let readiness = Arc::new(Readiness { ready: AtomicBool::new(true), task: AtomicWaker::new() });
        ReadGate { socket_waker: waker(readiness.clone()), readiness }
    }

    fn poll_next<St: Stream + Unpin>(&self, stream: &mut St, cx: &mut Context<'_>) -> Poll<Option<St::Item>> {
        self.readiness.task.register(cx.waker());
        if !self.readiness.ready.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        let read = stream.poll_next_unpin(&mut Context::from_waker(&self.socket_waker));
        if read.is_ready() {
            self.readiness.ready.store(true, Ordering::Release);
        }
        read
    }
}

/// The close a client's fault earns, or `None` when the connection is simply gone.
fn violation(error: &WsError) -> Option<Closed> {
    match error {
        WsError::Protocol(problem) => Some(Closed::new(1002, problem.to_string())),
        WsError::Utf8(_) => Some(Closed::new(1007, "text message is not valid UTF-8")),
        WsError::Capacity(CapacityError::MessageTooLong { max_size, .. }) => {
            Some(Closed::new(1009, format!("message larger than {max_size} bytes")))
        }
        WsError::Capacity(other) => Some(Closed::new(1009, other.to_string())),
        _ => None,
    }
}

/// Sends `close` and waits (briefly) for the client's answering close; the code the handler
/// sees is the one sent.
async fn close_from_here<Si, St>(sink: &mut Si, stream: &mut St, close: Closed) -> Closed
where
    Si: futures_util::Sink<Frame> + Unpin,
    St: futures_util::Stream<Item = Result<Frame, WsError>> + Unpin,
{
    let frame = CloseFrame { code: CloseCode::from(close.code), reason: close.reason.clone().into() };
    if sink.send(Frame::Close(Some(frame))).await.is_ok() {
        let _ = tokio::time::timeout(CLOSE_WAIT, async {
            while let Some(Ok(frame)) = stream.next().await {
                if matches!(frame, Frame::Close(_)) {
                    break;
                }
            }
        })
        .await;
    }
    let _ = sink.close().await;
    close
}

#[cfg(test)]
mod tests {
    use super::ReadGate;
    use futures_util::task::noop_waker;
    use futures_util::Stream;
    use std::pin::Pin;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll, Waker};

    /// A socket's read side: counts polls, yields what is put in it, keeps the last waker.
    #[derive(Default)]
    struct Reads {
        polls: usize,
        waiting: Vec<u8>,
        waker: Option<Waker>,
    }

    struct Probe(Arc<Mutex<Reads>>);

    impl Stream for Probe {
        type Item = u8;
        fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u8>> {
            let mut reads = self.0.lock().unwrap();
            reads.polls += 1;
            match reads.waiting.pop() {
                Some(byte) => Poll::Ready(Some(byte)),
                None => {
                    reads.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        }
    }

    #[test]
    fn the_read_side_is_polled_only_after_a_message_or_its_own_wake() {
        let reads = Arc::new(Mutex::new(Reads { waiting: vec![2, 1], ..Default::default() }));
        let mut stream = Probe(reads.clone());
        let gate = ReadGate::new();
        let task = noop_waker();
        let mut cx = Context::from_waker(&task);
        assert_eq!(gate.poll_next(&mut stream, &mut cx), Poll::Ready(Some(1)));
        assert_eq!(gate.poll_next(&mut stream, &mut cx), Poll::Ready(Some(2)), "more may be buffered after a message");
        assert_eq!(gate.poll_next(&mut stream, &mut cx), Poll::Pending);
        assert_eq!(reads.lock().unwrap().polls, 3);
        // The task wakes for sends: the read side is not asked again.
        for _ in 0..100 {
            assert_eq!(gate.poll_next(&mut stream, &mut cx), Poll::Pending);
        }
        assert_eq!(reads.lock().unwrap().polls, 3);
        // The socket has data: it wakes the gate, and the next poll reads.
        let socket_waker = {
            let mut reads = reads.lock().unwrap();
            reads.waiting.push(3);
            reads.waker.take().unwrap()
        };
        socket_waker.wake();
        assert_eq!(gate.poll_next(&mut stream, &mut cx), Poll::Ready(Some(3)));
        assert_eq!(reads.lock().unwrap().polls, 4);
    }
}
