//! Measuring: start a framework's server pinned to one core, wait for it, then for each
//! workload warm up and drive oha from the other core while reading the server's CPU time and
//! memory (its whole process tree: some servers fork workers) from /proc.

use crate::frameworks::ServerCommand;
use crate::procfs;
use crate::workload::Workload;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub oha: PathBuf,
    pub duration: Duration,
    pub warmup: Duration,
    pub connections: u32,
    pub server_core: u32,
    pub client_core: u32,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunResult {
    pub framework: String,
    pub workload: String,
    pub requests_per_sec: f64,
    pub latency_p50_ms: f64,
    pub latency_p99_ms: f64,
    pub total_requests: u64,
    /// Every non-2xx response and every connection error (oha's "aborted due to deadline" at
    /// the end of a timed run excluded).
    pub failed_requests: u64,
    pub deadline_aborted: u64,
    pub server_cpu_us_per_request: f64,
    /// Of `server_cpu_us_per_request`, the system time: the kernel's work for the server. Its
    /// socket reads and writes are a floor every server pays for the same requests (the
    /// ceiling's share shows it); the rest is the server's own doing (more system calls, threads
    /// woken). 0 in results written before it was recorded.
    #[serde(default)]
    pub server_system_us_per_request: f64,
    /// Mean server CPU use while measured (100 = one full core).
    pub server_cpu_percent: f64,
    /// Highest CPU use over any 100 ms sample while measured.
    #[serde(default)]
    pub server_cpu_peak_percent: f64,
    pub startup_ms: f64,
    pub rss_at_first_response_kb: u64,
    pub peak_rss_kb: u64,
    pub request_body_bytes: usize,
    pub response_body_bytes: u64,
    pub status_codes: std::collections::BTreeMap<String, u64>,
    /// Which round of a repeated run this is, 1-based (set by `matrix::measure`; 0 for a single
    /// `run` and in results written before rounds were recorded).
    #[serde(default)]
    pub round: u64,
}

pub fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}

/// A running server under test, stopped on drop.
pub struct Server {
    framework: String,
    child: Child,
    port: u16,
    startup_ms: f64,
    rss_at_first_response_kb: u64,
}

impl Server {
    pub fn start(framework: &str, command: &ServerCommand, options: &RunOptions) -> Result<Server, String> {
        Server::start_limited(framework, command, options, None)
    }

    /// Like [`Server::start`], with the server's file-descriptor limit (soft and hard) set to
    /// `nofile` (util-linux's `prlimit`), as a service manager would.
    pub fn start_limited(framework: &str, command: &ServerCommand, options: &RunOptions, nofile: Option<u64>) -> Result<Server, String> {
        let port = free_port()?;
        let args: Vec<String> = command.args.iter().map(|a| a.replace("{port}", &port.to_string())).collect();
        let started = Instant::now();
        let mut cmd = match nofile {
            Some(n) => {
                let mut cmd = Command::new("prlimit");
                cmd.arg(format!("--nofile={n}:{n}")).arg("taskset");
                cmd
            }
            None => Command::new("taskset"),
        };
        cmd.arg("-c").arg(options.server_core.to_string()).arg(&command.program).args(&args);
        cmd.envs(command.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &command.dir {
            cmd.current_dir(dir);
        }
        // Its own process group, so stopping it reaches the workers it forks too (and so the
        // harness stops it if it is stopped first: `interrupt`).
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::inherit());
        let child = crate::interrupt::spawn_in_own_group(&mut cmd).map_err(|e| format!("{framework}: cannot start {}: {e}", command.program.display()))?;
        let mut server = Server { framework: framework.to_owned(), child, port, startup_ms: 0.0, rss_at_first_response_kb: 0 };
        wait_until_serving(port, &mut server.child, framework)?;
        server.startup_ms = started.elapsed().as_secs_f64() * 1000.0;
        server.rss_at_first_response_kb = procfs::tree_rss_kb(server.child.id());
        Ok(server)
    }

    pub fn startup_ms(&self) -> f64 {
        self.startup_ms
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM to the server, as a service manager stops it, then waits up to `within` for
    /// it to exit: its exit code (None: killed by a signal) and when it exited.
    pub fn terminate(&mut self, within: Duration) -> Option<(Option<i32>, Instant)> {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).stderr(Stdio::null()).status();
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some((status.code(), Instant::now()));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        None
    }

    /// Whether the server process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// One workload: warm-up, then a timed oha run with /proc sampling every 100 ms.
    pub fn measure(&mut self, workload: &Workload, body: &[u8], options: &RunOptions) -> Result<RunResult, String> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Err(format!("{}: the server exited ({status})", self.framework));
        }
        let pid = self.child.id();
        let body_file = std::env::temp_dir().join(format!("ferrule-bench-{}-{}.body", std::process::id(), workload.name));
        std::fs::File::create(&body_file).and_then(|mut f| f.write_all(body)).map_err(|e| format!("writing {}: {e}", body_file.display()))?;
        let oha = |duration: Duration| run_oha(options, workload, &body_file, !body.is_empty(), self.port, duration);
        if !options.warmup.is_zero() {
            oha(options.warmup)?;
        }
        let (report, sample) = Sample::during(pid, || oha(options.duration));
        let _ = std::fs::remove_file(&body_file);
        let report = report?;

        let summary = Summary::of(&report);
        measured_something(summary.completed, (summary.failed, "requests"), "request", options.duration)?;
        let cpu_us = sample.cpu_us;
        let wall = sample.wall_secs;
        Ok(RunResult {
            framework: self.framework.clone(),
            workload: workload.name.clone(),
            requests_per_sec: summary.completed as f64 / options.duration.as_secs_f64(),
            latency_p50_ms: report["latencyPercentiles"]["p50"].as_f64().unwrap_or(0.0) * 1000.0,
            latency_p99_ms: report["latencyPercentiles"]["p99"].as_f64().unwrap_or(0.0) * 1000.0,
            total_requests: summary.completed,
            failed_requests: summary.failed,
            deadline_aborted: summary.deadline_aborted,
            server_cpu_us_per_request: if summary.completed > 0 { cpu_us / summary.completed as f64 } else { 0.0 },
            server_system_us_per_request: if summary.completed > 0 { sample.system_us / summary.completed as f64 } else { 0.0 },
            server_cpu_percent: cpu_us / (wall * 1_000_000.0) * 100.0,
            server_cpu_peak_percent: sample.peak_cpu_percent,
            startup_ms: self.startup_ms,
            rss_at_first_response_kb: self.rss_at_first_response_kb,
            peak_rss_kb: sample.peak_rss_kb,
            request_body_bytes: body.len(),
            response_body_bytes: report["summary"]["sizePerRequest"].as_u64().unwrap_or(0),
            status_codes: summary.status_codes,
            round: 0,
        })
    }
}

impl Server {
    /// One stream workload: a warm-up, then a timed run of the harness's own load client
    /// (`ferrule-bench stream-client`, pinned to the client core as oha is) with the same
    /// /proc sampling. A "request" is one message (echo round trip, or event delivered).
    pub fn measure_stream(&mut self, workload: &crate::stream::StreamWorkload, options: &RunOptions) -> Result<RunResult, String> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Err(format!("{}: the server exited ({status})", self.framework));
        }
        let pid = self.child.id();
        let client = |duration: Duration| run_stream_client(options, workload, self.port, duration);
        if !options.warmup.is_zero() {
            client(options.warmup)?;
        }
        let (report, sample) = Sample::during(pid, || client(options.duration));
        let report = report?;
        measured_something(report.messages, (report.failures, "connections"), "message", options.duration)?;
        let per_message = if report.messages > 0 { sample.cpu_us / report.messages as f64 } else { 0.0 };
        Ok(RunResult {
            framework: self.framework.clone(),
            workload: workload.name.to_owned(),
            requests_per_sec: report.messages as f64 / options.duration.as_secs_f64(),
            latency_p50_ms: report.latency_p50_ms,
            latency_p99_ms: report.latency_p99_ms,
            total_requests: report.messages,
            failed_requests: report.failures,
            deadline_aborted: 0,
            server_cpu_us_per_request: per_message,
            server_system_us_per_request: if report.messages > 0 { sample.system_us / report.messages as f64 } else { 0.0 },
            server_cpu_percent: sample.cpu_us / (sample.wall_secs * 1_000_000.0) * 100.0,
            server_cpu_peak_percent: sample.peak_cpu_percent,
            startup_ms: self.startup_ms,
            rss_at_first_response_kb: self.rss_at_first_response_kb,
            peak_rss_kb: sample.peak_rss_kb,
            request_body_bytes: workload.kind.message_bytes(),
            response_body_bytes: if report.messages > 0 { report.bytes_received / report.messages } else { 0 },
            status_codes: Default::default(),
            round: 0,
        })
    }
}

/// A timed run in which nothing completed measured nothing: its CPU per request would read 0,
/// the cheapest of all, beside real figures. It goes to the report's "Not measured" list with
/// what failed. Seen on `sse-1000` against a peer whose first events to 1,000 subscribers took
/// longer than the 2 s run: 0 events, 0 failed connections, "0.0 CPU-µs/msg".
fn measured_something(completed: u64, (failed, of): (u64, &str), unit: &str, run: Duration) -> Result<(), String> {
    if completed > 0 {
        return Ok(());
    }
    Err(format!("no {unit} completed in the {:.1} s timed run ({failed} {of} failed)", run.as_secs_f64()))
}

/// What the server's process tree did while something ran: CPU time (user + system, and the
/// system part alone), wall time, and from a sample every 100 ms its peak RSS and peak CPU rate.
struct Sample {
    cpu_us: f64,
    system_us: f64,
    wall_secs: f64,
    peak_rss_kb: u64,
    peak_cpu_percent: f64,
}

impl Sample {
    fn during<T>(pid: u32, run: impl FnOnce() -> T) -> (T, Sample) {
        let peak = Arc::new(AtomicU64::new(procfs::tree_rss_kb(pid)));
        let peak_cpu_per_mille = Arc::new(AtomicU64::new(0));
        let sampling = Arc::new(AtomicBool::new(true));
        let sampler = {
            let (peak, peak_cpu, sampling) = (peak.clone(), peak_cpu_per_mille.clone(), sampling.clone());
            let ticks_per_sec = procfs::clock_ticks_per_sec();
            std::thread::spawn(move || {
                let mut last = (Instant::now(), procfs::tree_cpu_ticks(pid));
                while sampling.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    peak.fetch_max(procfs::tree_rss_kb(pid), Ordering::Relaxed);
                    let now = (Instant::now(), procfs::tree_cpu_ticks(pid));
                    let busy = now.1.saturating_sub(last.1) as f64 / ticks_per_sec;
                    let per_mille = (busy / now.0.duration_since(last.0).as_secs_f64() * 1000.0) as u64;
                    peak_cpu.fetch_max(per_mille, Ordering::Relaxed);
                    last = now;
                }
            })
        };
        let before = procfs::tree_cpu_ticks_split(pid);
        let started = Instant::now();
        let outcome = run();
        let wall_secs = started.elapsed().as_secs_f64();
        let after = procfs::tree_cpu_ticks_split(pid);
        sampling.store(false, Ordering::Relaxed);
        let _ = sampler.join();
        let ticks_per_sec = procfs::clock_ticks_per_sec();
        let us = |ticks: u64| ticks as f64 * 1_000_000.0 / ticks_per_sec;
        let user = after.0.saturating_sub(before.0);
        let system = after.1.saturating_sub(before.1);
        let sample = Sample {
            cpu_us: us(user + system),
            system_us: us(system),
            wall_secs,
            peak_rss_kb: peak.load(Ordering::Relaxed),
            peak_cpu_percent: peak_cpu_per_mille.load(Ordering::Relaxed) as f64 / 10.0,
        };
        (outcome, sample)
    }
}

fn run_stream_client(options: &RunOptions, workload: &crate::stream::StreamWorkload, port: u16, duration: Duration) -> Result<crate::stream::ClientReport, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let output = Command::new("taskset")
        .arg("-c")
        .arg(options.client_core.to_string())
        .arg(me)
        .args(["stream-client", workload.name, "--port", &port.to_string(), "--duration", &duration.as_secs_f64().to_string()])
        .output()
        .map_err(|e| format!("cannot run the stream client: {e}"))?;
    if !output.status.success() {
        return Err(format!("the stream client failed: {}", String::from_utf8_lossy(&output.stderr).trim()));
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !stderr.trim().is_empty() {
        eprint!("({}) ", stderr.trim());
    }
    serde_json::from_slice(&output.stdout).map_err(|e| format!("the stream client printed no JSON ({e})"))
}

impl Drop for Server {
    /// SIGTERM to the process group, then SIGKILL after a grace period (Robyn, for one, does
    /// not exit on SIGTERM by itself).
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).stderr(Stdio::null()).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = Command::new("kill").args(["-KILL", "--", &group]).stderr(Stdio::null()).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        crate::interrupt::forget_group(self.child.id());
    }
}

fn run_oha(options: &RunOptions, workload: &Workload, body_file: &std::path::Path, has_body: bool, port: u16, duration: Duration) -> Result<serde_json::Value, String> {
    let url = format!("http://127.0.0.1:{port}{}", workload.request.path);
    let mut cmd = Command::new("taskset");
    cmd.arg("-c").arg(options.client_core.to_string()).arg(&options.oha);
    cmd.args(["--no-tui", "--output-format", "json", "-z", &format!("{}ms", duration.as_millis()), "-c", &options.connections.to_string()]);
    cmd.args(["-m", &workload.request.method]);
    if let Some(ct) = &workload.request.content_type {
        cmd.args(["-H", &format!("content-type: {ct}")]);
    }
    if has_body {
        cmd.arg("-D").arg(body_file);
    }
    cmd.arg(&url);
    let output = cmd.output().map_err(|e| format!("cannot run oha ({}): {e}", options.oha.display()))?;
    if !output.status.success() {
        return Err(format!("oha failed: {}", String::from_utf8_lossy(&output.stderr).trim()));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| format!("oha printed no JSON ({e})"))
}

struct Summary {
    completed: u64,
    failed: u64,
    deadline_aborted: u64,
    status_codes: std::collections::BTreeMap<String, u64>,
}

impl Summary {
    /// 2xx responses are successes; every other status and every error but oha's
    /// end-of-run "aborted due to deadline" is a failure.
    fn of(report: &serde_json::Value) -> Summary {
        let mut summary = Summary { completed: 0, failed: 0, deadline_aborted: 0, status_codes: Default::default() };
        if let Some(map) = report["statusCodeDistribution"].as_object() {
            for (status, count) in map {
                let count = count.as_u64().unwrap_or(0);
                summary.completed += count;
                if !status.starts_with('2') {
                    summary.failed += count;
                }
                summary.status_codes.insert(status.clone(), count);
            }
        }
        if let Some(errors) = report["errorDistribution"].as_object() {
            for (error, count) in errors {
                let count = count.as_u64().unwrap_or(0);
                if error.contains("deadline") {
                    summary.deadline_aborted += count;
                } else {
                    summary.failed += count;
                }
            }
        }
        summary
    }
}

fn wait_until_serving(port: u16, child: &mut Child, framework: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("{framework}: server exited during startup ({status})"));
        }
        if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let request = format!("GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
            if stream.write_all(request.as_bytes()).is_ok() {
                let mut buf = [0u8; 12];
                if std::io::Read::read(&mut stream, &mut buf).map(|n| n >= 12 && buf.starts_with(b"HTTP/1.1 2")).unwrap_or(false) {
                    return Ok(());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(format!("{framework}: no answer from GET /health on 127.0.0.1:{port} within 60 s"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_completed_nothing_is_not_a_result() {
        let run = Duration::from_secs(2);
        assert_eq!(measured_something(1, (0, "requests"), "request", run), Ok(()));
        assert_eq!(
            measured_something(0, (0, "connections"), "message", run),
            Err("no message completed in the 2.0 s timed run (0 connections failed)".to_owned())
        );
        assert_eq!(measured_something(0, (50, "requests"), "request", run).unwrap_err(), "no request completed in the 2.0 s timed run (50 requests failed)");
    }

    #[test]
    fn only_2xx_counts_as_success_and_deadline_aborts_are_not_failures() {
        let report = serde_json::json!({
            "statusCodeDistribution": {"200": 90, "201": 5, "422": 3, "500": 2},
            "errorDistribution": {"aborted due to deadline": 40, "connection reset": 1}
        });
        let summary = Summary::of(&report);
        assert_eq!((summary.completed, summary.failed, summary.deadline_aborted), (100, 6, 40));
    }
}
