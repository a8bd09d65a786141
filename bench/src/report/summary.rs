//! Ferrule against each peer of its language: per workload, the peer's CPU-µs per request ÷
//! Ferrule's and Ferrule's requests/s ÷ the peer's (both > 1 when Ferrule is ahead), and over
//! the workloads their geometric mean — the mean that treats 2× ahead and 2× behind alike.

use super::{cell, frameworks, workloads, ResultSet};
use crate::frameworks::{self as known, CEILING};

/// The languages in the order the report shows them: the bindings first, Rust (the baseline
/// every binding is measured against) last. Each report lists them in this order whatever the
/// order of the results, so a reader finds a language in the same place in every report.
pub const LANGUAGES: &[(&str, &str)] = &[("python", "Python"), ("node", "Node.js"), ("ruby", "Ruby"), ("rust", "Rust")];

pub fn language_name(key: &str) -> &'static str {
    LANGUAGES.iter().find(|(k, _)| *k == key).map_or("other", |(_, name)| name)
}

/// The language a framework of the results belongs to (`frameworks::ALL`); none for a name the
/// harness does not know (results of an older harness).
pub fn language_of(framework: &str) -> Option<&'static str> {
    known::find(framework).ok().map(|f| f.language)
}

/// One language's frameworks in this result set.
#[derive(Debug, Clone)]
pub struct Language {
    pub key: &'static str,
    pub name: &'static str,
    /// The Ferrule the peers are compared with: the first of the language's measured (in
    /// `frameworks::ALL` order: the sync Python handler before the async one).
    pub ferrule: Option<String>,
    /// Every measured framework of the language a reader compares (Ferrule's servers, peers,
    /// the ceiling), in `frameworks::ALL` order; servers that price a feature are left to their
    /// own section.
    pub members: Vec<String>,
    pub comparisons: Vec<Comparison>,
}

/// Ferrule against one peer, workload by workload.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub peer: String,
    /// Every HTTP workload Ferrule was measured on, in the results' order; `None` where the
    /// peer was not (or answered nothing to compare).
    pub workloads: Vec<(String, Option<Ratio>)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    /// Peer CPU-µs/req ÷ Ferrule's.
    pub cpu: f64,
    /// Ferrule req/s ÷ the peer's.
    pub rps: f64,
    /// Requests the peer failed: a ratio of runs that failed requests measures other work.
    pub failed: u64,
}

/// A ratio over workloads: their geometric mean, lowest and highest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    pub count: usize,
}

pub fn spread(values: &[f64]) -> Option<Spread> {
    let values: Vec<f64> = values.iter().copied().filter(|v| v.is_finite() && *v > 0.0).collect();
    if values.is_empty() {
        return None;
    }
    let mean = (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp();
    Some(Spread { mean, low: values.iter().copied().fold(f64::INFINITY, f64::min), high: values.iter().copied().fold(0.0, f64::max), count: values.len() })
}

impl Comparison {
    pub fn cpu(&self) -> Option<Spread> {
        spread(&self.workloads.iter().filter_map(|(_, r)| r.map(|r| r.cpu)).collect::<Vec<_>>())
    }

    pub fn rps(&self) -> Option<Spread> {
        spread(&self.workloads.iter().filter_map(|(_, r)| r.map(|r| r.rps)).collect::<Vec<_>>())
    }

    pub fn on(&self, workload: &str) -> Option<Ratio> {
        self.workloads.iter().find(|(w, _)| w == workload).and_then(|(_, r)| *r)
    }
}

fn ratio(set: &ResultSet, ours: &str, peer: &str, workload: &str) -> Option<Ratio> {
    let (o, p) = (cell(set, ours, workload)?, cell(set, peer, workload)?);
    let r = Ratio { cpu: p.cpu_us / o.cpu_us, rps: o.rps / p.rps, failed: p.failed };
    (r.cpu.is_finite() && r.cpu > 0.0 && r.rps.is_finite() && r.rps > 0.0).then_some(r)
}

/// The languages with at least one framework measured, in [`LANGUAGES`] order.
pub fn languages(set: &ResultSet) -> Vec<Language> {
    let measured = frameworks(set);
    // The stream workloads measure messages, not requests, against the peers their users
    // stream with: they keep a section of their own.
    let all_workloads: Vec<String> = workloads(set).into_iter().filter(|w| !crate::stream::is_stream(w)).collect();
    LANGUAGES
        .iter()
        .filter_map(|&(key, name)| {
            let members: Vec<String> = known::ALL
                .iter()
                .filter(|f| f.language == key && f.priced.is_none() && measured.iter().any(|m| m == f.name))
                .map(|f| f.name.to_owned())
                .collect();
            if members.is_empty() {
                return None;
            }
            let ferrule = members.iter().find(|m| known::find(m).is_ok_and(|f| f.ferrule)).cloned();
            // The ceiling is no peer: bare hyper with no routing or handler. Its share is in the
            // full table's "of ceiling".
            let peers = members.iter().filter(|m| known::find(m).is_ok_and(|f| !f.ferrule) && m.as_str() != CEILING);
            let comparisons = match &ferrule {
                Some(ours) => peers
                    .map(|peer| Comparison {
                        peer: peer.clone(),
                        workloads: all_workloads.iter().filter(|w| cell(set, ours, w).is_some()).map(|w| (w.clone(), ratio(set, ours, peer, w))).collect(),
                    })
                    .collect(),
                None => Vec::new(),
            };
            Some(Language { key, name, ferrule, members, comparisons })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::{result, set};
    use super::*;

    #[test]
    fn languages_come_in_a_fixed_order_whatever_the_results_order() {
        let s = set(vec![
            result("axum", "json-small", 50000.0, 15.0),
            result("sinatra", "json-small", 4000.0, 250.0),
            result("ferrule-ruby", "json-small", 20000.0, 50.0),
            result("fastapi", "json-small", 3000.0, 300.0),
            result("ferrule-python-async", "json-small", 20000.0, 40.0),
            result("ferrule-python-sync", "json-small", 25000.0, 36.0),
            result("ceiling", "json-small", 90000.0, 9.0),
            result("ferrule-rust", "json-small", 60000.0, 16.0),
            result("ferrule-python-sync+hook", "json-small", 24000.0, 38.0),
        ]);
        let langs = languages(&s);
        let names: Vec<&str> = langs.iter().map(|l| l.name).collect();
        assert_eq!(names, ["Python", "Ruby", "Rust"]);
        // Ferrule first, peers in the harness's order; the feature's server is not a member.
        assert_eq!(langs[0].members, ["ferrule-python-sync", "ferrule-python-async", "fastapi"]);
        assert_eq!(langs[0].ferrule.as_deref(), Some("ferrule-python-sync"));
        // The ceiling is shown with Rust but compared with no one.
        assert_eq!(langs[2].members, ["ferrule-rust", "axum", "ceiling"]);
        assert_eq!(langs[2].comparisons.iter().map(|c| c.peer.as_str()).collect::<Vec<_>>(), ["axum"]);
        let fastapi = &langs[0].comparisons[0];
        let r = fastapi.on("json-small").unwrap();
        assert!((r.cpu - 300.0 / 36.0).abs() < 1e-9 && (r.rps - 25000.0 / 3000.0).abs() < 1e-9);
    }

    #[test]
    fn a_peer_not_measured_on_a_workload_is_missing_there_and_left_out_of_the_mean() {
        let s = set(vec![
            result("ferrule-rust", "path-int", 60000.0, 15.0),
            result("ferrule-rust", "json-small", 50000.0, 20.0),
            result("ferrule-rust", "json-large", 5000.0, 200.0),
            result("axum", "json-small", 50000.0, 20.0 * 1.5),
            result("axum", "json-large", 5000.0, 200.0 / 1.5),
        ]);
        let rust = &languages(&s)[0];
        let axum = &rust.comparisons[0];
        assert_eq!(axum.workloads.iter().map(|(w, r)| (w.as_str(), r.is_some())).collect::<Vec<_>>(), [("path-int", false), ("json-small", true), ("json-large", true)]);
        let cpu = axum.cpu().unwrap();
        // 1.5× ahead and 1.5× behind: even, by the geometric mean.
        assert!((cpu.mean - 1.0).abs() < 1e-9, "{cpu:?}");
        assert!((cpu.low - 1.0 / 1.5).abs() < 1e-9 && (cpu.high - 1.5).abs() < 1e-9 && cpu.count == 2);
        assert_eq!(spread(&[]), None);
    }

    #[test]
    fn a_language_whose_ferrule_was_not_measured_compares_nothing() {
        let langs = languages(&set(vec![result("fastify", "json-small", 20000.0, 45.0)]));
        assert_eq!((langs[0].name, langs[0].ferrule.clone(), langs[0].comparisons.len()), ("Node.js", None, 0));
    }
}
