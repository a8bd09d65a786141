//! The server itself: HTTP/1.1 keep-alive, HTTP/2 cleartext (prior knowledge), graceful
//! shutdown that drains in-flight requests, and a panicking handler that leaves the server up.

use ferrule_core::{App, AppConfig, RequestData, RouteSpec};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How many `/slow` requests have reached their handler (one test asks for it).
static SLOW_STARTED: AtomicUsize = AtomicUsize::new(0);

fn app() -> App {
    App::with_config(AppConfig { shutdown_timeout_ms: 5_000, ..Default::default() })
        .route(RouteSpec::get("/hello"), |_: RequestData| async { "hello" })
        .route(RouteSpec::get("/slow"), |_: RequestData| async {
            SLOW_STARTED.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(400)).await;
            "slept"
        })
        .route(RouteSpec::get("/panic"), |_: RequestData| async {
            if true {
                panic!("handler bug");
            }
            "unreachable"
        })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// Reads one HTTP/1.1 response (status line, headers, Content-Length body) from a stream.
fn read_response(reader: &mut BufReader<TcpStream>) -> (String, String) {
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    (status.trim().to_owned(), String::from_utf8(body).unwrap())
}

#[test]
fn keep_alive_serves_several_requests_on_one_connection() {
    let rt = runtime();
    let server = rt.block_on(async { app().serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()).await.unwrap() });
    let stream = TcpStream::connect(server.local_addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    for _ in 0..3 {
        writer.write_all(b"GET /hello HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
        assert_eq!(read_response(&mut reader), ("HTTP/1.1 200 OK".to_owned(), "hello".to_owned()));
    }
    rt.block_on(server.shutdown()).unwrap();
}

/// One GET over HTTP/2 with prior knowledge (h2c): the response's head and its whole body.
async fn h2_get(addr: std::net::SocketAddr, path: &str) -> (http::response::Parts, Vec<u8>) {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut client, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let request = http::Request::get(format!("http://{addr}{path}")).body(()).unwrap();
    let (response, _) = client.send_request(request, true).unwrap();
    let (head, mut body) = response.await.unwrap().into_parts();
    let mut bytes = Vec::new();
    while let Some(chunk) = body.data().await {
        bytes.extend_from_slice(&chunk.unwrap());
    }
    (head, bytes)
}

#[test]
fn http2_cleartext_with_prior_knowledge() {
    let rt = runtime();
    rt.block_on(async {
        let server = app().serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()).await.unwrap();
        let (head, body) = h2_get(server.local_addr(), "/hello").await;
        assert_eq!((head.status, head.version), (http::StatusCode::OK, http::Version::HTTP_2));
        assert_eq!(body, b"hello");
        server.shutdown().await.unwrap();
    });
}

#[test]
fn shutdown_drains_in_flight_requests_and_refuses_new_ones() {
    let rt = runtime();
    let server = rt.block_on(async { app().serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()).await.unwrap() });
    let addr = server.local_addr();
    let in_flight = std::thread::spawn(move || {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut writer = stream.try_clone().unwrap();
        writer.write_all(b"GET /slow HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
        read_response(&mut BufReader::new(stream))
    });
    // The drain starts once the request is in its handler, not after a guess at how long that
    // takes: on a loaded machine it may not have been read yet.
    let deadline = Instant::now() + Duration::from_secs(10);
    while SLOW_STARTED.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    rt.block_on(server.shutdown()).expect("drained within the deadline");
    assert_eq!(in_flight.join().unwrap(), ("HTTP/1.1 200 OK".to_owned(), "slept".to_owned()));
    assert!(TcpStream::connect(addr).is_err(), "no new connections after shutdown");
}

#[test]
fn a_panicking_handler_is_a_500_and_the_server_stays_up() {
    let rt = runtime();
    let server = rt.block_on(async { app().serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()).await.unwrap() });
    for path in ["/panic", "/hello", "/panic", "/hello"] {
        let stream = TcpStream::connect(server.local_addr()).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut writer = stream.try_clone().unwrap();
        writer.write_all(format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").as_bytes()).unwrap();
        let (status, body) = read_response(&mut BufReader::new(stream));
        if path == "/panic" {
            assert_eq!(status, "HTTP/1.1 500 Internal Server Error");
            assert!(!body.contains("handler bug"), "{body}");
        } else {
            assert_eq!((status.as_str(), body.as_str()), ("HTTP/1.1 200 OK", "hello"));
        }
    }
    rt.block_on(server.shutdown()).unwrap();
}

/// One GET on a fresh connection: the status line and body.
fn get(addr: std::net::SocketAddr, path: &str) -> (String, String) {
    let stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut writer = stream.try_clone().unwrap();
    writer.write_all(format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").as_bytes()).unwrap();
    read_response(&mut BufReader::new(stream))
}

#[test]
fn the_openapi_document_is_served_where_configured_unless_a_route_is_there() {
    let rt = runtime();
    let serve = |app: App| rt.block_on(async { app.serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()).await.unwrap() });

    let document = app().openapi().unwrap();
    let server = serve(app());
    let (status, body) = get(server.local_addr(), "/openapi.json");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&body).unwrap(), document);
    assert!(document["paths"]["/hello"]["get"].is_object());
    rt.block_on(server.shutdown()).unwrap();

    let moved = App::with_config(AppConfig { openapi_url: Some("/api/openapi.json".into()), ..Default::default() });
    let server = serve(moved.route(RouteSpec::get("/hello"), |_: RequestData| async { "hello" }));
    assert_eq!(get(server.local_addr(), "/api/openapi.json").0, "HTTP/1.1 200 OK");
    assert_eq!(get(server.local_addr(), "/openapi.json").0, "HTTP/1.1 404 Not Found");
    rt.block_on(server.shutdown()).unwrap();

    let off = App::with_config(AppConfig { openapi_url: None, ..Default::default() });
    let server = serve(off.route(RouteSpec::get("/hello"), |_: RequestData| async { "hello" }));
    assert_eq!(get(server.local_addr(), "/openapi.json").0, "HTTP/1.1 404 Not Found");
    rt.block_on(server.shutdown()).unwrap();

    let cors = ferrule_core::CorsConfig { allow_origins: vec!["https://docs.example.com".into()], ..Default::default() };
    let shared = App::with_config(AppConfig { cors: Some(cors), ..Default::default() });
    let server = serve(shared.route(RouteSpec::get("/hello"), |_: RequestData| async { "hello" }));
    let stream = TcpStream::connect(server.local_addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut writer = stream.try_clone().unwrap();
    writer.write_all(b"GET /openapi.json HTTP/1.1\r\nHost: test\r\nOrigin: https://docs.example.com\r\nConnection: close\r\n\r\n").unwrap();
    let mut head = String::new();
    BufReader::new(stream).read_to_string(&mut head).unwrap();
    assert!(head.to_ascii_lowercase().contains("access-control-allow-origin: https://docs.example.com"), "{head}");
    rt.block_on(server.shutdown()).unwrap();

    let own = App::new().route(RouteSpec::get("/openapi.json"), |_: RequestData| async { "mine" });
    let server = serve(own);
    assert_eq!(get(server.local_addr(), "/openapi.json"), ("HTTP/1.1 200 OK".to_owned(), "mine".to_owned()));
    rt.block_on(server.shutdown()).unwrap();
}

/// The head of one response to `GET /hello` (carrying `extra` header lines) from a server of
/// `config`, lower-cased.
fn served_head(config: AppConfig, extra: &str) -> String {
    let rt = runtime();
    let app = App::with_config(config).route(RouteSpec::get("/hello"), |request: RequestData| async move { request.request_id().unwrap_or_default().to_owned() });
    let server = rt.block_on(async { app.serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()).await.unwrap() });
    let mut stream = TcpStream::connect(server.local_addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(stream, "GET /hello HTTP/1.1\r\nHost: test\r\n{extra}Connection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    rt.block_on(server.shutdown()).unwrap();
    response.to_ascii_lowercase()
}

/// The server calls the app's layered stack directly (`App::into_service`), not through
/// `App::into_router`: the app-wide layers must be there all the same, and absent when off.
#[test]
fn the_served_stack_has_the_app_wide_layers_that_are_on() {
    let head = served_head(AppConfig::default(), "");
    let id = head.lines().find_map(|line| line.strip_prefix("x-request-id: ")).expect("a request id").trim().to_owned();
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{head}");
    assert!(head.ends_with(&id), "the handler sees the id it is answered with: {head}");

    let head = served_head(AppConfig::default(), "X-Request-Id: from-the-client\r\n");
    assert!(head.contains("x-request-id: from-the-client\r\n") && head.ends_with("from-the-client"), "{head}");

    let head = served_head(AppConfig { request_id: false, ..Default::default() }, "");
    assert!(!head.contains("x-request-id"), "{head}");

    let head = served_head(AppConfig { max_header_bytes: 64, ..Default::default() }, &format!("X-Big: {}\r\n", "b".repeat(100)));
    assert!(head.starts_with("http/1.1 431"), "{head}");
}

#[test]
fn a_handler_sees_the_address_of_the_peer_that_sent_the_request() {
    let rt = runtime();
    let app = App::new().route(RouteSpec::get("/who"), |request: RequestData| async move { format!("{:?}", request.client) });
    let server = rt.block_on(async { app.serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()).await.unwrap() });
    let stream = TcpStream::connect(server.local_addr()).unwrap();
    let mine = stream.local_addr().unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    for _ in 0..2 {
        writer.write_all(b"GET /who HTTP/1.1\r\nHost: test\r\nX-Forwarded-For: 203.0.113.9\r\n\r\n").unwrap();
        assert_eq!(read_response(&mut reader).1, format!("Some({mine})"), "the peer's, never a header's");
    }
    rt.block_on(server.shutdown()).unwrap();
}

/// Behind a trusted proxy (`trusted_proxies`), the client, scheme and host it names; from any
/// other peer, the headers are only headers.
#[test]
fn a_trusted_proxy_names_the_client_scheme_and_host() {
    let rt = runtime();
    let ask = |trusted: &[&str], head: &str| {
        let config = AppConfig { trusted_proxies: trusted.iter().map(|t| t.to_string()).collect(), ..Default::default() };
        let app = App::with_config(config).route(RouteSpec::get("/who"), |request: RequestData| async move {
            let client = request.client.map(|client| client.to_string()).unwrap_or_default();
            format!("{client} {}://{}", request.scheme(), request.host().unwrap_or_default())
        });
        let server = rt.block_on(async { app.serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()).await.unwrap() });
        let stream = TcpStream::connect(server.local_addr()).unwrap();
        let mine = stream.local_addr().unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut writer = stream.try_clone().unwrap();
        let mut reader = BufReader::new(stream);
        writer.write_all(format!("GET /who HTTP/1.1\r\nHost: app.internal:8000\r\n{head}\r\n").as_bytes()).unwrap();
        let body = read_response(&mut reader).1;
        rt.block_on(server.shutdown()).unwrap();
        body.replace(&mine.to_string(), "PEER")
    };
    let proxied = "X-Forwarded-For: 1.2.3.4, 203.0.113.9\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Host: shop.example\r\n";
    assert_eq!(ask(&["127.0.0.1"], proxied), "203.0.113.9:0 https://shop.example");
    assert_eq!(ask(&["loopback"], "X-Forwarded-Proto: https\r\n"), "127.0.0.1:0 https://app.internal:8000");
    assert_eq!(ask(&["10.0.0.0/8"], proxied), "PEER http://app.internal:8000", "a peer not listed");
    assert_eq!(ask(&[], proxied), "PEER http://app.internal:8000", "no one listed");
    assert_eq!(ask(&["127.0.0.1"], ""), "PEER http://app.internal:8000", "a trusted peer that says nothing");
}

#[test]
fn trusted_proxies_that_do_not_read_are_refused_naming_the_entry() {
    let config = AppConfig { trusted_proxies: vec!["10.0.0.0/8".into(), "proxy.internal".into()], ..Default::default() };
    let error = config.check().unwrap_err();
    assert!(error.starts_with("trusted_proxies: `proxy.internal` is not an address"), "{error}");
}

// Found by review: over HTTP/2 the host is `:authority`, so a handler reading `Host` (a
// Starlette `request.url`) found none; and the peer's address must reach h2 requests too.
#[test]
fn an_http2_request_has_its_authority_as_host_and_its_peer() {
    let rt = runtime();
    rt.block_on(async {
        let app = App::new().route(RouteSpec::get("/who"), |request: RequestData| async move {
            let host = request.raw_headers.get("host").map(|h| h.to_str().unwrap_or("").to_owned());
            format!("{host:?} {}", request.client.is_some())
        });
        let server = app.serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()).await.unwrap();
        let (_, bytes) = h2_get(server.local_addr(), "/who").await;
        assert_eq!(String::from_utf8(bytes).unwrap(), format!("Some({:?}) true", server.local_addr().to_string()));
        server.shutdown().await.unwrap();
    });
}
