//! Stream workloads: WebSocket echo and Server-Sent Events delivery. oha speaks neither, so
//! these are driven by the harness's own load client ([`client`], tokio-tungstenite and
//! hyper), run as a process of its own pinned to the client core exactly as oha is, with the
//! same /proc sampling of the server (see `runner::Server::measure_stream`).
//!
//! Every server under test serves the same three routes (added by each generator, see
//! `generate::streams`): `GET /ws/echo`, a WebSocket that sends every message back in kind;
//! `GET /ws/room`, a WebSocket room where every message a member sends goes to every member
//! (itself included), as a chat room is written in each framework; and `GET /sse/events?n=N`,
//! an event stream of `N` events with data `{"i": i}`, written as fast as the client reads.
//!
//! A "request" in the results is one message: for echo, one round trip (latency = round-trip
//! time); for broadcast, one message delivered to one member (latency = from its sending to
//! its arrival); for SSE, one event delivered (latency = time from connecting to the first
//! event); for connection setup, one whole WebSocket life (connect, upgrade, one echo, close;
//! latency = connect to echo).
//!
//! The server's CPU is sampled over the client's whole run, so the setting up of a workload's
//! connections is in its CPU-µs per message: for 1,000 members or subscribers that is a few
//! percent of a two-second run.

pub mod client;
mod room;

/// What the load client does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Each connection sends a text message of `bytes` and waits for it to come back, again
    /// and again.
    WsEcho { bytes: usize },
    /// Each connection subscribes to an event stream and reads events as fast as they come.
    Sse,
    /// `members` connections join the room; one of them sends a message, waits until every
    /// member has it, and sends the next.
    WsBroadcast { members: usize },
    /// Each connection opens a WebSocket, has one 32-byte message echoed, closes it, and
    /// opens the next.
    WsConnect,
}

impl Kind {
    /// Bytes of each message the client sends (0: it sends none).
    pub fn message_bytes(self) -> usize {
        match self {
            Kind::WsEcho { bytes } => bytes,
            Kind::WsBroadcast { .. } | Kind::WsConnect => client::SMALL,
            Kind::Sse => 0,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct StreamWorkload {
    pub name: &'static str,
    pub description: &'static str,
    pub kind: Kind,
    pub connections: usize,
}

pub const ALL: &[StreamWorkload] = &[
    StreamWorkload { name: "ws-echo-small", description: "WebSocket echo, 32-byte text messages, 50 connections", kind: Kind::WsEcho { bytes: 32 }, connections: 50 },
    StreamWorkload { name: "ws-echo-1k", description: "WebSocket echo, 1 KiB text messages, 50 connections", kind: Kind::WsEcho { bytes: 1024 }, connections: 50 },
    StreamWorkload { name: "ws-echo-64k", description: "WebSocket echo, 64 KiB text messages, 50 connections", kind: Kind::WsEcho { bytes: 64 * 1024 }, connections: 50 },
    StreamWorkload { name: "ws-broadcast-1000", description: "WebSocket room of 1,000 members, 32-byte text messages each sent to all", kind: Kind::WsBroadcast { members: 1000 }, connections: 1000 },
    StreamWorkload { name: "ws-connect", description: "WebSocket setup rate: connect, upgrade, one echo, close, again; 50 at a time", kind: Kind::WsConnect, connections: 50 },
    StreamWorkload { name: "sse-50", description: "Server-Sent Events to 50 subscribers, as fast as they read", kind: Kind::Sse, connections: 50 },
    StreamWorkload { name: "sse-1000", description: "Server-Sent Events to 1,000 subscribers, as fast as they read", kind: Kind::Sse, connections: 1000 },
];

pub fn find(name: &str) -> Result<&'static StreamWorkload, String> {
    ALL.iter().find(|w| w.name == name).ok_or_else(|| {
        format!("unknown stream workload `{name}` (known: {})", ALL.iter().map(|w| w.name).collect::<Vec<_>>().join(", "))
    })
}

/// Whether `name` is a stream workload (measured by the harness's client, not oha).
pub fn is_stream(name: &str) -> bool {
    ALL.iter().any(|w| w.name == name)
}

/// What the load client reports (printed as JSON by `ferrule-bench stream-client`).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ClientReport {
    /// Round trips (echo) or events (SSE) completed.
    pub messages: u64,
    /// Connections that failed (refused, broken, a wrong answer).
    pub failures: u64,
    pub latency_p50_ms: f64,
    pub latency_p99_ms: f64,
    /// Bytes of message payload received.
    pub bytes_received: u64,
}
