//! Serving with HTTP/1.1 keep-alive and HTTP/2 cleartext, and graceful shutdown that drains
//! in-flight requests within a deadline.

use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running server.
pub struct Server {
    local_addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
    drain: Duration,
}

/// The server did not stop cleanly.
#[derive(Debug)]
pub enum ShutdownError {
    /// In-flight requests were still running at the deadline and were cut off.
    DrainTimeout(Duration),
    Io(std::io::Error),
}

impl std::fmt::Display for ShutdownError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShutdownError::DrainTimeout(d) => write!(f, "requests still running after {} ms were cut off", d.as_millis()),
            ShutdownError::Io(e) => write!(f, "server error: {e}"),
        }
    }
}

impl std::error::Error for ShutdownError {}

impl Server {
    pub(crate) fn start(listener: tokio::net::TcpListener, router: axum::Router, drain: Duration) -> std::io::Result<Server> {
        let local_addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let service = router.into_make_service();
        let task = tokio::spawn(async move {
            axum::serve(listener, service)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
        });
        Ok(Server { local_addr, stop, task, drain })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting, lets in-flight requests finish, and cuts off what is left at the deadline.
    pub async fn shutdown(self) -> Result<(), ShutdownError> {
        let _ = self.stop.send(());
        let mut task = self.task;
        match tokio::time::timeout(self.drain, &mut task).await {
            Ok(Ok(result)) => result.map_err(ShutdownError::Io),
            Ok(Err(join_error)) => Err(ShutdownError::Io(std::io::Error::other(join_error.to_string()))),
            Err(_) => {
                task.abort();
                Err(ShutdownError::DrainTimeout(self.drain))
            }
        }
    }
}

/// Binds a listening socket on `addr` (`host:port`). With `reuse_port`, several processes can
/// bind the same port and the kernel spreads new connections among them: that is how worker
/// processes that did not inherit a socket share one port.
pub fn bind(addr: &str, reuse_port: bool) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    use std::net::ToSocketAddrs;
    let mut last_error = None;
    for candidate in addr.to_socket_addrs()? {
        let attempt = (|| {
            let socket = Socket::new(Domain::for_address(candidate), Type::STREAM, None)?;
            socket.set_reuse_address(true)?;
            if reuse_port {
                socket.set_reuse_port(true)?;
            }
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
