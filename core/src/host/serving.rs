//! A running server as a binding holds it: the mailbox its interpreter takes requests from,
//! the batch its answers go back in, and the one stop protocol (see the module above).

use super::inbox::Inbox;
use super::{lock, HostError};
use crate::app::App;
use crate::bridge::{self, serve_in_background, Mailbox};
use crate::log::Logs;
use crate::spec::AppConfig;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::oneshot;

/// Where to listen.
pub enum Listen<'a> {
    /// Bind `host:port` (port 0: any free port). A port another process listens on is an
    /// error: the socket is never shared with it (no `SO_REUSEPORT`).
    Address { host: &'a str, port: u16 },
    /// A listening socket inherited from a parent process (its worker processes share it).
    Inherited(RawFd),
}

/// How the binding's interpreter learns that requests wait (see [`crate::bridge`]).
pub enum Wake {
    /// Threads block in [`Mailbox::wait_for`] without the interpreter lock (Ruby).
    Blocking,
    /// An event loop watches [`Mailbox::doorbell_fd`] (Python's asyncio).
    Doorbell,
    /// A callback queues a call onto the interpreter's thread, once per batch (Node).
    Callback(Box<dyn Fn() + Send + Sync>),
}

impl Wake {
    /// A mailbox whose consumer is woken this way.
    pub(super) fn mailbox<J>(self) -> Result<Mailbox<J>, HostError> {
        Ok(match self {
            Wake::Blocking => Mailbox::new(),
            Wake::Doorbell => Mailbox::with_doorbell().map_err(|e| HostError::Runtime(format!("eventfd: {e}")))?,
            Wake::Callback(wake) => Mailbox::with_waker(wake),
        })
    }
}

/// The end of a server: its outcome, and a descriptor readable once it is known.
pub(crate) struct Stopped {
    outcome: Mutex<Option<Result<(), String>>>,
    ready: OwnedFd,
}

impl Stopped {
    pub(crate) fn is_done(&self) -> bool {
        lock(&self.outcome).is_some()
    }
}

pub struct Serving<R> {
    inbox: Inbox<R>,
    logs: Logs,
    stop: Mutex<Option<oneshot::Sender<()>>>,
    closing: crate::Closing,
    local_addr: SocketAddr,
    stopped: Arc<Stopped>,
}

/// A server's calls are taken and answered through its [`Inbox`].
impl<R> std::ops::Deref for Serving<R> {
    type Target = Inbox<R>;

    fn deref(&self) -> &Inbox<R> {
        &self.inbox
    }
}

impl<R: Send + Sync + 'static> Serving<R> {
    pub(super) fn start(
        config: &AppConfig,
        snapshot: &super::Snapshot<R>,
        logs: &Logs,
        listen: Listen<'_>,
        threads: Option<usize>,
        wake: Wake,
        side: &'static str,
    ) -> Result<Arc<Self>, HostError> {
        let inbox = Inbox::new(wake.mailbox()?, config.max_queued_requests, side);
        let mut app = App::with_config(config.clone());
        inbox.add_all(&mut app, snapshot);
        let listener = match listen {
            Listen::Address { host, port } => bind(host, port)?,
            Listen::Inherited(fd) => crate::server::listener_from_fd(fd)
                .map_err(|source| HostError::Listen { addr: format!("inherited socket {fd}"), source })?,
        };
        let local_addr = listener.local_addr().map_err(|source| HostError::Listen { addr: "the socket".into(), source })?;
        let ready = bridge::eventfd().map_err(|e| HostError::Runtime(format!("eventfd: {e}")))?;
        let stopped = Arc::new(Stopped { outcome: Mutex::new(None), ready });
        let (on_stopped, closing) = (stopped.clone(), inbox.mailbox_arc());
        let (on_idle, watch_stalls) = inbox.mailbox_arc().rung_when_idle(bridge::STALL);
        let deliver = inbox.deliver();
        let background = async move {
            tokio::join!(deliver, watch_stalls);
        };
        let (stop, refuse_switch) = serve_in_background(app, listener, threads, background, logs, on_idle, move |outcome| {
            let outcome = outcome.map_err(|e| e.to_string());
            if let Err(problem) = &outcome {
                tracing::error!(target: "ferrule::server", "{problem}");
            }
            *lock(&on_stopped.outcome) = Some(outcome);
            // Closing wakes the consumer as it is always woken; it then finds the outcome.
            closing.close();
            bridge::ring(&on_stopped.ready);
        })
        .map_err(HostError::Runtime)?;
        Ok(Arc::new(Serving { inbox, logs: logs.clone(), stop: Mutex::new(Some(stop)), closing: refuse_switch, local_addr, stopped }))
    }
}

impl<R> Serving<R> {
    /// A handle on the mailbox and answer batches, for the binding's own dispatcher.
    pub fn inbox(&self) -> Inbox<R> {
        self.inbox.clone()
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn port(&self) -> u16 {
        self.local_addr.port()
    }

    /// Stops accepting and drains in-flight requests; returns at once. Calling it again does
    /// nothing.
    pub fn stop(&self) {
        if let Some(stop) = lock(&self.stop).take() {
            let _ = stop.send(());
        }
    }

    /// Answers each request read from now on with 503 (`refuse`), or serves them again: for an
    /// app whose own closing steps run before [`Serving::stop`] (Node's `preClose` hooks), as
    /// [`crate::Closing`] says.
    pub fn refuse_requests(&self, refuse: bool) {
        self.closing.refuse_requests(refuse);
    }

    /// `None` while serving; once stopped, `Err` with the line already printed when the drain
    /// deadline cut requests off.
    pub fn outcome(&self) -> Option<Result<(), String>> {
        lock(&self.stopped.outcome).clone()
    }

    /// Readable once [`Serving::outcome`] is known.
    pub fn stopped_fd(&self) -> RawFd {
        self.stopped.ready.as_raw_fd()
    }

    /// The startup line, the same in every language, where the app's log records go.
    pub fn announce(&self) {
        let (addr, pid) = (self.local_addr, std::process::id());
        self.logs.in_scope(|| tracing::info!(target: "ferrule::server", %addr, pid, "serving on http://{addr} (pid {pid})"));
    }

    /// The app's log records, for a binding that drains them into its language's logger.
    pub fn logs(&self) -> &Logs {
        &self.logs
    }

    pub(crate) fn stopped_weak(&self) -> Weak<Stopped> {
        Arc::downgrade(&self.stopped)
    }
}

/// A listening socket on `host:port`, for a server in this process or for worker processes
/// to inherit. A port another process listens on is refused (`EADDRINUSE`), never shared.
pub fn bind(host: &str, port: u16) -> Result<std::net::TcpListener, HostError> {
    let addr = if host.contains(':') && !host.starts_with('[') { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
    crate::server::bind(&addr).map_err(|source| HostError::Listen { addr, source })
}
