//! What a cell costs the server and the client: CPU time and peak memory of
//! their containers over the measurement window.
//!
//! The counters come from the engine's stats API (the container's cgroup
//! CPU accounting, in nanoseconds), read when the client announces the start
//! and the end of its measurement window on its log. Reading them through
//! the API rather than `/sys/fs/cgroup` works with cgroup v1 and v2, either
//! cgroup driver, and a remote engine alike.

use crate::docker::Engine;
use anyhow::{Context, Result};
use bollard::query_parameters::StatsOptionsBuilder;
use futures_util::StreamExt;
use rpclab_model::result::Cost;
use std::time::Instant;

/// A reading of one container's counters.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub cpu_ns: u64,
    pub memory_peak: u64,
    pub at: Instant,
}

/// Reads the container's CPU time and peak memory now.
pub async fn sample(engine: &Engine, id: &str) -> Result<Sample> {
    let opts = StatsOptionsBuilder::default()
        .stream(false)
        .one_shot(true)
        .build();
    let mut stream = engine.api().stats(id, Some(opts));
    let stats = stream
        .next()
        .await
        .context("the engine returned no stats")?
        .with_context(|| format!("cannot read the stats of container {id}"))?;
    let at = Instant::now();
    let cpu_ns = stats
        .cpu_stats
        .and_then(|c| c.cpu_usage)
        .and_then(|u| u.total_usage)
        .unwrap_or(0);
    let memory = stats.memory_stats.unwrap_or_default();
    let memory_peak = memory.max_usage.or(memory.usage).unwrap_or(0);
    Ok(Sample {
        cpu_ns,
        memory_peak,
        at,
    })
}

/// The cost between two samples, `calls` calls having been made.
pub fn between(start: &Sample, end: &Sample, calls: u64) -> Cost {
    let cpu_ns = end.cpu_ns.saturating_sub(start.cpu_ns) as f64;
    let wall_ns = end.at.duration_since(start.at).as_nanos().max(1) as f64;
    Cost {
        cpu_ms: cpu_ns / 1e6,
        cpu_us_per_call: if calls == 0 {
            0.0
        } else {
            cpu_ns / 1e3 / calls as f64
        },
        cpu_cores_busy: cpu_ns / wall_ns,
        memory_peak_mib: end.memory_peak.max(start.memory_peak) as f64 / (1024.0 * 1024.0),
    }
}

/// Number of CPUs in a cpuset list such as `0`, `2-3` or `0,4-5`.
pub fn cpuset_len(cpuset: &str) -> usize {
    cpuset
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|part| match part.trim().split_once('-') {
            Some((a, b)) => match (a.parse::<usize>(), b.parse::<usize>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 1,
            },
            None => 1,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn cost_per_call_and_busy_cores() {
        let t0 = Instant::now();
        let a = Sample {
            cpu_ns: 1_000_000_000,
            memory_peak: 100 << 20,
            at: t0,
        };
        let b = Sample {
            cpu_ns: 1_500_000_000,
            memory_peak: 120 << 20,
            at: t0 + Duration::from_secs(1),
        };
        let c = between(&a, &b, 10_000);
        assert!((c.cpu_us_per_call - 50.0).abs() < 1e-9);
        assert!((c.cpu_cores_busy - 0.5).abs() < 1e-9);
        assert!((c.memory_peak_mib - 120.0).abs() < 1e-9);
    }

    #[test]
    fn cpuset_sizes() {
        assert_eq!(cpuset_len("0"), 1);
        assert_eq!(cpuset_len("2-3"), 2);
        assert_eq!(cpuset_len("0,4-7"), 5);
    }
}
