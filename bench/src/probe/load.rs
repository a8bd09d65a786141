//! The probes that need many requests: 10,000 keep-alive connections, a soak with memory and
//! descriptor drift, and SIGTERM in the middle of load. Their client is a plain HTTP/1.1
//! keep-alive loop over raw sockets, so every request's fate is known: a complete response, a
//! truncated one (the server read it and did not finish answering), or none at all (the
//! connection was closed before the request arrived: the keep-alive race every HTTP/1.1 client
//! retries, RFC 9112 §9.3.1). oha reports the last two as one error; a drain must tell them apart.

use super::clients::{complete_response, connect, health, status_of, Verdict};
use crate::procfs;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One request on a kept-alive connection.
enum Exchange {
    Complete { status: u16, close: bool },
    Truncated,
    Unanswered,
}

async fn exchange(stream: &mut TcpStream, request: &[u8]) -> Exchange {
    if stream.write_all(request).await.is_err() {
        return Exchange::Unanswered;
    }
    let mut answer = Vec::with_capacity(1024);
    let mut buf = [0u8; 8192];
    loop {
        match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {
                answer.extend_from_slice(&buf[..n]);
                if complete_response(&answer) {
                    let end = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(0);
                    let head = String::from_utf8_lossy(&answer[..end]).to_ascii_lowercase();
                    let close = head.lines().any(|l| l.starts_with("connection:") && l.contains("close"));
                    return Exchange::Complete { status: status_of(&answer).unwrap_or(0), close };
                }
            }
            _ if answer.is_empty() => return Exchange::Unanswered,
            _ => return Exchange::Truncated,
        }
    }
}

/// What a load's requests came to.
#[derive(Default)]
struct Tally {
    ok: u64,
    not_ok: u64,
    truncated: u64,
    unanswered: u64,
    told_to_close: u64,
    last_complete: Option<Instant>,
}

/// `connections` clients, each sending `request` over one kept-alive connection (a new one when
/// told to close or when one fails) until `remaining` runs out or `stop` is set; a client ends
/// when it cannot connect.
async fn load(port: u16, connections: usize, request: Arc<Vec<u8>>, remaining: Arc<AtomicI64>, stop: Arc<AtomicBool>) -> Tally {
    let tally = Arc::new(Mutex::new(Tally::default()));
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..connections {
        let (request, remaining, stop, tally) = (request.clone(), remaining.clone(), stop.clone(), tally.clone());
        clients.spawn(async move {
            let mut stream = None;
            while !stop.load(Ordering::Relaxed) && remaining.fetch_sub(1, Ordering::Relaxed) > 0 {
                if stream.is_none() {
                    match connect(port).await {
                        Ok(s) => stream = Some(s),
                        Err(_) => return,
                    }
                }
                let outcome = exchange(stream.as_mut().expect("connected above"), &request).await;
                let mut t = tally.lock().unwrap();
                match outcome {
                    Exchange::Complete { status, close } => {
                        if (200..300).contains(&status) {
                            t.ok += 1;
                        } else {
                            t.not_ok += 1;
                        }
                        t.last_complete = Some(Instant::now());
                        if close {
                            t.told_to_close += 1;
                            stream = None;
                        }
                    }
                    Exchange::Truncated => {
                        t.truncated += 1;
                        stream = None;
                    }
                    Exchange::Unanswered => {
                        t.unanswered += 1;
                        stream = None;
                    }
                }
            }
        });
    }
    while clients.join_next().await.is_some() {}
    Arc::try_unwrap(tally).ok().expect("every client ended").into_inner().unwrap()
}

/// `count` connections opened by `open` (those it gives up on left out), in batches of 500: as
/// clients arrive in a burst, without overflowing the listen backlog.
pub(super) async fn in_batches<T, F, Fut>(count: usize, open: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Option<T>> + Send + 'static,
{
    let mut opened = Vec::with_capacity(count);
    for first in (0..count).step_by(500) {
        let mut batch = tokio::task::JoinSet::new();
        for _ in first..count.min(first + 500) {
            batch.spawn(open());
        }
        while let Some(done) = batch.join_next().await {
            if let Ok(Some(connection)) = done {
                opened.push(connection);
            }
        }
    }
    opened
}

/// What an idle keep-alive connection may add to the server's RSS. Measured here on the Rust
/// server: 23.5 KiB with hyper holding the connection and mimalloc's regions on transparent
/// huge pages; 6.7 KiB once connections rest and the regions stay on 4 KiB pages (Python 7.0,
/// Node 7.3, Ruby 8.9); 1.7 KiB once the connection's task holds no room for hyper's
/// connection while it rests (Python 2.0, Node 2.3, Ruby 3.7).
const MAX_IDLE_KIB: f64 = 6.0;

/// 10,000 connections held open at once, each answered twice (so none was dropped to make
/// room), while a new connection's `/health` still answers; then, with all of them quiet past
/// the rest period (core/src/server/io.rs), what each one adds to the server's memory.
pub async fn keep_alive_10k(port: u16, pid: u32) -> Verdict {
    const CONNECTIONS: usize = 10_000;
    let request: &'static [u8] = b"GET /health HTTP/1.1\r\nHost: probe\r\n\r\n";
    let before_kb = procfs::tree_rss_kb(pid);
    let started = Instant::now();
    let open = in_batches(CONNECTIONS, move || async move {
        let mut stream = connect(port).await.ok()?;
        matches!(exchange(&mut stream, request).await, Exchange::Complete { status: 200, close: false }).then_some(stream)
    })
    .await;
    let opened = open.len();
    let open_secs = started.elapsed().as_secs_f64();
    let fresh = health(port).await;
    // Those answered again are kept until the end, so all 10,000 stay open together.
    let mut kept = Vec::with_capacity(CONNECTIONS);
    // Again on every connection, in the same batches: 10,000 requests at once would be shed
    // (503) by an interpreter's bounded queue, which is not what this probe asks about.
    let second = Instant::now();
    let mut twice = 0;
    let mut open = open.into_iter().peekable();
    while open.peek().is_some() {
        let mut round = tokio::task::JoinSet::new();
        for mut stream in open.by_ref().take(500) {
            round.spawn(async move { matches!(exchange(&mut stream, request).await, Exchange::Complete { status: 200, .. }).then_some(stream) });
        }
        while let Some(done) = round.join_next().await {
            if let Ok(Some(stream)) = done {
                twice += 1;
                kept.push(stream);
            }
        }
    }
    let second_secs = second.elapsed().as_secs_f64();
    let others_answered = quiet_while_serving_others(port).await;
    let held_kb = procfs::tree_rss_kb(pid);
    let per_connection_kib = held_kb.saturating_sub(before_kb) as f64 / kept.len().max(1) as f64;
    // Still held and answering after the rest: a sample of them asked a third time.
    let mut sampled = 0;
    let mut third = 0;
    for stream in kept.iter_mut().step_by(100) {
        sampled += 1;
        if matches!(exchange(stream, request).await, Exchange::Complete { status: 200, .. }) {
            third += 1;
        }
    }
    let detail = format!(
        "{opened} of {CONNECTIONS} connections opened and answered in {open_secs:.1} s, {twice} answered again on the same connection in {second_secs:.1} s; /health on a new one: {}; quiet for 2 s: server RSS {:.1} → {:.1} MiB, {per_connection_kib:.1} KiB per connection (limit {MAX_IDLE_KIB}), {third} of {sampled} sampled answer a third time",
        fresh.map_or("no answer".into(), |d| format!("{:.1} ms", d.as_secs_f64() * 1000.0)),
        before_kb as f64 / 1024.0,
        held_kb as f64 / 1024.0,
    );
    let passed = twice == CONNECTIONS
        && fresh.is_some_and(|d| d < Duration::from_secs(1))
        && others_answered
        && per_connection_kib <= MAX_IDLE_KIB
        && third == sampled;
    (passed, detail)
}

/// Leaves the connections a probe holds quiet past the rest period (1 s), then sends 2,000
/// requests on 4 other connections, as a server in service keeps answering: the allocator
/// returns freed pages to the system on its own allocation paths, not while the process
/// sleeps. Whether all 2,000 were answered.
pub async fn quiet_while_serving_others(port: u16) -> bool {
    let request = b"GET /health HTTP/1.1\r\nHost: probe\r\n\r\n".to_vec();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let others = load(port, 4, Arc::new(request), Arc::new(AtomicI64::new(2_000)), Arc::new(AtomicBool::new(false))).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    others.ok == 2_000
}

/// RSS and descriptors of the server's process tree after `requests` more requests.
async fn soak_leg(port: u16, request: &Arc<Vec<u8>>, requests: i64, pid: u32) -> (Tally, u64, u64) {
    let remaining = Arc::new(AtomicI64::new(requests));
    let tally = load(port, 50, request.clone(), remaining, Arc::new(AtomicBool::new(false))).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    (tally, procfs::tree_rss_kb(pid), procfs::tree_fds(pid))
}

/// 20,000 requests to warm up, then 2 x 100,000: memory may settle in the first hundred
/// thousand, but a leak grows by the same amount in the second. Descriptors must return to
/// their count before any load once the clients have gone.
pub async fn soak(port: u16, pid: u32, request: Vec<u8>) -> Verdict {
    const HALF: i64 = 100_000;
    // What a leak of 32 bytes per request would add over the second half.
    const ALLOWED_GROWTH_KB: u64 = (HALF as u64) * 32 / 1024;
    let request = Arc::new(request);
    let fds_before = procfs::tree_fds(pid);
    let started = Instant::now();
    let (warm, rss_warm, _) = soak_leg(port, &request, 20_000, pid).await;
    let (first, rss_mid, _) = soak_leg(port, &request, HALF, pid).await;
    let (second, rss_end, fds_end) = soak_leg(port, &request, HALF, pid).await;
    let failed: u64 = [&warm, &first, &second].iter().map(|t| t.not_ok + t.truncated + t.unanswered).sum();
    let served: u64 = [&warm, &first, &second].iter().map(|t| t.ok).sum();
    let growth = rss_end.saturating_sub(rss_mid);
    let mb = |kb: u64| kb as f64 / 1024.0;
    let detail = format!(
        "{served} requests in {:.0} s, {failed} failed; RSS {:.1} → {:.1} → {:.1} MiB (second 100k: +{:.2} MiB, limit {:.1}); descriptors {fds_before} before, {fds_end} after",
        started.elapsed().as_secs_f64(),
        mb(rss_warm),
        mb(rss_mid),
        mb(rss_end),
        mb(growth),
        mb(ALLOWED_GROWTH_KB)
    );
    (failed == 0 && growth <= ALLOWED_GROWTH_KB && fds_end <= fds_before + 2, detail)
}

/// SIGTERM while 50 connections keep sending and one client has sent half a request head: the
/// server must answer every request it read, close the half-sent connection at once, and exit
/// 0 within 1 s of its last response. `terminate` sends SIGTERM and waits up to the given time
/// for the exit: (exit code, None when killed by a signal; when it exited).
pub async fn shutdown_under_load(
    port: u16,
    terminate: impl FnOnce(Duration) -> Option<(Option<i32>, Instant)>,
    request: Vec<u8>,
) -> Verdict {
    let Ok(mut stalled) = connect(port).await else { return (false, "cannot connect".into()) };
    let _ = stalled.write_all(b"POST /json/small HTTP/1.1\r\nHost: probe\r\nContent-Type: application/json\r\n").await;
    let stop = Arc::new(AtomicBool::new(false));
    let running = tokio::spawn(load(port, 50, Arc::new(request), Arc::new(AtomicI64::new(i64::MAX)), stop.clone()));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let stalled_closed = tokio::spawn(async move {
        let mut buf = [0u8; 256];
        matches!(tokio::time::timeout(Duration::from_secs(15), stalled.read(&mut buf)).await, Ok(Ok(0)) | Ok(Err(_)))
            .then(Instant::now)
    });
    let signalled = Instant::now();
    let exit = tokio::task::block_in_place(|| terminate(Duration::from_secs(15)));
    stop.store(true, Ordering::Relaxed);
    let tally = running.await.unwrap_or_default();
    let stalled_closed = stalled_closed.await.ok().flatten();
    let Some((code, exited)) = exit else {
        return (false, format!("still running 15 s after SIGTERM ({} requests answered)", tally.ok));
    };
    let after_last = tally.last_complete.map_or(Duration::ZERO, |last| exited.saturating_duration_since(last));
    let stalled_ok = stalled_closed.is_some_and(|at| at <= exited + Duration::from_millis(50));
    let detail = format!(
        "exit {} {:.0} ms after SIGTERM, {:.0} ms after its last response; {} answered ({} of them not 200), {} truncated, {} not read (closed between requests), {} told Connection: close; half-sent head {}",
        code.map_or("by signal".into(), |c| c.to_string()),
        exited.duration_since(signalled).as_secs_f64() * 1000.0,
        after_last.as_secs_f64() * 1000.0,
        tally.ok + tally.not_ok,
        tally.not_ok,
        tally.truncated,
        tally.unanswered,
        tally.told_to_close,
        match stalled_closed {
            Some(at) => format!("closed {:.0} ms after SIGTERM", at.saturating_duration_since(signalled).as_secs_f64() * 1000.0),
            None => "never closed".into(),
        }
    );
    let passed = code == Some(0) && tally.truncated == 0 && tally.not_ok == 0 && after_last <= Duration::from_secs(1) && stalled_ok;
    (passed, detail)
}
