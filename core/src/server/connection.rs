//! The accept loop and one connection's life: protocol, service, closing on request.

use super::body::{PacedBody, StreamError};
use super::io::{GuardedIo, Protocol};
use super::limits::ConnectionLimits;
use super::registry::{ConnState, Registered, Registry};
use crate::app::AppService;
use crate::problem::Problem;
use futures_util::future::{ready, Either, Ready};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// Accepts until `stop`, keeping the number of connections under the limit: at the limit, idle
/// connections are asked to close first (a batch of 1/64 of the limit, so a flood does not
/// cost a scan per accept) and, with none idle, accepting waits for one to end — new clients
/// wait in the kernel's backlog instead of taking the descriptors the server needs to answer.
/// When the process runs out of descriptors anyway (`EMFILE`), the loop closes idle
/// connections and backs off instead of spinning.
pub(crate) async fn accept_loop<A: AppService>(
    listener: TcpListener,
    app: A,
    limits: Arc<ConnectionLimits>,
    registry: Arc<Registry>,
    mut stop: oneshot::Receiver<()>,
) {
    let batch = (limits.max_connections / 64).max(1);
    let mut backoff = Duration::from_millis(5);
    loop {
        while registry.len() >= limits.max_connections && registry.open() >= limits.max_connections {
            if registry.close_idle(batch) > 0 {
                break;
            }
            let closed = registry.closed_one.notified();
            tokio::select! {
                _ = closed => {}
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                _ = &mut stop => return,
            }
        }
        let accepted = tokio::select! {
            biased;
            _ = &mut stop => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                backoff = Duration::from_millis(5);
                let registered = registry.register();
                let state = registered.state.clone();
                let task = tokio::spawn(serve_connection(stream, app.clone(), limits.clone(), registered));
                let _ = state.task.set(task.abort_handle());
            }
            Err(error) if out_of_resources(&error) => {
                registry.close_idle(batch);
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_millis(200));
            }
            // The client gave up between connecting and being accepted (ECONNABORTED, …).
            Err(_) => {}
        }
    }
}

fn out_of_resources(error: &std::io::Error) -> bool {
    matches!(error.raw_os_error(), Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM))
}

async fn serve_connection<A: AppService>(stream: tokio::net::TcpStream, app: A, limits: Arc<ConnectionLimits>, registered: Registered) {
    let state = registered.state.clone();
    let _ = stream.set_nodelay(true);
    let mut io = GuardedIo::new(stream, state.clone(), limits.clone());
    let protocol = tokio::select! {
        protocol = io.sniff() => protocol,
        _ = state.close.notified() => return,
    };
    let service = ConnService { app, state: state.clone(), limits: limits.clone() };
    match protocol {
        Ok(Protocol::Http1) => {
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(io), service)
                .with_upgrades();
            drive(connection, &state).await;
            // Upgraded: the session runs here, so the registry still holds the connection
            // (busy) and the drain deadline can cut it off with the rest.
            if let Some(session) = state.upgraded.take() {
                state.in_flight.fetch_add(1, Ordering::AcqRel);
                session.await;
            }
        }
        Ok(Protocol::Http2) => {
            let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
            builder
                .timer(TokioTimer::new())
                .max_concurrent_streams(limits.http2_max_concurrent_streams)
                .max_header_list_size(limits.http2_max_header_list_size)
                .keep_alive_interval(limits.http2_keep_alive_interval);
            drive(builder.serve_connection(TokioIo::new(io), service), &state).await;
        }
        Ok(Protocol::Neither | Protocol::Gone) | Err(_) => {}
    }
    drop(registered);
}

/// A hyper connection that can be asked to finish what it is doing and close.
trait Graceful: Future {
    fn graceful_shutdown(self: Pin<&mut Self>);
}

impl<S> Graceful for hyper::server::conn::http1::UpgradeableConnection<TokioIo<GuardedIo>, S>
where
    S: hyper::service::HttpService<Incoming>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    S::ResBody: hyper::body::Body + 'static,
    <S::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    fn graceful_shutdown(self: Pin<&mut Self>) {
        hyper::server::conn::http1::UpgradeableConnection::graceful_shutdown(self)
    }
}

impl<S> Graceful for hyper::server::conn::http2::Connection<TokioIo<GuardedIo>, S, TokioExecutor>
where
    S: hyper::service::HttpService<Incoming>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    S::ResBody: hyper::body::Body + Send + 'static,
    <S::ResBody as hyper::body::Body>::Data: Send,
    <S::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    S::Future: Send + 'static,
{
    fn graceful_shutdown(self: Pin<&mut Self>) {
        hyper::server::conn::http2::Connection::graceful_shutdown(self)
    }
}

async fn drive<C: Graceful>(connection: C, state: &ConnState) {
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        _ = state.close.notified() => {}
    }
    connection.as_mut().graceful_shutdown();
    let _ = connection.await;
}

/// The app, seen from one connection: counts the connection's requests in flight (what
/// makes it busy or idle) and paces each request body.
#[derive(Clone)]
struct ConnService<A> {
    app: A,
    state: Arc<ConnState>,
    limits: Arc<ConnectionLimits>,
}

impl<A: AppService> hyper::service::Service<http::Request<Incoming>> for ConnService<A> {
    type Response = axum::response::Response;
    type Error = StreamError;
    type Future = Either<Ready<Result<axum::response::Response, StreamError>>, InFlight<A::Future>>;

    fn call(&self, request: http::Request<Incoming>) -> Self::Future {
        if let Some(problem) = host_problem(&request) {
            return Either::Left(ready(Ok(problem.into_http())));
        }
        let http2 = request.version() == http::Version::HTTP_2;
        self.state.started.fetch_add(1, Ordering::AcqRel);
        self.state.in_flight.fetch_add(1, Ordering::AcqRel);
        let mut request = request.map(|body| axum::body::Body::new(PacedBody::new(body, self.limits.clone())));
        if !http2 && request.headers().contains_key(http::header::UPGRADE) {
            request.extensions_mut().insert(super::UpgradeSlot::new(self.state.clone()));
        }
        let future = tower::Service::call(&mut self.app.clone(), request);
        Either::Right(InFlight { future, state: Some(self.state.clone()), http2, sse_keep_alive: self.limits.sse_keep_alive })
    }
}

/// An HTTP/1.1 request must carry exactly one `Host` (RFC 9112 §3.2: a server MUST answer 400
/// otherwise). Two hosts are how request-smuggling and cache-poisoning attempts make a proxy
/// and a server disagree about where a request goes. HTTP/1.0 may omit it; HTTP/2 carries
/// `:authority`. Checked here, on the wire, so in-process calls of the router need none.
/// (`Transfer-Encoding` beside `Content-Length` is hyper's to handle, as RFC 9112 §6.3 allows:
/// it frames by the former, drops the latter and closes the connection after the response.)
fn host_problem<B>(request: &http::Request<B>) -> Option<Problem> {
    if request.version() != http::Version::HTTP_11 {
        return None;
    }
    let mut hosts = request.headers().get_all(http::header::HOST).iter();
    let detail = match (hosts.next(), hosts.next()) {
        (Some(_), None) => return None,
        (None, _) => "An HTTP/1.1 request must carry a Host header.",
        (Some(_), Some(_)) => "The request carries more than one Host header.",
    };
    Some(Problem::status(http::StatusCode::BAD_REQUEST).with_detail(detail))
}

pin_project_lite::pin_project! {
    /// A request's future that counts as in flight until its response is produced (a streamed
    /// response: sent) or it is dropped (the client went away). Over HTTP/2, a response that
    /// says the request's stream broke ([`StreamError`]) becomes a stream reset instead.
    struct InFlight<F> {
        #[pin]
        future: F,
        state: Option<Arc<ConnState>>,
        http2: bool,
        sse_keep_alive: Option<Duration>,
    }

    impl<F> PinnedDrop for InFlight<F> {
        fn drop(this: Pin<&mut Self>) {
            if let Some(state) = this.project().state.take() {
                state.in_flight.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }
}

impl<F: Future<Output = Result<axum::response::Response, Infallible>>> Future for InFlight<F> {
    type Output = Result<axum::response::Response, StreamError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(mut response) = std::task::ready!(this.future.poll(cx));
        if let Some(state) = this.state.take() {
            if super::streaming::is_streamed(&response) {
                // Still in flight until its last chunk is sent: the body holds the count now.
                response = super::streaming::track(response, state, *this.sse_keep_alive);
            } else {
                state.in_flight.fetch_sub(1, Ordering::AcqRel);
            }
        }
        if *this.http2 {
            if let Some(broken) = response.extensions().get::<StreamError>() {
                return Poll::Ready(Err(broken.clone()));
            }
        }
        Poll::Ready(Ok(response))
    }
}
