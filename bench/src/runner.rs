//! One framework × workload measurement: start the server pinned to one core, wait for it,
//! warm up, drive oha from the other core, and read the server's CPU time from /proc.

use crate::workload::Workload;
use serde::Serialize;
use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub oha: PathBuf,
    pub duration_secs: u64,
    pub warmup_secs: u64,
    pub connections: u32,
    pub server_core: u32,
    pub client_core: u32,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct RunResult {
    pub framework: String,
    pub workload: String,
    pub requests_per_sec: f64,
    pub latency_p50_ms: f64,
    pub latency_p99_ms: f64,
    pub total_requests: u64,
    pub failed_requests: u64,
    pub deadline_aborted: u64,
    pub server_cpu_us_per_request: f64,
    pub startup_ms: f64,
    pub rss_at_first_response_kb: u64,
    pub peak_rss_kb: u64,
    pub request_body_bytes: usize,
    pub response_body_bytes: u64,
}

/// How to start one framework's server: a program and its arguments; `{port}` is replaced.
#[derive(Debug, Clone)]
pub struct ServerCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
}

pub fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}

struct Server {
    child: Child,
}

impl Drop for Server {
    /// SIGTERM, then SIGKILL after a grace period (some servers ignore SIGTERM).
    fn drop(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn run(framework: &str, command: &ServerCommand, workload: &Workload, fixtures: &Path, options: &RunOptions) -> Result<RunResult, String> {
    let body = workload.body(fixtures)?;
    let port = free_port()?;
    let args: Vec<String> = command.args.iter().map(|a| a.replace("{port}", &port.to_string())).collect();
    let started = Instant::now();
    let child = Command::new("taskset")
        .arg("-c")
        .arg(options.server_core.to_string())
        .arg(&command.program)
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("{framework}: cannot start {}: {e}", command.program.display()))?;
    let mut server = Server { child };
    let pid = server.child.id();
    wait_until_serving(port, &mut server.child, framework)?;
    let startup_ms = started.elapsed().as_secs_f64() * 1000.0;
    let rss_at_first_response_kb = rss_kb(pid).unwrap_or(0);

    let body_file = std::env::temp_dir().join(format!("ferrule-bench-{}-{}.body", std::process::id(), workload.name));
    std::fs::File::create(&body_file).and_then(|mut f| f.write_all(&body)).map_err(|e| format!("writing {}: {e}", body_file.display()))?;
    let url = format!("http://127.0.0.1:{port}{}", workload.request.path);
    let content_type = workload.request.content_type.clone();
    let oha = |secs: u64| -> Result<serde_json::Value, String> {
        let mut cmd = Command::new("taskset");
        cmd.arg("-c").arg(options.client_core.to_string()).arg(&options.oha);
        cmd.args(["--no-tui", "--output-format", "json", "-z", &format!("{secs}s"), "-c", &options.connections.to_string()]);
        cmd.args(["-m", &workload.request.method]);
        if let Some(ct) = &content_type {
            cmd.args(["-H", &format!("content-type: {ct}")]);
        }
        if !body.is_empty() {
            cmd.arg("-D").arg(&body_file);
        }
        cmd.arg(&url);
        let output = cmd.output().map_err(|e| format!("cannot run oha ({}): {e}", options.oha.display()))?;
        if !output.status.success() {
            return Err(format!("oha failed: {}", String::from_utf8_lossy(&output.stderr).trim()));
        }
        serde_json::from_slice(&output.stdout).map_err(|e| format!("oha printed no JSON ({e})"))
    };
    if options.warmup_secs > 0 {
        oha(options.warmup_secs)?;
    }
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(rss_at_first_response_kb));
    let sampling = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let (peak, sampling) = (peak.clone(), sampling.clone());
        std::thread::spawn(move || {
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(rss) = rss_kb(pid) {
                    peak.fetch_max(rss, std::sync::atomic::Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let cpu_before = cpu_ticks(pid)?;
    let report = oha(options.duration_secs);
    let cpu_after = cpu_ticks(pid)?;
    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
    let _ = sampler.join();
    let _ = std::fs::remove_file(&body_file);
    drop(server);
    let report = report?;

    let (ok, failed) = status_counts(&report);
    let deadline_aborted = report["errorDistribution"]
        .as_object()
        .map(|m| m.iter().filter(|(k, _)| k.contains("deadline")).map(|(_, v)| v.as_u64().unwrap_or(0)).sum())
        .unwrap_or(0);
    let other_errors: u64 = report["errorDistribution"]
        .as_object()
        .map(|m| m.iter().filter(|(k, _)| !k.contains("deadline")).map(|(_, v)| v.as_u64().unwrap_or(0)).sum())
        .unwrap_or(0);
    let completed = ok + failed;
    let cpu_us = (cpu_after - cpu_before) as f64 * 1_000_000.0 / clock_ticks_per_sec();
    let summary = &report["summary"];
    Ok(RunResult {
        framework: framework.to_owned(),
        workload: workload.name.clone(),
        requests_per_sec: completed as f64 / options.duration_secs as f64,
        latency_p50_ms: report["latencyPercentiles"]["p50"].as_f64().unwrap_or(0.0) * 1000.0,
        latency_p99_ms: report["latencyPercentiles"]["p99"].as_f64().unwrap_or(0.0) * 1000.0,
        total_requests: completed,
        failed_requests: failed + other_errors,
        deadline_aborted,
        server_cpu_us_per_request: if completed > 0 { cpu_us / completed as f64 } else { 0.0 },
        startup_ms,
        rss_at_first_response_kb,
        peak_rss_kb: peak.load(std::sync::atomic::Ordering::Relaxed),
        request_body_bytes: body.len(),
        response_body_bytes: summary["sizePerRequest"].as_u64().unwrap_or(0),
    })
}

/// 2xx responses count as successes; every other status is a failure.
fn status_counts(report: &serde_json::Value) -> (u64, u64) {
    let mut ok = 0;
    let mut failed = 0;
    if let Some(map) = report["statusCodeDistribution"].as_object() {
        for (status, count) in map {
            let count = count.as_u64().unwrap_or(0);
            if status.starts_with('2') {
                ok += count;
            } else {
                failed += count;
            }
        }
    }
    (ok, failed)
}

fn wait_until_serving(port: u16, child: &mut Child, framework: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("{framework}: server exited during startup ({status})"));
        }
        if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let request = format!("GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
            if stream.write_all(request.as_bytes()).is_ok() {
                let mut buf = [0u8; 12];
                if std::io::Read::read(&mut stream, &mut buf).map(|n| n >= 12 && buf.starts_with(b"HTTP/1.1 ")).unwrap_or(false) {
                    return Ok(());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(format!("{framework}: no response on 127.0.0.1:{port} within 30 s"))
}

/// utime + stime of the process and its threads, in clock ticks (/proc/<pid>/stat fields 14–15).
fn cpu_ticks(pid: u32) -> Result<u64, String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|e| format!("server process gone: {e}"))?;
    let after_name = stat.rsplit_once(") ").map(|(_, rest)| rest).ok_or("unreadable /proc stat")?;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let utime: u64 = fields.get(11).and_then(|f| f.parse().ok()).ok_or("no utime")?;
    let stime: u64 = fields.get(12).and_then(|f| f.parse().ok()).ok_or("no stime")?;
    Ok(utime + stime)
}

fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
}

fn clock_ticks_per_sec() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_2xx_counts_as_success() {
        let report = serde_json::json!({"statusCodeDistribution": {"200": 90, "201": 5, "422": 3, "500": 2}});
        assert_eq!(status_counts(&report), (95, 5));
    }

    #[test]
    fn reads_own_cpu_and_rss() {
        let pid = std::process::id();
        assert!(cpu_ticks(pid).is_ok());
        assert!(rss_kb(pid).unwrap_or(0) > 0);
    }
}
