//! One WebSocket connection's task: reads what the client sends into the socket's arrivals,
//! writes what the handler queued, keeps a silent connection checked, lets a quiet one rest
//! without buffers ([`super::rest`]), and closes with the code that says why.
//!
//! One task, not a reader and a writer: writes are fed in a batch and flushed once, and while a
//! write waits for a slow client no more is read — the client that does not read is the one
//! held back. The write itself is bounded by the connection's `send_timeout_ms`.

use super::handle::Outgoing;
use super::rest::Watched;
use super::{Closed, Message, Socket};
use crate::server::REST_AFTER;
use futures_util::task::{waker, ArcWake, AtomicWaker};
use futures_util::{FutureExt, SinkExt, Stream, StreamExt};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError, ProtocolError};
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

/// The session's task for `io`. A plain function that returns the task's future, so that the
/// future keeps room only for what it uses throughout: it lives as long as the connection,
/// and its size is part of what every idle socket costs. As an `async fn` it was 1,624 bytes
/// (`-Zprint-type-sizes`), now 736: its arguments kept slots of their own beside the locals
/// moved from them, the states that build a tungstenite or send the close kept room for those
/// steps' futures, and a read kept room for itself through the close it led to.
pub(super) fn run<S>(io: S, socket: Socket, settings: Settings, going_away: Option<GoingAway>, label: std::sync::Arc<str>) -> impl Future<Output = ()> + Send
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let config = WebSocketConfig::default()
        .max_message_size(Some(settings.max_message_bytes))
        .max_frame_size(Some(settings.max_message_bytes))
        // Allocated up front for every connection: tungstenite's 128 KiB default would make
        // 10,000 idle connections cost 1.25 GB. Measured on 64 KiB echoes against plain axum
        // (its 128 KiB): 4 KiB reads ran at 0.7x its rate, 16 KiB at 0.8–0.95x (2 s runs).
        // A quiet connection gives it back (`rest`).
        .read_buffer_size(16 * 1024)
        .write_buffer_size(0);
    let write_blocked = Arc::new(AtomicBool::new(false));
    let (mut sink, mut stream) = websocket(Watched::new(io, write_blocked.clone()), Vec::new(), config).split();
    let mut going_away = going_away.unwrap_or_else(|| Box::pin(std::future::pending()));
    // Armed once and moved only when it fires early (as the connection's own deadlines are):
    // a busy connection does not touch the timer per message.
    let idle = settings.idle;
    let first_due = idle.unwrap_or(Duration::MAX).min(Duration::from_secs(86_400 * 365));
    let mut idle_timer = Box::pin(tokio::time::sleep_until(Instant::now() + first_due));
    // Fires once per rest period; a connection that read or wrote in between (`stirred`) does
    // not rest, so a busy one pays a flag per message and a timer wake a second.
    let mut rest_timer = Box::pin(tokio::time::sleep(REST_AFTER));
    async move {
        let mut leaving = false;
        let mut heard = Instant::now();
        let mut pinged = false;
        let mut stirred = false;
        let mut out = Vec::new();
        let reads = ReadGate::new();
        let ended = loop {
            // What the handler queued goes first, and with it the close it asked for.
            let close = socket.take_sends(&mut out);
            if !out.is_empty() {
                stirred = true;
                if !write_all(&mut sink, &mut out).await {
                    break Closed::new(1006, "the connection broke while writing");
                }
            }
            if let Some(close) = close {
                break Box::pin(close_from_here(&mut sink, &mut stream, close)).await;
            }
            if write_blocked.load(Ordering::Relaxed) {
                // What tungstenite wrote while reading (its automatic pongs) waits for a client
                // that does not read: read nothing more until it is out. Found by an attack
                // probe: a client sending pings and reading nothing grew the server by 40 MB/s,
                // a queued pong per ping; the send timeout ends a client that never reads.
                stirred = true;
                if SinkExt::<Frame>::flush(&mut sink).await.is_err() {
                    break Closed::new(1006, "the connection broke while writing");
                }
                continue;
            }
            let room = socket.has_room();
            let mut rest_due = false;
            tokio::select! {
                biased;
                () = &mut going_away, if !leaving => {
                    leaving = true;
                    socket.close_with(Closed::new(1001, "server shutting down"));
                }
                () = socket.session_notified() => {}
                () = &mut idle_timer, if idle.is_some() => {
                    let idle = idle.unwrap_or(Duration::MAX);
                    let due = heard + if pinged { idle * 2 } else { idle };
                    if Instant::now() < due {
                        idle_timer.as_mut().reset(due);
                    } else if pinged {
                        socket.close_with(Closed::new(1001, "idle timeout"));
                    } else {
                        pinged = true;
                        let _ = socket.ping(bytes::Bytes::new());
                        idle_timer.as_mut().reset(heard + idle * 2);
                    }
                }
                read = std::future::poll_fn(|cx| reads.poll_next(&mut stream, cx)), if room => {
                    heard = Instant::now();
                    pinged = false;
                    stirred = true;
                    // Taken apart before anything is awaited, so that the session keeps no
                    // room for a read (and its error) through the close.
                    match take_in(read, &socket, &label) {
                        None => {}
                        Some(Ending::Dropped) => break dropped(),
                        Some(ending) => break Box::pin(end(ending, &mut sink, &mut stream)).await,
                    }
                }
                () = &mut rest_timer, if room && !leaving => {
                    rest_timer.as_mut().reset(Instant::now() + REST_AFTER);
                    rest_due = !std::mem::take(&mut stirred);
                }
            }
            if rest_due {
                // Decided before the wait, so that the stream given back is not kept through it.
                let mut io = match idle_io(sink.reunite(stream).expect("the two halves of one stream")) {
                    Ok(io) => io,
                    Err(ws) => {
                        (sink, stream) = ws.split();
                        continue;
                    }
                };
                #[cfg(test)]
                tests::RESTS.with(|rests| rests.set(rests.get() + 1));
                let Some(first) = rested(&mut io, &socket, &mut going_away, &mut leaving, idle_timer.as_mut(), idle.is_some()).await else {
                    break dropped();
                };
                reads.reopen();
                (sink, stream) = websocket(io, first, config).split();
            }
        };
        socket.end(ended);
    }
}

type Ws<S> = WebSocketStream<Watched<S>>;

/// How a read ended the session.
enum Ending {
    /// The client closed; tungstenite has queued the answering close.
    Answered(Closed),
    /// The client broke the protocol or a limit: this close goes out.
    Refused(Closed),
    /// The connection is gone.
    Dropped,
}

/// A message read goes to the handler; a close, a violation or the end of the connection
/// ends the session.
fn take_in(read: Option<Result<Frame, WsError>>, socket: &Socket, label: &str) -> Option<Ending> {
    match read {
        Some(Ok(Frame::Text(text))) => socket.arrive(Message::Text(super::Text::from_frame(text))),
        Some(Ok(Frame::Binary(data))) => socket.arrive(Message::Binary(data)),
        Some(Ok(Frame::Pong(data))) => socket.pong_arrived(data),
        Some(Ok(Frame::Ping(_) | Frame::Frame(_))) => {}
        Some(Ok(Frame::Close(frame))) => {
            return Some(Ending::Answered(frame.map_or(Closed::new(1005, ""), |f| Closed::new(u16::from(f.code), f.reason.as_str()))));
        }
        Some(Err(error)) => {
            let Some(close) = violation(&error) else { return Some(Ending::Dropped) };
            tracing::debug!(target: "ferrule::socket", route = %label, "closing a WebSocket with {}: {error}", close.code);
            return Some(Ending::Refused(close));
        }
        None => return Some(Ending::Dropped),
    }
    None
}

/// A tungstenite on `io`, which has already read `first` from it. tokio-tungstenite offers
/// this only as an `async fn`, which finishes at its first poll; awaited, its future (560
/// bytes) took room in the session's for good.
fn websocket<S: AsyncRead + AsyncWrite + Unpin>(io: Watched<S>, first: Vec<u8>, config: WebSocketConfig) -> Ws<S> {
    WebSocketStream::from_partially_read(io, first, Role::Server, Some(config)).now_or_never().expect("tokio-tungstenite builds a stream without waiting")
}

/// The socket back from tungstenite, when a rest loses nothing: tungstenite holds nothing of
/// the client's, and what it has of ours (a pong, a message) is written. Else the stream as
/// it was.
fn idle_io<S: AsyncRead + AsyncWrite + Unpin>(mut ws: Ws<S>) -> Result<Watched<S>, Ws<S>> {
    let idle = ws.get_ref().holds_nothing_unread() && matches!(SinkExt::<Frame>::flush(&mut ws).now_or_never(), Some(Ok(())));
    if idle {
        Ok(ws.into_inner())
    } else {
        Err(ws)
    }
}

/// A rest (`rest`): tungstenite and its buffers are gone, and the task waits for the client's
/// next bytes, a send or close from the handler, shutdown or the idle timer. The bytes that
/// ended it go to the next tungstenite; `None` when the client left.
async fn rested<S: AsyncRead + Unpin>(
    io: &mut S,
    socket: &Socket,
    going_away: &mut GoingAway,
    leaving: &mut bool,
    idle_timer: Pin<&mut tokio::time::Sleep>,
    idle: bool,
) -> Option<Vec<u8>> {
    let mut first = [0u8; 64];
    tokio::select! {
        biased;
        () = going_away.as_mut(), if !*leaving => {
            *leaving = true;
            socket.close_with(Closed::new(1001, "server shutting down"));
            Some(Vec::new())
        }
        () = socket.session_notified() => Some(Vec::new()),
        // Seen again, and acted on, by the session's own loop.
        () = idle_timer, if idle => Some(Vec::new()),
        read = io.read(&mut first) => match read {
            Ok(0) | Err(_) => None,
            Ok(n) => Some(first[..n].to_vec()),
        },
    }
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

    /// A new tungstenite may hold bytes already: the next poll reads.
    fn reopen(&self) {
        self.readiness.ready.store(true, Ordering::Release);
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
        // The connection ended without a close frame: gone (1006, as RFC 6455 §7.1.5 and
        // browsers report it), not a broken frame (1002).
        WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake) => None,
        WsError::Protocol(problem) => Some(Closed::new(1002, problem.to_string())),
        WsError::Utf8(_) => Some(Closed::new(1007, "text message is not valid UTF-8")),
        WsError::Capacity(CapacityError::MessageTooLong { max_size, .. }) => {
            Some(Closed::new(1009, format!("message larger than {max_size} bytes")))
        }
        WsError::Capacity(other) => Some(Closed::new(1009, other.to_string())),
        _ => None,
    }
}

/// Feeds what the handler queued to tungstenite and flushes it once; false when the
/// connection broke. One step of its own, so that the session keeps room for a write's
/// state only while it writes.
async fn write_all<Si>(sink: &mut Si, out: &mut Vec<Outgoing>) -> bool
where
    Si: futures_util::Sink<Frame> + Unpin,
{
    for outgoing in out.drain(..) {
        let frame = match outgoing {
            Outgoing::Message(Message::Text(text)) => Frame::Text(text.into_frame()),
            Outgoing::Message(Message::Binary(data)) => Frame::Binary(data),
            Outgoing::Ping(data) => Frame::Ping(data),
        };
        if sink.feed(frame).await.is_err() {
            return false;
        }
    }
    sink.flush().await.is_ok()
}

/// The last writes of a session a read ended: the answer to the client's close, which
/// tungstenite has queued, or a close of ours. Boxed where it is awaited, as `close_from_here`.
async fn end<Si, St>(ending: Ending, sink: &mut Si, stream: &mut St) -> Closed
where
    Si: futures_util::Sink<Frame> + Unpin,
    St: futures_util::Stream<Item = Result<Frame, WsError>> + Unpin,
{
    match ending {
        Ending::Answered(closed) => {
            let _ = sink.flush().await;
            closed
        }
        Ending::Refused(close) => close_from_here(sink, stream, close).await,
        Ending::Dropped => dropped(),
    }
}

/// The client went without a close (1006, which is never sent).
fn dropped() -> Closed {
    Closed::new(1006, "the connection dropped without a close")
}

/// Sends `close` and waits (briefly) for the client's answering close; the code the handler
/// sees is the one sent. Boxed where it is awaited: it runs once, at the end, and inline its
/// 240 bytes would be room every session keeps.
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
    use super::{run, GoingAway, ReadGate, Settings, REST_AFTER};
    use bytes::Bytes;
    use crate::socket::{Message, Socket};
    use futures_util::task::noop_waker;
    use futures_util::{SinkExt, Stream, StreamExt};
    use std::cell::Cell;
    use std::pin::Pin;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll, Waker};
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
    use tokio_tungstenite::tungstenite::protocol::Role;
    use tokio_tungstenite::tungstenite::Message as Frame;
    use tokio_tungstenite::WebSocketStream;

    thread_local! {
        /// Rests taken by sessions on this thread (each test's runtime has a thread of its own).
        pub(super) static RESTS: Cell<usize> = const { Cell::new(0) };
    }

    fn rests() -> usize {
        RESTS.with(Cell::get)
    }

    /// Long enough for a rest: the timer's first firing sees the last message, the second rests.
    async fn quiet() {
        tokio::time::sleep(REST_AFTER * 5 / 2).await;
    }

    /// This thread's rests once they reach `n` (the second firing of a timer a loaded machine
    /// ran late can come after [`quiet`]), or after 10 s.
    async fn rested(n: usize) -> usize {
        let until = tokio::time::Instant::now() + Duration::from_secs(10);
        while rests() < n && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        rests()
    }

    /// A session over an in-memory pipe with an echoing handler: the client's end, the
    /// handler's `Socket` and the session's task.
    fn session(idle: Option<Duration>, going_away: Option<GoingAway>) -> (DuplexStream, Socket, tokio::task::JoinHandle<()>) {
        let (server, client) = tokio::io::duplex(256 * 1024);
        let socket = Socket::new(None, 1 << 20);
        let handler = socket.clone();
        tokio::spawn(async move {
            while let Some(message) = handler.recv().await {
                if handler.send(message).is_err() {
                    break;
                }
            }
        });
        let settings = Settings { max_message_bytes: 1 << 20, idle };
        let task = tokio::spawn(run(server, socket.clone(), settings, going_away, "test".into()));
        (client, socket, task)
    }

    async fn client(io: DuplexStream) -> WebSocketStream<DuplexStream> {
        WebSocketStream::from_raw_socket(io, Role::Client, None).await
    }

    async fn next(client: &mut WebSocketStream<DuplexStream>) -> Frame {
        tokio::time::timeout(Duration::from_secs(5), client.next()).await.expect("in time").expect("a frame").expect("a valid frame")
    }

    /// A client frame with a zero mask (the payload goes as it is).
    fn frame(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![if fin { 0x80 } else { 0 } | opcode, 0x80 | payload.len() as u8, 0, 0, 0, 0];
        out.extend_from_slice(payload);
        out
    }

    /// A short frame from the server: its first byte and payload.
    async fn server_frame(io: &mut DuplexStream) -> (u8, Vec<u8>) {
        let mut head = [0u8; 2];
        tokio::time::timeout(Duration::from_secs(5), io.read_exact(&mut head)).await.expect("in time").unwrap();
        let mut payload = vec![0u8; usize::from(head[1] & 0x7f)];
        io.read_exact(&mut payload).await.unwrap();
        (head[0], payload)
    }

    // Found by an attack probe: a client that sent one message, then pings without reading
    // anything, grew the server by 40 MB/s: each ping read queued a pong behind the ones the
    // client never took. Now the session reads no more until what it wrote is taken, so the
    // client's own writes stop once the buffers between them are full.
    #[tokio::test]
    async fn a_client_that_pings_and_never_reads_is_held_back_not_buffered_for() {
        let (mut io, _socket, _task) = session(None, None);
        io.write_all(&frame(true, 0x1, b"hello")).await.unwrap();
        let ping = frame(true, 0x9, &[b'p'; 125]);
        let mut sent = 0usize;
        let until = tokio::time::Instant::now() + Duration::from_secs(3);
        while tokio::time::Instant::now() < until {
            match tokio::time::timeout(Duration::from_millis(300), io.write_all(&ping)).await {
                Ok(written) => {
                    written.unwrap();
                    sent += 1;
                }
                Err(_) => break, // the server stopped reading
            }
        }
        // 256 KiB each way: about 2,000 pongs fill the server's side, 2,000 pings the client's.
        assert!(sent < 10_000, "{sent} pings were read from a client that reads nothing");
        assert!(tokio::time::Instant::now() < until, "the client's writes never stopped");
    }

    #[tokio::test]
    async fn a_quiet_socket_rests_and_then_echoes_and_answers_pings() {
        let (io, _socket, _task) = session(None, None);
        let mut client = client(io).await;
        client.send(Frame::text("one")).await.unwrap();
        assert_eq!(next(&mut client).await, Frame::text("one"));
        assert_eq!(rested(1).await, 1);
        quiet().await;
        assert_eq!(rests(), 1, "resting, it does not rest again");
        client.send(Frame::Ping("p".into())).await.unwrap();
        assert_eq!(next(&mut client).await, Frame::Pong("p".into()));
        client.send(Frame::binary(vec![9; 3000])).await.unwrap();
        assert_eq!(next(&mut client).await, Frame::binary(vec![9; 3000]));
        assert_eq!(rested(2).await, 2, "quiet again, it rests again");
    }

    #[tokio::test]
    async fn a_pong_from_the_client_reaches_the_handlers_take() {
        let (io, socket, _task) = session(None, None);
        let mut client = client(io).await;
        socket.ping(Bytes::from_static(b"beat")).unwrap();
        assert_eq!(next(&mut client).await, Frame::Ping("beat".into()));
        client.send(Frame::Pong("beat".into())).await.unwrap();
        let started = tokio::time::Instant::now();
        let pongs = loop {
            let taken = socket.take();
            if !taken.pongs.is_empty() || started.elapsed() > Duration::from_secs(5) {
                break taken.pongs;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert_eq!(pongs, vec![Bytes::from_static(b"beat")]);
    }

    #[tokio::test]
    async fn a_socket_in_use_does_not_rest() {
        let (io, socket, _task) = session(None, None);
        let mut client = client(io).await;
        // The client pings (tungstenite answers: nothing goes through the handler)…
        let started = tokio::time::Instant::now();
        while started.elapsed() < REST_AFTER * 5 / 2 {
            client.send(Frame::Ping("tick".into())).await.unwrap();
            assert_eq!(next(&mut client).await, Frame::Pong("tick".into()));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(rests(), 0, "read from");
        // …then only the handler speaks.
        let started = tokio::time::Instant::now();
        while started.elapsed() < REST_AFTER * 5 / 2 {
            socket.send(Message::Text("news".into())).unwrap();
            assert_eq!(next(&mut client).await, Frame::text("news"));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(rests(), 0, "written to");
    }

    #[tokio::test]
    async fn a_message_whose_last_fragment_comes_after_a_quiet_spell_arrives_whole() {
        let (mut io, _socket, _task) = session(None, None);
        io.write_all(&frame(false, 0x1, b"hel")).await.unwrap();
        quiet().await;
        assert_eq!(rests(), 0, "a message in fragments is held by tungstenite");
        io.write_all(&frame(true, 0x0, b"lo")).await.unwrap();
        assert_eq!(server_frame(&mut io).await, (0x81, b"hello".to_vec()));
    }

    #[tokio::test]
    async fn a_frame_half_sent_before_a_quiet_spell_arrives_whole() {
        let (mut io, _socket, _task) = session(None, None);
        let bytes = frame(true, 0x2, &[7; 100]);
        io.write_all(&bytes[..50]).await.unwrap();
        quiet().await;
        assert_eq!(rests(), 0, "half a frame is held by tungstenite");
        io.write_all(&bytes[50..]).await.unwrap();
        assert_eq!(server_frame(&mut io).await, (0x82, vec![7; 100]));
    }

    #[tokio::test]
    async fn a_resting_socket_sends_what_its_handler_queues() {
        let (io, socket, _task) = session(None, None);
        let mut client = client(io).await;
        assert_eq!(rested(1).await, 1);
        socket.send(Message::Text("pushed".into())).unwrap();
        assert_eq!(next(&mut client).await, Frame::text("pushed"));
    }

    #[tokio::test]
    async fn a_resting_socket_is_still_pinged_when_idle_and_closed_by_shutdown() {
        let (shut_down, going_away) = tokio::sync::oneshot::channel::<()>();
        let going_away: GoingAway = Box::pin(async move {
            let _ = going_away.await;
        });
        let (io, socket, task) = session(Some(REST_AFTER * 3), Some(going_away));
        let mut client = client(io).await;
        assert_eq!(rested(1).await, 1);
        assert_eq!(next(&mut client).await, Frame::Ping(Default::default()), "the idle timer's ping");
        // The client's automatic pong goes out with a flush; then it is quiet again.
        client.flush().await.unwrap();
        assert_eq!(rested(2).await, 2);
        shut_down.send(()).unwrap();
        match next(&mut client).await {
            Frame::Close(Some(close)) => assert_eq!(u16::from(close.code), 1001),
            other => panic!("{other:?}"),
        }
        drop(client);
        tokio::time::timeout(Duration::from_secs(5), task).await.expect("the session ends").unwrap();
        assert_eq!(socket.closed().map(|c| c.code), Some(1001));
    }

    #[tokio::test]
    async fn a_client_that_leaves_a_resting_socket_ends_its_session() {
        let (io, socket, task) = session(None, None);
        assert_eq!(rested(1).await, 1);
        drop(io);
        tokio::time::timeout(Duration::from_secs(5), task).await.expect("the session ends").unwrap();
        assert_eq!(socket.closed().map(|c| c.code), Some(1006));
    }

    // Found by a README-driven probe: a client that dropped its connection while the socket
    // was awake was reported as 1002 (a broken frame) instead of 1006.
    #[tokio::test]
    async fn a_client_that_drops_an_awake_socket_is_gone_not_a_protocol_error() {
        let (mut io, socket, task) = session(None, None);
        io.write_all(&frame(true, 1, b"hi")).await.unwrap();
        assert_eq!(server_frame(&mut io).await, (0x81, b"hi".to_vec()));
        drop(io);
        tokio::time::timeout(Duration::from_secs(5), task).await.expect("the session ends").unwrap();
        assert_eq!(socket.closed().map(|c| c.code), Some(1006));
    }

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

    /// A session's task lives as long as its socket, resting or not: the room its future
    /// keeps is part of what every idle socket costs. As an `async fn` it kept room for its
    /// arguments twice and for building tungstenite and sending the close: 1,432 bytes here
    /// (1,624 on the server's connections, from `-Zprint-type-sizes`); now 704 (736).
    #[tokio::test]
    async fn a_session_keeps_no_room_for_steps_it_is_not_in() {
        let (server, _client) = tokio::io::duplex(1024);
        let settings = Settings { max_message_bytes: 1 << 20, idle: None };
        let session = run(server, Socket::new(None, 1 << 20), settings, None, "test".into());
        let size = std::mem::size_of_val(&session);
        assert!(size <= 1024, "the session takes {size} bytes");
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
