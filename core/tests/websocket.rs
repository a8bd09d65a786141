//! WebSockets over a real socket, against tungstenite's client and hand-made frames: messages
//! both ways, parameters validated before the upgrade, subprotocol choice, the close codes a
//! broken client earns, a slow reader bounded, idle connections pinged, and shutdown saying
//! 1001.

use ferrule_core::socket::{Admission, Kept, Message, Socket, SocketHandler};
use ferrule_core::{App, AppConfig, HandlerError, RequestData, Response, RouteSpec, SocketSpec};
use futures_util::{SinkExt, StreamExt};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message as Frame;

async fn serve(app: App) -> ferrule_core::Server {
    app.serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()).await.unwrap()
}

async fn echo(_: RequestData, ws: Socket) {
    while let Some(message) = ws.recv().await {
        if ws.send(message).is_err() {
            break;
        }
    }
}

type Client = tokio_tungstenite::WebSocketStream<TcpStream>;

async fn connect(server: &ferrule_core::Server, path: &str, protocols: Option<&str>) -> (Client, http::Response<Option<Vec<u8>>>) {
    let mut request = format!("ws://{}{path}", server.local_addr()).into_client_request().unwrap();
    if let Some(protocols) = protocols {
        request.headers_mut().insert("sec-websocket-protocol", protocols.parse().unwrap());
    }
    let tcp = TcpStream::connect(server.local_addr()).await.unwrap();
    tokio_tungstenite::client_async(request, tcp).await.expect("handshake")
}

/// What the client reads next, within 10 s.
async fn next(client: &mut Client) -> Option<Frame> {
    tokio::time::timeout(Duration::from_secs(10), client.next()).await.expect("in time").map(|r| r.expect("a frame"))
}

async fn close_code(client: &mut Client) -> u16 {
    loop {
        match next(client).await {
            Some(Frame::Close(Some(frame))) => return frame.code.into(),
            Some(Frame::Close(None)) => return 1005,
            Some(_) => continue,
            None => return 1006,
        }
    }
}

/// A handshake written by hand, for frames no client library would send.
async fn raw(server: &ferrule_core::Server, path: &str) -> TcpStream {
    let mut tcp = TcpStream::connect(server.local_addr()).await.unwrap();
    let head = format!(
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !seen.ends_with(b"\r\n\r\n") {
        tcp.read_exact(&mut byte).await.unwrap();
        seen.push(byte[0]);
    }
    assert!(seen.starts_with(b"HTTP/1.1 101"), "{}", String::from_utf8_lossy(&seen));
    tcp
}

/// A masked client frame (mask 0: the payload goes as it is).
fn frame(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![if fin { 0x80 } else { 0 } | opcode];
    match payload.len() {
        n if n < 126 => out.push(0x80 | n as u8),
        n => {
            out.push(0x80 | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
    }
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(payload);
    out
}

/// The close code in the server's close frame.
async fn raw_close_code(tcp: &mut TcpStream) -> u16 {
    let mut all = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut all)).await;
    let mut at = 0;
    while at + 2 <= all.len() {
        let (opcode, len) = (all[at] & 0x0f, (all[at + 1] & 0x7f) as usize);
        if opcode == 8 && len >= 2 {
            return u16::from_be_bytes([all[at + 2], all[at + 3]]);
        }
        at += 2 + len;
    }
    panic!("no close frame in {all:?}")
}

#[tokio::test]
async fn text_and_binary_messages_come_back_in_order() {
    let server = serve(App::new().websocket(RouteSpec::websocket("/echo", &[]), echo)).await;
    let (mut client, _) = connect(&server, "/echo", None).await;
    for i in 0..100 {
        client.send(Frame::Text(format!("m{i}").into())).await.unwrap();
    }
    client.send(Frame::Binary(vec![0u8, 159, 255].into())).await.unwrap();
    for i in 0..100 {
        assert_eq!(next(&mut client).await, Some(Frame::Text(format!("m{i}").into())));
    }
    assert_eq!(next(&mut client).await, Some(Frame::Binary(vec![0u8, 159, 255].into())));
    client.close(None).await.unwrap();
    assert_eq!(close_code(&mut client).await, 1005, "the server answers a close without a code");
}

#[tokio::test]
async fn a_fragmented_message_arrives_whole() {
    let server = serve(App::new().websocket(RouteSpec::websocket("/echo", &[]), echo)).await;
    let mut tcp = raw(&server, "/echo").await;
    tcp.write_all(&[frame(false, 1, b"hel"), frame(false, 0, b"lo "), frame(true, 0, "wörld".as_bytes())].concat()).await.unwrap();
    let mut head = [0u8; 2];
    tcp.read_exact(&mut head).await.unwrap();
    assert_eq!(head[0], 0x81, "one final text frame");
    let mut payload = vec![0u8; (head[1] & 0x7f) as usize];
    tcp.read_exact(&mut payload).await.unwrap();
    assert_eq!(payload, "hello wörld".as_bytes());
}

#[tokio::test]
async fn parameters_are_validated_before_the_upgrade() {
    let opened = Arc::new(AtomicUsize::new(0));
    let count = opened.clone();
    let app = App::new().websocket(RouteSpec::websocket("/rooms/{room:int}", &[]), move |req: RequestData, ws: Socket| {
        count.fetch_add(1, Ordering::SeqCst);
        async move {
            let room = req.path_param("room").cloned();
            let _ = ws.send(Message::Text(format!("{room:?}").into()));
        }
    });
    let server = serve(app).await;
    let bad = format!("ws://{}/rooms/lobby", server.local_addr()).into_client_request().unwrap();
    let refused = tokio_tungstenite::client_async(bad, TcpStream::connect(server.local_addr()).await.unwrap()).await.unwrap_err();
    let tokio_tungstenite::tungstenite::Error::Http(response) = refused else { panic!("{refused}") };
    assert_eq!(response.status(), 422);
    let body = String::from_utf8(response.body().clone().unwrap()).unwrap();
    assert!(body.contains(r#""loc":["path","room"]"#), "{body}");
    assert_eq!(opened.load(Ordering::SeqCst), 0, "no handler ran");

    let (mut client, _) = connect(&server, "/rooms/7", None).await;
    assert_eq!(next(&mut client).await, Some(Frame::Text("Some(Int(7))".into())));
    assert_eq!(close_code(&mut client).await, 1000, "a handler that returns closes with 1000");
}

/// A route whose admission (a binding's hooks, in miniature) lets in a handshake with the
/// right token, answers one without any 401, and fails on one with a wrong token. It keeps
/// who the caller is for the socket, which greets them by name.
struct Guarded {
    opened: Arc<AtomicUsize>,
    admissions: Arc<AtomicUsize>,
    /// What each admission kept and was dropped without a socket, by the caller it names.
    unopened: Arc<std::sync::Mutex<Vec<String>>>,
}

/// What an admission keeps: who the caller is; noted in `unopened` when dropped unused.
struct Caller {
    name: String,
    unopened: Option<Arc<std::sync::Mutex<Vec<String>>>>,
}

impl Drop for Caller {
    fn drop(&mut self) {
        if let Some(unopened) = self.unopened.take() {
            unopened.lock().unwrap().push(self.name.clone());
        }
    }
}

impl SocketHandler for Guarded {
    fn open(&self, _request: RequestData, _socket: Socket) {
        unreachable!("every handshake here is admitted, and its admission keeps its caller")
    }

    fn open_admitted(&self, request: RequestData, socket: Socket, kept: Kept) {
        self.opened.fetch_add(1, Ordering::SeqCst);
        let mut caller = kept.downcast::<Caller>().expect("what the admission kept");
        caller.unopened = None;
        tokio::spawn(async move {
            socket.send(Message::Text(format!("hello, {}", caller.name).into())).unwrap();
            echo(request, socket).await
        });
    }

    fn admission(&self, request: &RequestData) -> Option<Admission> {
        self.admissions.fetch_add(1, Ordering::SeqCst);
        let token = request.raw_headers.get("authorization").map(|v| v.as_bytes().to_vec());
        let caller = Caller { name: String::from_utf8_lossy(token.as_deref().unwrap_or(b"nobody")).into_owned(), unopened: Some(self.unopened.clone()) };
        let answer = Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            match token.as_deref() {
                Some(b"Bearer let-me-in") => Ok(Response::new(http::StatusCode::SWITCHING_PROTOCOLS).with_body("not sent")),
                None => Ok(Response::text("who are you?").with_status(http::StatusCode::UNAUTHORIZED)),
                Some(_) => Err(HandlerError::new("the token check failed")),
            }
        });
        Some(Admission::new(answer).keeping(caller))
    }
}

#[tokio::test]
async fn an_admission_sees_the_handshake_first_and_its_answer_refuses_or_lets_the_upgrade_go_on() {
    let (opened, admissions) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let unopened = Arc::new(std::sync::Mutex::new(Vec::new()));
    let guarded = Guarded { opened: opened.clone(), admissions: admissions.clone(), unopened: unopened.clone() };
    let server = serve(App::new().websocket(RouteSpec::websocket("/guarded/{room:int}", &[]), guarded)).await;
    let handshake = |path: &str, token: Option<&str>| {
        let mut request = format!("ws://{}{path}", server.local_addr()).into_client_request().unwrap();
        if let Some(token) = token {
            request.headers_mut().insert("authorization", token.parse().unwrap());
        }
        request
    };
    let refused = |error: tokio_tungstenite::tungstenite::Error| match error {
        tokio_tungstenite::tungstenite::Error::Http(response) => response,
        other => panic!("{other}"),
    };

    let response = refused(tokio_tungstenite::client_async(handshake("/guarded/1", None), TcpStream::connect(server.local_addr()).await.unwrap()).await.unwrap_err());
    assert_eq!(response.status(), 401);
    assert_eq!(response.body().as_deref(), Some(&b"who are you?"[..]), "the admission's own answer");
    let response = refused(tokio_tungstenite::client_async(handshake("/guarded/1", Some("Bearer wrong")), TcpStream::connect(server.local_addr()).await.unwrap()).await.unwrap_err());
    assert_eq!(response.status(), 500, "an admission that fails is the handler's failure");
    // Parameters are checked before anything sees the handshake.
    let response = refused(tokio_tungstenite::client_async(handshake("/guarded/lobby", Some("Bearer let-me-in")), TcpStream::connect(server.local_addr()).await.unwrap()).await.unwrap_err());
    assert_eq!(response.status(), 422);
    assert_eq!((opened.load(Ordering::SeqCst), admissions.load(Ordering::SeqCst)), (0, 2), "no socket opened; the bad room never reached the admission");
    assert_eq!(*unopened.lock().unwrap(), ["nobody", "Bearer wrong"], "what a refused admission kept is dropped");

    let tcp = TcpStream::connect(server.local_addr()).await.unwrap();
    let (mut client, response) = tokio_tungstenite::client_async(handshake("/guarded/1", Some("Bearer let-me-in")), tcp).await.expect("admitted");
    assert_eq!(response.status(), 101);
    assert!(response.headers().get("content-length").is_none(), "the admission's 101 and its 8 bytes are not what was sent");
    assert_eq!(next(&mut client).await, Some(Frame::Text("hello, Bearer let-me-in".into())), "what the admission kept reached the socket");
    client.send(Frame::Text("hello".into())).await.unwrap();
    assert_eq!(next(&mut client).await, Some(Frame::Text("hello".into())));
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    assert_eq!(unopened.lock().unwrap().len(), 2, "the admitted caller was not dropped unused");
}

#[tokio::test]
async fn a_plain_request_is_told_to_upgrade() {
    let server = serve(App::new().websocket(RouteSpec::websocket("/echo", &[]), echo)).await;
    let mut tcp = TcpStream::connect(server.local_addr()).await.unwrap();
    tcp.write_all(b"GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 426"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("upgrade: websocket"), "{answer}");
    let mut tcp = TcpStream::connect(server.local_addr()).await.unwrap();
    tcp.write_all(b"GET /echo HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tcp.read(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]).to_ascii_lowercase();
    assert!(answer.starts_with("http/1.1 426") && answer.contains("sec-websocket-version: 13"), "{answer}");
}

#[tokio::test]
async fn the_first_subprotocol_of_the_routes_that_the_client_offers_is_chosen() {
    let app = App::new().websocket(RouteSpec::websocket("/chat", &["chat.v2", "chat.v1"]), |_: RequestData, ws: Socket| async move {
        let _ = ws.send(Message::Text(ws.subprotocol().unwrap_or("none").into()));
    });
    let server = serve(app).await;
    let (mut client, response) = connect(&server, "/chat", Some("chat.v1, chat.v2")).await;
    assert_eq!(response.headers()["sec-websocket-protocol"], "chat.v2");
    assert_eq!(next(&mut client).await, Some(Frame::Text("chat.v2".into())));
    // None in common: upgraded without one (tungstenite's client would refuse that itself).
    let mut tcp = TcpStream::connect(server.local_addr()).await.unwrap();
    tcp.write_all(b"GET /chat HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: other\r\n\r\n").await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tcp.read(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]).to_ascii_lowercase();
    assert!(answer.starts_with("http/1.1 101") && !answer.contains("sec-websocket-protocol"), "{answer}");
}

#[tokio::test]
async fn a_broken_client_gets_the_close_code_that_says_why() {
    let mut spec = RouteSpec::websocket("/echo", &[]);
    spec.websocket = Some(SocketSpec { max_message_bytes: Some(1000), ..Default::default() });
    let server = serve(App::new().websocket(spec, echo)).await;
    let cases: [(&str, Vec<u8>, u16); 5] = [
        ("a reserved opcode", frame(true, 3, b"x"), 1002),
        ("a continuation with nothing to continue", frame(true, 0, b"x"), 1002),
        ("an unmasked frame", vec![0x81, 0x01, b'x'], 1002),
        ("text that is not UTF-8", frame(true, 1, &[0xff, 0xfe]), 1007),
        ("a message over the limit", frame(true, 2, &[0u8; 1001]), 1009),
    ];
    for (what, bytes, code) in cases {
        let mut tcp = raw(&server, "/echo").await;
        tcp.write_all(&bytes).await.unwrap();
        assert_eq!(raw_close_code(&mut tcp).await, code, "{what}");
    }
    let mut tcp = raw(&server, "/echo").await;
    let fragments = [frame(false, 2, &[0u8; 600]), frame(true, 0, &[0u8; 600])].concat();
    tcp.write_all(&fragments).await.unwrap();
    assert_eq!(raw_close_code(&mut tcp).await, 1009, "the limit is on the whole message, not its fragments");
}

#[tokio::test]
async fn a_client_that_does_not_read_is_closed_once_its_buffer_is_full() {
    let config = AppConfig { ws_send_buffer_bytes: 256 * 1024, send_timeout_ms: 0, ..Default::default() };
    let sent = Arc::new(AtomicUsize::new(0));
    let counted = sent.clone();
    let app = App::with_config(config).websocket(RouteSpec::websocket("/firehose", &[]), move |_: RequestData, ws: Socket| {
        let counted = counted.clone();
        async move {
            let chunk = bytes::Bytes::from(vec![7u8; 16 * 1024]);
            while ws.send(Message::Binary(chunk.clone())).is_ok() {
                counted.fetch_add(1, Ordering::SeqCst);
                assert!(ws.buffered() <= 256 * 1024);
                tokio::task::yield_now().await;
            }
            assert_eq!(ws.closed().map(|c| c.code).or(Some(1008)), Some(1008));
        }
    });
    let server = serve(app).await;
    let (_client, _) = connect(&server, "/firehose", None).await; // never read
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let before = sent.load(Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(300)).await;
        if sent.load(Ordering::SeqCst) == before && before > 0 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the handler was never stopped");
    }
    // The socket buffers and 256 KiB of queue, not an ever-growing backlog.
    assert!(sent.load(Ordering::SeqCst) * 16 * 1024 < 64 << 20, "sent {} chunks", sent.load(Ordering::SeqCst));
}

#[tokio::test]
async fn a_silent_client_is_pinged_and_one_that_answers_stays() {
    let config = AppConfig { ws_idle_timeout_ms: 200, ..Default::default() };
    let server = serve(App::with_config(config).websocket(RouteSpec::websocket("/echo", &[]), echo)).await;
    let (mut client, _) = connect(&server, "/echo", None).await;
    // tungstenite's client answers pings while it reads.
    assert!(matches!(next(&mut client).await, Some(Frame::Ping(_))));
    assert!(matches!(next(&mut client).await, Some(Frame::Ping(_))), "still open after a pong");
    let mut silent = raw(&server, "/echo").await;
    assert_eq!(raw_close_code(&mut silent).await, 1001, "no pong: closed");
}

#[tokio::test]
async fn shutdown_closes_open_sockets_with_1001_and_does_not_wait_for_the_handler() {
    let config = AppConfig { shutdown_timeout_ms: 20_000, ..Default::default() };
    let server = serve(App::with_config(config).websocket(RouteSpec::websocket("/echo", &[]), echo)).await;
    let (mut client, _) = connect(&server, "/echo", None).await;
    client.send(Frame::Text("hi".into())).await.unwrap();
    assert_eq!(next(&mut client).await, Some(Frame::Text("hi".into())));
    let started = std::time::Instant::now();
    let stopping = tokio::spawn(server.shutdown());
    assert_eq!(close_code(&mut client).await, 1001);
    drop(client);
    stopping.await.unwrap().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
}

#[tokio::test]
async fn a_handler_that_panics_closes_with_1011() {
    let app = App::new().websocket(RouteSpec::websocket("/boom", &[]), |_: RequestData, ws: Socket| async move {
        let _ = ws.recv().await;
        panic!("handler bug");
    });
    let server = serve(app).await;
    let (mut client, _) = connect(&server, "/boom", None).await;
    client.send(Frame::Text("go".into())).await.unwrap();
    assert_eq!(close_code(&mut client).await, 1011);
}

/// The way bindings hold a socket: a thread of their own (no runtime) takes what arrived when
/// woken, and once after opening; it answers, and takes again until a take finds nothing
/// (which arms the next wake-up). Every message of many conversations must arrive, in order.
#[test]
fn a_binding_style_consumer_on_another_thread_gets_every_message() {
    enum Event {
        Open(Socket),
        Wake(u64),
    }
    struct OnAThread(std::sync::Mutex<std::sync::mpsc::Sender<Event>>);
    impl ferrule_core::socket::SocketHandler for OnAThread {
        fn open(&self, _: RequestData, ws: Socket) {
            let events = self.0.lock().unwrap().clone();
            let wakes = events.clone();
            ws.on_arrival(Box::new(move |id| {
                let _ = wakes.send(Event::Wake(id));
            }));
            let _ = events.send(Event::Open(ws));
        }
    }
    let (events, inbox) = std::sync::mpsc::channel::<Event>();
    let consumer = std::thread::spawn(move || {
        let mut open = std::collections::HashMap::new();
        let deliver = |ws: &Socket| loop {
            let taken = ws.take();
            for message in &taken.messages {
                let _ = ws.send(message.clone());
            }
            if taken.end.is_some() {
                return false;
            }
            if taken.messages.is_empty() {
                return true;
            }
        };
        while let Ok(event) = inbox.recv() {
            let ws = match event {
                Event::Open(ws) => open.entry(ws.id()).or_insert(ws).clone(),
                Event::Wake(id) => match open.get(&id) {
                    Some(ws) => ws.clone(),
                    None => continue,
                },
            };
            if !deliver(&ws) {
                open.remove(&ws.id());
            }
        }
    });
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async move {
        let mut app = App::new();
        app.add_socket_route(RouteSpec::websocket("/echo", &[]), Arc::new(OnAThread(std::sync::Mutex::new(events))));
        let server = serve(app).await;
        let conversations = (0..20).map(|c| {
            let addr = server.local_addr();
            tokio::spawn(async move {
                let request = format!("ws://{addr}/echo").into_client_request().unwrap();
                let (mut client, _) = tokio_tungstenite::client_async(request, TcpStream::connect(addr).await.unwrap()).await.unwrap();
                for i in 0..200 {
                    let text = format!("{c}:{i}");
                    client.send(Frame::Text(text.clone().into())).await.unwrap();
                    assert_eq!(next(&mut client).await, Some(Frame::Text(text.into())), "conversation {c}, message {i}");
                }
                client.close(None).await.unwrap();
            })
        });
        for conversation in conversations.collect::<Vec<_>>() {
            conversation.await.unwrap();
        }
        server.shutdown().await.unwrap();
    });
    drop(runtime);
    consumer.join().unwrap();
}

/// The README's Rust chat room, as written there.
#[tokio::test]
async fn the_readme_chat_room_relays_to_every_member() {
    use std::sync::Mutex;
    let members: Arc<Mutex<Vec<Socket>>> = Arc::default();
    let room = members.clone();
    let app = App::new().websocket(RouteSpec::websocket("/chat", &[]), move |_: RequestData, ws: Socket| {
        let members = members.clone();
        async move {
            members.lock().unwrap().push(ws.clone());
            while let Some(message) = ws.recv().await {
                members.lock().unwrap().iter().for_each(|member| drop(member.send(message.clone())));
            }
            members.lock().unwrap().retain(|member| member.id() != ws.id());
        }
    });
    let server = serve(app).await;
    let (mut ann, _) = connect(&server, "/chat", None).await;
    let (mut bob, _) = connect(&server, "/chat", None).await;
    // Both are members: their handlers have run, which the handshakes alone do not promise.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while room.lock().unwrap().len() < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    bob.send(Frame::Text("hi all".into())).await.unwrap();
    assert_eq!(next(&mut ann).await, Some(Frame::Text("hi all".into())));
    assert_eq!(next(&mut bob).await, Some(Frame::Text("hi all".into())));
}
