//! Sends a fixture request with a real HTTP client (ureq), encoding its body as described in
//! fixtures/README.md ("Requests").

use crate::fixture::Request;
use base64::Engine;
use serde_json::Value as Json;

const BOUNDARY: &str = "ferrule-boundary";

#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Vec<u8>,
    /// The body broke off before its end (a stream that failed): `body` is what came first.
    pub cut_off: bool,
}

pub fn send(agent: &ureq::Agent, base: &str, request: &Request) -> Result<Reply, String> {
    use std::io::Read;
    let response = agent.run(build(base, request)?).map_err(|e| format!("request failed: {e}"))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let mut body = Vec::new();
    let mut reader = response.into_body().into_with_config().limit(64 * 1024 * 1024).reader();
    let cut_off = reader.read_to_end(&mut body).is_err();
    Ok(Reply { status, headers, body, cut_off })
}

/// The request a fixture describes, addressed to `base` (empty: origin-form, as the fuzz
/// targets feed it to the router in process).
pub fn build(base: &str, request: &Request) -> Result<http::Request<Vec<u8>>, String> {
    let mut builder = http::Request::builder().method(request.method.as_str()).uri(format!("{base}{}", request.path));
    for (name, value) in &request.headers {
        for v in header_values(value)? {
            builder = builder.header(name.as_str(), v);
        }
    }
    let (body, implied_type) = match &request.body {
        None => (Vec::new(), None),
        Some(body) => encode_body(body)?,
    };
    // `"content_type": ""` sends the body with no Content-Type header at all.
    if let Some(content_type) = request.content_type.clone().or(implied_type).filter(|c| !c.is_empty()) {
        builder = builder.header("content-type", content_type);
    }
    builder.body(body).map_err(|e| format!("bad request in fixture: {e}"))
}

fn header_values(value: &Json) -> Result<Vec<http::HeaderValue>, String> {
    let one = |s: &str| http::HeaderValue::from_str(s).map_err(|e| format!("header value {s:?}: {e}"));
    match value {
        Json::String(s) => Ok(vec![one(s)?]),
        Json::Array(items) => items.iter().map(|i| one(i.as_str().unwrap_or_default())).collect(),
        Json::Object(map) if map.contains_key("repeat") => {
            let unit = map["repeat"].as_str().unwrap_or_default();
            let times = map.get("times").and_then(Json::as_u64).unwrap_or(1) as usize;
            Ok(vec![one(&unit.repeat(times))?])
        }
        Json::Object(map) if map.contains_key("base64") => {
            let bytes = decode64(&map["base64"])?;
            Ok(vec![http::HeaderValue::from_bytes(&bytes).map_err(|e| e.to_string())?])
        }
        other => Err(format!("unsupported header value {other}")),
    }
}

fn decode64(value: &Json) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD.decode(value.as_str().unwrap_or_default()).map_err(|e| e.to_string())
}

fn encode_body(body: &Json) -> Result<(Vec<u8>, Option<String>), String> {
    if let Some(json) = body.get("json") {
        return Ok((serde_json::to_vec(json).unwrap(), Some("application/json".into())));
    }
    if let Some(text) = body.get("text").and_then(Json::as_str) {
        return Ok((text.as_bytes().to_vec(), Some("text/plain; charset=utf-8".into())));
    }
    if let Some(b64) = body.get("base64") {
        return Ok((decode64(b64)?, Some("application/octet-stream".into())));
    }
    if let Some(unit) = body.get("repeat").and_then(Json::as_str) {
        let times = body.get("times").and_then(Json::as_u64).unwrap_or(0) as usize;
        return Ok((unit.repeat(times).into_bytes(), Some("application/octet-stream".into())));
    }
    if let Some(pairs) = body.get("form").and_then(Json::as_array) {
        let mut encoder = form_urlencoded::Serializer::new(String::new());
        for pair in pairs {
            encoder.append_pair(pair[0].as_str().unwrap_or_default(), pair[1].as_str().unwrap_or_default());
        }
        return Ok((encoder.finish().into_bytes(), Some("application/x-www-form-urlencoded".into())));
    }
    if let Some(parts) = body.get("multipart").and_then(Json::as_array) {
        let mut out = Vec::new();
        for part in parts {
            out.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
            let name = part["name"].as_str().unwrap_or_default();
            match part.get("filename").and_then(Json::as_str) {
                Some(filename) => out.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\n").as_bytes(),
                ),
                None => out.extend_from_slice(format!("Content-Disposition: form-data; name=\"{name}\"\r\n").as_bytes()),
            }
            if let Some(ct) = part.get("content_type").and_then(Json::as_str) {
                out.extend_from_slice(format!("Content-Type: {ct}\r\n").as_bytes());
            }
            for (header, value) in part.get("headers").and_then(Json::as_object).into_iter().flatten() {
                out.extend_from_slice(format!("{header}: {}\r\n", value.as_str().unwrap_or_default()).as_bytes());
            }
            out.extend_from_slice(b"\r\n");
            match (part.get("text").and_then(Json::as_str), part.get("base64")) {
                (Some(text), _) => out.extend_from_slice(text.as_bytes()),
                (None, Some(b64)) => out.extend_from_slice(&decode64(b64)?),
                (None, None) => {}
            }
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
        return Ok((out, Some(format!("multipart/form-data; boundary={BOUNDARY}"))));
    }
    Err(format!("unsupported body {body}"))
}
