//! Summing up and comparing repeated runs: the median, Welch's t-test and Cohen's d.

#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub mean_a: f64,
    pub mean_b: f64,
    /// mean_b / mean_a
    pub ratio: f64,
    pub t: f64,
    pub degrees_of_freedom: f64,
    /// Pooled-SD effect size.
    pub cohens_d: f64,
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The middle value (the mean of the middle two for an even count); one slow run of three
/// does not move it.
pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    match xs.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => xs[n / 2],
        n => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

fn variance(xs: &[f64]) -> f64 {
    let m = mean(xs);
    xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() as f64 - 1.0)
}

/// Needs at least two samples on each side.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Comparison> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, mb) = (mean(a), mean(b));
    let (va, vb) = (variance(a), variance(b));
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let se2 = va / na + vb / nb;
    let t = if se2 > 0.0 { (mb - ma) / se2.sqrt() } else { 0.0 };
    let df = if se2 > 0.0 { se2.powi(2) / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0)) } else { na + nb - 2.0 };
    let pooled = (((na - 1.0) * va + (nb - 1.0) * vb) / (na + nb - 2.0)).sqrt();
    Some(Comparison {
        mean_a: ma,
        mean_b: mb,
        ratio: if ma != 0.0 { mb / ma } else { f64::NAN },
        t,
        degrees_of_freedom: df,
        cohens_d: if pooled > 0.0 { (mb - ma) / pooled } else { 0.0 },
    })
}

/// Two-sided critical t at 95% for the given degrees of freedom (table, then normal limit).
pub fn critical_t95(df: f64) -> f64 {
    const TABLE: [(f64, f64); 10] =
        [(1.0, 12.706), (2.0, 4.303), (3.0, 3.182), (4.0, 2.776), (5.0, 2.571), (6.0, 2.447), (8.0, 2.306), (10.0, 2.228), (20.0, 2.086), (30.0, 2.042)];
    TABLE.iter().find(|(d, _)| df <= *d).map(|(_, t)| *t).unwrap_or(1.96)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_samples_show_no_effect() {
        let c = welch(&[10.0, 11.0, 12.0], &[10.0, 11.0, 12.0]).unwrap();
        assert_eq!(c.t, 0.0);
        assert_eq!(c.cohens_d, 0.0);
    }

    #[test]
    fn clear_difference_is_significant() {
        let c = welch(&[100.0, 101.0, 99.0, 100.5], &[120.0, 119.0, 121.0, 120.5]).unwrap();
        assert!(c.t.abs() > critical_t95(c.degrees_of_freedom));
        assert!((c.ratio - 1.2).abs() < 0.01);
    }

    #[test]
    fn one_sample_is_not_enough() {
        assert!(welch(&[1.0], &[2.0, 3.0]).is_none());
    }
}
