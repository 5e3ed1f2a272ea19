//! The one rule for what a measurement window counts, in one place.
//!
//! A call belongs to the window in which it **completed** (the load models
//! decide that, see [`crate::load`]). This module turns those calls and what
//! the runner read at the window's edges (wall time, the process's CPU time,
//! wire bytes) into every per-call figure of the report, so all of them rest
//! on the same count:
//!
//! * `calls = calls_ok + calls_failed`, and the latency histogram holds
//!   exactly `calls_ok` values;
//! * `throughput = calls_ok / duration`;
//! * `bytes_*_per_call × calls` = the bytes of the window;
//! * `cpu_us_per_call × calls` = the CPU time of the window;
//! * a streaming call's messages are those of the `calls_ok` streams, over
//!   the same duration.
//!
//! A window with no call has no per-call figures (0, and the cell is
//! flagged too-few-calls by its minimum), never a division by zero.

use crate::stats::WorkerStats;
use rpclab_model::result::Cost;
use std::time::Duration;

/// What the runner read at the window's edges.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Edges {
    /// Wall time from the window's opening to its close.
    pub duration: Duration,
    /// CPU time of the whole client process over the window.
    pub cpu: Duration,
    /// Wire bytes over the window, each direction.
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Peak resident memory of the process, bytes.
    pub memory_peak: u64,
    /// Context switches of every thread of the process over the window.
    pub context_switches: u64,
}

/// Every figure of a window, derived from one set of calls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figures {
    pub calls_ok: u64,
    pub calls_failed: u64,
    pub duration_s: f64,
    pub throughput_per_s: f64,
    pub bytes_sent_per_call: f64,
    pub bytes_received_per_call: f64,
    pub client_cost: Cost,
    /// Streaming calls: messages sent and received per second.
    pub messages_sent_per_s: f64,
    pub messages_received_per_s: f64,
}

impl Figures {
    /// The figures of the calls in `stats` (already merged over workers)
    /// over the window described by `edges`.
    pub fn of(stats: &WorkerStats, edges: &Edges) -> Figures {
        let calls_ok = stats.ok;
        let calls_failed = stats.failures.total();
        let calls = calls_ok + calls_failed;
        let duration_s = edges.duration.as_secs_f64();
        let cpu_s = edges.cpu.as_secs_f64();
        Figures {
            calls_ok,
            calls_failed,
            duration_s,
            throughput_per_s: ratio(calls_ok as f64, duration_s),
            bytes_sent_per_call: ratio(edges.bytes_sent as f64, calls as f64),
            bytes_received_per_call: ratio(edges.bytes_received as f64, calls as f64),
            client_cost: Cost {
                cpu_ms: cpu_s * 1e3,
                cpu_us_per_call: ratio(cpu_s * 1e6, calls as f64),
                cpu_cores_busy: ratio(cpu_s, duration_s),
                memory_peak_mib: edges.memory_peak as f64 / (1024.0 * 1024.0),
                context_switches_per_call: Some(ratio(edges.context_switches as f64, calls as f64)),
                // The client has no JIT.
                compiler_cpu_ms: None,
            },
            messages_sent_per_s: ratio(stats.messages_sent as f64, duration_s),
            messages_received_per_s: ratio(stats.messages_received() as f64, duration_s),
        }
    }
}

/// `num / den`, or 0 when there is nothing to divide by.
fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpclab_protocols::protocol::CallError;

    #[test]
    fn every_per_call_figure_divides_by_the_same_calls() {
        let mut stats = WorkerStats::default();
        for _ in 0..30 {
            stats.record_ok(Duration::from_micros(100));
        }
        for _ in 0..10 {
            stats.record_failure(&CallError::Timeout);
        }
        let edges = Edges {
            duration: Duration::from_secs(2),
            cpu: Duration::from_millis(400),
            bytes_sent: 4000,
            bytes_received: 8000,
            memory_peak: 0,
            context_switches: 80,
        };
        let f = Figures::of(&stats, &edges);
        assert_eq!((f.calls_ok, f.calls_failed), (30, 10));
        assert_eq!(stats.latency.len(), f.calls_ok);
        assert_eq!(f.throughput_per_s, 15.0);
        assert_eq!(f.bytes_sent_per_call, 100.0);
        assert_eq!(f.bytes_received_per_call, 200.0);
        assert_eq!(f.client_cost.cpu_us_per_call, 10_000.0);
        assert_eq!(f.client_cost.cpu_cores_busy, 0.2);
    }

    #[test]
    fn an_empty_window_has_zeros_not_infinities() {
        let f = Figures::of(&WorkerStats::default(), &Edges::default());
        assert_eq!(f.throughput_per_s, 0.0);
        assert_eq!(f.client_cost.cpu_us_per_call, 0.0);
        assert_eq!(f.bytes_sent_per_call, 0.0);
    }
}
