//! `ferrule-bench probe`: what a hostile or broken client can do to each binding's server,
//! tried for real on 127.0.0.1 against the same generated servers the benchmarks measure,
//! each started with a descriptor limit of 1,024 as a service manager would start it.
//!
//! | probe | what it does | passes when |
//! |---|---|---|
//! | `malformed` | no / two `Host`, a broken HTTP/2 preface, CL+TE smuggling shapes, a header bomb, a body bomb | each is refused (400, 431, 413, or closed unanswered) and `/health` still answers |
//! | `h2spec` | the pinned h2spec against a route that reads no body, one that reads JSON, and a path with no route | no case fails |
//! | `idle-flood` | 1,100 connections that never send a byte, beyond the 1,024 descriptors | `/health` on a new connection answers within 100 ms, every time |
//! | `slow-clients` | 500 slowloris heads and 200 slow bodies, one byte every 2 s | every one is closed within the default timeouts (30 s) + 1 s, and `/health`'s p99 (sampled every 100 ms) stays within 2x its unloaded p99 (or 5 ms over it: the 700 deadlines fire in one burst on a shared core) |
//!
//! After every probe the server must still be running. Results go to `probes.json` and
//! `probes.md` in `--out`; `--strict` exits 1 when any probe failed.

mod clients;

use crate::frameworks;
use crate::runner::{RunOptions, Server};
use crate::Args;
use serde::Serialize;
use std::path::Path;
use std::time::{Duration, Instant};

const DEFAULT_FRAMEWORKS: &str = "ferrule-rust,ferrule-python-sync,ferrule-node,ferrule-ruby";
const PROBES: &[&str] = &["malformed", "h2spec", "idle-flood", "slow-clients"];
/// The servers' descriptor limit: a common service default.
const SERVER_NOFILE: u64 = 1024;

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
    let mut outcomes = Vec::new();
    for name in names {
        let framework = frameworks::find(name)?;
        let command = framework.command(fixtures)?;
        let mut server = Server::start_limited(name, &command, &options, Some(SERVER_NOFILE))?;
        let port = server.port();
        for probe in &probes {
            let started = Instant::now();
            let (mut passed, mut detail) = match *probe {
                "malformed" => runtime.block_on(clients::malformed(port)),
                "h2spec" => clients::h2spec(&h2spec, port),
                "idle-flood" => runtime.block_on(clients::idle_flood(port)),
                "slow-clients" => runtime.block_on(clients::slow_clients(port)),
                _ => unreachable!("checked above"),
            };
            if !server.is_running() {
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
                "probe: {:<22} {:<13} {}  {} ({:.1} s)",
                outcome.framework,
                outcome.probe,
                if outcome.passed { "pass" } else { "FAIL" },
                outcome.detail,
                outcome.seconds
            );
            outcomes.push(outcome);
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
