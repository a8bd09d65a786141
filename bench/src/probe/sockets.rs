//! `ws-idle-10k`: 10,000 WebSocket connections opened to `/ws/echo` and left idle, held by one
//! server (descriptor limit 16,384), with its memory weighed once they have been quiet past the
//! rest period: what an app with many quiet subscribers (a chat, a notification feed) costs
//! per connection, at most [`MAX_IDLE_KIB`].

use super::clients::{connect, health, Verdict};
use futures_util::{SinkExt, StreamExt};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

const CONNECTIONS: usize = 10_000;
/// What an idle WebSocket may add to the server's RSS. Measured here: 25.8 KiB (Rust) to 32.5
/// KiB (Ruby) while tungstenite kept its buffers; 10.8 (Rust), 13.3 (Python), 15.5 (Node) and
/// 17.3 KiB (Ruby) once a quiet socket rests (core/src/socket/rest.rs); 5.8, 8.3, 10.4 and
/// 12.2 KiB once the connection's task was made small (core/src/server/connection.rs); 4.0,
/// 6.5, 9.1 and 10.9 KiB once the session's was (core/src/socket/session.rs).
const MAX_IDLE_KIB: f64 = 14.0;

pub async fn ws_idle_10k(port: u16, pid: u32) -> Verdict {
    let before_kb = crate::procfs::tree_rss_kb(pid);
    let started = Instant::now();
    let mut open = super::load::in_batches(CONNECTIONS, move || async move {
        let tcp = connect(port).await.ok()?;
        let opening = tokio_tungstenite::client_async(format!("ws://127.0.0.1:{port}/ws/echo"), tcp);
        tokio::time::timeout(Duration::from_secs(10), opening).await.ok()?.ok().map(|(ws, _)| ws)
    })
    .await;
    let opened = open.len();
    let open_secs = started.elapsed().as_secs_f64();
    // Weighed with every connection open and quiet past the rest period.
    let others_answered = super::load::quiet_while_serving_others(port).await;
    let held_kb = crate::procfs::tree_rss_kb(pid);
    // Every 100th connection still answers after its rest.
    let mut answered = 0;
    for ws in open.iter_mut().step_by(100) {
        let echoed = async {
            ws.send(Message::Text("still here".into())).await.ok()?;
            match ws.next().await {
                Some(Ok(Message::Text(text))) if text.as_str() == "still here" => Some(()),
                _ => None,
            }
        };
        if tokio::time::timeout(Duration::from_secs(5), echoed).await.ok().flatten().is_some() {
            answered += 1;
        }
    }
    let sampled = opened.div_ceil(100);
    let fresh = health(port).await;
    drop(open);
    let per_connection_kb = held_kb.saturating_sub(before_kb) as f64 / opened.max(1) as f64;
    let detail = format!(
        "{opened} of {CONNECTIONS} opened in {open_secs:.1} s; quiet for 2 s: server RSS {:.1} MiB idle → {:.1} MiB holding them ({per_connection_kb:.1} KiB each, limit {MAX_IDLE_KIB}); {answered} of {sampled} sampled still echo; /health {}",
        before_kb as f64 / 1024.0,
        held_kb as f64 / 1024.0,
        fresh.map_or("did not answer".to_owned(), |d| format!("in {:.1} ms", d.as_secs_f64() * 1000.0))
    );
    let passed = opened == CONNECTIONS && others_answered && per_connection_kb <= MAX_IDLE_KIB && answered == sampled && fresh.is_some();
    (passed, detail)
}
