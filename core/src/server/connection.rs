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
            Ok((stream, client)) => {
                backoff = Duration::from_millis(5);
                let registered = registry.register();
                let state = registered.state.clone();
                let task = tokio::spawn(serve_connection(stream, client, app.clone(), limits.clone(), registered));
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

/// One connection's task, which lives as long as the connection does, so what it holds while
/// it waits is what each idle connection costs. hyper's connection is boxed and dropped at a
/// rest, and the task captures only what it needs throughout and reuses those places for the
/// socket and service a rest hands back: with hyper's connection inline the task took 5.2 KiB,
/// boxed 2.4 KiB (the compiler kept slots for values already moved on), written this way
/// 0.8 KiB (`size_of_val` of the future, Rust server).
fn serve_connection<A: AppService>(
    stream: tokio::net::TcpStream,
    client: std::net::SocketAddr,
    app: A,
    limits: Arc<ConnectionLimits>,
    registered: Registered,
) -> impl Future<Output = ()> + Send {
    let state = registered.state.clone();
    let _ = stream.set_nodelay(true);
    let mut io = GuardedIo::new(stream, state.clone(), limits.clone());
    let registry = registered.registry().clone();
    // Decided once for the connection: a peer that is no trusted proxy pays nothing per request.
    let proxies = limits.proxies.clone().filter(|proxies| proxies.trusts(client.ip()));
    let mut service = ConnService { app, state: state.clone(), limits: limits.clone(), client: crate::request::ClientAddr(client), proxies, registry };
    async move {
        let protocol = tokio::select! {
            protocol = io.sniff() => protocol,
            _ = state.close.notified() => return,
        };
        match protocol {
            Ok(Protocol::Http1) => {
                while let Some(parts) = http1_until_rest(io, service, &state).await {
                    (io, service) = take_back(parts);
                    #[cfg(test)]
                    state.rests.fetch_add(1, Ordering::Relaxed);
                    if !rested(&mut io, &state).await {
                        break;
                    }
                }
                // Upgraded: the session runs here, so the registry still holds the connection
                // (busy) and the drain deadline can cut it off with the rest.
                if let Some(session) = state.upgraded.take() {
                    state.in_flight.fetch_add(1, Ordering::AcqRel);
                    session.await;
                }
            }
            Ok(Protocol::Http2) => http2_until_closed(io, service, &limits, &state).await,
            Ok(Protocol::Refused(status, detail)) => io.refuse(status, detail).await,
            Ok(Protocol::Neither | Protocol::Gone) | Err(_) => {}
        }
        drop(registered);
    }
}

/// hyper's HTTP/1 connection on `io`, driven until it ends or rests ([`drive_until_rest`]).
fn http1_until_rest<'a, A: AppService>(io: GuardedIo, service: ConnService<A>, state: &'a ConnState) -> Pin<Box<impl Future<Output = Option<Http1Parts<A>>> + 'a>> {
    let connection = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(io), service).with_upgrades();
    Box::pin(drive_until_rest(connection, state))
}

/// hyper's HTTP/2 connection on `io`, driven until it ends ([`drive_http2`]).
fn http2_until_closed<'a, A: AppService>(io: GuardedIo, service: ConnService<A>, limits: &ConnectionLimits, state: &'a ConnState) -> Pin<Box<impl Future<Output = ()> + 'a>> {
    let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
    builder
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.http2_max_concurrent_streams)
        .max_header_list_size(limits.http2_max_header_list_size)
        .keep_alive_interval(limits.http2_keep_alive_interval);
    Box::pin(drive_http2(builder.serve_connection(TokioIo::new(io), service), state))
}

type Http2<A> = hyper::server::conn::http2::Connection<TokioIo<GuardedIo>, ConnService<A>, TokioExecutor>;

/// Drives an HTTP/2 connection until it ends; asked to close, it finishes its streams first
/// (GOAWAY). HTTP/1's is [`drive_until_rest`].
async fn drive_http2<A: AppService>(connection: Http2<A>, state: &ConnState) {
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        _ = state.close.notified() => {}
    }
    connection.as_mut().graceful_shutdown();
    let _ = connection.await;
}

type Http1<A> = hyper::server::conn::http1::UpgradeableConnection<TokioIo<GuardedIo>, ConnService<A>>;
type Http1Parts<A> = hyper::server::conn::http1::Parts<TokioIo<GuardedIo>, ConnService<A>>;

/// Drives an HTTP/1 connection until it ends (`None`), or until it has waited
/// [`REST_AFTER`](super::io::REST_AFTER) for its next request with nothing left to send: then
/// hyper gives the socket, the bytes it read and did not parse, and the service back.
async fn drive_until_rest<A: AppService>(connection: Http1<A>, state: &ConnState) -> Option<Http1Parts<A>> {
    enum Stop {
        Ended,
        Closing,
        Rested,
    }
    let mut connection = connection;
    let mut closing = std::pin::pin!(state.close.notified());
    let stop = std::future::poll_fn(|cx| {
        state.resting.store(false, Ordering::Relaxed);
        match Pin::new(&mut connection).poll(cx) {
            Poll::Ready(_) => return Poll::Ready(Stop::Ended),
            // The socket flagged the rest in this very poll, in which hyper did nothing else.
            Poll::Pending if state.resting.load(Ordering::Relaxed) => return Poll::Ready(Stop::Rested),
            Poll::Pending => {}
        }
        closing.as_mut().poll(cx).map(|()| Stop::Closing)
    })
    .await;
    match stop {
        Stop::Ended => None,
        Stop::Closing => {
            Pin::new(&mut connection).graceful_shutdown();
            let _ = connection.await;
            None
        }
        Stop::Rested => connection.into_parts(),
    }
}

/// What hyper hands back at a rest: the socket, with the bytes it read and did not parse put
/// back in front of the next read, and the service.
fn take_back<A: AppService>(parts: Http1Parts<A>) -> (GuardedIo, ConnService<A>) {
    let mut io = parts.io.into_inner();
    io.rested(parts.read_buf);
    (io, parts.service)
}

/// A rested connection: hyper's buffers are gone; the socket waits for the client's next
/// bytes, under the keep-alive deadline, and the connection's next request gets a new hyper
/// connection. False when it is to close instead.
async fn rested(io: &mut GuardedIo, state: &ConnState) -> bool {
    tokio::select! {
        ready = io.next_request() => ready.is_ok(),
        _ = state.close.notified() => false,
    }
}

/// The app, seen from one connection: counts the connection's requests in flight (what
/// makes it busy or idle) and paces each request body.
#[derive(Clone)]
struct ConnService<A> {
    app: A,
    state: Arc<ConnState>,
    limits: Arc<ConnectionLimits>,
    /// The peer's address, given to each request (`RequestData::client`).
    client: crate::request::ClientAddr,
    /// `trusted_proxies` when the peer is one of them, so its requests' `X-Forwarded-*` are read.
    proxies: Option<Arc<crate::forwarded::TrustedProxies>>,
    /// The server's connections, for its switch to refuse new requests ([`super::Closing`]).
    registry: Arc<Registry>,
}

impl<A: AppService> hyper::service::Service<http::Request<Incoming>> for ConnService<A> {
    type Response = axum::response::Response;
    type Error = StreamError;
    type Future = Either<Ready<Result<axum::response::Response, StreamError>>, InFlight<A::Future>>;

    fn call(&self, mut request: http::Request<Incoming>) -> Self::Future {
        if self.registry.refusing.load(Ordering::Acquire) {
            return Either::Left(ready(Ok(super::closing_answer(request.version()))));
        }
        let head = HeadNames::of(request.headers(), self.proxies.is_some());
        if let Some(problem) = wire_problem(&request, &head).or_else(|| two_content_types(&request, &head)) {
            return Either::Left(ready(Ok(problem.into_http())));
        }
        let (upgrade, forwarded) = (head.upgrade, head.forwarded);
        let http2 = request.version() == http::Version::HTTP_2;
        if !http2 && !request.uri().path().starts_with('/') {
            if let Some(problem) = target_problem(&request) {
                return Either::Left(ready(Ok(problem.into_http())));
            }
        }
        if !http2 && request.uri().authority().is_some() {
            if let Some(problem) = host_of_absolute_target(&mut request) {
                return Either::Left(ready(Ok(problem.into_http())));
            }
        }
        self.state.started.fetch_add(1, Ordering::AcqRel);
        self.state.in_flight.fetch_add(1, Ordering::AcqRel);
        let mut request = request.map(|body| axum::body::Body::new(PacedBody::new(body, self.limits.clone(), &self.state)));
        // One boxed value: the map itself is made for every request anyway (axum's router
        // keeps its `OriginalUri` there).
        request.extensions_mut().insert(self.client);
        if let Some(proxies) = self.proxies.as_ref().filter(|_| forwarded) {
            crate::forwarded::believe(proxies, &mut request, self.client.0);
        }
        if http2 {
            host_from_authority(&mut request);
        }
        if !http2 && upgrade {
            request.extensions_mut().insert(super::UpgradeSlot::new(self.state.clone()));
        }
        let future = tower::Service::call(&mut self.app.clone(), request);
        Either::Right(InFlight { future, state: Some(self.state.clone()), http2, sse_keep_alive: self.limits.sse_keep_alive })
    }
}

/// The headers the connection reads before routing (`Host`, `Content-Type`, `Upgrade`), found
/// in one walk over the head. Three lookups by name (`get_all`, `get_all`, `contains_key`) each
/// hash the name and probe the map; for the few headers most requests carry, comparing each
/// one's name is cheaper: a json-small request (four headers; callgrind, 3,000 requests,
/// `ferrule-bench serve ferrule-rust`) took about 200 fewer instructions (the lookups and their
/// hashing 410, the walk 95 more in the service's `call`). A head of a few dozen headers costs
/// about what the lookups did.
struct HeadNames<'a> {
    /// The first `Host`.
    host: Option<&'a http::HeaderValue>,
    hosts: usize,
    content_types: usize,
    upgrade: bool,
    /// Whether any `X-Forwarded-*` came, looked for only on a trusted proxy's connection: only
    /// then is its word read ([`crate::forwarded`]). Callgrind, four headers as oha sends
    /// them: the read's own walk cost 188 instructions a request, this look 38 more in the
    /// walk, and a connection not from a trusted proxy pays one untaken branch a header.
    forwarded: bool,
}

impl<'a> HeadNames<'a> {
    fn of(headers: &'a http::HeaderMap, from_trusted_proxy: bool) -> Self {
        let mut head = HeadNames { host: None, hosts: 0, content_types: 0, upgrade: false, forwarded: false };
        // Every value, a repeated name's too.
        for (name, value) in headers {
            if name == http::header::HOST {
                head.host.get_or_insert(value);
                head.hosts += 1;
            } else if name == http::header::CONTENT_TYPE {
                head.content_types += 1;
            } else if name == http::header::UPGRADE {
                head.upgrade = true;
            } else if from_trusted_proxy && name.as_str().starts_with("x-forwarded-") {
                head.forwarded = true;
            }
        }
        head
    }
}

/// HTTP/2 names the host in `:authority`, which hyper keeps in the URI, not as `Host`: a
/// handler reads `Host` (a Starlette `request.url`, `header("host")`) over either protocol.
/// HTTP/1.1 requests carry `Host` already ([`wire_problem`]), so they pay nothing for this.
fn host_from_authority<B>(request: &mut http::Request<B>) {
    if request.headers().contains_key(http::header::HOST) {
        return;
    }
    let host = request.uri().authority().and_then(|authority| http::HeaderValue::from_str(authority.as_str()).ok());
    if let Some(host) = host {
        request.headers_mut().insert(http::header::HOST, host);
    }
}

/// An HTTP/1 request target that is neither a path (`/x`) nor a URI (`http://a.example/x`)
/// where only those may stand: `GET health` or `GET a.example:80` (authority form, which is
/// CONNECT's), `GET *` (asterisk form, which is OPTIONS'). RFC 9112 §3.2 has a server answer an
/// invalid target with a 400; routed, it was a 404 for the path `/`, or the root's answer.
/// Only targets that do not start with `/` (rare) are looked at.
fn target_problem<B>(request: &http::Request<B>) -> Option<Problem> {
    let uri = request.uri();
    let method = request.method();
    let allowed = uri.scheme().is_some() || *method == http::Method::CONNECT || (uri.path() == "*" && *method == http::Method::OPTIONS);
    (!allowed).then(|| Problem::status(http::StatusCode::BAD_REQUEST).with_detail("The request target is not a path or an absolute URI (RFC 9112 §3.2)."))
}

/// An HTTP/1 request with an absolute-form target (`GET http://a.example/x`, as a client
/// sends to a proxy) names its host there: RFC 9112 §3.2.2 has the server ignore `Host` and
/// use the target's, so that a proxy in front and the app agree on it (found by an attack
/// probe: the app read `Host: good` where the target said `evil.example`). Only such requests
/// (rare) pay for it.
/// The host is the authority's host and port, never its user information, and it must be a
/// host as `Host` must (found on review: `http://u:p@evil.example/` gave `Host: u:p@evil.example`,
/// past the check): a 400 otherwise.
fn host_of_absolute_target<B>(request: &mut http::Request<B>) -> Option<Problem> {
    let authority = request.uri().authority()?;
    let host = match authority.port() {
        Some(port) => format!("{}:{}", authority.host(), port.as_str()),
        None => authority.host().to_owned(),
    };
    match http::HeaderValue::from_str(&host) {
        Ok(value) if is_host(value.as_bytes()) && !authority.as_str().contains('@') => {
            request.headers_mut().insert(http::header::HOST, value);
            None
        }
        _ => Some(Problem::status(http::StatusCode::BAD_REQUEST).with_detail("The request target's host is not a host.")),
    }
}

/// What an HTTP/1 request's head must get right before anything reads it, checked here, on
/// the wire, so in-process calls of the router need none (HTTP/2 carries `:authority` and has
/// no transfer codings):
/// * exactly one `Host` in HTTP/1.1, at most one in HTTP/1.0 (which may omit it), with a value
///   a host can have (RFC 9112 §3.2: a server MUST answer 400 to any request otherwise). Two
///   hosts, or one like `a b`, are how request-smuggling and cache-poisoning attempts make a
///   proxy and a server disagree about where a request goes;
/// * no transfer coding but `chunked`: hyper frames a `gzip, chunked` body by its chunks and
///   would hand the handler bytes still gzipped, "changed" input. RFC 9112 §6.1 asks for a 501;
///   the connection closes, as the body is not read.
/// * `chunked` once ([`unknown_coding`]).
///
/// (`Transfer-Encoding` beside `Content-Length` is hyper's to handle, as RFC 9112 §6.3 allows:
/// it frames by the former, drops the latter and closes the connection after the response.)
///
/// The codings are looked up only for a body of no known length: hyper frames every HTTP/1.1
/// request that has a `Transfer-Encoding` by its chunks (one whose last coding is not `chunked`
/// it refuses with a 400 itself), so a body whose length is known came without one. Most
/// requests (no body, or a `Content-Length`) skip the lookup: 115 instructions.
fn wire_problem<B: hyper::body::Body>(request: &http::Request<B>, head: &HeadNames<'_>) -> Option<Problem> {
    let http11 = match request.version() {
        http::Version::HTTP_11 => true,
        http::Version::HTTP_10 | http::Version::HTTP_09 => false,
        _ => return None,
    };
    let detail = match (head.host, head.hosts > 1) {
        (Some(host), false) if is_host(host.as_bytes()) => {
            // HTTP/1.0 has no transfer codings for hyper to frame a body by.
            let framed_by_chunks = http11 && request.body().size_hint().exact().is_none();
            return if framed_by_chunks { unknown_coding(request.headers()) } else { None };
        }
        (None, _) if !http11 => return None,
        (Some(_), false) => "The Host header is not a host.",
        (None, _) => "An HTTP/1.1 request must carry a Host header.",
        (Some(_), true) => "The request carries more than one Host header.",
    };
    Some(Problem::status(http::StatusCode::BAD_REQUEST).with_detail(detail))
}

/// A body with two `Content-Type`s is a 400 (found by an attack probe: the first was taken, where
/// a proxy or filter in front may read the last, so the two disagree about what the body is).
/// Looked up only for a request that has a body; most have none (their size is exactly 0).
fn two_content_types<B: hyper::body::Body>(request: &http::Request<B>, head: &HeadNames<'_>) -> Option<Problem> {
    if request.body().size_hint().exact() == Some(0) {
        return None;
    }
    (head.content_types > 1).then(|| Problem::status(http::StatusCode::BAD_REQUEST).with_detail("The request carries more than one Content-Type header.").closing())
}

/// RFC 3986's `host [ ":" port ]`: a name of its characters (unreserved, sub-delims and `%`) or
/// an IP literal in brackets (those and `:`), then nothing or a port of digits; or empty (a
/// target with no authority). Found by an attack probe: `[::1`, `a:80:80`, `a:-1` and
/// `127.0.0.1:0x50` were served, and a handler read `[::1` as a host name.
///
/// Every request pays this, so it is one pass with one table lookup a byte. Asking for each
/// byte whether it is among 20 punctuation marks cost 174 instructions for `127.0.0.1:8000`;
/// a table, then a search for the colon, the port's digits and the name's brackets, each a
/// pass of its own, 298 (callgrind, json-small, `ferrule-bench serve ferrule-rust`); this, 117.
fn is_host(value: &[u8]) -> bool {
    let port = match value {
        [b'[', literal @ ..] => match literal.iter().position(|&b| !(NAME_BYTES[b as usize] || b == b':')) {
            Some(end) if literal[end] == b']' => &literal[end + 1..],
            _ => return false,
        },
        name => match name.iter().position(|&b| !NAME_BYTES[b as usize]) {
            Some(end) => &name[end..],
            None => &[],
        },
    };
    match port {
        [] => true,
        [b':', digits @ ..] => digits.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// The bytes of a host name, or of an IP literal but its `:`s: RFC 3986's unreserved and
/// sub-delims, and `%` (a percent-encoded name, or an IPv6 zone).
const NAME_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = (byte as u8).is_ascii_alphanumeric();
        byte += 1;
    }
    let punctuation = b"-._~!$&'()*+,;=%";
    let mut i = 0;
    while i < punctuation.len() {
        table[punctuation[i] as usize] = true;
        i += 1;
    }
    table
};

/// Empty list elements are skipped (RFC 9110 §5.6.1; a list that ends in one hyper refuses
/// itself, its last coding not being `chunked`); `chunked` twice is a 400, as RFC 9112
/// §6.1 forbids it: hyper would undo one and hand the handler the other's framing as data, and
/// a proxy in front may have undone both.
fn unknown_coding(headers: &http::HeaderMap) -> Option<Problem> {
    let mut chunked = 0;
    for value in headers.get_all(http::header::TRANSFER_ENCODING) {
        for coding in value.to_str().unwrap_or("?").split(',').map(str::trim).filter(|coding| !coding.is_empty()) {
            if !coding.eq_ignore_ascii_case("chunked") {
                return Some(Problem::status(http::StatusCode::NOT_IMPLEMENTED).with_detail("Only the chunked transfer coding is understood.").closing());
            }
            chunked += 1;
        }
    }
    (chunked > 1).then(|| Problem::status(http::StatusCode::BAD_REQUEST).with_detail("The chunked transfer coding is applied more than once.").closing())
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpStream;

    const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nhost: a\r\n\r\n";

    /// A body of no known length, as hyper frames one that has a `Transfer-Encoding`.
    struct Chunked;

    impl hyper::body::Body for Chunked {
        type Data = bytes::Bytes;
        type Error = Infallible;

        fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<hyper::body::Frame<bytes::Bytes>, Infallible>>> {
            Poll::Ready(None)
        }
    }

    fn head(headers: &[(&str, &str)]) -> http::Request<Chunked> {
        let mut request = http::Request::new(Chunked);
        for (name, value) in headers {
            request.headers_mut().append(http::HeaderName::from_bytes(name.as_bytes()).unwrap(), http::HeaderValue::from_str(value).unwrap());
        }
        request
    }

    #[test]
    fn the_name_table_holds_rfc_3986s_host_name_characters_and_nothing_else() {
        for byte in 0..=255u8 {
            let listed = byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=%".contains(&byte);
            assert_eq!(NAME_BYTES[byte as usize], listed, "byte {byte:#04x}");
        }
    }

    /// The check as it was written before it became one pass: every byte a host byte, an IP
    /// literal closed, a port of digits, no bracket in a name.
    fn is_host_in_passes(value: &[u8]) -> bool {
        if !value.iter().all(|&b| NAME_BYTES[b as usize] || b":[]".contains(&b)) {
            return false;
        }
        let (name, port) = match value.first() {
            Some(b'[') => match value.iter().position(|&b| b == b']') {
                Some(end) => (&value[1..end], &value[end + 1..]),
                None => return false,
            },
            _ => match value.iter().position(|&b| b == b':') {
                Some(colon) => (&value[..colon], &value[colon..]),
                None => (value, &[][..]),
            },
        };
        let port_ok = match port.split_first() {
            None => true,
            Some((b':', digits)) => digits.iter().all(u8::is_ascii_digit),
            Some(_) => false,
        };
        port_ok && !name.iter().any(|&b| b == b'[' || b == b']')
    }

    #[test]
    fn the_one_pass_check_agrees_with_the_check_in_passes_on_every_short_value() {
        // Every value of up to five bytes over the bytes the rules tell apart.
        let alphabet = b"a1:[]%-@/ x";
        let mut values: Vec<Vec<u8>> = vec![Vec::new()];
        let mut last = values.clone();
        for _ in 0..5 {
            last = last.iter().flat_map(|value| alphabet.iter().map(move |&b| [value.as_slice(), &[b]].concat())).collect();
            values.extend(last.iter().cloned());
        }
        for value in values {
            assert_eq!(is_host(&value), is_host_in_passes(&value), "{:?}", String::from_utf8_lossy(&value));
        }
    }

    #[test]
    fn the_head_walk_counts_every_value_of_a_repeated_name() {
        let request = head(&[("Host", "a"), ("content-type", "a/b"), ("upgrade", "websocket"), ("content-type", "c/d"), ("accept", "*/*")]);
        let found = HeadNames::of(request.headers(), false);
        assert_eq!((found.host.map(|h| h.as_bytes()), found.hosts, found.content_types, found.upgrade), (Some(&b"a"[..]), 1, 2, true));
        let request = head(&[("accept", "*/*")]);
        let found = HeadNames::of(request.headers(), false);
        assert_eq!((found.host, found.hosts, found.content_types, found.upgrade), (None, 0, 0, false));
        // `X-Forwarded-*` is looked for only on a trusted proxy's connection.
        let request = head(&[("accept", "*/*"), ("X-Forwarded-Proto", "https")]);
        assert!(HeadNames::of(request.headers(), true).forwarded);
        assert!(!HeadNames::of(request.headers(), false).forwarded);
        assert!(!HeadNames::of(head(&[("x-forwarded", "a")]).headers(), true).forwarded);
    }

    #[test]
    fn a_body_with_two_content_types_is_400() {
        let mut request = head(&[("host", "a"), ("content-type", "application/json"), ("content-type", "text/plain")]);
        assert_eq!(two_content_types(&request, &HeadNames::of(request.headers(), false)).map(|p| p.status), Some(400));
        request.headers_mut().remove(http::header::CONTENT_TYPE);
        request.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
        assert!(two_content_types(&request, &HeadNames::of(request.headers(), false)).is_none());
    }

    #[test]
    fn a_host_is_a_name_or_an_ip_literal_and_a_port_of_digits() {
        for host in ["a", "a:", "a:80", "127.0.0.1:8000", "[::1]", "[::1]:80", "[v1.x]", "", "xn--caf-dma.example"] {
            assert!(is_host(host.as_bytes()), "{host}");
        }
        for host in ["[::1", "a:80:80", "a:-1", "127.0.0.1:0x50", "a]", "a[b]", "[::1]x", "[::1]:8a", "::1"] {
            assert!(!is_host(host.as_bytes()), "{host}");
        }
    }

    #[test]
    fn a_target_that_is_no_path_is_refused_where_only_a_path_may_stand() {
        let status = |method: &str, target: &str| {
            let request = http::Request::builder().method(method).uri(target).body(()).unwrap();
            target_problem(&request).map(|problem| problem.status)
        };
        // Found by a protocol probe: `GET health` and `GET *` were routed to `/` (a 404).
        assert_eq!(status("GET", "health"), Some(400));
        assert_eq!(status("GET", "a.example:80"), Some(400));
        assert_eq!(status("GET", "*"), Some(400));
        assert_eq!(status("OPTIONS", "*"), None, "the asterisk form is OPTIONS'");
        assert_eq!(status("CONNECT", "a.example:443"), None, "the authority form is CONNECT's");
        assert_eq!(status("GET", "http://a.example"), None, "an absolute URI without a path");
    }

    // Found by a core-HTTP probe: `Host: a b` was served, and a `gzip, chunked` body reached the
    // handler still gzipped.
    #[test]
    fn a_host_that_is_no_host_is_400_a_coding_other_than_chunked_501_and_chunked_twice_400() {
        let problem = |headers: &[(&str, &str)]| {
            let request = head(headers);
            wire_problem(&request, &HeadNames::of(request.headers(), false))
        };
        let status = |headers: &[(&str, &str)]| problem(headers).map(|p| p.status);
        for host in ["a", "example.com:8080", "[::1]:80", "", "xn--caf-dma.example"] {
            assert_eq!(status(&[("host", host)]), None, "{host}");
        }
        for host in ["a b", "a, b", "a/b", "a@b"] {
            assert_eq!(status(&[("host", host)]), Some(400), "{host}");
        }
        assert_eq!(status(&[("host", "a"), ("host", "a")]), Some(400));
        assert_eq!(status(&[("host", "a"), ("accept", "*/*"), ("host", "b")]), Some(400));
        assert_eq!(status(&[("accept", "*/*")]), Some(400), "HTTP/1.1 without a Host");
        let mut old = head(&[("accept", "*/*")]);
        *old.version_mut() = http::Version::HTTP_10;
        assert!(wire_problem(&old, &HeadNames::of(old.headers(), false)).is_none(), "HTTP/1.0 may omit it");
        assert_eq!(status(&[("host", "a"), ("transfer-encoding", "chunked")]), None);
        assert_eq!(status(&[("host", "a"), ("transfer-encoding", "Chunked")]), None);
        for coding in ["gzip, chunked", "foo"] {
            assert_eq!(status(&[("host", "a"), ("transfer-encoding", coding)]), Some(501), "{coding}");
        }
        assert_eq!(status(&[("host", "a"), ("transfer-encoding", "foo"), ("transfer-encoding", "chunked")]), Some(501));
        // Found by an attack pass: an empty element was refused, `chunked` twice was served.
        assert_eq!(status(&[("host", "a"), ("transfer-encoding", ", chunked")]), None);
        assert_eq!(status(&[("host", "a"), ("transfer-encoding", "chunked, chunked")]), Some(400));
        assert_eq!(status(&[("host", "a"), ("transfer-encoding", "chunked"), ("transfer-encoding", "chunked")]), Some(400));
        assert!(problem(&[("host", "a"), ("transfer-encoding", "gzip, chunked")]).unwrap().close_connection);
    }

    /// Sends the request on `stream` and reads the response by its `content-length`; returns
    /// the status line.
    fn ask(stream: &mut TcpStream) -> String {
        stream.write_all(REQUEST).unwrap();
        answer_on(stream).0
    }

    /// The next response on `stream`, read by its `content-length`: its status line and body.
    fn answer_on(stream: &mut TcpStream) -> (String, Vec<u8>) {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut head = String::new();
        while !head.ends_with("\r\n\r\n") {
            assert!(reader.read_line(&mut head).unwrap() > 0, "closed after {head:?}");
        }
        let length = head.lines().find_map(|line| line.strip_prefix("content-length: ")).map_or(0, |n| n.parse().unwrap());
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        assert!(reader.buffer().is_empty(), "one response at a time");
        (head.lines().next().unwrap_or_default().to_owned(), body)
    }

    /// `app` served on 127.0.0.1 by the accept loop, on a runtime of one worker: the runtime
    /// (serving while kept), the connections' registry, what stops it, and the address.
    fn served(app: axum::Router) -> (tokio::runtime::Runtime, Arc<Registry>, oneshot::Sender<()>, std::net::SocketAddr) {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let registry = Arc::new(Registry::default());
        let (stop, stopped) = oneshot::channel();
        let addr = runtime.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let limits = Arc::new(ConnectionLimits::from_config(&crate::AppConfig::default()));
            tokio::spawn(accept_loop(listener, app, limits, registry.clone(), stopped));
            addr
        });
        (runtime, registry, stop, addr)
    }

    #[test]
    fn an_absolute_form_target_names_the_host_the_app_reads() {
        let host = |headers: http::HeaderMap| async move { headers.get(http::header::HOST).map(|h| h.to_str().unwrap().to_owned()).unwrap_or_default() };
        let (_runtime, _registry, _stop, addr) = served(axum::Router::new().route("/h", axum::routing::get(host)));
        let answer = |request: &[u8]| {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
            stream.write_all(request).unwrap();
            let mut text = String::new();
            let _ = stream.read_to_string(&mut text);
            text
        };
        let proxied = answer(b"GET http://target.example:8080/h HTTP/1.1\r\nhost: good\r\nconnection: close\r\n\r\n");
        assert!(proxied.starts_with("HTTP/1.1 200") && proxied.ends_with("\r\n\r\ntarget.example:8080"), "{proxied}");
        let plain = answer(b"GET /h HTTP/1.1\r\nhost: good\r\nconnection: close\r\n\r\n");
        assert!(plain.ends_with("\r\n\r\ngood"), "{plain}");
        // User information is no part of a host (found on review: it reached the app).
        let with_user = answer(b"GET http://u:p@evil.example/h HTTP/1.1\r\nhost: good\r\nconnection: close\r\n\r\n");
        assert!(with_user.starts_with("HTTP/1.1 400"), "{with_user}");
    }

    #[test]
    fn while_the_app_closes_a_new_request_is_503_and_ends_its_connection_and_one_in_progress_is_served() {
        let (release, released) = std::sync::mpsc::channel::<()>();
        let released = Arc::new(std::sync::Mutex::new(released));
        let slow = move || {
            let released = released.clone();
            async move {
                tokio::task::spawn_blocking(move || released.lock().unwrap().recv_timeout(std::time::Duration::from_secs(10))).await.unwrap().unwrap();
                "done"
            }
        };
        let app = axum::Router::new().route("/", axum::routing::get(|| async { "ok" })).route("/slow", axum::routing::get(slow));
        let (_runtime, registry, _stop, addr) = served(app);
        let connect = || {
            let stream = TcpStream::connect(addr).unwrap();
            stream.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
            stream
        };
        let mut in_progress = connect();
        in_progress.write_all(b"GET /slow HTTP/1.1\r\nhost: a\r\n\r\n").unwrap();
        let started = std::time::Instant::now();
        while registry.states().iter().all(|c| c.is_idle()) {
            assert!(started.elapsed() < std::time::Duration::from_secs(10), "the slow request never started");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let mut kept_alive = connect();
        assert_eq!(ask(&mut kept_alive), "HTTP/1.1 200 OK");

        let closing = super::super::Closing { registry: registry.clone() };
        closing.refuse_requests(true);
        // On the connection kept alive and on a new one alike: 503, a problem, and the end.
        for mut stream in [kept_alive, connect()] {
            stream.write_all(REQUEST).unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).unwrap();
            assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
            assert!(answer.contains("\r\nconnection: close\r\n") && answer.contains("application/problem+json"), "{answer}");
            assert!(answer.ends_with("}"), "{answer}");
        }
        release.send(()).unwrap();
        assert_eq!(answer_on(&mut in_progress), ("HTTP/1.1 200 OK".to_owned(), b"done".to_vec()));

        closing.refuse_requests(false);
        assert_eq!(ask(&mut connect()), "HTTP/1.1 200 OK");
    }

    #[test]
    fn a_quiet_keep_alive_connection_rests_and_a_busy_one_does_not() {
        let (_runtime, registry, _stop, addr) = served(axum::Router::new().route("/", axum::routing::get(|| async { "ok" })));
        let mut quiet = TcpStream::connect(addr).unwrap();
        let mut busy = TcpStream::connect(addr).unwrap();
        for stream in [&mut quiet, &mut busy] {
            stream.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
            assert_eq!(ask(stream), "HTTP/1.1 200 OK");
        }
        let rests = |registry: &Registry| {
            let mut counts: Vec<usize> = registry.states().iter().map(|s| s.rests.load(Ordering::Relaxed)).collect();
            counts.sort();
            counts
        };
        // The busy one asks every 100 ms for 1.5 rest periods, and on until the quiet one has
        // rested (a loaded machine fires its timer late; 10 s at most); the quiet one says nothing.
        let started = std::time::Instant::now();
        let rest = super::super::io::REST_AFTER;
        while started.elapsed() < rest * 3 / 2 || (rests(&registry) == [0, 0] && started.elapsed() < std::time::Duration::from_secs(10)) {
            std::thread::sleep(std::time::Duration::from_millis(100));
            assert_eq!(ask(&mut busy), "HTTP/1.1 200 OK");
        }
        // And 1.5 periods more: the one rest seen could be the busy one's, had the quiet one's
        // timer come late; the quiet one would then rest now too.
        let seen = std::time::Instant::now();
        while seen.elapsed() < rest * 3 / 2 {
            std::thread::sleep(std::time::Duration::from_millis(100));
            assert_eq!(ask(&mut busy), "HTTP/1.1 200 OK");
        }
        assert_eq!(rests(&registry), [0, 1], "the quiet connection rested once, the busy one never");
        // A rested connection serves its next request, and another after it.
        for _ in 0..2 {
            assert_eq!(ask(&mut quiet), "HTTP/1.1 200 OK");
        }
        assert_eq!(rests(&registry), [0, 1]);
    }

    /// A connection's task lives as long as the connection, resting or not: what it keeps
    /// room for is what every idle connection costs. With hyper's connection inline (or
    /// room kept for values already moved on) it was 5.2 KiB.
    #[test]
    fn a_connection_task_keeps_no_room_for_hyper_connection() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let _client = tokio::net::TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
            let (stream, client) = listener.accept().await.unwrap();
            let registry = Arc::new(Registry::default());
            let limits = Arc::new(ConnectionLimits::from_config(&crate::AppConfig::default()));
            let task = serve_connection(stream, client, axum::Router::new(), limits, registry.register());
            let size = std::mem::size_of_val(&task);
            assert!(size <= 1024, "the task takes {size} bytes");
        });
    }
}
