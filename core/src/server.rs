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
