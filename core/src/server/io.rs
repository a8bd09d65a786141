//! A connection's socket with the deadlines hyper does not keep: how long a client may take to
//! send a request head, and how long a keep-alive connection may wait for its next request.
//!
//! hyper's own header timeout cannot answer 408 (it closes silently) and, without a timer,
//! never fires at all; it also cannot tell a connection waiting between requests from one
//! half-way through a head. Here the socket itself knows: a read that would wait while no
//! request of this connection is in flight is waiting for a head, and the deadline that
//! applies depends on whether any byte of that head has arrived.
//!
//! hyper may register its interest in the next read while a request is still in flight and
//! not read again until bytes arrive, so the keep-alive timer is also armed after each write
//! (see [`GuardedIo::wrote`]).
//!
//! The other direction has a deadline too: a write the socket cannot take (the client stopped
//! reading and its window is full) may wait `send_timeout_ms`, then the connection is closed.
//!
//! And hyper's empty answer to a head it cannot parse goes out as a problem document
//! ([`super::refusal`]; see [`GuardedIo::poll_instead_of_refusal`]).
//!
//! A keep-alive connection that has waited [`REST_AFTER`] for its next request *rests*: the
//! guard tells the connection's task (through [`ConnState::resting`]), which takes the socket
//! back from hyper and lets hyper's buffers go until the client sends again
//! (`super::connection`).
//!
//! Cost: one clock read per socket read and write (a write that arms the keep-alive timer
//! shares its read), and a timer armed once per connection and
//! moved only when a deadline becomes *earlier* — a later deadline leaves the timer where it
//! is, and when it fires early the read re-arms it (so a busy keep-alive connection moves its
//! timer once per rest period, [`REST_AFTER`], not once per request).

use super::limits::ConnectionLimits;
use super::refusal;
use super::registry::ConnState;
use http::StatusCode;
use std::io;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

pub(crate) struct GuardedIo {
    stream: TcpStream,
    /// Bytes read while telling HTTP/1 from HTTP/2, handed to hyper before the socket's.
    replay: bytes::Bytes,
    state: Arc<ConnState>,
    limits: Arc<ConnectionLimits>,
    http1: bool,
    accepted: Instant,
    last_activity: Instant,
    /// When the first byte of the head being read now arrived.
    head_started: Option<Instant>,
    seen_started: u64,
    timer: Option<Pin<Box<Sleep>>>,
    timer_deadline: Option<Instant>,
    /// Armed while a write waits for the client to read; made at the first such wait only
    /// (writes to a reading client complete at once and never touch it).
    send_timer: Option<Pin<Box<Sleep>>>,
    send_waiting: bool,
    /// Whether the last write took all it was given: then hyper's next write starts with what
    /// it buffered since, not in the middle of something.
    drained: bool,
    /// Sent in place of hyper's answer to a head it could not parse. Boxed: every connection
    /// carries the field, few use it.
    in_place_of_refusal: Option<Box<InPlaceOfRefusal>>,
}

struct InPlaceOfRefusal {
    status: StatusCode,
    problem: Vec<u8>,
    sent: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    /// No byte of a request yet: the connection is closed quietly.
    Idle,
    /// Part of a request head has arrived: 408, then closed.
    Head,
    /// Between requests for [`REST_AFTER`]: hyper may let go of the connection.
    Rest,
}

/// How long a keep-alive connection waits for its next request before hyper lets go of it.
///
/// Why: hyper keeps a read buffer and a write buffer (8 KiB each, its minimum) for as long as
/// it holds a connection, and cannot shrink them. Measured by the `keep-alive-10k` probe
/// (10,000 connections answered twice, then quiet for 2 s), RSS per connection of the Rust
/// server: 23.5 KiB held by hyper, 6.7 KiB resting (with mimalloc's regions off transparent
/// huge pages, see the workspace's Cargo.toml), 1.7 KiB once the connection's task no longer
/// kept room for hyper's connection (`connection::serve_connection`).
/// Cost: a rested connection's next request builds hyper's connection again, and its buffers
/// come back from the allocator: 10,000 rested connections asked at once took 16–18 CPU-µs per
/// request against 12–15 µs for held ones. A connection asked at least once a second never
/// rests; what it pays is one timer wake a second.
pub(crate) const REST_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// How the first bytes of a connection read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    Http1,
    /// The HTTP/2 connection preface (prior knowledge, as h2c clients and h2spec send it).
    Http2,
    /// A first line in HTTP's words that is no HTTP/1 request line (`HTTP/2.0` in it, a space
    /// too many): answered with this problem, then closed (RFC 9112 §3, RFC 9110 §15.6.6).
    Refused(StatusCode, &'static str),
    /// Neither: a broken preface, or a first line that is not HTTP at all. Closed without an
    /// answer (RFC 9113 §3.4; [`refusal::request_line_refusal`] says why).
    Neither,
    /// The client closed (or timed out) before sending a byte.
    Gone,
}

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

impl GuardedIo {
    pub fn new(stream: TcpStream, state: Arc<ConnState>, limits: Arc<ConnectionLimits>) -> Self {
        let now = Instant::now();
        GuardedIo {
            stream,
            replay: bytes::Bytes::new(),
            state,
            limits,
            http1: true,
            accepted: now,
            last_activity: now,
            head_started: None,
            seen_started: 0,
            timer: None,
            timer_deadline: None,
            send_timer: None,
            send_waiting: false,
            drained: true,
            in_place_of_refusal: None,
        }
    }

    /// Reads the first bytes (under the header deadline) and decides the protocol; the bytes
    /// are kept for hyper.
    ///
    /// Memory: this runs in every connection's task, which is as large as its largest await
    /// point. Reading into a 4 KiB scratch array here made every task 4 KiB bigger for the
    /// connection's whole life, and the kept bytes held a 4 KiB buffer until it closed (see
    /// `poll_read`). Reading straight into a small buffer that is let go once hyper has it:
    /// 10,000 connections to the Rust server, RSS per connection that has sent nothing
    /// 9.8 → 5.5 KiB, per idle keep-alive connection after one request 23.4 → 22.1 KiB. Most
    /// of the rest was hyper's read and header buffers, now let go when it rests
    /// ([`REST_AFTER`]).
    pub async fn sniff(&mut self) -> io::Result<Protocol> {
        use tokio::io::AsyncReadExt;
        // Most request heads arrive whole in it; a longer one is told apart by its start and
        // hyper reads the rest.
        let mut first = Vec::with_capacity(SNIFF_BYTES);
        loop {
            if first.len() == first.capacity() {
                first.reserve(SNIFF_BYTES);
            }
            let n = match self.read_buf(&mut first).await {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::TimedOut => return Ok(Protocol::Gone),
                Err(e) => return Err(e),
            };
            if n == 0 {
                return Ok(if first.is_empty() { Protocol::Gone } else { Protocol::Neither });
            }
            let protocol = classify(&first).or_else(|| (first.len() >= MAX_LEADING_EMPTY_LINE_BYTES).then_some(Protocol::Neither));
            if let Some(protocol) = protocol {
                self.http1 = protocol != Protocol::Http2;
                self.replay = bytes::Bytes::from(first);
                return Ok(protocol);
            }
        }
    }

    /// Forgets the head that was being read once hyper has started its request; returns how
    /// many requests the connection has started.
    fn sync_started(&mut self) -> u64 {
        let started = self.state.started.load(Ordering::Acquire);
        if started != self.seen_started {
            self.seen_started = started;
            self.head_started = None;
        }
        started
    }

    /// The deadline of the current wait, if any. `may_rest`: whether resting is one of them
    /// (not while already resting, nor while a write waits: hyper still holds unsent bytes).
    fn deadline(&mut self, may_rest: bool) -> Option<(Instant, Waiting)> {
        if !self.state.is_idle() || self.state.closing.load(Ordering::Acquire) {
            return None;
        }
        let started = self.sync_started();
        if self.http1 {
            if let Some(first_byte) = self.head_started {
                return self.limits.header_read.map(|limit| (first_byte + limit, Waiting::Head));
            }
            if started == 0 {
                return self.limits.header_read.map(|limit| (self.accepted + limit, Waiting::Idle));
            }
        }
        let keep_alive = self.limits.keep_alive.map(|limit| (self.last_activity + limit, Waiting::Idle));
        if !(self.http1 && may_rest && !self.send_waiting) {
            return keep_alive;
        }
        let rest = (self.last_activity + REST_AFTER, Waiting::Rest);
        Some(keep_alive.filter(|(closes, _)| *closes <= rest.0).unwrap_or(rest))
    }

    /// `Some` once the deadline of the current wait has passed; otherwise arms the timer. A
    /// rest that is due is not returned: it is flagged in [`ConnState::resting`] for the
    /// connection's task, and the next deadline is armed.
    /// `now`: the time, when the caller has just read it.
    fn poll_deadline(&mut self, cx: &mut Context<'_>, mut now: Option<Instant>, mut may_rest: bool) -> Option<Waiting> {
        loop {
            let (deadline, waiting) = self.deadline(may_rest)?;
            if deadline <= *now.get_or_insert_with(Instant::now) {
                if waiting == Waiting::Rest {
                    self.state.resting.store(true, Ordering::Relaxed);
                    may_rest = false;
                    continue;
                }
                return Some(waiting);
            }
            // A timer that fired is seen by the next round: then the clock is read again.
            now = None;
            match (&mut self.timer, self.timer_deadline) {
                (Some(timer), Some(armed)) if armed <= deadline => {
                    if timer.as_mut().poll(cx).is_pending() {
                        return None;
                    }
                    // Fired at an earlier deadline that has since moved: arm the new one.
                    timer.as_mut().reset(deadline);
                    self.timer_deadline = Some(deadline);
                }
                (Some(timer), _) => {
                    timer.as_mut().reset(deadline);
                    self.timer_deadline = Some(deadline);
                }
                (None, _) => {
                    self.timer = Some(Box::pin(tokio::time::sleep_until(deadline)));
                    self.timer_deadline = Some(deadline);
                }
            }
        }
    }

    /// Takes the socket back from a resting hyper connection: `unread` is what hyper had read
    /// and not parsed yet (part of a pipelined head), replayed to the next one.
    pub fn rested(&mut self, unread: bytes::Bytes) {
        if !unread.is_empty() {
            // Part of a head: its deadline runs from now, and it is not waited for again.
            self.head_started = Some(Instant::now());
            self.replay = unread;
        }
    }

    /// Waits, holding no buffer, until the client sends its next request (or closes) after
    /// [`rested`](Self::rested); fails when the keep-alive deadline passes first.
    pub async fn next_request(&mut self) -> io::Result<()> {
        std::future::poll_fn(|cx| {
            if !self.replay.is_empty() {
                return Poll::Ready(Ok(()));
            }
            match self.stream.poll_read_ready(cx) {
                Poll::Pending => match self.poll_deadline(cx, None, false) {
                    Some(waiting) => Poll::Ready(Err(self.on_deadline(waiting))),
                    None => Poll::Pending,
                },
                ready => ready,
            }
        })
        .await
    }

    /// Answers a first line that is no HTTP/1 request line ([`Protocol::Refused`]); the caller
    /// closes the connection.
    pub async fn refuse(&mut self, status: StatusCode, detail: &str) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        if self.write_all(&refusal::closing_problem(status, detail)).await.is_err() || self.shutdown().await.is_err() {
            return;
        }
        // What the client is still sending (the rest of a head longer than the first read) is
        // read and dropped for a moment: closing with it unread would reset the connection,
        // and a reset can destroy the answer before the client has read it. Not when the
        // server wants the connection gone (shutdown, or room for others).
        self.replay = bytes::Bytes::new();
        let state = self.state.clone();
        if state.closing.load(Ordering::Acquire) {
            return;
        }
        let mut scratch = vec![0u8; 4096];
        let drain = async {
            let mut left = LINGER_BYTES;
            while left > 0 {
                match self.stream.read(&mut scratch).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => left = left.saturating_sub(n),
                }
            }
        };
        tokio::select! {
            _ = tokio::time::timeout(LINGER, drain) => {}
            _ = state.close.notified() => {}
        }
    }

    fn on_deadline(&mut self, waiting: Waiting) -> io::Error {
        if waiting == Waiting::Head {
            // hyper writes nothing while a head is being read, so the socket is ours.
            let _ = self.stream.try_write(&refusal::closing_problem(StatusCode::REQUEST_TIMEOUT, "The request was not received in time."));
        }
        self.state.ask_to_close();
        io::Error::new(io::ErrorKind::TimedOut, "the client was too slow sending its request")
    }
}

/// How long, and for how many bytes, a refused connection reads what the client still sends
/// before it closes ([`GuardedIo::refuse`]).
const LINGER: std::time::Duration = std::time::Duration::from_secs(1);
const LINGER_BYTES: usize = 64 * 1024;

/// The first read's buffer: a request head from curl or oha fits in it several times over.
const SNIFF_BYTES: usize = 1024;

/// Empty lines before a request line are skipped (RFC 9112 §2.2), but not forever: a client
/// sending nothing else would otherwise grow the buffer above until the head deadline.
const MAX_LEADING_EMPTY_LINE_BYTES: usize = 8 * 1024;

/// Decides the protocol from the bytes read so far; `None` while undecided.
fn classify(first: &[u8]) -> Option<Protocol> {
    let compared = first.len().min(PREFACE.len());
    if first[..compared] == PREFACE[..compared] {
        return (first.len() >= PREFACE.len()).then_some(Protocol::Http2);
    }
    if first.starts_with(b"PRI * HTTP/2.0") {
        return Some(Protocol::Neither);
    }
    // Servers skip empty lines before a request line (RFC 9112 §2.2).
    let start = first.iter().position(|b| *b != b'\r' && *b != b'\n').unwrap_or(first.len());
    let rest = &first[start..];
    match rest.iter().position(|b| *b == b'\n') {
        Some(end) => {
            let line = rest[..end].strip_suffix(b"\r").unwrap_or(&rest[..end]);
            let version = line.rsplit(|b| *b == b' ').next().unwrap_or(b"");
            if version.starts_with(b"HTTP/1.") {
                return Some(Protocol::Http1);
            }
            Some(refusal::request_line_refusal(line).map_or(Protocol::Neither, |(status, detail)| Protocol::Refused(status, detail)))
        }
        // No whole line yet: hyper reads the rest (and keeps the head deadline).
        None if !rest.is_empty() => Some(Protocol::Http1),
        None => None,
    }
}

impl AsyncRead for GuardedIo {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if !this.replay.is_empty() {
            let n = this.replay.len().min(buf.remaining());
            buf.put_slice(&this.replay[..n]);
            if n == this.replay.len() {
                // An emptied `Bytes` still holds its whole buffer: let it go, not at the close.
                this.replay = bytes::Bytes::new();
            } else {
                bytes::Buf::advance(&mut this.replay, n);
            }
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let now = Instant::now();
                this.last_activity = now;
                if buf.filled().len() > before && this.state.is_idle() {
                    // Bytes while no request is in flight: the next head has begun.
                    this.sync_started();
                    this.head_started.get_or_insert(now);
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            // Shutting down, and no request of this connection has been received: whatever
            // part of a head has arrived is dropped rather than waited for.
            Poll::Pending if this.http1 && this.state.is_idle() && this.state.closing.load(Ordering::Acquire) => {
                Poll::Ready(Ok(()))
            }
            Poll::Pending => match this.poll_deadline(cx, None, true) {
                Some(waiting) => Poll::Ready(Err(this.on_deadline(waiting))),
                None => Poll::Pending,
            },
        }
    }
}

impl GuardedIo {
    /// After a write: the time is noted and, once no request is in flight (hyper wrote the last
    /// response and may not read again until the client sends), the keep-alive timer is armed
    /// here — hyper registered its read interest while the request was still in flight, so no
    /// read would arm it.
    fn wrote(&mut self, cx: &mut Context<'_>) {
        let now = Instant::now();
        self.last_activity = now;
        if self.state.is_idle() {
            // Just written, so the deadline is ahead: this only arms (or keeps) the timer.
            let _ = self.poll_deadline(cx, Some(now), true);
        }
    }
}

impl GuardedIo {
    /// What a write's outcome means for the send deadline: progress ends a wait; a write that
    /// must wait starts one (or keeps the one running) and fails once it has passed.
    fn after_write(&mut self, cx: &mut Context<'_>, result: Poll<io::Result<usize>>, offered: usize) -> Poll<io::Result<usize>> {
        self.drained = matches!(result, Poll::Ready(Ok(n)) if n == offered);
        match result {
            Poll::Ready(Ok(n)) => {
                if n > 0 {
                    self.send_waiting = false;
                    self.wrote(cx);
                }
                Poll::Ready(Ok(n))
            }
            Poll::Pending => {
                let Some(limit) = self.limits.send else { return Poll::Pending };
                if !self.send_waiting {
                    self.send_waiting = true;
                    let deadline = Instant::now() + limit;
                    match &mut self.send_timer {
                        Some(timer) => timer.as_mut().reset(deadline),
                        None => self.send_timer = Some(Box::pin(tokio::time::sleep_until(deadline))),
                    }
                }
                match self.send_timer.as_mut().map(|timer| timer.as_mut().poll(cx)) {
                    Some(Poll::Ready(())) => {
                        self.state.ask_to_close();
                        Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "the client stopped reading its response")))
                    }
                    _ => Poll::Pending,
                }
            }
            other => other,
        }
    }
}

impl GuardedIo {
    /// `Some` when `bytes` are hyper's answer to a head it could not parse: the problem document
    /// of the same status is written instead, and hyper told its bytes went once it has.
    /// `bytes`: the write, when it is one buffer (hyper's answer always is).
    ///
    /// hyper's answer is recognised by its exact shape ([`refusal::hyper_refusal`]) and by when
    /// it comes; all must hold, so that no response a handler made is ever rewritten:
    /// * no request is in flight (a WebSocket session counts as one);
    /// * bytes of a head arrived since the last request started. A handler's response head
    ///   never meets this: its request was counted as started before the handler ran, it stays
    ///   in flight until its response is made, and hyper writes the head in that same poll,
    ///   before it reads again. Every body the core makes with a known length is whole when
    ///   its response is made and goes out with its head, in the same write (two buffers);
    ///   one made over time is in flight until it ends ([`super::streaming::is_streamed`],
    ///   whose doc keeps that rule);
    /// * the last write took all it was given, so these bytes are all hyper buffered since,
    ///   and not the rest of a response that the socket took only part of (or would not take
    ///   at all, when the last write had to wait).
    /// When they do not all hold, hyper's own answer goes out as it is: for a bad head that
    /// arrived before the answer to the request ahead of it (pipelined), as nothing is then
    /// read after that request started (hyper reads on while a request is in flight, to see a
    /// close, but those bytes do not start a head here).
    /// Once the problem is written, hyper writes nothing more (it closes): a write after it,
    /// or other bytes offered while it is being written, fail rather than go out.
    fn poll_instead_of_refusal(&mut self, cx: &mut Context<'_>, bytes: Option<&[u8]>) -> Option<Poll<io::Result<usize>>> {
        if self.in_place_of_refusal.is_none() {
            let status = refusal::hyper_refusal(bytes?)?;
            if !self.drained || !self.state.is_idle() {
                return None;
            }
            self.sync_started();
            self.head_started?;
            self.in_place_of_refusal = Some(Box::new(InPlaceOfRefusal { status, problem: refusal::parse_problem(status), sent: 0 }));
        }
        let mut ours = self.in_place_of_refusal.take()?;
        // hyper offers its answer again until it is told the answer went.
        let offered = bytes.filter(|bytes| ours.sent < ours.problem.len() && refusal::hyper_refusal(bytes) == Some(ours.status));
        let result = match offered {
            None => Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, "nothing is written after the answer to an unparsable head"))),
            Some(bytes) => loop {
                let result = Pin::new(&mut self.stream).poll_write(cx, &ours.problem[ours.sent..]);
                match self.after_write(cx, result, ours.problem.len() - ours.sent) {
                    Poll::Ready(Ok(0)) => break Poll::Ready(Ok(0)),
                    Poll::Ready(Ok(n)) => {
                        ours.sent += n;
                        if ours.sent == ours.problem.len() {
                            break Poll::Ready(Ok(bytes.len()));
                        }
                    }
                    other => break other,
                }
            },
        };
        self.in_place_of_refusal = Some(ours);
        Some(result)
    }
}

impl AsyncWrite for GuardedIo {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.http1 && (this.in_place_of_refusal.is_some() || refusal::may_be_hyper_refusal(data.len())) {
            if let Some(result) = this.poll_instead_of_refusal(cx, Some(data)) {
                return result;
            }
        }
        let result = Pin::new(&mut this.stream).poll_write(cx, data);
        this.after_write(cx, result, data.len())
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        // hyper's answer to an unparsable head is its head buffer alone.
        let only = match data {
            [only] if refusal::may_be_hyper_refusal(only.len()) => Some(&only[..]),
            _ => None,
        };
        if this.http1 && (only.is_some() || this.in_place_of_refusal.is_some()) {
            if let Some(result) = this.poll_instead_of_refusal(cx, only) {
                return result;
            }
        }
        let result = Pin::new(&mut this.stream).poll_write_vectored(cx, data);
        let offered = data.iter().map(|slice| slice.len()).sum();
        this.after_write(cx, result, offered)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const HYPERS_ANSWER: &[u8] = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\ndate: Thu, 03 Dec 2026 15:21:51 GMT\r\n\r\n";

    /// Runs `test` with a guarded socket that has read a bad head from its client, as hyper
    /// would before answering it, and the client's end.
    fn with_a_bad_head_read<F: Future<Output = ()>>(test: impl FnOnce(GuardedIo, Arc<ConnState>, TcpStream) -> F) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let mut client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
            let (server, _) = listener.accept().await.unwrap();
            let state = Arc::new(ConnState::default());
            let limits = Arc::new(ConnectionLimits::from_config(&crate::AppConfig::default()));
            let mut io = GuardedIo::new(server, state.clone(), limits);
            const BAD_HEAD: &[u8] = b"GET / HTTP/1.1\r\nbad name: x\r\n\r\n";
            client.write_all(BAD_HEAD).await.unwrap();
            io.read_exact(&mut [0u8; BAD_HEAD.len()]).await.unwrap();
            test(io, state, client).await;
        });
    }

    /// Writes hyper's answer on `io`, closes it, and returns what the client received.
    async fn received_for_hypers_answer(mut io: GuardedIo, mut client: TcpStream) -> Vec<u8> {
        assert_eq!(io.write(HYPERS_ANSWER).await.unwrap(), HYPERS_ANSWER.len(), "hyper is told its bytes went");
        drop(io);
        let mut received = Vec::new();
        client.read_to_end(&mut received).await.unwrap();
        received
    }

    #[test]
    fn hypers_answer_to_a_head_it_read_goes_out_as_a_problem_and_nothing_after_it() {
        with_a_bad_head_read(|mut io, _, mut client| async move {
            assert_eq!(io.write(HYPERS_ANSWER).await.unwrap(), HYPERS_ANSWER.len());
            let after = io.write(b"more").await.expect_err("nothing goes out after the problem");
            assert_eq!(after.kind(), io::ErrorKind::BrokenPipe);
            drop(io);
            let mut received = Vec::new();
            client.read_to_end(&mut received).await.unwrap();
            assert_eq!(received, refusal::parse_problem(StatusCode::BAD_REQUEST));
        });
    }

    #[test]
    fn the_same_bytes_go_out_as_they_are_while_a_request_is_in_flight() {
        with_a_bad_head_read(|io, state, client| async move {
            state.in_flight.store(1, Ordering::Release);
            assert_eq!(received_for_hypers_answer(io, client).await, HYPERS_ANSWER);
        });
    }

    #[test]
    fn the_same_bytes_go_out_as_they_are_when_a_request_started_after_the_head_was_read() {
        with_a_bad_head_read(|io, state, client| async move {
            // What a handler's response to the request read sees.
            state.started.store(1, Ordering::Release);
            assert_eq!(received_for_hypers_answer(io, client).await, HYPERS_ANSWER);
        });
    }

    #[test]
    fn the_same_bytes_go_out_as_they_are_after_a_write_the_socket_took_only_part_of() {
        with_a_bad_head_read(|mut io, _, client| async move {
            io.drained = false;
            assert_eq!(received_for_hypers_answer(io, client).await, HYPERS_ANSWER);
        });
    }

    #[test]
    fn the_first_bytes_tell_the_protocol() {
        assert_eq!(classify(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"), Some(Protocol::Http1));
        assert_eq!(classify(b"\r\nGET / HTTP/1.0\r\n"), Some(Protocol::Http1));
        assert_eq!(classify(b"GET /very/long"), Some(Protocol::Http1), "an unfinished line is hyper's to read");
        assert_eq!(classify(PREFACE), Some(Protocol::Http2));
        assert_eq!(classify(&PREFACE[..10]), None, "a partial preface waits for more");
        assert_eq!(classify(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n"), Some(Protocol::Neither));
        assert_eq!(classify(b"INVALID CONNECTION PREFACE\r\n\r\n"), Some(Protocol::Neither));
        assert!(matches!(classify(b"GET / HTTP/2.0\r\n"), Some(Protocol::Refused(StatusCode::HTTP_VERSION_NOT_SUPPORTED, _))));
        assert!(matches!(classify(b"GET / HTTP/1.1 \r\n"), Some(Protocol::Refused(StatusCode::BAD_REQUEST, _))));
        assert_eq!(classify(b"GET /\r\n"), Some(Protocol::Neither), "HTTP/0.9 is not served");
        assert_eq!(classify(b"\r\n"), None);
    }
}
