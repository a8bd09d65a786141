//! The checker without a socket: a binding's in-process test client (Python's `TestClient`,
//! Node's `inject`, Ruby's Rack `call`) answers the corpus, and the checker judges it as it
//! judges a server.
//!
//! The test runs `ferrule-conformance check --via stdio` and plays the server: each request
//! comes as one JSON line on the checker's standard output, and the test writes its client's
//! answer back as one JSON line on the checker's standard input. Bytes that need not be text
//! (header values, bodies) travel as base64:
//!
//! ```text
//! → {"method": "POST", "path": "/items?n=1", "headers": [["content-type", "YXBw…"]], "body": "eyJ…"}
//! ← {"status": 201, "headers": [["content-type", "YXBw…"]], "body": "eyJ…", "cut_off": false}
//! ```
//!
//! The request is the one a real client would send ([`crate::client::build`]), so both paths
//! get the same bytes.

use crate::client::{build, Reply};
use crate::fixture::Request;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value as Json};
use std::io::{BufRead, Write};

/// Writes `request` to `output` and reads its answer from `input`.
pub fn send(input: &mut impl BufRead, output: &mut impl Write, request: &Request) -> Result<Reply, String> {
    let built = build("", request)?;
    let mut headers: Vec<Json> = built.headers().iter().map(|(name, value)| json!([name.as_str(), STANDARD.encode(value.as_bytes())])).collect();
    // What the HTTP client adds on the socket path, so both paths get the same request.
    if !built.body().is_empty() && !built.headers().contains_key(http::header::CONTENT_LENGTH) {
        headers.push(json!(["content-length", STANDARD.encode(built.body().len().to_string())]));
    }
    let line = json!({
        "method": built.method().as_str(),
        "path": built.uri().to_string(),
        "headers": headers,
        "body": STANDARD.encode(built.body()),
    });
    writeln!(output, "{line}").and_then(|()| output.flush()).map_err(|e| format!("cannot hand the request over: {e}"))?;
    let mut answer = String::new();
    match input.read_line(&mut answer) {
        Ok(0) => return Err("the test client gave no answer (its end of the pipe is closed)".into()),
        Ok(_) => {}
        Err(e) => return Err(format!("cannot read the answer: {e}")),
    }
    parse(&answer)
}

/// One answer line → the reply the expectations are checked against.
fn parse(line: &str) -> Result<Reply, String> {
    let answer: Json = serde_json::from_str(line).map_err(|e| format!("the answer is not JSON ({e}): {line}"))?;
    let status = answer["status"].as_u64().and_then(|s| u16::try_from(s).ok()).ok_or_else(|| format!("the answer has no status: {line}"))?;
    let decode = |value: &Json| STANDARD.decode(value.as_str().unwrap_or_default()).map_err(|e| format!("bad base64 in the answer ({e})"));
    let mut headers = http::HeaderMap::new();
    for pair in answer["headers"].as_array().into_iter().flatten() {
        let name = http::HeaderName::from_bytes(pair[0].as_str().unwrap_or_default().as_bytes()).map_err(|e| format!("header name: {e}"))?;
        let value = http::HeaderValue::from_bytes(&decode(&pair[1])?).map_err(|e| format!("header {name}: {e}"))?;
        headers.append(name, value);
    }
    Ok(Reply { status, headers, body: decode(&answer["body"])?, cut_off: answer["cut_off"].as_bool().unwrap_or(false) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_goes_out_as_a_line_and_its_answer_comes_back_as_one() {
        let request: Request = serde_json::from_value(json!({"method": "POST", "path": "/items?n=1", "body": {"json": {"a": 1}}})).unwrap();
        let answer = json!({"status": 201, "headers": [["x-seen", STANDARD.encode("yes")], ["set-cookie", STANDARD.encode("a=1")], ["set-cookie", STANDARD.encode("b=2")]], "body": STANDARD.encode("{}")});
        let (mut input, mut output) = (std::io::Cursor::new(format!("{answer}\n")), Vec::new());
        let reply = send(&mut input, &mut output, &request).unwrap();
        let sent: Json = serde_json::from_slice(&output).unwrap();
        assert_eq!((sent["method"].as_str(), sent["path"].as_str()), (Some("POST"), Some("/items?n=1")));
        assert_eq!(STANDARD.decode(sent["body"].as_str().unwrap()).unwrap(), br#"{"a":1}"#);
        assert!(sent["headers"].as_array().unwrap().contains(&json!(["content-type", STANDARD.encode("application/json")])));
        assert_eq!((reply.status, reply.headers.get_all("set-cookie").iter().count(), &reply.body[..], reply.cut_off), (201, 2, &b"{}"[..], false));
    }

    #[test]
    fn a_missing_or_broken_answer_is_a_failure_that_says_so() {
        let request: Request = serde_json::from_value(json!({"method": "GET", "path": "/"})).unwrap();
        let closed = send(&mut std::io::Cursor::new(""), &mut Vec::new(), &request).unwrap_err();
        assert!(closed.contains("gave no answer"), "{closed}");
        let broken = send(&mut std::io::Cursor::new("{\"headers\": []}\n"), &mut Vec::new(), &request).unwrap_err();
        assert!(broken.contains("no status"), "{broken}");
    }
}
