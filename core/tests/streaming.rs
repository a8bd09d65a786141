//! Streamed responses over a real socket: chunks leave as they are produced, a client that
//! stops reading holds the producer back, event streams are kept alive and end at shutdown,
//! a failure cuts a byte stream off but ends an event stream, streams are not compressed, and
//! over HTTP/2 chunks are data frames.

use bytes::Bytes;
use ferrule_core::stream::{BodyStream, BoxError, Event};
use ferrule_core::http;
use ferrule_core::{App, AppConfig, RequestData, Response, RouteSpec};
use futures_util::StreamExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn serve(app: App) -> ferrule_core::Server {
    app.serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()).await.unwrap()
}

async fn request(server: &ferrule_core::Server, head: &str) -> TcpStream {
    let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// Reads until `text` has arrived (or the connection ends); returns everything read so far.
async fn read_until(stream: &mut TcpStream, seen: &mut String, text: &str) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 4096];
    while !seen.contains(text) {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return false,
            Ok(Ok(n)) => seen.push_str(&String::from_utf8_lossy(&buf[..n])),
        }
    }
    true
}

async fn read_to_end(stream: &mut TcpStream) -> String {
    let mut all = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut all)).await.expect("the connection ends");
    String::from_utf8_lossy(&all).into_owned()
}

/// A stream fed by the test: one chunk per `send`, ended by dropping the sender.
fn fed() -> (tokio::sync::mpsc::UnboundedSender<&'static str>, Arc<Mutex<Option<BodyStream>>>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<&'static str>();
    let chunks = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (Ok::<_, BoxError>(c), rx)) });
    (tx, Arc::new(Mutex::new(Some(BodyStream::new(chunks)))))
}

#[tokio::test]
async fn chunks_reach_the_client_as_they_are_produced() {
    let (feed, body) = fed();
    let app = App::new().route(RouteSpec::get("/feed"), move |_: RequestData| {
        let body = body.lock().unwrap().take().expect("one request");
        async move { Response::stream(body).with_header(http::header::CONTENT_TYPE, http::HeaderValue::from_static("text/plain")) }
    });
    let server = serve(app).await;
    let mut client = request(&server, "GET /feed HTTP/1.1\r\nHost: t\r\n\r\n").await;
    let mut seen = String::new();
    feed.send("first").unwrap();
    assert!(read_until(&mut client, &mut seen, "first").await, "the first chunk arrives before the stream ends: {seen:?}");
    assert!(seen.contains("transfer-encoding: chunked") && !seen.contains("content-length"), "{seen}");
    feed.send("second").unwrap();
    assert!(read_until(&mut client, &mut seen, "second").await, "{seen:?}");
    drop(feed);
    assert!(read_until(&mut client, &mut seen, "\r\n0\r\n\r\n").await, "the last chunk ends the response: {seen:?}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_client_that_stops_reading_holds_the_producer_back() {
    let produced = Arc::new(AtomicUsize::new(0));
    let counter = produced.clone();
    let app = App::new().route(RouteSpec::get("/endless"), move |_: RequestData| {
        let counter = counter.clone();
        async move {
            let chunks = futures_util::stream::repeat_with(move || {
                counter.fetch_add(1, Ordering::Relaxed);
                Ok::<_, BoxError>(Bytes::from(vec![b'x'; 64 * 1024]))
            });
            Response::stream(BodyStream::new(chunks))
        }
    });
    let server = serve(app).await;
    let mut client = request(&server, "GET /endless HTTP/1.1\r\nHost: t\r\n\r\n").await;
    let mut seen = String::new();
    assert!(read_until(&mut client, &mut seen, "\r\n\r\n").await);
    // The client reads nothing more: the socket's buffers fill and production stops.
    let mut last = usize::MAX;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = produced.load(Ordering::Relaxed);
        if now == last {
            break;
        }
        last = now;
    }
    assert_eq!(produced.load(Ordering::Relaxed), last, "production stopped while the client read nothing");
    // Bounded by the kernel's socket buffers (a few MiB on loopback), not by the stream.
    assert!(last * 64 * 1024 < 64 * 1024 * 1024, "{last} chunks were produced for a client that read none");
    drop(client);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_event_stream_is_kept_alive_while_quiet_and_ends_at_shutdown() {
    let config = AppConfig { sse_keep_alive_ms: 50, shutdown_timeout_ms: 10_000, ..Default::default() };
    let app = App::with_config(config).route(RouteSpec::get("/events"), |_: RequestData| async {
        let first = futures_util::stream::iter([Event::data("hello").with_id("1")]);
        Response::events(BodyStream::events(first.chain(futures_util::stream::pending())))
    });
    let server = serve(app).await;
    let mut client = request(&server, "GET /events HTTP/1.1\r\nHost: t\r\n\r\n").await;
    let mut seen = String::new();
    assert!(read_until(&mut client, &mut seen, "id: 1\ndata: hello\n\n").await, "{seen:?}");
    let head = seen.to_ascii_lowercase();
    assert!(head.contains("content-type: text/event-stream") && head.contains("cache-control: no-cache"), "{seen}");
    assert!(head.contains("x-accel-buffering: no"), "{seen}");
    assert!(read_until(&mut client, &mut seen, ":\n\n").await, "a quiet stream gets a keep-alive comment: {seen:?}");
    // The stream never ends by itself; the drain must not wait for its 10 s deadline.
    let shutdown = tokio::spawn(server.shutdown());
    let rest = read_to_end(&mut client).await;
    assert!(rest.ends_with("0\r\n\r\n"), "the stream ends with its last chunk, not a cut: {rest:?}");
    shutdown.await.unwrap().expect("a clean drain, no connection cut off");
}

// sse_starlette's `EventSourceResponse(..., ping=5)` (found by a FastAPI port: a TypeError):
// a stream's own keep-alive period replaces the app's, and zero turns it off.
#[tokio::test]
async fn an_event_stream_keeps_its_own_keep_alive_period() {
    let config = AppConfig { sse_keep_alive_ms: 3_600_000, shutdown_timeout_ms: 10_000, ..Default::default() };
    let app = App::with_config(config).route(RouteSpec::get("/events"), |_: RequestData| async {
        let first = futures_util::stream::iter([Event::data("hello")]);
        Response::events(BodyStream::events(first.chain(futures_util::stream::pending())).keep_alive_every(std::time::Duration::from_millis(50)))
    });
    let server = serve(app).await;
    let mut client = request(&server, "GET /events HTTP/1.1\r\nHost: t\r\n\r\n").await;
    let mut seen = String::new();
    assert!(read_until(&mut client, &mut seen, "data: hello\n\n").await, "{seen:?}");
    assert!(read_until(&mut client, &mut seen, ":\n\n").await, "its own 50 ms, not the app's hour: {seen:?}");
    let shutdown = tokio::spawn(server.shutdown());
    read_to_end(&mut client).await;
    shutdown.await.unwrap().expect("a clean drain");
}

#[tokio::test]
async fn a_failure_cuts_a_byte_stream_off_and_ends_an_event_stream() {
    let app = App::new()
        .route(RouteSpec::get("/bytes"), |_: RequestData| async {
            let chunks = futures_util::stream::iter([Ok::<_, BoxError>(Bytes::from_static(b"partial")), Err("the producer broke".into())]);
            Response::stream(BodyStream::new(chunks))
        })
        .route(RouteSpec::get("/events"), |_: RequestData| async {
            let chunks = futures_util::stream::iter([Ok::<_, BoxError>(Event::data("whole").encode().unwrap()), Err("the producer broke".into())]);
            Response::events(BodyStream::new(chunks))
        });
    let server = serve(app).await;
    let mut bytes = request(&server, "GET /bytes HTTP/1.1\r\nHost: t\r\n\r\n").await;
    let cut = read_to_end(&mut bytes).await;
    assert!(cut.contains("partial") && !cut.ends_with("0\r\n\r\n"), "no last chunk: the client knows it is incomplete: {cut:?}");
    let mut events = request(&server, "GET /events HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").await;
    let ended = read_to_end(&mut events).await;
    assert!(ended.contains("data: whole\n\n") && ended.ends_with("0\r\n\r\n"), "{ended:?}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn streams_are_not_compressed_but_whole_bodies_are() {
    let config = AppConfig { compression: Some(Default::default()), ..Default::default() };
    let big = "word ".repeat(400);
    let whole = big.clone();
    let app = App::with_config(config)
        .route(RouteSpec::get("/whole"), move |_: RequestData| {
            let body = whole.clone();
            async move { body }
        })
        .route(RouteSpec::get("/stream"), move |_: RequestData| {
            let body = big.clone();
            async move { Response::stream(BodyStream::new(futures_util::stream::iter([Ok::<_, BoxError>(body)]))) }
        });
    let server = serve(app).await;
    for (path, compressed) in [("/whole", true), ("/stream", false)] {
        let mut client = request(&server, &format!("GET {path} HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n")).await;
        let answer = read_to_end(&mut client).await.to_ascii_lowercase();
        assert_eq!(answer.contains("content-encoding: gzip"), compressed, "{path}: {answer:.300}");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn over_http2_chunks_are_data_frames_sent_as_they_are_produced() {
    let (feed, body) = fed();
    let app = App::new().route(RouteSpec::get("/feed"), move |_: RequestData| {
        let body = body.lock().unwrap().take().expect("one request");
        async move { Response::stream(body) }
    });
    let server = serve(app).await;
    let tcp = TcpStream::connect(server.local_addr()).await.unwrap();
    let (mut client, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let request = http::Request::get(format!("http://{}/feed", server.local_addr())).body(()).unwrap();
    let (response, _) = client.send_request(request, true).unwrap();
    feed.send("first").unwrap();
    let mut body = response.await.unwrap().into_body();
    let first = tokio::time::timeout(Duration::from_secs(10), body.data()).await.expect("a frame").unwrap().unwrap();
    assert_eq!(&first[..], b"first", "the first chunk is a frame of its own, before the stream ends");
    let _ = body.flow_control().release_capacity(first.len());
    feed.send("second").unwrap();
    drop(feed);
    let mut rest = Vec::new();
    while let Some(chunk) = body.data().await {
        rest.extend_from_slice(&chunk.unwrap());
    }
    assert_eq!(rest, b"second");
    server.shutdown().await.unwrap();
}
