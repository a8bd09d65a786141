//! Where the core's log records go: standard error, or the language's own logger.
//!
//! The core writes `tracing` events under the `ferrule::` targets — `ferrule::server` (the
//! startup line, a drain that cut requests off), `ferrule::handler` (a handler that failed or
//! panicked), `ferrule::access` (the access log) — with the values a logger wants as fields
//! (`status = 200`, `route = "GET /users/{id}"`). Each app has one [`Logs`]: its level
//! (`log_level`) and where its records go. Every thread of the app's runtime has the app's
//! [`Logs`] as its `tracing` dispatcher ([`Logs::on_thread_start`]), so two apps in one process
//! (Node tests, a Fastify-style instance per service) keep their own loggers.
//!
//! Where records go:
//! * [`Logs::stderr`]: one line each, `ferrule: <message>`, written by the thread that emits it
//!   (Node and Ruby without a logger, a Rust app with no subscriber of its own).
//! * [`Logs::queued`]: into a [`Mailbox`] the interpreter drains ([`Logs::take`]) — Python's
//!   `logging`, a pino-compatible Node logger, a Ruby `Logger`. A runtime thread never waits for
//!   an interpreter lock to log: it queues the record and rings the interpreter the way the
//!   binding is always woken. The queue is bounded ([`QUEUE_LIMIT`]); a logger that falls that
//!   far behind loses the newest records, and the next drain starts with one warning that
//!   counts them.
//!
//! Cost: an event below the level is one comparison ([`Subscriber::enabled`]); a line on
//! standard error is one formatted write; a queued record is one allocation and a mailbox push.
//! Only the access log emits per request, and it is not in the stack when switched off.

mod record;
mod subscriber;

pub use record::{FieldValue, LogLevel, LogRecord};

use crate::bridge::Mailbox;
use std::cell::RefCell;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use subscriber::AppSubscriber;
use tracing::dispatcher::{DefaultGuard, Dispatch};

/// Records waiting for a slow logger, at most; past it the newest are dropped and counted.
pub const QUEUE_LIMIT: usize = 10_000;

/// How a queued logger's interpreter is told that records wait.
pub enum LogWake {
    /// An event loop or a thread watches [`Logs::doorbell_fd`] (Python's asyncio, a Ruby thread).
    Doorbell,
    /// A callback queues a drain onto the interpreter's thread (Node's thread-safe function).
    Callback(Box<dyn Fn() + Send + Sync>),
}

/// One app's log level and destination (see the module docs).
#[derive(Clone)]
pub struct Logs {
    sink: Arc<Sink>,
    dispatch: Dispatch,
}

pub(crate) struct Sink {
    pub(crate) level: LogLevel,
    queue: Option<Queue>,
}

impl Sink {
    pub(crate) fn is_queued(&self) -> bool {
        self.queue.is_some()
    }
}

struct Queue {
    records: Mailbox<LogRecord>,
    queued: AtomicUsize,
    dropped: AtomicUsize,
}

impl Logs {
    /// Records at `level` or above as lines on standard error.
    pub fn stderr(level: LogLevel) -> Logs {
        Logs::with_sink(Sink { level, queue: None })
    }

    /// Records at `level` or above queued for the binding's logger, which is woken as `wake`
    /// says and drains with [`Logs::take`].
    pub fn queued(level: LogLevel, wake: LogWake) -> std::io::Result<Logs> {
        let records = match wake {
            LogWake::Doorbell => Mailbox::with_doorbell()?,
            LogWake::Callback(wake) => Mailbox::with_waker(wake),
        };
        let queue = Queue { records, queued: AtomicUsize::new(0), dropped: AtomicUsize::new(0) };
        Ok(Logs::with_sink(Sink { level, queue: Some(queue) }))
    }

    fn with_sink(sink: Sink) -> Logs {
        let sink = Arc::new(sink);
        Logs { dispatch: Dispatch::new(AppSubscriber(sink.clone())), sink }
    }

    /// This app's `tracing` dispatcher (a Rust program may install it as its global default).
    pub fn dispatch(&self) -> &Dispatch {
        &self.dispatch
    }

    pub fn level(&self) -> LogLevel {
        self.sink.level
    }

    /// Whether records wait in a queue for the binding's logger.
    pub fn is_queued(&self) -> bool {
        self.sink.queue.is_some()
    }

    /// Runs `f` with this app's logs as the thread's dispatcher: for core code that runs on an
    /// interpreter's thread (the startup line).
    pub fn in_scope<T>(&self, f: impl FnOnce() -> T) -> T {
        tracing::dispatcher::with_default(&self.dispatch, f)
    }

    /// A handler failure the binding describes itself (a Ruby exception with its backtrace):
    /// an error record under `ferrule::handler`, with the route as a field.
    pub fn handler_failed(&self, route: &str, message: &str) {
        self.in_scope(|| tracing::error!(target: "ferrule::handler", route, "{message}"));
    }

    /// For `tokio::runtime::Builder::on_thread_start`: every thread of the runtime logs here.
    pub fn on_thread_start(&self) -> impl Fn() + Send + Sync + 'static {
        let dispatch = self.dispatch.clone();
        move || {
            let guard = tracing::dispatcher::set_default(&dispatch);
            THREAD_DISPATCH.with(|slot| *slot.borrow_mut() = Some(guard));
        }
    }

    /// Readable while records wait (a [`LogWake::Doorbell`] queue only).
    pub fn doorbell_fd(&self) -> Option<RawFd> {
        self.sink.queue.as_ref().and_then(|q| q.records.doorbell_fd())
    }

    /// Moves every waiting record into `into`, first a warning for any the queue dropped.
    pub fn take(&self, into: &mut Vec<LogRecord>) {
        let Some(queue) = &self.sink.queue else { return };
        let start = into.len();
        let dropped = queue.dropped.swap(0, Ordering::AcqRel);
        if dropped > 0 {
            into.push(LogRecord::dropped(dropped));
        }
        queue.records.take_all(into);
        let taken = into.len() - start - usize::from(dropped > 0);
        queue.queued.fetch_sub(taken, Ordering::AcqRel);
    }

    /// Writes one record where this app's records go (used by the subscriber).
    pub(crate) fn write(sink: &Sink, record: LogRecord) {
        let Some(queue) = &sink.queue else {
            record.write_line(&mut std::io::stderr().lock());
            return;
        };
        if queue.queued.fetch_add(1, Ordering::AcqRel) >= QUEUE_LIMIT {
            queue.queued.fetch_sub(1, Ordering::AcqRel);
            queue.dropped.fetch_add(1, Ordering::AcqRel);
            return;
        }
        if queue.records.post(record).is_err() {
            queue.queued.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

thread_local! {
    /// The dispatcher a runtime thread was given at its start, kept for the thread's life.
    static THREAD_DISPATCH: RefCell<Option<DefaultGuard>> = const { RefCell::new(None) };
}

#[cfg(test)]
mod tests;
