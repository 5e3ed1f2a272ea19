//! Summarising repetitions: medians, spread, and the flags that tell a
//! reader which numbers to distrust.
//!
//! Throughput: the median over repetitions, its range, its coefficient of
//! variation, and a distribution-free confidence interval of the median
//! from order statistics ([`median_interval`]). Latency: the median of each
//! percentile over repetitions, but the minimum and the maximum are the
//! extremes over all repetitions (a maximum is a fact about the run, not a
//! quantity to average). Flags: every cell flag of any repetition, `noisy`
//! when the CV exceeds the profile's threshold, and failed calls.
//!
//! Arithmetic over cells only, here in the model because two sides need
//! it: the orchestrator aggregates as a run goes, and the report
//! re-aggregates an old snapshot's cells by today's rules.

use crate::result::{Aggregate, Cell, CellFlag, CellKey, Latency, MedianInterval};

/// Above this coefficient of variation a cell's throughput is flagged
/// noisy, unless the profile says otherwise (`cv_threshold`).
pub const DEFAULT_CV_THRESHOLD: f64 = 0.10;

/// One aggregate per [`CellKey`], in the order the cells were measured.
pub fn aggregate(cells: &[Cell], cv_threshold: f64) -> Vec<Aggregate> {
    keys(cells)
        .into_iter()
        .map(|key| {
            let reps: Vec<&Cell> = cells.iter().filter(|c| c.key() == key).collect();
            summarise(&reps, cv_threshold)
        })
        .collect()
}

/// The distinct keys of `cells`, in the order measured.
pub fn keys(cells: &[Cell]) -> Vec<CellKey<'_>> {
    let mut keys: Vec<CellKey> = Vec::new();
    for key in cells.iter().map(Cell::key) {
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

fn summarise(reps: &[&Cell], cv_threshold: f64) -> Aggregate {
    let first = reps[0];
    let throughput: Vec<f64> = reps.iter().map(|c| c.throughput_per_s).collect();
    let cv = coefficient_of_variation(&throughput);
    let ci = median_interval(&throughput, CI_TARGET);
    let lat =
        |f: fn(&Latency) -> f64| median(&reps.iter().map(|c| f(&c.latency_us)).collect::<Vec<_>>());
    let optional_median = |values: Vec<Option<f64>>| -> Option<f64> {
        let present: Vec<f64> = values.into_iter().flatten().collect();
        (!present.is_empty()).then(|| median(&present))
    };
    let calls_failed: u64 = reps.iter().map(|c| c.calls_failed).sum();
    let mut cell_flags: Vec<CellFlag> = Vec::new();
    for c in reps {
        let legacy = c.client_bound.is_some().then_some(CellFlag::ClientBound);
        for f in c.flags.iter().copied().chain(legacy) {
            if !cell_flags.contains(&f) && carried(f, reps) {
                cell_flags.push(f);
            }
        }
    }
    cell_flags.sort();
    let noisy = reps.len() > 1 && cv > cv_threshold;
    let mut flags: Vec<String> = cell_flags.iter().map(|f| f.to_string()).collect();
    if noisy {
        flags.push(format!(
            "noisy: throughput CV {}",
            above_threshold(cv, cv_threshold)
        ));
    }
    if calls_failed > 0 {
        flags.push(format!("{calls_failed} failed calls"));
    }
    let extreme = |f: fn(&Latency) -> f64, min: bool| {
        reps.iter().map(|c| f(&c.latency_us)).fold(
            if min {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            },
            |acc, v| if min { acc.min(v) } else { acc.max(v) },
        )
    };
    Aggregate {
        server: first.server.clone(),
        variant: first.variant.clone(),
        scenario: first.scenario.clone(),
        concurrency: first.concurrency,
        repetitions: reps.len() as u32,
        throughput_median: median(&throughput),
        throughput_min: throughput.iter().copied().fold(f64::INFINITY, f64::min),
        throughput_max: throughput.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        throughput_cv: cv,
        throughput_ci: ci,
        latency_us: Latency {
            min: extreme(|l| l.min, true),
            mean: lat(|l| l.mean),
            p50: lat(|l| l.p50),
            p90: lat(|l| l.p90),
            p95: lat(|l| l.p95),
            p99: lat(|l| l.p99),
            p999: lat(|l| l.p999),
            max: extreme(|l| l.max, false),
        },
        calls_ok: reps.iter().map(|c| c.calls_ok).sum(),
        calls_failed,
        server_cpu_us_per_call: optional_median(
            reps.iter()
                .map(|c| c.server_cost.map(|x| x.cpu_us_per_call))
                .collect(),
        ),
        client_cpu_us_per_call: optional_median(
            reps.iter()
                .map(|c| c.client_cost.map(|x| x.cpu_us_per_call))
                .collect(),
        ),
        bytes_sent_per_call: median(
            &reps
                .iter()
                .map(|c| c.report.bytes_sent_per_call)
                .collect::<Vec<_>>(),
        ),
        bytes_received_per_call: median(
            &reps
                .iter()
                .map(|c| c.report.bytes_received_per_call)
                .collect::<Vec<_>>(),
        ),
        cell_flags,
        noisy,
        flags,
    }
}

/// Whether a cell flag of some repetitions is the aggregate's. In blocks of
/// repetitions every flag of any repetition is. In interleaved rounds
/// (cells with a `round_position`) a window's own accident, `not-steady`
/// (a noisy second in a primed server's warm-up) or `host-busy`, is the
/// aggregate's only when more than half of its rounds carry it: the median
/// over rounds is robust to the others, and a pair's ratio is taken round
/// by round (the report's verdicts leave host-busy rounds out).
fn carried(flag: CellFlag, reps: &[&Cell]) -> bool {
    let in_rounds = reps.iter().any(|c| c.round_position.is_some());
    if !in_rounds || !matches!(flag, CellFlag::NotSteady | CellFlag::HostBusy) {
        return true;
    }
    let with = reps.iter().filter(|c| c.flags.contains(&flag)).count();
    2 * with > reps.len()
}

/// The coverage the median's interval aims at: the narrowest
/// order-statistic interval that reaches it is used, or the whole range
/// when even that falls short (always, below 6 repetitions).
pub const CI_TARGET: f64 = 0.95;

/// The distribution-free confidence interval of the median of `values`:
/// the `r`-th smallest to the `r`-th largest value, for the largest `r`
/// whose coverage 1 − 2·P(B ≤ r − 1), B ~ Binomial(n, ½), still reaches
/// `target`; the range (r = 1) when none does, with its own, lower
/// coverage. None for fewer than two values: one value has no spread, and
/// an interval would be invented.
pub fn median_interval(values: &[f64], target: f64) -> Option<MedianInterval> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    // P(B ≤ k) for k = 0..n.
    let mut cdf = Vec::with_capacity(n + 1);
    let mut acc = 0.0;
    for k in 0..=n {
        acc += binomial(n, k) * 0.5f64.powi(n as i32);
        cdf.push(acc);
    }
    let coverage = |r: usize| 1.0 - 2.0 * cdf[r - 1];
    let mut rank = 1;
    while rank < n / 2 && coverage(rank + 1) >= target {
        rank += 1;
    }
    Some(MedianInterval {
        low: v[rank - 1],
        high: v[n - rank],
        confidence: coverage(rank),
    })
}

fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// `value > threshold` as percentages, with as many decimals as it takes
/// for the two to read differently: never "10% > 10%".
pub fn above_threshold(value: f64, threshold: f64) -> String {
    let t = trim_percent(threshold * 100.0);
    for decimals in 2..=6 {
        let v = format!("{:.*}", decimals, value * 100.0);
        if trim_percent(v.parse().unwrap_or(value * 100.0)) != t {
            return format!("{v} % > {t} %");
        }
    }
    format!("{} % > {t} %", value * 100.0)
}

/// A percentage without trailing zeros (`10`, `12.5`).
fn trim_percent(p: f64) -> String {
    let s = format!("{p:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The median (mean of the two middle values for an even count).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Sample standard deviation over mean; 0 for fewer than two values.
pub fn coefficient_of_variation(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if mean == 0.0 {
        return 0.0;
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    var.sqrt() / mean
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Results;
    use std::path::Path;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn cv_is_sample_stddev_over_mean() {
        assert_eq!(coefficient_of_variation(&[5.0]), 0.0);
        let cv = coefficient_of_variation(&[90.0, 100.0, 110.0]);
        assert!((cv - 0.1).abs() < 1e-12, "{cv}");
    }

    #[test]
    fn a_flag_never_reads_ten_percent_over_ten_percent() {
        assert_eq!(above_threshold(0.1007, 0.10), "10.07 % > 10 %");
        assert_eq!(above_threshold(0.33, 0.10), "33.00 % > 10 %");
        assert_eq!(above_threshold(0.100004, 0.10), "10.0004 % > 10 %");
        assert_eq!(above_threshold(0.126, 0.125), "12.60 % > 12.5 %");
    }

    #[test]
    fn the_median_interval_comes_from_order_statistics() {
        assert_eq!(median_interval(&[5.0], CI_TARGET), None);
        assert_eq!(median_interval(&[], CI_TARGET), None);
        // Two or three values: the range, at 50 % and 75 %.
        let two = median_interval(&[2.0, 1.0], CI_TARGET).unwrap();
        assert_eq!((two.low, two.high, two.confidence), (1.0, 2.0, 0.5));
        let three = median_interval(&[3.0, 1.0, 2.0], CI_TARGET).unwrap();
        assert_eq!((three.low, three.high, three.confidence), (1.0, 3.0, 0.75));
        // Six values: the range covers 1 − 2/64 = 96.9 %.
        let six = median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], CI_TARGET).unwrap();
        assert_eq!((six.low, six.high), (1.0, 6.0));
        assert!((six.confidence - 0.96875).abs() < 1e-12);
        // Nine values: the 2nd to the 8th covers 1 − 2·10/512 = 96.1 %; the
        // 3rd to the 7th would cover only 82 %.
        let nine: Vec<f64> = (1..=9).map(f64::from).collect();
        let ci = median_interval(&nine, CI_TARGET).unwrap();
        assert_eq!((ci.low, ci.high), (2.0, 8.0));
        assert!((ci.confidence - (1.0 - 20.0 / 512.0)).abs() < 1e-12);
    }

    fn fixture() -> Results {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../xtask/tests/fixtures/results.json"),
        )
        .unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn extremes_are_true_extremes_and_flags_are_carried() {
        let mut r = fixture();
        let first = r.cells[0].clone();
        let mut cells: Vec<Cell> = (1..=3)
            .map(|rep| {
                let mut c = first.clone();
                c.repetition = rep;
                c
            })
            .collect();
        for (c, (max, min, p99, tput)) in cells.iter_mut().zip([
            (8600.0, 60.0, 3000.0, 1000.0),
            (16_800.0, 55.0, 3100.0, 1010.0),
            (8000.0, 70.0, 2900.0, 990.0),
        ]) {
            c.latency_us.max = max;
            c.latency_us.min = min;
            c.latency_us.p99 = p99;
            c.throughput_per_s = tput;
            c.calls_failed = 0;
            c.client_bound = None;
            c.flags.clear();
        }
        cells[1].flags = vec![CellFlag::ServerBound];
        cells[2].flags = vec![CellFlag::NotSteady, CellFlag::ServerBound];
        r.cells = cells;
        let a = &aggregate(&r.cells, DEFAULT_CV_THRESHOLD)[0];
        assert_eq!(a.latency_us.max, 16_800.0, "the largest maximum");
        assert_eq!(a.latency_us.min, 55.0, "the smallest minimum");
        assert_eq!(a.latency_us.p99, 3000.0, "the median p99");
        assert_eq!(a.cell_flags, [CellFlag::NotSteady, CellFlag::ServerBound]);
        assert!(!a.noisy);
        assert!(!a.trustworthy());
        assert_eq!(a.caveats(), ["unsteady"]);
        let ci = a.throughput_ci.unwrap();
        assert_eq!((ci.low, ci.high, ci.confidence), (990.0, 1010.0, 0.75));

        // A legacy client-bound text is a client-bound flag: a lower bound.
        r.cells[2].flags.clear();
        r.cells[0].client_bound = Some("the client kept 0.95 of its core busy".into());
        let a = &aggregate(&r.cells, DEFAULT_CV_THRESHOLD)[0];
        assert_eq!(a.cell_flags, [CellFlag::ClientBound, CellFlag::ServerBound]);
        assert_eq!(a.caveats(), ["lower bound"]);

        // Noisy repetitions are unsteady, and the flag says by how much.
        r.cells[0].client_bound = None;
        r.cells[1].flags.clear();
        r.cells[0].throughput_per_s = 700.0;
        let a = &aggregate(&r.cells, DEFAULT_CV_THRESHOLD)[0];
        assert!(a.noisy);
        assert_eq!(a.caveats(), ["unsteady"]);
        assert!(
            a.flags[0].starts_with("noisy: throughput CV 19."),
            "{:?}",
            a.flags
        );

        // One repetition: no interval, never noisy.
        let a = &aggregate(&r.cells[..1], DEFAULT_CV_THRESHOLD)[0];
        assert_eq!(a.throughput_ci, None);
        assert!(a.trustworthy());
    }

    #[test]
    fn in_rounds_a_windows_accident_is_the_aggregates_only_on_most_rounds() {
        let first = fixture().cells[0].clone();
        let rounds: Vec<Cell> = (1..=6)
            .map(|round| {
                let mut c = first.clone();
                c.repetition = round;
                c.round_position = Some(1);
                c.client_bound = None;
                c.flags = vec![CellFlag::ServerBound];
                c
            })
            .collect();
        let with = |n: usize, flag: CellFlag| {
            let mut cells = rounds.clone();
            for c in &mut cells[..n] {
                c.flags.push(flag);
            }
            aggregate(&cells, DEFAULT_CV_THRESHOLD)[0]
                .cell_flags
                .clone()
        };
        assert_eq!(with(3, CellFlag::NotSteady), [CellFlag::ServerBound]);
        assert_eq!(
            with(4, CellFlag::NotSteady),
            [CellFlag::NotSteady, CellFlag::ServerBound]
        );
        assert_eq!(with(2, CellFlag::HostBusy), [CellFlag::ServerBound]);
        // Any other flag of one round is the aggregate's, as in blocks.
        assert_eq!(
            with(1, CellFlag::ClientBound),
            [CellFlag::ClientBound, CellFlag::ServerBound]
        );
    }
}
