//! The budgets file (bench/budgets.json): the ratios Ferrule promises, each between two
//! frameworks on a set of workloads, and its resolution into one row per workload — checked
//! against the harness's own framework and workload names before anything is measured.

use crate::frameworks;
use crate::runner::RunResult;
use serde::Deserialize;
use std::fmt;
use std::path::Path;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetFile {
    /// Free text for the reader of the file (JSON has no comments).
    #[serde(default)]
    #[allow(dead_code)]
    pub about: String,
    pub budgets: Vec<Budget>,
}

/// One promise: `numerator`'s `metric` ÷ `denominator`'s is at most (or at least) a bound on
/// every workload listed. Misspelled keys are refused (`deny_unknown_fields`), as Ferrule
/// refuses misspelled options.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// The promise in words; names the budget in the table's errors.
    pub promise: String,
    /// Workload names, or `"*"`: every HTTP workload of workloads.json both frameworks serve
    /// (stream workloads only by name).
    pub workloads: Vec<String>,
    /// Workloads `"*"` should leave out (another budget may bound them differently).
    #[serde(default)]
    pub except: Vec<String>,
    pub numerator: String,
    pub denominator: String,
    pub metric: Metric,
    #[serde(default)]
    pub at_most: Option<f64>,
    #[serde(default)]
    pub at_least: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Server CPU time per completed request: the steady measure on a shared machine.
    CpuUsPerRequest,
    RequestsPerSec,
}

impl Metric {
    pub fn of(self, result: &RunResult) -> f64 {
        match self {
            Metric::CpuUsPerRequest => result.server_cpu_us_per_request,
            Metric::RequestsPerSec => result.requests_per_sec,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Metric::CpuUsPerRequest => "CPU-µs/req",
            Metric::RequestsPerSec => "req/s",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    AtMost(f64),
    AtLeast(f64),
}

impl Bound {
    pub fn value(self) -> f64 {
        match self {
            Bound::AtMost(b) | Bound::AtLeast(b) => b,
        }
    }

    pub fn holds(self, ratio: f64) -> bool {
        match self {
            Bound::AtMost(b) => ratio <= b,
            Bound::AtLeast(b) => ratio >= b,
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Bound::AtMost(b) => write!(f, "≤ {b:.2}"),
            Bound::AtLeast(b) => write!(f, "≥ {b:.2}"),
        }
    }
}

/// A budget on one workload: what `check` measures and judges.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// 1-based position of its budget in the file.
    pub budget: usize,
    pub workload: String,
    pub numerator: &'static str,
    pub denominator: &'static str,
    pub metric: Metric,
    pub bound: Bound,
}

impl Row {
    /// `a ÷ b, CPU-µs/req`: what the ratio divides.
    pub fn formula(&self) -> String {
        format!("{} ÷ {}, {}", self.numerator, self.denominator, self.metric.label())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum BudgetError {
    Read { path: String, error: String },
    /// Not JSON, a missing or misspelled key, an unknown metric (serde's message has the line).
    Parse { path: String, error: String },
    Empty { path: String },
    UnknownFramework { budget: usize, promise: String, name: String },
    UnknownWorkload { budget: usize, promise: String, name: String },
    NotServed { budget: usize, promise: String, framework: String, workload: String },
    /// Neither or both of `at_most` / `at_least`, or a bound that is not a positive number.
    Bound { budget: usize, promise: String },
    NoWorkloads { budget: usize, promise: String },
}

impl fmt::Display for BudgetError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            BudgetError::Read { path, error } => write!(f, "{path}: {error}"),
            BudgetError::Parse { path, error } => write!(f, "{path}: {error}"),
            BudgetError::Empty { path } => write!(f, "{path}: no budgets"),
            BudgetError::UnknownFramework { budget, promise, name } => {
                write!(f, "budget {budget} ({promise:?}): unknown framework `{name}` (`ferrule-bench frameworks` lists them)")
            }
            BudgetError::UnknownWorkload { budget, promise, name } => {
                write!(f, "budget {budget} ({promise:?}): unknown workload `{name}` (`ferrule-bench workloads` lists them)")
            }
            BudgetError::NotServed { budget, promise, framework, workload } => {
                write!(f, "budget {budget} ({promise:?}): `{framework}` does not serve the workload `{workload}`")
            }
            BudgetError::Bound { budget, promise } => {
                write!(f, "budget {budget} ({promise:?}): needs exactly one of \"at_most\" and \"at_least\", a positive number")
            }
            BudgetError::NoWorkloads { budget, promise } => write!(f, "budget {budget} ({promise:?}): no workload left to check"),
        }
    }
}

/// bench/budgets.json: `$FERRULE_BENCH_BUDGETS` (set in Bazel's runfiles), else the source tree's.
pub fn default_path() -> std::path::PathBuf {
    std::env::var_os("FERRULE_BENCH_BUDGETS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("budgets.json"))
}

/// Reads and resolves a budgets file against the workloads of workloads.json (`http`, in their
/// order) and the stream workloads.
pub fn load(path: &Path, http: &[String]) -> Result<Vec<Row>, BudgetError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| BudgetError::Read { path: shown.clone(), error: e.to_string() })?;
    resolve(&parse(&text, &shown)?, http, &shown)
}

pub fn parse(text: &str, path: &str) -> Result<BudgetFile, BudgetError> {
    serde_json::from_str(text).map_err(|e| BudgetError::Parse { path: path.to_owned(), error: e.to_string() })
}

/// One row per budget × workload, in the file's order, each workload in workloads.json's.
pub fn resolve(file: &BudgetFile, http: &[String], path: &str) -> Result<Vec<Row>, BudgetError> {
    if file.budgets.is_empty() {
        return Err(BudgetError::Empty { path: path.to_owned() });
    }
    let mut rows = Vec::new();
    for (index, budget) in file.budgets.iter().enumerate() {
        let number = index + 1;
        let promise = || budget.promise.clone();
        let framework = |name: &str| {
            frameworks::find(name).map_err(|_| BudgetError::UnknownFramework { budget: number, promise: promise(), name: name.to_owned() })
        };
        let (numerator, denominator) = (framework(&budget.numerator)?, framework(&budget.denominator)?);
        let bound = match (budget.at_most, budget.at_least) {
            (Some(b), None) if b.is_finite() && b > 0.0 => Bound::AtMost(b),
            (None, Some(b)) if b.is_finite() && b > 0.0 => Bound::AtLeast(b),
            _ => return Err(BudgetError::Bound { budget: number, promise: promise() }),
        };
        let known = |name: &str| http.iter().any(|w| w == name) || crate::stream::is_stream(name);
        for name in budget.workloads.iter().chain(&budget.except).filter(|n| *n != "*") {
            if !known(name) {
                return Err(BudgetError::UnknownWorkload { budget: number, promise: promise(), name: name.clone() });
            }
        }
        let mut workloads: Vec<String> = Vec::new();
        for name in &budget.workloads {
            if name == "*" {
                // Every HTTP workload both serve: "*" with axum means its JSON routes.
                workloads.extend(http.iter().filter(|w| numerator.serves(w) && denominator.serves(w)).cloned());
                continue;
            }
            for f in [numerator, denominator] {
                if !f.serves(name) {
                    return Err(BudgetError::NotServed { budget: number, promise: promise(), framework: f.name.to_owned(), workload: name.clone() });
                }
            }
            workloads.push(name.clone());
        }
        let before = rows.len();
        for workload in http.iter().chain(crate::stream::ALL.iter().map(|s| s.name.to_owned()).collect::<Vec<_>>().iter()) {
            if workloads.contains(workload) && !budget.except.contains(workload) {
                rows.push(Row {
                    budget: number,
                    workload: workload.clone(),
                    numerator: numerator.name,
                    denominator: denominator.name,
                    metric: budget.metric,
                    bound,
                });
            }
        }
        if rows.len() == before {
            return Err(BudgetError::NoWorkloads { budget: number, promise: promise() });
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http() -> Vec<String> {
        ["json-small", "json-large", "path-int"].map(str::to_owned).to_vec()
    }

    fn resolved(budgets: &str) -> Result<Vec<Row>, BudgetError> {
        resolve(&parse(&format!(r#"{{"budgets": [{budgets}]}}"#), "budgets.json")?, &http(), "budgets.json")
    }

    #[test]
    fn a_star_is_every_http_workload_both_serve_less_the_exceptions() {
        let rows = resolved(
            r#"{"promise": "p", "workloads": ["*"], "except": ["json-large"], "numerator": "ferrule-node", "denominator": "fastify", "metric": "cpu_us_per_request", "at_least": 2},
               {"promise": "q", "workloads": ["*"], "numerator": "ferrule-rust", "denominator": "axum", "metric": "requests_per_sec", "at_most": 1.05}"#,
        )
        .unwrap();
        let summary: Vec<(usize, &str, Bound)> = rows.iter().map(|r| (r.budget, r.workload.as_str(), r.bound)).collect();
        assert_eq!(
            summary,
            [(1, "json-small", Bound::AtLeast(2.0)), (1, "path-int", Bound::AtLeast(2.0)), (2, "json-small", Bound::AtMost(1.05)), (2, "json-large", Bound::AtMost(1.05))][..],
        );
        // axum serves no path-int: named explicitly, that is an error, not a silent skip.
        assert!(resolved(r#"{"promise": "r", "workloads": ["path-int"], "numerator": "ferrule-rust", "denominator": "axum", "metric": "cpu_us_per_request", "at_most": 1.1}"#).is_err());
        assert_eq!(rows[0].formula(), "ferrule-node ÷ fastify, CPU-µs/req");
    }

    #[test]
    fn a_stream_workload_is_checked_when_named() {
        let rows = resolved(r#"{"promise": "s", "workloads": ["sse-50"], "numerator": "ferrule-rust", "denominator": "axum", "metric": "cpu_us_per_request", "at_most": 1.1}"#).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].workload, "sse-50");
    }

    #[test]
    fn unknown_names_are_one_line_naming_them() {
        let error = resolved(r#"{"promise": "Node beats Fastify", "workloads": ["*"], "numerator": "ferrule-node", "denominator": "fastifyy", "metric": "cpu_us_per_request", "at_least": 2}"#)
            .unwrap_err();
        assert_eq!(error, BudgetError::UnknownFramework { budget: 1, promise: "Node beats Fastify".into(), name: "fastifyy".into() });
        let line = error.to_string();
        assert!(!line.contains('\n') && line.contains("unknown framework `fastifyy`"), "{line}");

        let error = resolved(r#"{"promise": "p", "workloads": ["json-huge"], "numerator": "ferrule-node", "denominator": "fastify", "metric": "cpu_us_per_request", "at_least": 2}"#).unwrap_err();
        assert!(error.to_string().contains("unknown workload `json-huge`"), "{error}");
        let error = resolved(r#"{"promise": "p", "workloads": ["*"], "except": ["json-hug"], "numerator": "ferrule-node", "denominator": "fastify", "metric": "cpu_us_per_request", "at_least": 2}"#).unwrap_err();
        assert!(error.to_string().contains("unknown workload `json-hug`"), "{error}");
    }

    #[test]
    fn malformed_budgets_are_refused() {
        let parse_error = |budget: &str| match resolved(budget) {
            Err(BudgetError::Parse { error, .. }) => error,
            other => panic!("{other:?}"),
        };
        // A misspelled bound, a metric the harness does not measure, a missing promise.
        assert!(parse_error(r#"{"promise": "p", "workloads": ["*"], "numerator": "ferrule-node", "denominator": "fastify", "metric": "cpu_us_per_request", "at_mots": 2}"#).contains("unknown field `at_mots`"));
        assert!(parse_error(r#"{"promise": "p", "workloads": ["*"], "numerator": "ferrule-node", "denominator": "fastify", "metric": "latency", "at_most": 2}"#).contains("unknown variant `latency`"));
        assert!(parse_error(r#"{"workloads": ["*"], "numerator": "ferrule-node", "denominator": "fastify", "metric": "cpu_us_per_request", "at_most": 2}"#).contains("missing field `promise`"));
        let bound = |bounds: &str| resolved(&format!(r#"{{"promise": "p", "workloads": ["*"], "numerator": "ferrule-node", "denominator": "fastify", "metric": "cpu_us_per_request"{bounds}}}"#));
        assert!(matches!(bound(""), Err(BudgetError::Bound { budget: 1, .. })));
        assert!(matches!(bound(r#", "at_most": 2, "at_least": 1"#), Err(BudgetError::Bound { .. })));
        assert!(matches!(bound(r#", "at_most": 0"#), Err(BudgetError::Bound { .. })));
        assert!(matches!(resolved(r#"{"promise": "p", "workloads": ["*"], "except": ["json-small", "json-large", "path-int"], "numerator": "ferrule-node", "denominator": "fastify", "metric": "cpu_us_per_request", "at_most": 2}"#), Err(BudgetError::NoWorkloads { .. })));
        assert!(matches!(resolve(&parse(r#"{"budgets": []}"#, "b").unwrap(), &http(), "b"), Err(BudgetError::Empty { .. })));
    }

    #[test]
    fn the_budgets_file_of_the_repository_resolves() {
        let fixtures = crate::workload::default_fixtures_dir();
        let http: Vec<String> = crate::workload::load(&fixtures).unwrap().into_iter().map(|w| w.name).collect();
        let rows = load(&default_path(), &http).unwrap_or_else(|e| panic!("{e}"));
        assert!(rows.iter().any(|r| r.numerator == "ferrule-python-sync" && r.denominator == "ferrule-rust"));
    }
}
