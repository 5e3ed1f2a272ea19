//! Recording calls without locks.
//!
//! Each worker owns a [`WorkerStats`]: a latency histogram and failure
//! counters that only it touches, so recording a call is a few arithmetic
//! operations and never a lock or an allocation (the histogram auto-resizes
//! the rare time a new maximum needs a larger bucket array). The runner
//! merges the workers' stats once, after the measurement window.

use crate::protocol::CallError;
use hdrhistogram::Histogram;
use rpclab_model::result::{Failures, Latency};
use std::time::Duration;

/// Significant digits of every latency histogram (0.1% relative error).
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// Latencies are recorded in microseconds.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits is a valid histogram")
}

fn micros(d: Duration) -> u64 {
    (d.as_micros() as u64).max(1)
}

/// What one worker saw during the measurement window.
#[derive(Debug)]
pub struct WorkerStats {
    pub latency: Histogram<u64>,
    pub ok: u64,
    pub failures: Failures,
}

impl Default for WorkerStats {
    fn default() -> Self {
        WorkerStats {
            latency: new_histogram(),
            ok: 0,
            failures: Failures::default(),
        }
    }
}

impl WorkerStats {
    pub fn record_ok(&mut self, latency: Duration) {
        self.ok += 1;
        // Auto-resizing histograms accept any value; the error case cannot happen.
        let _ = self.latency.record(micros(latency));
    }

    pub fn record_failure(&mut self, error: &CallError) {
        let f = &mut self.failures;
        let (counter, class) = match error {
            CallError::Timeout => (&mut f.timeout, "timeout"),
            CallError::Connect(_) => (&mut f.connect, "connect"),
            CallError::Io(_) => (&mut f.io, "io"),
            CallError::Protocol(_) | CallError::Config(_) => (&mut f.protocol, "protocol"),
            CallError::Server(_) => (&mut f.server_error, "server_error"),
            CallError::WrongResponse(_) => (&mut f.wrong_response, "wrong_response"),
        };
        *counter += 1;
        if *counter == 1 {
            f.examples.insert(class.to_owned(), error.to_string());
        }
    }

    pub fn merge(&mut self, other: WorkerStats) {
        self.ok += other.ok;
        let _ = self.latency.add(&other.latency);
        let (a, b) = (&mut self.failures, other.failures);
        a.timeout += b.timeout;
        a.connect += b.connect;
        a.io += b.io;
        a.protocol += b.protocol;
        a.server_error += b.server_error;
        a.wrong_response += b.wrong_response;
        for (class, example) in b.examples {
            a.examples.entry(class).or_insert(example);
        }
    }
}

/// Percentiles of a histogram in microseconds.
pub fn latency_summary(h: &Histogram<u64>) -> Latency {
    if h.is_empty() {
        return Latency::default();
    }
    let q = |p: f64| h.value_at_quantile(p) as f64;
    Latency {
        min: h.min() as f64,
        mean: h.mean(),
        p50: q(0.50),
        p90: q(0.90),
        p95: q(0.95),
        p99: q(0.99),
        p999: q(0.999),
        max: h.max() as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_every_sample_and_the_extremes() {
        let mut a = WorkerStats::default();
        let mut b = WorkerStats::default();
        for us in 1..=1000 {
            a.record_ok(Duration::from_micros(us));
        }
        b.record_ok(Duration::from_millis(250));
        b.record_failure(&CallError::Timeout);
        b.record_failure(&CallError::WrongResponse("x".into()));
        a.merge(b);
        assert_eq!(a.ok, 1001);
        assert_eq!(a.latency.len(), 1001);
        assert_eq!(a.failures.total(), 2);
        assert_eq!(a.failures.examples.len(), 2);
        let s = latency_summary(&a.latency);
        assert_eq!(s.min, 1.0);
        assert!(
            (s.max - 250_000.0).abs() / 250_000.0 < 0.001,
            "max {}",
            s.max
        );
        assert!((s.p50 - 500.0).abs() <= 1.0, "p50 {}", s.p50);
    }

    #[test]
    fn sub_microsecond_calls_are_recorded_as_one_microsecond() {
        let mut a = WorkerStats::default();
        a.record_ok(Duration::from_nanos(10));
        assert_eq!(a.latency.min(), 1);
    }

    #[test]
    fn only_the_first_example_of_a_class_is_kept() {
        let mut a = WorkerStats::default();
        a.record_failure(&CallError::Server("first".into()));
        a.record_failure(&CallError::Server("second".into()));
        assert_eq!(a.failures.server_error, 2);
        assert!(a.failures.examples["server_error"].contains("first"));
    }
}
