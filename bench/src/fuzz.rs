//! `ferrule-bench fuzz`: runs the libFuzzer targets of core/fuzz (built by //core/fuzz:cargo),
//! each from the fixture corpus's cases as seeds plus the corpus earlier campaigns grew, and
//! reports executions, speed, coverage and every finding with the command that reproduces it.
//!
//! `--runs N` runs N inputs per target with a fixed seed (the short run in `bazel test //...`);
//! `--minutes N` runs each target N minutes (campaigns: `bazel run //bench:fuzz -- --minutes N`).
//! Executions add up per target in `<corpus>/executions.json`, so a campaign's total is known
//! across runs. Findings (libFuzzer's `crash-*`, `timeout-*`, `oom-*` files) stay in `--out`.

use crate::Args;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// libFuzzer's options for every run: a hang is an input served for more than 10 s; inputs are
/// cut at 16 KiB (core/fuzz/src/harness.rs, MAX_LEN).
const LIBFUZZER_OPTIONS: &[&str] = &["-timeout=10", "-rss_limit_mb=2048", "-max_len=16384", "-print_final_stats=1"];

#[derive(Debug, Serialize)]
struct Outcome {
    target: String,
    surface: String,
    executions: u64,
    per_second: u64,
    coverage: u64,
    corpus: u64,
    seconds: f64,
    total_executions: u64,
    findings: Vec<String>,
    error: Option<String>,
}

#[derive(Default, Serialize, Deserialize)]
struct Ledger {
    executions: BTreeMap<String, u64>,
}

pub fn run(args: &Args, fixtures: &Path) -> Result<(), String> {
    let fuzzer = PathBuf::from(args.get("fuzzer").ok_or("fuzz needs --fuzzer PATH (//core/fuzz:ferrule-fuzz)")?);
    let fuzzer = std::fs::canonicalize(&fuzzer).map_err(|e| format!("{}: {e}", fuzzer.display()))?;
    let fixtures = std::fs::canonicalize(fixtures).map_err(|e| format!("{}: {e}", fixtures.display()))?;
    let out = PathBuf::from(args.get("out").ok_or("fuzz needs --out DIR")?);
    let corpus = args.get("corpus").map(PathBuf::from).unwrap_or_else(|| out.join("corpus"));
    let budget = match (args.get("runs"), args.get("minutes")) {
        (Some(_), Some(_)) => return Err("fuzz takes --runs or --minutes, not both".into()),
        (Some(_), None) => Budget::Runs(args.number("runs", 0)?),
        (None, Some(_)) => Budget::Minutes(args.number("minutes", 0)?),
        (None, None) => Budget::Minutes(1),
    };
    let all = list_targets(&fuzzer, &fixtures)?;
    let targets: Vec<(String, String)> = match args.get("targets") {
        None => all,
        Some(list) => list
            .split(',')
            .map(|name| {
                all.iter().find(|(n, _)| n == name).cloned().ok_or_else(|| {
                    format!("unknown fuzz target {name} ({})", all.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", "))
                })
            })
            .collect::<Result<_, _>>()?,
    };
    let jobs = args.number("jobs", 2)?.clamp(1, 8) as usize;
    for dir in [&out, &corpus] {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    eprintln!("fuzz: {} target(s), {budget}, {jobs} at a time; corpus {}", targets.len(), corpus.display());

    // Targets run `jobs` at a time; each prints its line as it ends.
    let queue = Mutex::new(targets.iter());
    let outcomes = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let Some((name, surface)) = queue.lock().unwrap().next() else { break };
                let outcome = fuzz_one(&fuzzer, &fixtures, &out, &corpus, name, surface, &budget);
                print_outcome(&outcome, &fuzzer, &fixtures);
                outcomes.lock().unwrap().push(outcome);
            });
        }
    });
    let mut outcomes = outcomes.into_inner().unwrap();
    outcomes.sort_by_key(|o| targets.iter().position(|(n, _)| *n == o.target));

    let ledger_path = corpus.join("executions.json");
    let mut ledger: Ledger = std::fs::read(&ledger_path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    for o in &mut outcomes {
        let total = ledger.executions.entry(o.target.clone()).or_default();
        *total += o.executions;
        o.total_executions = *total;
    }
    let ledger_json = serde_json::to_string_pretty(&ledger).map_err(|e| e.to_string())?;
    std::fs::write(&ledger_path, ledger_json).map_err(|e| format!("{}: {e}", ledger_path.display()))?;
    write_report(&out, &outcomes, &budget)?;

    let failed: Vec<&str> = outcomes.iter().filter(|o| !o.findings.is_empty() || o.error.is_some()).map(|o| o.target.as_str()).collect();
    println!("fuzz: {} target(s), {} with findings or errors; report {}", outcomes.len(), failed.len(), out.join("fuzz.md").display());
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("fuzz targets with findings or errors: {}", failed.join(", ")))
    }
}

enum Budget {
    Runs(u64),
    Minutes(u64),
}

impl std::fmt::Display for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Budget::Runs(n) => write!(f, "{n} inputs per target (fixed seed)"),
            Budget::Minutes(n) => write!(f, "{n} minute(s) per target"),
        }
    }
}

fn fuzzer_command(fuzzer: &Path, fixtures: &Path, target: &str) -> Command {
    let mut command = Command::new(fuzzer);
    command.env("FERRULE_FUZZ_TARGET", target).env("FERRULE_FIXTURES_DIR", fixtures);
    command
}

fn list_targets(fuzzer: &Path, fixtures: &Path) -> Result<Vec<(String, String)>, String> {
    let output = fuzzer_command(fuzzer, fixtures, "list").output().map_err(|e| format!("{}: {e}", fuzzer.display()))?;
    if !output.status.success() {
        return Err(format!("{} cannot list its targets: {}", fuzzer.display(), String::from_utf8_lossy(&output.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(n, s)| (n.to_owned(), s.to_owned()))
        .collect())
}

fn fuzz_one(fuzzer: &Path, fixtures: &Path, out: &Path, corpus: &Path, target: &str, surface: &str, budget: &Budget) -> Outcome {
    let started = std::time::Instant::now();
    let mut outcome = Outcome {
        target: target.to_owned(),
        surface: surface.to_owned(),
        executions: 0,
        per_second: 0,
        coverage: 0,
        corpus: 0,
        seconds: 0.0,
        total_executions: 0,
        findings: Vec::new(),
        error: None,
    };
    let work = out.join(target);
    let seeds = work.join("seeds");
    let grown = corpus.join(target);
    let result = (|| {
        std::fs::create_dir_all(&grown).map_err(|e| format!("{}: {e}", grown.display()))?;
        let written = fuzzer_command(fuzzer, fixtures, target)
            .env("FERRULE_FUZZ_SEEDS_OUT", &seeds)
            .output()
            .map_err(|e| e.to_string())?;
        if !written.status.success() {
            return Err(format!("writing seeds failed ({}): {}", written.status, String::from_utf8_lossy(&written.stderr).trim()));
        }
        let mut command = fuzzer_command(fuzzer, fixtures, target);
        command.args(LIBFUZZER_OPTIONS).arg(format!("-artifact_prefix={}/", work.display()));
        match budget {
            Budget::Runs(n) => command.arg(format!("-runs={n}")).arg("-seed=1"),
            Budget::Minutes(n) => command.arg(format!("-max_total_time={}", n * 60)),
        };
        let log_path = work.join("libfuzzer.log");
        let log = std::fs::File::create(&log_path).map_err(|e| e.to_string())?;
        let status = command
            .arg(&grown)
            .arg(&seeds)
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .status()
            .map_err(|e| e.to_string())?;
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        read_stats(&text, &mut outcome);
        outcome.findings = findings(&work);
        if !status.success() && outcome.findings.is_empty() {
            let tail: Vec<&str> = text.lines().rev().take(5).collect();
            return Err(format!("libFuzzer exited with {status}: {}", tail.into_iter().rev().collect::<Vec<_>>().join(" / ")));
        }
        Ok(())
    })();
    outcome.error = result.err();
    outcome.seconds = started.elapsed().as_secs_f64();
    outcome
}

/// libFuzzer's final stats (`-print_final_stats=1`) and its last status line (`cov:`, `corp:`).
fn read_stats(log: &str, outcome: &mut Outcome) {
    let stat = |name: &str| {
        log.lines().find_map(|l| l.strip_prefix(&format!("stat::{name}:"))).and_then(|v| v.trim().parse::<u64>().ok())
    };
    outcome.executions = stat("number_of_executed_units").unwrap_or(0);
    outcome.per_second = stat("average_exec_per_sec").unwrap_or(0);
    let field = |line: &str, name: &str| {
        let mut words = line.split_whitespace();
        words.position(|w| w == name)?;
        words.next()?.split('/').next()?.parse::<u64>().ok()
    };
    if let Some(last) = log.lines().filter(|l| l.starts_with('#') && l.contains(" cov: ")).last() {
        outcome.coverage = field(last, "cov:").unwrap_or(0);
        outcome.corpus = field(last, "corp:").unwrap_or(0);
    }
}

/// The inputs libFuzzer kept as findings in `work`.
fn findings(work: &Path) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(work)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            ["crash-", "timeout-", "oom-", "leak-", "slow-unit-"].iter().any(|k| name.starts_with(k))
        })
        .map(|p| p.display().to_string())
        .collect();
    found.sort();
    found
}

fn print_outcome(o: &Outcome, fuzzer: &Path, fixtures: &Path) {
    let result = match (&o.error, o.findings.len()) {
        (Some(e), _) => format!("ERROR {e}"),
        (None, 0) => "no findings".to_owned(),
        (None, n) => format!("{n} FINDING(S)"),
    };
    eprintln!(
        "fuzz: {:<11} {:>11} execs ({:>6}/s) cov {:>5} corpus {:>5}  {} ({:.0} s)",
        o.target, o.executions, o.per_second, o.coverage, o.corpus, result, o.seconds
    );
    for finding in &o.findings {
        eprintln!(
            "fuzz:   {finding}\n        reproduce: FERRULE_FUZZ_TARGET={} FERRULE_FIXTURES_DIR={} {} {finding}",
            o.target,
            fixtures.display(),
            fuzzer.display()
        );
    }
}

fn write_report(out: &Path, outcomes: &[Outcome], budget: &Budget) -> Result<(), String> {
    let json = serde_json::to_string_pretty(outcomes).map_err(|e| e.to_string())?;
    std::fs::write(out.join("fuzz.json"), json).map_err(|e| format!("writing fuzz.json: {e}"))?;
    let mut md = format!(
        "# Fuzzing ({budget})\n\n| target | surface | executions | per second | coverage | corpus | all campaigns | result |\n|---|---|---|---|---|---|---|---|\n"
    );
    for o in outcomes {
        let result = match (&o.error, o.findings.len()) {
            (Some(e), _) => format!("error: {}", e.replace('|', "\\|")),
            (None, 0) => "no findings".to_owned(),
            (None, _) => format!("**{}**", o.findings.join(", ")),
        };
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            o.target, o.surface, o.executions, o.per_second, o.coverage, o.corpus, o.total_executions, result
        ));
    }
    std::fs::write(out.join("fuzz.md"), md).map_err(|e| format!("writing fuzz.md: {e}"))
}
