//! Summarising repetitions: medians, spread, and the flags that tell a
//! reader which numbers to distrust.

use rpclab_model::result::{Aggregate, Cell, Latency};

/// Above this coefficient of variation a cell's throughput is flagged noisy.
pub const DEFAULT_CV_THRESHOLD: f64 = 0.10;

/// One aggregate per (server, variant, scenario, concurrency), in the order
/// the cells were measured.
pub fn aggregate(cells: &[Cell], cv_threshold: f64) -> Vec<Aggregate> {
    let mut keys: Vec<(&str, &str, &str, u32)> = Vec::new();
    for c in cells {
        let key = (
            c.server.as_str(),
            c.variant.as_str(),
            c.scenario.as_str(),
            c.concurrency,
        );
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.into_iter()
        .map(|(server, variant, scenario, concurrency)| {
            let reps: Vec<&Cell> = cells
                .iter()
                .filter(|c| {
                    c.server == server
                        && c.variant == variant
                        && c.scenario == scenario
                        && c.concurrency == concurrency
                })
                .collect();
            summarise(&reps, cv_threshold)
        })
        .collect()
}

fn summarise(reps: &[&Cell], cv_threshold: f64) -> Aggregate {
    let first = reps[0];
    let throughput: Vec<f64> = reps.iter().map(|c| c.throughput_per_s).collect();
    let cv = coefficient_of_variation(&throughput);
    let lat =
        |f: fn(&Latency) -> f64| median(&reps.iter().map(|c| f(&c.latency_us)).collect::<Vec<_>>());
    let optional_median = |values: Vec<Option<f64>>| -> Option<f64> {
        let present: Vec<f64> = values.into_iter().flatten().collect();
        (!present.is_empty()).then(|| median(&present))
    };
    let calls_failed: u64 = reps.iter().map(|c| c.calls_failed).sum();
    let mut flags = Vec::new();
    if reps.len() > 1 && cv > cv_threshold {
        flags.push(format!(
            "noisy: throughput CV {:.0}% > {:.0}%",
            cv * 100.0,
            cv_threshold * 100.0
        ));
    }
    if reps.iter().any(|c| c.client_bound.is_some()) {
        flags.push("client-bound".to_owned());
    }
    if calls_failed > 0 {
        flags.push(format!("{calls_failed} failed calls"));
    }
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
        latency_us: Latency {
            min: lat(|l| l.min),
            mean: lat(|l| l.mean),
            p50: lat(|l| l.p50),
            p90: lat(|l| l.p90),
            p95: lat(|l| l.p95),
            p99: lat(|l| l.p99),
            p999: lat(|l| l.p999),
            max: lat(|l| l.max),
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
        flags,
    }
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
}
