//! The report's text and tables in Markdown: report.md is these sections in order, and the
//! page shows the same tables (converted by `page`), so the two never disagree.

use super::budgets::{Budget, Budgets};
use super::summary::{language_name, Language};
use super::{cell, fmt_ratio, frameworks, of_ceiling, workloads, Cell, Report, ResultSet};
use crate::frameworks::CEILING;
use std::fmt::Write;

/// report.md: the summary first, the full table after.
pub fn markdown(report: &Report) -> String {
    let mut out = header(report.set);
    out.push_str(&summary(report));
    for language in &report.languages {
        out.push_str(&language_section(report, language));
    }
    out.push_str(&streams(report.set));
    out.push_str(&features(report.set));
    out.push_str(&all_results(report.set));
    out.push_str(&not_measured(report.set));
    out.push_str(&run_details(report.set));
    out
}

/// The title and one line on what was measured how.
pub fn header(set: &ResultSet) -> String {
    let mut out = String::from("# Ferrule benchmark report\n\n");
    let _ = writeln!(out, "{}\n", run_line(set));
    let _ = writeln!(
        out,
        "Each server runs alone on one core, oha on the other. **CPU-µs/req** is the server's CPU time (user + system, whole process tree) per completed request: steadier than req/s on a shared machine. Ratios compare frameworks measured side by side in this run; each framework × workload is the median of its rounds.\n"
    );
    out
}

/// `commit abc1234 · profile quick · 3 rounds · 2 s runs`: what a reader needs to weigh the
/// numbers, the rest is in the run's details at the end.
pub fn run_line(set: &ResultSet) -> String {
    let text = |key: &str| set.metadata.get(key).filter(|v| !v.is_null()).map(|v| v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()));
    let rounds = set.results.iter().map(|r| r.round).max().unwrap_or(0).max(1);
    let mut parts = Vec::new();
    if let Some(commit) = text("commit") {
        parts.push(format!("commit {}", commit.get(..12).unwrap_or(&commit)));
    }
    if let Some(profile) = text("profile") {
        parts.push(format!("profile {profile}"));
    }
    parts.push(format!("{rounds} round{}", if rounds == 1 { "" } else { "s" }));
    if let Some(d) = text("duration_secs") {
        parts.push(format!("{d} s runs"));
    }
    if let Some(host) = text("host") {
        parts.push(host);
    }
    parts.join(" · ")
}

/// The budgets of a language as Markdown list items, each with its overall verdict first.
fn budget_items(budgets: &[&Budget]) -> String {
    let mut out = String::new();
    for b in budgets {
        let _ = writeln!(out, "- **{}** #{} {}: {}", b.overall().text(), b.number, b.promise, b.verdict());
    }
    out
}

/// Ferrule against each peer over the workloads: one table per language.
pub fn summary_table(language: &Language) -> String {
    let mut out = String::new();
    let total = language.comparisons.first().map_or(0, |c| c.workloads.len());
    let _ = writeln!(out, "| peer | CPU-µs/req: peer ÷ Ferrule | lowest – highest | req/s: Ferrule ÷ peer | workloads |");
    let _ = writeln!(out, "|---|---:|---:|---:|---:|");
    for c in &language.comparisons {
        let (cpu, rps) = (c.cpu(), c.rps());
        let range = cpu.map(|s| format!("{:.2}x – {:.2}x", s.low, s.high)).unwrap_or_else(|| "–".into());
        let _ = writeln!(out, "| {} | {} | {range} | {} | {} of {total} |", c.peer, fmt_ratio(cpu.map(|s| s.mean)), fmt_ratio(rps.map(|s| s.mean)), cpu.map_or(0, |s| s.count));
    }
    out
}

/// Why a language has no ratios, when it has none.
pub fn no_comparison(language: &Language) -> Option<String> {
    match (&language.ferrule, language.comparisons.is_empty()) {
        (None, _) => Some(format!("Ferrule ({}) was not measured in this run: no ratio to show.", language.name)),
        (Some(_), true) => Some(format!("No {} peer was measured in this run.", language.name)),
        _ => None,
    }
}

pub fn budgets_note(report: &Report) -> String {
    match &report.budgets {
        Err(e) => format!("Budgets: not shown ({e})."),
        Ok(Budgets { path, unmeasured, .. }) if !unmeasured.is_empty() => format!(
            "Budgets from {path}, judged as `ferrule-bench check` judges them (Welch's t-test on the rounds). Not in this result set (their frameworks or workloads were not measured): {}.",
            unmeasured.iter().map(|(n, p)| format!("#{n} {p}")).collect::<Vec<_>>().join("; ")
        ),
        Ok(Budgets { path, .. }) => format!("Budgets from {path}, judged as `ferrule-bench check` judges them (Welch's t-test on the rounds)."),
    }
}

fn summary(report: &Report) -> String {
    let mut out = String::from("## Summary: Ferrule against its peers\n\n");
    let _ = writeln!(
        out,
        "Per language, each peer's CPU-µs per request ÷ Ferrule's and Ferrule's req/s ÷ the peer's, over the HTTP workloads both served: the geometric mean, and the lowest and highest workload. Above 1x Ferrule is ahead.\n"
    );
    for language in &report.languages {
        let _ = writeln!(out, "### {}{}\n", language.name, language.ferrule.as_ref().map(|f| format!(": {f} against its peers")).unwrap_or_default());
        match no_comparison(language) {
            Some(why) => {
                let _ = writeln!(out, "{why}\n");
            }
            None => {
                let _ = writeln!(out, "{}", summary_table(language));
            }
        }
        let items = budget_items(&report.budgets_of(language.key));
        if !items.is_empty() {
            let _ = writeln!(out, "{items}");
        }
    }
    let _ = writeln!(out, "{}\n", budgets_note(report));
    out
}

/// One language: the ratios workload by workload, its budgets' rows, and for Python the cost of
/// a Python handler over the same route in Rust.
pub fn language_section(report: &Report, language: &Language) -> String {
    let mut out = format!("## {}\n\n", language.name);
    out.push_str(&workload_table(language));
    out.push_str(&budget_rows(&report.budgets_of(language.key)));
    if language.key == "python" {
        out.push_str(&python_over_rust(report));
    }
    out
}

/// Per workload and peer: peer CPU-µs/req ÷ Ferrule's · Ferrule req/s ÷ the peer's.
pub fn workload_table(language: &Language) -> String {
    let (Some(ours), false) = (&language.ferrule, language.comparisons.is_empty()) else { return String::new() };
    let mut out = String::new();
    let _ = writeln!(out, "Per peer: peer CPU-µs/req ÷ {ours} CPU-µs/req · {ours} req/s ÷ peer req/s (both > 1 when Ferrule is ahead).\n");
    let _ = writeln!(out, "| workload | {} |", language.comparisons.iter().map(|c| format!("vs {}: CPU · req/s", c.peer)).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(language.comparisons.len()));
    for (w, _) in &language.comparisons[0].workloads {
        let cells: Vec<String> = language
            .comparisons
            .iter()
            .map(|c| match c.on(w) {
                Some(r) if r.failed == 0 => format!("{:.2}x · {:.2}x", r.cpu, r.rps),
                Some(r) => format!("{:.2}x · {:.2}x ({} failed)", r.cpu, r.rps, r.failed),
                None => "not measured".into(),
            })
            .collect();
        let _ = writeln!(out, "| {w} | {} |", cells.join(" | "));
    }
    out.push('\n');
    out
}

/// Each budget on each workload, with `check`'s columns.
pub fn budget_rows(budgets: &[&Budget]) -> String {
    if budgets.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let _ = writeln!(out, "| workload | budget | measured | bound | rounds | verdict |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|---|");
    for b in budgets {
        for r in &b.rows {
            let mut verdict = r.shown.text().to_owned();
            if let Some((t, critical)) = r.t.filter(|_| r.rounds >= 2) {
                let _ = write!(verdict, " (t = {t:.2}, significant beyond ±{critical:.2})");
            }
            if r.failed > 0 {
                let _ = write!(verdict, "; {} failed requests", r.failed);
            }
            let _ = writeln!(out, "| {} | #{} {} | {:.2} | {} | {} | {verdict} |", r.workload, b.number, b.formula, r.ratio, b.bound, r.rounds);
        }
    }
    out.push('\n');
    out
}

/// Ferrule's Python/Rust rows: (workload, rust, python-sync, python-async, reference ratio).
pub struct RatioRow {
    pub workload: String,
    rust: Cell,
    sync: Option<Cell>,
    asynchronous: Option<Cell>,
    pub reference: Option<f64>,
}

impl RatioRow {
    pub fn sync_ratio(&self) -> Option<f64> {
        self.sync.as_ref().map(|s| s.cpu_us / self.rust.cpu_us)
    }

    pub fn async_ratio(&self) -> Option<f64> {
        self.asynchronous.as_ref().map(|s| s.cpu_us / self.rust.cpu_us)
    }
}

pub fn ratio_rows(report: &Report) -> Vec<RatioRow> {
    workloads(report.set)
        .into_iter()
        .filter_map(|w| {
            let rust = cell(report.set, "ferrule-rust", &w)?;
            Some(RatioRow {
                sync: cell(report.set, "ferrule-python-sync", &w),
                asynchronous: cell(report.set, "ferrule-python-async", &w),
                reference: report.reference.rust_over_python.get(&w).copied(),
                rust,
                workload: w,
            })
        })
        .filter(|row| row.sync.is_some() || row.asynchronous.is_some())
        .collect()
}

pub fn reference_name<'r>(report: &'r Report) -> &'r str {
    if report.reference.framework.is_empty() {
        "reference"
    } else {
        &report.reference.framework
    }
}

fn python_over_rust(report: &Report) -> String {
    let rows = ratio_rows(report);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from("### Python handlers against the same routes in Rust\n\n");
    let _ = writeln!(out, "Cost ratio = Python CPU-µs/req ÷ Rust CPU-µs/req (1.00x: Python costs nothing extra). The reference framework's published ratio is its Rust req/s ÷ Python req/s ({}).\n", reference_name(report));
    let _ = writeln!(out, "| workload | Rust req/s | Rust CPU-µs | Python sync req/s | sync cost ratio | Python async req/s | async cost ratio | Rust/Python req/s (sync) | reference framework Rust/Python |");
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in &rows {
        let _ = writeln!(
            out,
            "| {} | {:.0} | {:.1} | {} | {} | {} | {} | {} | {} |",
            row.workload,
            row.rust.rps,
            row.rust.cpu_us,
            row.sync.as_ref().map(|s| format!("{:.0}", s.rps)).unwrap_or_else(|| "–".into()),
            fmt_ratio(row.sync_ratio()),
            row.asynchronous.as_ref().map(|s| format!("{:.0}", s.rps)).unwrap_or_else(|| "–".into()),
            fmt_ratio(row.async_ratio()),
            fmt_ratio(row.sync.as_ref().map(|s| row.rust.rps / s.rps)),
            fmt_ratio(row.reference),
        );
    }
    out.push('\n');
    out
}

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

pub fn streams(set: &ResultSet) -> String {
    let streams: Vec<String> = workloads(set).into_iter().filter(|w| crate::stream::is_stream(w)).collect();
    if streams.is_empty() {
        return String::new();
    }
    let mut out = String::from("## Stream workloads: WebSocket echo and SSE delivery\n\n");
    let _ = writeln!(
        out,
        "A request here is one message: an echo round trip (p50/p99: round-trip time) or one event delivered (p50/p99: time from connecting to the first event). Measured by the harness's own client (tokio-tungstenite, hyper) pinned like oha. Ratio = Ferrule msg/s ÷ peer msg/s · peer CPU-µs/msg ÷ Ferrule CPU-µs/msg (> 1: Ferrule ahead); `rack` is Puma + faye-websocket.\n"
    );
    let measured = frameworks(set);
    let pairs: Vec<&(&str, &str)> = STREAM_PEERS.iter().filter(|(ours, peer)| measured.iter().any(|f| f == ours) && measured.iter().any(|f| f == peer)).collect();
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
    out.push('\n');
    out
}

/// What each priced feature costs (frameworks.rs `Priced`): its server beside its base's, both
/// measured in the same turn of each round.
pub fn features(set: &ResultSet) -> String {
    let priced: Vec<(String, crate::frameworks::Priced)> = frameworks(set)
        .into_iter()
        .filter_map(|name| crate::frameworks::find(&name).ok().and_then(|f| f.priced).map(|p| (name, p)))
        .collect();
    if priced.is_empty() {
        return String::new();
    }
    let mut out = String::from("## What a feature costs\n\n");
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
    out.push('\n');
    out
}

/// Every framework × workload, workload by workload, the frameworks in a workload grouped by
/// language.
pub fn all_results(set: &ResultSet) -> String {
    let mut out = String::from("## All results\n\n");
    if set.results.iter().any(|r| r.framework == CEILING) {
        let _ = writeln!(
            out,
            "**of ceiling** = the framework's req/s ÷ the ceiling's on the same workload in this run. The ceiling is bare hyper on the same tokio runtime as the Rust servers, answering every request, whatever its path, with one fixed {}-byte JSON body after reading the request body: what oha can drive on this machine through the same core stack. It is no peer; it shows how much of the machine's reach each framework keeps.\n",
            crate::ceiling::BODY.len()
        );
    }
    let _ = writeln!(out, "**kernel µs/req**: of CPU-µs/req, the system time — the kernel's work for the server. Its socket reads and writes are a floor every server pays for the same requests (the ceiling's share shows it); the rest is the server's own doing (more system calls, threads woken).\n");
    let _ = writeln!(out, "| workload | framework | language | req/s | of ceiling | p50 ms | p99 ms | CPU-µs/req | kernel µs/req | failed | req bytes | resp bytes | startup ms | peak RSS MB | runs |");
    let _ = writeln!(out, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut names = frameworks(set);
    // A stable sort: within a language, the results' own order.
    names.sort_by_key(|f| super::summary::LANGUAGES.iter().position(|(k, _)| Some(*k) == super::summary::language_of(f)).unwrap_or(usize::MAX));
    for w in workloads(set) {
        let ceiling = cell(set, CEILING, &w);
        for f in &names {
            if let Some(c) = cell(set, f, &w) {
                let share = of_ceiling(c.rps, ceiling.as_ref()).map(|x| format!("{:.0}%", x * 100.0)).unwrap_or_else(|| "–".into());
                let language = super::summary::language_of(f).map_or("?", language_name);
                let kernel = if c.system_us > 0.0 { format!("{:.1}", c.system_us) } else { "–".into() };
                let _ = writeln!(
                    out,
                    "| {w} | {f} | {language} | {:.0} | {share} | {:.2} | {:.2} | {:.1} | {kernel} | {} | {} | {} | {:.0} | {:.1} | {} |",
                    c.rps, c.p50, c.p99, c.cpu_us, c.failed, c.request_bytes, c.response_bytes, c.startup_ms, c.peak_rss_mb, c.runs
                );
            }
        }
    }
    out.push('\n');
    out
}

pub fn not_measured(set: &ResultSet) -> String {
    if set.errors.is_empty() {
        return String::new();
    }
    let mut out = String::from("## Not measured\n\n");
    for e in &set.errors {
        let _ = writeln!(out, "- {} {}: {}", e.framework, e.workload.as_deref().unwrap_or("(all workloads)"), e.error.replace('\n', " "));
    }
    out.push('\n');
    out
}

pub fn run_details(set: &ResultSet) -> String {
    let mut out = String::from("## The run\n\n");
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
    out
}
