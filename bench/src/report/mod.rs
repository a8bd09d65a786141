//! Results as a Markdown report (report.md) and a self-contained HTML page (report.html), both
//! in the order a reader needs them:
//!
//! 1. the summary: per language, Ferrule against each peer (peer CPU-µs/req ÷ Ferrule's and
//!    Ferrule's req/s ÷ the peer's over the workloads) and the budgets with their verdicts;
//! 2. per language, the same ratios workload by workload, requests/s, the budgets' rows;
//! 3. the stream workloads and what each priced feature costs;
//! 4. the full table (folded away on the page), what could not be measured, the run's details.
//!
//! `summary` and `budgets` compute, `tables` writes Markdown, `charts` draws SVG with plotters,
//! `page` puts the page together from both.

mod budgets;
mod charts;
mod page;
mod summary;
mod tables;

use crate::runner::RunResult;
use serde::{Deserialize, Serialize};
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

/// Everything both renderings show, computed once.
pub struct Report<'a> {
    set: &'a ResultSet,
    reference: Reference,
    languages: Vec<summary::Language>,
    /// The budgets judged on this set, or why they could not be read.
    budgets: Result<budgets::Budgets, String>,
}

impl<'a> Report<'a> {
    pub fn new(set: &'a ResultSet, reference: Reference, budgets: Result<budgets::Budgets, String>) -> Self {
        Report { set, reference, languages: summary::languages(set), budgets }
    }

    /// The budgets of one language, in the file's order.
    fn budgets_of(&self, language: &str) -> Vec<&budgets::Budget> {
        self.budgets.as_ref().map(|b| b.judged.iter().filter(|j| j.language == language).collect()).unwrap_or_default()
    }
}

/// Writes report.md and report.html into `out`. `budgets` is the budgets file the report judges
/// (the one `check` measured for, else bench/budgets.json); one that cannot be read is named in
/// the report in their place.
pub fn write(set: &ResultSet, fixtures: &Path, budgets: &Path, out: &Path) -> Result<(), String> {
    let reference: Reference = crate::read_json(&fixtures.join("benchmarks/reference.json")).unwrap_or_default();
    let report = Report::new(set, reference, budgets::judge(set, budgets, fixtures));
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    std::fs::write(out.join("report.md"), tables::markdown(&report)).map_err(|e| e.to_string())?;
    std::fs::write(out.join("report.html"), page::html(&report)).map_err(|e| e.to_string())
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
    /// Of `cpu_us`, the kernel's (0: not recorded).
    system_us: f64,
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
        system_us: median(|r| r.server_system_us_per_request),
        failed: runs.iter().map(|r| r.failed_requests).sum(),
        request_bytes: runs[0].request_body_bytes,
        response_bytes: runs[0].response_body_bytes,
        startup_ms: runs[0].startup_ms,
        peak_rss_mb: runs.iter().map(|r| r.peak_rss_kb).max().unwrap_or(0) as f64 / 1024.0,
        runs: runs.len(),
    })
}

/// `rps` as a fraction of the ceiling's requests/s on the same workload (both medians of their
/// rounds); none when the ceiling was not measured there or answered nothing.
fn of_ceiling(rps: f64, ceiling: Option<&Cell>) -> Option<f64> {
    ceiling.filter(|c| c.rps > 0.0).map(|c| rps / c.rps)
}

fn fmt_ratio(x: Option<f64>) -> String {
    x.map(|x| format!("{x:.2}x")).unwrap_or_else(|| "–".into())
}

/// For HTML text and attribute values alike.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
pub(super) mod tests {
    use super::charts::tests::shown;
    use super::*;

    pub fn result(framework: &str, workload: &str, rps: f64, cpu: f64) -> RunResult {
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
            server_system_us_per_request: 0.0,
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

    pub fn set(results: Vec<RunResult>) -> ResultSet {
        ResultSet { metadata: serde_json::json!({}), results, errors: Vec::new() }
    }

    fn no_budgets() -> Result<budgets::Budgets, String> {
        Err("no budgets file in this test".into())
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
        let report = Report::new(&set, reference, no_budgets());
        let md = tables::markdown(&report);
        assert!(md.contains("| path-int | 30000 | 30.0 | 25000 | 1.20x | – | – | 1.20x | 24.67x |"), "{md}");
        assert!(md.contains("| path-int | 8.33x · 8.33x |"), "{md}");
        assert!(md.contains("robyn (all workloads): did not start"));
        assert!(md.contains("Budgets: not shown (no budgets file in this test)."), "{md}");
        let page = page::html(&report);
        // The reference framework's published ratio is drawn beside Ferrule's.
        assert!(page.contains("<svg") && page.contains(&shown("spikard: Rust ÷ Python req/s")) && page.contains(&shown("24.67×")) && page.contains("<table>"), "{page}");
    }

    #[test]
    fn the_kernel_share_of_the_cpu_is_shown_where_it_was_recorded() {
        let mut recorded = result("ferrule-rust", "path-int", 60000.0, 11.5);
        recorded.server_system_us_per_request = 7.6;
        // Results written before the kernel's share was recorded read 0: shown as unknown.
        let set = set(vec![recorded, result("fastify", "path-int", 40000.0, 24.0)]);
        let md = tables::markdown(&Report::new(&set, Reference::default(), no_budgets()));
        assert!(md.contains("| path-int | ferrule-rust | Rust | 60000 | – | 1.00 | 2.00 | 11.5 | 7.6 | 0 |"), "{md}");
        assert!(md.contains("| path-int | fastify | Node.js | 40000 | – | 1.00 | 2.00 | 24.0 | – | 0 |"), "{md}");
    }

    #[test]
    fn each_framework_is_shown_as_a_share_of_the_ceiling_on_its_workload() {
        let set = set(vec![
            result("ceiling", "path-int", 80000.0, 10.0),
            result("ferrule-rust", "path-int", 60000.0, 14.0),
            result("ceiling", "json-large", 10000.0, 90.0),
            result("ferrule-rust", "json-large", 2500.0, 400.0),
            result("axum", "json-small", 50000.0, 15.0),
        ]);
        let report = Report::new(&set, Reference::default(), no_budgets());
        let md = tables::markdown(&report);
        assert!(md.contains("| path-int | ferrule-rust | Rust | 60000 | 75% |"), "{md}");
        assert!(md.contains("| path-int | ceiling | Rust | 80000 | 100% |"), "{md}");
        assert!(md.contains("| json-large | ferrule-rust | Rust | 2500 | 25% |"), "{md}");
        // No ceiling measured on that workload: no share to show.
        assert!(md.contains("| json-small | axum | Rust | 50000 | – |"), "{md}");
        assert!(md.contains("what oha can drive on this machine through the same core stack"));
        assert!(page::html(&report).contains("<th>of ceiling</th>"));
    }

    #[test]
    fn no_share_of_a_ceiling_that_answered_nothing() {
        let cell = |rps: f64| cell(&set(vec![result("ceiling", "w", rps, 1.0)]), "ceiling", "w");
        assert_eq!(of_ceiling(500.0, cell(1000.0).as_ref()), Some(0.5));
        assert_eq!(of_ceiling(500.0, cell(0.0).as_ref()), None);
        assert_eq!(of_ceiling(500.0, None), None);
    }

    #[test]
    fn repeated_runs_count_by_their_median() {
        let runs = [(30000.0, 30.0), (15000.0, 60.0), (31000.0, 29.0)];
        let set = set(runs.iter().map(|(rps, cpu)| result("ferrule-node", "path-int", *rps, *cpu)).collect());
        let cell = cell(&set, "ferrule-node", "path-int").expect("measured");
        assert_eq!((cell.rps, cell.cpu_us, cell.runs), (30000.0, 30.0, 3));
    }

    /// Three languages, Ruby's Ferrule with no peer, Node's peer missing one workload.
    fn three_languages() -> ResultSet {
        set(vec![
            result("fastify", "path-int", 20000.0, 45.0),
            result("ferrule-node", "path-int", 40000.0, 20.0),
            result("ferrule-node", "json-small", 35000.0, 24.0),
            result("ferrule-ruby", "path-int", 30000.0, 30.0),
            result("ferrule-python-sync", "path-int", 25000.0, 36.0),
            result("fastapi", "path-int", 3000.0, 300.0),
            result("fastapi", "json-small", 2800.0, 320.0),
            result("ferrule-python-sync", "json-small", 24000.0, 38.0),
        ])
    }

    #[test]
    fn the_markdown_leads_with_the_summary_and_ends_with_the_full_table() {
        let s = three_languages();
        let md = tables::markdown(&Report::new(&s, Reference::default(), no_budgets()));
        let at = |text: &str| md.find(text).unwrap_or_else(|| panic!("{text} not in {md}"));
        assert!(at("## Summary") < at("### Python: ferrule-python-sync against its peers"));
        assert!(at("### Python") < at("### Node.js") && at("### Node.js") < at("### Ruby"));
        assert!(at("### Ruby") < at("## Python\n") && at("## Python\n") < at("## Node.js\n") && at("## Node.js\n") < at("## All results"));
        assert!(md.contains("| fastify | 2.25x | 2.25x – 2.25x | 2.00x | 1 of 2 |"), "{md}");
        assert!(md.contains("No Ruby peer was measured in this run."), "{md}");
        // Node's fastify on json-small: missing, and said to be.
        assert!(md.contains("| json-small | not measured |"), "{md}");
    }

    #[test]
    fn the_page_has_the_summary_first_a_chart_per_language_and_the_full_table_folded() {
        let s = three_languages();
        let page = page::html(&Report::new(&s, Reference::default(), no_budgets()));
        let at = |text: &str| page.find(text).unwrap_or_else(|| panic!("{text} not in the page"));
        assert!(at("<section id=\"summary\">") < at("class=\"language\"") && at("class=\"language\"") < at("<details id=\"all-results\">"));
        assert!(!page.contains("<details id=\"all-results\" open"));
        // The full table is inside the details element, not before it.
        assert!(at("<th>framework</th>") > at("<details id=\"all-results\">"));
        for language in ["python", "node", "ruby"] {
            let start = at(&format!("data-language=\"{language}\"><h2>"));
            let end = start + page[start..].find("</section>").unwrap();
            assert!(page[start..end].contains("<svg"), "no chart for {language}");
        }
        // One summary card per language, each with a chart where there is a peer to compare.
        assert_eq!(page.matches("<article class=\"card\"").count(), 3);
        let summary = &page[at("<section id=\"summary\">")..at("class=\"language\"")];
        assert_eq!(summary.matches("<svg").count(), 2, "{summary}");
        assert!(summary.contains("No Ruby peer was measured in this run."));
        // fastify was not measured on json-small: the workload chart says so.
        let node = &page[at("id=\"language-node\"")..];
        assert!(node[..node.find("</section>").unwrap()].contains(&shown("not measured")));
        // Self-contained: no script, nothing the page would fetch.
        assert!(!page.contains("<script") && !page.contains(" src=") && !page.contains(" href="));
    }

    #[test]
    fn names_and_errors_are_escaped_on_the_page() {
        let mut s = set(vec![result("ferrule-rust", "<img src=x onerror=alert(1)>", 1000.0, 10.0), result("axum", "<img src=x onerror=alert(1)>", 900.0, 11.0)]);
        s.errors.push(RunError { framework: "fastapi".into(), workload: None, error: "<script>alert(2)</script>".into() });
        s.metadata = serde_json::json!({"host": "<b>host</b>"});
        let page = page::html(&Report::new(&s, Reference::default(), no_budgets()));
        for raw in ["<img", "<script", "<b>host"] {
            assert!(!page.contains(raw), "{raw} unescaped in the page");
        }
        assert!(page.contains("&lt;img src=x onerror=alert(1)&gt;") && page.contains("&lt;script&gt;alert(2)"));
    }

    #[test]
    fn the_page_is_the_same_bytes_for_the_same_results() {
        let s = three_languages();
        let a = page::html(&Report::new(&s, Reference::default(), no_budgets()));
        let b = page::html(&Report::new(&s, Reference::default(), no_budgets()));
        assert_eq!(a, b);
    }
}
