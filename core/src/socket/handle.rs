//! One WebSocket as its handler holds it: what arrived, waiting to be taken, and what the handler
//! sent, waiting to be written. The connection's task ([`super::session`]) is on the other side.
//!
//! Both queues are bounded. Arrivals: the connection stops reading once a batch's worth waits
//! untaken ([`crate::stream::batch`]'s 64 messages or 64 KiB, plus the message being read), so a
//! client that sends faster than its handler takes is held back by TCP, not by memory. Sends
//! never wait — Node and Ruby handlers cannot — so when more than `ws_send_buffer_bytes` waits
//! behind a write the client has not taken yet, the connection is closed with 1008 and the
//! queue dropped. What waits while the connection is not stuck writing is not counted against
//! the client: the connection takes it at once, a message larger than the limit included.

use super::{Closed, Message, UnsendableClose};
use crate::stream::batch::{MAX_BYTES, MAX_ITEMS};
use bytes::Bytes;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use tokio::sync::Notify;

/// A WebSocket. Cheap to clone; every clone is the same connection.
#[derive(Clone)]
pub struct Socket {
    shared: Arc<Shared>,
}

/// What [`Socket::take`] found: the messages in order, then the end once the connection closed.
#[derive(Debug, Default)]
pub struct Taken {
    pub messages: Vec<Message>,
    pub end: Option<Closed>,
    /// The payloads of the pongs the client sent since the last take (the answers to
    /// [`Socket::ping`], by which a handler tells a live client from a gone one, as `ws`'s
    /// heartbeat does). At most [`MAX_PONGS`] are kept between takes; more are dropped.
    pub pongs: Vec<Bytes>,
}

/// Pongs kept between two takes: a client may send them unasked, and they must not grow memory.
pub const MAX_PONGS: usize = 16;

/// The socket is closed (or closing): nothing more can be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketClosed;

impl std::fmt::Display for SocketClosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the WebSocket is closed")
    }
}

impl std::error::Error for SocketClosed {}

pub(super) enum Outgoing {
    Message(Message),
    Ping(Bytes),
}

impl Outgoing {
    fn len(&self) -> usize {
        match self {
            Outgoing::Message(message) => message.len(),
            Outgoing::Ping(data) => data.len(),
        }
    }
}

struct Shared {
    id: u64,
    subprotocol: Option<String>,
    arrivals: Mutex<Arrivals>,
    sends: Mutex<Sends>,
    send_limit: usize,
    /// For the connection's task: something to send, a close asked, or room to read again.
    to_session: Notify,
    /// For [`Socket::recv`]: a message or the end arrived.
    arrived: Notify,
    /// How a binding is told that a [`Socket::take`] which found nothing would now find more.
    wake: OnceLock<Box<dyn Fn(u64) + Send + Sync>>,
}

#[derive(Default)]
struct Arrivals {
    queue: VecDeque<Message>,
    bytes: usize,
    /// A `take` found nothing: the next arrival (or the end) wakes the binding.
    waiting: bool,
    end: Option<Closed>,
    pongs: Vec<Bytes>,
}

#[derive(Default)]
struct Sends {
    queue: VecDeque<Outgoing>,
    bytes: usize,
    /// The connection took a batch and is writing it: what is queued now waits for the client.
    writing: bool,
    /// The close to send (asked by the handler, or forced): nothing is queued after it.
    close: Option<Closed>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section is a queue push, pop or swap: a poisoned lock still holds valid data.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Socket {
    pub(super) fn new(subprotocol: Option<String>, send_limit: usize) -> Socket {
        let shared = Shared {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            subprotocol,
            arrivals: Mutex::default(),
            sends: Mutex::default(),
            send_limit,
            to_session: Notify::new(),
            arrived: Notify::new(),
            wake: OnceLock::new(),
        };
        Socket { shared: Arc::new(shared) }
    }

    /// Unique in this process; a binding files its own object for the socket under it.
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// The subprotocol chosen in the handshake.
    pub fn subprotocol(&self) -> Option<&str> {
        self.shared.subprotocol.as_deref()
    }

    /// For bindings: `wake(id)` is called (on a runtime thread) whenever a [`Socket::take`]
    /// that found nothing would now find a message or the end. Set once.
    pub fn on_arrival(&self, wake: Box<dyn Fn(u64) + Send + Sync>) {
        let _ = self.shared.wake.set(wake);
    }

    /// Everything that arrived since the last take, in one crossing; with nothing there, the
    /// next arrival wakes the binding ([`Socket::on_arrival`]).
    pub fn take(&self) -> Taken {
        let mut arrivals = lock(&self.shared.arrivals);
        let messages: Vec<Message> = arrivals.queue.drain(..).collect();
        arrivals.bytes = 0;
        let end = arrivals.end.clone();
        let pongs = std::mem::take(&mut arrivals.pongs);
        // Pongs alone leave the take waiting: a binding that does not read them (Python,
        // Ruby) takes nothing here and waits for the next wake, which must still come.
        arrivals.waiting = messages.is_empty() && end.is_none();
        drop(arrivals);
        if !messages.is_empty() {
            self.shared.to_session.notify_one();
        }
        Taken { messages, end, pongs }
    }

    /// The next message; `None` once the connection has closed ([`Socket::closed`] says how).
    pub async fn recv(&self) -> Option<Message> {
        loop {
            let arrived = self.shared.arrived.notified();
            {
                let mut arrivals = lock(&self.shared.arrivals);
                if let Some(message) = arrivals.queue.pop_front() {
                    arrivals.bytes -= message.len();
                    drop(arrivals);
                    self.shared.to_session.notify_one();
                    return Some(message);
                }
                if arrivals.end.is_some() {
                    return None;
                }
            }
            arrived.await;
        }
    }

    /// How the connection ended, once it has.
    pub fn closed(&self) -> Option<Closed> {
        lock(&self.shared.arrivals).end.clone()
    }

    /// How the connection ended, or is ending: its end once the connection has seen it, else
    /// the close being sent (the handler's own, or the core's 1008 for a client that does not
    /// read), which a send refused meanwhile reports.
    pub fn closing(&self) -> Option<Closed> {
        self.closed().or_else(|| lock(&self.shared.sends).close.clone())
    }

    /// Queues a message for the client. Never waits: when more than `ws_send_buffer_bytes`
    /// already waits behind a write the client has not taken, the connection is closed with
    /// 1008 instead.
    pub fn send(&self, message: Message) -> Result<(), SocketClosed> {
        self.queue(Outgoing::Message(message))
    }

    pub fn ping(&self, data: Bytes) -> Result<(), SocketClosed> {
        self.queue(Outgoing::Ping(data))
    }

    /// Bytes queued for the client and not yet written to its connection.
    pub fn buffered(&self) -> usize {
        lock(&self.shared.sends).bytes
    }

    /// Starts the closing handshake with `code` (sent after what is queued); the first close
    /// asked is the one sent. A code a server may not send, or a reason too long for a close
    /// frame, is refused (see [`Closed::sendable`]) and nothing is sent.
    /// Any integer type is taken (a `u16` in Rust, a binding's `i64`), so that one out of
    /// range is refused by the same rule.
    pub fn close(&self, code: impl Into<i64>, reason: &str) -> Result<(), UnsendableClose> {
        self.close_with(Closed::sendable(code.into(), reason)?);
        Ok(())
    }

    /// Closes for the core or a binding with a close of its own (1001 at shutdown, 1011 for a
    /// handler that failed), which needs no checking.
    pub fn close_with(&self, closed: Closed) {
        let mut sends = lock(&self.shared.sends);
        if sends.close.is_none() {
            sends.close = Some(closed);
            drop(sends);
            self.shared.to_session.notify_one();
        }
    }

    fn queue(&self, outgoing: Outgoing) -> Result<(), SocketClosed> {
        let mut sends = lock(&self.shared.sends);
        if sends.close.is_some() {
            return Err(SocketClosed);
        }
        // Counted against the client only behind a write it has not taken: a message queued
        // while the connection is free goes out at once, whatever its size. Counting every
        // queued byte closed the connection on any message over the limit before a byte of it
        // was sent, and on a burst a reading client had had no time to take (found by a probe:
        // the README's chat room could not relay a 2 MiB message its own limit let in).
        if sends.writing && sends.bytes > self.shared.send_limit {
            sends.queue.clear();
            sends.bytes = 0;
            sends.close = Some(Closed::new(1008, "send buffer full: the client does not read"));
            drop(sends);
            tracing::warn!(target: "ferrule::socket", "a WebSocket client read too slowly: closed with 1008");
            self.shared.to_session.notify_one();
            return Ok(());
        }
        sends.bytes += outgoing.len();
        sends.queue.push_back(outgoing);
        drop(sends);
        self.shared.to_session.notify_one();
        Ok(())
    }

    // The connection's side.

    pub(super) async fn session_notified(&self) {
        self.shared.to_session.notified().await
    }

    /// What to write now, and the close to send after it.
    pub(super) fn take_sends(&self, into: &mut Vec<Outgoing>) -> Option<Closed> {
        let mut sends = lock(&self.shared.sends);
        into.extend(sends.queue.drain(..));
        sends.bytes = 0;
        // The connection comes back here once it has written what it took.
        sends.writing = !into.is_empty();
        sends.close.clone()
    }

    /// Whether another message may be read from the client now.
    pub(super) fn has_room(&self) -> bool {
        let arrivals = lock(&self.shared.arrivals);
        arrivals.queue.len() < MAX_ITEMS && arrivals.bytes < MAX_BYTES
    }

    pub(super) fn arrive(&self, message: Message) {
        let mut arrivals = lock(&self.shared.arrivals);
        arrivals.bytes += message.len();
        arrivals.queue.push_back(message);
        self.announce(arrivals);
    }

    /// A pong from the client: the binding's next take finds it (and is woken for it).
    pub(super) fn pong_arrived(&self, data: Bytes) {
        let mut arrivals = lock(&self.shared.arrivals);
        if arrivals.pongs.len() < MAX_PONGS {
            arrivals.pongs.push(data);
            self.announce(arrivals);
        }
    }

    /// The connection is over: the handler's next take (or recv) finds the end, and sends fail.
    pub(super) fn end(&self, closed: Closed) {
        self.close_with(closed.clone());
        let mut arrivals = lock(&self.shared.arrivals);
        if arrivals.end.is_none() {
            arrivals.end = Some(closed);
            self.announce(arrivals);
        }
    }

    fn announce(&self, mut arrivals: MutexGuard<'_, Arrivals>) {
        let wake = std::mem::take(&mut arrivals.waiting);
        drop(arrivals);
        self.shared.arrived.notify_one();
        if wake {
            if let Some(wake) = self.shared.wake.get() {
                wake(self.shared.id);
            }
        }
    }
}

impl std::fmt::Debug for Socket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Socket").field("id", &self.shared.id).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn a_take_that_found_nothing_is_woken_once_by_the_next_arrival() {
        let socket = Socket::new(None, 1024);
        let wakes = Arc::new(AtomicUsize::new(0));
        let counted = wakes.clone();
        socket.on_arrival(Box::new(move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
        }));
        assert!(socket.take().messages.is_empty());
        socket.arrive(Message::Text("a".into()));
        socket.arrive(Message::Text("b".into()));
        assert_eq!(wakes.load(Ordering::SeqCst), 1, "one wake per wait, not per message");
        assert_eq!(socket.take().messages.len(), 2, "both in one crossing");
        socket.arrive(Message::Text("c".into()));
        assert_eq!(wakes.load(Ordering::SeqCst), 1, "a take that found messages does not wait");
        socket.end(Closed::new(1000, ""));
        let last = socket.take();
        assert_eq!((last.messages.len(), last.end.map(|c| c.code)), (1, Some(1000)));
    }

    #[test]
    fn pongs_wake_a_waiting_take_and_are_bounded_between_takes() {
        let socket = Socket::new(None, 1024);
        let wakes = Arc::new(AtomicUsize::new(0));
        let counted = wakes.clone();
        socket.on_arrival(Box::new(move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
        }));
        assert!(socket.take().pongs.is_empty());
        for _ in 0..MAX_PONGS + 5 {
            socket.pong_arrived(Bytes::from_static(b"p"));
        }
        assert_eq!(wakes.load(Ordering::SeqCst), 1, "a waiting take is woken once");
        let taken = socket.take();
        assert_eq!((taken.pongs.len(), taken.messages.len()), (MAX_PONGS, 0), "the rest are dropped");
        // A take that found pongs alone still waits: a binding that does not read them must
        // be woken by the next message (found on review: Python's and Ruby's sockets hung).
        socket.arrive(Message::Text("after".into()));
        assert_eq!(wakes.load(Ordering::SeqCst), 2, "the message after the pongs wakes the binding");
        assert!(socket.take().pongs.is_empty());
    }

    #[test]
    fn sends_past_the_buffer_limit_behind_a_write_close_the_socket_and_drop_the_queue() {
        let socket = Socket::new(None, 10);
        // Nothing waits for the client yet: a message over the limit, and a burst, are queued
        // (each closed the socket with 1008 before: found by a probe).
        socket.send(Message::Binary(Bytes::from(vec![b'x'; 20]))).unwrap();
        socket.send(Message::Binary(Bytes::from_static(b"12345678"))).unwrap();
        assert_eq!(socket.buffered(), 28);
        let mut out = Vec::new();
        assert_eq!(socket.take_sends(&mut out), None, "the connection takes them to write");
        assert_eq!(out.len(), 2);
        // While that write waits for the client, up to the limit may wait behind it...
        socket.send(Message::Binary(Bytes::from_static(b"12345678"))).unwrap();
        socket.send(Message::Binary(Bytes::from_static(b"9ab"))).unwrap();
        assert_eq!(socket.buffered(), 11);
        // ...and past it the client is that far behind: 1008, and the queue dropped.
        socket.send(Message::Binary(Bytes::from_static(b"c"))).unwrap();
        assert_eq!(socket.buffered(), 0, "the queue is dropped");
        let mut after = Vec::new();
        assert_eq!(socket.take_sends(&mut after).map(|c| c.code), Some(1008));
        assert!(after.is_empty());
        assert_eq!(socket.send(Message::Text("late".into())), Err(SocketClosed));
        assert_eq!(socket.closing().map(|c| c.code), Some(1008), "what a refused send reports");
    }

    #[test]
    fn a_connection_back_from_its_write_takes_a_new_burst_without_counting_it() {
        let socket = Socket::new(None, 10);
        let mut out = Vec::new();
        socket.send(Message::Binary(Bytes::from_static(b"12345678"))).unwrap();
        socket.take_sends(&mut out);
        out.clear();
        // Written: the connection comes back and finds nothing.
        assert_eq!(socket.take_sends(&mut out), None);
        for _ in 0..5 {
            socket.send(Message::Binary(Bytes::from_static(b"12345678"))).unwrap();
        }
        assert_eq!(socket.take_sends(&mut out), None);
        assert_eq!(out.len(), 5);
    }

    // Found by a README walk: close(1005) was sent as 1000 and a long reason cut short,
    // where `ws` and `websockets` refuse both; the handler never learnt of its mistake.
    #[test]
    fn a_close_no_server_may_send_is_refused_and_leaves_the_socket_open() {
        let socket = Socket::new(None, 1024);
        for code in [999_i64, 1004, 1005, 1006, 1015, 2999, 5000, -1, 70_000] {
            assert_eq!(socket.close(code, ""), Err(UnsendableClose::Code(code)));
        }
        let long = "é".repeat(62); // 124 bytes
        assert_eq!(socket.close(1000, &long), Err(UnsendableClose::ReasonTooLong(124)));
        assert_eq!(UnsendableClose::Code(1005).to_string(), "1005 is not a close code a server may send (1000-1003, 1007-1014, 3000-4999)");
        socket.send(Message::Text("still open".into())).unwrap();
        assert_eq!(socket.close(4000, &long[..122]), Ok(()));
        let mut out = Vec::new();
        let sent = socket.take_sends(&mut out);
        assert_eq!((out.len(), sent.map(|c| (c.code, c.reason.len()))), (1, Some((4000, 122))));
    }

    #[test]
    fn reading_stops_once_a_batch_waits_untaken() {
        let socket = Socket::new(None, 1024);
        for _ in 0..MAX_ITEMS {
            assert!(socket.has_room());
            socket.arrive(Message::Text("x".into()));
        }
        assert!(!socket.has_room());
        socket.take();
        assert!(socket.has_room());
    }
}
