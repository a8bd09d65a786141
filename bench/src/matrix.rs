//! The whole matrix: every chosen framework × workload, repeated in rounds. Each round starts
//! every framework's server, then measures workload by workload, the frameworks one right after
//! another, so the runs a ratio compares are seconds apart rather than a whole framework's pass.
//! Progress on the terminal, results and report written at the end.

use crate::frameworks::{self, Framework};
use crate::report::{self, ResultSet, RunError};
use crate::runner::{RunOptions, RunResult, Server};
use crate::stream::{self, StreamWorkload};
use crate::workload::{self, Workload};
use crate::Args;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn chosen_workloads(args: &Args, fixtures: &Path) -> Result<Vec<Workload>, String> {
    let all = workload::load(fixtures)?;
    let chosen: Vec<Workload> = match args.get("workloads") {
        None | Some("all") => all,
        Some(list) => list
            .split(',')
            .filter(|n| !stream::is_stream(n))
            .map(|n| all.iter().find(|w| w.name == n).cloned().ok_or_else(|| format!("unknown workload {n}")))
            .collect::<Result<_, _>>()?,
    };
    for w in &chosen {
        w.body(fixtures)?; // refuses a payload off its definition before anything runs
    }
    Ok(chosen)
}

/// The stream workloads among `--workloads` (all of them by default).
fn chosen_streams(args: &Args) -> Result<Vec<&'static StreamWorkload>, String> {
    match args.get("workloads") {
        None | Some("all") => Ok(stream::ALL.iter().collect()),
        Some(list) => list.split(',').filter(|n| stream::is_stream(n)).map(stream::find).collect(),
    }
}

fn chosen_frameworks(args: &Args) -> Result<Vec<&'static Framework>, String> {
    match args.get("frameworks") {
        None | Some("all") => Ok(frameworks::ALL.iter().collect()),
        Some(list) => list.split(',').map(frameworks::find).collect(),
    }
}

pub fn metadata(args: &Args, options: &RunOptions, frameworks: &[&Framework]) -> serde_json::Value {
    let git = std::process::Command::new("git").args(["rev-parse", "HEAD"]).output().ok().filter(|o| o.status.success());
    let commit = std::env::var("FERRULE_COMMIT").ok().or_else(|| git.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned()));
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| c.lines().find_map(|l| l.strip_prefix("model name")).map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned()));
    let versions: serde_json::Map<String, serde_json::Value> =
        frameworks.iter().map(|f| (f.name.to_owned(), serde_json::json!(f.versions()))).collect();
    serde_json::json!({
        "commit": commit,
        "host": format!("{} ({} cores)", cpu.unwrap_or_default(), std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)),
        "kernel": std::fs::read_to_string("/proc/sys/kernel/osrelease").ok().map(|s| s.trim().to_owned()),
        "date_unix": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        "oha": crate::tool_version(&options.oha, "--version"),
        "profile": args.get("profile").unwrap_or("quick"),
        "duration_secs": options.duration.as_secs_f64(),
        "warmup_secs": options.warmup.as_secs_f64(),
        "connections": options.connections,
        "repeat": crate::repeats(args).unwrap_or(1),
        "pinning": format!("server on core {}, oha on core {}", options.server_core, options.client_core),
        "versions": versions,
    })
}

/// The frameworks in the order turn `turn` measures them: every other turn in reverse, so a
/// steady drift of the machine's speed, or being measured first after a switch, favours none.
/// A workload's turn is its position in the round plus the round's number, so consecutive
/// workloads alternate, and each workload alternates from round to round.
fn turn_order<T: Copy>(frameworks: &[T], turn: u64) -> Vec<T> {
    if turn % 2 == 1 {
        frameworks.to_vec()
    } else {
        frameworks.iter().rev().copied().collect()
    }
}

/// What one measurement covers: the frameworks, the HTTP workloads (with their bodies) and the
/// stream workloads, how many rounds, and which framework × workload pairs to measure.
pub struct Plan<'a> {
    pub frameworks: Vec<&'static Framework>,
    pub workloads: Vec<Workload>,
    pub bodies: Vec<Vec<u8>>,
    pub streams: Vec<&'static StreamWorkload>,
    pub repeat: u64,
    /// The matrix measures whatever a framework serves; `check` only what its budgets need.
    pub wants: &'a dyn Fn(&Framework, &str) -> bool,
}

/// Every run of a plan, and what could not be measured.
pub struct Measured {
    pub results: Vec<RunResult>,
    pub errors: Vec<RunError>,
}

pub fn run(args: &Args, fixtures: &Path, options: RunOptions) -> Result<(), String> {
    let out = PathBuf::from(args.get("out").ok_or("matrix needs --out DIR")?);
    let workloads = chosen_workloads(args, fixtures)?;
    let plan = Plan {
        frameworks: chosen_frameworks(args)?,
        bodies: workloads.iter().map(|w| w.body(fixtures)).collect::<Result<_, _>>()?,
        workloads,
        streams: chosen_streams(args)?,
        repeat: crate::repeats(args)?,
        wants: &|f: &Framework, w: &str| f.serves(w),
    };
    let metadata = metadata(args, &options, &plan.frameworks);
    let started = Instant::now();
    let Measured { results, errors } = measure(&plan, fixtures, &options);
    let set = ResultSet { metadata, results, errors };
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let json = serde_json::to_string_pretty(&set).map_err(|e| e.to_string())?;
    std::fs::write(out.join("results.json"), json).map_err(|e| e.to_string())?;
    let budgets = args.get("budgets").map(PathBuf::from).unwrap_or_else(crate::check::budgets::default_path);
    report::write(&set, fixtures, &budgets, &out)?;
    eprintln!("wrote {0}/results.json, {0}/report.md and {0}/report.html in {1:.0} s", out.display(), started.elapsed().as_secs_f64());
    if args.flag("strict") {
        let ferrule_failures: u64 = set
            .results
            .iter()
            .filter(|r| frameworks::find(&r.framework).map(|f| f.ferrule).unwrap_or(false))
            .map(|r| r.failed_requests)
            .sum();
        if ferrule_failures > 0 || !set.errors.is_empty() {
            return Err(format!("--strict: {ferrule_failures} failed Ferrule requests, {} frameworks or runs could not be measured", set.errors.len()));
        }
    }
    Ok(())
}

/// Measures a plan round by round, with progress on the terminal. Each result carries its
/// round, so ratios can be taken between runs of the same round.
pub fn measure(plan: &Plan, fixtures: &Path, options: &RunOptions) -> Measured {
    let Plan { frameworks, workloads, bodies, streams, repeat, wants } = plan;
    let repeat = *repeat;
    let served = |f: &Framework| workloads.iter().filter(|w| wants(f, &w.name)).count() + streams.iter().filter(|s| wants(f, s.name)).count();
    let runs: usize = frameworks.iter().map(|f| served(f)).sum::<usize>() * repeat as usize;
    let per_run = options.duration + options.warmup + Duration::from_millis(150);
    let mut results: Vec<RunResult> = Vec::new();
    let mut errors: Vec<RunError> = Vec::new();
    let mut done = 0usize;
    // Repeats are rounds over the whole matrix, not runs back to back: this machine's speed
    // drifts over minutes, and back-to-back repeats would catch a framework in one phase of it.
    let mut unstartable: Vec<&str> = Vec::new();
    for round in 1..=repeat {
        // All of the round's servers run at once: an idle one only waits on its socket, and
        // each is charged the CPU of its own process tree.
        let mut servers: Vec<(&Framework, Server)> = Vec::new();
        for framework in frameworks {
            if unstartable.contains(&framework.name) {
                continue;
            }
            match framework.command(fixtures).and_then(|c| Server::start(framework.name, &c, options)) {
                Ok(server) => {
                    eprintln!("{} started in {:.0} ms (round {round} of {repeat})", framework.name, server.startup_ms());
                    servers.push((framework, server));
                }
                Err(error) => {
                    eprintln!("  {}: {error}", framework.name);
                    errors.push(RunError { framework: framework.name.into(), workload: None, error });
                    unstartable.push(framework.name);
                    done += served(framework) * (repeat - round + 1) as usize;
                }
            }
        }
        let indices: Vec<usize> = (0..servers.len()).collect();
        for (position, (w, body)) in workloads.iter().zip(bodies).enumerate() {
            for index in turn_order(&indices, round + position as u64) {
                let (framework, server) = &mut servers[index];
                if !wants(framework, &w.name) {
                    continue;
                }
                done += 1;
                let left = per_run * (runs - done + 1) as u32;
                eprint!(
                    "[{done}/{runs}] {:<21} × {:<22} {}m{:02}s left … ",
                    framework.name,
                    w.name,
                    left.as_secs() / 60,
                    left.as_secs() % 60
                );
                match server.measure(w, body, options) {
                    Ok(r) => {
                        eprintln!(
                            "{:>8.0} req/s  p99 {:>6.2} ms  {:>6.1} CPU-µs/req ({:.1} kernel)  {} failed",
                            r.requests_per_sec, r.latency_p99_ms, r.server_cpu_us_per_request, r.server_system_us_per_request, r.failed_requests
                        );
                        results.push(RunResult { round, ..r });
                    }
                    Err(error) => {
                        eprintln!("error: {error}");
                        errors.push(RunError { framework: framework.name.into(), workload: Some(w.name.clone()), error });
                    }
                }
            }
        }
        for (position, w) in streams.iter().enumerate() {
            for index in turn_order(&indices, round + (workloads.len() + position) as u64) {
                let (framework, server) = &mut servers[index];
                if !wants(framework, w.name) {
                    continue;
                }
                done += 1;
                let left = per_run * (runs - done + 1) as u32;
                eprint!("[{done}/{runs}] {:<21} × {:<22} {}m{:02}s left … ", framework.name, w.name, left.as_secs() / 60, left.as_secs() % 60);
                match server.measure_stream(w, options) {
                    Ok(r) => {
                        eprintln!(
                            "{:>8.0} msg/s  p99 {:>6.2} ms  {:>6.1} CPU-µs/msg ({:.1} kernel)  {} failed",
                            r.requests_per_sec, r.latency_p99_ms, r.server_cpu_us_per_request, r.server_system_us_per_request, r.failed_requests
                        );
                        results.push(RunResult { round, ..r });
                    }
                    Err(error) => {
                        eprintln!("error: {error}");
                        errors.push(RunError { framework: framework.name.into(), workload: Some(w.name.to_owned()), error });
                    }
                }
            }
        }
    }
    Measured { results, errors }
}

#[cfg(test)]
mod tests {
    use super::turn_order;

    #[test]
    fn turns_alternate_the_framework_order() {
        let orders: Vec<Vec<char>> = (1..=3).map(|turn| turn_order(&['a', 'b', 'c'], turn)).collect();
        assert_eq!(orders, [vec!['a', 'b', 'c'], vec!['c', 'b', 'a'], vec!['a', 'b', 'c']]);
    }
}
