//! A capacity search as a snapshot keeps it (`lab capacity`): the highest
//! open-loop rate at which a latency percentile stays under a bound (the
//! SLO) with no failed call and every reply verified.
//!
//! Data only, as `results.json` holds it (`capacity`): what was asked
//! ([`Asked`], also in `manifest.toml`), every step with its figures and
//! the facts that failed it ([`Step`], [`Failure`]), and how the search
//! ended ([`Outcome`]). Choosing the next rate and judging a step are the
//! orchestrator's (`xtask`'s `engine::capacity`); the sentences and the
//! latency-vs-rate chart are the report's.
//!
//! The SLO's bound is read with the one duration syntax
//! ([`crate::threshold::parse_slo`]: a number with a unit, `5ms`), the
//! percentile with the one percentile type ([`crate::percentile`], any
//! from 0 to 100), and a percentile of a window is the window's
//! ([`crate::result::Cell::latency_at`]): this module names neither the
//! thresholds nor the results, so that `results.json`'s type can hold a
//! search without a cycle.

use serde::{Deserialize, Serialize};

/// The grammar of `--slo` and `--percentile` in one line, quoted by every
/// error about them.
pub const SLO_GRAMMAR: &str = "an SLO is a latency bound with a unit ns|us|ms|s|m|h (--slo 5ms) that the percentile given by --percentile (any from 0 to 100: 95, 99.9, p99, p(97.5); default 99) must stay under";

/// What a capacity search was asked, as the command line gave it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Asked {
    /// The lab scenario whose operation (and, for an open-loop scenario,
    /// arrivals and senders) the steps use.
    pub scenario: String,
    /// The percentile judged.
    pub percentile: Percentile,
    /// The bound it must stay under, µs.
    pub slo_us: f64,
    /// The bound as written (`5ms`).
    pub slo: String,
    /// The search ends when the failing rate is within this share of the
    /// passing one (0.05: 5 %).
    pub tolerance: f64,
    /// The most steps measured (the closed-loop hint is not one).
    pub budget: u32,
    /// The first rate, calls/s; absent: the closed-loop throughput hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_rate: Option<u32>,
    /// The lowest rate tried, calls/s: when it fails, no rate holds.
    pub min_rate: u32,
}

impl Asked {
    /// The SLO in words: `p99 < 5ms`.
    pub fn slo_line(&self) -> String {
        format!("{} < {}", self.percentile, self.slo)
    }
}

/// The percentile a search judges: the one percentile type of the
/// thresholds and the cells ([`crate::percentile`]).
pub use crate::percentile::Percentile;

/// A percentile or an SLO that does not read: what was written, and the
/// grammar.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}: {grammar}", grammar = SLO_GRAMMAR)]
pub struct BadSlo(pub String);

/// `lab capacity --percentile`: any percentile in the one grammar
/// ([`crate::percentile::PERCENTILE_GRAMMAR`]: `95`, `99.9`, `p99`,
/// `p(97.5)`); unreadable, one line with the SLO's grammar.
pub fn parse_percentile(text: &str) -> Result<Percentile, BadSlo> {
    text.parse()
        .map_err(|e: crate::percentile::BadPercentile| BadSlo(format!("--percentile: {e}")))
}

/// A capacity search, step by step (`results.json`'s `capacity`; added
/// compatibly to schema version 1 on 2026-12-05, absent in every other
/// snapshot). Rewritten after every step, so a search that stopped keeps
/// its steps, with no outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapacitySearch {
    pub asked: Asked,
    /// The server variant searched.
    pub server: String,
    pub variant: String,
    /// The scenario of the steps' cells in `cells` (the asked scenario
    /// when it is an open loop, else `<scenario>-open`).
    pub scenario: String,
    /// How the steps' open loop sends: `poisson` or `constant` arrivals,
    /// over `connections` connections with at most `max_in_flight` calls
    /// in flight.
    pub arrival: String,
    pub connections: u32,
    pub max_in_flight: u32,
    /// Each step's window, seconds.
    pub window_s: f64,
    /// The closed-loop throughput measured first as the first rate, when
    /// no start rate was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<Hint>,
    /// Every step, in the order measured.
    pub steps: Vec<Step>,
    /// How the search ended; absent while it runs, and when it stopped
    /// (an error, Ctrl-C).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// Once it ended: the rate found, calls/s (the last pass's; absent
    /// when no rate held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_per_s: Option<u32>,
    /// Once it ended: the number of the last passing step (the highest
    /// rate that held) and of the first failing one (the lowest rate above
    /// it that did not); each absent when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_pass: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_fail: Option<u32>,
}

/// The closed loop measured before the search, whose throughput is its
/// first rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hint {
    /// Its cell in `cells`: scenario and level (repetition 1).
    pub scenario: String,
    pub concurrency: u32,
    pub throughput_per_s: f64,
}

/// One step: an open-loop cell at one offered rate, judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Its number, from 1, in the order measured.
    pub step: u32,
    /// The rate offered (the schedule's), calls/s: the cell's level.
    pub offered_per_s: u32,
    /// Calls that completed in the window (ok or failed) per second.
    pub achieved_per_s: f64,
    /// The least achieved rate that counts as the offered one: the
    /// offered rate less its allowance (5 %, or three standard deviations
    /// of a Poisson count over the window where that is more).
    pub achieved_least_per_s: f64,
    /// The asked percentile of the window, µs (from the due time).
    pub percentile_us: f64,
    pub calls_ok: u64,
    pub calls_failed: u64,
    /// Every reply was checked against the expected value.
    pub verified: bool,
    /// How late the calls left, p99 µs (the client's sign of a load it
    /// could not offer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_lag_p99_us: Option<f64>,
    /// The step held the SLO (no failure below).
    pub pass: bool,
    /// Why it did not: every rule it broke.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<Failure>,
    /// Its cell's repetition (scenario and level are the search's and
    /// `offered_per_s`): a rate measured twice is repetition 2.
    pub repetition: u32,
}

/// A rule a step broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Failure {
    /// The percentile was at or above the bound.
    Latency,
    /// Calls failed (any: a timeout, a refusal, a wrong reply).
    Errors,
    /// Not every reply was verified.
    NotVerified,
    /// Fewer calls completed than were offered (beyond the allowance):
    /// the rate was not carried, by the server or by the client.
    Shortfall,
    /// No call completed in the window.
    NoCalls,
}

impl Failure {
    /// Its name, as `results.json` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Failure::Latency => "latency",
            Failure::Errors => "errors",
            Failure::NotVerified => "not-verified",
            Failure::Shortfall => "shortfall",
            Failure::NoCalls => "no-calls",
        }
    }
}

/// How a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// A passing and a failing rate within the tolerance: the rate found
    /// is the passing one.
    Found,
    /// The budget of steps was spent first: the rate found is the highest
    /// passing one, a bound rather than the capacity.
    BudgetSpent,
    /// No rate tried held the SLO, down to the lowest: there is no rate
    /// found (`lab capacity` exits with code 99).
    NoRate,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Found => "found",
            Outcome::BudgetSpent => "budget-spent",
            Outcome::NoRate => "no-rate",
        }
    }
}

impl CapacitySearch {
    /// The highest passing step: the last one that passed, since every
    /// later rate tried lies above it.
    pub fn last_pass(&self) -> Option<&Step> {
        self.steps
            .iter()
            .filter(|s| s.pass)
            .max_by_key(|s| s.offered_per_s)
    }

    /// The lowest failing step above the last pass (any, without one).
    pub fn first_fail(&self) -> Option<&Step> {
        let floor = self.last_pass().map_or(0, |s| s.offered_per_s);
        self.steps
            .iter()
            .filter(|s| !s.pass && s.offered_per_s > floor)
            .min_by_key(|s| s.offered_per_s)
    }

    /// Ends the search with `outcome`, recording the rate found and the
    /// steps that bracket it.
    pub fn conclude(&mut self, outcome: Outcome) {
        self.outcome = Some(outcome);
        self.found_per_s = self.found_rate();
        self.last_pass = self.last_pass().map(|s| s.step);
        self.first_fail = self.first_fail().map(|s| s.step);
    }

    /// The rate found: the last pass's, once the search ended with one.
    pub fn found_rate(&self) -> Option<u32> {
        match self.outcome? {
            Outcome::Found | Outcome::BudgetSpent => self.last_pass().map(|s| s.offered_per_s),
            Outcome::NoRate => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::percentile::SPELLINGS;
    use crate::testing::refused_in_one_line;

    #[test]
    fn percentiles_read_in_the_one_grammar_else_one_line_with_the_slo_grammar() {
        for (text, p) in SPELLINGS {
            assert_eq!(parse_percentile(text), Ok(p), "{text}");
        }
        assert_eq!(parse_percentile("98").unwrap().to_string(), "p98");
        refused_in_one_line(["101"], parse_percentile, SLO_GRAMMAR);
    }
}
