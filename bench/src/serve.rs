//! The Rust servers under test: Ferrule's Rust API and plain axum doing the same work, and
//! the ceiling (`crate::ceiling`) on the same runtime.

use crate::workload::Workload;
use ferrule_core::{App, Body, RequestData, Response};
use serde_json::Value as Json;
use std::sync::Arc;

/// Ferrule with the Rust API: each workload's route, answered with what the handler received.
/// `FERRULE_BENCH_FEATURE=metrics` serves it with `metrics_url` on, `allowed-hosts` with a host
/// allow-list of three patterns, the load generator's address last (generate/features.rs).
pub fn ferrule_app(workloads: &[Workload]) -> App {
    let feature = std::env::var(crate::generate::features::ENV).unwrap_or_default();
    let allowed_hosts = (feature == "allowed-hosts").then(|| ["shop.example", "*.shop.example", "127.0.0.1"].map(String::from).to_vec());
    let metrics_url = (feature == "metrics").then(|| "/metrics".to_owned());
    let mut app = App::with_config(ferrule_core::AppConfig { metrics_url, allowed_hosts, ..Default::default() });
    for workload in workloads {
        app.add_route(workload.route.clone(), Arc::new(|request: RequestData| async move { Response::json(&echo(request)) }));
    }
    app.add_route(ferrule_core::RouteSpec::get("/health"), Arc::new(|_: RequestData| async { "ok" }));
    add_fault_routes(&mut app);
    add_stream_routes(&mut app);
    app
}

/// The stream workloads' routes (see `crate::stream`): a WebSocket echo, a WebSocket room and
/// an event stream.
fn add_stream_routes(app: &mut App) {
    use ferrule_core::futures::StreamExt;
    use ferrule_core::socket::Socket;
    use ferrule_core::stream::{BodyStream, Event};
    use ferrule_core::RouteSpec;
    app.add_socket_route(
        RouteSpec::websocket("/ws/echo", &[]),
        Arc::new(|_: RequestData, ws: Socket| async move {
            while let Some(message) = ws.recv().await {
                if ws.send(message).is_err() {
                    break;
                }
            }
        }),
    );
    // The room: every member's `Socket` (a handle; sends never wait) by its id.
    let room: Arc<std::sync::Mutex<std::collections::HashMap<u64, Socket>>> = Arc::default();
    app.add_socket_route(
        RouteSpec::websocket("/ws/room", &[]),
        Arc::new(move |_: RequestData, ws: Socket| {
            let room = room.clone();
            async move {
                let members = || room.lock().unwrap_or_else(|p| p.into_inner());
                members().insert(ws.id(), ws.clone());
                while let Some(message) = ws.recv().await {
                    for member in members().values() {
                        let _ = member.send(message.clone());
                    }
                }
                members().remove(&ws.id());
            }
        }),
    );
    let events = RouteSpec::get("/sse/events").query("n", serde_json::json!({"type": "integer", "minimum": 0}));
    app.add_route(
        events,
        Arc::new(|request: RequestData| async move {
            let n = request.query_param("n").and_then(ferrule_core::Value::as_i64).unwrap_or(0);
            let events = ferrule_core::futures::stream::iter(0..n).map(|i| Event::data(serde_json::json!({"i": i}).to_string()));
            Response::events(BodyStream::events(events))
        }),
    );
}

/// The fault routes of the other Ferrule servers (bench/src/generate/faults.rs), in Rust: a
/// blocking handler runs on tokio's blocking pool, as Rust code should, so only the sleep
/// there outlives the deadline.
fn add_fault_routes(app: &mut App) {
    use ferrule_core::{HandlerError, RouteSpec};
    use std::time::Duration;
    let with_deadline = |path: &str| RouteSpec { timeout_ms: Some(1000), ..RouteSpec::get(path) };
    app.add_route(
        RouteSpec::get("/fault/raise"),
        Arc::new(|_: RequestData| async { Err::<&str, _>(HandlerError::new(format!("{}: a handler's own message", crate::generate::faults::SECRET))) }),
    );
    app.add_route(
        with_deadline("/fault/block"),
        Arc::new(|_: RequestData| async {
            let _ = tokio::task::spawn_blocking(|| std::thread::sleep(Duration::from_secs(3))).await;
            "late"
        }),
    );
    app.add_route(
        with_deadline("/fault/sleep"),
        Arc::new(|_: RequestData| async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            "late"
        }),
    );
    if let Some(dir) = std::env::var_os("FERRULE_PROBE_STATIC") {
        if let Err(e) = app.mount_static(ferrule_core::StaticSpec::new("/files", dir.to_string_lossy())) {
            eprintln!("ferrule-bench serve: {e}");
        }
    }
}

/// What a Rust handler of the workloads answers: the typed inputs it received. A JSON body is
/// written straight from the core's document, as a handler returning it would be.
#[derive(serde::Serialize)]
struct Echo {
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<EchoBody>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<ferrule_core::Params>,
    #[serde(skip_serializing_if = "Option::is_none")]
    query: Option<ferrule_core::Params>,
}

#[derive(serde::Serialize)]
#[serde(untagged)]
enum EchoBody {
    Document(ferrule_core::document::Document),
    Other(Json),
}

fn echo(request: RequestData) -> Echo {
    // Written as they are, in declaration order: a `serde_json::Value` in between would cost a
    // map per request, which a handler writing its parameters has no need of.
    let params = |params: ferrule_core::Params| (!params.is_empty()).then_some(params);
    let body = match request.body {
        Body::None => None,
        Body::Json(document) => Some(EchoBody::Document(document)),
        other => Some(EchoBody::Other(other.to_json())),
    };
    Echo { body, path: params(request.path_params), query: params(request.query) }
}

/// Plain axum, no Ferrule: typed extraction with serde where axum users would use it. Only the
/// JSON workloads and the stream routes are served; they are the baseline for the core's
/// overhead.
pub fn axum_router() -> axum::Router {
    use crate::plain_json::PlainJson;
    use axum::routing::{get, post};
    /// The echo's `{"body": …}`, written straight from what was received. It was
    /// `json!({"body": body})`, which first copies the whole value through `to_value`: work no
    /// handler needs, and a fifth of the baseline's instructions (callgrind, release, 2,000
    /// requests: json-medium 249,612 → 197,917 a request, json-large 2,297,206 → 1,780,138,
    /// json-small 34,077 → 30,391), which made Ferrule look that much cheaper beside it.
    #[derive(serde::Serialize)]
    struct Echoed<T> {
        body: T,
    }
    #[derive(serde::Deserialize, serde::Serialize)]
    struct Product {
        id: i64,
        name: String,
        price: f64,
        #[serde(default)]
        in_stock: Option<bool>,
        #[serde(default)]
        tags: Vec<String>,
    }
    async fn product(axum::Json(product): axum::Json<Product>) -> axum::response::Response {
        use axum::response::IntoResponse;
        // The same checks the validated Ferrule route's schema makes.
        if product.id < 1 || product.name.is_empty() || product.name.len() > 100 || product.price < 0.0 || product.tags.len() > 10 {
            return (axum::http::StatusCode::UNPROCESSABLE_ENTITY, "invalid product").into_response();
        }
        axum::Json(Echoed { body: product }).into_response()
    }
    // `Json<Value>` as axum users have it by default (see `crate::plain_json`).
    async fn any_json(axum::Json(body): axum::Json<PlainJson>) -> axum::Json<Echoed<PlainJson>> {
        axum::Json(Echoed { body })
    }
    async fn ws_echo(upgrade: axum::extract::ws::WebSocketUpgrade) -> axum::response::Response {
        upgrade.on_upgrade(|mut socket| async move {
            while let Some(Ok(message)) = socket.recv().await {
                let echo = matches!(message, axum::extract::ws::Message::Text(_) | axum::extract::ws::Message::Binary(_));
                if echo && socket.send(message).await.is_err() {
                    break;
                }
            }
        })
    }
    /// axum's chat-room shape: a broadcast channel, each member's sink fed by a task of its own.
    async fn ws_room(upgrade: axum::extract::ws::WebSocketUpgrade, room: tokio::sync::broadcast::Sender<axum::extract::ws::Message>) -> axum::response::Response {
        use axum::extract::ws::Message;
        use futures_util::{SinkExt, StreamExt};
        upgrade.on_upgrade(move |socket| async move {
            let (mut sink, mut stream) = socket.split();
            let mut heard = room.subscribe();
            let mut forward = tokio::spawn(async move {
                loop {
                    match heard.recv().await {
                        Ok(message) => {
                            if sink.send(message).await.is_err() {
                                break;
                            }
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                    }
                }
            });
            let mut read = tokio::spawn(async move {
                while let Some(Ok(message)) = stream.next().await {
                    if matches!(message, Message::Text(_) | Message::Binary(_)) {
                        let _ = room.send(message);
                    }
                }
            });
            tokio::select! {
                _ = &mut forward => read.abort(),
                _ = &mut read => forward.abort(),
            }
        })
    }
    #[derive(serde::Deserialize)]
    struct Count {
        n: u64,
    }
    async fn sse_events(axum::extract::Query(Count { n }): axum::extract::Query<Count>) -> impl axum::response::IntoResponse {
        use axum::response::sse::{Event, Sse};
        use futures_util::StreamExt;
        let events = futures_util::stream::iter(0..n).map(|i| Event::default().json_data(serde_json::json!({"i": i})));
        Sse::new(events.boxed())
    }
    let (room, _) = tokio::sync::broadcast::channel(1024);
    axum::Router::new()
        .route("/ws/echo", get(ws_echo))
        .route("/ws/room", get(move |upgrade| ws_room(upgrade, room.clone())))
        .route("/sse/events", get(sse_events))
        .route("/json/small", post(product))
        .route("/json/small-unvalidated", post(any_json))
        .route("/json/medium", post(any_json))
        .route("/json/large", post(any_json))
        .route("/health", get(|| async { "ok" }))
}

/// Workloads the plain-axum baseline serves.
pub const AXUM_WORKLOADS: &[&str] = &["json-small", "json-small-unvalidated", "json-medium", "json-large"];

pub fn serve(framework: &str, port: u16, workloads: &[Workload]) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let addr = format!("127.0.0.1:{port}");
        match framework {
            "ferrule-rust" => ferrule_app(workloads).run(&addr).await.map_err(|e| e.to_string()),
            "axum" => {
                let listener = tokio::net::TcpListener::bind(&addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
                axum::serve(listener, axum_router())
                    .with_graceful_shutdown(ferrule_core::shutdown_signal())
                    .await
                    .map_err(|e| e.to_string())
            }
            "ceiling" => {
                let listener = tokio::net::TcpListener::bind(&addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
                crate::ceiling::serve(listener, ferrule_core::shutdown_signal()).await
            }
            other => Err(format!("unknown framework `{other}` (known: ferrule-rust, axum, ceiling)")),
        }
    })
}
