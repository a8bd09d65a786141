//! The `handler-faults` probe: handlers that raise, block past their deadline and sleep past
//! it (the fault routes of bench/src/generate/faults.rs), and what they leave behind.

use super::clients::{health, read_all, status_of, Verdict};
use crate::generate::faults::SECRET;
use std::time::{Duration, Instant};

/// One GET on a new connection: (status, the whole answer, how long it took).
async fn get(port: u16, path: &str) -> Option<(u16, String, Duration)> {
    let started = Instant::now();
    let request = format!("GET {path} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n");
    let answer = read_all(port, request.as_bytes()).await.ok()?;
    Some((status_of(&answer)?, String::from_utf8_lossy(&answer).into_owned(), started.elapsed()))
}

/// `count` concurrent GETs of `path`, then `/health` until it answers: the statuses, the
/// slowest answer, and when `/health` answered (from the start).
async fn burst_then_health(port: u16, path: &'static str, count: usize) -> (Vec<u16>, Duration, Option<Duration>) {
    let started = Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..count {
        calls.spawn(get(port, path));
    }
    // /health is asked as soon as the burst is sent, as a load balancer's check would be.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut healthy = None;
    while started.elapsed() < Duration::from_secs(20) {
        if health(port).await.is_some() {
            healthy = Some(started.elapsed());
            break;
        }
    }
    let mut statuses = Vec::new();
    let mut slowest = Duration::ZERO;
    while let Some(done) = calls.join_next().await {
        match done.ok().flatten() {
            Some((status, _, took)) => {
                statuses.push(status);
                slowest = slowest.max(took);
            }
            None => statuses.push(0),
        }
    }
    (statuses, slowest, healthy)
}

/// The fault routes run 3 s past a 1 s deadline (bench/src/generate/faults.rs). A 504 sent at
/// the deadline, not after the run, comes before the halfway mark:
const ANSWERED_AT_DEADLINE: Duration = Duration::from_secs(2);
/// `/health` behind one 3 s run, not two (6 s at least):
const ONE_RUN: Duration = Duration::from_millis(4500);

fn all(statuses: &[u16], wanted: u16) -> bool {
    statuses.iter().all(|s| *s == wanted)
}

pub async fn handler_faults(port: u16) -> Verdict {
    let ms = |d: Duration| format!("{:.0} ms", d.as_secs_f64() * 1000.0);
    let mut wrong = Vec::new();
    let mut seen = Vec::new();

    match get(port, "/fault/raise").await {
        Some((500, body, _)) if !body.contains(SECRET) && body.contains("application/problem+json") => seen.push("raise: 500 problem, nothing leaked".to_owned()),
        Some((status, body, _)) => wrong.push(format!("raise: {status}{}", if body.contains(SECRET) { ", the message leaked" } else { "" })),
        None => wrong.push("raise: no answer".into()),
    }

    // Five overruns of a 3 s blocking handler with a 1 s deadline cost one run, not five.
    let (statuses, slowest, healthy) = burst_then_health(port, "/fault/block", 5).await;
    seen.push(format!("5 blocking overruns: {statuses:?} within {}, /health after {}", ms(slowest), healthy.map_or("never".into(), ms)));
    if !all(&statuses, 504) || slowest > ANSWERED_AT_DEADLINE || !healthy.is_some_and(|h| h <= ONE_RUN) {
        wrong.push("blocking overruns: want five 504s within 2 s and /health within 4.5 s (one 3 s run, not two)".into());
    }

    // Thirty at once (the Ruby case of the issue): /health within 5 s of the last timeout.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (statuses, slowest, healthy) = burst_then_health(port, "/fault/block", 30).await;
    let timed_out = statuses.iter().filter(|s| **s == 504).count();
    seen.push(format!("30 blocking overruns: {timed_out} 504s within {}, /health after {}", ms(slowest), healthy.map_or("never".into(), ms)));
    if timed_out != 30 || !healthy.is_some_and(|h| h <= slowest + Duration::from_secs(5)) {
        wrong.push("30 blocking overruns: want thirty 504s and /health within 5 s of the last".into());
    }

    // Waiting without holding the thread: the deadline answers, and cancels where it can.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (statuses, slowest, healthy) = burst_then_health(port, "/fault/sleep", 5).await;
    seen.push(format!("5 sleeping overruns: {statuses:?} within {}, /health after {}", ms(slowest), healthy.map_or("never".into(), ms)));
    if !all(&statuses, 504) || slowest > ANSWERED_AT_DEADLINE || !healthy.is_some_and(|h| h <= ONE_RUN) {
        wrong.push("sleeping overruns: want five 504s within 2 s and /health within 4.5 s (one 3 s run, not two)".into());
    }
    // Let what could not be cancelled finish before the next probe measures anything.
    tokio::time::sleep(Duration::from_secs(3)).await;

    let detail = seen.join("; ");
    if wrong.is_empty() {
        (true, detail)
    } else {
        (false, format!("{}; {detail}", wrong.join("; ")))
    }
}
