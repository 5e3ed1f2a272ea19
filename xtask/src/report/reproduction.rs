//! Reproduction verdicts, as pure functions of a snapshot's results: every
//! published figure beside the lab's measurement of the same cell, and
//! every claim of the post checked against the measured ratios and
//! rankings (`lab reproduce` is the command that runs a seed).
//!
//! Absolute numbers from 2011–2019 hardware cannot match today's, so the
//! per-cell ratio (measured / published) is shown for orientation only; the
//! verdicts look at what can carry over between machines: which system is
//! faster, and by roughly how much. A difference smaller than the
//! repetitions' spread is "within noise", never a verdict either way.
//!
//! Everything here is computed from a snapshot's `results.json` alone (its
//! cells, aggregates and the [`Reproduction`] it carries), so `lab report`
//! re-renders an old reproduction exactly.

use crate::report::format::fmt_value;
use rpclab_model::result::{
    Aggregate, ClaimCheck, Measure, PublishedCell, Reproduction, Results, SeedSystem,
};
use std::fmt::Write as _;
use tabled::builder::Builder;
use tabled::settings::Style;

/// Relative differences below this are never told apart, whatever the
/// measured spread: a single repetition has no spread to go by.
pub const NOISE_FLOOR: f64 = 0.05;

/// How many standard deviations (as CV) a difference must exceed.
pub const NOISE_SIGMAS: f64 = 2.0;

/// Why a level has no measurement though its scenario ran.
const NOT_THIS_LEVEL: &str = "not run under this snapshot's profile";

/// Errors of one level, said once when every system shares the reason.
fn level_errors(level: u32, errors: Vec<(String, String)>) -> Option<String> {
    if errors.is_empty() {
        return None;
    }
    let first = &errors[0].1;
    Some(
        if errors.iter().all(|(_, e)| e == first) && errors.len() > 1 {
            format!("level {level}: {first}")
        } else {
            let each: Vec<String> = errors.iter().map(|(k, e)| format!("{k} {e}")).collect();
            format!("level {level}: {}", each.join(", "))
        },
    )
}

/// A published ratio "matches" the measurement when it lies inside the
/// measured ratio's interval widened by this share on each side (the low
/// end divided by 1.25, the high end multiplied by 1.25): other hardware,
/// JVMs and years move a ratio that much without changing what it says.
/// With one repetition there is no interval, and only this widens the
/// measured ratio.
pub const MAGNITUDE_TOLERANCE: f64 = 0.25;

/// An equivalence claim ("about as fast", 差不多) holds when the measured
/// ratio is within this share of 1.
pub const EQUIVALENCE_TOLERANCE: f64 = 0.10;

/// What the lab's measurement says about a claim's direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Measured in the same direction as claimed (for an equivalence: level
    /// within the tolerance; for no-errors: no call failed).
    Holds,
    /// Measured in the opposite direction.
    Reversed,
    /// Measured, but the difference is smaller than the noise.
    WithinNoise,
    /// Measured, and false in a way that has no direction: systems claimed
    /// level are not, or calls failed where none should have.
    DoesNotHold,
    /// Not measured (a system did not run, its figure is not trustworthy,
    /// the claim is not measurable).
    NotComparable,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Reversed => "reversed",
            Verdict::WithinNoise => "within noise",
            Verdict::DoesNotHold => "does not hold",
            Verdict::NotComparable => "not comparable",
        }
    }
}

/// Whether the measured ratio bears out the published one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Magnitude {
    /// The published ratio lies inside the measured interval, widened by
    /// [`MAGNITUDE_TOLERANCE`].
    Matches,
    Differs,
}

impl Magnitude {
    pub fn label(self) -> &'static str {
        match self {
            Magnitude::Matches => "matches",
            Magnitude::Differs => "differs",
        }
    }
}

/// A claim with its verdict and the figures behind it.
#[derive(Clone, Debug)]
pub struct ClaimOutcome {
    pub id: String,
    pub text: String,
    /// The direction, over the parts that were checked.
    pub verdict: Verdict,
    /// Over the checked parts with a published ratio: differs when any does;
    /// None when no checked part has a published ratio.
    pub magnitude: Option<Magnitude>,
    /// Parts checked (measured and trustworthy on every side), of `parts`.
    pub checked: usize,
    /// Parts measured, but on a figure that is not trustworthy (unsteady,
    /// client-bound, noisy, too few calls): their ratio is shown as
    /// indicative and decides nothing.
    pub indicative: usize,
    pub parts: usize,
    /// What a part is: `pairs`, `levels`, `systems`.
    pub unit: &'static str,
    pub detail: String,
    /// The ratios of the checked parts, measured and published.
    pub ratios: Vec<RatioFigure>,
}

impl ClaimOutcome {
    /// Some parts were checked, not all.
    pub fn partly_checked(&self) -> bool {
        self.checked > 0 && self.checked < self.parts
    }

    /// The verdict in words: direction, how much of the claim it covers,
    /// and the magnitude, e.g. `partly checked (2 of 3 pairs): holds;
    /// magnitude differs`.
    pub fn label(&self) -> String {
        if self.checked == 0 && self.indicative > 0 {
            return format!(
                "undecided: {} of {} {} measured on untrustworthy figures (ratios below are indicative)",
                self.indicative, self.parts, self.unit
            );
        }
        if self.checked == 0 {
            return Verdict::NotComparable.label().to_owned();
        }
        let mut s = if self.partly_checked() {
            format!(
                "partly checked ({} of {} {}): {}",
                self.checked,
                self.parts,
                self.unit,
                self.verdict.label()
            )
        } else {
            self.verdict.label().to_owned()
        };
        if let Some(m) = self.magnitude {
            s.push_str("; magnitude ");
            s.push_str(m.label());
        }
        s
    }
}

/// One published figure next to its measurement.
#[derive(Clone, Debug)]
pub struct CellComparison {
    pub published: PublishedCell,
    /// The measured value in the published unit.
    pub measured: Option<f64>,
    /// measured / published.
    pub ratio: Option<f64>,
    /// Why there is no measured value.
    pub missing: Option<String>,
    /// Why the measured value is not trustworthy (`lower bound`, `unsteady`).
    pub caveats: Vec<&'static str>,
}

/// A seed table in its own layout: rows × columns of comparisons.
#[derive(Clone, Debug)]
pub struct ComparisonTable {
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<(String, Vec<Option<CellComparison>>)>,
}

/// Everything a reproduction report shows.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub reproduction: Reproduction,
    /// System key → why its stand-in's run failed (from the snapshot's errors).
    pub run_errors: Vec<(String, String)>,
    pub tables: Vec<ComparisonTable>,
    pub claims: Vec<ClaimOutcome>,
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

/// The relative noise of a value derived from an aggregate: its
/// throughput CV over repetitions (latencies have no per-repetition spread
/// in the aggregate, so throughput's stands in for them).
fn noise(a: &Aggregate) -> f64 {
    if a.repetitions > 1 {
        a.throughput_cv
    } else {
        0.0
    }
}

/// Measures computed from the throughput alone, so that the median
/// throughput's interval carries over to them.
fn throughput_based(m: Measure) -> bool {
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

/// A measured value of one system, in a claim's measure.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub value: f64,
    /// From the median throughput's confidence interval (see
    /// [`derive_interval`]); None with one repetition.
    pub interval: Option<(f64, f64)>,
    /// Relative noise (throughput CV) for the direction's band.
    pub noise: f64,
    pub repetitions: u32,
    /// Why the figure cannot decide a verdict (see [`Aggregate::caveats`]).
    pub caveats: Vec<&'static str>,
}

impl Measured {
    fn shown(&self, key: &str, measure: Measure) -> String {
        format!(
            "{key} {} {}{}",
            fmt_value(self.value),
            unit(measure),
            if self.caveats.is_empty() {
                String::new()
            } else {
                format!(" ({})", self.caveats.join(", "))
            }
        )
    }
}

/// `x` over `y` as a speed ratio (above 1: `x` is better) and its interval
/// from both values' intervals (the extreme corners), when either has one.
pub fn speed_ratio(x: &Measured, y: &Measured, measure: Measure) -> (f64, Option<(f64, f64)>) {
    let r = |a: f64, b: f64| {
        if measure.higher_is_better() {
            a / b
        } else {
            b / a
        }
    };
    let ratio = r(x.value, y.value);
    if x.interval.is_none() && y.interval.is_none() {
        return (ratio, None);
    }
    let (xl, xh) = x.interval.unwrap_or((x.value, x.value));
    let (yl, yh) = y.interval.unwrap_or((y.value, y.value));
    let corners = [r(xl, yl), r(xl, yh), r(xh, yl), r(xh, yh)];
    let lo = corners.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = corners.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (ratio, Some((lo, hi)))
}

/// Whether a published ratio lies inside the measured interval (the point
/// itself with one repetition) widened by [`MAGNITUDE_TOLERANCE`].
pub fn magnitude(published: f64, measured: f64, interval: Option<(f64, f64)>) -> Magnitude {
    let (lo, hi) = interval.unwrap_or((measured, measured));
    let (lo, hi) = (
        lo / (1.0 + MAGNITUDE_TOLERANCE),
        hi * (1.0 + MAGNITUDE_TOLERANCE),
    );
    if published >= lo && published <= hi {
        Magnitude::Matches
    } else {
        Magnitude::Differs
    }
}

/// A measured ratio with its interval, or the note that it has none.
fn ratio_text(ratio: f64, interval: Option<(f64, f64)>) -> String {
    match interval {
        Some((lo, hi)) => format!("{ratio:.2}× [{lo:.2}, {hi:.2}]"),
        None => format!(
            "{ratio:.2}× (1 repetition, no spread: ±{:.0} % tolerance only)",
            MAGNITUDE_TOLERANCE * 100.0
        ),
    }
}

/// A published ratio as printed (`4.7×`).
fn published_text(p: f64) -> String {
    let s = format!("{p:.2}");
    format!("{}×", s.trim_end_matches('0').trim_end_matches('.'))
}

/// Whether `better` beats `worse` on `measure`, beyond the noise of both.
/// Returns the speed ratio (>1 when `better` really is better) and the verdict.
pub fn judge(
    better: f64,
    worse: f64,
    noise_better: f64,
    noise_worse: f64,
    measure: Measure,
) -> (f64, Verdict) {
    let ratio = if measure.higher_is_better() {
        better / worse
    } else {
        worse / better
    };
    if !ratio.is_finite() || ratio <= 0.0 {
        return (ratio, Verdict::NotComparable);
    }
    let band =
        (NOISE_SIGMAS * (noise_better.powi(2) + noise_worse.powi(2)).sqrt()).max(NOISE_FLOOR);
    let verdict = if (ratio - 1.0).abs() <= band {
        Verdict::WithinNoise
    } else if ratio > 1.0 {
        Verdict::Holds
    } else {
        Verdict::Reversed
    };
    (ratio, verdict)
}

/// Whether a speed ratio says "level": within [`EQUIVALENCE_TOLERANCE`] of
/// 1 holds; outside it but with an interval reaching into the tolerance
/// band is within noise; otherwise it does not hold.
pub fn judge_equivalence(ratio: f64, interval: Option<(f64, f64)>) -> Verdict {
    if !ratio.is_finite() || ratio <= 0.0 {
        return Verdict::NotComparable;
    }
    let (lo, hi) = (1.0 - EQUIVALENCE_TOLERANCE, 1.0 + EQUIVALENCE_TOLERANCE);
    if (lo..=hi).contains(&ratio) {
        Verdict::Holds
    } else if interval.is_some_and(|(a, b)| a <= hi && b >= lo) {
        Verdict::WithinNoise
    } else {
        Verdict::DoesNotHold
    }
}

/// The direction of several checked parts as one: a reversal wins, then a
/// failure without direction, then noise; the claim holds only when every
/// checked part holds. Unchecked parts ([`Verdict::NotComparable`]) do not
/// vote, but [`ClaimOutcome::label`] says how many were checked.
pub fn combine(parts: &[Verdict]) -> Verdict {
    let measured: Vec<Verdict> = parts
        .iter()
        .copied()
        .filter(|v| *v != Verdict::NotComparable)
        .collect();
    if measured.is_empty() {
        Verdict::NotComparable
    } else if measured.contains(&Verdict::Reversed) {
        Verdict::Reversed
    } else if measured.contains(&Verdict::DoesNotHold) {
        Verdict::DoesNotHold
    } else if measured.contains(&Verdict::WithinNoise) {
        Verdict::WithinNoise
    } else {
        Verdict::Holds
    }
}

/// One part of a claim: a pair, a level or a system.
#[derive(Clone, Debug)]
struct Part {
    verdict: Verdict,
    magnitude: Option<Magnitude>,
    /// Measured on an untrustworthy figure: shown, not decided.
    indicative: bool,
    text: String,
    ratio: Option<RatioFigure>,
}

/// A ratio a claim part measured, beside the published one when the post
/// gave it (for the README's claims table).
#[derive(Clone, Debug, PartialEq)]
pub struct RatioFigure {
    /// `a over b` (a speed ratio: above 1 when `a` is faster).
    pub pair: String,
    pub level: Option<u32>,
    pub measured: f64,
    pub interval: Option<(f64, f64)>,
    pub published: Option<f64>,
}

impl RatioFigure {
    /// `1.42× [1.30, 1.55]`.
    pub fn measured_text(&self) -> String {
        match self.interval {
            Some((lo, hi)) => format!("{:.2}× [{lo:.2}, {hi:.2}]", self.measured),
            None => format!("{:.2}× (one repetition)", self.measured),
        }
    }

    /// `1.4×`, or `—` when the post gave no ratio.
    pub fn published_text(&self) -> String {
        self.published.map_or_else(|| "—".into(), published_text)
    }
}

impl Part {
    /// Says which level the part was measured at.
    fn at_level(&mut self, level: u32) {
        self.text = format!("level {level}: {}", self.text);
        if let Some(r) = &mut self.ratio {
            r.level = Some(level);
        }
    }

    fn unchecked(text: String) -> Part {
        Part {
            verdict: Verdict::NotComparable,
            magnitude: None,
            indicative: false,
            text,
            ratio: None,
        }
    }

    fn indicative(text: String) -> Part {
        Part {
            indicative: true,
            ..Part::unchecked(text)
        }
    }
}

/// A claim's parts summed up.
struct Checked {
    verdict: Verdict,
    magnitude: Option<Magnitude>,
    checked: usize,
    indicative: usize,
    parts: usize,
    unit: &'static str,
    detail: String,
    ratios: Vec<RatioFigure>,
}

impl Checked {
    /// `parts` counts every part the claim has, checked or not; `notes` are
    /// said before the parts (systems missing at a level).
    fn of(parts: Vec<Part>, total: usize, unit: &'static str, notes: Vec<String>) -> Checked {
        let verdicts: Vec<Verdict> = parts.iter().map(|p| p.verdict).collect();
        let checked = verdicts
            .iter()
            .filter(|v| **v != Verdict::NotComparable)
            .count();
        let indicative = parts.iter().filter(|p| p.indicative).count();
        let mags: Vec<Magnitude> = parts
            .iter()
            .filter(|p| p.verdict != Verdict::NotComparable)
            .filter_map(|p| p.magnitude)
            .collect();
        let magnitude = if mags.is_empty() {
            None
        } else if mags.contains(&Magnitude::Differs) {
            Some(Magnitude::Differs)
        } else {
            Some(Magnitude::Matches)
        };
        let ratios = parts
            .iter()
            .filter(|p| p.verdict != Verdict::NotComparable)
            .filter_map(|p| p.ratio.clone())
            .collect();
        let mut detail = notes;
        detail.extend(parts.into_iter().map(|p| p.text));
        Checked {
            verdict: combine(&verdicts),
            magnitude,
            checked,
            indicative,
            parts: total.max(checked + indicative),
            unit,
            detail: detail.join("; "),
            ratios,
        }
    }
}

struct Lookup<'a> {
    results: &'a Results,
    systems: &'a [SeedSystem],
    cells: &'a [PublishedCell],
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
        self.results
            .aggregates
            .iter()
            .find(|a| {
                a.server == server
                    && a.variant == variant
                    && a.scenario == scenario
                    && a.concurrency == level
            })
            .ok_or_else(|| {
                let ran_scenario =
                    self.results.aggregates.iter().any(|a| {
                        a.server == server && a.variant == variant && a.scenario == scenario
                    });
                let prefix = format!("{server}/{variant}: ");
                let failed = self
                    .results
                    .errors
                    .iter()
                    .find_map(|e| e.strip_prefix(&prefix));
                if let Some(error) = failed {
                    format!("run failed: {}", error.lines().next().unwrap_or_default())
                } else if ran_scenario {
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

    /// A system's measured value in a measure; a total over calls takes the
    /// published run's call count from the published cell of that system,
    /// scenario and level.
    fn value(&self, key: &str, scenario: &str, level: u32, m: Measure) -> Result<Measured, String> {
        let a = self.aggregate(key, scenario, level)?;
        let total_calls = self
            .published(key, scenario, level, m)
            .and_then(|c| c.total_calls);
        if matches!(m, Measure::TotalSeconds | Measure::TotalMs) && total_calls.is_none() {
            return Err(format!(
                "{key}: no published call count for a total at {scenario} level {level}"
            ));
        }
        let value = derive(a, m, total_calls)
            .ok_or_else(|| format!("{key}: no {m:?} in its measurement"))?;
        Ok(Measured {
            value,
            interval: derive_interval(a, m, total_calls).map(|(lo, hi, _)| (lo, hi)),
            noise: noise(a),
            repetitions: a.repetitions,
            caveats: a.caveats(),
        })
    }
}

/// One directional part: `ahead` is claimed better than `behind` (by
/// `published`, when the post gives a ratio). Untrustworthy figures are
/// shown with their caveat and leave the part unchecked.
fn directed(
    m: Measure,
    (ka, a): (&str, &Measured),
    (kb, b): (&str, &Measured),
    published: Option<f64>,
) -> Part {
    let name = format!("{ka} over {kb}");
    let untrusted: Vec<String> = [(ka, a), (kb, b)]
        .iter()
        .filter(|(_, x)| !x.caveats.is_empty())
        .map(|(k, x)| x.shown(k, m))
        .collect();
    if !untrusted.is_empty() {
        // Shown, so a smoke or a short run still says which way and how far
        // its figures point; never counted as a verdict.
        let (ratio, interval) = speed_ratio(a, b, m);
        let mut text = format!(
            "{name}: not checked, {}; indicative {}",
            untrusted.join(", "),
            ratio_text(ratio, interval)
        );
        if let Some(p) = published {
            text.push_str(&format!(
                " against published {} (magnitude would {})",
                published_text(p),
                match magnitude(p, ratio, interval) {
                    Magnitude::Matches => "match",
                    Magnitude::Differs => "differ",
                }
            ));
        }
        return Part::indicative(text);
    }
    let (ratio, verdict) = judge(a.value, b.value, a.noise, b.noise, m);
    if verdict == Verdict::NotComparable {
        return Part::unchecked(format!("{name}: no ratio ({ratio})"));
    }
    let (_, interval) = speed_ratio(a, b, m);
    let mut text = format!(
        "{name} {} ({})",
        ratio_text(ratio, interval),
        verdict.label()
    );
    let magnitude = published.map(|p| {
        let g = magnitude(p, ratio, interval);
        text.push_str(&format!(
            ", magnitude {}: published {}",
            g.label(),
            published_text(p)
        ));
        g
    });
    Part {
        indicative: false,
        verdict,
        magnitude,
        text,
        ratio: Some(RatioFigure {
            pair: name,
            level: None,
            measured: ratio,
            interval,
            published,
        }),
    }
}

/// The measured values of `keys` at a level: the trustworthy ones, and
/// notes for the rest (missing, or shown with their caveat).
fn measured_at<'k>(
    lookup: &Lookup,
    keys: &'k [String],
    scenario: &str,
    level: u32,
    m: Measure,
) -> (Vec<(&'k str, Measured)>, Vec<String>) {
    let mut trusted = Vec::new();
    let mut errors = Vec::new();
    let mut untrusted = Vec::new();
    for key in keys {
        match lookup.value(key, scenario, level, m) {
            Ok(v) if v.caveats.is_empty() => trusted.push((key.as_str(), v)),
            Ok(v) => untrusted.push(v.shown(key, m)),
            Err(why) => errors.push((key.clone(), why)),
        }
    }
    let mut notes: Vec<String> = level_errors(level, errors).into_iter().collect();
    if !untrusted.is_empty() {
        notes.push(format!("level {level}: not used, {}", untrusted.join(", ")));
    }
    (trusted, notes)
}

/// Compares a snapshot's measurements with the published figures it carries.
pub fn compare(results: &Results, reproduction: &Reproduction) -> Comparison {
    let lookup = Lookup {
        results,
        systems: &reproduction.systems,
        cells: &reproduction.cells,
    };
    let mut tables: Vec<ComparisonTable> = Vec::new();
    for cell in &reproduction.cells {
        let mut caveats = Vec::new();
        let (measured, missing) = match (
            &cell.unlinked,
            &cell.scenario,
            cell.concurrency,
            cell.measure,
        ) {
            (Some(why), _, _, _) => (None, Some(format!("no lab cell: {why}"))),
            (None, Some(s), Some(c), Some(m)) => match lookup.aggregate(&cell.system, s, c) {
                Ok(a) => match derive(a, m, cell.total_calls).inspect(|_| caveats = a.caveats()) {
                    Some(v) => (Some(v), None),
                    None => (None, Some("not derivable from the measurement".into())),
                },
                Err(why) => (None, Some(why)),
            },
            _ => (None, Some("no lab cell".into())),
        };
        let ratio = measured
            .zip(cell.value)
            .and_then(|(m, p)| (p != 0.0).then_some(m / p));
        let cmp = CellComparison {
            published: cell.clone(),
            measured,
            ratio,
            missing,
            caveats,
        };
        let table = match tables.iter_mut().find(|t| t.title == cell.table) {
            Some(t) => t,
            None => {
                tables.push(ComparisonTable {
                    title: cell.table.clone(),
                    columns: Vec::new(),
                    rows: Vec::new(),
                });
                tables.last_mut().expect("just pushed")
            }
        };
        let col = match table.columns.iter().position(|c| c == &cell.column) {
            Some(i) => i,
            None => {
                table.columns.push(cell.column.clone());
                for (_, cells) in &mut table.rows {
                    cells.push(None);
                }
                table.columns.len() - 1
            }
        };
        let width = table.columns.len();
        let row = match table.rows.iter().position(|(r, _)| r == &cell.row) {
            Some(i) => i,
            None => {
                table.rows.push((cell.row.clone(), vec![None; width]));
                table.rows.len() - 1
            }
        };
        table.rows[row].1[col] = Some(cmp);
    }
    let claims = reproduction
        .claims
        .iter()
        .map(|c| {
            let k = check_claim(&lookup, &c.check);
            ClaimOutcome {
                id: c.id.clone(),
                text: c.text.clone(),
                verdict: k.verdict,
                magnitude: k.magnitude,
                checked: k.checked,
                indicative: k.indicative,
                parts: k.parts,
                unit: k.unit,
                detail: k.detail,
                ratios: k.ratios,
            }
        })
        .collect();
    let run_errors = reproduction
        .systems
        .iter()
        .filter_map(|s| {
            let prefix = format!("{}/{}: ", s.server.as_deref()?, s.variant.as_deref()?);
            let e = results
                .errors
                .iter()
                .find_map(|e| e.strip_prefix(&prefix))?;
            Some((
                s.key.clone(),
                e.lines().next().unwrap_or_default().to_owned(),
            ))
        })
        .collect();
    Comparison {
        reproduction: reproduction.clone(),
        run_errors,
        tables,
        claims,
    }
}

fn check_claim(lookup: &Lookup, check: &ClaimCheck) -> Checked {
    match check {
        ClaimCheck::NotCheckable { reason } => Checked {
            verdict: Verdict::NotComparable,
            magnitude: None,
            checked: 0,
            indicative: 0,
            parts: 0,
            unit: "parts",
            detail: reason.clone(),
            ratios: Vec::new(),
        },
        ClaimCheck::Ratio {
            measure,
            scenario,
            concurrency,
            pairs,
        } => {
            let mut parts = Vec::new();
            for p in pairs {
                // A published ratio below 1 says `over` is the slower one:
                // the claim is then `under` ahead by 1 / ratio.
                let (ahead, behind, published) = if p.published < 1.0 {
                    (&p.under, &p.over, 1.0 / p.published)
                } else {
                    (&p.over, &p.under, p.published)
                };
                let a = lookup.value(ahead, scenario, *concurrency, *measure);
                let b = lookup.value(behind, scenario, *concurrency, *measure);
                parts.push(match (a, b) {
                    (Ok(a), Ok(b)) => {
                        let mut part = directed(
                            *measure,
                            (ahead, &a),
                            (behind, &b),
                            (published > 0.0).then_some(published),
                        );
                        if let Some(r) = &mut part.ratio {
                            r.level = Some(*concurrency);
                        }
                        part
                    }
                    (Err(why), _) | (_, Err(why)) => {
                        Part::unchecked(format!("{ahead} over {behind}: {why}"))
                    }
                });
            }
            Checked::of(parts, pairs.len(), "pairs", Vec::new())
        }
        ClaimCheck::Ranking {
            measure,
            scenario,
            levels,
            order,
        } => {
            let mut parts = Vec::new();
            let mut notes = Vec::new();
            for level in levels {
                let (measured, level_notes) =
                    measured_at(lookup, order, scenario, *level, *measure);
                notes.extend(level_notes);
                for w in measured.windows(2) {
                    let ((ka, a), (kb, b)) = (&w[0], &w[1]);
                    let published = lookup.published_ratio(ka, kb, scenario, *level, *measure);
                    let mut part = directed(*measure, (ka, a), (kb, b), published);
                    part.at_level(*level);
                    parts.push(part);
                }
            }
            let total = order.len().saturating_sub(1) * levels.len();
            Checked::of(parts, total, "pairs", notes)
        }
        ClaimCheck::Top {
            measure,
            scenario,
            levels,
            systems,
            among,
        } => extremes(lookup, *measure, scenario, levels, systems, among, false),
        ClaimCheck::Bottom {
            measure,
            scenario,
            levels,
            systems,
            among,
        } => extremes(lookup, *measure, scenario, levels, systems, among, true),
        ClaimCheck::Equivalent {
            measure,
            scenario,
            levels,
            systems,
            behind,
        } => {
            let mut parts = Vec::new();
            let mut notes = Vec::new();
            for level in levels {
                let mut keys = systems.clone();
                keys.extend(behind.iter().cloned());
                let (measured, level_notes) =
                    measured_at(lookup, &keys, scenario, *level, *measure);
                notes.extend(level_notes);
                let get = |k: &str| measured.iter().find(|(x, _)| *x == k).map(|(_, v)| v);
                let Some(reference) = systems.first() else {
                    continue;
                };
                for other in &systems[1..] {
                    let (Some(r), Some(o)) = (get(reference), get(other)) else {
                        continue;
                    };
                    let (ratio, interval) = speed_ratio(o, r, *measure);
                    let verdict = judge_equivalence(ratio, interval);
                    let mut text = format!(
                        "level {level}: {other} / {reference} {} ({}: level within ±{:.0} %)",
                        ratio_text(ratio, interval),
                        verdict.label(),
                        EQUIVALENCE_TOLERANCE * 100.0
                    );
                    let published =
                        lookup.published_ratio(other, reference, scenario, *level, *measure);
                    let magnitude = published.map(|p| {
                        let g = magnitude(p, ratio, interval);
                        text.push_str(&format!(
                            ", magnitude {}: published {}",
                            g.label(),
                            published_text(p)
                        ));
                        g
                    });
                    parts.push(Part {
                        indicative: false,
                        verdict,
                        magnitude,
                        text,
                        ratio: Some(RatioFigure {
                            pair: format!("{other} over {reference}"),
                            level: Some(*level),
                            measured: ratio,
                            interval,
                            published,
                        }),
                    });
                }
                for leader in behind {
                    for member in systems {
                        let (Some(l), Some(x)) = (get(leader), get(member)) else {
                            continue;
                        };
                        let published =
                            lookup.published_ratio(leader, member, scenario, *level, *measure);
                        let mut part = directed(*measure, (leader, l), (member, x), published);
                        part.at_level(*level);
                        parts.push(part);
                    }
                }
            }
            let per_level = systems.len().saturating_sub(1) + behind.len() * systems.len();
            Checked::of(parts, per_level * levels.len(), "pairs", notes)
        }
        ClaimCheck::NoErrors { scenario, systems } | ClaimCheck::Fails { scenario, systems } => {
            // no-errors holds when no call failed, fails when some did.
            let expect_failures = matches!(check, ClaimCheck::Fails { .. });
            let mut parts = Vec::new();
            for key in systems {
                let aggs: Vec<&Aggregate> = match lookup.system(key) {
                    Some(SeedSystem {
                        server: Some(server),
                        variant: Some(variant),
                        ..
                    }) => lookup
                        .results
                        .aggregates
                        .iter()
                        .filter(|a| {
                            &a.server == server && &a.variant == variant && &a.scenario == scenario
                        })
                        .collect(),
                    Some(SeedSystem {
                        not_run: Some(_), ..
                    }) => {
                        parts.push(Part::unchecked(format!("{key} not run (see systems)")));
                        continue;
                    }
                    _ => Vec::new(),
                };
                if aggs.is_empty() {
                    parts.push(Part::unchecked(format!("{key}: not measured")));
                    continue;
                }
                let failed: u64 = aggs.iter().map(|a| a.calls_failed).sum();
                let calls: u64 = aggs.iter().map(|a| a.calls_ok + a.calls_failed).sum();
                parts.push(Part {
                    indicative: false,
                    verdict: if (failed > 0) == expect_failures {
                        Verdict::Holds
                    } else {
                        Verdict::DoesNotHold
                    },
                    magnitude: None,
                    text: format!("{key}: {failed} of {calls} calls failed"),
                    ratio: None,
                });
            }
            Checked::of(parts, systems.len(), "systems", Vec::new())
        }
    }
}

/// Checks that `systems` are the best (or, with `worst`, the worst) of
/// `among` at each level: the weakest member of the claimed group must beat
/// the strongest outsider beyond the noise. A level is checked when every
/// member of the group has a trustworthy figure and at least one outsider
/// does; outsiders without one are named.
fn extremes(
    lookup: &Lookup,
    measure: Measure,
    scenario: &str,
    levels: &[u32],
    systems: &[String],
    among: &[String],
    worst: bool,
) -> Checked {
    let mut parts = Vec::new();
    let mut notes = Vec::new();
    for level in levels {
        let (measured, level_notes) = measured_at(lookup, among, scenario, *level, measure);
        notes.extend(level_notes);
        let (group, rest): (Vec<_>, Vec<_>) = measured
            .iter()
            .partition(|(k, _)| systems.iter().any(|s| s == k));
        if group.len() < systems.len() || rest.is_empty() {
            parts.push(Part::unchecked(format!(
                "level {level}: not checked, {}",
                if group.len() < systems.len() {
                    "a claimed system has no trustworthy figure"
                } else {
                    "no other system has a trustworthy figure"
                }
            )));
            continue;
        }
        // "Better" in the claim's sense: for a bottom claim, worse.
        let ahead = |x: f64, y: f64| (x > y) == (measure.higher_is_better() != worst);
        let weakest = group
            .iter()
            .copied()
            .reduce(|acc, x| {
                if ahead(acc.1.value, x.1.value) {
                    x
                } else {
                    acc
                }
            })
            .expect("not empty");
        let strongest = rest
            .iter()
            .copied()
            .reduce(|acc, x| {
                if ahead(x.1.value, acc.1.value) {
                    x
                } else {
                    acc
                }
            })
            .expect("not empty");
        let (a, b) = if worst {
            (strongest, weakest)
        } else {
            (weakest, strongest)
        };
        let published = lookup.published_ratio(a.0, b.0, scenario, *level, measure);
        let mut part = directed(measure, (a.0, &a.1), (b.0, &b.1), published);
        part.at_level(*level);
        parts.push(part);
    }
    Checked::of(parts, levels.len(), "levels", notes)
}

/// A system's line in the systems table: not run (why), run failed (why),
/// or run, with how the stand-in differs.
pub fn system_status(cmp: &Comparison, s: &SeedSystem) -> String {
    let failed = cmp.run_errors.iter().find(|(k, _)| k == &s.key);
    match (&s.not_run, failed, &s.note) {
        (Some(why), _, _) => format!("not run: {why}"),
        (None, Some((_, e)), _) => format!("run failed: {e}"),
        (None, None, Some(note)) => format!("run ({note})"),
        (None, None, None) => "run".into(),
    }
}

/// The text of one comparison cell (published, measured, ratio).
fn cell_lines(c: &CellComparison) -> [String; 3] {
    let p = &c.published;
    let caveat = if c.caveats.is_empty() {
        String::new()
    } else {
        format!(" ({})", c.caveats.join(", "))
    };
    let published = match p.value {
        Some(_) => format!("pub {}", p.raw.trim()),
        None => format!("pub {} (failed)", p.raw.trim()),
    };
    let measured = match (c.measured, &c.missing) {
        (Some(m), _) if p.unit == "count" => format!("lab {m:.0}{caveat}"),
        (Some(m), _) => format!("lab {} {}{caveat}", fmt_value(m), p.unit),
        (None, Some(why)) if why.starts_with("not run") => "lab not run".into(),
        (None, Some(why)) if why.starts_with("run failed") => "lab run failed".into(),
        (None, _) => "lab —".into(),
    };
    let ratio = c
        .ratio
        .map_or_else(|| " ".to_owned(), |r| format!("×{}", fmt_value(r)));
    [published, measured, ratio]
}

/// The reproduction as text: the seed's tables, the systems not run and
/// why, the claims and their verdicts, and the notes.
pub fn render(cmp: &Comparison, markdown: bool) -> String {
    let r = &cmp.reproduction;
    let mut out = String::new();
    let h = |level: usize| {
        if markdown {
            "#".repeat(level) + " "
        } else {
            String::new()
        }
    };
    let _ = writeln!(out, "{}Reproduction of seed {}: {}", h(2), r.seed, r.title);
    let _ = writeln!(out, "\nSource: {}", r.source);
    let _ = writeln!(
        out,
        "Each cell: the published figure, the lab's figure in the same unit, and lab / published. \
         Absolute figures come from other hardware; compare ratios and rankings (claims below).\n"
    );
    let _ = writeln!(out, "{}Systems", h(3));
    let mut b = Builder::default();
    b.push_record(["system", "published as", "lab stand-in", "status"]);
    for s in &r.systems {
        let standin = match (&s.server, &s.variant) {
            (Some(server), Some(variant)) => format!("{server} {variant}"),
            _ => "—".into(),
        };
        let status = system_status(cmp, s);
        b.push_record([s.key.clone(), s.published_as.clone(), standin, status]);
    }
    out.push_str(&style(b, markdown, &[(1, 32), (3, 80)]));
    out.push_str("\n\n");
    for t in &cmp.tables {
        let _ = writeln!(out, "{}{}\n", h(3), t.title);
        let mut b = Builder::default();
        let mut header = vec![String::new()];
        header.extend(t.columns.iter().cloned());
        b.push_record(header);
        for (row, cells) in &t.rows {
            let mut rec = vec![row.clone()];
            for c in cells {
                rec.push(match c {
                    Some(c) => {
                        let lines = cell_lines(c);
                        if markdown {
                            lines.join("<br>")
                        } else {
                            lines.join("\n")
                        }
                    }
                    None => String::new(),
                });
            }
            b.push_record(rec);
        }
        out.push_str(&style(b, markdown, &[]));
        out.push_str("\n\n");
    }
    let missing = unmeasured(cmp);
    if !missing.is_empty() {
        let _ = writeln!(out, "{}Published figures without a measured twin\n", h(3));
        for (why, n) in &missing {
            let _ = writeln!(out, "- {n} figure{}: {why}", if *n == 1 { "" } else { "s" });
        }
        out.push('\n');
    }
    let _ = writeln!(out, "{}Claims\n", h(3));
    let mut b = Builder::default();
    b.push_record(["claim", "verdict", "measured"]);
    for c in &cmp.claims {
        b.push_record([c.text.clone(), c.label(), c.detail.clone()]);
    }
    out.push_str(&style(b, markdown, &[(0, 44), (2, 80)]));
    let _ = writeln!(out, "\n\n{}\n", verdict_legend());
    if !r.deviations.is_empty() {
        let _ = writeln!(out, "{}Deviations from the post\n", h(3));
        for d in &r.deviations {
            let _ = writeln!(out, "- {d}");
        }
        out.push('\n');
    }
    if !r.notes.is_empty() {
        let _ = writeln!(out, "{}Notes\n", h(3));
        for n in &r.notes {
            let _ = writeln!(out, "- {n}");
        }
        out.push('\n');
    }
    out
}

/// The published figures with no measured value, counted by the reason
/// (not run: why, no lab cell: why, run failed), in the tables' order.
pub fn unmeasured(cmp: &Comparison) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for t in &cmp.tables {
        for (_, cells) in &t.rows {
            for c in cells.iter().flatten() {
                if c.measured.is_some() {
                    continue;
                }
                let mut why = c.missing.clone().unwrap_or_else(|| "no lab cell".into());
                // A system not run says why once, in the systems table; here
                // its reason goes with its figures.
                if let Some(not_run) = cmp
                    .reproduction
                    .systems
                    .iter()
                    .find(|s| s.key == c.published.system)
                    .and_then(|s| s.not_run.as_ref())
                {
                    why = format!("not run ({}): {not_run}", c.published.system);
                }
                match out.iter_mut().find(|(w, _)| *w == why) {
                    Some((_, n)) => *n += 1,
                    None => out.push((why, 1)),
                }
            }
        }
    }
    out
}

/// How to read a verdict, said once under the claims.
pub fn verdict_legend() -> String {
    format!(
        "Direction: holds, reversed, within noise (inside max({:.0} %, {NOISE_SIGMAS} × the combined CV)), \
         does not hold; only trustworthy figures decide (not client-bound, steady, enough calls, not noisy). \
         Magnitude: measured ratio [interval from the medians' order-statistic intervals] against the published one; \
         it matches inside the interval widened by {:.0} %. Equivalence: within ±{:.0} % of 1.",
        NOISE_FLOOR * 100.0,
        MAGNITUDE_TOLERANCE * 100.0,
        EQUIVALENCE_TOLERANCE * 100.0
    )
}

/// A table, in markdown or boxed for the terminal, where the given columns
/// wrap at the given widths (long reasons must not push the table off-screen).
fn style(b: Builder, markdown: bool, wrap: &[(usize, usize)]) -> String {
    let mut t = b.build();
    if markdown {
        t.with(Style::markdown());
    } else {
        t.with(Style::rounded());
        for &(column, width) in wrap {
            t.modify(
                tabled::settings::object::Columns::one(column),
                tabled::settings::Width::wrap(width).keep_words(true),
            );
        }
    }
    t.to_string()
}

#[cfg(test)]
mod tests_support {
    use super::*;
    use rpclab_model::result::{Latency, SeedClaim};

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

    pub fn results(aggs: Vec<Aggregate>) -> Results {
        Results {
            schema_version: 1,
            complete: true,
            errors: Vec::new(),
            cells: Vec::new(),
            aggregates: aggs,
            reproduction: None,
            rounds: None,
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
            verdicts: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::*;
    use super::*;
    use rpclab_model::result::{RatioPair, SeedClaim};

    #[test]
    fn derived_values_follow_the_published_meaning() {
        let a = agg("x", 5000.0, 0.0, 0);
        assert_eq!(derive(&a, Measure::Throughput, None), Some(5000.0));
        assert_eq!(derive(&a, Measure::TotalSeconds, Some(300_000)), Some(60.0));
        assert_eq!(derive(&a, Measure::TotalMs, Some(50)), Some(10.0));
        // Seed 003's "average": run time per call, not latency.
        assert_eq!(derive(&a, Measure::MsPerCall, None), Some(0.2));
        assert_eq!(derive(&a, Measure::LatencyMeanMs, None), Some(2.0));
        assert_eq!(derive(&a, Measure::TotalSeconds, None), None);
        let kb = derive(&a, Measure::ReceivedKbPerS, None).unwrap();
        assert!((kb - 200.0 * 5000.0 / 1024.0).abs() < 1e-9);
        let failing = agg("x", 5000.0, 0.0, 1000);
        assert_eq!(derive(&failing, Measure::ErrorPercent, None), Some(50.0));
    }

    #[test]
    fn judging_respects_direction_and_noise() {
        // Throughput: higher is better.
        assert_eq!(
            judge(140.0, 100.0, 0.0, 0.0, Measure::Throughput).1,
            Verdict::Holds
        );
        assert_eq!(
            judge(80.0, 100.0, 0.0, 0.0, Measure::Throughput).1,
            Verdict::Reversed
        );
        // Inside the 5% floor.
        assert_eq!(
            judge(103.0, 100.0, 0.0, 0.0, Measure::Throughput).1,
            Verdict::WithinNoise
        );
        // A 20% lead is noise when each side varies by 10%: band 2·√(0.1²+0.1²) ≈ 28%.
        assert_eq!(
            judge(120.0, 100.0, 0.1, 0.1, Measure::Throughput).1,
            Verdict::WithinNoise
        );
        assert_eq!(
            judge(140.0, 100.0, 0.1, 0.1, Measure::Throughput).1,
            Verdict::Holds
        );
        // Times: lower is better, and the ratio is a speed ratio.
        let (r, v) = judge(10.0, 20.0, 0.0, 0.0, Measure::TotalSeconds);
        assert_eq!((r, v), (2.0, Verdict::Holds));
        assert_eq!(
            judge(2.0, 1.0, 0.0, 0.0, Measure::LatencyMeanMs).1,
            Verdict::Reversed
        );
        assert_eq!(
            judge(0.0, 0.0, 0.0, 0.0, Measure::Throughput).1,
            Verdict::NotComparable
        );
    }

    #[test]
    fn combining_verdicts() {
        use Verdict::*;
        assert_eq!(combine(&[Holds, NotComparable]), Holds);
        assert_eq!(combine(&[Holds, Reversed, WithinNoise]), Reversed);
        assert_eq!(combine(&[Holds, WithinNoise]), WithinNoise);
        assert_eq!(combine(&[Holds, DoesNotHold, WithinNoise]), DoesNotHold);
        assert_eq!(combine(&[NotComparable]), NotComparable);
        assert_eq!(combine(&[]), NotComparable);
    }

    #[test]
    fn ratio_claims_hold_reverse_or_cannot_be_compared() {
        let res = results(vec![
            agg("a", 300.0, 0.01, 0),
            agg("b", 100.0, 0.01, 0),
            agg("c", 400.0, 0.01, 0),
        ]);
        let claim = |over: &str, under: &str, published: f64| SeedClaim {
            id: format!("{over}-{under}"),
            text: String::new(),
            check: ClaimCheck::Ratio {
                measure: Measure::Throughput,
                scenario: "s".into(),
                concurrency: 1,
                pairs: vec![RatioPair {
                    over: over.into(),
                    under: under.into(),
                    published,
                }],
            },
        };
        let r = repro(
            vec![
                claim("a", "b", 1.4),
                claim("a", "c", 1.4),
                claim("a", "ice", 3.0),
                claim("b", "a", 0.5),
            ],
            vec![
                system("a", Some("a")),
                system("b", Some("b")),
                system("c", Some("c")),
                system("ice", None),
            ],
            Vec::new(),
        );
        let cmp = compare(&res, &r);
        let v: Vec<Verdict> = cmp.claims.iter().map(|c| c.verdict).collect();
        assert_eq!(
            v,
            [
                Verdict::Holds,
                Verdict::Reversed,
                Verdict::NotComparable,
                Verdict::Holds
            ]
        );
        assert!(
            cmp.claims[0].detail.contains("3.00×"),
            "{}",
            cmp.claims[0].detail
        );
        assert!(
            cmp.claims[2].detail.contains("not run"),
            "{}",
            cmp.claims[2].detail
        );
    }

    #[test]
    fn rankings_top_sets_and_error_claims() {
        let res = results(vec![
            agg("a", 300.0, 0.0, 0),
            agg("b", 200.0, 0.0, 0),
            agg("c", 250.0, 0.0, 3),
        ]);
        let systems = vec![
            system("a", Some("a")),
            system("b", Some("b")),
            system("c", Some("c")),
        ];
        let claims = vec![
            SeedClaim {
                id: "rank".into(),
                text: String::new(),
                check: ClaimCheck::Ranking {
                    measure: Measure::Throughput,
                    scenario: "s".into(),
                    levels: vec![1],
                    order: vec!["a".into(), "b".into(), "c".into()],
                },
            },
            SeedClaim {
                id: "top".into(),
                text: String::new(),
                check: ClaimCheck::Top {
                    measure: Measure::Throughput,
                    scenario: "s".into(),
                    levels: vec![1],
                    systems: vec!["a".into(), "c".into()],
                    among: vec!["a".into(), "b".into(), "c".into()],
                },
            },
            SeedClaim {
                id: "bottom".into(),
                text: String::new(),
                check: ClaimCheck::Bottom {
                    measure: Measure::Throughput,
                    scenario: "s".into(),
                    levels: vec![1],
                    systems: vec!["b".into()],
                    among: vec!["a".into(), "b".into(), "c".into()],
                },
            },
            SeedClaim {
                id: "bottom-wrong".into(),
                text: String::new(),
                check: ClaimCheck::Bottom {
                    measure: Measure::Throughput,
                    scenario: "s".into(),
                    levels: vec![1],
                    systems: vec!["a".into()],
                    among: vec!["a".into(), "b".into(), "c".into()],
                },
            },
            SeedClaim {
                id: "errors".into(),
                text: String::new(),
                check: ClaimCheck::NoErrors {
                    scenario: "s".into(),
                    systems: vec!["a".into(), "c".into()],
                },
            },
        ];
        let cmp = compare(&res, &repro(claims, systems, Vec::new()));
        // b (200) is not ahead of c (250): the ranking is reversed.
        assert_eq!(cmp.claims[0].verdict, Verdict::Reversed);
        assert_eq!(
            cmp.claims[1].verdict,
            Verdict::Holds,
            "{}",
            cmp.claims[1].detail
        );
        assert_eq!(
            cmp.claims[2].verdict,
            Verdict::Holds,
            "{}",
            cmp.claims[2].detail
        );
        assert_eq!(
            cmp.claims[3].verdict,
            Verdict::Reversed,
            "{}",
            cmp.claims[3].detail
        );
        // Failed calls are not a direction: the claim does not hold.
        assert_eq!(
            cmp.claims[4].verdict,
            Verdict::DoesNotHold,
            "{}",
            cmp.claims[4].detail
        );
    }

    #[test]
    fn cells_land_in_the_seed_layout_with_ratio_and_reasons() {
        let res = results(vec![agg("a", 5000.0, 0.0, 0)]);
        let cell =
            |row: &str, system: &str, column: &str, value: f64, measure: Measure| PublishedCell {
                table: "T".into(),
                row: row.into(),
                column: column.into(),
                system: system.into(),
                metric: "tps".into(),
                unit: "calls/s".into(),
                value: Some(value),
                raw: value.to_string(),
                measure: Some(measure),
                total_calls: Some(300_000),
                scenario: Some("s".into()),
                concurrency: Some(1),
                unlinked: None,
                measured: None,
                not_run: None,
            };
        let cells = vec![
            cell("a", "a", "tps", 2500.0, Measure::Throughput),
            cell("a", "a", "total_s", 120.0, Measure::TotalSeconds),
            cell("ice", "ice", "tps", 9000.0, Measure::Throughput),
        ];
        let cmp = compare(
            &res,
            &repro(
                Vec::new(),
                vec![system("a", Some("a")), system("ice", None)],
                cells,
            ),
        );
        let t = &cmp.tables[0];
        assert_eq!(t.columns, ["tps", "total_s"]);
        assert_eq!(t.rows.len(), 2);
        let tps = t.rows[0].1[0].as_ref().unwrap();
        assert_eq!(tps.measured, Some(5000.0));
        assert_eq!(tps.ratio, Some(2.0));
        let total = t.rows[0].1[1].as_ref().unwrap();
        assert_eq!(total.measured, Some(60.0));
        assert_eq!(total.ratio, Some(0.5));
        let ice = t.rows[1].1[0].as_ref().unwrap();
        assert!(ice.missing.as_deref().unwrap().starts_with("not run"));
        // The reason itself is in the systems table.
        assert!(t.rows[1].1[1].is_none());
        let text = render(&cmp, false);
        assert!(text.contains("not run: no server folder yet"), "{text}");
        assert!(text.contains("×2.00"), "{text}");
        // Figures with no measured twin are counted under their system's reason.
        assert_eq!(
            unmeasured(&cmp),
            vec![("not run (ice): no server folder yet".to_owned(), 1)]
        );
        assert!(
            text.contains("Published figures without a measured twin")
                && text.contains("- 1 figure: not run (ice): no server folder yet"),
            "{text}"
        );
    }

    #[test]
    fn the_deviations_from_the_post_are_shown() {
        let mut r = repro(Vec::new(), vec![system("a", Some("a"))], Vec::new());
        r.deviations = vec!["windows of 5 s, not 300000 calls".into()];
        let cmp = compare(&results(Vec::new()), &r);
        for markdown in [false, true] {
            let text = render(&cmp, markdown);
            assert!(
                text.contains("Deviations from the post")
                    && text.contains("- windows of 5 s, not 300000 calls"),
                "{text}"
            );
        }
    }
}

#[cfg(test)]
mod verdict_tests {
    use super::tests_support::*;
    use super::*;
    use rpclab_model::result::{CellFlag, RatioPair, SeedClaim};

    fn ratio_claim(pairs: &[(&str, &str, f64)]) -> SeedClaim {
        SeedClaim {
            id: "r".into(),
            text: String::new(),
            check: ClaimCheck::Ratio {
                measure: Measure::Throughput,
                scenario: "s".into(),
                concurrency: 1,
                pairs: pairs
                    .iter()
                    .map(|(o, u, p)| RatioPair {
                        over: (*o).into(),
                        under: (*u).into(),
                        published: *p,
                    })
                    .collect(),
            },
        }
    }

    fn systems(keys: &[&str]) -> Vec<SeedSystem> {
        keys.iter().map(|k| system(k, Some(k))).collect()
    }

    #[test]
    fn a_right_direction_with_the_wrong_size_differs_in_magnitude() {
        // "Ice is 4.7× gRPC", measured 1.9× [1.7, 2.1]-ish.
        let res = results(vec![
            spread("ice", 1900.0, 1850.0, 1950.0),
            spread("grpc", 1000.0, 930.0, 1080.0),
        ]);
        let cmp = compare(
            &res,
            &repro(
                vec![ratio_claim(&[("ice", "grpc", 4.7)])],
                systems(&["ice", "grpc"]),
                Vec::new(),
            ),
        );
        let c = &cmp.claims[0];
        assert_eq!(c.verdict, Verdict::Holds);
        assert_eq!(c.magnitude, Some(Magnitude::Differs));
        assert_eq!(c.label(), "holds; magnitude differs");
        assert!(
            c.detail.contains(
                "ice over grpc 1.90× [1.71, 2.10] (holds), magnitude differs: published 4.7×"
            ),
            "{}",
            c.detail
        );
        // Inside the interval widened by the tolerance: 2.10 × 1.25 = 2.62.
        let cmp = compare(
            &res,
            &repro(
                vec![ratio_claim(&[("ice", "grpc", 2.5)])],
                systems(&["ice", "grpc"]),
                Vec::new(),
            ),
        );
        assert_eq!(cmp.claims[0].label(), "holds; magnitude matches");
    }

    #[test]
    fn one_repetition_widens_only_by_the_tolerance_and_says_so() {
        let mut a = agg("a", 1060.0, 0.0, 0);
        let mut b = agg("b", 1000.0, 0.0, 0);
        a.repetitions = 1;
        b.repetitions = 1;
        let cmp = compare(
            &results(vec![a, b]),
            &repro(
                vec![
                    ratio_claim(&[("a", "b", 4.7)]),
                    ratio_claim(&[("a", "b", 1.3)]),
                ],
                systems(&["a", "b"]),
                Vec::new(),
            ),
        );
        // 6 % is past the 5 % floor: the direction holds; 4.7 is far off.
        assert_eq!(cmp.claims[0].label(), "holds; magnitude differs");
        assert!(
            cmp.claims[0].detail.contains("1 repetition, no spread"),
            "{}",
            cmp.claims[0].detail
        );
        // 1.06 × 1.25 = 1.325 ≥ 1.3.
        assert_eq!(cmp.claims[1].magnitude, Some(Magnitude::Matches));
    }

    #[test]
    fn a_partly_checked_claim_says_how_much_was_checked() {
        let res = results(vec![
            agg("ice", 3000.0, 0.01, 0),
            agg("thrift", 2000.0, 0.01, 0),
        ]);
        let mut sys = systems(&["ice", "thrift"]);
        sys.push(system("dubbo", None));
        sys.push(system("grpc", Some("grpc")));
        let cmp = compare(
            &res,
            &repro(
                vec![ratio_claim(&[
                    ("ice", "thrift", 1.4),
                    ("ice", "dubbo", 3.2),
                    ("ice", "grpc", 4.7),
                ])],
                sys,
                Vec::new(),
            ),
        );
        let c = &cmp.claims[0];
        assert_eq!((c.checked, c.parts), (1, 3));
        assert_eq!(
            c.label(),
            "partly checked (1 of 3 pairs): holds; magnitude matches"
        );
        assert!(c.detail.contains("ice over dubbo: not run"), "{}", c.detail);
        assert!(c.detail.contains("not measured"), "{}", c.detail);
    }

    #[test]
    fn untrustworthy_figures_are_shown_with_their_caveat_and_decide_nothing() {
        let mut ice = agg("ice", 100_000.0, 0.01, 0);
        ice.cell_flags = vec![CellFlag::ClientBound];
        let mut rmi = agg("rmi", 50_000.0, 0.2, 0);
        rmi.noisy = true;
        let res = results(vec![ice, rmi, agg("grpc", 20_000.0, 0.01, 0)]);
        let ranking = SeedClaim {
            id: "rank".into(),
            text: String::new(),
            check: ClaimCheck::Ranking {
                measure: Measure::Throughput,
                scenario: "s".into(),
                levels: vec![1],
                order: vec!["ice".into(), "rmi".into(), "grpc".into()],
            },
        };
        let cmp = compare(
            &res,
            &repro(
                vec![ratio_claim(&[("ice", "grpc", 4.7)]), ranking],
                systems(&["ice", "rmi", "grpc"]),
                Vec::new(),
            ),
        );
        let c = &cmp.claims[0];
        assert_eq!((c.checked, c.indicative, c.parts), (0, 1, 1));
        assert_eq!(c.verdict, Verdict::NotComparable);
        assert!(
            c.label().starts_with("undecided: 1 of 1 pairs"),
            "{}",
            c.label()
        );
        assert!(
            c.detail
                .contains("not checked, ice 100000 calls/s (lower bound)"),
            "{}",
            c.detail
        );
        // 100000 / 20000: the direction and size it points to, undecided.
        assert!(
            c.detail.contains("indicative 5.00×")
                && c.detail
                    .contains("against published 4.7× (magnitude would match)"),
            "{}",
            c.detail
        );
        let r = &cmp.claims[1];
        assert_eq!(r.checked, 0, "{}", r.detail);
        assert!(
            r.detail.contains("rmi 50000 calls/s (unsteady)"),
            "{}",
            r.detail
        );
    }

    #[test]
    fn equivalence_is_a_ratio_within_the_tolerance_of_one() {
        let res = results(vec![
            agg("motan", 40_000.0, 0.01, 0),
            agg("dubbo", 38_000.0, 0.01, 0),
            agg("sofa", 12_000.0, 0.01, 0),
            agg("hessian", 60_000.0, 0.01, 0),
        ]);
        let eq = |systems: &[&str], behind: &[&str]| SeedClaim {
            id: "eq".into(),
            text: String::new(),
            check: ClaimCheck::Equivalent {
                measure: Measure::Throughput,
                scenario: "s".into(),
                levels: vec![1],
                systems: systems.iter().map(|s| (*s).into()).collect(),
                behind: behind.iter().map(|s| (*s).into()).collect(),
            },
        };
        let published = |system: &str, value: f64| PublishedCell {
            table: "T".into(),
            row: system.into(),
            column: "tps".into(),
            system: system.into(),
            metric: "tps".into(),
            unit: "calls/s".into(),
            value: Some(value),
            raw: value.to_string(),
            measure: Some(Measure::Throughput),
            total_calls: None,
            scenario: Some("s".into()),
            concurrency: Some(1),
            unlinked: None,
            measured: None,
            not_run: None,
        };
        let cmp = compare(
            &res,
            &repro(
                vec![
                    eq(&["motan", "dubbo"], &[]),
                    eq(&["motan", "sofa"], &[]),
                    eq(&["motan", "dubbo"], &["hessian"]),
                    eq(&["motan", "dubbo"], &["sofa"]),
                ],
                systems(&["motan", "dubbo", "sofa", "hessian"]),
                vec![published("motan", 41_000.0), published("dubbo", 40_000.0)],
            ),
        );
        // 0.95: level; the published 0.976 lies in the tolerance around it.
        assert_eq!(cmp.claims[0].label(), "holds; magnitude matches");
        assert!(
            cmp.claims[0].detail.contains("dubbo / motan 0.95×"),
            "{}",
            cmp.claims[0].detail
        );
        // 0.30: not level, and equivalence has no direction to reverse.
        assert_eq!(cmp.claims[1].verdict, Verdict::DoesNotHold);
        // Level with each other, both behind Hessian: 3 parts.
        assert_eq!(cmp.claims[2].parts, 3);
        assert_eq!(cmp.claims[2].verdict, Verdict::Holds);
        // ... but not behind sofa.
        assert_eq!(cmp.claims[3].verdict, Verdict::Reversed);
    }

    #[test]
    fn an_equivalence_outside_the_tolerance_but_inside_the_noise_is_undecided() {
        assert_eq!(judge_equivalence(1.05, None), Verdict::Holds);
        assert_eq!(judge_equivalence(1.2, None), Verdict::DoesNotHold);
        assert_eq!(
            judge_equivalence(1.2, Some((1.05, 1.4))),
            Verdict::WithinNoise
        );
        assert_eq!(
            judge_equivalence(0.7, Some((0.6, 0.8))),
            Verdict::DoesNotHold
        );
        assert_eq!(judge_equivalence(f64::NAN, None), Verdict::NotComparable);
    }

    #[test]
    fn rankings_take_published_ratios_from_the_published_cells() {
        let res = results(vec![agg("a", 3000.0, 0.01, 0), agg("b", 1000.0, 0.01, 0)]);
        let cell = |system: &str, seconds: f64| PublishedCell {
            table: "T".into(),
            row: system.into(),
            column: "total_s".into(),
            system: system.into(),
            metric: "total_s".into(),
            unit: "s".into(),
            value: Some(seconds),
            raw: seconds.to_string(),
            measure: Some(Measure::TotalSeconds),
            total_calls: Some(10_000),
            scenario: Some("s".into()),
            concurrency: Some(1),
            unlinked: None,
            measured: None,
            not_run: None,
        };
        let claim = SeedClaim {
            id: "rank".into(),
            text: String::new(),
            check: ClaimCheck::Ranking {
                measure: Measure::Throughput,
                scenario: "s".into(),
                levels: vec![1],
                order: vec!["a".into(), "b".into()],
            },
        };
        // Published: a took 10 s, b 12 s: a is 1.2× b; measured 3×.
        let cmp = compare(
            &res,
            &repro(
                vec![claim],
                systems(&["a", "b"]),
                vec![cell("a", 10.0), cell("b", 12.0)],
            ),
        );
        let c = &cmp.claims[0];
        assert_eq!(c.label(), "holds; magnitude differs");
        assert!(c.detail.contains("published 1.2×"), "{}", c.detail);
    }

    #[test]
    fn every_measure_is_looked_up_with_the_published_call_count() {
        let res = results(vec![agg("a", 5000.0, 0.0, 10)]);
        let sys = systems(&["a"]);
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
                table: "T".into(),
                row: "a".into(),
                column: format!("{m:?}"),
                system: "a".into(),
                metric: format!("{m:?}"),
                unit: String::new(),
                value: Some(1.0),
                raw: "1".into(),
                measure: Some(*m),
                total_calls: Some(300_000),
                scenario: Some("s".into()),
                concurrency: Some(1),
                unlinked: None,
                measured: None,
                not_run: None,
            })
            .collect();
        let lookup = Lookup {
            results: &res,
            systems: &sys,
            cells: &cells,
        };
        for (m, want) in all {
            let got = lookup
                .value("a", "s", 1, m)
                .unwrap_or_else(|e| panic!("{m:?}: {e}"));
            assert!(
                (got.value - want).abs() < 1e-9,
                "{m:?}: {} ≠ {want}",
                got.value
            );
            assert_eq!(got.interval, None, "{m:?}: no spread in this aggregate");
        }
        // Without a published call count a total cannot be derived, and says why.
        let bare = Lookup {
            results: &res,
            systems: &sys,
            cells: &[],
        };
        let why = bare.value("a", "s", 1, Measure::TotalSeconds).unwrap_err();
        assert!(why.contains("no published call count"), "{why}");
        assert!(bare.value("a", "s", 1, Measure::Throughput).is_ok());
    }

    #[test]
    fn intervals_follow_the_median_throughput_into_derived_measures() {
        let a = spread("a", 5000.0, 4000.0, 6000.0);
        assert_eq!(
            derive_interval(&a, Measure::Throughput, None),
            Some((4000.0, 6000.0, 0.75))
        );
        let (lo, hi, _) = derive_interval(&a, Measure::MsPerCall, None).unwrap();
        assert!((lo - 1000.0 / 6000.0).abs() < 1e-12 && (hi - 0.25).abs() < 1e-12);
        assert_eq!(derive_interval(&a, Measure::LatencyP99Ms, None), None);
        assert_eq!(
            derive_interval(&agg("b", 1.0, 0.0, 0), Measure::Throughput, None),
            None
        );
    }
}
