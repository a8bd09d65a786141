//! The budgets (bench/budgets.json) judged on the rounds of this result set, by the same code
//! `ferrule-bench check` judges them with (`check::judge_rows`). A result set with one round
//! gives no spread to tell a miss from noise: its budgets are shown with their measured ratio
//! and "not judged", never as holding or missed.

use super::summary::language_of;
use super::ResultSet;
use crate::check::budgets::{self, Bound};
use crate::check::judge::Verdict;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shown {
    // In the order a budget's overall state is decided: one missed workload misses it.
    Missed,
    WithinNoise,
    NotJudged,
    Holds,
}

impl Shown {
    pub fn text(self) -> &'static str {
        match self {
            Shown::Holds => "holds",
            Shown::Missed => "MISSED",
            Shown::WithinNoise => "within noise",
            Shown::NotJudged => "not judged",
        }
    }

    /// The page's class for its colour.
    pub fn class(self) -> &'static str {
        match self {
            Shown::Holds => "holds",
            Shown::Missed => "missed",
            Shown::WithinNoise => "noise",
            Shown::NotJudged => "unjudged",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub workload: String,
    pub ratio: f64,
    pub rounds: usize,
    pub shown: Shown,
    /// Welch's t and its critical value, when the ratio was past the bound.
    pub t: Option<(f64, f64)>,
    pub failed: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// 1-based, as `check` numbers it.
    pub number: usize,
    pub promise: String,
    /// The language the budget speaks for: its numerator's, or its denominator's when the
    /// numerator is Rust (a binding against Ferrule's Rust is the binding's promise).
    pub language: &'static str,
    pub formula: String,
    pub bound: Bound,
    /// The workloads on which this result set measured both sides.
    pub rows: Vec<Judged>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Budgets {
    pub path: String,
    /// Budgets with at least one workload measured here.
    pub judged: Vec<Budget>,
    /// Budgets whose frameworks or workloads this result set does not have.
    pub unmeasured: Vec<(usize, String)>,
}

impl Budget {
    pub fn overall(&self) -> Shown {
        self.rows.iter().map(|r| r.shown).min().unwrap_or(Shown::NotJudged)
    }

    /// One line: its state on how many workloads, and where it is missed.
    pub fn verdict(&self) -> String {
        let count = |s: Shown| self.rows.iter().filter(|r| r.shown == s).count();
        let total = self.rows.len();
        let ratios: Vec<f64> = self.rows.iter().map(|r| r.ratio).collect();
        let (low, high) = (ratios.iter().copied().fold(f64::INFINITY, f64::min), ratios.iter().copied().fold(0.0, f64::max));
        let range = if total == 1 { format!("{low:.2}") } else { format!("{low:.2}–{high:.2}") };
        if count(Shown::NotJudged) == total {
            let rounds = self.rows.iter().map(|r| r.rounds).max().unwrap_or(0);
            return format!("not judged: {rounds} round{} (judging needs 2 or more, as `check` does); measured {range}, bound {}", if rounds == 1 { "" } else { "s" }, self.bound);
        }
        let mut parts = Vec::new();
        for shown in [Shown::Missed, Shown::WithinNoise, Shown::NotJudged, Shown::Holds] {
            let workloads: Vec<&str> = self.rows.iter().filter(|r| r.shown == shown).map(|r| r.workload.as_str()).collect();
            match workloads.len() {
                0 => {}
                n if shown == Shown::Holds || n > 3 => parts.push(format!("{} on {n} of {total} workloads", shown.text())),
                _ => parts.push(format!("{} on {}", shown.text(), workloads.join(", "))),
            }
        }
        format!("{}; measured {range}, bound {}", parts.join(", "), self.bound)
    }
}

fn judged_row(judgement: &crate::check::judge::Judgement, workload: &str, failed: u64) -> Option<Judged> {
    let shown = match judgement.verdict {
        Verdict::NotMeasured => return None,
        _ if judgement.rounds < 2 => Shown::NotJudged,
        Verdict::Holds => Shown::Holds,
        Verdict::WithinNoise => Shown::WithinNoise,
        Verdict::Missed => Shown::Missed,
    };
    Some(Judged { workload: workload.to_owned(), ratio: judgement.ratio?, rounds: judgement.rounds, shown, t: judgement.t, failed })
}

/// Reads the budgets file and judges each budget on this result set's rounds. An error (no
/// file, a malformed one) is for the report to show in place of the budgets, not to stop it.
pub fn judge(set: &ResultSet, path: &Path, fixtures: &Path) -> Result<Budgets, String> {
    let shown = path.display().to_string();
    let http: Vec<String> = crate::workload::load(fixtures)?.into_iter().map(|w| w.name).collect();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    let file = budgets::parse(&text, &shown).map_err(|e| e.to_string())?;
    let rows = budgets::resolve(&file, &http, &shown).map_err(|e| e.to_string())?;
    let judged = crate::check::judge_rows(&rows, &set.results);
    // The file's name: in Bazel the whole path is a runfiles path of no use to the reader.
    let name = path.file_name().map_or(shown, |n| n.to_string_lossy().into_owned());
    let mut out = Budgets { path: name, judged: Vec::new(), unmeasured: Vec::new() };
    for (index, budget) in file.budgets.iter().enumerate() {
        let number = index + 1;
        let mine: Vec<_> = judged.iter().filter(|(row, _, _)| row.budget == number).collect();
        let Some((first, _, _)) = mine.first() else { continue };
        let language = match language_of(first.numerator) {
            Some("rust") | None => language_of(first.denominator).unwrap_or("rust"),
            Some(language) => language,
        };
        let rows: Vec<Judged> = mine.iter().filter_map(|(row, j, failed)| judged_row(j, &row.workload, *failed)).collect();
        if rows.is_empty() {
            out.unmeasured.push((number, budget.promise.clone()));
            continue;
        }
        out.judged.push(Budget { number, promise: budget.promise.clone(), language, formula: first.formula(), bound: first.bound, rows });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{result, set};
    use super::*;
    use crate::runner::RunResult;

    fn write_budgets(name: &str, text: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("ferrule-report-budgets-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("budgets.json");
        std::fs::write(&path, text).unwrap();
        path
    }

    const TWO: &str = r#"{"budgets": [
        {"promise": "FastAPI costs at least 4x", "workloads": ["json-small", "path-int"], "numerator": "fastapi", "denominator": "ferrule-python-sync", "metric": "cpu_us_per_request", "at_least": 4},
        {"promise": "Fastify costs at least 2x", "workloads": ["json-small"], "numerator": "fastify", "denominator": "ferrule-node", "metric": "cpu_us_per_request", "at_least": 2}
    ]}"#;

    fn rounds(framework: &str, workload: &str, cpu: &[f64]) -> Vec<RunResult> {
        cpu.iter().enumerate().map(|(i, c)| RunResult { round: i as u64 + 1, ..result(framework, workload, 1000.0, *c) }).collect()
    }

    #[test]
    fn budgets_are_judged_with_checks_judge_on_the_rounds_of_the_set() {
        let path = write_budgets("rounds", TWO);
        let mut results = rounds("ferrule-python-sync", "json-small", &[10.0, 10.2, 9.8]);
        results.extend(rounds("fastapi", "json-small", &[50.0, 51.0, 49.0]));
        // Clearly under 4×, rounds 1% apart: missed.
        results.extend(rounds("ferrule-python-sync", "path-int", &[10.0, 10.1, 9.9]));
        results.extend(rounds("fastapi", "path-int", &[30.0, 30.3, 29.7]));
        let budgets = judge(&set(results), &path, &crate::workload::default_fixtures_dir()).unwrap();
        assert_eq!(budgets.judged.len(), 1);
        let fastapi = &budgets.judged[0];
        assert_eq!((fastapi.number, fastapi.language, fastapi.overall()), (1, "python", Shown::Missed));
        assert_eq!(fastapi.rows.iter().map(|r| (r.workload.as_str(), r.shown)).collect::<Vec<_>>(), [("json-small", Shown::Holds), ("path-int", Shown::Missed)]);
        assert!(fastapi.verdict().starts_with("MISSED on path-int, holds on 1 of 2 workloads; measured 3.00–5.00, bound ≥ 4.00"), "{}", fastapi.verdict());
        // Node was not measured: the budget is named, not judged.
        assert_eq!(budgets.unmeasured, [(2, "Fastify costs at least 2x".to_owned())]);
    }

    #[test]
    fn one_round_is_not_judged_even_within_the_bound() {
        let path = write_budgets("single", TWO);
        let s = set(vec![result("ferrule-node", "json-small", 30000.0, 20.0), result("fastify", "json-small", 15000.0, 60.0)]);
        let budgets = judge(&s, &path, &crate::workload::default_fixtures_dir()).unwrap();
        let fastify = &budgets.judged[0];
        assert_eq!((fastify.language, fastify.overall()), ("node", Shown::NotJudged));
        assert_eq!(fastify.verdict(), "not judged: 1 round (judging needs 2 or more, as `check` does); measured 3.00, bound ≥ 2.00");
    }

    #[test]
    fn a_missing_or_malformed_file_is_an_error_to_show() {
        let fixtures = crate::workload::default_fixtures_dir();
        assert!(judge(&set(Vec::new()), Path::new("/nonexistent/budgets.json"), &fixtures).unwrap_err().contains("/nonexistent/budgets.json"));
        let path = write_budgets("malformed", r#"{"budgets": [{"promise": "p"}]}"#);
        assert!(judge(&set(Vec::new()), &path, &fixtures).unwrap_err().contains("missing field"));
    }
}
