//! Results as a Markdown table and a self-contained HTML page with bar charts.

use crate::runner::RunResult;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultSet {
    pub metadata: serde_json::Value,
    pub results: Vec<RunResult>,
}

fn frameworks(set: &ResultSet) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in &set.results {
        if !names.contains(&r.framework) {
            names.push(r.framework.clone());
        }
    }
    names
}

fn workloads(set: &ResultSet) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in &set.results {
        if !names.contains(&r.workload) {
            names.push(r.workload.clone());
        }
    }
    names
}

fn find<'a>(set: &'a ResultSet, framework: &str, workload: &str) -> Option<&'a RunResult> {
    set.results.iter().find(|r| r.framework == framework && r.workload == workload)
}

pub fn markdown(set: &ResultSet) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Ferrule benchmark report\n");
    for key in ["commit", "host", "date", "oha", "rustc", "duration_secs", "connections"] {
        if let Some(v) = set.metadata.get(key) {
            let _ = writeln!(out, "- {key}: {}", v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()));
        }
    }
    let _ = writeln!(out, "\nServer pinned to one core, oha to the other. CPU-µs/req is server CPU time (user+system) per completed request.\n");
    let _ = writeln!(out, "| workload | framework | req/s | p50 ms | p99 ms | CPU-µs/req | failed | req bytes | resp bytes | startup ms | peak RSS MB |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for workload in workloads(set) {
        for framework in frameworks(set) {
            if let Some(r) = find(set, &framework, &workload) {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.0} | {:.2} | {:.2} | {:.1} | {} | {} | {} | {:.0} | {:.1} |",
                    r.workload, r.framework, r.requests_per_sec, r.latency_p50_ms, r.latency_p99_ms, r.server_cpu_us_per_request,
                    r.failed_requests, r.request_body_bytes, r.response_body_bytes, r.startup_ms, r.peak_rss_kb as f64 / 1024.0
                );
            }
        }
    }
    out
}

/// Horizontal bars, one group per workload, one bar per framework.
fn chart(set: &ResultSet, title: &str, value: fn(&RunResult) -> f64, unit: &str) -> String {
    let names = frameworks(set);
    let colors = ["#c2410c", "#0369a1", "#15803d", "#7c3aed", "#b91c1c", "#a16207", "#0f766e", "#be185d"];
    let max = set.results.iter().map(value).fold(0.0_f64, f64::max).max(1e-9);
    let rows: Vec<(String, &RunResult)> = workloads(set)
        .into_iter()
        .flat_map(|w| names.iter().filter_map(move |f| find(set, f, &w).map(|r| (w.clone(), r))).collect::<Vec<_>>())
        .collect();
    let height = rows.len() * 18 + 40;
    let mut svg = format!("<h2>{title}</h2><svg width=\"860\" height=\"{height}\" role=\"img\" aria-label=\"{title}\">");
    for (i, (workload, r)) in rows.iter().enumerate() {
        let y = 20 + i * 18;
        let width = value(r) / max * 520.0;
        let color = colors[names.iter().position(|n| *n == r.framework).unwrap_or(0) % colors.len()];
        let _ = write!(
            svg,
            "<text x=\"0\" y=\"{}\" font-size=\"11\">{workload} · {}</text><rect x=\"250\" y=\"{}\" width=\"{width:.1}\" height=\"14\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{}\" font-size=\"11\">{:.1} {unit}</text>",
            y + 11, r.framework, y, 255.0 + width, y + 11, value(r)
        );
    }
    svg.push_str("</svg>");
    svg
}

pub fn html(set: &ResultSet) -> String {
    let mut table = String::from("<table><tr><th>workload</th><th>framework</th><th>req/s</th><th>p99 ms</th><th>CPU-µs/req</th><th>failed</th></tr>");
    for r in &set.results {
        let _ = write!(
            table,
            "<tr><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.2}</td><td>{:.1}</td><td>{}</td></tr>",
            r.workload, r.framework, r.requests_per_sec, r.latency_p99_ms, r.server_cpu_us_per_request, r.failed_requests
        );
    }
    table.push_str("</table>");
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Ferrule benchmark report</title><style>body{{font-family:system-ui,sans-serif;max-width:900px;margin:2em auto;color:#111}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 8px;text-align:right}}td:first-child,td:nth-child(2){{text-align:left}}</style></head><body><h1>Ferrule benchmark report</h1><pre>{}</pre>{}{}{}{}</body></html>",
        serde_json::to_string_pretty(&set.metadata).unwrap_or_default(),
        chart(set, "Requests per second (higher is better)", |r| r.requests_per_sec, "req/s"),
        chart(set, "Server CPU µs per request (lower is better)", |r| r.server_cpu_us_per_request, "µs"),
        chart(set, "p99 latency (lower is better)", |r| r.latency_p99_ms, "ms"),
        table
    )
}
