//! Deciding a reproduction's claims, once, as data: every claim's
//! [`ClaimVerdict`] and every published figure's measured [`Twin`], from a
//! snapshot's cells and aggregates.
//!
//! `lab reproduce` stores the outcome in `results.json`; `lab report` fills
//! it in for older snapshots (and recomputes it with `--redecide`); every
//! rendering prints what is stored, so two renderings of one snapshot
//! cannot disagree.
//!
//! Every verdict is decided under the reproduction's analysis plan
//! ([`rpclab_model::plan::Plan`], rule [`rpclab_model::plan::RULE`]): a
//! fixed design of JVM starts × rounds, fixed before the run. A pair's
//! ratio is taken **within rounds** (both systems' cells with the same
//! `repetition` were measured within the same minutes, so a drift of the
//! host lands on both), summarised per JVM start, and its interval is
//! Student's t over the start means ([`crate::across_starts`]), at the
//! claim's share of α (Bonferroni over its pairs), so that the claim's
//! pairs hold together at the plan's coverage. Rounds where either cell is
//! `host-busy` or failed are left out. A pair measured in a single start
//! (every run made before plans) has no interval and is not decided. The
//! decision bands are in [`band`], [`equivalence_band`] and [`magnitude`];
//! the bases in [`basis_of`]; the throughput-against-CPU lens in [`pair`].

use crate::format::fmt_value;
use rpclab_model::aggregate::median;
use rpclab_model::result::{
    Aggregate, Cell, CellFlag, ClaimCheck, LimitSide, Measure, PublishedCell, Reproduction,
    Results, SeedSystem,
};
use rpclab_model::spec::Load;
use rpclab_model::verdict::{Basis, ClaimVerdict, Direction, Magnitude, PairVerdict, Spread, Twin};

/// Relative differences below this are never told apart by `lab compare`
/// (verdicts take their floor from their plan).
pub const NOISE_FLOOR: f64 = 0.05;

/// How many standard deviations (as CV) a difference must exceed (used by
/// `lab compare`; the verdicts go by intervals instead).
pub const NOISE_SIGMAS: f64 = 2.0;

/// Why a level has no measurement though its scenario ran.
pub const NOT_THIS_LEVEL: &str = "not run under this snapshot's profile";

/// The magnitude band of snapshots decided before plans (a published ratio
/// inside the measured interval widened by 25 %), kept to describe them.
pub const MAGNITUDE_TOLERANCE: f64 = 0.25;

/// The equivalence band of snapshots decided before plans (±10 %).
pub const EQUIVALENCE_TOLERANCE: f64 = 0.10;

/// The rules a verdict is decided by: its plan's α and bands.
#[derive(Clone, Debug, PartialEq)]
pub struct Rules {
    pub alpha: f64,
    pub noise_floor: f64,
    pub magnitude_tolerance: f64,
    pub equivalence_tolerance: f64,
    /// How verdicts name the plan (`<seed>@<hash>`), when there is one.
    pub plan: Option<String>,
}

impl Rules {
    /// A plan's rules, its verdicts named `label`.
    pub fn of(plan: &rpclab_model::plan::Plan, label: Option<String>) -> Rules {
        Rules {
            alpha: plan.alpha,
            noise_floor: plan.noise_floor,
            magnitude_tolerance: plan.magnitude_tolerance,
            equivalence_tolerance: plan.equivalence_tolerance,
            plan: label,
        }
    }

    /// The rules of a reproduction: its recorded plan's, or, for a run
    /// made before plans that stores no verdicts, α = 0.05 and the bands
    /// it was made with, naming no plan.
    pub fn of_reproduction(r: &Reproduction) -> Rules {
        match &r.plan {
            Some(p) => Rules::of(&p.plan, Some(p.label(&r.seed))),
            None => Rules {
                alpha: 0.05,
                noise_floor: NOISE_FLOOR,
                magnitude_tolerance: MAGNITUDE_TOLERANCE,
                equivalence_tolerance: EQUIVALENCE_TOLERANCE,
                plan: None,
            },
        }
    }
}

/// A measured value derived from an aggregate, in the published unit.
pub fn derive(a: &Aggregate, measure: Measure, total_calls: Option<u64>) -> Option<f64> {
    let tput = a.throughput_median;
    let ms = |us: f64| us / 1000.0;
    let samples = (a.calls_ok + a.calls_failed) as f64;
    Some(match measure {
        Measure::Throughput => tput,
        Measure::TotalSeconds => total_calls? as f64 / positive(tput)?,
        Measure::TotalMs => total_calls? as f64 / positive(tput)? * 1000.0,
        Measure::MsPerCall => 1000.0 / positive(tput)?,
        Measure::LatencyMeanMs => ms(a.latency_us.mean),
        Measure::LatencyMinMs => ms(a.latency_us.min),
        Measure::LatencyMaxMs => ms(a.latency_us.max),
        Measure::LatencyP50Ms => ms(a.latency_us.p50),
        Measure::LatencyP90Ms => ms(a.latency_us.p90),
        Measure::LatencyP95Ms => ms(a.latency_us.p95),
        Measure::LatencyP99Ms => ms(a.latency_us.p99),
        Measure::Samples => samples,
        Measure::Failed => a.calls_failed as f64,
        Measure::ErrorPercent => {
            if samples == 0.0 {
                return None;
            }
            a.calls_failed as f64 * 100.0 / samples
        }
        Measure::ReceivedKbPerS => a.bytes_received_per_call * tput / 1024.0,
        Measure::SentKbPerS => a.bytes_sent_per_call * tput / 1024.0,
    })
}

fn positive(x: f64) -> Option<f64> {
    (x > 0.0).then_some(x)
}

/// Measures computed from the throughput alone, so that the median
/// throughput's interval carries over to them.
pub fn throughput_based(m: Measure) -> bool {
    matches!(
        m,
        Measure::Throughput
            | Measure::TotalSeconds
            | Measure::TotalMs
            | Measure::MsPerCall
            | Measure::ReceivedKbPerS
            | Measure::SentKbPerS
    )
}

/// The interval of a derived value, from the confidence interval of the
/// median throughput, and that interval's confidence. None with one
/// repetition (no spread) and for measures not derived from the throughput
/// (the aggregate keeps one median per latency percentile, no interval).
pub fn derive_interval(
    a: &Aggregate,
    measure: Measure,
    total_calls: Option<u64>,
) -> Option<(f64, f64, f64)> {
    if !throughput_based(measure) {
        return None;
    }
    let ci = a.throughput_ci?;
    let at = |t: f64| {
        let mut x = a.clone();
        x.throughput_median = t;
        derive(&x, measure, total_calls)
    };
    let (lo, hi) = (at(ci.low)?, at(ci.high)?);
    Some((lo.min(hi), lo.max(hi), ci.confidence))
}

/// The unit of a derived value, for the claims' text.
pub fn unit(measure: Measure) -> &'static str {
    match measure {
        Measure::Throughput => "calls/s",
        Measure::TotalSeconds => "s",
        Measure::TotalMs
        | Measure::MsPerCall
        | Measure::LatencyMeanMs
        | Measure::LatencyMinMs
        | Measure::LatencyMaxMs
        | Measure::LatencyP50Ms
        | Measure::LatencyP90Ms
        | Measure::LatencyP95Ms
        | Measure::LatencyP99Ms => "ms",
        Measure::Samples | Measure::Failed => "calls",
        Measure::ErrorPercent => "%",
        Measure::ReceivedKbPerS | Measure::SentKbPerS => "KiB/s",
    }
}

/// `x` over `y` as a speed ratio (above 1: `x` is better) and its interval
/// from both values' intervals (the extreme corners), when either has one.
pub fn corner_ratio(
    (x, xi): (f64, Option<(f64, f64)>),
    (y, yi): (f64, Option<(f64, f64)>),
    higher_is_better: bool,
) -> (f64, Option<(f64, f64)>) {
    let r = |a: f64, b: f64| if higher_is_better { a / b } else { b / a };
    let ratio = r(x, y);
    if xi.is_none() && yi.is_none() {
        return (ratio, None);
    }
    let (xl, xh) = xi.unwrap_or((x, x));
    let (yl, yh) = yi.unwrap_or((y, y));
    let corners = [r(xl, yl), r(xl, yh), r(xh, yl), r(xh, yh)];
    let lo = corners.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = corners.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (ratio, Some((lo, hi)))
}

/// A published ratio P against the measured interval, with the band
/// [P / (1 + t), P · (1 + t)]: **matches** when the whole interval lies
/// inside the band, **differs** when it lies wholly outside, **undecided**
/// otherwise, so a wider (noisier) interval never makes a match easier.
/// Without an interval nothing is decided.
pub fn magnitude(published: f64, interval: Option<(f64, f64)>, tolerance: f64) -> Magnitude {
    let Some((lo, hi)) = interval else {
        return Magnitude::Undecided;
    };
    let (a, b) = (published / (1.0 + tolerance), published * (1.0 + tolerance));
    if lo >= a && hi <= b {
        Magnitude::Matches
    } else if hi < a || lo > b {
        Magnitude::Differs
    } else {
        Magnitude::Undecided
    }
}

/// A published ratio as printed (`4.7×`).
pub fn published_text(p: f64) -> String {
    let s = format!("{p:.2}");
    format!("{}×", s.trim_end_matches('0').trim_end_matches('.'))
}

/// The busy share at or above which a side's cores count as the limit,
/// where a cell does not record its own (`limit.threshold`): the model's
/// one rule's, with which the engine judges every cell.
pub use rpclab_model::limit::BUSY_THRESHOLD;

/// Every claim decided and every published figure's twin (or why none), in
/// the reproduction's order.
#[derive(Clone, Debug)]
pub struct Decided {
    pub verdicts: Vec<ClaimVerdict>,
    pub twins: Vec<Result<Twin, String>>,
}

/// Decides every claim of `r` and measures every published figure's twin
/// from the snapshot's cells and aggregates.
pub fn decide(results: &Results, r: &Reproduction, rules: &Rules) -> Decided {
    let lookup = Lookup {
        results,
        systems: &r.systems,
        cells: &r.cells,
        rules,
        family: 1,
    };
    Decided {
        verdicts: r
            .claims
            .iter()
            .map(|c| {
                let mut v = check_claim(&lookup, &c.check);
                v.claim.clone_from(&c.id);
                v.plan.clone_from(&rules.plan);
                v.not_run = claim_systems(&c.check)
                    .iter()
                    .any(|k| lookup.system(k).is_some_and(|s| s.not_run.is_some()));
                v
            })
            .collect(),
        twins: r.cells.iter().map(|c| lookup.twin(c)).collect(),
    }
}

/// The systems a claim names.
fn claim_systems(check: &ClaimCheck) -> Vec<&String> {
    match check {
        ClaimCheck::Ratio { pairs, .. } => pairs.iter().flat_map(|p| [&p.over, &p.under]).collect(),
        ClaimCheck::Ranking { order, .. } => order.iter().collect(),
        ClaimCheck::Top { among, .. } | ClaimCheck::Bottom { among, .. } => among.iter().collect(),
        ClaimCheck::Equivalent {
            systems, behind, ..
        } => systems.iter().chain(behind).collect(),
        ClaimCheck::NoErrors { systems, .. } | ClaimCheck::Fails { systems, .. } => {
            systems.iter().collect()
        }
        ClaimCheck::NotCheckable { .. } => Vec::new(),
    }
}

/// Stores [`decide`]'s outcome, under the reproduction's own plan, in the
/// reproduction (what `lab reproduce` writes into `results.json`).
pub fn fill(results: &Results, r: &mut Reproduction) {
    let d = decide(results, r, &Rules::of_reproduction(r));
    r.verdicts = d.verdicts;
    for (cell, twin) in r.cells.iter_mut().zip(d.twins) {
        (cell.measured, cell.not_run) = match twin {
            Ok(t) => (Some(t), None),
            Err(why) => (None, Some(why)),
        };
    }
}

/// A reproduction written before verdicts were stored (or by a version that
/// stored fewer): every claim needs a verdict and every figure a twin or a
/// reason.
pub fn needs_decision(r: &Reproduction) -> bool {
    r.verdicts.len() != r.claims.len()
        || r.claims
            .iter()
            .zip(&r.verdicts)
            .any(|(c, v)| c.id != v.claim)
        || r.cells
            .iter()
            .any(|c| c.measured.is_none() && c.not_run.is_none())
}

/// The reproduction with its verdicts: as stored, or decided now when the
/// snapshot has none.
pub fn decided(results: &Results, r: &Reproduction) -> Reproduction {
    let mut r = r.clone();
    if needs_decision(&r) {
        fill(results, &mut r);
    }
    r
}

/// Why a figure cannot decide a verdict on the claim's own measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Caveat {
    NotSteady,
    TooFewCalls,
    ClientBound,
    SharedCpus,
    /// Most of its rounds were `host-busy`.
    HostBusy,
}

impl Caveat {
    fn flag(self) -> &'static str {
        match self {
            Caveat::NotSteady => "not-steady",
            Caveat::TooFewCalls => "too-few-calls",
            Caveat::ClientBound => "client-bound",
            Caveat::SharedCpus => "shared-cpus",
            Caveat::HostBusy => "host-busy on most rounds",
        }
    }

    /// The caveat beside a figure in `m`: a client-bound throughput is a
    /// lower bound of the server's, and a time derived from it (or a
    /// latency measured through it) an upper bound.
    fn words(self, m: Measure) -> &'static str {
        match self {
            Caveat::ClientBound if m.higher_is_better() => "lower bound",
            Caveat::ClientBound => "upper bound",
            Caveat::NotSteady => "unsteady",
            Caveat::TooFewCalls => "too few calls",
            Caveat::SharedCpus => "shared CPUs",
            Caveat::HostBusy => "host busy",
        }
    }
}

/// One system's measurement at a scenario and level, in a claim's measure.
struct Figure<'a> {
    key: String,
    agg: &'a Aggregate,
    /// Its cells (rounds or repetitions); empty for a results file that
    /// keeps only aggregates.
    cells: Vec<&'a Cell>,
    measure: Measure,
    total_calls: Option<u64>,
    value: f64,
}

fn has_flag(c: &Cell, f: CellFlag) -> bool {
    c.flags.contains(&f) || (f == CellFlag::ClientBound && c.client_bound.is_some())
}

/// A cell's threshold for a side's cores to count as the limit.
fn threshold(c: &Cell) -> f64 {
    c.limit
        .as_ref()
        .map(|l| l.threshold)
        .filter(|t| *t > 0.0)
        .unwrap_or(BUSY_THRESHOLD)
}

/// The server's CPU set was at its threshold or above: the figure is the
/// server's capacity, whatever the client did (the engine judges such a
/// cell server-bound; older snapshots flagged some client-bound).
fn server_full(c: &Cell) -> bool {
    c.limit
        .as_ref()
        .and_then(|l| l.server_busy)
        .is_some_and(|b| b >= threshold(c))
}

/// Client-bound, and its server not full: the figure is a bound.
fn client_limited(c: &Cell) -> bool {
    has_flag(c, CellFlag::ClientBound) && !server_full(c)
}

impl Figure<'_> {
    fn caveats(&self) -> Vec<Caveat> {
        let has = |f: CellFlag| self.agg.cell_flags.contains(&f);
        let mut out = Vec::new();
        if has(CellFlag::NotSteady) {
            out.push(Caveat::NotSteady);
        }
        if has(CellFlag::TooFewCalls) {
            out.push(Caveat::TooFewCalls);
        }
        let bound = if self.cells.is_empty() {
            has(CellFlag::ClientBound) || self.agg.flags.iter().any(|f| f == "client-bound")
        } else {
            self.cells.iter().any(|c| client_limited(c))
        };
        if bound {
            out.push(Caveat::ClientBound);
        }
        if has(CellFlag::SharedCpus) {
            out.push(Caveat::SharedCpus);
        }
        let busy = self
            .cells
            .iter()
            .filter(|c| has_flag(c, CellFlag::HostBusy))
            .count();
        if (self.cells.is_empty() && has(CellFlag::HostBusy)) || 2 * busy > self.cells.len() {
            out.push(Caveat::HostBusy);
        }
        out
    }

    /// The busiest server and client shares over its cells.
    fn busy(&self) -> (Option<f64>, Option<f64>) {
        let max = |side: fn(&rpclab_model::result::Limit) -> Option<f64>| {
            self.cells
                .iter()
                .filter_map(|c| c.limit.as_ref().and_then(side))
                .reduce(f64::max)
        };
        (max(|l| l.server_busy), max(|l| l.client_busy))
    }

    /// Client-bound, but on every client-bound cell its server was below
    /// the threshold: the server had room, and its calls per core-second
    /// still say what its code costs.
    fn server_had_room(&self) -> bool {
        self.cells.iter().filter(|c| client_limited(c)).all(|c| {
            c.limit
                .as_ref()
                .and_then(|l| l.server_busy)
                .is_some_and(|b| b < threshold(c))
        })
    }

    /// Every cell knows its server's busy cores.
    fn has_server_cores(&self) -> bool {
        !self.cells.is_empty()
            && self
                .cells
                .iter()
                .all(|c| c.server_cost.is_some_and(|s| s.cpu_cores_busy > 0.0))
    }

    /// One synchronous caller and neither side's cores the limit, on every
    /// cell: round trips set the rate.
    fn latency_bound(&self) -> bool {
        !self.cells.is_empty()
            && self.cells.iter().all(|c| {
                matches!(&c.report.load, Load::Closed(l) if l.callers() == 1)
                    && c.limit
                        .as_ref()
                        .is_some_and(|l| l.side == LimitSide::Neither)
            })
    }

    /// `server 45 %, client 98 % busy`, or nothing when unknown.
    fn busy_text(&self) -> Option<String> {
        let pct = |x: Option<f64>| x.map(|v| format!("{:.0} %", v * 100.0));
        match self.busy() {
            (None, None) => None,
            (s, c) => Some(format!(
                "server {}, client {} busy",
                pct(s).unwrap_or_else(|| "?".into()),
                pct(c).unwrap_or_else(|| "?".into())
            )),
        }
    }

    /// The figure with what keeps it out of a verdict: `ice 100000 calls/s
    /// (lower bound: client-bound; server 45 %, client 98 % busy)`.
    fn shown(&self) -> String {
        let caveats = self.caveats();
        let mut s = format!(
            "{} {} {}",
            self.key,
            fmt_value(self.value),
            unit(self.measure)
        );
        if !caveats.is_empty() {
            let words: Vec<&str> = caveats.iter().map(|c| c.words(self.measure)).collect();
            let flags: Vec<&str> = caveats.iter().map(|c| c.flag()).collect();
            s.push_str(&format!(" ({}: {}", words.join(", "), flags.join(", ")));
            if let Some(b) = self.busy_text() {
                s.push_str(&format!("; {b}"));
            }
            s.push(')');
        }
        s
    }

    fn twin(&self) -> Twin {
        let caveats = self.caveats();
        let interval = derive_interval(self.agg, self.measure, self.total_calls);
        let mut flags: Vec<String> = self.agg.cell_flags.iter().map(|f| f.to_string()).collect();
        if self.agg.noisy {
            flags.push("noisy".into());
        }
        let (server_busy, client_busy) = self.busy();
        Twin {
            value: Spread {
                median: self.value,
                low: interval.map(|i| i.0),
                high: interval.map(|i| i.1),
                coverage: interval.map(|i| i.2),
                rounds: self.agg.repetitions,
            },
            flags,
            trustworthy: caveats.is_empty(),
            caveats: caveats
                .iter()
                .map(|c| c.words(self.measure).to_owned())
                .collect(),
            server_busy,
            client_busy,
        }
    }
}

#[derive(Clone, Copy)]
struct Lookup<'a> {
    results: &'a Results,
    systems: &'a [SeedSystem],
    cells: &'a [PublishedCell],
    rules: &'a Rules,
    /// Pairs in the claim being decided: each pair's interval is taken at
    /// α / family (Bonferroni), so that together they reach 1 − α.
    family: usize,
}

impl<'a> Lookup<'a> {
    fn system(&self, key: &str) -> Option<&'a SeedSystem> {
        self.systems.iter().find(|s| s.key == key)
    }

    /// The aggregate of a system's stand-in at a scenario and level, or why none.
    fn aggregate(&self, key: &str, scenario: &str, level: u32) -> Result<&'a Aggregate, String> {
        let s = self
            .system(key)
            .ok_or_else(|| format!("`{key}` is not a system of this seed"))?;
        if s.not_run.is_some() {
            // The reason is in the systems table; claims only point to it.
            return Err("not run (see systems)".into());
        }
        let (server, variant) = (
            s.server.as_deref().unwrap_or(""),
            s.variant.as_deref().unwrap_or(""),
        );
        let same = |a: &Aggregate| a.server == server && a.variant == variant;
        self.results
            .aggregates
            .iter()
            .find(|a| same(a) && a.scenario == scenario && a.concurrency == level)
            .ok_or_else(|| {
                let failed = self
                    .results
                    .errors
                    .iter()
                    .find(|e| e.is_of(server, variant));
                if let Some(error) = failed {
                    format!("run failed: {}", error.first_line())
                } else if self
                    .results
                    .aggregates
                    .iter()
                    .any(|a| same(a) && a.scenario == scenario)
                {
                    NOT_THIS_LEVEL.to_owned()
                } else {
                    format!(
                        "not measured: no {server} {variant} cell for {scenario} in this snapshot"
                    )
                }
            })
    }

    /// The published figure of a system at a lab scenario and level, in a measure.
    fn published(
        &self,
        key: &str,
        scenario: &str,
        level: u32,
        measure: Measure,
    ) -> Option<&'a PublishedCell> {
        self.cells.iter().find(|c| {
            c.system == key
                && c.scenario.as_deref() == Some(scenario)
                && c.concurrency == Some(level)
                && c.measure == Some(measure)
        })
    }

    /// The published speed ratio of `x` over `y` at a scenario and level,
    /// from the published cells where both have a figure: in the claim's
    /// measure, or, for a throughput claim, in any measure derived from
    /// throughput alone (a total time counts only for equal call counts).
    fn published_ratio(
        &self,
        x: &str,
        y: &str,
        scenario: &str,
        level: u32,
        measure: Measure,
    ) -> Option<f64> {
        let mut candidates = vec![measure];
        if throughput_based(measure) {
            candidates.extend([
                Measure::Throughput,
                Measure::MsPerCall,
                Measure::TotalSeconds,
                Measure::TotalMs,
            ]);
        }
        candidates.into_iter().find_map(|m| {
            let px = self.published(x, scenario, level, m)?;
            let py = self.published(y, scenario, level, m)?;
            if matches!(m, Measure::TotalSeconds | Measure::TotalMs)
                && px.total_calls != py.total_calls
            {
                return None;
            }
            let (vx, vy) = (px.value?, py.value?);
            let r = if m.higher_is_better() {
                vx / vy
            } else {
                vy / vx
            };
            (r.is_finite() && r > 0.0).then_some(r)
        })
    }

    /// A system's figure in a measure, with `total_calls` for a total.
    fn figure_with(
        &self,
        key: &str,
        scenario: &str,
        level: u32,
        measure: Measure,
        total_calls: Option<u64>,
    ) -> Result<Figure<'a>, String> {
        let agg = self.aggregate(key, scenario, level)?;
        if matches!(measure, Measure::TotalSeconds | Measure::TotalMs) && total_calls.is_none() {
            return Err(format!(
                "no published call count for a total at {scenario} level {level}"
            ));
        }
        let value = derive(agg, measure, total_calls)
            .ok_or_else(|| format!("no {measure:?} in its measurement"))?;
        let cells = self
            .results
            .cells
            .iter()
            .filter(|c| c.key() == agg.key())
            .collect();
        Ok(Figure {
            key: key.to_owned(),
            agg,
            cells,
            measure,
            total_calls,
            value,
        })
    }

    /// A system's figure in a claim's measure; a total over calls takes the
    /// published run's call count from the published cell of that system,
    /// scenario and level.
    fn figure(
        &self,
        key: &str,
        scenario: &str,
        level: u32,
        measure: Measure,
    ) -> Result<Figure<'a>, String> {
        let total_calls = self
            .published(key, scenario, level, measure)
            .and_then(|c| c.total_calls);
        self.figure_with(key, scenario, level, measure, total_calls)
    }

    /// A published figure's measured twin, or why it has none.
    fn twin(&self, cell: &'a PublishedCell) -> Result<Twin, String> {
        if let Some(why) = &cell.unlinked {
            return Err(format!("no lab cell: {why}"));
        }
        let (Some(scenario), Some(level), Some(m)) =
            (cell.scenario.as_deref(), cell.concurrency, cell.measure)
        else {
            return Err("no lab cell".into());
        };
        self.aggregate(&cell.system, scenario, level)?;
        let f = self
            .figure_with(&cell.system, scenario, level, m, cell.total_calls)
            .map_err(|_| "not derivable from the measurement".to_owned())?;
        Ok(f.twin())
    }
}

/// What a pair's ratio is taken on.
#[derive(Clone, Copy, Debug, PartialEq)]
enum On {
    /// The claim's measure, as a speed ratio.
    Measure(Measure),
    /// Throughput ÷ the server's busy cores.
    PerServerCore,
    /// The server's CPU time per call (lower is better).
    ServerCpu,
}

impl On {
    fn higher_is_better(self) -> bool {
        match self {
            On::Measure(m) => m.higher_is_better(),
            On::PerServerCore => true,
            On::ServerCpu => false,
        }
    }

    /// One cell's value.
    fn cell_value(self, f: &Figure, c: &Cell) -> Option<f64> {
        let v = match self {
            On::Measure(m) => {
                let single =
                    rpclab_model::aggregate::aggregate(std::slice::from_ref(c), f64::INFINITY);
                derive(single.first()?, m, f.total_calls)?
            }
            On::PerServerCore => c.throughput_per_s / c.server_cost?.cpu_cores_busy,
            On::ServerCpu => c.server_cost?.cpu_us_per_call,
        };
        (v.is_finite() && v > 0.0 && c.calls_ok > 0).then_some(v)
    }

    fn speed(self, x: f64, y: f64) -> f64 {
        if self.higher_is_better() {
            x / y
        } else {
            y / x
        }
    }
}

/// A pair's ratio: its spread over JVM starts (no interval when one start
/// is all there is), each start's ratio, and the rounds left out.
#[derive(Clone, Debug, PartialEq)]
struct Ratio {
    spread: Spread,
    within_rounds: bool,
    starts: Vec<f64>,
    left_out: Vec<String>,
}

/// The cells were measured in interleaved rounds (the run says so, or its
/// cells carry their place in a round).
fn in_rounds(results: &Results, x: &Figure, y: &Figure) -> bool {
    results.rounds.is_some()
        || x.cells
            .iter()
            .chain(&y.cells)
            .any(|c| c.round_position.is_some())
}

/// The per-round speed ratios of `x` over `y`, grouped by JVM start (in
/// start order), and the rounds left out (either cell host-busy, or
/// failed: no calls or no value).
fn by_starts(x: &Figure, y: &Figure, on: On) -> (Vec<Vec<f64>>, Vec<String>) {
    let mut starts: std::collections::BTreeMap<u32, Vec<f64>> = Default::default();
    let mut left_out = Vec::new();
    for cx in &x.cells {
        let Some(cy) = y.cells.iter().find(|c| c.repetition == cx.repetition) else {
            continue;
        };
        let group = starts.entry(cx.start.unwrap_or(1)).or_default();
        let both = [(x.key.as_str(), *cx), (y.key.as_str(), *cy)];
        let busy: Vec<&str> = both
            .iter()
            .filter(|(_, c)| has_flag(c, CellFlag::HostBusy))
            .map(|(k, _)| *k)
            .collect();
        if !busy.is_empty() {
            left_out.push(format!(
                "round {}: host-busy ({})",
                cx.repetition,
                busy.join(", ")
            ));
            continue;
        }
        match (on.cell_value(x, cx), on.cell_value(y, cy)) {
            (Some(a), Some(b)) => group.push(on.speed(a, b)),
            (a, _) => left_out.push(format!(
                "round {}: failed ({})",
                cx.repetition,
                if a.is_none() { &x.key } else { &y.key }
            )),
        }
    }
    (starts.into_values().collect(), left_out)
}

/// One side of a ratio of medians: the median and how many values it
/// summarises.
struct Side {
    value: f64,
    n: u32,
}

impl Side {
    /// On the claim's measure from the aggregate; on the other bases from
    /// the cells.
    fn of(f: &Figure, on: On) -> Option<Side> {
        if let On::Measure(_) = on {
            return Some(Side {
                value: f.value,
                n: f.agg.repetitions,
            });
        }
        let v: Vec<f64> = f.cells.iter().filter_map(|c| on.cell_value(f, c)).collect();
        (!v.is_empty()).then(|| Side {
            value: median(&v),
            n: v.len() as u32,
        })
    }
}

/// `x` over `y` on `on` at the pair's share `alpha` of the plan's α: over
/// JVM starts where there are two usable starts or more; otherwise the
/// point alone (the geometric mean of the rounds' ratios, or the ratio of
/// the medians for cells not measured in rounds), with no interval.
fn ratio(results: &Results, x: &Figure, y: &Figure, on: On, alpha: f64) -> Option<Ratio> {
    let mut left_out = Vec::new();
    if in_rounds(results, x, y) {
        let (groups, dropped) = by_starts(x, y, on);
        if let Some(a) = crate::across_starts::across_starts(&groups, alpha) {
            return Some(Ratio {
                spread: Spread {
                    median: a.ratio,
                    low: Some(a.low),
                    high: Some(a.high),
                    coverage: Some(a.coverage),
                    rounds: a.rounds,
                },
                within_rounds: true,
                starts: a.starts,
                left_out: dropped,
            });
        }
        let all: Vec<f64> = groups.concat();
        if !all.is_empty() {
            let mean = all.iter().map(|r| r.ln()).sum::<f64>() / all.len() as f64;
            return Some(Ratio {
                spread: Spread {
                    median: mean.exp(),
                    rounds: all.len() as u32,
                    ..Spread::default()
                },
                within_rounds: true,
                starts: Vec::new(),
                left_out: dropped,
            });
        }
        left_out = dropped;
    }
    let (sx, sy) = (Side::of(x, on)?, Side::of(y, on)?);
    let point = on.speed(sx.value, sy.value);
    (point.is_finite() && point > 0.0).then(|| Ratio {
        spread: Spread {
            median: point,
            rounds: sx.n.min(sy.n),
            ..Spread::default()
        },
        within_rounds: false,
        starts: Vec::new(),
        left_out,
    })
}

/// The direction a speed ratio's interval decides, with the plan's noise
/// floor f:
///
/// - an interval inside [1 / (1 + f), 1 + f] is **within noise**, decided:
///   the systems are level;
/// - an interval that excludes 1 says which system is faster (a real
///   difference at the interval's coverage): **holds** (low > 1) or
///   **reversed** (high < 1) when its ratio reaches the floor, else
///   **within noise**, decided: real, but smaller than the floor;
/// - an interval that holds 1 and reaches beyond the band is **undecided**
///   (the direction is then the ratio's, for orientation). The design is
///   fixed: no round is added to decide it.
pub fn band(low: f64, high: f64, ratio: f64, floor: f64) -> (Direction, bool) {
    let up = 1.0 + floor;
    let point = |r: f64| {
        if r >= up {
            Direction::Holds
        } else if r <= 1.0 / up {
            Direction::Reversed
        } else {
            Direction::WithinNoise
        }
    };
    if !(low.is_finite() && high.is_finite() && low > 0.0) {
        return (Direction::NotComparable, false);
    }
    if low >= 1.0 / up && high <= up {
        (Direction::WithinNoise, true)
    } else if low > 1.0 || high < 1.0 {
        (point(ratio), true)
    } else {
        (point(ratio), false)
    }
}

/// An equivalence ("about as fast"): holds, decided, when the interval lies
/// inside [1 / (1 + t), 1 + t]; does not hold when it lies entirely
/// outside; otherwise undecided.
pub fn equivalence_band(low: f64, high: f64, ratio: f64, tolerance: f64) -> (Direction, bool) {
    let (a, b) = (1.0 / (1.0 + tolerance), 1.0 + tolerance);
    if !(low.is_finite() && high.is_finite() && low > 0.0) {
        return (Direction::NotComparable, false);
    }
    let point = if (a..=b).contains(&ratio) {
        Direction::Holds
    } else {
        Direction::DoesNotHold
    };
    if low >= a && high <= b {
        (Direction::Holds, true)
    } else if high < a || low > b {
        (Direction::DoesNotHold, true)
    } else {
        (point, false)
    }
}

/// What a pair can be decided on: **trustworthy** when neither figure has
/// a caveat; **per server core** when the only caveat is client-bound with
/// the server below its threshold on every such cell (a throughput-derived
/// measure, server CPU known); **indicative** otherwise.
fn basis_of(x: &Figure, y: &Figure) -> Basis {
    let (cx, cy) = (x.caveats(), y.caveats());
    if cx.is_empty() && cy.is_empty() {
        return Basis::Trustworthy;
    }
    let room = |f: &Figure, c: &[Caveat]| {
        c.iter().all(|k| *k == Caveat::ClientBound)
            && (c.is_empty() || f.server_had_room())
            && f.has_server_cores()
    };
    if throughput_based(x.measure) && room(x, &cx) && room(y, &cy) {
        Basis::PerServerCore
    } else {
        Basis::Indicative
    }
}

/// On some cell both sides' cores were at their threshold.
fn both_saturated(f: &Figure) -> bool {
    f.cells.iter().any(|c| {
        c.limit.as_ref().is_some_and(|l| {
            let t = threshold(c);
            l.server_busy.is_some_and(|b| b >= t) && l.client_busy.is_some_and(|b| b >= t)
        })
    })
}

/// A pair's verdict: `x` claimed ahead of `y` (or level with it, for an
/// equivalence). None when no ratio can be formed (a zero figure).
///
/// Two lenses guard the direction. Where the server's CPU time per call is
/// known, its ratio is taken the same way; when it points the opposite way
/// to the throughput, each interval clear of 1, the pair is **withheld**:
/// the two say different things about which server is faster (a
/// latency-bound pair's rate is round trips), so it decides nothing. A
/// latency-bound pair is **host-dependent**: decided, but on this host.
fn pair(
    l: &Lookup,
    x: &Figure,
    y: &Figure,
    published: Option<f64>,
    level: Option<u32>,
    equivalence: bool,
) -> Option<PairVerdict> {
    let rules = l.rules;
    let alpha = rules.alpha / l.family.max(1) as f64;
    let basis = basis_of(x, y);
    let on = match basis {
        Basis::PerServerCore => On::PerServerCore,
        _ => On::Measure(x.measure),
    };
    let r = ratio(l.results, x, y, on, alpha)?;
    let s = &r.spread;
    let interval = s.low.zip(s.high);
    let (direction, in_band) = match interval {
        None => (
            band(s.median, s.median, s.median, rules.noise_floor).0,
            false,
        ),
        Some((low, high)) if equivalence => {
            equivalence_band(low, high, s.median, rules.equivalence_tolerance)
        }
        Some((low, high)) => band(low, high, s.median, rules.noise_floor),
    };
    let host_dependent = basis == Basis::Trustworthy && x.latency_bound() && y.latency_bound();
    // Per server core is CPU already: the lens has nothing to add there.
    let server_cpu =
        if on != On::Measure(x.measure) || !x.has_server_cores() || !y.has_server_cores() {
            None
        } else {
            ratio(l.results, x, y, On::ServerCpu, alpha).map(|r| r.spread)
        };
    let cpu_disagrees = !equivalence
        && server_cpu
            .as_ref()
            .and_then(|c| c.low.zip(c.high))
            .zip(interval)
            .is_some_and(|((cl, ch), (tl, th))| (tl > 1.0 && ch < 1.0) || (th < 1.0 && cl > 1.0));
    let decided = in_band && basis != Basis::Indicative && !cpu_disagrees;
    // Magnitude only where the direction holds, decided.
    let magnitude = published
        .filter(|_| decided && direction == Direction::Holds)
        .map(|p| magnitude(p, interval, rules.magnitude_tolerance));
    let mut p = PairVerdict {
        over: x.key.clone(),
        under: y.key.clone(),
        level,
        published,
        measured: s.median,
        low: s.low,
        high: s.high,
        coverage: s.coverage,
        rounds: s.rounds,
        within_rounds: r.within_rounds,
        basis,
        direction,
        magnitude,
        decided,
        why_undecided: None,
        host_dependent,
        server_cpu,
        left_out: r.left_out.clone(),
        starts: r.starts.clone(),
        cpu_disagrees,
        both_saturated: both_saturated(x) && both_saturated(y),
    };
    if !decided {
        p.why_undecided = Some(why_undecided(&p, x, y, equivalence, rules));
    }
    Some(p)
}

/// Why a pair is not decided: the figures' flags and busy shares, a single
/// JVM start, throughput and CPU disagreeing, or the interval reaching
/// across a band edge.
fn why_undecided(
    p: &PairVerdict,
    x: &Figure,
    y: &Figure,
    equivalence: bool,
    rules: &Rules,
) -> String {
    if p.basis == Basis::Indicative {
        let shown: Vec<String> = [x, y]
            .iter()
            .filter(|f| !f.caveats().is_empty())
            .map(|f| f.shown())
            .collect();
        let mut why = shown.join(", ");
        let bound_only = [x, y]
            .iter()
            .all(|f| f.caveats().iter().all(|c| *c == Caveat::ClientBound));
        if bound_only && !throughput_based(x.measure) {
            why.push_str("; no per-core comparison for a latency measure");
        } else if bound_only {
            why.push_str("; no per-core comparison: no server CPU figures");
        }
        return why;
    }
    if p.cpu_disagrees {
        let cpu = p
            .server_cpu
            .as_ref()
            .expect("a disagreement has a CPU ratio");
        return format!(
            "withheld: throughput and CPU disagree (server CPU per call {})",
            spread_text(cpu.median, cpu.low, cpu.high, Some(cpu.rounds))
        );
    }
    let (Some(low), Some(high)) = (p.low, p.high) else {
        return if p.within_rounds {
            "measured in one JVM start: the variation between starts is unknown, so no interval"
                .to_owned()
        } else {
            "not measured in rounds over several JVM starts: no interval".to_owned()
        };
    };
    let edge = if equivalence {
        format!(
            "±{:.0} % equivalence band",
            rules.equivalence_tolerance * 100.0
        )
    } else {
        format!("{:.0} % noise band", rules.noise_floor * 100.0)
    };
    let mut why = format!("interval [{low:.2}, {high:.2}] reaches across an edge of the {edge}");
    let busy: Vec<String> = [x, y]
        .iter()
        .filter_map(|f| f.busy_text().map(|b| format!("{}: {b}", f.key)))
        .collect();
    if !busy.is_empty() {
        why.push_str(&format!(" ({})", busy.join("; ")));
    }
    why
}

/// A measured ratio in words: `1.90× [1.71, 2.10] over 6 rounds`.
pub fn spread_text(
    median: f64,
    low: Option<f64>,
    high: Option<f64>,
    rounds: Option<u32>,
) -> String {
    match (low.zip(high), rounds) {
        (Some((lo, hi)), Some(n)) => format!("{median:.2}× [{lo:.2}, {hi:.2}] over {n} rounds"),
        (Some((lo, hi)), None) => format!("{median:.2}× [{lo:.2}, {hi:.2}]"),
        (None, Some(n)) => format!("{median:.2}× over {n} rounds (no interval)"),
        (None, None) => format!("{median:.2}× (no interval)"),
    }
}

/// A pair's measured ratio with its interval, its rounds (when taken within
/// rounds) and, past one, its server starts: `1.90× [1.68, 2.14] over 3
/// rounds in 3 starts`. One text for a claim's detail and the README's
/// reproduction table, so the two never word a pair differently.
pub fn pair_ratio_text(p: &PairVerdict) -> String {
    let mut ratio = spread_text(
        p.measured,
        p.low,
        p.high,
        p.within_rounds.then_some(p.rounds),
    );
    if p.starts.len() > 1 {
        ratio.push_str(&format!(" in {} starts", p.starts.len()));
    }
    ratio
}

/// How a part names its pair: `a / b` for an equivalence (no side is
/// claimed ahead), `a over b` otherwise.
fn pair_name(ahead: &str, behind: &str, equivalence: bool) -> String {
    if equivalence {
        format!("{ahead} / {behind}")
    } else {
        format!("{ahead} over {behind}")
    }
}

/// A pair's part of a claim's detail, from its verdict.
fn pair_text(p: &PairVerdict, equivalence: bool, rules: &Rules) -> String {
    let name = pair_name(&p.over, &p.under, equivalence);
    let ratio = pair_ratio_text(p);
    let mut text = if p.basis == Basis::Indicative {
        format!(
            "{name}: not checked, {}; indicative {ratio}",
            p.why_undecided.as_deref().unwrap_or_default()
        )
    } else {
        let on = match p.basis {
            Basis::PerServerCore => " per server core",
            _ => "",
        };
        let mut t = if p.decided {
            format!("{name}{on} {ratio} ({}", p.direction.label())
        } else {
            format!(
                "{name}{on} {ratio} (undecided, leaning {}",
                p.direction.label()
            )
        };
        if equivalence {
            t.push_str(&format!(
                ": level within ±{:.0} %",
                rules.equivalence_tolerance * 100.0
            ));
        }
        t.push(')');
        t
    };
    if let (Some(pb), Some(g)) = (p.published, p.magnitude) {
        if p.basis == Basis::Indicative {
            text.push_str(&format!(
                " against published {} (magnitude would {})",
                published_text(pb),
                match g {
                    Magnitude::Matches => "match",
                    Magnitude::Differs => "differ",
                    Magnitude::Undecided => "be undecided",
                }
            ));
        } else {
            text.push_str(&format!(
                ", magnitude {}: published {} (band ±{:.0} %)",
                g.label(),
                published_text(pb),
                rules.magnitude_tolerance * 100.0
            ));
        }
    }
    if p.basis == Basis::PerServerCore {
        text.push_str(", calls per server core-second: a figure was client-bound");
    }
    if p.basis != Basis::Indicative {
        if let Some(why) = &p.why_undecided {
            text.push_str(&format!("; undecided: {why}"));
        }
    }
    text.push_str(&pair_notes(p, &name));
    text
}

/// What a pair's text adds after its verdict: host dependence with the
/// server CPU ratio, and the rounds left out.
fn pair_notes(p: &PairVerdict, name: &str) -> String {
    let mut text = String::new();
    if p.host_dependent {
        text.push_str(
            "; host-dependent: latency-bound (one synchronous caller, neither side's cores the limit)",
        );
        if let Some(c) = &p.server_cpu {
            let n = (c.rounds > 1 && p.within_rounds).then_some(c.rounds);
            text.push_str(&format!(
                ", server CPU per call {name} {}",
                spread_text(c.median, c.low, c.high, n)
            ));
        }
    }
    if p.both_saturated {
        text.push_str(
            "; both sides saturated: server and client cores at their threshold, the figure is the host's as much as the server's",
        );
    }
    if !p.left_out.is_empty() {
        text.push_str(&format!("; left out: {}", p.left_out.join(", ")));
    }
    text
}

/// One part of a claim (a pair or a system), decided or not.
struct Part {
    direction: Direction,
    decided: bool,
    /// Something was measured for it (a ratio, or calls counted).
    measured: bool,
    magnitude: Option<Magnitude>,
    basis: Option<Basis>,
    text: String,
    pair: Option<PairVerdict>,
}

impl Part {
    fn unchecked(text: String) -> Part {
        Part {
            direction: Direction::NotComparable,
            decided: false,
            measured: false,
            magnitude: None,
            basis: None,
            text,
            pair: None,
        }
    }

    fn of_pair(p: PairVerdict, prefix: &str, equivalence: bool, rules: &Rules) -> Part {
        Part {
            direction: p.direction,
            decided: p.decided,
            measured: true,
            magnitude: p.magnitude,
            basis: Some(p.basis),
            text: format!("{prefix}{}", pair_text(&p, equivalence, rules)),
            pair: Some(p),
        }
    }
}

/// The direction of several decided parts as one: a reversal wins, then a
/// failure without direction, then noise; the claim holds only when every
/// decided part holds.
pub fn combine(parts: &[Direction]) -> Direction {
    let measured: Vec<Direction> = parts
        .iter()
        .copied()
        .filter(|v| *v != Direction::NotComparable)
        .collect();
    if measured.is_empty() {
        Direction::NotComparable
    } else if measured.contains(&Direction::Reversed) {
        Direction::Reversed
    } else if measured.contains(&Direction::DoesNotHold) {
        Direction::DoesNotHold
    } else if measured.contains(&Direction::WithinNoise) {
        Direction::WithinNoise
    } else {
        Direction::Holds
    }
}

/// The verdict in words: `holds; magnitude differs`, `partly checked (1 of
/// 3 pairs): holds`, `undecided (0 of 1 pairs decided)` (the detail says
/// why, pair by pair), `not comparable`.
pub fn label(v: &ClaimVerdict, measured_undecided: bool) -> String {
    if v.of == 0 || (v.checked == 0 && !measured_undecided) {
        return Direction::NotComparable.label().to_owned();
    }
    if v.checked == 0 {
        // Why, pair by pair, is in the detail.
        return format!("undecided (0 of {} {} decided)", v.of, v.unit);
    }
    let mut s = if v.checked < v.of {
        format!(
            "partly checked ({} of {} {}): {}",
            v.checked,
            v.of,
            v.unit,
            v.direction.label()
        )
    } else {
        v.direction.label().to_owned()
    };
    if let Some(m) = v.magnitude {
        s.push_str("; magnitude ");
        s.push_str(m.label());
    }
    if v.host_dependent {
        s.push_str(" (on this host: rests on a latency-bound pair)");
    }
    s
}

/// A claim's parts summed up: `total` counts every part the claim has,
/// decided or not; `notes` come before the parts in the detail.
fn summarise(parts: Vec<Part>, total: usize, unit: &str, notes: Vec<String>) -> ClaimVerdict {
    let decided: Vec<&Part> = parts.iter().filter(|p| p.decided).collect();
    // Differs as soon as one decided pair differs; matches only when every
    // decided pair matches; otherwise undecided.
    let mags: Vec<Magnitude> = decided.iter().filter_map(|p| p.magnitude).collect();
    let magnitude = if mags.is_empty() {
        None
    } else if mags.contains(&Magnitude::Differs) {
        Some(Magnitude::Differs)
    } else if mags.iter().all(|m| *m == Magnitude::Matches) {
        Some(Magnitude::Matches)
    } else {
        Some(Magnitude::Undecided)
    };
    let host_dependent = decided
        .iter()
        .any(|p| p.pair.as_ref().is_some_and(|q| q.host_dependent));
    let coverage = parts
        .iter()
        .filter_map(|p| p.pair.as_ref())
        .filter_map(|q| q.coverage)
        .map(|c| 1.0 - c)
        .sum::<f64>();
    let any_interval = parts
        .iter()
        .any(|p| p.pair.as_ref().is_some_and(|q| q.coverage.is_some()));
    let of = total.max(parts.len()) as u32;
    let mut v = ClaimVerdict {
        claim: String::new(),
        decided: of > 0 && decided.len() as u32 == of,
        direction: combine(&decided.iter().map(|p| p.direction).collect::<Vec<_>>()),
        magnitude,
        basis: parts
            .iter()
            .filter_map(|p| p.basis)
            .min_by_key(|b| b.strength()),
        checked: decided.len() as u32,
        of,
        unit: unit.to_owned(),
        not_run: false,
        label: String::new(),
        detail: String::new(),
        pairs: Vec::new(),
        plan: None,
        host_dependent,
        // Bonferroni: the pairs' shares of α add up.
        coverage: any_interval.then(|| 1.0 - coverage * of as f64 / parts.len().max(1) as f64),
    };
    v.label = label(&v, parts.iter().any(|p| p.measured && !p.decided));
    let mut detail = notes;
    for p in parts {
        detail.push(p.text);
        v.pairs.extend(p.pair);
    }
    v.detail = detail.join("; ");
    v
}

/// Where a part compares two systems: one measure of one scenario at one
/// concurrency level. Kept together because every part of a claim names all
/// three, and passing them one by one made the part builders' argument lists
/// too long to read.
#[derive(Clone, Copy)]
struct At<'a> {
    measure: Measure,
    scenario: &'a str,
    level: u32,
}

/// One directional part: `ahead` claimed better than `behind` at `at`.
fn directed(
    l: &Lookup,
    at: At,
    prefix: &str,
    (ahead, behind): (&str, &str),
    published: Option<f64>,
    equivalence: bool,
) -> Part {
    let At {
        measure: m,
        scenario,
        level,
    } = at;
    let name = format!("{prefix}{}", pair_name(ahead, behind, equivalence));
    let (a, b) = (
        l.figure(ahead, scenario, level, m),
        l.figure(behind, scenario, level, m),
    );
    match (a, b) {
        (Ok(a), Ok(b)) => match pair(l, &a, &b, published, Some(level), equivalence) {
            Some(p) => Part::of_pair(p, prefix, equivalence, l.rules),
            None => Part::unchecked(format!("{name}: no ratio (a zero figure)")),
        },
        (Err(why), _) => Part::unchecked(format!("{name}: {ahead} {why}")),
        (_, Err(why)) => Part::unchecked(format!("{name}: {behind} {why}")),
    }
}

/// How many pairs a claim compares: the family its pairs' intervals share
/// α over.
fn family(check: &ClaimCheck) -> usize {
    match check {
        ClaimCheck::Ratio { pairs, .. } => pairs.len(),
        ClaimCheck::Ranking { order, levels, .. } => order.len().saturating_sub(1) * levels.len(),
        ClaimCheck::Top {
            systems,
            among,
            levels,
            ..
        }
        | ClaimCheck::Bottom {
            systems,
            among,
            levels,
            ..
        } => systems.len() * among.iter().filter(|k| !systems.contains(k)).count() * levels.len(),
        ClaimCheck::Equivalent {
            systems,
            behind,
            levels,
            ..
        } => (systems.len().saturating_sub(1) + behind.len() * systems.len()) * levels.len(),
        _ => 1,
    }
}

fn check_claim(l: &Lookup, check: &ClaimCheck) -> ClaimVerdict {
    let l = &Lookup {
        family: family(check).max(1),
        ..*l
    };
    match check {
        ClaimCheck::NotCheckable { reason } => {
            summarise(Vec::new(), 0, "parts", vec![reason.clone()])
        }
        ClaimCheck::Ratio {
            measure,
            scenario,
            concurrency,
            pairs,
        } => {
            let parts = pairs
                .iter()
                .map(|p| {
                    // A published ratio below 1 says `over` is the slower one:
                    // the claim is then `under` ahead by 1 / ratio.
                    let (ahead, behind, published) = if p.published < 1.0 {
                        (&p.under, &p.over, 1.0 / p.published)
                    } else {
                        (&p.over, &p.under, p.published)
                    };
                    let published = (published > 0.0 && published.is_finite()).then_some(published);
                    let pair = (ahead.as_str(), behind.as_str());
                    let at = At {
                        measure: *measure,
                        scenario,
                        level: *concurrency,
                    };
                    directed(l, at, "", pair, published, false)
                })
                .collect();
            summarise(parts, pairs.len(), "pairs", Vec::new())
        }
        ClaimCheck::Ranking {
            measure,
            scenario,
            levels,
            order,
        } => {
            let mut parts = Vec::new();
            for level in levels {
                for w in order.windows(2) {
                    parts.push(level_pair(l, *measure, scenario, *level, (&w[0], &w[1])));
                }
            }
            let total = order.len().saturating_sub(1) * levels.len();
            summarise(parts, total, "pairs", Vec::new())
        }
        ClaimCheck::Top {
            measure,
            scenario,
            levels,
            systems,
            among,
        } => extremes(l, *measure, scenario, levels, systems, among, false),
        ClaimCheck::Bottom {
            measure,
            scenario,
            levels,
            systems,
            among,
        } => extremes(l, *measure, scenario, levels, systems, among, true),
        ClaimCheck::Equivalent {
            measure,
            scenario,
            levels,
            systems,
            behind,
        } => equivalent(l, *measure, scenario, levels, systems, behind),
        ClaimCheck::NoErrors { scenario, systems } => errors(l, scenario, systems, false),
        ClaimCheck::Fails { scenario, systems } => errors(l, scenario, systems, true),
    }
}

/// `ahead` over `behind` at a level of a multi-level claim, with the
/// published ratio from the published cells.
fn level_pair(l: &Lookup, m: Measure, scenario: &str, level: u32, (a, b): (&str, &str)) -> Part {
    let published = l.published_ratio(a, b, scenario, level, m);
    let prefix = format!("level {level}: ");
    let at = At {
        measure: m,
        scenario,
        level,
    };
    directed(l, at, &prefix, (a, b), published, false)
}

/// `systems` are the best (or, with `worst`, the worst) of `among` at each
/// level: every member against every outsider, each pair a part, so a
/// claim whose outsiders could not all be measured reads partly checked.
fn extremes(
    l: &Lookup,
    m: Measure,
    scenario: &str,
    levels: &[u32],
    systems: &[String],
    among: &[String],
    worst: bool,
) -> ClaimVerdict {
    let outsiders: Vec<&String> = among.iter().filter(|k| !systems.contains(k)).collect();
    let mut parts = Vec::new();
    for level in levels {
        for member in systems {
            for outsider in &outsiders {
                let (a, b) = if worst {
                    (outsider.as_str(), member.as_str())
                } else {
                    (member.as_str(), outsider.as_str())
                };
                parts.push(level_pair(l, m, scenario, *level, (a, b)));
            }
        }
    }
    let total = systems.len() * outsiders.len() * levels.len();
    summarise(parts, total, "pairs", Vec::new())
}

/// Every system level with the first (an equivalence part each), and every
/// system of `behind` ahead of each of them.
fn equivalent(
    l: &Lookup,
    m: Measure,
    scenario: &str,
    levels: &[u32],
    systems: &[String],
    behind: &[String],
) -> ClaimVerdict {
    let mut parts = Vec::new();
    for level in levels {
        let Some(reference) = systems.first() else {
            continue;
        };
        let prefix = format!("level {level}: ");
        for other in &systems[1..] {
            let published = l.published_ratio(other, reference, scenario, *level, m);
            let pair = (other.as_str(), reference.as_str());
            let at = At {
                measure: m,
                scenario,
                level: *level,
            };
            parts.push(directed(l, at, &prefix, pair, published, true));
        }
        for leader in behind {
            for member in systems {
                parts.push(level_pair(l, m, scenario, *level, (leader, member)));
            }
        }
    }
    let per_level = systems.len().saturating_sub(1) + behind.len() * systems.len();
    summarise(parts, per_level * levels.len(), "pairs", Vec::new())
}

/// no-errors (`expect_failures` false: holds when no call failed) and
/// fails (holds when some did), per system over every level of the scenario.
fn errors(l: &Lookup, scenario: &str, systems: &[String], expect_failures: bool) -> ClaimVerdict {
    let mut parts = Vec::new();
    for key in systems {
        let aggs: Vec<&Aggregate> = match l.system(key) {
            Some(SeedSystem {
                not_run: Some(_), ..
            }) => {
                parts.push(Part::unchecked(format!("{key} not run (see systems)")));
                continue;
            }
            Some(SeedSystem {
                server: Some(server),
                variant: Some(variant),
                ..
            }) => l
                .results
                .aggregates
                .iter()
                .filter(|a| &a.server == server && &a.variant == variant && a.scenario == scenario)
                .collect(),
            _ => Vec::new(),
        };
        if aggs.is_empty() {
            parts.push(Part::unchecked(format!("{key}: not measured")));
            continue;
        }
        let failed: u64 = aggs.iter().map(|a| a.calls_failed).sum();
        let calls: u64 = aggs.iter().map(|a| a.calls_ok + a.calls_failed).sum();
        parts.push(Part {
            direction: if (failed > 0) == expect_failures {
                Direction::Holds
            } else {
                Direction::DoesNotHold
            },
            decided: true,
            measured: true,
            magnitude: None,
            basis: None,
            text: format!("{key}: {failed} of {calls} calls failed"),
            pair: None,
        });
    }
    summarise(parts, systems.len(), "systems", Vec::new())
}

#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;
    use rpclab_model::result::{Cost, Latency, Limit, RatioPair, SeedClaim};

    /// A claim `id`, checked by `check`.
    pub fn claim(id: &str, check: ClaimCheck) -> SeedClaim {
        SeedClaim {
            id: id.into(),
            text: String::new(),
            check,
        }
    }

    /// `over` ahead of `under` by `published` in throughput, at level 1
    /// of scenario `s`.
    pub fn ratio_claim(over: &str, under: &str, published: f64) -> SeedClaim {
        claim(
            &format!("{over}-{under}"),
            ClaimCheck::Ratio {
                measure: Measure::Throughput,
                scenario: "s".into(),
                concurrency: 1,
                pairs: vec![RatioPair {
                    over: over.into(),
                    under: under.into(),
                    published,
                }],
            },
        )
    }

    /// The systems named.
    pub fn names(keys: &[&str]) -> Vec<String> {
        keys.iter().map(|k| (*k).to_owned()).collect()
    }

    pub fn agg(server: &str, tput: f64, cv: f64, failed: u64) -> Aggregate {
        Aggregate {
            server: server.into(),
            variant: "v".into(),
            scenario: "s".into(),
            concurrency: 1,
            repetitions: 3,
            throughput_median: tput,
            throughput_min: tput,
            throughput_max: tput,
            throughput_cv: cv,
            throughput_ci: None,
            latency_us: Latency {
                min: 100.0,
                mean: 2000.0,
                p50: 1500.0,
                p90: 3000.0,
                p95: 4000.0,
                p99: 5000.0,
                p999: 7000.0,
                max: 9000.0,
            },
            calls_ok: 1000,
            calls_failed: failed,
            server_cpu_us_per_call: None,
            client_cpu_us_per_call: None,
            bytes_sent_per_call: 100.0,
            bytes_received_per_call: 200.0,
            cell_flags: Vec::new(),
            noisy: false,
            flags: Vec::new(),
        }
    }

    /// An aggregate whose median throughput has the interval [lo, hi] at 75 %
    /// (three repetitions).
    pub fn spread(server: &str, tput: f64, lo: f64, hi: f64) -> Aggregate {
        let mut a = agg(server, tput, 0.02, 0);
        a.throughput_ci = Some(rpclab_model::result::MedianInterval {
            low: lo,
            high: hi,
            confidence: 0.75,
        });
        a
    }

    pub fn system(key: &str, server: Option<&str>) -> SeedSystem {
        SeedSystem {
            key: key.into(),
            published_as: key.into(),
            server: server.map(Into::into),
            variant: server.map(|_| "v".into()),
            not_run: server.is_none().then(|| "no server folder yet".into()),
            note: None,
        }
    }

    /// Asserts that `text` says `part`, showing `text` when it does not.
    #[track_caller]
    pub fn assert_says(text: &str, part: &str) {
        assert!(text.contains(part), "{part:?} is not in: {text}");
    }

    /// Systems that each stand in for themselves.
    pub fn systems(keys: &[&str]) -> Vec<SeedSystem> {
        keys.iter().map(|k| system(k, Some(k))).collect()
    }

    /// A snapshot of these aggregates, each measured in three rounds, one
    /// per JVM start: at its interval's low end, median and high end (or
    /// its median three times), with its flags; a client-bound one with
    /// its server at half its cores and no server CPU figures.
    pub fn results(aggs: Vec<Aggregate>) -> Results {
        let cells = aggs
            .iter()
            .flat_map(|a| {
                let m = a.throughput_median;
                let values = a.throughput_ci.map_or([m; 3], |c| [c.low, m, c.high]);
                values.into_iter().enumerate().map(move |(i, t)| {
                    let mut c = cell(&a.server, i as u32 + 1, t);
                    c.variant.clone_from(&a.variant);
                    c.scenario.clone_from(&a.scenario);
                    c.concurrency = a.concurrency;
                    c.calls_ok = a.calls_ok;
                    c.calls_failed = a.calls_failed;
                    c.flags.clone_from(&a.cell_flags);
                    if a.cell_flags.contains(&CellFlag::ClientBound) {
                        c.limit = Some(Limit {
                            side: LimitSide::Client,
                            server_busy: Some(0.5),
                            client_busy: Some(0.97),
                            threshold: 0.9,
                        });
                        c.server_cost = None;
                    }
                    c
                })
            })
            .collect();
        Results {
            schema_version: 1,
            complete: true,
            cells,
            aggregates: aggs,
            ..Results::empty()
        }
    }

    pub fn repro(
        claims: Vec<SeedClaim>,
        systems: Vec<SeedSystem>,
        cells: Vec<PublishedCell>,
    ) -> Reproduction {
        Reproduction {
            seed: "t".into(),
            title: "t".into(),
            source: "s".into(),
            notes: Vec::new(),
            deviations: Vec::new(),
            systems,
            cells,
            claims,
            ..Reproduction::default()
        }
    }

    /// The seeds' plan's rules: α 0.05, floor 5 %, magnitude ±25 %,
    /// equivalence ±10 %.
    pub fn rules() -> Rules {
        Rules {
            alpha: 0.05,
            noise_floor: 0.05,
            magnitude_tolerance: 0.25,
            equivalence_tolerance: 0.10,
            plan: Some("t@00000000".into()),
        }
    }

    pub fn template() -> Cell {
        let text = std::fs::read_to_string(crate::fixture::results_json()).unwrap();
        let r: Results = serde_json::from_str(&text).unwrap();
        r.cells[0].clone()
    }

    /// A server-bound cell of `server` in round `round` (server 95 %,
    /// client 50 % busy, one core busy).
    pub fn cell(server: &str, round: u32, tput: f64) -> Cell {
        let mut c = template();
        c.server = server.into();
        c.variant = "v".into();
        c.scenario = "s".into();
        c.concurrency = 1;
        c.repetition = round;
        c.round_position = Some(1);
        // Rounds dealt over three JVM starts.
        c.start = Some((round.max(1) - 1) % 3 + 1);
        c.throughput_per_s = tput;
        c.report.throughput_per_s = tput;
        c.calls_ok = 10_000;
        c.calls_failed = 0;
        c.flags = vec![CellFlag::ServerBound];
        c.limit = Some(Limit {
            side: LimitSide::Server,
            server_busy: Some(0.95),
            client_busy: Some(0.5),
            threshold: 0.9,
        });
        c.server_cost = Some(Cost {
            cpu_cores_busy: 1.0,
            cpu_us_per_call: 1e6 / tput,
            ..Cost::default()
        });
        c
    }

    /// Rounds of `server` at these throughputs.
    pub fn rounds(server: &str, tputs: &[f64]) -> Vec<Cell> {
        tputs
            .iter()
            .enumerate()
            .map(|(i, t)| cell(server, i as u32 + 1, *t))
            .collect()
    }

    pub fn run(cells: Vec<Cell>) -> Results {
        let mut r = results(rpclab_model::aggregate::aggregate(&cells, 0.1));
        r.cells = cells;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::*;
    use super::*;
    use rpclab_model::result::{Limit, SeedClaim};

    fn verdict(res: &Results, claim: SeedClaim, keys: &[&str]) -> ClaimVerdict {
        let systems = keys.iter().map(|k| system(k, Some(k))).collect();
        decide(res, &repro(vec![claim], systems, Vec::new()), &rules())
            .verdicts
            .remove(0)
    }

    #[test]
    fn a_pair_is_taken_round_by_round() {
        // The host drifts by ±20 % from round to round, on both alike: the
        // per-round ratio stays 1.2 while the medians' corners would span
        // [0.9, 1.6].
        let x = [1000.0, 1200.0, 900.0, 1100.0, 1000.0, 1050.0];
        let y: Vec<f64> = x.iter().map(|t| t / 1.2).collect();
        let mut cells = rounds("x", &x);
        cells.extend(rounds("y", &y));
        let v = verdict(&run(cells), ratio_claim("x", "y", 1.2), &["x", "y"]);
        let p = &v.pairs[0];
        assert!(p.within_rounds && p.rounds == 6, "{p:?}");
        assert!((p.measured - 1.2).abs() < 1e-9 && (p.low.unwrap() - 1.2).abs() < 1e-9);
        assert!((p.coverage.unwrap() - 0.95).abs() < 1e-9);
        assert_eq!(p.starts.len(), 3);
        assert_eq!(v.plan.as_deref(), Some("t@00000000"));
        assert_eq!((p.direction, p.decided), (Direction::Holds, true));
        assert_eq!(p.basis, Basis::Trustworthy);
        assert!(v.decided && v.label == "holds; magnitude matches", "{v:?}");
        assert_says(&v.detail, "1.20× [1.20, 1.20] over 6 rounds in 3 starts");
    }

    #[test]
    fn host_busy_and_failed_rounds_are_left_out_and_said() {
        let mut cells = rounds("x", &[1200.0; 7]);
        cells.extend(rounds("y", &[1000.0; 7]));
        cells[2].flags.push(CellFlag::HostBusy);
        cells[7 + 4].calls_ok = 0;
        let v = verdict(&run(cells), ratio_claim("x", "y", 1.2), &["x", "y"]);
        let p = &v.pairs[0];
        assert_eq!(p.rounds, 5, "{p:?}");
        assert_eq!(
            p.left_out,
            ["round 3: host-busy (x)", "round 5: failed (y)"],
            "{p:?}"
        );
        assert_says(
            &v.detail,
            "left out: round 3: host-busy (x), round 5: failed (y)",
        );
        // One host-busy round of seven does not make the figure untrustworthy.
        assert_eq!(p.basis, Basis::Trustworthy);
    }

    #[test]
    fn host_busy_on_most_rounds_makes_a_figure_indicative() {
        let mut cells = rounds("x", &[1200.0; 6]);
        cells.extend(rounds("y", &[1000.0; 6]));
        for c in &mut cells[..4] {
            c.flags.push(CellFlag::HostBusy);
        }
        let v = verdict(&run(cells), ratio_claim("x", "y", 1.2), &["x", "y"]);
        assert_eq!(v.pairs[0].basis, Basis::Indicative);
        assert!(!v.decided && v.checked == 0, "{v:?}");
        assert_says(&v.detail, "host busy: host-busy on most rounds");
    }

    #[test]
    fn a_pair_measured_in_one_jvm_start_has_no_interval_and_is_not_decided() {
        let mut cells = rounds("x", &[1200.0; 9]);
        cells.extend(rounds("y", &[1000.0; 9]));
        for c in &mut cells {
            c.start = None;
        }
        let v = verdict(&run(cells), ratio_claim("x", "y", 1.2), &["x", "y"]);
        let p = &v.pairs[0];
        assert_eq!((p.low, p.high, p.decided), (None, None, false), "{p:?}");
        assert!((p.measured - 1.2).abs() < 1e-9);
        assert_says(
            p.why_undecided.as_deref().unwrap(),
            "measured in one JVM start: the variation between starts is unknown",
        );
        assert_eq!(v.label, "undecided (0 of 1 pairs decided)");
    }

    #[test]
    fn magnitude_is_three_way_and_a_wider_interval_never_matches_more_easily() {
        use Magnitude::*;
        // Band around 1.5: [1.2, 1.875].
        assert_eq!(magnitude(1.5, Some((1.3, 1.6)), 0.25), Matches);
        assert_eq!(magnitude(1.5, Some((1.03, 1.15)), 0.25), Differs);
        // Seed 001's c5 on another machine: 1.09 [1.03, 1.54] against 1.5.
        assert_eq!(magnitude(1.5, Some((1.03, 1.54)), 0.25), Undecided);
        // The same median with a wider interval: still not a match.
        assert_eq!(magnitude(1.5, Some((0.9, 2.5)), 0.25), Undecided);
        assert_eq!(magnitude(1.5, None, 0.25), Undecided);
    }

    #[test]
    fn the_bands_decide_or_leave_undecided() {
        use Direction::*;
        assert_eq!(band(1.06, 1.3, 1.1, 0.05), (Holds, true));
        assert_eq!(band(0.7, 0.95, 0.8, 0.05), (Reversed, true));
        assert_eq!(band(0.96, 1.04, 1.0, 0.05), (WithinNoise, true));
        // Clear of 1: the median says how far (seed 004's motan over dubbo).
        assert_eq!(band(1.01, 1.2, 1.1, 0.05), (Holds, true));
        assert_eq!(band(0.84, 0.97, 0.92, 0.05), (Reversed, true));
        assert_eq!(band(1.01, 1.08, 1.03, 0.05), (WithinNoise, true));
        // Holding 1 and reaching past the band: the median's leaning, undecided.
        assert_eq!(band(0.9, 1.0, 0.97, 0.05), (WithinNoise, false));
        assert_eq!(band(0.89, 1.035, 0.92, 0.05), (Reversed, false));
        assert_eq!(band(0.5, 2.0, 0.8, 0.05), (Reversed, false));
        assert_eq!(band(f64::NAN, 1.0, 1.0, 0.05), (NotComparable, false));
        assert_eq!(equivalence_band(0.92, 1.08, 1.0, 0.1), (Holds, true));
        assert_eq!(equivalence_band(1.15, 1.3, 1.2, 0.1), (DoesNotHold, true));
        assert_eq!(equivalence_band(0.5, 0.8, 0.7, 0.1), (DoesNotHold, true));
        assert_eq!(equivalence_band(1.05, 1.2, 1.12, 0.1), (DoesNotHold, false));
        assert_eq!(equivalence_band(0.85, 1.05, 0.95, 0.1), (Holds, false));
    }

    #[test]
    fn an_interval_across_a_band_edge_leaves_the_claim_undecided_and_says_why() {
        let mut cells = rounds("x", &[1000.0, 1100.0, 1040.0, 980.0, 1200.0, 1000.0]);
        cells.extend(rounds("y", &[1000.0; 6]));
        let v = verdict(&run(cells), ratio_claim("x", "y", 1.1), &["x", "y"]);
        let p = &v.pairs[0];
        assert!(!p.decided && p.basis == Basis::Trustworthy, "{p:?}");
        assert_eq!(v.label, "undecided (0 of 1 pairs decided)");
        assert_eq!(v.direction, Direction::NotComparable);
        let why = p.why_undecided.as_deref().unwrap();
        assert!(
            why.contains("reaches across an edge of the 5 % noise band")
                && why.contains("x: server 95 %, client 50 % busy"),
            "{why}"
        );
        assert_says(&v.detail, "(undecided, leaning");
        // Level within the band on every round: decided, within noise.
        let mut cells = rounds("x", &[1010.0, 990.0, 1020.0, 1000.0, 1030.0, 1000.0]);
        cells.extend(rounds("y", &[1000.0; 6]));
        let v = verdict(&run(cells), ratio_claim("x", "y", 1.1), &["x", "y"]);
        assert_eq!((v.direction, v.decided), (Direction::WithinNoise, true));
    }

    /// `x` client-bound (client 97 %) with its server at `server_busy`, on
    /// `cores` busy cores.
    fn client_bound(mut c: Cell, server_busy: f64, cores: f64) -> Cell {
        c.flags = vec![CellFlag::ClientBound];
        c.limit = Some(Limit {
            side: LimitSide::Client,
            server_busy: Some(server_busy),
            client_busy: Some(0.97),
            threshold: 0.9,
        });
        c.server_cost.as_mut().unwrap().cpu_cores_busy = cores;
        c
    }

    #[test]
    fn a_client_bound_figure_with_room_on_its_server_is_compared_per_server_core() {
        // x: 1000 calls/s on 0.6 cores (1667 per core); y: 1200 on 1 core.
        let mut cells: Vec<Cell> = rounds("x", &[1000.0; 6])
            .into_iter()
            .map(|c| client_bound(c, 0.6, 0.6))
            .collect();
        cells.extend(rounds("y", &[1200.0; 6]));
        let v = verdict(&run(cells), ratio_claim("x", "y", 1.4), &["x", "y"]);
        let p = &v.pairs[0];
        assert_eq!(p.basis, Basis::PerServerCore);
        assert!((p.measured - 1000.0 / 0.6 / 1200.0).abs() < 1e-9, "{p:?}");
        assert_eq!((p.direction, p.decided), (Direction::Holds, true));
        assert_eq!(v.basis, Some(Basis::PerServerCore));
        assert_says(&v.detail, "x over y per server core 1.39×");
        // With its server full too, the engine's rule: server-bound, its capacity.
        let mut cells: Vec<Cell> = rounds("x", &[1000.0; 6])
            .into_iter()
            .map(|c| client_bound(c, 0.95, 1.0))
            .collect();
        cells.extend(rounds("y", &[800.0; 6]));
        let v = verdict(&run(cells), ratio_claim("x", "y", 1.25), &["x", "y"]);
        assert_eq!(v.pairs[0].basis, Basis::Trustworthy);
        assert!(v.decided, "{v:?}");
    }

    #[test]
    fn other_caveats_are_indicative_and_name_the_figure_the_flag_and_the_busy_shares() {
        // Not steady in most rounds (one round's is the window's accident,
        // not the aggregate's: `aggregate::carried`).
        let mut cells = rounds("x", &[1500.0; 6]);
        for c in &mut cells[..4] {
            c.flags.push(CellFlag::NotSteady);
        }
        cells.extend(rounds("y", &[1000.0; 6]));
        let v = verdict(&run(cells), ratio_claim("x", "y", 1.5), &["x", "y"]);
        let p = &v.pairs[0];
        assert_eq!((p.basis, p.decided), (Basis::Indicative, false));
        assert_eq!(v.basis, Some(Basis::Indicative));
        assert_eq!(
            p.why_undecided.as_deref(),
            Some("x 1500 calls/s (unsteady: not-steady; server 95 %, client 50 % busy)")
        );
        assert_says(&v.detail, "indicative 1.50×");
    }

    #[test]
    fn a_latency_bound_pair_is_host_dependent_with_its_server_cpu_ratio() {
        let neither = |mut c: Cell| {
            c.flags.clear();
            c.limit.as_mut().unwrap().side = LimitSide::Neither;
            c
        };
        let mut cells: Vec<Cell> = rounds("x", &[2000.0; 6]).into_iter().map(neither).collect();
        cells.extend(rounds("y", &[1000.0; 6]).into_iter().map(neither));
        let v = verdict(&run(cells), ratio_claim("x", "y", 2.0), &["x", "y"]);
        let p = &v.pairs[0];
        assert!(p.host_dependent && p.decided, "{p:?}");
        assert_eq!(p.basis, Basis::Trustworthy);
        // 500 µs per call against 1000: x is twice as cheap.
        assert!((p.server_cpu.as_ref().unwrap().median - 2.0).abs() < 1e-9);
        assert!(
            v.detail.contains("host-dependent: latency-bound")
                && v.detail.contains("server CPU per call x over y 2.00×"),
            "{}",
            v.detail
        );
    }

    #[test]
    fn cells_not_in_rounds_give_the_ratio_of_medians_without_an_interval() {
        let mut cells = rounds("x", &[1200.0, 1300.0, 1250.0]);
        cells.extend(rounds("y", &[1000.0, 1050.0, 1100.0]));
        for c in &mut cells {
            c.round_position = None;
        }
        let v = verdict(&run(cells), ratio_claim("x", "y", 1.2), &["x", "y"]);
        let p = &v.pairs[0];
        assert!(!p.within_rounds && !p.decided, "{p:?}");
        assert!((p.measured - 1250.0 / 1050.0).abs() < 1e-9);
        assert_eq!((p.low, p.high), (None, None));
        assert_says(
            p.why_undecided.as_deref().unwrap(),
            "not measured in rounds over several JVM starts",
        );
    }

    #[test]
    fn a_top_claim_with_unused_outsiders_reads_partly_checked() {
        // Seed 002's rmi-fastest: rmi against hessian decided, two outsiders unsteady.
        let mut cells = rounds("rmi", &[1200.0; 6]);
        cells.extend(rounds("hessian", &[1000.0; 6]));
        for k in ["ws", "cxf"] {
            let mut r = rounds(k, &[500.0; 6]);
            for c in &mut r[..4] {
                c.flags.push(CellFlag::NotSteady);
            }
            cells.extend(r);
        }
        let top = SeedClaim {
            id: "rmi-fastest".into(),
            text: String::new(),
            check: ClaimCheck::Top {
                measure: Measure::Throughput,
                scenario: "s".into(),
                levels: vec![1],
                systems: vec!["rmi".into()],
                among: ["rmi", "hessian", "ws", "cxf"].map(String::from).to_vec(),
            },
        };
        let v = verdict(&run(cells), top, &["rmi", "hessian", "ws", "cxf"]);
        assert_eq!((v.checked, v.of, v.decided), (1, 3, false), "{v:?}");
        assert_eq!(v.label, "partly checked (1 of 3 pairs): holds");
        assert_eq!(v.basis, Some(Basis::Indicative));
    }

    #[test]
    fn every_measure_is_looked_up_with_the_published_call_count() {
        let res = results(vec![agg("a", 5000.0, 0.0, 10)]);
        let sys = vec![system("a", Some("a"))];
        let all = [
            (Measure::Throughput, 5000.0),
            (Measure::TotalSeconds, 60.0),
            (Measure::TotalMs, 60_000.0),
            (Measure::MsPerCall, 0.2),
            (Measure::LatencyMeanMs, 2.0),
            (Measure::LatencyMinMs, 0.1),
            (Measure::LatencyMaxMs, 9.0),
            (Measure::LatencyP50Ms, 1.5),
            (Measure::LatencyP90Ms, 3.0),
            (Measure::LatencyP95Ms, 4.0),
            (Measure::LatencyP99Ms, 5.0),
            (Measure::Samples, 1010.0),
            (Measure::Failed, 10.0),
            (Measure::ErrorPercent, 1000.0 / 1010.0),
            (Measure::ReceivedKbPerS, 200.0 * 5000.0 / 1024.0),
            (Measure::SentKbPerS, 100.0 * 5000.0 / 1024.0),
        ];
        let cells: Vec<PublishedCell> = all
            .iter()
            .map(|(m, _)| PublishedCell {
                system: "a".into(),
                value: Some(1.0),
                measure: Some(*m),
                total_calls: Some(300_000),
                scenario: Some("s".into()),
                concurrency: Some(1),
                ..PublishedCell::default()
            })
            .collect();
        let rules = rules();
        let lookup = Lookup {
            results: &res,
            systems: &sys,
            cells: &cells,
            rules: &rules,
            family: 1,
        };
        for (m, want) in all {
            let got = lookup
                .figure("a", "s", 1, m)
                .unwrap_or_else(|e| panic!("{m:?}: {e}"));
            assert!(
                (got.value - want).abs() < 1e-9,
                "{m:?}: {} ≠ {want}",
                got.value
            );
        }
        // Without a published call count a total cannot be derived, and says why.
        let bare = Lookup {
            cells: &[],
            ..lookup
        };
        let why = bare
            .figure("a", "s", 1, Measure::TotalSeconds)
            .err()
            .unwrap();
        assert!(why.contains("no published call count"), "{why}");
        assert!(bare.figure("a", "s", 1, Measure::Throughput).is_ok());
    }
}
