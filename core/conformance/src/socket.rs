//! WebSocket cases: the handshake written on a TCP socket (so a refused upgrade is an ordinary
//! reply, checked as any), then the case's script run by tungstenite's client — with raw
//! bytes for the frames no client library would send (fixtures/README.md, "WebSocket scripts").

use crate::client::Reply;
use crate::expect;
use crate::fixture::{Expect, Request};
use base64::Engine;
use serde_json::Value as Json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use tungstenite::handshake::client::generate_key;
use tungstenite::handshake::derive_accept_key;
use tungstenite::protocol::{frame::coding::CloseCode, CloseFrame, Role};
use tungstenite::{Message, WebSocket};

/// Opens the case's connection and runs its script; every unmet expectation, described.
pub fn converse(base: &str, request: &Request, expect: &Expect, script: &[Json]) -> Vec<String> {
    match run(base, request, expect, script) {
        Ok(problems) => problems,
        Err(problem) => vec![problem],
    }
}

fn run(base: &str, request: &Request, expect: &Expect, script: &[Json]) -> Result<Vec<String>, String> {
    let addr = base.trim_start_matches("http://").trim_end_matches('/');
    let mut tcp = TcpStream::connect(addr).map_err(|e| format!("connect {addr}: {e}"))?;
    tcp.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
    let key = generate_key();
    let mut head = format!("{} {} HTTP/1.1\r\nhost: {addr}\r\n", request.method, request.path);
    let mut upgrade = true;
    for (name, value) in &request.headers {
        if name.eq_ignore_ascii_case("upgrade") && value.as_str() == Some("") {
            upgrade = false; // the case is a plain request to a WebSocket route
            continue;
        }
        head.push_str(&format!("{name}: {}\r\n", value.as_str().ok_or("socket cases take string headers")?));
    }
    if upgrade {
        head.push_str(&format!("connection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: {key}\r\n"));
    }
    head.push_str("\r\n");
    tcp.write_all(head.as_bytes()).map_err(|e| format!("sending the handshake: {e}"))?;
    let (status, headers) = read_head(&mut tcp)?;
    if status != 101 {
        let length = headers.get("content-length").and_then(|v| v.to_str().ok()?.parse::<usize>().ok()).unwrap_or(0);
        let mut body = vec![0u8; length];
        tcp.read_exact(&mut body).map_err(|e| format!("reading the refusal's body: {e}"))?;
        return Ok(expect::check(expect, &Reply { status, headers, body, cut_off: false }));
    }
    let mut problems = expect::check(expect, &Reply { status, headers: headers.clone(), body: Vec::new(), cut_off: false });
    let accept = headers.get("sec-websocket-accept").and_then(|v| v.to_str().ok()).unwrap_or_default();
    if accept != derive_accept_key(key.as_bytes()) {
        problems.push(format!("Sec-WebSocket-Accept {accept:?} does not answer the key"));
    }
    let mut ws = WebSocket::from_raw_socket(tcp, Role::Client, None);
    for (at, step) in script.iter().enumerate() {
        if let Err(problem) = play(&mut ws, step) {
            problems.push(format!("step {at} ({step}): {problem}"));
            break;
        }
    }
    Ok(problems)
}

fn read_head(tcp: &mut TcpStream) -> Result<(u16, http::HeaderMap), String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        tcp.read_exact(&mut byte).map_err(|e| format!("reading the handshake's answer: {e}"))?;
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.split("\r\n");
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).ok_or("no status line")?;
    let mut headers = http::HeaderMap::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':').ok_or_else(|| format!("bad header line {line:?}"))?;
        let name = http::HeaderName::from_bytes(name.trim().as_bytes()).map_err(|e| e.to_string())?;
        headers.append(name, http::HeaderValue::from_str(value.trim()).map_err(|e| e.to_string())?);
    }
    Ok((status, headers))
}

fn decode64(text: &Json) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD.decode(text.as_str().unwrap_or_default()).map_err(|e| e.to_string())
}

fn play(ws: &mut WebSocket<TcpStream>, step: &Json) -> Result<(), String> {
    let step = step.as_object().ok_or("a step is an object")?;
    let send = |ws: &mut WebSocket<TcpStream>, message: Message| ws.send(message).map_err(|e| format!("send failed: {e}"));
    if let Some(text) = step.get("send_text") {
        return send(ws, Message::Text(text.as_str().unwrap_or_default().into()));
    }
    if let Some(data) = step.get("send_binary_base64") {
        return send(ws, Message::Binary(decode64(data)?.into()));
    }
    if let Some(data) = step.get("send_ping") {
        return send(ws, Message::Ping(data.as_str().unwrap_or_default().as_bytes().to_vec().into()));
    }
    if let Some(code) = step.get("send_close") {
        let code = code.as_u64().unwrap_or(1000) as u16;
        return ws.close(Some(CloseFrame { code: CloseCode::from(code), reason: "".into() })).map_err(|e| format!("close failed: {e}"));
    }
    if let Some(data) = step.get("send_raw_base64") {
        return ws.get_mut().write_all(&decode64(data)?).map_err(|e| format!("raw write failed: {e}"));
    }
    if let Some(expected) = step.get("expect_close") {
        loop {
            match ws.read() {
                Ok(Message::Close(frame)) => {
                    let (code, reason) = frame.map_or((1005, String::new()), |f| (u16::from(f.code), f.reason.as_str().to_owned()));
                    if Some(code as u64) != expected.as_u64() {
                        return Err(format!("closed with {code} ({reason:?})"));
                    }
                    for excluded in step.get("reason_excludes").and_then(Json::as_array).into_iter().flatten() {
                        if reason.contains(excluded.as_str().unwrap_or_default()) {
                            return Err(format!("the close reason {reason:?} leaks {excluded}"));
                        }
                    }
                    return Ok(());
                }
                Ok(Message::Ping(_) | Message::Pong(_)) => continue,
                Ok(other) => return Err(format!("expected the close, got {other:?}")),
                Err(e) => return Err(format!("no close frame: {e}")),
            }
        }
    }
    let received = loop {
        match ws.read() {
            Ok(Message::Ping(_)) => continue,
            Ok(Message::Pong(data)) if step.contains_key("expect_pong") => break Message::Pong(data),
            Ok(Message::Pong(_)) => continue,
            Ok(message) => break message,
            Err(e) => return Err(format!("nothing received: {e}")),
        }
    };
    let matched = match (&received, step.iter().next()) {
        (Message::Text(text), Some((key, expected))) if key == "expect_text" => expected.as_str() == Some(text.as_str()),
        (Message::Text(text), Some((key, expected))) if key == "expect_json" => {
            serde_json::from_str::<Json>(text).is_ok_and(|actual| expect::contains(expected, &actual, "$").is_empty())
        }
        (Message::Binary(data), Some((key, expected))) if key == "expect_binary_base64" => decode64(expected)? == data.to_vec(),
        (Message::Pong(data), Some((key, expected))) if key == "expect_pong" => expected.as_str().map(str::as_bytes) == Some(data.as_ref()),
        _ => false,
    };
    if matched {
        Ok(())
    } else {
        Err(format!("received {received:?}"))
    }
}
