//! The Rust servers under test: Ferrule's Rust API and plain axum doing the same work.

use crate::workload::Workload;
use ferrule_core::{App, Body, RequestData, Response};
use serde_json::{Map, Value as Json};
use std::sync::Arc;

/// Ferrule with the Rust API: each workload's route, answered with what the handler received.
pub fn ferrule_app(workloads: &[Workload]) -> App {
    let mut app = App::new();
    for workload in workloads {
        app.add_route(workload.route.clone(), Arc::new(|request: RequestData| async move { Response::json(&echo(request)) }));
    }
    app.add_route(ferrule_core::RouteSpec::get("/health"), Arc::new(|_: RequestData| async { "ok" }));
    add_fault_routes(&mut app);
    app
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
}

fn echo(request: RequestData) -> Json {
    let mut out = Map::new();
    for (key, params) in [("path", &request.path_params), ("query", &request.query)] {
        if !params.is_empty() {
            out.insert(key.into(), serde_json::to_value(params).unwrap_or_default());
        }
    }
    match request.body {
        Body::None => {}
        Body::Json(json) => {
            out.insert("body".into(), json);
        }
        other => {
            out.insert("body".into(), other.to_json());
        }
    }
    Json::Object(out)
}

/// Plain axum, no Ferrule: typed extraction with serde where axum users would use it. Only the
/// JSON workloads are served; they are the baseline for the core's overhead.
pub fn axum_router() -> axum::Router {
    use axum::routing::{get, post};
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
        axum::Json(serde_json::json!({"body": product})).into_response()
    }
    async fn any_json(axum::Json(body): axum::Json<Json>) -> axum::Json<Json> {
        axum::Json(serde_json::json!({"body": body}))
    }
    axum::Router::new()
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
            other => Err(format!("unknown framework `{other}` (known: ferrule-rust, axum)")),
        }
    })
}
