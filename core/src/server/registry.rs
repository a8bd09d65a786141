//! The connections a server holds, so that it can close idle ones first when it runs short of
//! room, and close every one at shutdown.
//!
//! A connection is *idle* while no request of it is being handled: between keep-alive
//! requests, before its first byte, or half-way through sending a request head. Those are the
//! connections a slow or idle client holds, and closing them loses no work.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use tokio::sync::Notify;

/// What the accept loop and a connection's task share about one connection.
#[derive(Debug, Default)]
pub(crate) struct ConnState {
    /// Requests of this connection whose response has not been produced yet, and request
    /// bodies still being read (after an early answer too: `super::body::PacedBody`). At 0 the
    /// connection is between requests.
    pub in_flight: AtomicUsize,
    /// Requests this connection has started, ever: tells the I/O guard a new head was read.
    pub started: AtomicU64,
    /// Set (and `close` notified) when the server wants this connection gone.
    pub closing: AtomicBool,
    pub close: Notify,
    /// Notified (all waiters) with `close`: event streams of this connection end
    /// ([`super::streaming`]), so a graceful close need not wait for streams that never end.
    pub end_streams: Notify,
    /// Set by the connection's socket when hyper is waiting, idle, past
    /// [`REST_AFTER`](super::io::REST_AFTER) for the next request: the task may take the
    /// connection back from hyper. Cleared by the task before each poll of hyper.
    pub resting: AtomicBool,
    /// How many times the connection has rested.
    #[cfg(test)]
    pub rests: AtomicUsize,
    /// The connection's task, for cutting it off at the drain deadline.
    pub task: OnceLock<tokio::task::AbortHandle>,
    /// The WebSocket session a request of this connection upgraded it to, run by the
    /// connection's task once hyper has let go ([`super::UpgradeSlot`]).
    pub upgraded: super::upgrade::Upgraded,
}

impl ConnState {
    pub fn is_idle(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) == 0
    }

    pub fn ask_to_close(&self) {
        if !self.closing.swap(true, Ordering::AcqRel) {
            // notify_one stores a permit when the task is not waiting yet.
            self.close.notify_one();
            self.end_streams.notify_waiters();
        }
    }
}

#[derive(Default)]
pub(crate) struct Registry {
    connections: Mutex<BTreeMap<u64, Arc<ConnState>>>,
    next_id: AtomicU64,
    /// Notified whenever a connection ends (the accept loop waits on it when full).
    pub closed_one: Notify,
    /// Set while the app closes ([`super::Closing`]): each request read meanwhile is answered
    /// 503 without reaching the app.
    pub refusing: AtomicBool,
}

/// Removes its connection from the registry when the connection's task ends, however it ends.
pub(crate) struct Registered {
    registry: Arc<Registry>,
    id: u64,
    pub state: Arc<ConnState>,
}

impl Registered {
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.id);
        self.registry.closed_one.notify_waiters();
    }
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<u64, Arc<ConnState>>> {
        // Every critical section is one map operation: a poisoned lock still holds a valid map.
        self.connections.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn register(self: &Arc<Self>) -> Registered {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnState::default());
        self.lock().insert(id, state.clone());
        Registered { registry: self.clone(), id, state }
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Asks up to `count` idle connections to close: first those that never started a request
    /// (how idle floods and slowloris clients look), oldest first, then the other idle ones.
    /// Returns how many were asked.
    pub fn close_idle(&self, count: usize) -> usize {
        let connections = self.lock();
        let candidates = |served: bool| {
            connections.values().filter(move |c| {
                c.is_idle() && !c.closing.load(Ordering::Acquire) && (c.started.load(Ordering::Acquire) > 0) == served
            })
        };
        let mut asked = 0;
        for connection in candidates(false).chain(candidates(true)).take(count) {
            connection.ask_to_close();
            asked += 1;
        }
        asked
    }

    /// Asks every connection to close once its current requests are answered.
    pub fn close_all(&self) {
        for connection in self.lock().values() {
            connection.ask_to_close();
        }
    }

    /// Stops every connection's task where it is; returns how many there were.
    pub fn abort_all(&self) -> usize {
        let connections = self.lock();
        for connection in connections.values() {
            if let Some(task) = connection.task.get() {
                task.abort();
            }
        }
        connections.len()
    }

    #[cfg(test)]
    pub fn states(&self) -> Vec<Arc<ConnState>> {
        self.lock().values().cloned().collect()
    }

    /// Connections not yet asked to close (the accept loop's count when it is near the cap).
    pub fn open(&self) -> usize {
        self.lock().values().filter(|c| !c.closing.load(Ordering::Acquire)).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_connections_that_never_sent_a_request_go_first() {
        let registry = Arc::new(Registry::default());
        let served = registry.register();
        served.state.started.store(1, Ordering::Release);
        let busy = registry.register();
        busy.state.in_flight.store(1, Ordering::Release);
        let never = registry.register();
        assert_eq!(registry.close_idle(1), 1);
        assert!(never.state.closing.load(Ordering::Acquire));
        assert!(!served.state.closing.load(Ordering::Acquire));
        assert_eq!(registry.close_idle(5), 1, "the busy one is never asked");
        assert!(served.state.closing.load(Ordering::Acquire));
        assert!(!busy.state.closing.load(Ordering::Acquire));
        drop(never);
        assert_eq!(registry.len(), 2);
    }
}
