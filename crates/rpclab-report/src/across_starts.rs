//! A pair's ratio over several JVM starts, and its interval with the
//! variation between starts included (Kalibera & Jones; Georges et al.).
//!
//! Within a start the per-round ratios share one JIT's decisions, one heap
//! layout, one set of threads placed on the cores: they vary less than
//! starts do, so an interval over rounds alone claims more than it knows.
//! Each start is summarised by the geometric mean of its rounds' ratios;
//! the pair's ratio is the geometric mean of those, and its interval is
//! Student's t over the start means with (starts − 1) degrees of freedom.
//! In a balanced design that is exact for the two-level normal model of
//! log ratios whatever the split between the levels, because the variance
//! of a start mean already holds both (σ²_between + σ²_within / rounds).

use crate::student;

/// A pair's ratio over starts.
#[derive(Clone, Debug, PartialEq)]
pub struct AcrossStarts {
    /// The geometric mean of the start means.
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    /// The interval's coverage (1 − the pair's share of α).
    pub coverage: f64,
    /// Each start's ratio, in start order (starts with no usable round are
    /// left out).
    pub starts: Vec<f64>,
    /// Rounds that entered, over all starts.
    pub rounds: u32,
}

/// The ratio and its two-sided interval at `alpha` (the pair's share)
/// from per-round speed ratios grouped by start. None with fewer than two
/// starts that have a usable round: one start cannot show how starts vary.
pub fn across_starts(by_start: &[Vec<f64>], alpha: f64) -> Option<AcrossStarts> {
    let means: Vec<f64> = by_start
        .iter()
        .filter(|r| !r.is_empty() && r.iter().all(|x| x.is_finite() && *x > 0.0))
        .map(|r| r.iter().map(|x| x.ln()).sum::<f64>() / r.len() as f64)
        .collect();
    let s = means.len();
    if s < 2 {
        return None;
    }
    let mean = means.iter().sum::<f64>() / s as f64;
    let var = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (s - 1) as f64;
    let half = student::quantile(1.0 - alpha / 2.0, s as u32 - 1) * (var / s as f64).sqrt();
    Some(AcrossStarts {
        ratio: mean.exp(),
        low: (mean - half).exp(),
        high: (mean + half).exp(),
        coverage: 1.0 - alpha,
        starts: means.iter().map(|m| m.exp()).collect(),
        rounds: by_start.iter().map(|r| r.len() as u32).sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_is_t_over_the_start_means() {
        // Start means e^0.1, e^0.2, e^0.3: mean 0.2, sd 0.1, t(0.975, 2)
        // = 4.3027, half-width 4.3027 · 0.1 / √3 = 0.2484.
        let e = f64::exp;
        let a = across_starts(
            &[vec![e(0.05), e(0.15)], vec![e(0.2)], vec![e(0.3), e(0.3)]],
            0.05,
        )
        .unwrap();
        assert!((a.ratio - e(0.2)).abs() < 1e-9);
        assert!((a.low.ln() - (0.2 - 0.24842)).abs() < 1e-4, "{a:?}");
        assert!((a.high.ln() - (0.2 + 0.24842)).abs() < 1e-4, "{a:?}");
        assert_eq!(a.starts.len(), 3);
        assert_eq!(a.rounds, 5);
        assert!((a.coverage - 0.95).abs() < 1e-12);
    }

    #[test]
    fn one_usable_start_gives_no_interval() {
        assert_eq!(across_starts(&[vec![1.1, 1.2], vec![]], 0.05), None);
        assert_eq!(across_starts(&[vec![1.1, 1.2]], 0.05), None);
    }

    #[test]
    fn starts_that_agree_exactly_give_a_point() {
        let a = across_starts(&[vec![2.0], vec![2.0], vec![2.0]], 0.05).unwrap();
        assert!((a.low - 2.0).abs() < 1e-12 && (a.high - 2.0).abs() < 1e-12);
    }
}
