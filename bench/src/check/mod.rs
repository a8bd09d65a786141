//! `ferrule-bench check --budgets FILE`: measures exactly the frameworks × workloads a budgets
//! file needs, in interleaved rounds as the matrix does (3 by default), and judges each budget
//! on each workload (`judge`). Prints the table; fails when a budget is missed or could not be
//! measured.

pub mod budgets;
pub mod judge;

use crate::frameworks::{self, Framework};
use crate::matrix::{self, Measured, Plan};
use crate::report::{self, ResultSet};
use crate::runner::{RunOptions, RunResult};
use crate::{stream, workload, Args};
use budgets::Row;
use judge::{Judgement, Verdict};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Rounds when `--repeat` is not given: the fewest that give Welch's test a spread on each side
/// with a margin for a failed run.
const DEFAULT_ROUNDS: u64 = 3;

pub fn run(args: &Args, fixtures: &Path, options: RunOptions) -> Result<(), String> {
    let path = args.get("budgets").map(PathBuf::from).unwrap_or_else(budgets::default_path);
    let repeat = args.number("repeat", DEFAULT_ROUNDS)?;
    if repeat < 2 {
        return Err("check needs --repeat 2 or more: a budget past its bound is judged on the spread of its rounds".into());
    }
    let all = workload::load(fixtures)?;
    let names: Vec<String> = all.iter().map(|w| w.name.clone()).collect();
    let rows = budgets::load(&path, &names).map_err(|e| e.to_string())?;

    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for row in &rows {
        for framework in [row.numerator, row.denominator] {
            if !pairs.contains(&(framework, row.workload.as_str())) {
                pairs.push((framework, &row.workload));
            }
        }
    }
    let needed = |w: &str| pairs.iter().any(|(_, pw)| *pw == w);
    let mut chosen: Vec<&'static Framework> = Vec::new();
    for (name, _) in &pairs {
        let framework = frameworks::find(name)?;
        if !chosen.iter().any(|f| f.name == framework.name) {
            chosen.push(framework);
        }
    }
    let workloads: Vec<workload::Workload> = all.into_iter().filter(|w| needed(&w.name)).collect();
    let plan = Plan {
        frameworks: chosen,
        bodies: workloads.iter().map(|w| w.body(fixtures)).collect::<Result<_, _>>()?,
        workloads,
        streams: stream::ALL.iter().filter(|s| needed(s.name)).collect(),
        repeat,
        wants: &|f: &Framework, w: &str| pairs.contains(&(f.name, w)),
    };
    let budgets = rows.last().map_or(0, |r| r.budget);
    eprintln!("{budgets} budgets, {} budget × workload rows, on {} workloads: {} runs in each of {repeat} rounds", rows.len(), plan.workloads.len() + plan.streams.len(), pairs.len());
    let mut metadata = matrix::metadata(args, &options, &plan.frameworks);
    metadata["repeat"] = repeat.into();
    let Measured { results, errors } = matrix::measure(&plan, fixtures, &options);

    let judged = judge_rows(&rows, &results);
    let table = table(&judged);
    println!("{table}");
    if let Some(out) = args.get("out").map(PathBuf::from) {
        let set = ResultSet { metadata, results, errors };
        std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let json = serde_json::to_string_pretty(&set).map_err(|e| e.to_string())?;
        std::fs::write(out.join("results.json"), json).map_err(|e| e.to_string())?;
        std::fs::write(out.join("budgets.md"), &table).map_err(|e| e.to_string())?;
        report::write(&set, fixtures, &path, &out)?;
        eprintln!("wrote {0}/budgets.md, {0}/results.json, {0}/report.md and {0}/report.html", out.display());
    }
    let count = |v: Verdict| judged.iter().filter(|(_, j, _)| j.verdict == v).count();
    let (missed, unmeasured) = (count(Verdict::Missed), count(Verdict::NotMeasured));
    if missed + unmeasured > 0 {
        return Err(format!("{missed} of {} budget rows missed, {unmeasured} not measured ({})", judged.len(), path.display()));
    }
    Ok(())
}

/// Each row judged on the results' rounds, with the requests either side failed; the report
/// judges a result set's budgets with this too.
pub fn judge_rows<'r>(rows: &'r [Row], results: &[RunResult]) -> Vec<(&'r Row, Judgement, u64)> {
    rows.iter().map(|row| (row, judge::judge(row.bound, &rounds(results, row)), failures(results, row))).collect()
}

/// The (numerator, denominator) values of each round that measured both, in round order.
fn rounds(results: &[RunResult], row: &Row) -> Vec<(f64, f64)> {
    let value = |framework: &str, round: u64| {
        results.iter().find(|r| r.framework == framework && r.workload == row.workload && r.round == round).map(|r| row.metric.of(r))
    };
    let mut rounds: Vec<u64> = results.iter().filter(|r| r.workload == row.workload).map(|r| r.round).collect();
    rounds.sort_unstable();
    rounds.dedup();
    rounds.into_iter().filter_map(|round| Some((value(row.numerator, round)?, value(row.denominator, round)?))).collect()
}

/// Requests either framework failed on the row's workload, over all rounds: a ratio of runs
/// that failed requests is shown but is no measure of the same work.
fn failures(results: &[RunResult], row: &Row) -> u64 {
    results.iter().filter(|r| r.workload == row.workload && (r.framework == row.numerator || r.framework == row.denominator)).map(|r| r.failed_requests).sum()
}

/// The verdicts as a Markdown table, then one line that sums them up.
fn table(judged: &[(&Row, Judgement, u64)]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "| workload | budget | measured | bound | rounds | verdict |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|---|");
    for (row, j, failed) in judged {
        let measured = j.ratio.map(|r| format!("{r:.2}")).unwrap_or_else(|| "–".into());
        let mut verdict = j.verdict.to_string();
        if let Some((t, critical)) = j.t {
            let _ = write!(verdict, " (t = {t:.2}, significant beyond ±{critical:.2})");
        }
        if *failed > 0 {
            let _ = write!(verdict, "; {failed} failed requests");
        }
        let _ = writeln!(out, "| {} | #{} {} | {measured} | {} | {} | {verdict} |", row.workload, row.budget, row.formula(), row.bound, j.rounds);
    }
    let count = |v: Verdict| judged.iter().filter(|(_, j, _)| j.verdict == v).count();
    let _ = write!(
        out,
        "\n{} hold, {} within noise, {} missed, {} not measured (missed: past the bound, Welch's t-test significant at 95% two-sided between the numerator's rounds and the bound × the denominator's).",
        count(Verdict::Holds),
        count(Verdict::WithinNoise),
        count(Verdict::Missed),
        count(Verdict::NotMeasured)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::budgets::{Bound, Metric};
    use super::*;

    fn row(workload: &str) -> Row {
        Row { budget: 1, workload: workload.into(), numerator: "ferrule-python-sync", denominator: "ferrule-rust", metric: Metric::CpuUsPerRequest, bound: Bound::AtMost(1.3) }
    }

    fn run(framework: &str, workload: &str, round: u64, cpu: f64) -> RunResult {
        RunResult { framework: framework.into(), workload: workload.into(), round, server_cpu_us_per_request: cpu, ..Default::default() }
    }

    #[test]
    fn ratios_pair_the_runs_of_one_round() {
        let results = [
            run("ferrule-rust", "path-int", 1, 30.0),
            run("ferrule-python-sync", "path-int", 1, 36.0),
            run("ferrule-python-sync", "path-int", 2, 40.0), // its Rust run failed this round
            run("ferrule-python-sync", "path-int", 3, 33.0),
            run("ferrule-rust", "path-int", 3, 30.0),
            run("ferrule-rust", "json-small", 2, 99.0),
        ];
        assert_eq!(rounds(&results, &row("path-int")), vec![(36.0, 30.0), (33.0, 30.0)]);
    }

    #[test]
    fn the_table_shows_each_verdict_and_sums_them_up() {
        let (a, b) = (row("path-int"), row("json-small"));
        let judged = [
            (&a, judge::judge(a.bound, &[(36.0, 30.0), (36.0, 30.5), (36.0, 29.5)]), 0),
            (&b, judge::judge(b.bound, &[(60.0, 30.0), (61.0, 30.5), (59.0, 29.5)]), 2),
        ];
        let text = table(&judged);
        assert!(text.contains("| path-int | #1 ferrule-python-sync ÷ ferrule-rust, CPU-µs/req | 1.20 | ≤ 1.30 | 3 | holds |"), "{text}");
        assert!(text.contains("| json-small | #1 ferrule-python-sync ÷ ferrule-rust, CPU-µs/req | 2.00 | ≤ 1.30 | 3 | MISSED (t = "), "{text}");
        assert!(text.contains("; 2 failed requests |"), "{text}");
        assert!(text.contains("1 hold, 0 within noise, 1 missed, 0 not measured"), "{text}");
    }
}
