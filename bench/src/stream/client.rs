//! The stream load client: every connection on one single-threaded tokio runtime (the client
//! is pinned to one core, as oha is), WebSockets through tokio-tungstenite, event streams
//! through hyper's HTTP/1.1 client connection.

use super::{ClientReport, Kind, StreamWorkload};
use futures_util::{SinkExt, StreamExt};
use http_body_util::BodyExt;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

/// Events a subscriber asks for: more than any run can read, so the deadline ends it.
const SSE_EVENTS: u64 = 1_000_000_000;
/// How long one answer may take before its connection counts as failed.
pub(super) const ANSWER_WITHIN: Duration = Duration::from_secs(10);
/// The small messages' size (echo-small, broadcast, connection setup).
pub const SMALL: usize = 32;

pub fn run(port: u16, workload: &StreamWorkload, duration: Duration) -> Result<ClientReport, String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    let deadline = Instant::now() + duration;
    let kind = workload.kind;
    let outcomes = runtime.block_on(async {
        if let Kind::WsBroadcast { members } = kind {
            return super::room::run(port, members, deadline).await;
        }
        let connections = (0..workload.connections).map(|_| {
            tokio::spawn(async move {
                match kind {
                    Kind::WsEcho { bytes } => echo(port, bytes, deadline).await,
                    Kind::Sse => subscribe(port, deadline).await,
                    Kind::WsConnect => connect_again(port, deadline).await,
                    Kind::WsBroadcast { .. } => unreachable!("run by room::run"),
                }
            })
        });
        let mut outcomes = Vec::new();
        for connection in connections.collect::<Vec<_>>() {
            outcomes.push(connection.await.unwrap_or_else(|e| Outcome { failed: Some(e.to_string()), ..Default::default() }));
        }
        outcomes
    });
    let mut latencies: Vec<Duration> = outcomes.iter().flat_map(|o| o.latencies.iter().copied()).collect();
    latencies.sort_unstable();
    let percentile = |p: f64| latencies.get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1))).map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    if let Some(first) = outcomes.iter().find_map(|o| o.failed.as_ref()) {
        eprintln!("stream client: {} of {} connections failed; the first: {first}", outcomes.iter().filter(|o| o.failed.is_some()).count(), outcomes.len());
    }
    Ok(ClientReport {
        messages: outcomes.iter().map(|o| o.messages).sum(),
        failures: outcomes.iter().filter(|o| o.failed.is_some()).count() as u64,
        latency_p50_ms: percentile(0.50),
        latency_p99_ms: percentile(0.99),
        bytes_received: outcomes.iter().map(|o| o.bytes).sum(),
    })
}

#[derive(Default)]
pub(super) struct Outcome {
    pub messages: u64,
    pub bytes: u64,
    pub latencies: Vec<Duration>,
    pub failed: Option<String>,
}

pub(super) type WebSocket = tokio_tungstenite::WebSocketStream<TcpStream>;

async fn connect(port: u16) -> Result<TcpStream, String> {
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.map_err(|e| format!("connect: {e}"))?;
    let _ = tcp.set_nodelay(true);
    Ok(tcp)
}

/// A WebSocket to `path`, upgraded.
pub(super) async fn open(port: u16, path: &str) -> Result<WebSocket, String> {
    let tcp = connect(port).await?;
    let (ws, _) = tokio_tungstenite::client_async(format!("ws://127.0.0.1:{port}{path}"), tcp).await.map_err(|e| format!("handshake: {e}"))?;
    Ok(ws)
}

/// Waits for the echo of a `bytes`-long text message (pings and pongs pass).
async fn echoed(ws: &mut WebSocket, bytes: usize) -> Result<(), String> {
    loop {
        match tokio::time::timeout(ANSWER_WITHIN, ws.next()).await {
            Ok(Some(Ok(Message::Text(text)))) if text.len() == bytes => return Ok(()),
            Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
            Ok(Some(Ok(other))) => return Err(format!("the echo was {} bytes of {other:?}", other.len())),
            Ok(Some(Err(e))) => return Err(format!("receive: {e}")),
            Ok(None) => return Err("the server closed the connection".into()),
            Err(_) => return Err("no echo within 10 s".into()),
        }
    }
}

/// Sends a message and waits for it to come back, until the deadline.
async fn echo(port: u16, bytes: usize, deadline: Instant) -> Outcome {
    let mut outcome = Outcome::default();
    if let Err(failure) = echo_into(&mut outcome, port, bytes, deadline).await {
        outcome.failed = Some(failure);
    }
    outcome
}

async fn echo_into(outcome: &mut Outcome, port: u16, bytes: usize, deadline: Instant) -> Result<(), String> {
    let mut ws = open(port, "/ws/echo").await?;
    let payload = Utf8Bytes::from("x".repeat(bytes));
    while Instant::now() < deadline {
        let sent = Instant::now();
        ws.send(Message::Text(payload.clone())).await.map_err(|e| format!("send: {e}"))?;
        echoed(&mut ws, bytes).await?;
        outcome.latencies.push(sent.elapsed());
        outcome.messages += 1;
        outcome.bytes += bytes as u64;
    }
    let _ = ws.close(None).await;
    Ok(())
}

/// Opens a WebSocket, has one small message echoed, closes it, and again, until the deadline.
async fn connect_again(port: u16, deadline: Instant) -> Outcome {
    let mut outcome = Outcome::default();
    let payload = Utf8Bytes::from("x".repeat(SMALL));
    while Instant::now() < deadline {
        let started = Instant::now();
        let life = async {
            let mut ws = open(port, "/ws/echo").await?;
            ws.send(Message::Text(payload.clone())).await.map_err(|e| format!("send: {e}"))?;
            echoed(&mut ws, SMALL).await?;
            let took = started.elapsed();
            close(ws).await;
            Ok::<_, String>(took)
        };
        match life.await {
            Ok(took) => {
                outcome.latencies.push(took);
                outcome.messages += 1;
                outcome.bytes += SMALL as u64;
            }
            Err(failure) => {
                outcome.failed = Some(failure);
                break;
            }
        }
    }
    outcome
}

/// The closing handshake, then the server's end of the TCP connection (a server closes it
/// first, RFC 6455 §7.1.1, so the client's ports do not pile up in TIME_WAIT); a server that
/// does neither within a second is left.
async fn close(mut ws: WebSocket) {
    let closing = async {
        ws.close(None).await.ok()?;
        while let Some(Ok(_)) = ws.next().await {}
        Some(())
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), closing).await;
}

/// Subscribes to the event stream and counts whole events until the deadline.
async fn subscribe(port: u16, deadline: Instant) -> Outcome {
    let mut outcome = Outcome::default();
    let subscribing = subscribe_into(&mut outcome, port, deadline);
    match tokio::time::timeout_at(deadline, subscribing).await {
        Ok(Err(failure)) => outcome.failed = Some(failure),
        Ok(Ok(())) | Err(_) => {}
    }
    // A subscriber still waiting for its first event at the deadline is not a failure: with a
    // thousand streams written as fast as they are read, the one client core is the limit.
    outcome
}

async fn subscribe_into(outcome: &mut Outcome, port: u16, deadline: Instant) -> Result<(), String> {
    let started = Instant::now();
    let tcp = connect(port).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp)).await.map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(connection);
    let request = http::Request::get(format!("/sse/events?n={SSE_EVENTS}"))
        .header("host", format!("127.0.0.1:{port}"))
        .header("accept", "text/event-stream")
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .map_err(|e| e.to_string())?;
    let response = sender.send_request(request).await.map_err(|e| format!("request: {e}"))?;
    if response.status() != 200 {
        return Err(format!("status {}", response.status()));
    }
    let mut body = response.into_body();
    let mut events = EventCounter::default();
    while Instant::now() < deadline {
        let Some(frame) = body.frame().await else { return Err("the stream ended".into()) };
        let frame = frame.map_err(|e| format!("body: {e}"))?;
        if let Some(data) = frame.data_ref() {
            let whole = events.feed(data);
            if whole > 0 && outcome.messages == 0 {
                outcome.latencies.push(started.elapsed());
            }
            outcome.messages += whole;
            outcome.bytes += data.len() as u64;
        }
    }
    Ok(())
}

/// Counts events in an event stream's bytes, whatever their chunking: an event is a block of
/// lines with a `data` field, ended by an empty line (`\n` or `\r\n` line ends; comment-only
/// keep-alives are not events).
#[derive(Default)]
struct EventCounter {
    /// Bytes of the current line so far (a `\r` not counted).
    line: usize,
    /// The current line starts with `data` (checked on its first four bytes).
    prefix: [u8; 4],
    has_data: bool,
}

impl EventCounter {
    fn feed(&mut self, bytes: &[u8]) -> u64 {
        let mut whole = 0;
        for &byte in bytes {
            match byte {
                b'\n' => {
                    if self.line == 0 {
                        if self.has_data {
                            whole += 1;
                        }
                        self.has_data = false;
                    } else if self.line >= 4 && &self.prefix == b"data" {
                        self.has_data = true;
                    }
                    self.line = 0;
                }
                b'\r' => {}
                other => {
                    if self.line < 4 {
                        self.prefix[self.line] = other;
                    }
                    self.line += 1;
                }
            }
        }
        whole
    }
}

#[cfg(test)]
mod tests {
    use super::EventCounter;

    #[test]
    fn events_are_counted_across_chunks_and_line_endings_and_comments_are_not() {
        let mut counter = EventCounter::default();
        let stream = b"data: {\"i\":0}\n\n:\n\nevent: x\r\ndata: 1\r\n\r\ndata: 2\n";
        let mut total = 0;
        for chunk in stream.chunks(3) {
            total += counter.feed(chunk);
        }
        assert_eq!(total, 2);
        assert_eq!(counter.feed(b"\n"), 1, "the third ends with its empty line");
    }
}
