//! Lab definitions: `compose/lab.toml` and the scenarios it names.
//!
//! A lab definition says which servers and scenarios to run, under which
//! profile, and how to split the host's CPUs between server and client. A
//! scenario is a workload: an operation of the contract, a load shape, its
//! concurrency levels and the seed's call counts. A profile scales every
//! scenario (smoke, standard, seed) so that one definition serves a
//! one-minute check and a full reproduction alike.

use crate::definitions::manifest::parse_toml;
use anyhow::{bail, Context, Result};
use rpclab_model::contract::Operation;
use rpclab_model::spec::{ClosedLoop, Load, OpenLoop, Pool, Schedule, Shape, Step, Stop};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LabDef {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Server folder names or frameworks; empty means every server.
    #[serde(default)]
    pub servers: Vec<String>,
    /// Server folders from outside the repository's `servers/`, relative
    /// to this file: each a server folder or a folder of them, read as
    /// the lab's own (`lab run --servers-dir` adds more).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers_dirs: Vec<PathBuf>,
    /// Names of scenarios from the scenario files.
    pub scenarios: Vec<String>,
    /// Scenario files, relative to this file.
    #[serde(default = "default_scenario_files")]
    pub scenario_files: Vec<PathBuf>,
    #[serde(default = "default_profile")]
    pub profile: String,
    #[serde(default)]
    pub cpus: Cpus,
    #[serde(default)]
    pub build: Build,
    /// Which Docker engine runs each role (docs/multi-host.md); absent:
    /// every role on the environment's engine, over 127.0.0.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<crate::definitions::hosts::Hosts>,
    pub profiles: BTreeMap<String, Profile>,
}

fn default_scenario_files() -> Vec<PathBuf> {
    vec![PathBuf::from("scenarios.toml")]
}

fn default_profile() -> String {
    "standard".into()
}

/// CPU sets (`cpuset` syntax, e.g. `0` or `2-3`) or `auto` (see
/// [`crate::basics::cpus::auto_split`]: the client gets at least as many cores as
/// the server, the registry a core of its own where one is left).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Cpus {
    #[serde(default = "auto")]
    pub server: String,
    /// The registry's (ZooKeeper's) set; `auto` with an explicit server set
    /// shares the server's.
    #[serde(default = "auto")]
    pub registry: String,
    #[serde(default = "auto")]
    pub client: String,
}

fn auto() -> String {
    "auto".into()
}

impl Default for Cpus {
    fn default() -> Self {
        Cpus {
            server: auto(),
            registry: auto(),
            client: auto(),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Build {
    /// Folder of extra CA certificates (`*.crt`) added to every image, for
    /// hosts behind a TLS-inspecting proxy. Missing or empty: none added.
    #[serde(default = "default_ca_dir")]
    pub ca_certificates: PathBuf,
    /// Image tried first as the Debian base; when it cannot be pulled the
    /// base is made with debootstrap from `debian_mirror`.
    #[serde(default = "default_base_image")]
    pub base_image: String,
    #[serde(default = "default_mirror")]
    pub debian_mirror: String,
}

fn default_ca_dir() -> PathBuf {
    PathBuf::from("/usr/local/share/ca-certificates")
}
fn default_base_image() -> String {
    "debian:bookworm-slim".into()
}
fn default_mirror() -> String {
    "http://deb.debian.org/debian".into()
}

impl Default for Build {
    fn default() -> Self {
        Build {
            ca_certificates: default_ca_dir(),
            base_image: default_base_image(),
            debian_mirror: default_mirror(),
        }
    }
}

/// How every scenario is scaled.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Minimum warm-up before each window; the window also waits until
    /// every connection has completed a verified call.
    #[serde(default)]
    pub warmup_s: f64,
    /// Longest warm-up: the window opens then, and the cell is flagged
    /// not-steady if the rule was not met. Absent: `warmup_s` + 60 s.
    #[serde(default)]
    pub warmup_max_s: Option<f64>,
    /// Longest warm-up of the first cell after the server (re)started, when
    /// it should be longer than `warmup_max_s`. A cold JVM compiles its
    /// whole call path under that first cell's load (a Hessian servlet at
    /// one client climbed from 1,900 to 25,600 calls/s over 10 s, and
    /// grpc-java from 400 to 8,900), while later cells only compile what is
    /// new to them. Absent: `warmup_max_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_warmup_max_s: Option<f64>,
    /// Prime a server before its first cell after each (re)start: at least
    /// this many seconds of its first scenario's highest level, then on
    /// until the warm-up rule is met (at most the cold limit,
    /// `cold_warmup_max_s`). Nothing of it is measured; its warm-up is kept
    /// with the next cell (`primed`). A JVM compiles a method after enough
    /// calls, and the highest level makes them fastest: CXF at one client
    /// still climbed 7,500 → 8,500 → 11,700 calls/s over a standard run's
    /// three repetitions. Absent: no priming, and the first cell is the
    /// cold one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prime_s: Option<f64>,
    /// Prime on until the server's JIT compiler threads are quiet: while
    /// they used more than this many cores over a priming pass's window,
    /// another pass follows (its own warm-up of `warmup_s` by the warm-up
    /// rule, then the window), up to `prime_max_s` in all. A steady
    /// throughput does not say that a JVM has finished compiling: with 12 s
    /// of priming, dubbo-3.3 at one client still climbed 2,793 → 8,484 →
    /// 9,211 calls/s over three repetitions. Where the server's threads are
    /// not visible (another machine's engine) the rule cannot be judged and
    /// priming is one pass. Absent: one pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prime_jit_quiet_cores: Option<f64>,
    /// The most seconds of priming passes (warm-ups and windows) the JIT
    /// rule may add up to; a server still compiling then is primed
    /// `jit_quiet = false`. Absent: the cold warm-up limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prime_max_s: Option<f64>,
    /// Steady-state warm-up: go on in intervals of `steady_interval_s`
    /// until the mean of the last this-many intervals agrees within
    /// `steady_tolerance` with the mean of as many before them. Absent: a
    /// fixed warm-up.
    #[serde(default)]
    pub steady_intervals: Option<u32>,
    /// The steady rule's interval. Shorter intervals let a primed server's
    /// cell open its window sooner (the rule needs twice `steady_intervals`
    /// of them); each must still hold enough calls for its band
    /// (±1/√calls).
    #[serde(default = "default_steady_interval_s")]
    pub steady_interval_s: f64,
    /// Judge steadiness on every cell; `false`: only on a cell whose
    /// server did not just serve the same load (the first repetition of
    /// a level, or the first cell after a start). A repetition that follows
    /// another of its level in blocks finds the server in the state that
    /// one measured, so it warms up for `warmup_s` and until every
    /// connection has answered. Interleaved rounds and a capacity search
    /// judge every cell.
    #[serde(default = "default_true")]
    pub steady_every_repetition: bool,
    /// Relative half-width of the steady band (0.03: ±3 % of the mean).
    #[serde(default = "default_steady_tolerance")]
    pub steady_tolerance: f64,
    /// Fewer calls than this in a window flag the cell too-few-calls.
    #[serde(default = "default_min_calls")]
    pub min_calls: u64,
    #[serde(default)]
    pub cooldown_s: f64,
    /// Measure each cell for this long...
    #[serde(default)]
    pub measure_s: Option<f64>,
    /// ...or use the scenario's published call counts.
    #[serde(default)]
    pub seed_counts: bool,
    #[serde(default = "one")]
    pub repetitions: u32,
    /// Run only the first N concurrency levels of each scenario.
    #[serde(default)]
    pub max_levels: Option<usize>,
    /// Run these concurrency levels in every closed-loop scenario instead
    /// of its own `concurrency` (`lab run --levels 1,8,32`); open-loop
    /// scenarios keep their rates. Absent: each scenario's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<u32>,
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Run only the first runnable variant of each server (a quick check).
    #[serde(default)]
    pub first_variant_only: bool,
    /// Restart the server container before every repetition after the
    /// first, so each repetition starts from a cold JVM.
    #[serde(default)]
    pub restart_between_repetitions: bool,
    /// Throughput CV over repetitions above which a cell is flagged noisy.
    #[serde(default = "default_cv_threshold")]
    pub cv_threshold: f64,
    /// How the load client is compiled: `release` (the default), or
    /// `quick` for checks whose numbers are not read.
    #[serde(default)]
    pub client_build: rpclab_model::manifest::ClientBuild,
    /// A check whose snapshots are not meant to be committed: without
    /// `--results-dir` they go to [`SCRATCH_RESULTS_DIR`], not `results/`.
    #[serde(default)]
    pub scratch: bool,
    /// JVM flags added after every Java server's own (`jvm_flags` of its
    /// server.toml) in this profile, recorded with them in the manifest. A
    /// check whose numbers are not read may start its servers on C1 alone
    /// (`-XX:TieredStopAtLevel=1`), which compiles less of a cold JVM's
    /// start and first calls (short-lived JVMs of a Maven build: 18 CPU-s
    /// with C2, 11 without), paid 41 times by a check of every variant.
    /// Never in a profile whose numbers are read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_jvm_flags: Vec<String>,
    /// Measure in interleaved rounds instead of blocks of repetitions
    /// (`lab reproduce`'s profiles): every server variant of the run is
    /// started and primed, `starts` times over; within each start every
    /// round measures every variant once at a scenario's level, in a fresh
    /// seeded random order, so that a pair's ratio can be taken within a
    /// round, from the same minutes of the host. `repetitions` is then
    /// unused. A seed's plan sets it for its plan's profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<RoundsPolicy>,
}

/// The fixed design of an interleaved run: JVM starts × rounds per level
/// within each start. Nothing in the data changes it (no round is added
/// while a claim is undecided: that would inflate the false verdicts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RoundsPolicy {
    /// Independent starts of every variant: a fresh container, primed.
    #[serde(default = "one")]
    pub starts: u32,
    /// Rounds of every level within each start.
    pub per_start: u32,
}

impl RoundsPolicy {
    /// Rounds of a level over all starts.
    pub fn total(&self) -> u32 {
        self.starts.max(1) * self.per_start.max(1)
    }

    /// The start a run-wide round number (1-based) belongs to.
    pub fn start_of(&self, round: u32) -> u32 {
        (round.max(1) - 1) / self.per_start.max(1) + 1
    }
}

impl Profile {
    /// Cells each variant runs per scenario level: the rounds over all
    /// starts, or the repetitions.
    pub fn repetitions_per_level(&self) -> u32 {
        self.rounds.map_or(self.repetitions, |r| r.total())
    }

    /// Times each variant is started: its JVM starts in rounds, else once.
    pub fn starts(&self) -> u32 {
        self.rounds.map_or(1, |r| r.starts.max(1))
    }

    /// The JVM flags a server starts with in this profile: its own, then
    /// the profile's [`Profile::server_jvm_flags`] (a later flag wins).
    pub fn jvm_flags_of(&self, server_flags: &[String]) -> Vec<String> {
        server_flags
            .iter()
            .chain(&self.server_jvm_flags)
            .cloned()
            .collect()
    }
}

/// Where snapshots go without `--results-dir`: the committed folder.
pub const RESULTS_DIR: &str = "results";
/// ...or, for a `scratch` profile (`smoke`), a folder under the build
/// output that git ignores, so a check never edits the committed index.
pub const SCRATCH_RESULTS_DIR: &str = "target/rpclab-results";

impl Profile {
    /// Where this profile's snapshots go unless `--results-dir` says
    /// otherwise (relative to the repository root).
    pub fn default_results_dir(&self) -> &'static str {
        if self.scratch {
            SCRATCH_RESULTS_DIR
        } else {
            RESULTS_DIR
        }
    }
}

fn default_steady_tolerance() -> f64 {
    0.03
}

fn default_steady_interval_s() -> f64 {
    1.0
}

fn default_true() -> bool {
    true
}

fn default_min_calls() -> u64 {
    rpclab_model::spec::DEFAULT_MIN_CALLS
}

impl Profile {
    /// The longest warm-up of a cell, the first after a server (re)start
    /// being `cold` (see [`Profile::cold_warmup_max_s`]).
    pub fn warmup_limit_s(&self, cold: bool) -> f64 {
        let warm = rpclab_model::spec::warmup_limit_s(self.warmup_s, self.warmup_max_s);
        match self.cold_warmup_max_s {
            Some(c) if cold => c.max(warm),
            _ => warm,
        }
    }

    /// Whether servers are primed before their first cell (`prime_s`).
    pub fn primes(&self) -> bool {
        self.prime_s.is_some_and(|s| s > 0.0)
    }

    /// The longest a priming run lasts: the cold warm-up limit and its 1 s
    /// window ([`PRIME_WINDOW_S`]); 0 without priming.
    pub fn priming_limit_s(&self) -> f64 {
        match self.prime_s {
            Some(s) if s > 0.0 => {
                let first = s.max(self.warmup_limit_s(true)) + PRIME_WINDOW_S;
                match self.prime_jit_quiet_cores {
                    Some(_) => first.max(self.prime_passes_limit_s()),
                    None => first,
                }
            }
            _ => 0.0,
        }
    }

    /// The most seconds the JIT rule's passes may add up to, the first
    /// pass included (`prime_max_s`, or the cold warm-up limit and its
    /// window).
    pub fn prime_passes_limit_s(&self) -> f64 {
        self.prime_max_s
            .unwrap_or(self.warmup_limit_s(true) + PRIME_WINDOW_S)
    }

    /// The spec of a priming pass after the first, while the JIT rule
    /// finds the compiler threads busy: the first pass's spec with a fixed
    /// warm-up of `warmup_s` (the server already carries the load; the pass
    /// gives its compiler time, and its window tells whether it is done).
    pub fn priming_pass_spec(
        &self,
        first: &rpclab_model::spec::CellSpec,
    ) -> rpclab_model::spec::CellSpec {
        rpclab_model::spec::CellSpec {
            warmup_s: self.warmup_s,
            warmup_max_s: None,
            steady: None,
            ..first.clone()
        }
    }

    /// How long a pass after the first lasts at the least: its warm-up and
    /// window.
    pub fn priming_pass_s(&self) -> f64 {
        self.warmup_s + PRIME_WINDOW_S
    }

    /// The spec of a priming run of `load` (a cell's load at the level
    /// chosen for priming): warm-up from `prime_s` up to the cold limit,
    /// then a window of [`PRIME_WINDOW_S`] that is not kept.
    pub fn priming_spec(
        &self,
        protocol: &str,
        target: String,
        operation: Operation,
        load: Load,
        options: BTreeMap<String, String>,
    ) -> rpclab_model::spec::CellSpec {
        let load = match load {
            Load::Closed(c) => Load::Closed(ClosedLoop {
                stop: Stop::Seconds(PRIME_WINDOW_S),
                ..c
            }),
            Load::Open(o) => Load::Open(OpenLoop {
                seconds: PRIME_WINDOW_S,
                ..o
            }),
        };
        let mut spec = self.cell_spec(protocol, target, operation, load, false, options);
        let least = self.prime_s.unwrap_or(0.0);
        spec.warmup_s = least;
        spec.warmup_max_s = Some(least.max(self.warmup_limit_s(true)));
        spec.cooldown_s = 0.0;
        spec
    }

    /// A cell spec of this profile's timing (warm-up rule, cool-down,
    /// timeout, minimum calls) around the given workload.
    pub fn cell_spec(
        &self,
        protocol: &str,
        target: String,
        operation: Operation,
        load: Load,
        include_connect: bool,
        options: BTreeMap<String, String>,
    ) -> rpclab_model::spec::CellSpec {
        rpclab_model::spec::CellSpec {
            protocol: protocol.to_owned(),
            target,
            operation,
            load,
            warmup_s: self.warmup_s,
            warmup_calls: 0,
            warmup_max_s: self.warmup_max_s,
            steady: self
                .steady_intervals
                .map(|intervals| rpclab_model::spec::Steady {
                    intervals,
                    tolerance: self.steady_tolerance,
                    interval_s: self.steady_interval_s,
                }),
            min_calls: self.min_calls,
            percentiles: Vec::new(),
            cooldown_s: self.cooldown_s,
            timeout_ms: self.timeout_ms,
            include_connect,
            options,
            engine: Default::default(),
        }
    }
}

/// The window closing a priming run: short, since it is not kept, but
/// long enough to see the rate the warm-up ended at.
pub const PRIME_WINDOW_S: f64 = 1.0;

fn default_cv_threshold() -> f64 {
    rpclab_model::aggregate::DEFAULT_CV_THRESHOLD
}

fn one() -> u32 {
    1
}
fn default_timeout_ms() -> u64 {
    5_000
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    #[serde(rename = "scenario")]
    pub scenarios: Vec<Scenario>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub operation: Operation,
    /// Closed loop: how callers are arranged, and how many.
    #[serde(default)]
    pub shape: Option<Shape>,
    #[serde(default)]
    pub concurrency: Vec<u32>,
    /// Open loop: arrivals and senders; its levels are `rates` (calls/s).
    #[serde(default)]
    pub open: Option<OpenSettings>,
    #[serde(default)]
    pub rates: Vec<u32>,
    /// Seed call count per caller (profile `seed`).
    #[serde(default)]
    pub calls_per_client: Option<u64>,
    /// Seed call count shared by all callers (thread-pool shape).
    #[serde(default)]
    pub total_calls: Option<u64>,
    /// The connection pool the `users` shape shares: `{ min, max }`
    /// connections (absent: one per user).
    #[serde(default)]
    pub pool: Option<Pool>,
    /// Calls each worker keeps in flight (closed loop): 1, the default, is
    /// the synchronous style; more is the asynchronous callback style.
    #[serde(default)]
    pub outstanding: Option<u32>,
    /// Seed window by time, for seeds that ran for a duration (seed 004).
    #[serde(default)]
    pub seed_seconds: Option<f64>,
    #[serde(default)]
    pub include_connect: bool,
    /// The method of the user's own service this scenario's load calls,
    /// for the servers of a generic protocol: a copy of a lab scenario
    /// made for them ([`Scenario::calling`]), never read from a file.
    #[serde(skip)]
    pub call: Option<String>,
}

impl Scenario {
    /// This scenario's load calling `method` of a server's own service
    /// instead of the contract's operation, named `<scenario>:<method>`,
    /// so that its cells are neither mixed with the contract's in a
    /// table, a comparison or an export, nor with another method's.
    pub fn calling(&self, method: &str) -> Scenario {
        Scenario {
            name: format!("{}:{method}", self.name),
            call: Some(method.to_owned()),
            ..self.clone()
        }
    }

    /// A scenario of `operation` with no name and no load set yet: the
    /// base of one built in code (a capacity search's steps and hint).
    pub fn bare(operation: Operation) -> Scenario {
        Scenario {
            name: String::new(),
            description: String::new(),
            operation,
            shape: None,
            concurrency: Vec::new(),
            open: None,
            rates: Vec::new(),
            calls_per_client: None,
            total_calls: None,
            pool: None,
            outstanding: None,
            seed_seconds: None,
            include_connect: false,
            call: None,
        }
    }
}

/// A closed loop of client programs at `concurrency`: the engine's
/// planning tests vary only its name, operation and levels, and one copy
/// keeps their scenarios alike.
#[cfg(test)]
pub fn client_programs_for_tests(
    name: &str,
    operation: Operation,
    concurrency: &[u32],
) -> Scenario {
    Scenario {
        name: name.into(),
        shape: Some(Shape::ClientPrograms),
        concurrency: concurrency.to_vec(),
        ..Scenario::bare(operation)
    }
}

/// The open-loop settings of a scenario.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OpenSettings {
    /// `constant` or `poisson` (one cell per rate of `rates`), `steps` or
    /// `ramp` (one cell following the schedule over the window).
    pub arrival: String,
    pub connections: u32,
    pub max_in_flight: u32,
    /// For `steps`: rates held for given durations, in order.
    #[serde(default)]
    pub steps: Vec<Step>,
    /// For `ramp`: the rate at the window's start and at its end.
    #[serde(default)]
    pub ramp: Option<[f64; 2]>,
}

impl OpenSettings {
    /// The schedule of a time-varying scenario (steps or ramp), if it is one.
    fn varying(&self) -> Option<Schedule> {
        match self.arrival.as_str() {
            "steps" => Some(Schedule::Steps {
                steps: self.steps.clone(),
            }),
            "ramp" => self.ramp.map(|[from, to]| Schedule::Ramp { from, to }),
            _ => None,
        }
    }
}

impl Scenario {
    /// Checks that the scenario is either a closed loop (shape and
    /// concurrency) or an open one (open and rates), not both or neither.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if let Some(p) = self.pool {
            p.validate()?;
        }
        match (&self.shape, &self.open) {
            (Some(_), None) if !self.concurrency.is_empty() && !self.concurrency.contains(&0) && self.rates.is_empty() => Ok(()),
            (None, Some(o)) if self.concurrency.is_empty() => match o.arrival.as_str() {
                "constant" | "poisson" if !self.rates.is_empty() && !self.rates.contains(&0) => Ok(()),
                "constant" | "poisson" => Err("an open loop with constant or poisson arrivals needs `rates` of at least 1".into()),
                "steps" if !o.steps.is_empty() && o.steps.iter().all(|s| s.rate > 0.0 && s.seconds > 0.0) => Ok(()),
                "steps" => Err("`steps` arrivals need `steps = [{ rate = R, seconds = S }, ...]` with positive values".into()),
                "ramp" if o.ramp.is_some_and(|[a, b]| a > 0.0 && b > 0.0) => Ok(()),
                "ramp" => Err("`ramp` arrivals need `ramp = [from, to]` with positive rates".into()),
                other => Err(format!("arrival `{other}` is not constant, poisson, steps or ramp")),
            },
            _ => Err("give either `shape` and `concurrency` (closed loop) or `open` and `rates` (open loop), with levels of at least 1".into()),
        }
    }

    /// The load of one level (a concurrency or a rate) under `profile`.
    pub fn load(&self, level: u32, profile: &Profile) -> Result<Load> {
        if let Some(o) = &self.open {
            let rate = level as f64;
            let schedule = match o.varying() {
                Some(varying) => varying,
                None if o.arrival == "poisson" => Schedule::Poisson { rate },
                None => Schedule::Constant { rate },
            };
            return Ok(Load::Open(OpenLoop {
                schedule,
                connections: o.connections,
                max_in_flight: o.max_in_flight,
                seconds: profile.measure_s.unwrap_or(10.0),
            }));
        }
        let shape = self.shape.context("a closed-loop scenario needs a shape")?;
        let closed = shape.closed(level, self.pool, self.stop(profile)?);
        Ok(Load::Closed(
            closed.with_outstanding(self.outstanding.unwrap_or(1)),
        ))
    }

    /// The measurement window under `profile`.
    pub fn stop(&self, profile: &Profile) -> Result<Stop> {
        if profile.seed_counts {
            return match (self.calls_per_client, self.total_calls, self.seed_seconds) {
                (Some(n), _, _) => Ok(Stop::CallsPerWorker(n)),
                (None, Some(n), _) => Ok(Stop::TotalCalls(n)),
                (None, None, Some(s)) => Ok(Stop::Seconds(s)),
                (None, None, None) => bail!(
                    "scenario `{}` has no seed call count for a seed-count profile",
                    self.name
                ),
            };
        }
        match profile.measure_s {
            Some(s) => Ok(Stop::Seconds(s)),
            None => bail!("the profile needs `measure_s` or `seed_counts = true`"),
        }
    }

    /// Concurrency levels (closed loop) or rates (open loop) to run.
    pub fn levels(&self, profile: &Profile) -> Vec<u32> {
        let n = profile.max_levels.unwrap_or(usize::MAX);
        match &self.open {
            // A time-varying schedule is one cell, labelled by its peak rate.
            Some(o) => match o.varying() {
                Some(schedule) => vec![schedule.peak_rate().round() as u32],
                None => self.rates.iter().copied().take(n).collect(),
            },
            None if !profile.levels.is_empty() => profile.levels.iter().copied().take(n).collect(),
            None => self.concurrency.iter().copied().take(n).collect(),
        }
    }
}

/// A lab definition with its scenarios resolved.
#[derive(Clone, Debug)]
pub struct Lab {
    pub path: PathBuf,
    pub def: LabDef,
    pub scenarios: Vec<Scenario>,
}

impl Lab {
    pub fn load(path: &Path) -> Result<Lab> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the lab definition {}", path.display()))?;
        let def: LabDef = parse_toml(path, &text)?;
        Lab::from_def(path, def)
    }

    /// Resolves the scenarios of a definition read from (or modelled on)
    /// `path`; scenario files are relative to `path`'s folder. `lab
    /// reproduce` builds a seed's definition this way from its base lab.
    pub fn from_def(path: &Path, def: LabDef) -> Result<Lab> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut library: Vec<Scenario> = Vec::new();
        for file in &def.scenario_files {
            let p = dir.join(file);
            let text = std::fs::read_to_string(&p)
                .with_context(|| format!("cannot read scenarios {}", p.display()))?;
            let parsed: ScenarioFile = parse_toml(&p, &text)?;
            for s in &parsed.scenarios {
                if let Err(why) = s.validate() {
                    bail!("{}: scenario `{}`: {why}", p.display(), s.name);
                }
            }
            library.extend(parsed.scenarios);
        }
        let mut scenarios = Vec::new();
        for name in &def.scenarios {
            match library.iter().find(|s| &s.name == name) {
                Some(s) => scenarios.push(s.clone()),
                None => bail!(
                    "{}: scenario `{name}` is not defined; known: {}",
                    path.display(),
                    library
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
        if !def.profiles.contains_key(&def.profile) {
            bail!(
                "{}: profile `{}` is not defined under [profiles]",
                path.display(),
                def.profile
            );
        }
        Ok(Lab {
            path: path.to_owned(),
            def,
            scenarios,
        })
    }

    /// The definition's `servers_dirs`, relative to its file's folder.
    pub fn servers_dirs(&self) -> Vec<PathBuf> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        self.def.servers_dirs.iter().map(|d| dir.join(d)).collect()
    }

    pub fn profile(&self, name: &str) -> Result<&Profile> {
        self.def.profiles.get(name).with_context(|| {
            format!(
                "no profile `{name}` in {}; defined: {}",
                self.path.display(),
                self.def
                    .profiles
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn the_default_lab_loads_and_every_library_scenario_builds_a_valid_load_in_every_profile() {
        for file in ["compose/lab.toml", "compose/full.toml"] {
            every_scenario_builds_in_every_profile_of(&repo().join(file));
        }
    }

    #[test]
    fn smoke_checks_go_to_the_scratch_folder_and_real_runs_to_results() {
        for file in ["compose/lab.toml", "compose/full.toml"] {
            let lab = Lab::load(&repo().join(file)).unwrap();
            let dir = |p: &str| lab.profile(p).unwrap().default_results_dir();
            assert_eq!(dir("smoke"), SCRATCH_RESULTS_DIR, "{file}");
            assert_eq!(dir("standard"), RESULTS_DIR, "{file}");
            assert_eq!(dir("seed"), RESULTS_DIR, "{file}");
        }
    }

    fn every_scenario_builds_in_every_profile_of(path: &Path) {
        let lab = Lab::load(path).unwrap();
        let text = std::fs::read_to_string(repo().join("compose/scenarios.toml")).unwrap();
        let library: ScenarioFile = parse_toml(Path::new("scenarios.toml"), &text).unwrap();
        for (name, profile) in &lab.def.profiles {
            for s in &library.scenarios {
                s.validate().unwrap_or_else(|e| panic!("{}: {e}", s.name));
                for level in s.levels(profile) {
                    let load = match s.load(level, profile) {
                        Ok(load) => load,
                        Err(e) => panic!("{} under {name}: {e}", s.name),
                    };
                    let spec = profile.cell_spec(
                        "grpc",
                        "127.0.0.1:1".into(),
                        s.operation,
                        load,
                        s.include_connect,
                        BTreeMap::new(),
                    );
                    spec.validate()
                        .unwrap_or_else(|e| panic!("{} under {name}: {e}", s.name));
                    if profile.primes() {
                        let load = s.load(level, profile).unwrap();
                        let priming = profile.priming_spec(
                            "grpc",
                            "127.0.0.1:1".into(),
                            s.operation,
                            load,
                            BTreeMap::new(),
                        );
                        priming.validate().unwrap_or_else(|e| {
                            panic!("priming with {} under {name}: {e}", s.name)
                        });
                    }
                }
            }
        }
    }

    #[test]
    fn only_a_servers_first_cell_gets_the_cold_warm_up_limit() {
        let profile = |extra: &str| -> Profile {
            toml::from_str(&format!("warmup_s = 3.0\nwarmup_max_s = 10.0\n{extra}")).unwrap()
        };
        let plain = profile("");
        assert_eq!(
            (plain.warmup_limit_s(true), plain.warmup_limit_s(false)),
            (10.0, 10.0)
        );
        let cold = profile("cold_warmup_max_s = 30.0");
        assert_eq!(
            (cold.warmup_limit_s(true), cold.warmup_limit_s(false)),
            (30.0, 10.0)
        );
        // A cold limit below the warm one never shortens the first cell.
        let short = profile("cold_warmup_max_s = 5.0");
        assert_eq!(short.warmup_limit_s(true), 10.0);
        // Without warmup_max_s the warm limit is warmup_s + 60 s.
        let open: Profile = toml::from_str("warmup_s = 5.0").unwrap();
        assert_eq!(open.warmup_limit_s(false), 65.0);
    }

    #[test]
    fn a_priming_run_warms_up_from_prime_s_to_the_cold_limit_and_keeps_one_second() {
        let profile: Profile = toml::from_str(
            "warmup_s = 5.0\nwarmup_max_s = 30.0\ncold_warmup_max_s = 50.0\n\
             prime_s = 20.0\nsteady_intervals = 3\ncooldown_s = 1.0\nmeasure_s = 5.0",
        )
        .unwrap();
        assert!(profile.primes());
        let closed = ClosedLoop {
            shape: Shape::ClientPrograms,
            workers: 5,
            connections: 5,
            stop: Stop::Seconds(5.0),
            outstanding: 1,
        };
        let spec = profile.priming_spec(
            "thrift",
            "127.0.0.1:1".into(),
            Operation::OrderEcho,
            Load::Closed(closed.clone()),
            BTreeMap::new(),
        );
        assert_eq!((spec.warmup_s, spec.warmup_max_s), (20.0, Some(50.0)));
        assert_eq!(spec.cooldown_s, 0.0);
        assert!(spec.steady.is_some());
        spec.validate().unwrap();
        match spec.load {
            Load::Closed(c) => assert_eq!(
                c,
                ClosedLoop {
                    stop: Stop::Seconds(PRIME_WINDOW_S),
                    ..closed
                }
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(profile.priming_limit_s(), 50.0 + PRIME_WINDOW_S);
        // A minimum above the limit wins; no prime_s, no priming.
        let long: Profile =
            toml::from_str("warmup_s = 5.0\nwarmup_max_s = 10.0\nprime_s = 40.0").unwrap();
        assert_eq!(long.priming_limit_s(), 40.0 + PRIME_WINDOW_S);
        let none: Profile = toml::from_str("warmup_s = 5.0").unwrap();
        assert!(!none.primes());
        assert_eq!(none.priming_limit_s(), 0.0);
    }

    #[test]
    fn a_step_schedule_is_one_cell_at_its_peak_rate() {
        let text = std::fs::read_to_string(repo().join("compose/scenarios.toml")).unwrap();
        let library: ScenarioFile = parse_toml(Path::new("scenarios.toml"), &text).unwrap();
        let steps = library
            .scenarios
            .iter()
            .find(|s| s.name == "order-echo-steps")
            .unwrap();
        let profile = Profile {
            warmup_s: 0.0,
            warmup_max_s: None,
            cold_warmup_max_s: None,
            prime_s: None,
            prime_jit_quiet_cores: None,
            prime_max_s: None,
            server_jvm_flags: Vec::new(),
            steady_intervals: None,
            steady_tolerance: 0.03,
            steady_interval_s: 1.0,
            steady_every_repetition: true,
            min_calls: 20,
            cooldown_s: 0.0,
            measure_s: Some(10.0),
            seed_counts: false,
            repetitions: 1,
            max_levels: None,
            levels: Vec::new(),
            timeout_ms: 1000,
            restart_between_repetitions: false,
            first_variant_only: false,
            cv_threshold: 0.1,
            client_build: Default::default(),
            scratch: false,
            rounds: None,
        };
        assert_eq!(steps.levels(&profile), vec![4000]);
        match steps.load(4000, &profile).unwrap() {
            Load::Open(o) => {
                assert!(matches!(o.schedule, Schedule::Steps { ref steps } if steps.len() == 3))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_scenario_that_is_neither_closed_nor_open_is_rejected() {
        let text = "[[scenario]]\nname = \"x\"\ndescription = \"\"\noperation = \"hello\"\n";
        let file: ScenarioFile = parse_toml(Path::new("s.toml"), text).unwrap();
        assert!(file.scenarios[0].validate().is_err());
    }

    /// The fields a `deny_unknown_fields` struct accepts, read from serde's
    /// error for an unknown one ("expected one of `a`, `b`, ...").
    fn accepted_keys<T: serde::de::DeserializeOwned + std::fmt::Debug>() -> Vec<String> {
        let e = toml::from_str::<T>("no_such_key = 1")
            .unwrap_err()
            .to_string();
        let list = e
            .split("expected one of")
            .nth(1)
            .unwrap_or_else(|| panic!("{e}"));
        list.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn every_profile_and_cpus_key_is_documented_where_the_lab_definitions_say() {
        // compose/lab.toml: "Every profile key is documented in
        // docs/methodology.md ("Profiles"), the [cpus] keys under "Isolation"."
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let doc = std::fs::read_to_string(root.join("docs/methodology.md")).unwrap();
        let section = |title: &str| -> String {
            let start = doc
                .find(&format!("\n## {title}\n"))
                .unwrap_or_else(|| panic!("docs/methodology.md has no section {title}"));
            let rest = &doc[start + 1..];
            let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
            rest[..end].to_owned()
        };
        let profiles = section("Profiles");
        let keys = accepted_keys::<Profile>();
        assert!(keys.len() > 10, "{keys:?}");
        for key in keys {
            assert!(
                profiles.contains(&format!("| `{key}` |")),
                "profile key `{key}` has no row in docs/methodology.md, Profiles"
            );
        }
        let isolation = section("Isolation");
        for key in accepted_keys::<Cpus>() {
            assert!(
                isolation.contains(&format!("`{key}`")),
                "[cpus] key `{key}` is not named in docs/methodology.md, Isolation"
            );
        }
    }
}
