//! Serving: HTTP/1.1 keep-alive and HTTP/2 cleartext on connections the server keeps in
//! check, and graceful shutdown that loses nothing and waits for nothing it need not.
//!
//! axum's `serve` gives hyper no timer and no limits, so one client could hold a connection
//! (or all of them) forever. Here the accept loop, the connections and their deadlines are
//! the core's own:
//! * [`io`]: a socket that knows the deadlines of a request head and of a keep-alive wait;
//! * [`body`]: a request body that must keep a minimum pace;
//! * [`registry`]: every connection, so that idle ones give way first when room runs short,
//!   and every one is told at shutdown;
//! * [`limits`]: the settings, resolved once (with the descriptor limit) when serving starts;
//! * [`streaming`]: a streamed response keeps its connection busy until it ends; an event
//!   stream is kept alive while quiet and ends when the connection is asked to close;
//! * [`upgrade`]: a connection upgraded to a WebSocket stays the server's, busy until it closes.
//! * [`refusal`]: the problem documents sent before there is a request: to a head that cannot
//!   be parsed (hyper's own answer, rewritten), a request line in no HTTP/1 version, a slow head.

mod body;
mod connection;
mod io;
mod limits;
mod refusal;
mod registry;
mod streaming;
mod upgrade;

pub use body::{is_body_timeout, BodyTimeout, StreamError};
pub(crate) use io::REST_AFTER;
pub(crate) use limits::ConnectionLimits;
pub(crate) use upgrade::UpgradeSlot;

use registry::Registry;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running server.
pub struct Server {
    local_addr: SocketAddr,
    stop: oneshot::Sender<()>,
    accepting: JoinHandle<()>,
    registry: Arc<Registry>,
    drain: Duration,
}

/// The server did not stop cleanly.
#[derive(Debug)]
pub enum ShutdownError {
    /// Requests were still running at the drain deadline and were cut off.
    DrainTimeout { deadline: Duration, connections: usize },
    Io(std::io::Error),
}

impl std::fmt::Display for ShutdownError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShutdownError::DrainTimeout { deadline, connections } => write!(
                f,
                "{connections} connection(s) still had requests running after the {} ms drain deadline and were cut off",
                deadline.as_millis()
            ),
            ShutdownError::Io(e) => write!(f, "server error: {e}"),
        }
    }
}

impl std::error::Error for ShutdownError {}

impl Server {
    pub(crate) fn start(
        listener: tokio::net::TcpListener,
        app: impl crate::app::AppService,
        limits: ConnectionLimits,
        drain: Duration,
    ) -> std::io::Result<Server> {
        let local_addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let registry = Arc::new(Registry::default());
        let accepting = tokio::spawn(connection::accept_loop(listener, app, Arc::new(limits), registry.clone(), stopped));
        Ok(Server { local_addr, stop, accepting, registry, drain })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// How many connections the server holds now.
    pub fn connections(&self) -> usize {
        self.registry.len()
    }

    /// The switch that makes this server refuse new requests while its app closes.
    pub fn closing(&self) -> Closing {
        Closing { registry: self.registry.clone() }
    }

    /// Stops accepting (the port is released at once), closes every connection that has no
    /// request in progress (idle, or still sending its head), lets the requests in progress
    /// finish — their responses say `Connection: close`, HTTP/2 peers get GOAWAY — and cuts off
    /// what is left at the drain deadline.
    pub async fn shutdown(self) -> Result<(), ShutdownError> {
        let _ = self.stop.send(());
        let _ = self.accepting.await;
        let deadline = tokio::time::Instant::now() + self.drain;
        loop {
            let closed = self.registry.closed_one.notified();
            // Asked again each round: a connection accepted just before the stop registers late.
            self.registry.close_all();
            if self.registry.len() == 0 {
                return Ok(());
            }
            if tokio::time::timeout_at(deadline, closed).await.is_err() {
                let cut_off = self.registry.abort_all();
                return if cut_off == 0 { Ok(()) } else { Err(ShutdownError::DrainTimeout { deadline: self.drain, connections: cut_off }) };
            }
        }
    }
}

/// Fastify's `return503OnClosing`: once an app has begun to close (its `preClose` hooks run
/// before the drain), a request read from then on is answered 503 with `connection: close`
/// instead of reaching a handler whose resources are being released; requests already in
/// progress are served as before, and the drain ([`Server::shutdown`]) comes after. One atomic
/// load per request while it is off.
#[derive(Clone)]
pub struct Closing {
    registry: Arc<Registry>,
}

impl Closing {
    /// From now on, refuse (`true`) or serve (`false`) each new request.
    pub fn refuse_requests(&self, refuse: bool) {
        self.registry.refusing.store(refuse, std::sync::atomic::Ordering::Release);
    }
}

/// The answer to a request read while its app closes (see [`Closing`]); over HTTP/1 it also
/// ends the connection, as Fastify's does (HTTP/2 has no `connection` header: the drain ends
/// those connections with GOAWAY).
pub(crate) fn closing_answer(version: http::Version) -> axum::response::Response {
    let problem = crate::problem::Problem::status(http::StatusCode::SERVICE_UNAVAILABLE)
        .with_detail("The server is closing: this request was not started.");
    if version < http::Version::HTTP_2 { problem.closing() } else { problem }.into_http()
}

/// Binds a listening socket on `addr` (`host:port`). `SO_REUSEADDR` only (a restart need not
/// wait for old connections' TIME_WAIT); never `SO_REUSEPORT`, so a port another process
/// listens on is an error rather than silently shared with it. Worker processes share one
/// socket by inheriting it ([`listener_from_fd`]).
pub fn bind(addr: &str) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    use std::net::ToSocketAddrs;
    let mut last_error = None;
    for candidate in addr.to_socket_addrs()? {
        let attempt = (|| {
            let socket = Socket::new(Domain::for_address(candidate), Type::STREAM, None)?;
            socket.set_reuse_address(true)?;
            socket.bind(&candidate.into())?;
            socket.listen(1024)?;
            Ok::<_, std::io::Error>(std::net::TcpListener::from(socket))
        })();
        match attempt {
            Ok(listener) => return Ok(listener),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{addr} resolves to no address"))))
}

/// A listening socket inherited from a parent process (fork-based workers), by descriptor.
/// The descriptor is duplicated, so the caller's copy stays open and owned by the caller.
pub fn listener_from_fd(fd: std::os::fd::RawFd) -> std::io::Result<std::net::TcpListener> {
    // SAFETY: the caller promises `fd` is an open descriptor for the duration of this call;
    // it is only borrowed to duplicate it.
    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let listener = std::net::TcpListener::from(borrowed.try_clone_to_owned()?);
    listener.local_addr()?; // not a socket (or not TCP): fail here, not on the first accept
    Ok(listener)
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => {},
        _ = terminate => {},
    }
}
