//! Which side of a cell was the limit: the server's cores, the client's, or
//! neither; the one rule, with its thresholds.
//!
//! The orchestrator judges every cell with [`judge`] as it measures it, and
//! stores the facts ([`Limit`]: the side, both busy shares, the threshold);
//! `bench client` prints its own limit column from the same thresholds
//! ([`full`], [`sends_late`]); the report reads a stored cell's threshold,
//! or [`BUSY_THRESHOLD`] for a cell that records none. One module, so that
//! the three cannot drift apart.

use crate::result::{CellFlag, ClientReport, Cost, Limit, LimitSide};
use crate::spec::Load;

/// Share of a CPU set's cores at or above which that side is the limit.
pub const BUSY_THRESHOLD: f64 = 0.9;

/// Send lag p99 (µs) above which an open loop's calls went out late: the
/// client could not keep the schedule, so it was the limit.
pub const LATE_SEND_US: f64 = 1_000.0;

/// Whether a side that kept `share` of its CPU set busy (0..1) was the
/// limit.
pub fn full(share: f64) -> bool {
    share >= BUSY_THRESHOLD
}

/// Whether an open loop whose send lag p99 was `lag_p99_us` sent late.
pub fn sends_late(lag_p99_us: f64) -> bool {
    lag_p99_us > LATE_SEND_US
}

/// What a cell is judged from besides the client's report: the other
/// containers' cost, the CPU sets and what the host did beside the lab.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sides {
    /// The server's cost over the window.
    pub server_cost: Option<Cost>,
    /// The registry's cost, when it ran on the server's CPU set (it then
    /// counts towards that set's limit, not the server's share).
    pub registry_on_server_cpus: Option<Cost>,
    /// Cores of the server's CPU set.
    pub server_cores: usize,
    /// Cores of the client's CPU set.
    pub client_cores: usize,
    /// Server and client shared CPUs.
    pub shared_cpus: bool,
    /// Something beside the lab used the CPU sets over the window (the
    /// orchestrator's host-load rule).
    pub host_busy: bool,
}

/// What the lab concludes about a cell from its figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    pub limit: Limit,
    pub flags: Vec<CellFlag>,
}

/// Which side's cores were the limit, and every flag of the cell.
///
/// A closed loop is client-bound when the client kept nearly all its cores
/// busy: then the figure is a lower bound of what the server can do. It is
/// server-bound when the server's CPU set (with the registry, when it shares
/// that set) was nearly all busy. An open loop spends idle time waiting for
/// due times, so there the client's sign is that calls went out late.
pub fn judge(report: &ClientReport, sides: &Sides) -> Judged {
    let server_cores = sides.server_cores.max(1) as f64;
    let client_cores = sides.client_cores.max(1) as f64;
    let server_busy = sides.server_cost.map(|c| c.cpu_cores_busy / server_cores);
    let server_set_busy = sides.server_cost.map(|c| {
        (c.cpu_cores_busy
            + sides
                .registry_on_server_cpus
                .map_or(0.0, |r| r.cpu_cores_busy))
            / server_cores
    });
    let client_busy = report.client_cost.map(|c| c.cpu_cores_busy / client_cores);
    let client_limited = match report.load {
        Load::Open(_) => report.send_lag_us.is_some_and(|lag| sends_late(lag.p99)),
        Load::Closed(_) => client_busy.is_some_and(full),
    };
    let server_limited = server_set_busy.is_some_and(full);
    // A server set that was nearly all busy is the server's capacity on
    // those cores, whatever the client's share: seed 001's client-bound
    // cells had their servers 91-98 % busy, and counting them as lower
    // bounds threw away the figure the post was about. The cell keeps the
    // facts (side, both shares, threshold); the report words them.
    let side = if server_limited {
        LimitSide::Server
    } else if client_limited {
        LimitSide::Client
    } else {
        LimitSide::Neither
    };
    let mut flags = Vec::new();
    if report.warmup.as_ref().is_some_and(|w| !w.steady) {
        flags.push(CellFlag::NotSteady);
    }
    if report.calls_ok + report.calls_failed < report.min_calls {
        flags.push(CellFlag::TooFewCalls);
    }
    match side {
        LimitSide::Client => flags.push(CellFlag::ClientBound),
        LimitSide::Server => flags.push(CellFlag::ServerBound),
        LimitSide::Neither => {}
    }
    if sides.shared_cpus {
        flags.push(CellFlag::SharedCpus);
    }
    if sides.host_busy {
        flags.push(CellFlag::HostBusy);
    }
    Judged {
        limit: Limit {
            side,
            server_busy,
            client_busy,
            threshold: BUSY_THRESHOLD,
        },
        flags,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Latency, Warmup};
    use crate::spec::{OpenLoop, Schedule, Shape, Stop};

    fn report(client_busy: f64, calls: u64, steady: bool) -> ClientReport {
        ClientReport {
            protocol: "thrift".into(),
            connection_model: "one call in flight".into(),
            engine: None,
            operation: crate::contract::Operation::OrderEcho,
            load: Load::Closed(Shape::ClientPrograms.closed(5, None, Stop::Seconds(5.0))),
            calls_ok: calls,
            calls_failed: 0,
            failures: Default::default(),
            duration_s: 5.0,
            throughput_per_s: calls as f64 / 5.0,
            latency_us: Latency::default(),
            percentiles_us: Default::default(),
            service_time_us: None,
            send_lag_us: None,
            connect_ms: None,
            bytes_sent_per_call: 0.0,
            bytes_received_per_call: 0.0,
            window_unix_s: None,
            client_cost: Some(Cost {
                cpu_cores_busy: client_busy,
                ..Cost::default()
            }),
            verified: true,
            hlog: None,
            warmup: Some(Warmup {
                steady,
                every_connection_answered: true,
                ..Warmup::default()
            }),
            min_calls: 20,
            tls: None,
            call: None,
            messages: None,
        }
    }

    fn busy(cores: f64) -> Option<Cost> {
        Some(Cost {
            cpu_cores_busy: cores,
            ..Cost::default()
        })
    }

    /// One core each, apart, the host quiet.
    fn sides(server: Option<Cost>) -> Sides {
        Sides {
            server_cost: server,
            server_cores: 1,
            client_cores: 1,
            ..Sides::default()
        }
    }

    /// The judgement of a steady cell of 1000 calls on sets of their own,
    /// with these client and server busy shares.
    fn judge_busy(client: f64, server: f64) -> Judged {
        judge(&report(client, 1000, true), &sides(busy(server)))
    }

    #[test]
    fn a_full_server_set_is_the_limit_whatever_the_client_else_a_full_client() {
        let j = judge_busy(0.95, 0.5);
        assert_eq!(j.limit.side, LimitSide::Client);
        assert_eq!(j.flags, vec![CellFlag::ClientBound]);
        assert_eq!(j.limit.server_busy, Some(0.5));
        assert_eq!(j.limit.client_busy, Some(0.95));
        assert_eq!(j.limit.threshold, BUSY_THRESHOLD);

        let j = judge_busy(0.5, 0.97);
        assert_eq!(j.limit.side, LimitSide::Server);
        assert_eq!(j.flags, vec![CellFlag::ServerBound]);

        // Both saturated: the server's set was full, so the figure is its
        // capacity on those cores, and both shares are kept.
        let j = judge_busy(0.99, 0.95);
        assert_eq!(j.limit.side, LimitSide::Server);
        assert_eq!(j.flags, vec![CellFlag::ServerBound]);
        assert_eq!(j.limit.client_busy, Some(0.99));
        assert_eq!(j.limit.server_busy, Some(0.95));
    }

    #[test]
    fn an_open_loops_client_is_the_limit_when_it_sends_late_not_when_busy() {
        let open = |lag_p99: f64| ClientReport {
            load: Load::Open(OpenLoop {
                schedule: Schedule::Poisson { rate: 1000.0 },
                connections: 1,
                max_in_flight: 100,
                seconds: 5.0,
            }),
            send_lag_us: Some(Latency {
                p99: lag_p99,
                ..Latency::default()
            }),
            ..report(0.99, 1000, true)
        };
        let j = judge(&open(1_500.0), &sides(busy(0.5)));
        assert_eq!(j.limit.side, LimitSide::Client);
        let j = judge(&open(LATE_SEND_US), &sides(busy(0.5)));
        assert_eq!(j.limit.side, LimitSide::Neither);
    }

    #[test]
    fn a_window_another_process_shared_is_flagged_host_busy() {
        let flags = |host_busy: bool| {
            let sides = Sides {
                host_busy,
                ..sides(busy(0.95))
            };
            judge(&report(0.3, 1000, true), &sides).flags
        };
        assert_eq!(flags(true), vec![CellFlag::ServerBound, CellFlag::HostBusy]);
        assert_eq!(flags(false), vec![CellFlag::ServerBound]);
    }

    #[test]
    fn a_registry_on_the_servers_cpus_counts_towards_its_limit_but_not_its_share() {
        let with_registry = Sides {
            registry_on_server_cpus: busy(0.35),
            ..sides(busy(0.6))
        };
        let j = judge(&report(0.3, 1000, true), &with_registry);
        assert_eq!(j.limit.side, LimitSide::Server);
        assert_eq!(j.limit.server_busy, Some(0.6));
        let j = judge_busy(0.3, 0.6);
        assert_eq!(j.limit.side, LimitSide::Neither);
        assert!(j.flags.is_empty());
    }

    #[test]
    fn unsteady_short_and_shared_cells_are_flagged() {
        let shared = Sides {
            shared_cpus: true,
            ..sides(None)
        };
        let j = judge(&report(0.3, 10, false), &shared);
        assert_eq!(
            j.flags,
            vec![
                CellFlag::NotSteady,
                CellFlag::TooFewCalls,
                CellFlag::SharedCpus
            ]
        );
        assert_eq!(j.limit.server_busy, None);
    }
}
