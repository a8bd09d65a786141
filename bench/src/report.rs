//! Results as a Markdown report and a self-contained HTML page with charts: the full table,
//! Ferrule's Python/Rust cost ratio beside the reference framework's published ratios, and
//! Ferrule (Python) against each Python peer.

use crate::frameworks::CEILING;
use crate::runner::RunResult;
use serde::{Deserialize, Serialize};
use std::fmt::Write;
use std::path::Path;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultSet {
    pub metadata: serde_json::Value,
    pub results: Vec<RunResult>,
    #[serde(default)]
    pub errors: Vec<RunError>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunError {
    pub framework: String,
    pub workload: Option<String>,
    pub error: String,
}

/// The reference framework's published Rust/Python throughput ratios (fixtures/benchmarks/reference.json).
#[derive(Debug, Default, Deserialize)]
pub struct Reference {
    #[serde(default)]
    pub framework: String,
    #[serde(default)]
    pub rust_over_python: std::collections::BTreeMap<String, f64>,
}

pub fn write(set: &ResultSet, fixtures: &Path, out: &Path) -> Result<(), String> {
    let reference: Reference = crate::read_json(&fixtures.join("benchmarks/reference.json")).unwrap_or_default();
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    std::fs::write(out.join("report.md"), markdown(set, &reference)).map_err(|e| e.to_string())?;
    std::fs::write(out.join("report.html"), html(set, &reference)).map_err(|e| e.to_string())
}

fn ordered(values: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

fn frameworks(set: &ResultSet) -> Vec<String> {
    ordered(set.results.iter().map(|r| r.framework.clone()))
}

fn workloads(set: &ResultSet) -> Vec<String> {
    ordered(set.results.iter().map(|r| r.workload.clone()))
}

/// A framework × workload's repeated runs: the median of each measure, so that one round
/// caught in a slow phase of the machine does not move the ratios.
#[derive(Clone)]
struct Cell {
    rps: f64,
    p50: f64,
    p99: f64,
    cpu_us: f64,
    failed: u64,
    request_bytes: usize,
    response_bytes: u64,
    startup_ms: f64,
    peak_rss_mb: f64,
    runs: usize,
}

fn cell(set: &ResultSet, framework: &str, workload: &str) -> Option<Cell> {
    let runs: Vec<&RunResult> = set.results.iter().filter(|r| r.framework == framework && r.workload == workload).collect();
    if runs.is_empty() {
        return None;
    }
    let median = |f: fn(&RunResult) -> f64| crate::stats::median(runs.iter().map(|r| f(r)).collect());
    Some(Cell {
        rps: median(|r| r.requests_per_sec),
        p50: median(|r| r.latency_p50_ms),
        p99: median(|r| r.latency_p99_ms),
        cpu_us: median(|r| r.server_cpu_us_per_request),
        failed: runs.iter().map(|r| r.failed_requests).sum(),
        request_bytes: runs[0].request_body_bytes,
        response_bytes: runs[0].response_body_bytes,
        startup_ms: runs[0].startup_ms,
        peak_rss_mb: runs.iter().map(|r| r.peak_rss_kb).max().unwrap_or(0) as f64 / 1024.0,
        runs: runs.len(),
    })
}

/// Ferrule's Python/Rust rows: (workload, rust, python-sync, python-async, reference ratio).
struct RatioRow {
    workload: String,
    rust: Cell,
    sync: Option<Cell>,
    asynchronous: Option<Cell>,
    reference: Option<f64>,
}

fn ratio_rows(set: &ResultSet, reference: &Reference) -> Vec<RatioRow> {
    workloads(set)
        .into_iter()
        .filter_map(|w| {
            let rust = cell(set, "ferrule-rust", &w)?;
            Some(RatioRow {
                sync: cell(set, "ferrule-python-sync", &w),
                asynchronous: cell(set, "ferrule-python-async", &w),
                reference: reference.rust_over_python.get(&w).copied(),
                rust,
                workload: w,
            })
        })
        .filter(|row| row.sync.is_some() || row.asynchronous.is_some())
        .collect()
}

/// `rps` as a fraction of the ceiling's requests/s on the same workload (both medians of their
/// rounds); none when the ceiling was not measured there or answered nothing.
fn of_ceiling(rps: f64, ceiling: Option<&Cell>) -> Option<f64> {
    ceiling.filter(|c| c.rps > 0.0).map(|c| rps / c.rps)
}

fn fmt_ratio(x: Option<f64>) -> String {
    x.map(|x| format!("{x:.2}x")).unwrap_or_else(|| "–".into())
}

/// Each Ferrule binding and the peers it is compared with (its language's frameworks).
const PEERS: &[(&str, &str, &[&str])] = &[
    ("Python", "ferrule-python-sync", &["fastapi", "robyn", "granian", "spikard"]),
    ("Node.js", "ferrule-node", &["fastify", "express"]),
    ("Ruby", "ferrule-ruby", &["sinatra", "rack"]),
];

/// The stream workloads' comparisons: each language's Ferrule against the peers its users
/// would otherwise stream with, and Ferrule (Rust) against plain axum.
const STREAM_PEERS: &[(&str, &str)] = &[
    ("ferrule-rust", "axum"),
    ("ferrule-python-async", "fastapi"),
    ("ferrule-python-async", "robyn"),
    ("ferrule-python-sync", "fastapi"),
    ("ferrule-node", "fastify"),
    ("ferrule-node", "express"),
    ("ferrule-ruby", "rack"),
];

fn stream_section(out: &mut String, set: &ResultSet) {
    let streams: Vec<String> = workloads(set).into_iter().filter(|w| crate::stream::is_stream(w)).collect();
    if streams.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Stream workloads: WebSocket echo and SSE delivery\n");
    let _ = writeln!(
        out,
        "A request here is one message: an echo round trip (p50/p99: round-trip time) or one event delivered (p50/p99: time from connecting to the first event). Measured by the harness's own client (tokio-tungstenite, hyper) pinned like oha. Ratio = Ferrule msg/s ÷ peer msg/s · peer CPU-µs/msg ÷ Ferrule CPU-µs/msg (> 1: Ferrule ahead); `rack` is Puma + faye-websocket.\n"
    );
    let pairs: Vec<&(&str, &str)> = STREAM_PEERS.iter().filter(|(ours, peer)| frameworks(set).iter().any(|f| f == ours) && frameworks(set).iter().any(|f| f == peer)).collect();
    let _ = writeln!(out, "| workload | {} |", pairs.iter().map(|(ours, peer)| format!("{ours} vs {peer}")).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(pairs.len()));
    for w in &streams {
        let cells: Vec<String> = pairs
            .iter()
            .map(|(ours, peer)| match (cell(set, ours, w), cell(set, peer, w)) {
                (Some(o), Some(p)) if p.rps > 0.0 && o.cpu_us > 0.0 => {
                    let failed = if o.failed + p.failed > 0 { format!(" ({} / {} failed)", o.failed, p.failed) } else { String::new() };
                    format!("{:.2}x · {:.2}x{failed}", o.rps / p.rps, p.cpu_us / o.cpu_us)
                }
                _ => "–".into(),
            })
            .collect();
        let _ = writeln!(out, "| {w} | {} |", cells.join(" | "));
    }
    let _ = writeln!(out);
}

/// What each priced feature costs (frameworks.rs `Priced`): its server beside its base's, both
/// measured in the same turn of each round.
fn features_section(out: &mut String, set: &ResultSet) {
    let priced: Vec<(String, crate::frameworks::Priced)> = frameworks(set)
        .into_iter()
        .filter_map(|name| crate::frameworks::find(&name).ok().and_then(|f| f.priced).map(|p| (name, p)))
        .collect();
    if priced.is_empty() {
        return;
    }
    let _ = writeln!(out, "## What a feature costs\n");
    let _ = writeln!(
        out,
        "Each row: the base server and the same server with one feature on (`FERRULE_BENCH_FEATURE`, bench/src/generate/features.rs), measured back to back in every round. Cost = CPU-µs/req with it ÷ without, less one. The target for one request hook written in the language is at most +10% on path-simple (Robyn's middleware costs 26–42% of its throughput).\n"
    );
    let _ = writeln!(out, "| feature | server | workload | CPU-µs/req without | with | cost | req/s without | with |");
    let _ = writeln!(out, "|---|---|---|---:|---:|---:|---:|---:|");
    for (name, p) in &priced {
        for w in workloads(set) {
            let (Some(base), Some(with)) = (cell(set, p.base, &w), cell(set, name, &w)) else { continue };
            let cost = if base.cpu_us > 0.0 { format!("{:+.1}%", (with.cpu_us / base.cpu_us - 1.0) * 100.0) } else { "–".into() };
            let _ = writeln!(out, "| {} | {} | {w} | {:.1} | {:.1} | {cost} | {:.0} | {:.0} |", p.feature, p.base, base.cpu_us, with.cpu_us, base.rps, with.rps);
        }
    }
    let _ = writeln!(out);
}

pub fn markdown(set: &ResultSet, reference: &Reference) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Ferrule benchmark report\n");
    for key in ["commit", "host", "kernel", "oha", "profile", "duration_secs", "warmup_secs", "connections", "repeat", "pinning"] {
        if let Some(v) = set.metadata.get(key).filter(|v| !v.is_null()) {
            let _ = writeln!(out, "- {key}: {}", v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()));
        }
    }
    if let Some(versions) = set.metadata.get("versions").and_then(|v| v.as_object()) {
        let _ = writeln!(out, "- versions:");
        for (framework, lines) in versions {
            let joined: Vec<&str> = lines.as_array().map(|l| l.iter().filter_map(|x| x.as_str()).collect()).unwrap_or_default();
            let _ = writeln!(out, "  - {framework}: {}", joined.join(", "));
        }
    }
    let _ = writeln!(
        out,
        "\nEach server runs alone on one core, oha on the other. **CPU-µs/req** is the server's CPU time (user + system, whole process tree) per completed request: steadier than req/s on a shared machine. Ratios compare frameworks measured side by side in this run.\n"
    );

    let rows = ratio_rows(set, reference);
    if !rows.is_empty() {
        let _ = writeln!(out, "## Ferrule: Python handlers vs the same routes in Rust\n");
        let _ = writeln!(out, "Cost ratio = Python CPU-µs/req ÷ Rust CPU-µs/req (1.00x: Python costs nothing extra). The reference framework's published ratio is its Rust req/s ÷ Python req/s ({}).\n", if reference.framework.is_empty() { "reference" } else { &reference.framework });
        let _ = writeln!(out, "| workload | Rust req/s | Rust CPU-µs | Python sync req/s | sync cost ratio | Python async req/s | async cost ratio | Rust/Python req/s (sync) | reference framework Rust/Python |");
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for row in &rows {
            let sync_ratio = row.sync.as_ref().map(|s| s.cpu_us / row.rust.cpu_us);
            let async_ratio = row.asynchronous.as_ref().map(|s| s.cpu_us / row.rust.cpu_us);
            let _ = writeln!(
                out,
                "| {} | {:.0} | {:.1} | {} | {} | {} | {} | {} | {} |",
                row.workload,
                row.rust.rps,
                row.rust.cpu_us,
                row.sync.as_ref().map(|s| format!("{:.0}", s.rps)).unwrap_or_else(|| "–".into()),
                fmt_ratio(sync_ratio),
                row.asynchronous.as_ref().map(|s| format!("{:.0}", s.rps)).unwrap_or_else(|| "–".into()),
                fmt_ratio(async_ratio),
                fmt_ratio(row.sync.as_ref().map(|s| row.rust.rps / s.rps)),
                fmt_ratio(row.reference),
            );
        }
        let _ = writeln!(out);
    }

    for (language, ours_name, all_peers) in PEERS {
        let peers: Vec<&str> = all_peers.iter().copied().filter(|p| set.results.iter().any(|r| r.framework == *p)).collect();
        if peers.is_empty() || !set.results.iter().any(|r| r.framework == *ours_name) {
            continue;
        }
        let _ = writeln!(out, "## Ferrule ({language}) vs {language} peers\n");
        let _ = writeln!(out, "Per peer: {ours_name} req/s ÷ peer req/s, and peer CPU-µs/req ÷ {ours_name} CPU-µs/req (both > 1 when Ferrule is ahead).\n");
        let _ = writeln!(out, "| workload | {} |", peers.iter().map(|p| format!("vs {p}: req/s · CPU")).collect::<Vec<_>>().join(" | "));
        let _ = writeln!(out, "|---|{}", "---:|".repeat(peers.len()));
        for w in workloads(set) {
            let Some(ours) = cell(set, ours_name, &w) else { continue };
            let cells: Vec<String> = peers
                .iter()
                .map(|p| match cell(set, p, &w) {
                    Some(c) if c.failed == 0 => format!("{:.2}x · {:.2}x", ours.rps / c.rps, c.cpu_us / ours.cpu_us),
                    Some(c) => format!("{:.2}x · {:.2}x ({} failed)", ours.rps / c.rps, c.cpu_us / ours.cpu_us, c.failed),
                    None => "–".into(),
                })
                .collect();
            let _ = writeln!(out, "| {w} | {} |", cells.join(" | "));
        }
        let _ = writeln!(out);
    }

    stream_section(&mut out, set);
    features_section(&mut out, set);

    let _ = writeln!(out, "## All results\n");
    if set.results.iter().any(|r| r.framework == CEILING) {
        let _ = writeln!(
            out,
            "**of ceiling** = the framework's req/s ÷ the ceiling's on the same workload in this run. The ceiling is bare hyper on the same tokio runtime as the Rust servers, answering every request, whatever its path, with one fixed {}-byte JSON body after reading the request body: what oha can drive on this machine through the same core stack. It is no peer; it shows how much of the machine's reach each framework keeps.\n",
            crate::ceiling::BODY.len()
        );
    }
    let _ = writeln!(out, "| workload | framework | req/s | of ceiling | p50 ms | p99 ms | CPU-µs/req | failed | req bytes | resp bytes | startup ms | peak RSS MB | runs |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for w in workloads(set) {
        let ceiling = cell(set, CEILING, &w);
        for f in frameworks(set) {
            if let Some(c) = cell(set, &f, &w) {
                let share = of_ceiling(c.rps, ceiling.as_ref()).map(|x| format!("{:.0}%", x * 100.0)).unwrap_or_else(|| "–".into());
                let _ = writeln!(
                    out,
                    "| {w} | {f} | {:.0} | {share} | {:.2} | {:.2} | {:.1} | {} | {} | {} | {:.0} | {:.1} | {} |",
                    c.rps, c.p50, c.p99, c.cpu_us, c.failed, c.request_bytes, c.response_bytes, c.startup_ms, c.peak_rss_mb, c.runs
                );
            }
        }
    }
    if !set.errors.is_empty() {
        let _ = writeln!(out, "\n## Not measured\n");
        for e in &set.errors {
            let _ = writeln!(out, "- {} {}: {}", e.framework, e.workload.as_deref().unwrap_or("(all workloads)"), e.error.replace('\n', " "));
        }
    }
    out
}

const COLORS: [&str; 12] =
    ["#c2410c", "#0369a1", "#15803d", "#7c3aed", "#b91c1c", "#a16207", "#0f766e", "#be185d", "#4d7c0f", "#1d4ed8", "#9333ea", "#78350f"];

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Horizontal grouped bars: one group per workload, one bar per framework.
fn chart(set: &ResultSet, title: &str, value: fn(&Cell) -> f64, unit: &str) -> String {
    let names = frameworks(set);
    let rows: Vec<(String, String, f64)> = workloads(set)
        .into_iter()
        .flat_map(|w| names.iter().filter_map(|f| cell(set, f, &w).map(|c| (w.clone(), f.clone(), value(&c)))).collect::<Vec<_>>())
        .collect();
    let max = rows.iter().map(|r| r.2).fold(0.0_f64, f64::max).max(1e-9);
    let height = rows.len() * 16 + 30;
    let mut svg = format!("<h2>{}</h2><svg width=\"900\" height=\"{height}\" role=\"img\" aria-label=\"{}\">", escape(title), escape(title));
    let mut previous = String::new();
    for (i, (workload, framework, v)) in rows.iter().enumerate() {
        let y = 10 + i * 16;
        if *workload != previous {
            let _ = write!(svg, "<line x1=\"0\" x2=\"900\" y1=\"{}\" y2=\"{}\" stroke=\"#ddd\"/>", y, y);
            let _ = write!(svg, "<text x=\"0\" y=\"{}\" font-size=\"11\" font-weight=\"bold\">{}</text>", y + 11, escape(workload));
            previous.clone_from(workload);
        }
        let width = v / max * 480.0;
        let color = COLORS[names.iter().position(|n| n == framework).unwrap_or(0) % COLORS.len()];
        let _ = write!(
            svg,
            "<text x=\"150\" y=\"{}\" font-size=\"11\">{}</text><rect x=\"300\" y=\"{}\" width=\"{width:.1}\" height=\"12\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{}\" font-size=\"11\">{v:.1} {unit}</text>",
            y + 11,
            escape(framework),
            y + 1,
            305.0 + width,
            y + 11
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Ferrule's Python/Rust cost ratio next to the reference framework's Rust/Python ratio, on a log scale.
fn ratio_chart(set: &ResultSet, reference: &Reference) -> String {
    let rows = ratio_rows(set, reference);
    if rows.is_empty() {
        return String::new();
    }
    let scale = |x: f64| (x.max(1.0).log10() / 2.0).min(1.0) * 460.0; // 1x..100x
    let height = rows.len() * 34 + 40;
    let mut svg = format!(
        "<h2>How much more a request costs in Python than in Rust (log scale, 1x–100x)</h2><p>Ferrule: Python CPU-µs/req ÷ Rust CPU-µs/req, measured here. {}: its published Rust req/s ÷ Python req/s.</p><svg width=\"900\" height=\"{height}\">",
        escape(if reference.framework.is_empty() { "Reference" } else { &reference.framework })
    );
    for (i, row) in rows.iter().enumerate() {
        let y = 10 + i * 34;
        let ours = row.sync.as_ref().map(|s| s.cpu_us / row.rust.cpu_us).unwrap_or(0.0);
        let _ = write!(svg, "<text x=\"0\" y=\"{}\" font-size=\"11\">{}</text>", y + 12, escape(&row.workload));
        let _ = write!(svg, "<rect x=\"160\" y=\"{}\" width=\"{:.1}\" height=\"12\" fill=\"#c2410c\"/><text x=\"{:.1}\" y=\"{}\" font-size=\"11\">Ferrule {ours:.2}x</text>", y + 2, scale(ours).max(2.0), 165.0 + scale(ours).max(2.0), y + 12);
        if let Some(r) = row.reference {
            let _ = write!(svg, "<rect x=\"160\" y=\"{}\" width=\"{:.1}\" height=\"12\" fill=\"#9ca3af\"/><text x=\"{:.1}\" y=\"{}\" font-size=\"11\">reference {r:.2}x</text>", y + 16, scale(r), 165.0 + scale(r), y + 26);
        }
    }
    svg.push_str("</svg>");
    svg
}

fn markdown_tables_as_html(markdown: &str) -> String {
    let mut html = String::new();
    let mut in_table = false;
    for line in markdown.lines() {
        if line.starts_with('|') {
            if line.starts_with("|---") {
                continue;
            }
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let tag = if in_table { "td" } else { "th" };
            if !in_table {
                html.push_str("<table>");
                in_table = true;
            }
            html.push_str("<tr>");
            for c in cells {
                let _ = write!(html, "<{tag}>{}</{tag}>", escape(&c.replace("**", "")));
            }
            html.push_str("</tr>");
            continue;
        }
        if in_table {
            html.push_str("</table>");
            in_table = false;
        }
        if let Some(h) = line.strip_prefix("## ") {
            let _ = write!(html, "<h2>{}</h2>", escape(h));
        } else if let Some(h) = line.strip_prefix("# ") {
            let _ = write!(html, "<h1>{}</h1>", escape(h));
        } else if let Some(item) = line.strip_prefix("- ").or_else(|| line.strip_prefix("  - ")) {
            let _ = write!(html, "<div class=\"meta\">{}</div>", escape(item));
        } else if !line.trim().is_empty() {
            let _ = write!(html, "<p>{}</p>", escape(&line.replace("**", "")));
        }
    }
    if in_table {
        html.push_str("</table>");
    }
    html
}

pub fn html(set: &ResultSet, reference: &Reference) -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Ferrule benchmark report</title><style>body{{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;color:#111}}table{{border-collapse:collapse;margin:1em 0;font-size:13px}}td,th{{border:1px solid #ccc;padding:2px 8px;text-align:right}}td:first-child,th:first-child,td:nth-child(2){{text-align:left}}.meta{{font-size:13px;color:#444}}svg{{display:block;margin-bottom:1em}}</style></head><body>{}{}{}{}{}</body></html>",
        markdown_tables_as_html(&markdown(set, reference)),
        ratio_chart(set, reference),
        chart(set, "Requests per second (higher is better)", |c| c.rps, "req/s"),
        chart(set, "Server CPU µs per request (lower is better)", |c| c.cpu_us, "µs"),
        chart(set, "p99 latency (lower is better)", |c| c.p99, "ms"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(framework: &str, workload: &str, rps: f64, cpu: f64) -> RunResult {
        RunResult {
            framework: framework.into(),
            workload: workload.into(),
            requests_per_sec: rps,
            latency_p50_ms: 1.0,
            latency_p99_ms: 2.0,
            total_requests: 1000,
            failed_requests: 0,
            deadline_aborted: 3,
            server_cpu_us_per_request: cpu,
            server_cpu_percent: 99.0,
            server_cpu_peak_percent: 100.0,
            startup_ms: 100.0,
            rss_at_first_response_kb: 1000,
            peak_rss_kb: 2000,
            request_body_bytes: 86,
            response_body_bytes: 100,
            status_codes: Default::default(),
            round: 0,
        }
    }

    #[test]
    fn the_ratio_table_puts_measured_and_published_ratios_side_by_side() {
        let set = ResultSet {
            metadata: serde_json::json!({"commit": "abc"}),
            results: vec![
                result("ferrule-rust", "path-int", 30000.0, 30.0),
                result("ferrule-python-sync", "path-int", 25000.0, 36.0),
                result("fastapi", "path-int", 3000.0, 300.0),
            ],
            errors: vec![RunError { framework: "robyn".into(), workload: None, error: "did not start".into() }],
        };
        let reference = Reference { framework: "spikard".into(), rust_over_python: [("path-int".to_owned(), 24.67)].into() };
        let md = markdown(&set, &reference);
        assert!(md.contains("| path-int | 30000 | 30.0 | 25000 | 1.20x | – | – | 1.20x | 24.67x |"), "{md}");
        assert!(md.contains("| path-int | 8.33x · 8.33x |"), "{md}");
        assert!(md.contains("robyn (all workloads): did not start"));
        let page = html(&set, &reference);
        assert!(page.contains("<svg") && page.contains("reference 24.67x") && page.contains("<table>"));
    }

    #[test]
    fn each_framework_is_shown_as_a_share_of_the_ceiling_on_its_workload() {
        let set = ResultSet {
            metadata: serde_json::json!({}),
            results: vec![
                result("ceiling", "path-int", 80000.0, 10.0),
                result("ferrule-rust", "path-int", 60000.0, 14.0),
                result("ceiling", "json-large", 10000.0, 90.0),
                result("ferrule-rust", "json-large", 2500.0, 400.0),
                result("axum", "json-small", 50000.0, 15.0),
            ],
            errors: Vec::new(),
        };
        let md = markdown(&set, &Reference::default());
        assert!(md.contains("| path-int | ferrule-rust | 60000 | 75% |"), "{md}");
        assert!(md.contains("| path-int | ceiling | 80000 | 100% |"), "{md}");
        assert!(md.contains("| json-large | ferrule-rust | 2500 | 25% |"), "{md}");
        // No ceiling measured on that workload: no share to show.
        assert!(md.contains("| json-small | axum | 50000 | – |"), "{md}");
        assert!(md.contains("what oha can drive on this machine through the same core stack"));
        assert!(html(&set, &Reference::default()).contains("<th>of ceiling</th>"));
    }

    #[test]
    fn no_share_of_a_ceiling_that_answered_nothing() {
        let cell = |rps: f64| cell(&ResultSet { metadata: serde_json::json!({}), results: vec![result("ceiling", "w", rps, 1.0)], errors: Vec::new() }, "ceiling", "w");
        assert_eq!(of_ceiling(500.0, cell(1000.0).as_ref()), Some(0.5));
        assert_eq!(of_ceiling(500.0, cell(0.0).as_ref()), None);
        assert_eq!(of_ceiling(500.0, None), None);
    }

    #[test]
    fn repeated_runs_count_by_their_median() {
        let runs = [(30000.0, 30.0), (15000.0, 60.0), (31000.0, 29.0)];
        let set = ResultSet {
            metadata: serde_json::json!({}),
            results: runs.iter().map(|(rps, cpu)| result("ferrule-node", "path-int", *rps, *cpu)).collect(),
            errors: Vec::new(),
        };
        let cell = cell(&set, "ferrule-node", "path-int").expect("measured");
        assert_eq!((cell.rps, cell.cpu_us, cell.runs), (30000.0, 30.0, 3));
    }
}
