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
    /// Calls are sent on a schedule, whether or not earlier calls returned.
    Open(OpenLoop),
}

impl Load {
    pub fn connections(&self) -> u32 {
        match self {
            Load::Closed(c) => c.connections,
            Load::Open(o) => o.connections,
        }
    }

    /// The load's level as the tables show it: callers for a closed loop,
    /// the target rate (calls/s) for an open one.
    pub fn level(&self) -> u32 {
        match self {
            Load::Closed(c) => c.workers,
            Load::Open(o) => o.schedule.peak_rate().round() as u32,
        }
    }

    /// A short description for tables.
    pub fn describe(&self) -> String {
        match self {
            Load::Closed(c) if c.outstanding > 1 => {
                format!(
                    "closed loop, {:?} shape, async style ({} in flight per worker)",
                    c.shape, c.outstanding
                )
            }
            Load::Closed(c) => format!("closed loop, {:?} shape", c.shape),
            Load::Open(o) => format!("open loop, {}", o.schedule.describe()),
        }
    }
}

/// Open loop: calls are due at times set by the schedule, and each call's
/// latency is measured from when it was *due*, not from when it was sent
/// (wrk2's correction for coordinated omission). A stalled server therefore
/// shows as latency, not as fewer requests.
///
/// `max_in_flight` senders share `connections` connections; when all are
/// busy, due calls wait and their waiting counts (the send lag).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenLoop {
    pub schedule: Schedule,
    pub connections: u32,
    pub max_in_flight: u32,
    /// Length of the measurement window.
    pub seconds: f64,
}

/// When calls are due.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "arrival", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Schedule {
    /// Evenly spaced calls at `rate` per second.
    Constant { rate: f64 },
    /// A Poisson process of `rate` calls per second (exponential gaps).
    Poisson { rate: f64 },
    /// Constant rates held for given durations, one after the other; the
    /// last rate holds until the window ends.
    Steps { steps: Vec<Step> },
    /// A rate changing linearly from `from` to `to` over the window.
    Ramp { from: f64, to: f64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub rate: f64,
    pub seconds: f64,
}

impl Schedule {
    /// The rate due `t` seconds into the window (`window` long).
    pub fn rate_at(&self, t: f64, window: f64) -> f64 {
        match self {
            Schedule::Constant { rate } | Schedule::Poisson { rate } => *rate,
            Schedule::Steps { steps } => {
                let mut start = 0.0;
                for step in steps {
                    if t < start + step.seconds {
                        return step.rate;
                    }
                    start += step.seconds;
                }
                steps.last().map_or(0.0, |s| s.rate)
            }
            Schedule::Ramp { from, to } => {
                let f = if window > 0.0 {
                    (t / window).clamp(0.0, 1.0)
                } else {
                    1.0
                };
                from + (to - from) * f
            }
        }
    }

    pub fn peak_rate(&self) -> f64 {
        match self {
            Schedule::Constant { rate } | Schedule::Poisson { rate } => *rate,
            Schedule::Steps { steps } => steps.iter().map(|s| s.rate).fold(0.0, f64::max),
            Schedule::Ramp { from, to } => from.max(*to),
        }
    }

    pub fn is_poisson(&self) -> bool {
        matches!(self, Schedule::Poisson { .. })
    }

    pub fn describe(&self) -> String {
        match self {
            Schedule::Constant { rate } => format!("constant {rate}/s"),
            Schedule::Poisson { rate } => format!("Poisson {rate}/s"),
            Schedule::Steps { steps } => {
                let parts: Vec<String> = steps
                    .iter()
                    .map(|s| format!("{}/s for {} s", s.rate, s.seconds))
                    .collect();
                format!("steps {}", parts.join(", "))
            }
            Schedule::Ramp { from, to } => format!("ramp {from}/s to {to}/s"),
        }
    }
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
    /// Calls each worker keeps in flight. 1 is the synchronous style (a
    /// thread blocked on its call); more is the asynchronous, callback style
    /// of seed 003, where a worker fires calls without waiting for replies.
    #[serde(default = "one_outstanding")]
    pub outstanding: u32,
}

fn one_outstanding() -> u32 {
    1
}

impl ClosedLoop {
    /// The asynchronous style: each worker keeps `outstanding` calls in flight.
    pub fn with_outstanding(mut self, outstanding: u32) -> ClosedLoop {
        self.outstanding = outstanding.max(1);
        self
    }

    /// Concurrent callers in all: workers times calls in flight per worker.
    pub fn callers(&self) -> u32 {
        self.workers * self.outstanding.max(1)
    }
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
            outstanding: 1,
        }
    }
}

impl CellSpec {
    /// Checks what serde cannot: positive counts and durations.
    pub fn validate(&self) -> Result<(), String> {
        let c = match &self.load {
            Load::Closed(c) => c,
            Load::Open(o) => {
                if o.connections == 0 || o.max_in_flight == 0 {
                    return Err("connections and max_in_flight must be at least 1".into());
                }
                if !(o.seconds > 0.0 && o.seconds.is_finite()) {
                    return Err("the open-loop window needs a positive duration".into());
                }
                let rates_ok = match &o.schedule {
                    Schedule::Constant { rate } | Schedule::Poisson { rate } => *rate > 0.0,
                    Schedule::Steps { steps } => {
                        !steps.is_empty() && steps.iter().all(|s| s.rate > 0.0 && s.seconds > 0.0)
                    }
                    Schedule::Ramp { from, to } => *from > 0.0 && *to > 0.0,
                };
                if !rates_ok {
                    return Err(
                        "every rate (and step duration) of the schedule must be positive".into(),
                    );
                }
                return self.validate_common();
            }
        };
        if c.workers == 0 || c.connections == 0 || c.outstanding == 0 {
            return Err("workers, connections and outstanding calls must be at least 1".into());
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
        self.validate_common()
    }

    fn validate_common(&self) -> Result<(), String> {
        if !(self.warmup_s >= 0.0 && self.cooldown_s >= 0.0) {
            return Err("warm-up and cool-down must be zero or positive seconds".into());
        }
        if self.timeout_ms == 0 {
            return Err("timeout_ms must be positive".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_hold_each_rate_for_its_duration_then_the_last() {
        let s = Schedule::Steps {
            steps: vec![
                Step {
                    rate: 100.0,
                    seconds: 1.0,
                },
                Step {
                    rate: 200.0,
                    seconds: 2.0,
                },
            ],
        };
        assert_eq!(s.rate_at(0.5, 10.0), 100.0);
        assert_eq!(s.rate_at(1.5, 10.0), 200.0);
        assert_eq!(s.rate_at(9.0, 10.0), 200.0);
        assert_eq!(s.peak_rate(), 200.0);
    }

    #[test]
    fn ramp_interpolates_over_the_window() {
        let s = Schedule::Ramp {
            from: 100.0,
            to: 300.0,
        };
        assert_eq!(s.rate_at(0.0, 10.0), 100.0);
        assert_eq!(s.rate_at(5.0, 10.0), 200.0);
        assert_eq!(s.rate_at(20.0, 10.0), 300.0);
    }

    #[test]
    fn load_specs_round_trip_through_json() {
        let load = Load::Open(OpenLoop {
            schedule: Schedule::Poisson { rate: 1000.0 },
            connections: 2,
            max_in_flight: 64,
            seconds: 5.0,
        });
        let json = serde_json::to_string(&load).unwrap();
        assert!(
            json.contains("\"model\":\"open\"") && json.contains("\"arrival\":\"poisson\""),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Load>(&json).unwrap(), load);
    }
}
