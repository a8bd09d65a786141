//! The fixture handler kinds, written with the Rust API. Each returns only what it received.
//! (The fuzz targets in core/fuzz serve the fixture apps with this file too.)

use ferrule_conformance::{FixtureFile, FixtureRoute};
use ferrule_core::futures::{stream, TryStreamExt};
use ferrule_core::socket::{Message, Socket};
use ferrule_core::stream::{BodyStream, Event};
use ferrule_core::{App, AppConfig, Body, HandlerError, Params, RequestData, Response, RouteSpec, Value};
use serde_json::{json, Map, Value as Json};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;

/// The app a fixture file describes: its configuration and the routes `keep` accepts, each
/// answered by its handler kind.
pub fn build_app(file: &FixtureFile, keep: impl Fn(&FixtureRoute) -> bool) -> App {
    let config: AppConfig = match &file.app {
        Some(app) => serde_json::from_value(app.clone()).unwrap_or_else(|e| panic!("{}: app: {e}", file.category)),
        None => AppConfig::default(),
    };
    let mut app = App::with_config(config);
    for route in file.routes.iter().filter(|r| keep(r)) {
        let kind: Arc<str> = Arc::from(route.handler.as_str());
        let spec: RouteSpec = serde_json::from_value(serde_json::Value::Object(route.spec.clone()))
            .unwrap_or_else(|e| panic!("{}: route {:?}: {e}", file.category, route.spec.get("path")));
        if route.handler == "socket_echo" {
            app.add_socket_route(spec, Arc::new(|request: RequestData, ws: Socket| socket_echo(request, ws)));
        } else {
            app.add_route(spec, Arc::new(move |request| handle(&kind, request)));
        }
    }
    app
}

/// `socket_echo`: what the request carried and the subprotocol, then every message back in
/// kind; `close CODE` closes with that code, `raise` fails as `fail` does.
async fn socket_echo(request: RequestData, ws: Socket) {
    let mut hello = echo(&request);
    hello["subprotocol"] = ws.subprotocol().map_or(Json::Null, |p| Json::String(p.to_owned()));
    let _ = ws.send(Message::Text(hello.to_string().into()));
    while let Some(message) = ws.recv().await {
        match &message {
            Message::Text(text) if text == "raise" => panic!("SECRET-TOKEN-42 database password"),
            Message::Text(text) if text.starts_with("close ") => {
                // A close no server may send fails the handler (1011), as in every binding.
                ws.close(text[6..].parse::<i64>().unwrap_or(-1), "requested").expect("a close code a server may send");
                return;
            }
            _ => {
                let _ = ws.send(message);
            }
        }
    }
}

pub fn handle(kind: &str, request: RequestData) -> ferrule_core::HandlerFuture {
    let kind = kind.to_owned();
    Box::pin(async move {
        match kind.as_str() {
            "echo" => Response::json(&echo(&request)),
            "status" => {
                let code = request.path_param("code").and_then(Value::as_i64).unwrap_or(0);
                let status = http::StatusCode::from_u16(code as u16).map_err(|e| HandlerError::new(e.to_string()))?;
                Ok(Response::json(&json!({"status": code}))?.with_status(status))
            }
            "fail" => Err(HandlerError::new("SECRET-TOKEN-42 database password")),
            "sleep" => {
                let ms = request.query_param("ms").and_then(Value::as_i64).unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(ms as u64)).await;
                Response::json(&echo(&request))
            }
            "repeat" => {
                let n = request.query_param("n").and_then(Value::as_i64).unwrap_or(0);
                let unit = request.query_param("char").and_then(Value::as_str).unwrap_or("");
                Response::json(&json!({"data": unit.repeat(n.max(0) as usize)}))
            }
            "text" => Ok(Response::text(request.query_param("text").and_then(Value::as_str).unwrap_or("").to_owned())),
            "file" => {
                let name = request.query_param("name").and_then(Value::as_str).unwrap_or("");
                Ok(Response::file(ferrule_conformance::fixtures_dir().join("served").join(name)))
            }
            "raw" => Response::json(&raw(&request)),
            "origin" => Response::json(&json!({
                "client": request.client.map(|client| client.ip().to_string()),
                "scheme": request.scheme(),
                "host": request.host(),
            })),
            "part_headers" => Response::json(&part_headers(&request)),
            "result" => {
                let body = match &request.body {
                    ferrule_core::Body::Json(value) => value.to_tree(),
                    _ => serde_json::Value::Null,
                };
                let response = Response::json(&body)?;
                match request.query_param("status").and_then(Value::as_i64) {
                    Some(code) => Ok(response.with_status(http::StatusCode::from_u16(code as u16).map_err(|e| HandlerError::new(e.to_string()))?)),
                    None => Ok(response),
                }
            }
            "result_text" => Ok(Response::json_bytes(request.raw_body.clone())),
            "stream" => {
                let (n, word) = (count(&request), word(&request));
                let chunks = (0..n).map(move |i| Ok::<_, HandlerError>(format!("{i}:{word}\n")));
                Ok(Response::stream(BodyStream::new(stream::iter(chunks).map_err(|e| e.to_string()))))
            }
            "events" => {
                let (n, word) = (count(&request), word(&request));
                let start: i64 = request.raw_headers.get("last-event-id").and_then(|v| v.to_str().ok()?.parse().ok()).unwrap_or(0);
                let ticks = (0..n).map(|i| Event::data(json!({"i": i, "word": word}).to_string()).with_name("tick").with_id((start + i + 1).to_string()));
                let all: Vec<Event> = ticks.chain([Event::data(word.clone())]).collect();
                Ok(Response::events(BodyStream::events(stream::iter(all))))
            }
            "stream_fail" => {
                let chunks = [Ok("partial".to_owned()), Err("SECRET-TOKEN-42 database password".to_owned())];
                Ok(Response::stream(BodyStream::new(stream::iter(chunks))))
            }
            "events_fail" => {
                let chunks = [Event::data("partial").encode().map_err(|e| e.to_string()), Err("SECRET-TOKEN-42 database password".to_owned())];
                Ok(Response::events(BodyStream::new(stream::iter(chunks))))
            }
            other => Err(HandlerError::new(format!("unknown fixture handler {other}"))),
        }
    })
}

fn count(request: &RequestData) -> i64 {
    request.query_param("n").and_then(Value::as_i64).unwrap_or(0)
}

fn word(request: &RequestData) -> String {
    request.query_param("word").and_then(Value::as_str).unwrap_or("").to_owned()
}

fn raw(request: &RequestData) -> Json {
    json!({
        "n": request.query_param("n").map(value_json).unwrap_or(Json::Null),
        "query": request.query_pairs(),
        "extra": ferrule_core::header_text(&request.raw_headers, "x-extra"),
        "cookies": request.cookie_pairs(),
        "body": String::from_utf8_lossy(&request.raw_body),
    })
}

/// Each file field's part headers: `{field: {name: value}}`, a list for a list of files.
fn part_headers(request: &RequestData) -> Json {
    fn headers(value: &Value) -> Json {
        match value {
            Value::File(file) => Json::Object(file.headers.iter().map(|(n, v)| (n.clone(), Json::String(v.clone()))).collect()),
            Value::Array(items) => Json::Array(items.iter().map(headers).collect()),
            _ => Json::Null,
        }
    }
    let Body::Form(fields) = &request.body else { return json!({}) };
    Json::Object(fields.iter().filter(|(_, v)| matches!(v, Value::File(_) | Value::Array(_))).map(|(k, v)| (k.to_owned(), headers(v))).collect())
}

fn echo(request: &RequestData) -> Json {
    let mut out = Map::new();
    for (key, params) in [
        ("path", &request.path_params),
        ("query", &request.query),
        ("headers", &request.headers),
        ("cookies", &request.cookies),
    ] {
        if !params.is_empty() {
            out.insert(key.into(), params_json(params));
        }
    }
    match &request.body {
        Body::None => {}
        Body::Form(fields) => {
            out.insert("body".into(), params_json(fields));
        }
        other => {
            out.insert("body".into(), other.to_json());
        }
    }
    Json::Object(out)
}

fn params_json(params: &Params) -> Json {
    Json::Object(params.iter().map(|(k, v)| (k.to_owned(), value_json(v))).collect())
}

fn value_json(value: &Value) -> Json {
    match value {
        Value::File(file) => json!({
            "filename": file.filename,
            "content_type": file.content_type,
            "size": file.data.len(),
            "sha256": format!("{:x}", Sha256::digest(&file.data)),
        }),
        Value::Array(items) => Json::Array(items.iter().map(value_json).collect()),
        other => other.to_json(),
    }
}
