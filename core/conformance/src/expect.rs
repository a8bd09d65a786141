//! Checks a reply against a case's expectations (fixtures/README.md, "Expectations").

use crate::client::Reply;
use crate::fixture::Expect;
use serde_json::Value as Json;
use std::io::Read;

/// Every failed expectation, described.
pub fn check(expect: &Expect, reply: &Reply) -> Vec<String> {
    let mut failures = Vec::new();
    let body_text = String::from_utf8_lossy(&reply.body);
    if reply.status != expect.status {
        failures.push(format!("status {} != expected {} (body: {})", reply.status, expect.status, truncate(&body_text)));
    }
    let parsed = || serde_json::from_slice::<Json>(&reply.body);
    if let Some(expected) = &expect.json {
        match parsed() {
            Ok(actual) if json_equal(expected, &actual) => {}
            Ok(actual) => failures.push(format!("json {actual} != expected {expected}")),
            Err(e) => failures.push(format!("body is not JSON ({e}): {}", truncate(&body_text))),
        }
    }
    if let Some(expected) = &expect.json_contains {
        match parsed() {
            Ok(actual) => failures.extend(contains(expected, &actual, "$")),
            Err(e) => failures.push(format!("body is not JSON ({e}): {}", truncate(&body_text))),
        }
    }
    if let Some(expected) = &expect.decoded_json_contains {
        match decode(reply).and_then(|b| serde_json::from_slice::<Json>(&b).map_err(|e| e.to_string())) {
            Ok(actual) => failures.extend(contains(expected, &actual, "$")),
            Err(e) => failures.push(format!("decoded body: {e}")),
        }
    }
    if let Some(text) = &expect.text {
        if body_text != *text {
            failures.push(format!("body {:?} != expected {text:?}", truncate(&body_text)));
        }
    }
    if expect.body_empty == Some(true) && !reply.body.is_empty() {
        failures.push(format!("body should be empty, got {} bytes", reply.body.len()));
    }
    for (name, value) in &expect.headers {
        match reply.headers.get(name.as_str()).map(|v| v.to_str().unwrap_or("<non-ascii>")) {
            Some(actual) if actual == value => {}
            actual => failures.push(format!("header {name}: {actual:?} != expected {value:?}")),
        }
    }
    for (name, pattern) in &expect.header_patterns {
        let regex = regex::Regex::new(&format!("^(?:{pattern})$")).expect("valid regex in fixture");
        match reply.headers.get(name.as_str()).and_then(|v| v.to_str().ok()) {
            Some(actual) if regex.is_match(actual) => {}
            actual => failures.push(format!("header {name}: {actual:?} does not match {pattern}")),
        }
    }
    for name in &expect.headers_absent {
        if let Some(v) = reply.headers.get(name.as_str()) {
            failures.push(format!("header {name} should be absent, got {v:?}"));
        }
    }
    if reply.cut_off != expect.cut_off.unwrap_or(false) {
        let how = if reply.cut_off { "broke off before its end" } else { "ended normally, not cut off" };
        failures.push(format!("body {how} (got {:?})", truncate(&body_text)));
    }
    for needle in &expect.body_excludes {
        if body_text.contains(needle.as_str()) {
            failures.push(format!("body leaks {needle:?}"));
        }
    }
    failures
}

fn decode(reply: &Reply) -> Result<Vec<u8>, String> {
    let encoding = reply.headers.get("content-encoding").and_then(|v| v.to_str().ok()).unwrap_or("identity");
    let mut out = Vec::new();
    let body = reply.body.as_slice();
    let result = match encoding {
        "gzip" => flate2::read::GzDecoder::new(body).read_to_end(&mut out),
        "br" => brotli_decompressor::Decompressor::new(body, 4096).read_to_end(&mut out),
        "zstd" => zstd::stream::read::Decoder::new(body).and_then(|mut d| d.read_to_end(&mut out)),
        "identity" => {
            out.extend_from_slice(body);
            Ok(0)
        }
        other => return Err(format!("unknown content-encoding {other}")),
    };
    result.map(|_| out).map_err(|e| format!("{encoding} decoding failed: {e}"))
}

fn json_equal(a: &Json, b: &Json) -> bool {
    match (a, b) {
        // By value (`2.0` is `2.0`, `1e30` is `1E+30`), except that an expected integer must
        // arrive as one: a handler given `2.0` for an `int` holds 2, as pydantic gives it.
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64() && (x.is_f64() || !y.is_f64()),
        (Json::Array(x), Json::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b)),
        (Json::Object(x), Json::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w))),
        _ => a == b,
    }
}

pub fn contains(expected: &Json, actual: &Json, at: &str) -> Vec<String> {
    match (expected, actual) {
        (Json::Object(e), Json::Object(a)) => e
            .iter()
            .flat_map(|(k, v)| match a.get(k) {
                Some(w) => contains(v, w, &format!("{at}.{k}")),
                None => vec![format!("{at}.{k} missing (actual {actual})")],
            })
            .collect(),
        (Json::Array(e), Json::Array(a)) if e.len() == a.len() => {
            e.iter().zip(a).enumerate().flat_map(|(i, (v, w))| contains(v, w, &format!("{at}[{i}]"))).collect()
        }
        (e, a) if json_equal(e, a) => Vec::new(),
        (e, a) => vec![format!("{at}: {a} != expected {e}")],
    }
}

fn truncate(text: &str) -> String {
    text.chars().take(400).collect()
}
