//! Handing requests from the runtime's threads to an interpreter thread.
//!
//! Python and Ruby run handler code on a thread of their own that holds the interpreter lock
//! only while it runs. The runtime's threads never touch that lock: they [`post`] a job here and
//! await a reply channel. The interpreter thread collects every waiting job at once, so under
//! load one wake-up and one lock acquisition serve a whole batch of requests.
//!
//! Waking a thread costs far more than a request (a context switch each way on a busy core),
//! so both directions are batched: a handler queues its job with [`Mailbox::post_deferred`],
//! lets the runtime run every other ready task, and only then calls [`Mailbox::wake`], which
//! rings once for everything queued meanwhile; results travel back through one
//! [`ReplyBatch`], delivered by a single task inside the runtime.
//!
//! A served app's mailbox waits longer still ([`Mailbox::rung_when_idle`]): its runtime rings
//! when a worker runs out of work and is about to sleep, so the interpreter gets everything the
//! runtime read meanwhile in one batch, not the part one poll of the sockets found. "Every
//! other ready task" is not "every request that has arrived": the interpreter's thread, woken
//! after the first poll, preempts the runtime on a shared core and takes about nine of fifty
//! requests, and the other forty-one cost further switches. Measured on path-simple (Node,
//! server pinned to one core, 50 connections, 8 s of oha): 9.28 → 8.37 CPU-µs a request,
//! context switches 0.187 → 0.072 a request, 106k → 117k requests/s; with 16 connections
//! 10.66 → 9.59 µs, with one no change; Python 7.89 → 7.60, Ruby 11.89 → 11.56. Two bounds keep
//! the wait short when the runtime never sleeps: [`BURST`] waiting jobs ring at once, and a job
//! left unrung for at most [`STALL`] (a runtime kept busy by requests the core answers alone)
//! rings then.
//!
//! Three ways to be told, one per kind of consumer:
//! * threads that block ([`Mailbox::wait_for`]) with the interpreter lock released (Ruby's
//!   workers, and an in-process caller waiting for its own answer);
//! * an event loop that watches a file descriptor ([`Mailbox::with_doorbell`]): an `eventfd`
//!   that becomes readable when jobs arrive (Python's asyncio `add_reader`);
//! * an event loop that is woken by a callback ([`Mailbox::with_waker`]): Node's, through a
//!   libuv async handle that calls JavaScript on its thread.
//!
//! A mailbox also bounds how many requests wait for its interpreter ([`Mailbox::set_queue_limit`],
//! the app's `max_queued_requests`): a request beyond it is answered 503 at once instead of
//! joining a backlog that would only grow. A request whose handler deadline passes while it
//! waits is abandoned: its reply channel closes ([`is_abandoned`]) and the interpreter skips it
//! instead of running a handler nobody waits for — so five overruns of a blocking handler cost
//! one handler run, not five in a row.
//!
//! [`post`]: Mailbox::post

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use crate::{App, HandlerError, HandlerFuture, Response, ShutdownError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Jobs waiting that ring a mailbox [`rung_when_idle`](Mailbox::rung_when_idle) without waiting
/// for the runtime to go idle: a burst big enough to start on while the runtime reads more.
pub const BURST: usize = 64;

/// How long a job of a served app waits at most for an idle runtime to ring for it. Its watch is
/// one timer, armed once a batch and left to run out (a batch queued while it runs is rung when
/// it runs out, possibly early): at 1 ms it woke an idle runtime a thousand times a
/// second, +6 to +12 CPU-µs a request with one connection; at 10 ms nothing measurable.
pub const STALL: std::time::Duration = std::time::Duration::from_millis(10);

/// How [`Mailbox::wait_for`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// Jobs were moved out.
    Jobs,
    /// The interpreter interrupted the wait (a signal, a thread being killed).
    Interrupted,
    /// The mailbox is closed and empty: the consumer is done.
    Closed,
}

/// A queue of jobs for one consumer thread, with batched wake-ups.
pub struct Mailbox<J> {
    state: Mutex<State<J>>,
    arrived: Condvar,
    doorbell: Option<OwnedFd>,
    waker: Option<Box<dyn Fn() + Send + Sync>>,
    admission: Arc<Admission>,
    /// Set once the runtime rings when it goes idle ([`Mailbox::rung_when_idle`]).
    idle_rings: AtomicBool,
    /// Told when a job starts waiting for an idle runtime; its watcher rings after the stall.
    stalling: tokio::sync::Notify,
}

/// Requests handed over and not yet answered (or given up), against the limit.
struct Admission {
    outstanding: AtomicUsize,
    limit: AtomicUsize,
    /// Every request admitted since the start: the interpreter's entries for requests.
    admitted: AtomicU64,
}

/// One admitted request; leaving (answered, timed out, client gone) makes room for another.
struct Admitted(Arc<Admission>);

impl Drop for Admitted {
    fn drop(&mut self) {
        self.0.outstanding.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Admission {
    fn admit(self: &Arc<Self>) -> Option<Admitted> {
        let limit = self.limit.load(Ordering::Relaxed);
        let before = self.outstanding.fetch_add(1, Ordering::AcqRel);
        let admitted = Admitted(self.clone());
        let within = before < limit;
        if within {
            self.admitted.fetch_add(1, Ordering::Relaxed);
        }
        within.then_some(admitted)
    }
}

struct State<J> {
    jobs: VecDeque<J>,
    closed: bool,
    /// The consumer has been told (condvar or doorbell) and has not collected yet: further
    /// posts need not tell it again.
    notified: bool,
    /// A job waits unrung for an idle runtime and the stall watcher has been told.
    watched: bool,
}

impl<J> Default for Mailbox<J> {
    fn default() -> Self {
        Mailbox::new()
    }
}

impl<J> Mailbox<J> {
    /// A mailbox whose consumers block in [`Mailbox::wait_for`].
    pub fn new() -> Self {
        Mailbox {
            state: Mutex::new(State { jobs: VecDeque::new(), closed: false, notified: false, watched: false }),
            arrived: Condvar::new(),
            doorbell: None,
            waker: None,
            admission: Arc::new(Admission { outstanding: AtomicUsize::new(0), limit: AtomicUsize::new(usize::MAX), admitted: AtomicU64::new(0) }),
            idle_rings: AtomicBool::new(false),
            stalling: tokio::sync::Notify::new(),
        }
    }

    /// How many requests handed over through [`hand_over`] wait for or run in this mailbox's
    /// interpreter now.
    pub fn waiting(&self) -> usize {
        self.admission.outstanding.load(Ordering::Relaxed)
    }

    /// How many requests [`hand_over`] has handed to this mailbox's interpreter since it was
    /// made (those refused at the queue limit not counted).
    pub fn handed_over(&self) -> u64 {
        self.admission.admitted.load(Ordering::Relaxed)
    }

    /// At most `limit` requests handed over through [`hand_over`] wait for or run in this
    /// mailbox's interpreter at once; more are answered 503.
    pub fn set_queue_limit(&self, limit: usize) {
        self.admission.limit.store(limit.max(1), Ordering::Relaxed);
    }

    /// A mailbox whose consumer is woken by calling `wake` (once per batch); it then collects
    /// with [`Mailbox::take_all`].
    pub fn with_waker(wake: impl Fn() + Send + Sync + 'static) -> Self {
        Mailbox { waker: Some(Box::new(wake)), ..Mailbox::new() }
    }

    /// A mailbox whose consumer is an event loop watching [`Mailbox::doorbell_fd`].
    pub fn with_doorbell() -> std::io::Result<Self> {
        Ok(Mailbox { doorbell: Some(eventfd()?), ..Mailbox::new() })
    }

    /// Readable whenever jobs are waiting (only for [`Mailbox::with_doorbell`] mailboxes).
    pub fn doorbell_fd(&self) -> Option<RawFd> {
        self.doorbell.as_ref().map(AsRawFd::as_raw_fd)
    }

    fn lock(&self) -> MutexGuard<'_, State<J>> {
        // A panic while holding this lock cannot leave the queue inconsistent (every critical
        // section is a plain push/drain), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Queues a job without waking the consumer; follow it with [`Mailbox::wake`] once the
    /// current burst of work is queued (a handler yields to the runtime in between). Gives the
    /// job back when the mailbox is closed.
    pub fn post_deferred(&self, job: J) -> Result<(), J> {
        let mut state = self.lock();
        if state.closed {
            return Err(job);
        }
        state.jobs.push_back(job);
        Ok(())
    }

    /// Hands the ringing of [`hand_over`]'s jobs to the runtime that serves them: the caller
    /// must call the first function each time one of its workers is about to sleep
    /// (`on_thread_park`) and run the future (it never ends) inside it, or jobs below a burst
    /// would never ring. A job then rings when the runtime goes idle, when [`BURST`] jobs wait,
    /// or within `stall` ([`STALL`] for a served app), whichever comes first.
    pub(crate) fn rung_when_idle(self: &Arc<Self>, stall: std::time::Duration) -> (impl Fn() + Send + Sync + 'static, impl std::future::Future<Output = ()> + Send + 'static)
    where
        J: Send + 'static,
    {
        self.idle_rings.store(true, Ordering::Relaxed);
        let (on_park, watched) = (self.clone(), self.clone());
        let watch = async move {
            loop {
                watched.stalling.notified().await;
                tokio::time::sleep(stall).await;
                watched.wake();
            }
        };
        (move || on_park.wake(), watch)
    }

    /// After a job is queued ([`hand_over`]): rings now unless the runtime rings when it goes
    /// idle and fewer than [`BURST`] jobs wait; then the stall watcher is told, once a batch.
    async fn nudge(&self) {
        if !self.idle_rings.load(Ordering::Relaxed) {
            tokio::task::yield_now().await;
            return self.wake();
        }
        self.ring_when_idle();
    }

    /// Rings if [`BURST`] jobs wait; else leaves the ring to the runtime going idle, and tells
    /// the stall watcher, once a batch.
    fn ring_when_idle(&self) {
        let (ring, watch) = {
            let mut state = self.lock();
            if state.notified || state.jobs.is_empty() {
                (false, false)
            } else if state.jobs.len() >= BURST {
                state.notified = true;
                (true, false)
            } else {
                (false, !std::mem::replace(&mut state.watched, true))
            }
        };
        if ring {
            self.ring();
        } else if watch {
            self.stalling.notify_one();
        }
    }

    /// Tells the consumer about waiting jobs, unless it has been told already.
    pub fn wake(&self) {
        let ring = {
            let mut state = self.lock();
            !state.jobs.is_empty() && !std::mem::replace(&mut state.notified, true)
        };
        if ring {
            self.ring();
        }
    }

    fn ring(&self) {
        match (&self.doorbell, &self.waker) {
            (Some(fd), _) => ring(fd),
            (None, Some(wake)) => wake(),
            (None, None) => self.arrived.notify_one(),
        }
    }

    /// Queues a job posted on one of the runtime's threads that nothing awaits (a WebSocket's
    /// arrival), rung as [`hand_over`]'s jobs are: when the runtime goes idle, at a [`BURST`],
    /// or after the [`STALL`]; at once when the runtime does not ring ([`Mailbox::post`]).
    ///
    /// Rung at once, a WebSocket echo (`ws-echo-small`: 50 connections, 32-byte messages,
    /// server on one core) woke the interpreter's thread for every 1.3 messages, and the
    /// runtime's thread as often: 1.5 context switches a message. Rung when idle: 0.45, and
    /// CPU-µs a message Node 10.1–10.2 → 8.1–8.2 (Fastify 7.8–8.0), Python 10.9 → 8.8–9.1,
    /// Ruby 9.8–9.9 → 9.3–9.5; `ws-echo-1k` on Node 11.5 → 9.1 (Fastify 8.9).
    pub fn post_from_runtime(&self, job: J) -> Result<(), J> {
        if !self.idle_rings.load(Ordering::Relaxed) {
            return self.post(job);
        }
        self.post_deferred(job)?;
        self.ring_when_idle();
        Ok(())
    }

    /// Queues a job and wakes the consumer if needed; gives it back when the mailbox is closed.
    pub fn post(&self, job: J) -> Result<(), J> {
        let ring = {
            let mut state = self.lock();
            if state.closed {
                return Err(job);
            }
            state.jobs.push_back(job);
            !std::mem::replace(&mut state.notified, true)
        };
        if ring {
            self.ring();
        }
        Ok(())
    }

    /// Moves every waiting job into `into` without blocking (the doorbell consumer's side).
    pub fn take_all(&self, into: &mut Vec<J>) {
        if let Some(fd) = &self.doorbell {
            clear_doorbell(fd);
        }
        let mut state = self.lock();
        state.notified = false;
        state.watched = false;
        into.extend(state.jobs.drain(..));
    }

    /// Blocks until jobs arrive (taking at most `max` of them, so that several consumer
    /// threads can share a burst), the mailbox is closed and empty, or `interrupted` is set
    /// and [`Mailbox::interrupt_waiters`] called — how an interpreter asks a thread that waits
    /// without its lock to come back (Ruby's unblocking function).
    pub fn wait_for(&self, into: &mut Vec<J>, max: usize, interrupted: &AtomicBool) -> Waited {
        let mut state = self.lock();
        loop {
            if !state.jobs.is_empty() {
                let n = state.jobs.len().min(max.max(1));
                into.extend(state.jobs.drain(..n));
                if state.jobs.is_empty() {
                    state.notified = false;
                    state.watched = false;
                } else {
                    // More than this consumer takes: another waiting one gets the rest.
                    self.arrived.notify_one();
                }
                return Waited::Jobs;
            }
            if state.closed {
                return Waited::Closed;
            }
            if interrupted.load(Ordering::Acquire) {
                return Waited::Interrupted;
            }
            state.notified = false;
            state = self.arrived.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// Wakes every consumer blocked in [`Mailbox::wait_for`] so it sees its `interrupted` flag.
    pub fn interrupt_waiters(&self) {
        let _state = self.lock();
        self.arrived.notify_all();
    }

    /// Tells the consumer to look, whether jobs wait or not: every kind of consumer is told
    /// the way it is told of jobs (condvar, doorbell, callback). An in-process caller's answer
    /// arriving is news to a consumer that has no job to show for it.
    pub fn poke(&self) {
        self.interrupt_waiters();
        if self.doorbell.is_some() || self.waker.is_some() {
            self.ring();
        }
    }

    /// Refuses new jobs and wakes the consumer; jobs already queued are still handed out.
    pub fn close(&self) {
        self.lock().closed = true;
        self.arrived.notify_all();
        if self.doorbell.is_some() || self.waker.is_some() {
            self.ring();
        }
    }

    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }
}

/// Results going back from the interpreter thread to the requests waiting in the runtime.
///
/// The interpreter thread [`push`](ReplyBatch::push)es every result of a batch and then
/// [`flush`](ReplyBatch::flush)es once; one task inside the runtime ([`ReplyBatch::deliver`])
/// completes all the waiting requests, so a batch costs one wake-up instead of one per request.
pub struct ReplyBatch<T> {
    pending: Mutex<Vec<(tokio::sync::oneshot::Sender<T>, T)>>,
    ready: tokio::sync::Notify,
}

impl<T> Default for ReplyBatch<T> {
    fn default() -> Self {
        ReplyBatch { pending: Mutex::new(Vec::new()), ready: tokio::sync::Notify::new() }
    }
}

impl<T> ReplyBatch<T> {
    pub fn push(&self, to: tokio::sync::oneshot::Sender<T>, value: T) {
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).push((to, value));
    }

    /// Hands everything pushed so far to the delivering task.
    pub fn flush(&self) {
        if !self.pending.lock().unwrap_or_else(|p| p.into_inner()).is_empty() {
            self.ready.notify_one();
        }
    }

    /// Delivers results as they are flushed; spawn it once on the runtime. Ends never.
    pub async fn deliver(self: std::sync::Arc<Self>) {
        let mut batch = Vec::new();
        loop {
            self.ready.notified().await;
            std::mem::swap(&mut batch, &mut *self.pending.lock().unwrap_or_else(|p| p.into_inner()));
            for (to, value) in batch.drain(..) {
                // The request may be gone (client hung up, handler timeout): nothing to do.
                let _ = to.send(value);
            }
        }
    }
}

/// A handler's answer, as it travels back from the interpreter thread.
pub type Outcome = Result<Response, HandlerError>;
/// Where a job's answer goes.
pub type Reply = tokio::sync::oneshot::Sender<Outcome>;

/// The runtime's half of a handler that an interpreter thread implements: posts the job `make`
/// builds around the reply channel, lets the runtime run its other ready tasks first (so a
/// burst of requests reaches the interpreter with one wake-up; for a mailbox
/// [`rung_when_idle`](Mailbox::rung_when_idle), until the runtime is idle), then rings and
/// waits for the reply. `side` names the interpreter in the log line of a request it never
/// answered.
pub fn hand_over<J: Send + 'static>(mailbox: &Arc<Mailbox<J>>, side: &'static str, make: impl FnOnce(Reply) -> J) -> HandlerFuture {
    let Some(admitted) = mailbox.admission.admit() else {
        return Box::pin(std::future::ready(Err(HandlerError::overloaded(format!("{side} has too many requests waiting")))));
    };
    let (reply, answer) = tokio::sync::oneshot::channel();
    // Whether it was posted, not the job given back: the future is boxed whole.
    let posted = mailbox.post_deferred(make(reply)).is_ok();
    let mailbox = mailbox.clone();
    Box::pin(async move {
        let _admitted = admitted;
        if !posted {
            return Err(HandlerError::new(format!("{side} stopped before the request reached it")));
        }
        mailbox.nudge().await;
        answer.await.unwrap_or_else(|_| Err(HandlerError::new(format!("{side} dropped the request"))))
    })
}

/// Whether the request behind `reply` was given up (its deadline passed, its client left)
/// before the interpreter got to it: then its handler is not started.
pub fn is_abandoned(reply: &Reply) -> bool {
    reply.is_closed()
}

/// Serves `app` on `listener` from a runtime of its own (`threads` workers, one per core by
/// default), leaving the calling (interpreter) thread free. The server is listening when this
/// returns, and `deliver` (the tasks that deliver replies, [`ReplyBatch::deliver`], and any
/// other that lives as long as the server) runs inside that runtime; `on_idle` runs whenever
/// one of its workers is about to sleep. Sending on the returned channel (or dropping it)
/// starts the drain; once it has ended and the runtime's threads are gone, `on_stopped` runs
/// with its outcome on a thread of its own. The [`crate::Closing`] switch makes the server
/// refuse new requests before that, while the app closes.
pub fn serve_in_background(
    app: App,
    listener: std::net::TcpListener,
    threads: Option<usize>,
    deliver: impl std::future::Future<Output = ()> + Send + 'static,
    logs: &crate::log::Logs,
    on_idle: impl Fn() + Send + Sync + 'static,
    on_stopped: impl FnOnce(Result<(), ShutdownError>) + Send + 'static,
) -> Result<(tokio::sync::oneshot::Sender<()>, crate::Closing), String> {
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .on_thread_park(on_idle)
        .thread_name("ferrule-runtime")
        .on_thread_start(logs.on_thread_start())
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let server = runtime.block_on(app.serve_std(listener)).map_err(|e| e.to_string())?;
    let closing = server.closing();
    runtime.spawn(deliver);
    let (stop, stop_requested) = tokio::sync::oneshot::channel::<()>();
    let on_server_thread = logs.on_thread_start();
    std::thread::Builder::new()
        .name("ferrule-server".into())
        .spawn(move || {
            on_server_thread();
            let outcome = runtime.block_on(async move {
                let _ = stop_requested.await;
                server.shutdown().await
            });
            // No runtime thread may still be finishing a request when the interpreter hears
            // that the server stopped.
            drop(runtime);
            on_stopped(outcome);
        })
        .map_err(|e| format!("cannot start the server thread: {e}"))?;
    Ok((stop, closing))
}

/// A non-blocking eventfd: a descriptor that a ring makes readable, for waiters that watch
/// descriptors (an event loop, Ruby's `IO#wait_readable`).
pub(crate) fn eventfd() -> std::io::Result<OwnedFd> {
    // SAFETY: eventfd has no memory-safety preconditions; a negative result is an error.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just created and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Makes an eventfd readable. Async-signal-safe: one write.
pub(crate) fn ring(fd: &OwnedFd) {
    let one: u64 = 1;
    // SAFETY: writes 8 bytes from a live u64 to an eventfd we own. A full counter (EAGAIN)
    // already means "readable", which is all a ring has to achieve.
    unsafe { libc::write(fd.as_raw_fd(), (&one as *const u64).cast(), 8) };
}

fn clear_doorbell(fd: &OwnedFd) {
    let mut count: u64 = 0;
    // SAFETY: reads 8 bytes into a live u64 from a non-blocking eventfd we own; EAGAIN (not
    // rung) leaves it untouched.
    unsafe { libc::read(fd.as_raw_fd(), (&mut count as *mut u64).cast(), 8) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn readable(fd: RawFd) -> bool {
        let mut poll = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd, zero timeout.
        unsafe { libc::poll(&mut poll, 1, 0) == 1 }
    }

    #[test]
    fn a_waiting_consumer_gets_every_job_in_order() {
        let mailbox = Arc::new(Mailbox::new());
        let consumer = {
            let mailbox = mailbox.clone();
            std::thread::spawn(move || {
                let (mut got, never) = (Vec::new(), AtomicBool::new(false));
                while mailbox.wait_for(&mut got, 16, &never) == Waited::Jobs {}
                got
            })
        };
        for i in 0..1000 {
            mailbox.post(i).unwrap();
        }
        mailbox.close();
        assert_eq!(consumer.join().unwrap(), (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn deferred_posts_ring_once_on_wake() {
        let mailbox = Mailbox::with_doorbell().unwrap();
        let fd = mailbox.doorbell_fd().unwrap();
        mailbox.post_deferred(1).unwrap();
        mailbox.post_deferred(2).unwrap();
        assert!(!readable(fd), "a deferred post does not ring");
        mailbox.wake();
        assert!(readable(fd));
        let mut got = Vec::new();
        mailbox.take_all(&mut got);
        mailbox.wake();
        assert!(!readable(fd), "nothing waiting, nothing to ring for");
        assert_eq!(got, vec![1, 2]);
    }

    #[test]
    fn a_waker_is_called_once_per_batch() {
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = calls.clone();
        let mailbox = Mailbox::with_waker(move || {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
        mailbox.post(1).unwrap();
        mailbox.post(2).unwrap();
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
        let mut got = Vec::new();
        mailbox.take_all(&mut got);
        mailbox.post(3).unwrap();
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_reply_batch_completes_every_waiting_request() {
        let replies = Arc::new(ReplyBatch::default());
        tokio::spawn(replies.clone().deliver());
        let mut waiting = Vec::new();
        for i in 0..10 {
            let (to, from) = tokio::sync::oneshot::channel();
            replies.push(to, i);
            waiting.push(from);
        }
        let pusher = replies.clone();
        std::thread::spawn(move || pusher.flush()).join().unwrap();
        for (i, from) in waiting.into_iter().enumerate() {
            assert_eq!(from.await.unwrap(), i);
        }
    }

    #[test]
    fn consumers_share_a_burst_and_can_be_interrupted() {
        let mailbox = Arc::new(Mailbox::new());
        for i in 0..5 {
            mailbox.post(i).unwrap();
        }
        let never = AtomicBool::new(false);
        let mut got = Vec::new();
        assert_eq!(mailbox.wait_for(&mut got, 2, &never), Waited::Jobs);
        assert_eq!(got, vec![0, 1]);
        let interrupted = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (mailbox, interrupted) = (mailbox.clone(), interrupted.clone());
            std::thread::spawn(move || {
                let mut rest = Vec::new();
                let first = mailbox.wait_for(&mut rest, 10, &interrupted);
                let second = mailbox.wait_for(&mut rest, 10, &interrupted);
                (first, second, rest)
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        interrupted.store(true, Ordering::Release);
        mailbox.interrupt_waiters();
        let (first, second, rest) = waiter.join().unwrap();
        assert_eq!((first, second, rest), (Waited::Jobs, Waited::Interrupted, vec![2, 3, 4]));
        mailbox.close();
        assert_eq!(mailbox.wait_for(&mut got, 1, &never), Waited::Closed);
    }

    #[tokio::test]
    async fn past_the_queue_limit_a_request_is_refused_at_once_and_room_returns() {
        let mailbox = Arc::new(Mailbox::<Reply>::new());
        mailbox.set_queue_limit(2);
        let first = hand_over(&mailbox, "test", |reply| reply);
        let second = hand_over(&mailbox, "test", |reply| reply);
        let third = hand_over(&mailbox, "test", |reply| reply).await;
        assert_eq!(third.unwrap_err().kind(), crate::HandlerErrorKind::Overloaded);
        drop(first); // its deadline passed: the future is dropped
        let mut jobs = Vec::new();
        mailbox.take_all(&mut jobs);
        assert!(is_abandoned(&jobs[0]), "the dropped request's job is skipped");
        assert!(!is_abandoned(&jobs[1]));
        let fourth = hand_over(&mailbox, "test", |reply| reply);
        mailbox.take_all(&mut jobs);
        for reply in jobs.drain(..) {
            if !is_abandoned(&reply) {
                let _ = reply.send(Ok(Response::text("done")));
            }
        }
        assert!(second.await.is_ok());
        assert!(fourth.await.is_ok(), "the room the dropped request left is reused");
    }

    /// A mailbox rung when idle, counting its rings and how many jobs had been posted at each.
    fn idle_rung(posted: &Arc<AtomicUsize>) -> (Arc<Mailbox<Reply>>, Arc<Mutex<Vec<usize>>>) {
        let rings = Arc::new(Mutex::new(Vec::new()));
        let (seen, count) = (rings.clone(), posted.clone());
        let mailbox = Arc::new(Mailbox::with_waker(move || seen.lock().unwrap().push(count.load(Ordering::SeqCst))));
        (mailbox, rings)
    }

    /// A one-worker runtime serving `mailbox` as a served app's does, its watch ringing a job
    /// left unrung after `stall`.
    fn serving(mailbox: &Arc<Mailbox<Reply>>, stall: std::time::Duration) -> tokio::runtime::Runtime {
        let (on_idle, watch) = mailbox.rung_when_idle(stall);
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).on_thread_park(on_idle).enable_all().build().unwrap();
        runtime.spawn(watch);
        runtime
    }

    /// The rings a served runtime makes for 20 jobs posted by `post` on it, four per poll of
    /// its tasks (as requests arrive under load), seen once it has been idle a while.
    fn rings_for_jobs_over_several_polls(post: fn(&Arc<Mailbox<Reply>>)) -> (Arc<Mailbox<Reply>>, Vec<usize>) {
        let posted = Arc::new(AtomicUsize::new(0));
        let (mailbox, rings) = idle_rung(&posted);
        // A watch that cannot ring first, however long this thread is preempted.
        let runtime = serving(&mailbox, std::time::Duration::from_secs(3600));
        let (from, count) = (mailbox.clone(), posted.clone());
        runtime.spawn(async move {
            for _ in 0..5 {
                for _ in 0..4 {
                    count.fetch_add(1, Ordering::SeqCst);
                    post(&from);
                }
                tokio::task::yield_now().await;
                tokio::task::yield_now().await;
            }
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while rings.lock().unwrap().is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        let seen = rings.lock().unwrap().clone();
        (mailbox, seen)
    }

    #[test]
    fn a_runtime_rings_once_it_is_idle_for_jobs_it_read_over_several_polls() {
        let (mailbox, rings) = rings_for_jobs_over_several_polls(|mailbox| {
            tokio::spawn(hand_over(mailbox, "test", |reply| reply));
        });
        // Ringing after the first poll (the hand-over's own yield) saw four jobs, not twenty.
        assert_eq!(rings, vec![20], "one ring, once everything was read");
        let mut jobs = Vec::new();
        mailbox.take_all(&mut jobs);
        assert_eq!(jobs.len(), 20);
    }

    #[test]
    fn jobs_posted_from_the_runtime_ring_once_it_is_idle_and_at_once_without_it() {
        // WebSocket arrivals read across several polls of the sockets.
        let (_, rings) = rings_for_jobs_over_several_polls(|mailbox| mailbox.post_from_runtime(tokio::sync::oneshot::channel().0).unwrap());
        assert_eq!(rings, vec![20], "one ring, once the runtime had nothing left to do");

        // A mailbox whose runtime does not ring (an in-process app's) rings at the first post.
        let posted = Arc::new(AtomicUsize::new(0));
        let (mailbox, rings) = idle_rung(&posted);
        mailbox.post_from_runtime(tokio::sync::oneshot::channel().0).unwrap();
        mailbox.post_from_runtime(tokio::sync::oneshot::channel().0).unwrap();
        assert_eq!(rings.lock().unwrap().len(), 1, "rung at once, and once until taken");
    }

    #[test]
    fn a_burst_rings_without_waiting_for_the_runtime() {
        let posted = Arc::new(AtomicUsize::new(0));
        let (mailbox, rings) = idle_rung(&posted);
        let _ = mailbox.rung_when_idle(std::time::Duration::from_secs(3600));
        let waker = futures_util::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        let mut waiting = Vec::new();
        for i in 1..=BURST {
            let mut request = hand_over(&mailbox, "test", |reply| reply);
            assert!(request.as_mut().poll(&mut cx).is_pending());
            waiting.push(request);
            assert_eq!(rings.lock().unwrap().len(), usize::from(i == BURST), "after {i} jobs");
        }
    }

    #[test]
    fn a_job_a_busy_runtime_never_rings_for_rings_after_the_stall() {
        let posted = Arc::new(AtomicUsize::new(0));
        let (mailbox, rings) = idle_rung(&posted);
        let runtime = serving(&mailbox, STALL);
        let (stop, spun) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let (spinning, spinner_runs) = (stop.clone(), spun.clone());
        // Work that never lets the worker sleep: requests the core answers alone, back to back.
        runtime.spawn(async move {
            while !spinning.load(Ordering::Relaxed) {
                spinner_runs.store(true, Ordering::Relaxed);
                tokio::task::yield_now().await;
            }
        });
        // Queued once the worker is busy, so no park (which would ring) comes before the stall.
        while !spun.load(Ordering::Relaxed) {
            std::thread::yield_now();
        }
        let started = std::time::Instant::now();
        runtime.spawn(hand_over(&mailbox, "test", |reply| reply));
        while rings.lock().unwrap().is_empty() && started.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        stop.store(true, Ordering::Relaxed);
        let rung = rings.lock().unwrap().len();
        assert_eq!(rung, 1, "rung within {:?}", started.elapsed());
        assert!(started.elapsed() >= STALL);
    }

    #[test]
    fn a_closed_mailbox_gives_the_job_back() {
        let mailbox = Mailbox::new();
        mailbox.close();
        assert_eq!(mailbox.post(7), Err(7));
    }

    #[test]
    fn the_doorbell_rings_once_per_batch_and_clears_on_collection() {
        let mailbox = Mailbox::with_doorbell().unwrap();
        let fd = mailbox.doorbell_fd().unwrap();
        assert!(!readable(fd));
        mailbox.post(1).unwrap();
        mailbox.post(2).unwrap();
        assert!(readable(fd));
        let mut got = Vec::new();
        mailbox.take_all(&mut got);
        assert_eq!(got, vec![1, 2]);
        assert!(!readable(fd), "collecting the jobs silences the doorbell");
        mailbox.post(3).unwrap();
        assert!(readable(fd), "a job after a collection rings again");
    }
}
