//! `lab compare <a> <b>`: two snapshots cell by cell, with the noise of
//! each taken into account, so that a regression is flagged only when the
//! difference is larger than what repeating the same run would give.
//!
//! The rule, per cell (server × variant × scenario × level) and per metric
//! (throughput, p99 latency): take the median over repetitions in each
//! snapshot and the relative change from `a` to `b`. The change is real
//! when it exceeds both a floor ([`crate::reproduce::NOISE_FLOOR`]) and
//! [`crate::reproduce::NOISE_SIGMAS`] times the combined coefficient of
//! variation of the two snapshots' repetitions, and, when both have several
//! repetitions, their ranges do not overlap. Otherwise it is "within noise".

use crate::aggregate::{coefficient_of_variation, median};
use crate::reproduce::{fmt_value, NOISE_FLOOR, NOISE_SIGMAS};
use rpclab_model::result::{Cell, Results};
use tabled::builder::Builder;
use tabled::settings::Style;

/// What a change amounts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Regression,
    Improvement,
    WithinNoise,
}

impl Change {
    fn label(self) -> &'static str {
        match self {
            Change::Regression => "REGRESSION",
            Change::Improvement => "improvement",
            Change::WithinNoise => "within noise",
        }
    }
}

/// The repetitions of one metric of one cell.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub values: Vec<f64>,
}

impl Sample {
    pub fn median(&self) -> f64 {
        median(&self.values)
    }
    fn cv(&self) -> f64 {
        coefficient_of_variation(&self.values)
    }
    fn range(&self) -> (f64, f64) {
        self.values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(*v), b.max(*v))
            })
    }
}

/// Classifies the change from `a` to `b`; `higher_is_better` for throughput.
pub fn classify(a: &Sample, b: &Sample, higher_is_better: bool) -> (f64, Change) {
    let (ma, mb) = (a.median(), b.median());
    if ma == 0.0 {
        return (0.0, Change::WithinNoise);
    }
    let rel = (mb - ma) / ma;
    let band = (NOISE_SIGMAS * (a.cv().powi(2) + b.cv().powi(2)).sqrt()).max(NOISE_FLOOR);
    let overlap = a.values.len() > 1 && b.values.len() > 1 && {
        let ((alo, ahi), (blo, bhi)) = (a.range(), b.range());
        alo <= bhi && blo <= ahi
    };
    if rel.abs() <= band || overlap {
        return (rel, Change::WithinNoise);
    }
    let better = (rel > 0.0) == higher_is_better;
    (
        rel,
        if better {
            Change::Improvement
        } else {
            Change::Regression
        },
    )
}

type Key = (String, String, String, u32);

fn keys(results: &Results) -> Vec<Key> {
    let mut out: Vec<Key> = Vec::new();
    for c in &results.cells {
        let k = (
            c.server.clone(),
            c.variant.clone(),
            c.scenario.clone(),
            c.concurrency,
        );
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

fn samples(results: &Results, k: &Key, f: fn(&Cell) -> f64) -> Sample {
    Sample {
        values: results
            .cells
            .iter()
            .filter(|c| {
                c.server == k.0 && c.variant == k.1 && c.scenario == k.2 && c.concurrency == k.3
            })
            .map(f)
            .collect(),
    }
}

/// The comparison's outcome: its table (with every count) and the regressions.
pub struct Report {
    pub text: String,
    pub regressions: usize,
}

/// Compares snapshot `a` (before) with `b` (after).
pub fn compare(a: &Results, b: &Results) -> Report {
    let mut t = Builder::default();
    t.push_record([
        "server",
        "variant",
        "scenario",
        "level",
        "calls/s a",
        "calls/s b",
        "Δ",
        "p99 ms a",
        "p99 ms b",
        "Δ",
        "verdict",
    ]);
    let (mut regressions, mut improvements, mut unmatched) = (0, 0, 0);
    let kb = keys(b);
    for k in keys(a) {
        if !kb.contains(&k) {
            unmatched += 1;
            t.push_record([
                k.0.clone(),
                k.1.clone(),
                k.2.clone(),
                k.3.to_string(),
                fmt_value(samples(a, &k, |c| c.throughput_per_s).median()),
                "-".into(),
                "".into(),
                "".into(),
                "".into(),
                "".into(),
                "only in a".into(),
            ]);
            continue;
        }
        let (ta, tb) = (
            samples(a, &k, |c| c.throughput_per_s),
            samples(b, &k, |c| c.throughput_per_s),
        );
        let (pa, pb) = (
            samples(a, &k, |c| c.latency_us.p99 / 1e3),
            samples(b, &k, |c| c.latency_us.p99 / 1e3),
        );
        let (dt, ct) = classify(&ta, &tb, true);
        let (dp, cp) = classify(&pa, &pb, false);
        let verdict = if ct == Change::Regression || cp == Change::Regression {
            regressions += 1;
            let mut what = Vec::new();
            if ct == Change::Regression {
                what.push("throughput");
            }
            if cp == Change::Regression {
                what.push("p99");
            }
            format!("{} ({})", Change::Regression.label(), what.join(", "))
        } else if ct == Change::Improvement || cp == Change::Improvement {
            improvements += 1;
            Change::Improvement.label().to_owned()
        } else {
            Change::WithinNoise.label().to_owned()
        };
        t.push_record([
            k.0.clone(),
            k.1.clone(),
            k.2.clone(),
            k.3.to_string(),
            fmt_value(ta.median()),
            fmt_value(tb.median()),
            format!("{:+.1}%", dt * 100.0),
            fmt_value(pa.median()),
            fmt_value(pb.median()),
            format!("{:+.1}%", dp * 100.0),
            verdict,
        ]);
    }
    let ka = keys(a);
    for k in kb.into_iter().filter(|k| !ka.contains(k)) {
        unmatched += 1;
        t.push_record([
            k.0.clone(),
            k.1.clone(),
            k.2.clone(),
            k.3.to_string(),
            "-".into(),
            fmt_value(samples(b, &k, |c| c.throughput_per_s).median()),
            "".into(),
            "".into(),
            "".into(),
            "".into(),
            "only in b".into(),
        ]);
    }
    let mut table = t.build();
    table.with(Style::rounded());
    let text = format!(
        "{table}\n{regressions} regression(s), {improvements} improvement(s), {unmatched} cell(s) in one snapshot only.\n\
         A change counts when it exceeds {:.0}% and {NOISE_SIGMAS}× the combined CV of both snapshots' repetitions, \
         and their repetitions' ranges do not overlap.\n",
        NOISE_FLOOR * 100.0
    );
    Report { text, regressions }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[f64]) -> Sample {
        Sample { values: v.to_vec() }
    }

    #[test]
    fn a_clear_drop_in_throughput_is_a_regression() {
        let (rel, c) = classify(
            &s(&[1000.0, 1010.0, 990.0]),
            &s(&[800.0, 805.0, 795.0]),
            true,
        );
        assert_eq!(c, Change::Regression);
        assert!((rel + 0.2).abs() < 1e-9);
        assert_eq!(
            classify(
                &s(&[800.0, 805.0, 795.0]),
                &s(&[1000.0, 1010.0, 990.0]),
                true
            )
            .1,
            Change::Improvement
        );
    }

    #[test]
    fn higher_latency_is_a_regression() {
        assert_eq!(
            classify(&s(&[1.0, 1.02, 0.98]), &s(&[2.0, 2.02, 1.98]), false).1,
            Change::Regression
        );
    }

    #[test]
    fn a_change_inside_the_spread_is_noise() {
        // 15% apart, but each snapshot's repetitions vary by ~10%: 2·√2·10% ≈ 28% band.
        let a = s(&[1000.0, 900.0, 1100.0]);
        let b = s(&[1150.0, 1035.0, 1265.0]);
        assert_eq!(classify(&a, &b, true).1, Change::WithinNoise);
        // Below the floor with a single repetition each.
        assert_eq!(
            classify(&s(&[1000.0]), &s(&[970.0]), true).1,
            Change::WithinNoise
        );
        // Single repetitions beyond the floor count.
        assert_eq!(
            classify(&s(&[1000.0]), &s(&[900.0]), true).1,
            Change::Regression
        );
    }

    #[test]
    fn overlapping_ranges_are_noise_even_past_the_band() {
        // Medians 10% apart with tiny CVs... but one outlier makes the ranges overlap.
        let a = s(&[1000.0, 1000.0, 1000.0, 1000.0, 900.0]);
        let b = s(&[900.0, 900.0, 900.0, 900.0, 905.0]);
        assert_eq!(classify(&a, &b, true).1, Change::WithinNoise);
    }
}
