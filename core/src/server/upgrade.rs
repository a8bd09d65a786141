//! A connection upgraded to a WebSocket stays the server's: its session runs in the
//! connection's own task, after hyper has let go of the socket, so the registry still counts it
//! (as busy: the room-making close of idle connections passes it over), shutdown reaches it
//! (the session closes with 1001) and the drain deadline cuts it off with the rest.
//!
//! Cost: requests without an `Upgrade` header pay nothing; the slot is put in a request's
//! extensions only when it asks to upgrade.

use super::registry::ConnState;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

pub(crate) type Session = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Where a request leaves the session its connection is upgraded to.
#[derive(Clone)]
pub(crate) struct UpgradeSlot(Arc<ConnState>);

impl UpgradeSlot {
    pub(super) fn new(state: Arc<ConnState>) -> Self {
        UpgradeSlot(state)
    }

    pub(crate) fn put(self, session: Session) {
        *self.0.upgraded.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(session);
    }

    /// Resolves once the server wants the connection gone (shutdown).
    pub(crate) fn going_away(&self) -> Session {
        super::streaming::closed(self.0.clone())
    }
}

#[derive(Default)]
pub(crate) struct Upgraded(Mutex<Option<Session>>);

impl Upgraded {
    pub(super) fn take(&self) -> Option<Session> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

impl std::fmt::Debug for Upgraded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Upgraded")
    }
}
