//! `ferrule-bench compare A B`: whether each framework × workload changed between two sets of
//! runs (A, a baseline; B, a change), judged on CPU-µs per request with Welch's t-test, with the
//! requests/s of each side beside it.
//!
//! Each side may be several results files joined by commas, whose runs are pooled. That is for
//! rounds run alternately — one `--repeat 1` matrix of the baseline, one of the change, and
//! again — so that whatever drifts on the machine over the hour both sides take falls on both
//! alike. Measured here: Python json-large read 99.8 CPU-µs a request in one check and 110.3 in
//! another four hours later, on two builds that an interleaved A/B then found equal on it (108.0
//! to 114.7 and 107.7 to 111.7): a drift as large as the changes a comparison is run to find.

use crate::report::ResultSet;
use crate::runner::RunResult;
use crate::stats;
use std::path::Path;

/// The runs of one side: the results files in `list` (comma-separated), pooled.
pub fn read_side(list: &str) -> Result<Vec<RunResult>, String> {
    let mut runs = Vec::new();
    for path in list.split(',').filter(|p| !p.is_empty()) {
        let set: ResultSet = crate::read_json(Path::new(path))?;
        runs.extend(set.results);
    }
    if runs.is_empty() {
        return Err(format!("compare: no runs in {list:?}"));
    }
    Ok(runs)
}

/// Each framework × workload once, in the order first measured (repeated rounds interleave
/// them, so neighbours are not duplicates).
pub fn measured_pairs(results: &[RunResult]) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for r in results {
        let pair = (r.framework.clone(), r.workload.clone());
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    pairs
}

/// The comparison as a Markdown table: a row per framework × workload of `a`.
pub fn table(a: &[RunResult], b: &[RunResult]) -> String {
    let mut out = String::from("| framework | workload | CPU-µs/req A | CPU-µs/req B | B/A | t | d | significant | req/s A | req/s B | B/A |\n");
    out.push_str("|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|\n");
    for (framework, workload) in measured_pairs(a) {
        let runs = |side: &[RunResult]| -> Vec<RunResult> { side.iter().filter(|r| r.framework == framework && r.workload == workload).cloned().collect() };
        let (runs_a, runs_b) = (runs(a), runs(b));
        let cpu = |runs: &[RunResult]| runs.iter().map(|r| r.server_cpu_us_per_request).collect::<Vec<_>>();
        let row = match stats::welch(&cpu(&runs_a), &cpu(&runs_b)) {
            Some(c) => {
                let significant = if c.t.abs() > stats::critical_t95(c.degrees_of_freedom) { "yes" } else { "no" };
                let rate = |runs: &[RunResult]| runs.iter().map(|r| r.requests_per_sec).sum::<f64>() / runs.len() as f64;
                let (rate_a, rate_b) = (rate(&runs_a), rate(&runs_b));
                format!(
                    "| {framework} | {workload} | {:.1} | {:.1} | {:.3} | {:.2} | {:.2} | {significant} | {rate_a:.0} | {rate_b:.0} | {:.3} |",
                    c.mean_a,
                    c.mean_b,
                    c.ratio,
                    c.t,
                    c.cohens_d,
                    rate_b / rate_a
                )
            }
            None => format!("| {framework} | {workload} | – | – | – | – | – | needs ≥ 2 runs each (--repeat, or more files) | – | – | – |"),
        };
        out.push_str(&row);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(framework: &str, workload: &str, cpu: f64, rate: f64) -> RunResult {
        RunResult { framework: framework.into(), workload: workload.into(), server_cpu_us_per_request: cpu, requests_per_sec: rate, ..Default::default() }
    }

    #[test]
    fn each_pair_is_listed_once_though_rounds_interleave() {
        let rounds = [run("a", "x", 1.0, 1.0), run("b", "x", 1.0, 1.0), run("a", "x", 1.0, 1.0), run("b", "x", 1.0, 1.0)];
        // Before: dedup() dropped only neighbours, so every pair was printed once per round.
        assert_eq!(measured_pairs(&rounds), vec![("a".to_owned(), "x".to_owned()), ("b".to_owned(), "x".to_owned())]);
    }

    #[test]
    fn a_row_gives_the_cpu_verdict_and_both_sides_requests_per_second() {
        let a = [run("f", "w", 10.0, 50_000.0), run("f", "w", 10.4, 48_000.0), run("f", "w", 9.8, 52_000.0)];
        let b = [run("f", "w", 8.0, 61_000.0), run("f", "w", 8.2, 60_000.0), run("f", "w", 7.9, 62_000.0)];
        let table = table(&a, &b);
        let row = table.lines().nth(2).expect("a row");
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(&cells[1..4], ["f", "w", "10.1"], "{row}");
        assert_eq!(cells[4], "8.0");
        assert_eq!(cells[5], "0.798");
        assert_eq!(cells[8], "yes", "a 20 % cut over three tight runs each is significant: {row}");
        assert_eq!(&cells[9..12], ["50000", "61000", "1.220"], "{row}");
    }

    #[test]
    fn one_run_a_side_is_no_verdict() {
        let table = table(&[run("f", "w", 10.0, 1.0)], &[run("f", "w", 8.0, 1.0)]);
        assert!(table.contains("needs ≥ 2 runs each"), "{table}");
    }

    #[test]
    fn a_side_pools_the_runs_of_every_file_it_names() {
        let dir = std::env::temp_dir().join(format!("ferrule-compare-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, cpu: f64| {
            let set = ResultSet { metadata: serde_json::json!({}), results: vec![run("f", "w", cpu, 1.0)], errors: vec![] };
            let path = dir.join(name);
            std::fs::write(&path, serde_json::to_string(&set).unwrap()).unwrap();
            path.display().to_string()
        };
        let (first, second) = (write("round-1.json", 10.0), write("round-2.json", 11.0));
        let pooled = read_side(&format!("{first},{second}")).unwrap();
        assert_eq!(pooled.iter().map(|r| r.server_cpu_us_per_request).collect::<Vec<_>>(), [10.0, 11.0]);
        let missing = read_side(&format!("{first},{}", dir.join("absent.json").display())).unwrap_err();
        assert!(missing.contains("absent.json"), "the file that cannot be read is named: {missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
