//! Where a run's wall time went, phase by phase ([`Phases`]): the
//! manifest's `[phases]`, written when a run closes, and the summary's
//! "Where the time went".
//!
//! A default run on a small host takes far longer than its measurement
//! windows; these figures say which part of the rest (building, starting
//! JVMs, priming them, warming up, the client's container around each cell)
//! costs what, so that a shorter run can be made where the time is.
//!
//! Data and arithmetic only: the orchestrator times its own awaits and
//! adds them here ([`Phases::add`], [`Phases::add_cell`]), closes the
//! figures with the run's wall time ([`Phases::closed`]), and the report
//! renders them ([`Phases::rows`], [`Phases::share`]).

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One phase of a run, as time is added to [`Phases`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Build,
    Calibration,
    Start,
    Readiness,
    Priming,
    Warmup,
    Windows,
    Cooldown,
    ClientOverhead,
    Teardown,
    Other,
}

impl Phase {
    /// Every phase, in the order of a run (`Other` last).
    pub const ALL: [Phase; 11] = [
        Phase::Build,
        Phase::Calibration,
        Phase::Start,
        Phase::Readiness,
        Phase::Priming,
        Phase::Warmup,
        Phase::Windows,
        Phase::Cooldown,
        Phase::ClientOverhead,
        Phase::Teardown,
        Phase::Other,
    ];

    /// Its key in `[phases]` (`client_overhead`).
    pub fn key(self) -> &'static str {
        match self {
            Phase::Build => "build",
            Phase::Calibration => "calibration",
            Phase::Start => "start",
            Phase::Readiness => "readiness",
            Phase::Priming => "priming",
            Phase::Warmup => "warmup",
            Phase::Windows => "windows",
            Phase::Cooldown => "cooldown",
            Phase::ClientOverhead => "client_overhead",
            Phase::Teardown => "teardown",
            Phase::Other => "other",
        }
    }
}

/// Seconds of a run's wall time spent in each phase. Every field is read
/// with a default (0), so that a table written by an older or newer rpclab
/// reads; a manifest without `[phases]` has none ([`crate::manifest`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Phases {
    /// Building the images on every engine, the load client's static
    /// binary included (it compiles while the images build): what a cold
    /// cache costs and a warm one should not.
    pub build: f64,
    /// The host calibration (CPU and loopback on each role's CPU set) and
    /// the description of each engine's machine (its clock offset among
    /// them).
    pub calibration: f64,
    /// Creating and starting containers until they run: each server (a
    /// restart between repetitions too), each registry, the network's
    /// holder. Not the JVM's start-up, which is `readiness`.
    pub start: f64,
    /// From a started server to its first verified call (the readiness
    /// probe), after a restart too: mostly the JVM's and the framework's
    /// start-up; and from a started registry to its first answer.
    pub readiness: f64,
    /// Priming each freshly (re)started server, its client container
    /// included: time spent on calls that are never measured.
    pub priming: f64,
    /// The cells' warm-ups, as each client reported them
    /// (`report.warmup.seconds`).
    pub warmup: f64,
    /// The cells' measurement windows, as each client reported them
    /// (`duration_s`): the only time whose calls are the results.
    pub windows: f64,
    /// The cells' cool-downs (`cooldown_s` of each cell's spec, which the
    /// client sleeps after its window with the load kept on).
    pub cooldown: f64,
    /// What each cell cost beyond its warm-up, window and cool-down: the
    /// client container's create, start, connections, exit, report and
    /// removal, and the orchestrator's sampling around it.
    pub client_overhead: f64,
    /// Stopping and removing servers and registries, and the run's last
    /// clean-up of every container it left.
    pub teardown: f64,
    /// The rest of the wall time: planning, connecting to the engines,
    /// waiting for ports, writing the snapshot, failed cells, an engine's
    /// outage.
    pub other: f64,
    /// The run's wall time; a resumed run's is the sum of its invocations'.
    pub wall: f64,
}

/// What a cell's client says it spent, beside the cell's wall time
/// ([`Phases::add_cell`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClientTimes {
    pub warmup_s: f64,
    pub window_s: f64,
    pub cooldown_s: f64,
}

impl Phases {
    /// The seconds of `phase`.
    pub fn get(&self, phase: Phase) -> f64 {
        *self.clone().slot(phase)
    }

    /// Adds `took` to `phase`.
    pub fn add(&mut self, phase: Phase, took: Duration) {
        *self.slot(phase) += took.as_secs_f64();
    }

    /// Adds a cell whose client ran for `wall` (its container's start to
    /// its removal) and said it spent `client`: the warm-up, the window and
    /// the cool-down as the client reported them, each at most what is
    /// left of the wall, and the rest as `client_overhead`, so that the
    /// four add up to the cell's wall exactly. A figure that is negative or
    /// not a number counts as 0.
    pub fn add_cell(&mut self, wall: Duration, client: ClientTimes) {
        let mut left = wall.as_secs_f64();
        for (phase, s) in [
            (Phase::Warmup, client.warmup_s),
            (Phase::Windows, client.window_s),
            (Phase::Cooldown, client.cooldown_s),
        ] {
            let s = if s.is_nan() { 0.0 } else { s.clamp(0.0, left) };
            *self.slot(phase) += s;
            left -= s;
        }
        self.client_overhead += left;
    }

    /// The seconds of every phase measured, `other` and `wall` left out.
    pub fn measured(&self) -> f64 {
        (Phase::ALL.iter())
            .filter(|p| **p != Phase::Other)
            .map(|p| self.get(*p))
            .sum()
    }

    /// These phases closed by the run's `wall` time: `other` is what the
    /// phases measured leave of it. The wall is never less than the phases
    /// (the spans are timed one after the other within it, so only a
    /// rounding could make it so).
    pub fn closed(mut self, wall: Duration) -> Phases {
        let measured = self.measured();
        self.wall = wall.as_secs_f64().max(measured);
        self.other = self.wall - measured;
        self
    }

    /// Two runs' phases added up, field by field (a resumed run: those
    /// already recorded and this invocation's).
    pub fn plus(&self, more: &Phases) -> Phases {
        let mut sum = self.clone();
        for phase in Phase::ALL {
            *sum.slot(phase) += more.get(phase);
        }
        sum.wall += more.wall;
        sum
    }

    /// Every phase with its seconds, in the order of a run.
    pub fn rows(&self) -> Vec<(Phase, f64)> {
        Phase::ALL.iter().map(|p| (*p, self.get(*p))).collect()
    }

    /// `seconds` as a share of the wall time (0 to 1); 0 when the wall is.
    pub fn share(&self, seconds: f64) -> f64 {
        if self.wall > 0.0 {
            seconds / self.wall
        } else {
            0.0
        }
    }

    fn slot(&mut self, phase: Phase) -> &mut f64 {
        match phase {
            Phase::Build => &mut self.build,
            Phase::Calibration => &mut self.calibration,
            Phase::Start => &mut self.start,
            Phase::Readiness => &mut self.readiness,
            Phase::Priming => &mut self.priming,
            Phase::Warmup => &mut self.warmup,
            Phase::Windows => &mut self.windows,
            Phase::Cooldown => &mut self.cooldown,
            Phase::ClientOverhead => &mut self.client_overhead,
            Phase::Teardown => &mut self.teardown,
            Phase::Other => &mut self.other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(seconds: f64) -> Duration {
        Duration::from_secs_f64(seconds)
    }

    /// A run: built, calibrated, one server started, ready, primed, two
    /// cells, removed.
    fn run() -> Phases {
        let mut p = Phases::default();
        p.add(Phase::Build, s(60.0));
        p.add(Phase::Calibration, s(10.0));
        p.add(Phase::Start, s(1.0));
        p.add(Phase::Readiness, s(4.0));
        p.add(Phase::Priming, s(20.0));
        let client = ClientTimes {
            warmup_s: 5.0,
            window_s: 10.0,
            cooldown_s: 1.0,
        };
        p.add_cell(s(18.0), client);
        p.add_cell(s(17.0), client);
        p.add(Phase::Teardown, s(2.0));
        p
    }

    #[test]
    fn time_adds_up_by_phase() {
        let p = run();
        assert_eq!(p.build, 60.0);
        assert_eq!((p.warmup, p.windows, p.cooldown), (10.0, 20.0, 2.0));
        assert!((p.client_overhead - 3.0).abs() < 1e-9);
        assert!((p.measured() - 132.0).abs() < 1e-9);
        assert_eq!(p.get(Phase::Priming), 20.0);
    }

    #[test]
    fn a_cell_is_split_into_its_four_parts_and_never_more_than_its_wall() {
        let mut p = Phases::default();
        // The client says more than the cell lasted: capped, in order.
        p.add_cell(
            s(12.0),
            ClientTimes {
                warmup_s: 5.0,
                window_s: 10.0,
                cooldown_s: 1.0,
            },
        );
        assert_eq!((p.warmup, p.windows, p.cooldown), (5.0, 7.0, 0.0));
        assert_eq!(p.client_overhead, 0.0);
        let mut q = Phases::default();
        q.add_cell(
            s(3.0),
            ClientTimes {
                warmup_s: f64::NAN,
                window_s: -1.0,
                cooldown_s: 0.5,
            },
        );
        assert_eq!((q.warmup, q.windows, q.cooldown), (0.0, 0.0, 0.5));
        assert_eq!(q.client_overhead, 2.5);
    }

    #[test]
    fn closing_puts_the_rest_of_the_wall_in_other() {
        let p = run().closed(s(150.0));
        assert_eq!(p.wall, 150.0);
        assert!((p.other - 18.0).abs() < 1e-9);
        let sum: f64 = p.rows().iter().map(|(_, s)| s).sum();
        assert!((sum - p.wall).abs() < 1e-9);
        assert!(p.rows().iter().all(|(_, s)| *s >= 0.0));
        // A wall shorter than the phases (a rounding) is raised to them.
        let q = run().closed(s(100.0));
        assert_eq!((q.wall, q.other), (q.measured(), 0.0));
    }

    #[test]
    fn a_resumed_run_adds_its_invocations() {
        let first = run().closed(s(150.0));
        let second = run().closed(s(140.0));
        let both = first.plus(&second);
        assert_eq!(both.wall, 290.0);
        assert_eq!(both.build, 120.0);
        assert!((both.other - (first.other + second.other)).abs() < 1e-9);
        assert_eq!(Phases::default().plus(&first), first);
    }

    #[test]
    fn shares_are_of_the_wall() {
        let p = run().closed(s(150.0));
        assert!((p.share(p.build) - 0.4).abs() < 1e-9);
        let shares: f64 = p.rows().iter().map(|(_, s)| p.share(*s)).sum();
        assert!((shares - 1.0).abs() < 1e-9);
        assert_eq!(Phases::default().share(5.0), 0.0);
    }

    #[test]
    fn every_phase_has_its_key_in_order() {
        let keys: Vec<&str> = Phase::ALL.iter().map(|p| p.key()).collect();
        assert_eq!(
            keys,
            [
                "build",
                "calibration",
                "start",
                "readiness",
                "priming",
                "warmup",
                "windows",
                "cooldown",
                "client_overhead",
                "teardown",
                "other"
            ]
        );
        // The keys are the table's.
        let text = toml::to_string(&run().closed(s(150.0))).unwrap();
        for key in keys {
            assert!(text.contains(&format!("{key} = ")), "{key}: {text}");
        }
        assert!(text.contains("wall = "));
        let read: Phases = toml::from_str("build = 3.0\n").unwrap();
        assert_eq!((read.build, read.wall), (3.0, 0.0));
    }
}
