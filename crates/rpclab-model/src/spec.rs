//! What one measurement cell asks of the load client.
//!
//! A [`CellSpec`] is written by the orchestrator as JSON into the client
//! container's work directory (or built from command-line flags when the
//! client is used on its own, like `ghz` or `wrk`). It makes the experiment
//! explicit: which load model, how many workers and connections, when the
//! measurement window starts and ends. Nothing about a cell is implicit.

use crate::contract::Operation;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One cell: one protocol endpoint, one operation, one load.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellSpec {
    /// Protocol module of the client, e.g. `grpc` or `thrift`.
    pub protocol: String,
    /// `host:port` of the server. The lab only ever uses loopback.
    pub target: String,
    pub operation: Operation,
    pub load: Load,
    /// Seconds of load before the measurement window (JIT warm-up); calls
    /// made then are not counted.
    #[serde(default)]
    pub warmup_s: f64,
    /// Seconds of load after the measurement window, so that the last
    /// measured calls do not see the load drop as other workers finish.
    /// With a call-count stop, workers that reach their count keep calling,
    /// unrecorded, until every worker has reached it and this has elapsed.
    #[serde(default)]
    pub cooldown_s: f64,
    /// Per-call timeout; a call slower than this is a failed call (timeout).
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// When true, connection set-up happens inside the measurement window and
    /// its time is part of the reported elapsed time (seed 000's second
    /// table); warm-up is then skipped. Otherwise connections are opened
    /// before warm-up.
    #[serde(default)]
    pub include_connect: bool,
    /// Protocol-specific knobs (e.g. Thrift's transport), passed through
    /// verbatim to the protocol module, which rejects unknown keys.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
}

fn default_timeout_ms() -> u64 {
    5_000
}

/// The load model of a cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Load {
    /// Each worker sends its next call when the previous one has returned.
    Closed(ClosedLoop),
}

/// Closed loop: `workers` concurrent callers over `connections` connections
/// (worker `i` uses connection `i % connections`).
///
/// The seeds' shapes are all instances of this (see [`Shape`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosedLoop {
    pub shape: Shape,
    pub workers: u32,
    pub connections: u32,
    pub stop: Stop,
}

/// When the measurement window of a closed loop ends.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Stop {
    /// Every worker makes this many calls (seed 001: 300000 per client).
    CallsPerWorker(u64),
    /// The workers drain a shared queue of this many calls (seed 003).
    TotalCalls(u64),
    /// The window lasts this long.
    Seconds(f64),
}

/// How the seeds arranged their concurrent callers. Each maps to a number of
/// workers and connections; the name is kept in results so a reader knows
/// which shape produced a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// N threads sharing one client and its connection (seeds 000, 002).
    SharedClient,
    /// N independent client programs, each with its own connection (seed 001).
    ClientPrograms,
    /// N pool workers draining queued calls over one shared proxy (seed 003).
    ThreadPool,
    /// N users over a pool of connections (seed 004).
    Users,
}

impl Shape {
    /// Workers and connections for `concurrency` callers. `pool` is the
    /// connection pool size of the `users` shape.
    pub fn closed(self, concurrency: u32, pool: Option<u32>, stop: Stop) -> ClosedLoop {
        let connections = match self {
            Shape::SharedClient | Shape::ThreadPool => 1,
            Shape::ClientPrograms => concurrency,
            Shape::Users => pool.unwrap_or(concurrency).min(concurrency).max(1),
        };
        ClosedLoop {
            shape: self,
            workers: concurrency.max(1),
            connections: connections.max(1),
            stop,
        }
    }
}

impl CellSpec {
    /// Checks what serde cannot: positive counts and durations.
    pub fn validate(&self) -> Result<(), String> {
        let Load::Closed(c) = &self.load;
        if c.workers == 0 || c.connections == 0 {
            return Err("workers and connections must be at least 1".into());
        }
        match c.stop {
            Stop::CallsPerWorker(0) | Stop::TotalCalls(0) => {
                return Err("the measurement window needs at least one call".into())
            }
            Stop::Seconds(s) if s <= 0.0 || !s.is_finite() => {
                return Err("the measurement window needs a positive duration".into())
            }
            _ => {}
        }
        if !(self.warmup_s >= 0.0 && self.cooldown_s >= 0.0) {
            return Err("warm-up and cool-down must be zero or positive seconds".into());
        }
        if self.timeout_ms == 0 {
            return Err("timeout_ms must be positive".into());
        }
        Ok(())
    }
}
