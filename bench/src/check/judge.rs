//! Judging a budget on one workload from its rounds.
//!
//! The measured ratio is the median of the per-round ratios (numerator ÷ denominator of the
//! same round, measured seconds apart), so one round caught in a slow phase does not move it.
//! Within the bound, the budget holds. Beyond it, the budget is *missed* only if the
//! difference is significant: Welch's t-test between the numerator's samples and the
//! denominator's samples scaled by the bound (for `at_most 1.3`: is the numerator's mean above
//! 1.3 × the denominator's?), with |t| beyond the two-sided 95% critical value in the
//! direction of the miss — a one-sided test at 2.5%. Otherwise it is *within noise*: the
//! ratio is past the bound by less than the rounds' spread can tell apart, and a run with
//! more rounds (`--repeat`) or longer ones (`--profile careful`) is what settles it.

use super::budgets::Bound;
use crate::stats;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Holds,
    Missed,
    WithinNoise,
    /// No round measured both frameworks.
    NotMeasured,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Verdict::Holds => "holds",
            Verdict::Missed => "MISSED",
            Verdict::WithinNoise => "within noise",
            Verdict::NotMeasured => "not measured",
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub verdict: Verdict,
    /// Median of the per-round ratios.
    pub ratio: Option<f64>,
    /// Rounds in which both frameworks were measured.
    pub rounds: usize,
    /// Welch's t and the critical value it was held against (only past the bound, with at
    /// least two rounds).
    pub t: Option<(f64, f64)>,
}

/// `rounds`: (numerator, denominator) of each round that measured both. A value that is not
/// a positive number (a run that completed no request) leaves its round out.
pub fn judge(bound: Bound, rounds: &[(f64, f64)]) -> Judgement {
    let rounds: Vec<(f64, f64)> = rounds.iter().copied().filter(|(n, d)| n.is_finite() && d.is_finite() && *n > 0.0 && *d > 0.0).collect();
    if rounds.is_empty() {
        return Judgement { verdict: Verdict::NotMeasured, ratio: None, rounds: 0, t: None };
    }
    let ratio = stats::median(rounds.iter().map(|(n, d)| n / d).collect());
    let mut judgement = Judgement { verdict: Verdict::Holds, ratio: Some(ratio), rounds: rounds.len(), t: None };
    if bound.holds(ratio) {
        return judgement;
    }
    let numerator: Vec<f64> = rounds.iter().map(|(n, _)| *n).collect();
    let scaled: Vec<f64> = rounds.iter().map(|(_, d)| d * bound.value()).collect();
    // t > 0: the numerator's mean is above the bound times the denominator's.
    let significant = stats::welch(&scaled, &numerator).map(|c| {
        let critical = stats::critical_t95(c.degrees_of_freedom);
        judgement.t = Some((c.t, critical));
        match bound {
            Bound::AtMost(_) => c.t > critical,
            Bound::AtLeast(_) => c.t < -critical,
        }
    });
    judgement.verdict = if significant == Some(true) { Verdict::Missed } else { Verdict::WithinNoise };
    judgement
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds of a numerator around `n` and a denominator around `d`, each ±`spread`.
    fn rounds(n: f64, d: f64, spread: f64) -> Vec<(f64, f64)> {
        vec![(n * (1.0 - spread), d * (1.0 + spread)), (n, d), (n * (1.0 + spread), d * (1.0 - spread))]
    }

    #[test]
    fn a_clear_miss_is_missed() {
        // Python sync at 1.6x Rust against a 1.3x budget, rounds within 2% of each other.
        let j = judge(Bound::AtMost(1.3), &rounds(48.0, 30.0, 0.02));
        assert_eq!(j.verdict, Verdict::Missed, "{j:?}");
        assert!((j.ratio.unwrap() - 1.6).abs() < 1e-9);
        let (t, critical) = j.t.unwrap();
        assert!(t > critical);
    }

    #[test]
    fn a_clear_hold_holds_without_a_test() {
        let j = judge(Bound::AtMost(1.3), &rounds(33.0, 30.0, 0.02));
        assert_eq!((j.verdict, j.rounds, j.t), (Verdict::Holds, 3, None));
        // A peer costing 5x Ferrule holds "at least 4x".
        assert_eq!(judge(Bound::AtLeast(4.0), &rounds(150.0, 30.0, 0.05)).verdict, Verdict::Holds);
    }

    #[test]
    fn a_noisy_near_miss_is_within_noise() {
        // 1.33x against 1.3x, with rounds 10% apart: past the bound by less than the noise.
        let j = judge(Bound::AtMost(1.3), &rounds(39.9, 30.0, 0.10));
        assert!(j.ratio.unwrap() > 1.3);
        assert_eq!(j.verdict, Verdict::WithinNoise, "{j:?}");
        let (t, critical) = j.t.unwrap();
        assert!(t.abs() < critical);
    }

    #[test]
    fn at_least_is_missed_below_the_bound() {
        // Fastify costing only 1.5x Ferrule (Node) against "at least 2x".
        let j = judge(Bound::AtLeast(2.0), &rounds(45.0, 30.0, 0.02));
        assert_eq!(j.verdict, Verdict::Missed, "{j:?}");
        assert!(j.t.unwrap().0 < 0.0);
    }

    #[test]
    fn one_round_past_the_bound_cannot_be_a_miss() {
        let j = judge(Bound::AtMost(1.3), &[(60.0, 30.0)]);
        assert_eq!((j.verdict, j.ratio, j.t), (Verdict::WithinNoise, Some(2.0), None));
    }

    #[test]
    fn rounds_that_completed_nothing_are_not_measured() {
        assert_eq!(judge(Bound::AtMost(1.3), &[(0.0, 30.0), (40.0, 0.0)]).verdict, Verdict::NotMeasured);
        assert_eq!(judge(Bound::AtMost(1.3), &[]).verdict, Verdict::NotMeasured);
    }

    #[test]
    fn the_ratio_is_the_median_of_the_rounds_ratios() {
        // One round caught in a slow phase (3x) does not move it.
        let j = judge(Bound::AtMost(1.3), &[(36.0, 30.0), (90.0, 30.0), (35.0, 30.0)]);
        assert_eq!(j.ratio, Some(1.2));
        assert_eq!(j.verdict, Verdict::Holds);
    }
}
