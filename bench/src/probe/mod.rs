//! `ferrule-bench probe`: what a hostile or broken client can do to each binding's server,
//! tried for real on 127.0.0.1 against the same generated servers the benchmarks measure,
//! each started with a descriptor limit of 1,024 as a service manager would start it.
//!
//! | probe | what it does | passes when |
//! |---|---|---|
//! | `malformed` | no / two `Host`, a broken HTTP/2 preface, an `HTTP/2.0` request line, a malformed header, CL+TE smuggling shapes, a header bomb, a body bomb | each is refused (400, 505, 431, 413 with a problem document; a broken preface closed unanswered) and `/health` still answers |
//! | `h2spec` | the pinned h2spec against a route that reads no body, one that reads JSON, and a path with no route | no case fails |
//! | `idle-flood` | 1,100 connections that never send a byte, beyond the 1,024 descriptors | `/health` on a new connection answers within 100 ms, every time |
//! | `traversal` | raw requests for a served directory's files (fixtures/traversal.json) with the path climbing out in every encoding (`..`, `%2e%2e`, double-encoded, backslashes, NUL, a symlink leading outside, a hidden file) | each is refused (404 or 400) and the secret beside the directory never appears; the files inside are served |
//! | `handler-faults` | a handler that raises; 5, then 30, concurrent overruns of a 3 s blocking handler with a 1 s deadline; 5 of one that sleeps 3 s (bench/src/generate/faults.rs) | 500 without the message; 504s after 1 s (within 2 s); `/health` within 4.5 s, one run (5 overruns) or 5 s after the last 504 (30) |
//! | `ws-idle-10k` | 10,000 WebSocket connections to `/ws/echo` opened (server limit 16,384 descriptors), then left quiet for 2 s while 4 other connections send 2,000 requests | all 10,000 open, each adds at most 14 KiB to the server's RSS, every 100th still echoes after its rest, `/health` answers |
//! | `keep-alive-10k` | 10,000 connections opened and kept, each answered twice (server limit 16,384 descriptors), then left quiet for 2 s while 4 other connections send 2,000 requests | all 10,000 answered twice, `/health` on a new connection within 1 s, each kept connection adds at most 6 KiB to the server's RSS, and every 100th answers a third time |
//! | `soak` | 20,000 requests to warm up, then 2 x 100,000 (`json-small`, 50 keep-alive connections) | none fails, RSS grows by at most 32 B/request over the second 100,000, descriptors return to their count before the load |
//! | `shutdown` | SIGTERM after 2 s of `json-small` load on 50 connections, one connection holding half a request head (a server of its own) | exit status 0 within 1 s of the last response, no response truncated, the half-sent connection closed before the exit |
//! | `slow-clients` | 500 slowloris heads and 200 slow bodies, one byte every 2 s | every one is closed within the default timeouts (30 s) + 5 s, and `/health` (sampled every 100 ms, on a thread of its own) keeps its p95 within 2x its quiet p95, sampled the same way before them (or 5 ms over it: the 700 deadlines fire within two seconds on a shared core; or the quiet run's p99, at most 4x its p95) and answers every sample within 100 ms (or 4x the quiet run's p99, at most 1 s), net of any time within it that the machine took a core away (`stalls.rs`) |
//!
//! After every probe the server must still be running. Results go to `probes.json` and
//! `probes.md` in `--out`; `--strict` exits 1 when any probe failed.

mod clients;
mod faults;
mod load;
mod sockets;
mod stalls;
mod traversal;

use crate::frameworks;
use crate::runner::{RunOptions, Server};
use crate::Args;
use serde::Serialize;
use std::path::Path;
use std::time::{Duration, Instant};

const DEFAULT_FRAMEWORKS: &str = "ferrule-rust,ferrule-python-sync,ferrule-node,ferrule-ruby";
const PROBES: &[&str] = &["malformed", "h2spec", "idle-flood", "slow-clients", "handler-faults", "traversal", "soak", "keep-alive-10k", "ws-idle-10k", "shutdown"];
/// The servers' descriptor limit: a common service default.
const SERVER_NOFILE: u64 = 1024;
/// The limit of the server that holds 10,000 connections (within the usual hard limit).
const MANY_NOFILE: u64 = 16_384;

#[derive(Debug, Serialize)]
pub struct Outcome {
    pub framework: String,
    pub probe: String,
    pub passed: bool,
    pub detail: String,
    pub seconds: f64,
}

pub fn run(args: &Args, fixtures: &Path, options: RunOptions) -> Result<(), String> {
    let names: Vec<&str> = args.get("frameworks").unwrap_or(DEFAULT_FRAMEWORKS).split(',').collect();
    let probes: Vec<&str> = match args.get("probes") {
        Some(list) => list.split(',').collect(),
        None => PROBES.to_vec(),
    };
    if let Some(unknown) = probes.iter().find(|p| !PROBES.contains(p)) {
        return Err(format!("unknown probe {unknown} ({})", PROBES.join(", ")));
    }
    let h2spec = args.get("h2spec").map(str::to_owned).or_else(|| std::env::var("FERRULE_H2SPEC").ok()).unwrap_or_else(|| "h2spec".into());
    let out = args.get("out").map(std::path::PathBuf::from);
    clients::raise_own_descriptor_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the probe runtime: {e}"))?;
    let request = json_small_request(fixtures)?;
    let files = traversal::Tree::create(fixtures)?;
    let mut outcomes = Vec::new();
    for name in names {
        let framework = frameworks::find(name)?;
        let mut command = framework.command(fixtures)?;
        command.env.push(("FERRULE_PROBE_STATIC".into(), files.served().display().to_string()));
        // One server for the probes it survives; `keep-alive-10k` needs more descriptors and
        // `shutdown` ends its server, so each starts one of its own.
        let mut shared = Server::start_limited(name, &command, &options, Some(SERVER_NOFILE))?;
        for probe in &probes {
            let own_server = match *probe {
                "keep-alive-10k" | "ws-idle-10k" => Some(MANY_NOFILE),
                "shutdown" => Some(SERVER_NOFILE),
                _ => None,
            };
            let mut own = match own_server {
                Some(nofile) => Some(Server::start_limited(name, &command, &options, Some(nofile))?),
                None => None,
            };
            let server = own.as_mut().unwrap_or(&mut shared);
            let port = server.port();
            let started = Instant::now();
            let (mut passed, mut detail) = match *probe {
                "malformed" => runtime.block_on(clients::malformed(port)),
                "h2spec" => clients::h2spec(&h2spec, port),
                "idle-flood" => runtime.block_on(clients::idle_flood(port)),
                "slow-clients" => runtime.block_on(clients::slow_clients(port)),
                "handler-faults" => runtime.block_on(faults::handler_faults(port)),
                "traversal" => runtime.block_on(traversal::traversal(port, &files.paths)),
                "soak" => runtime.block_on(load::soak(port, server.pid(), request.clone())),
                "keep-alive-10k" => runtime.block_on(load::keep_alive_10k(port, server.pid())),
                "ws-idle-10k" => runtime.block_on(sockets::ws_idle_10k(port, server.pid())),
                "shutdown" => runtime.block_on(load::shutdown_under_load(port, |within| server.terminate(within), request.clone())),
                _ => unreachable!("checked above"),
            };
            if *probe != "shutdown" && !server.is_running() {
                passed = false;
                detail = format!("the server exited; {detail}");
            }
            let outcome = Outcome {
                framework: name.to_owned(),
                probe: (*probe).to_owned(),
                passed,
                detail,
                seconds: started.elapsed().as_secs_f64(),
            };
            eprintln!(
                "probe: {:<22} {:<14} {}  {} ({:.1} s)",
                outcome.framework,
                outcome.probe,
                if outcome.passed { "pass" } else { "FAIL" },
                outcome.detail,
                outcome.seconds
            );
            outcomes.push(outcome);
            drop(own);
            // Let the server close what the probe left behind before the next one starts.
            std::thread::sleep(Duration::from_millis(300));
        }
    }
    if let Some(out) = &out {
        write_report(out, &outcomes)?;
    }
    let failed = outcomes.iter().filter(|o| !o.passed).count();
    println!("probe: {} passed, {failed} failed", outcomes.len() - failed);
    if failed > 0 && args.flag("strict") {
        return Err(format!("{failed} probe(s) failed"));
    }
    Ok(())
}

/// The `json-small` workload's request, written out for the probes' raw-socket clients.
fn json_small_request(fixtures: &Path) -> Result<Vec<u8>, String> {
    let workloads = crate::workload::load(fixtures)?;
    let w = workloads.iter().find(|w| w.name == "json-small").ok_or("no json-small workload")?;
    let body = w.body(fixtures)?;
    let mut request = format!("{} {} HTTP/1.1\r\nHost: probe\r\n", w.request.method, w.request.path);
    if let Some(content_type) = &w.request.content_type {
        request.push_str(&format!("Content-Type: {content_type}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut bytes = request.into_bytes();
    bytes.extend_from_slice(&body);
    Ok(bytes)
}

fn write_report(out: &Path, outcomes: &[Outcome]) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let json = serde_json::to_string_pretty(outcomes).map_err(|e| e.to_string())?;
    std::fs::write(out.join("probes.json"), json).map_err(|e| format!("writing probes.json: {e}"))?;
    let mut md = String::from("# Reliability probes\n\n| framework | probe | result | detail | seconds |\n|---|---|---|---|---|\n");
    for o in outcomes {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {:.1} |\n",
            o.framework,
            o.probe,
            if o.passed { "pass" } else { "**FAIL**" },
            o.detail.replace('|', "\\|"),
            o.seconds
        ));
    }
    std::fs::write(out.join("probes.md"), md).map_err(|e| format!("writing probes.md: {e}"))
}
