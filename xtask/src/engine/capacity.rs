//! `lab capacity`'s search, decided without Docker: which server variant
//! it measures, the open loop of its steps and the closed loop of its
//! hint, how a step is judged, and which rate comes next. Pure and
//! unit-tested; [`crate::engine::run`] carries it out on the running
//! server, through the cells every run measures (docs/methodology.md,
//! "Capacity under an SLO").
//!
//! The search brackets, then bisects: from the first rate (the command
//! line's, or the closed-loop throughput of the same connections measured
//! first), it doubles while steps pass, or halves while they fail (down to
//! the lowest rate, where "no rate holds the SLO"); once a passing rate
//! lies below a failing one, it measures their midpoint until the two are
//! within the tolerance or the budget of steps is spent.

use crate::definitions::lab::{OpenSettings, Profile, Scenario};
use crate::definitions::manifest::{self, Manifest};
use anyhow::{bail, Result};
use rpclab_model::capacity::{Asked, CapacitySearch, Failure, Outcome, Step};
use rpclab_model::result::Cell;
use rpclab_model::spec::Shape;

/// The least share of the offered rate a step must carry: 5 % short is
/// still the offered rate (or three standard deviations of a Poisson count
/// over the window, where that is more).
pub const SHORTFALL: f64 = 0.05;

/// The senders of a closed-loop scenario's open loop: enough that the
/// senders, not the connections, are never what holds calls back below the
/// server's capacity (the open-loop scenarios of `compose/scenarios.toml`
/// use as many).
pub const MAX_IN_FLIGHT: u32 = 256;

/// The loads of a search: the open loop of its steps and the closed loop
/// of its hint, over the same connections.
#[derive(Debug)]
pub struct Loads {
    /// The steps' scenario: an open loop whose level is the rate offered.
    pub steps: Scenario,
    /// The hint's scenario and level (its callers).
    pub hint: Scenario,
    pub hint_level: u32,
}

impl Loads {
    /// The loads of a search on `base` under `profile`. An open-loop
    /// `base` (constant or Poisson arrivals) is used as it is, its hint a
    /// closed loop of as many client programs as it has connections; a
    /// closed-loop `base` is its own hint at its highest level, and its
    /// steps Poisson arrivals over as many connections (`<name>-open`).
    pub fn of(base: &Scenario, profile: &Profile) -> Result<Loads> {
        match &base.open {
            Some(o) if o.arrival == "constant" || o.arrival == "poisson" => Ok(Loads {
                steps: base.clone(),
                hint: Scenario {
                    name: format!("{}-closed", base.name),
                    description: format!(
                        "{}'s connections as client programs, a closed loop: the capacity search's first rate",
                        base.name
                    ),
                    shape: Some(Shape::ClientPrograms),
                    concurrency: vec![o.connections],
                    ..Scenario::bare(base.operation)
                },
                hint_level: o.connections,
            }),
            Some(o) => bail!(
                "lab capacity offers one rate per step, and scenario `{}` has `{}` arrivals: choose a closed-loop scenario or an open one with constant or poisson arrivals",
                base.name,
                o.arrival
            ),
            None => {
                let Some(level) = base.levels(profile).into_iter().max() else {
                    bail!("scenario `{}` has no level under this profile", base.name);
                };
                Ok(Loads {
                    steps: Scenario {
                        name: format!("{}-open", base.name),
                        description: format!(
                            "{}'s operation as Poisson arrivals over {level} connection(s): a capacity search's steps",
                            base.name
                        ),
                        open: Some(OpenSettings {
                            arrival: "poisson".into(),
                            connections: level,
                            max_in_flight: MAX_IN_FLIGHT,
                            steps: Vec::new(),
                            ramp: None,
                        }),
                        ..Scenario::bare(base.operation)
                    },
                    hint: base.clone(),
                    hint_level: level,
                })
            }
        }
    }

    /// A search of `m`'s variant `variant` with these loads, no step yet.
    pub fn search(
        &self,
        asked: &Asked,
        m: &Manifest,
        variant: &str,
        profile: &Profile,
    ) -> CapacitySearch {
        let open = self
            .steps
            .open
            .as_ref()
            .expect("the steps are an open loop");
        CapacitySearch {
            asked: asked.clone(),
            server: m.name.clone(),
            variant: variant.to_owned(),
            scenario: self.steps.name.clone(),
            arrival: open.arrival.clone(),
            connections: open.connections,
            max_in_flight: open.max_in_flight,
            window_s: profile.measure_s.unwrap_or(10.0),
            hint: None,
            steps: Vec::new(),
            outcome: None,
            found_per_s: None,
            last_pass: None,
            first_fail: None,
        }
    }
}

/// The (server, variant) pair a search measures: `variants` (at most one)
/// among the one selected server, else its first variant that can run and
/// carry `base`'s operation.
pub fn variant(
    selected: &[&Manifest],
    variants: &[(String, String)],
    base: &Scenario,
) -> Result<(String, String)> {
    let m = match selected {
        [m] => *m,
        _ => bail!(
            "lab capacity searches one server, and the selection names {}: {}; name one",
            selected.len(),
            manifest::names(selected.iter().copied())
        ),
    };
    match variants {
        [pair] => return Ok(pair.clone()),
        [] => {}
        more => bail!(
            "lab capacity searches one variant, and --variant names {}: {}",
            more.len(),
            more.iter()
                .map(|(s, v)| format!("{s}/{v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
    m.variants
        .iter()
        .find(|v| v.unavailable.is_none() && v.cannot_carry(base.operation).is_none())
        .map(|v| (m.name.clone(), v.name.clone()))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "server {} has no variant that can run `{}` (`cargo xtask lab list` says why)",
                m.name,
                base.operation
            )
        })
}

/// What the search does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Measure a step at this rate, calls/s.
    Measure(u32),
    /// It is over.
    Done(Outcome),
}

/// The next move of `search`, whose first rate is `first`.
pub fn next(search: &CapacitySearch, first: u32) -> Next {
    let asked = &search.asked;
    let lowest = asked.min_rate.max(1);
    if search.steps.is_empty() {
        return Next::Measure(first.max(lowest));
    }
    let spent = search.steps.len() as u32 >= asked.budget;
    let pass = search.last_pass().map(|s| s.offered_per_s);
    let fail = search.first_fail().map(|s| s.offered_per_s);
    match (pass, fail) {
        (Some(p), Some(f)) => {
            let narrow = f - p <= 1 || (f - p) as f64 <= asked.tolerance * p as f64;
            if narrow {
                Next::Done(Outcome::Found)
            } else if spent {
                Next::Done(Outcome::BudgetSpent)
            } else {
                Next::Measure(p + (f - p) / 2)
            }
        }
        (Some(_), None) if spent => Next::Done(Outcome::BudgetSpent),
        (Some(p), None) => Next::Measure(p.saturating_mul(2)),
        (None, Some(f)) if spent || f <= lowest => Next::Done(Outcome::NoRate),
        (None, Some(f)) => Next::Measure((f / 2).max(lowest)),
        // Every step passed or failed.
        (None, None) => Next::Done(Outcome::NoRate),
    }
}

/// Step number `number`, the cell `cell` at `offered` calls/s (its
/// repetition `repetition`), judged by `asked`: it passes with calls in
/// its window, the percentile under the bound, no failed call, every
/// reply verified and the offered rate carried.
pub fn judge(asked: &Asked, cell: &Cell, offered: u32, repetition: u32, number: u32) -> Step {
    let calls = cell.calls_ok + cell.calls_failed;
    let window = cell.duration_s.max(1e-9);
    let achieved = calls as f64 / window;
    let expected = (offered as f64 * window).max(1.0);
    let allowance = SHORTFALL.max(3.0 / expected.sqrt());
    let least = offered as f64 * (1.0 - allowance).max(0.0);
    // Every step's spec asks for the percentile (`engine::run::cell`); a
    // cell without it has no figure to judge, and fails as too slow.
    let percentile_us = cell.latency_at(asked.percentile).unwrap_or(f64::INFINITY);
    let mut failures = Vec::new();
    if cell.calls_ok == 0 {
        failures.push(Failure::NoCalls);
    } else if percentile_us >= asked.slo_us {
        failures.push(Failure::Latency);
    }
    if cell.calls_failed > 0 {
        failures.push(Failure::Errors);
    }
    if !cell.report.verified {
        failures.push(Failure::NotVerified);
    }
    if achieved < least {
        failures.push(Failure::Shortfall);
    }
    Step {
        step: number,
        offered_per_s: offered,
        achieved_per_s: achieved,
        achieved_least_per_s: least,
        percentile_us,
        calls_ok: cell.calls_ok,
        calls_failed: cell.calls_failed,
        verified: cell.report.verified,
        send_lag_p99_us: cell.report.send_lag_us.map(|l| l.p99),
        pass: failures.is_empty(),
        failures,
        repetition,
    }
}

/// A step's line while the search runs: `step 3: offered 4000 calls/s,
/// achieved 3987 calls/s, p99 2.140 ms, 0 failed, verified: pass`.
pub fn step_line(asked: &Asked, s: &Step) -> String {
    let verdict = if s.pass {
        "pass".to_owned()
    } else {
        let why: Vec<&str> = s.failures.iter().map(|f| f.as_str()).collect();
        format!("fail ({})", why.join(", "))
    };
    format!(
        "  step {}: offered {} calls/s, achieved {:.0} calls/s{}, {} {:.3} ms (SLO {}), {} failed, {}: {verdict}",
        s.step,
        s.offered_per_s,
        s.achieved_per_s,
        if s.failures.contains(&Failure::Shortfall) {
            format!(" (short of {:.0}: the rate was not carried)", s.achieved_least_per_s)
        } else {
            String::new()
        },
        asked.percentile,
        s.percentile_us / 1e3,
        asked.slo,
        s.calls_failed,
        if s.verified { "verified" } else { "NOT verified" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definitions::lab::client_programs_for_tests;
    use crate::definitions::manifest::java_thrift_for_tests;
    use rpclab_model::capacity::Percentile;
    use rpclab_model::contract::Operation;

    fn asked(budget: u32) -> Asked {
        Asked {
            scenario: "order-echo".into(),
            percentile: Percentile::P99,
            slo_us: 5000.0,
            slo: "5ms".into(),
            tolerance: 0.05,
            budget,
            start_rate: None,
            min_rate: 10,
        }
    }

    /// A search of thrift-java 0.20 as `lab capacity` starts it on a
    /// closed loop of 4 callers: Poisson steps over 4 connections, no step yet.
    fn search(budget: u32) -> CapacitySearch {
        let order_echo = client_programs_for_tests("order-echo", Operation::OrderEcho, &[4]);
        let profile: Profile = toml::from_str("measure_s = 1.0").unwrap();
        let server = java_thrift_for_tests(
            "name = \"thrift-java\"\n[[variant]]\nname = \"0.20\"\nversion = \"0.20.0\"\n",
        );
        Loads::of(&order_echo, &profile)
            .unwrap()
            .search(&asked(budget), &server, "0.20", &profile)
    }

    /// Step `number`, judged on a 1 s cell that carried `rate` calls/s
    /// within the SLO (`pass`) or above it on latency.
    fn step(number: u32, rate: u32, pass: bool) -> Step {
        let p99_us = if pass { 1000.0 } else { 9000.0 };
        let judged = judge(
            &asked(1),
            &cell(rate.into(), 0, p99_us, true),
            rate,
            1,
            number,
        );
        assert_eq!(judged.pass, pass, "{judged:?}");
        judged
    }

    /// Runs the search against a server that holds the SLO up to `holds`
    /// calls/s; returns the rates measured and the outcome.
    fn replay(first: u32, holds: u32, budget: u32) -> (Vec<u32>, Outcome, CapacitySearch) {
        let mut s = search(budget);
        loop {
            match next(&s, first) {
                Next::Measure(rate) => {
                    assert!(s.steps.len() < budget as usize, "over budget");
                    let n = s.steps.len() as u32 + 1;
                    s.steps.push(step(n, rate, rate <= holds));
                }
                Next::Done(outcome) => {
                    s.conclude(outcome);
                    let rates = s.steps.iter().map(|s| s.offered_per_s).collect();
                    return (rates, outcome, s);
                }
            }
        }
    }

    #[test]
    fn it_doubles_until_a_step_fails_then_bisects_to_the_tolerance() {
        let (rates, outcome, s) = replay(1000, 5300, 20);
        assert_eq!(rates[..4], [1000, 2000, 4000, 8000]);
        assert_eq!(outcome, Outcome::Found);
        let (pass, fail) = (s.last_pass().unwrap(), s.first_fail().unwrap());
        assert!(pass.offered_per_s <= 5300 && fail.offered_per_s > 5300);
        assert!(
            (fail.offered_per_s - pass.offered_per_s) as f64 <= 0.05 * pass.offered_per_s as f64
        );
        assert_eq!(s.found_rate(), Some(pass.offered_per_s));
        // The last step that passed is the highest that did.
        assert_eq!(s.steps.iter().rev().find(|s| s.pass), Some(pass));
    }

    #[test]
    fn it_halves_from_a_failing_start_then_bisects() {
        let (rates, outcome, s) = replay(8000, 1500, 20);
        assert_eq!(rates[..4], [8000, 4000, 2000, 1000]);
        assert_eq!(outcome, Outcome::Found);
        for p in s.steps.iter().filter(|s| s.pass) {
            assert!(p.offered_per_s < s.first_fail().unwrap().offered_per_s);
        }
    }

    #[test]
    fn a_spent_budget_ends_the_search_with_the_bracket_so_far() {
        let (rates, outcome, s) = replay(1000, 5300, 5);
        assert_eq!(rates.len(), 5);
        assert_eq!(outcome, Outcome::BudgetSpent);
        assert!(s.found_rate().is_some());
        // Every step passing: the budget is spent with no failing rate.
        let (rates, outcome, s) = replay(1000, u32::MAX, 3);
        assert_eq!(
            (rates, outcome),
            (vec![1000, 2000, 4000], Outcome::BudgetSpent)
        );
        assert_eq!(s.found_rate(), Some(4000));
        assert!(s.first_fail().is_none());
    }

    #[test]
    fn when_even_the_lowest_rate_fails_no_rate_holds() {
        // Down to the lowest rate (10 calls/s), which fails too.
        let (rates, outcome, s) = replay(80, 0, 20);
        assert_eq!((rates, outcome), (vec![80, 40, 20, 10], Outcome::NoRate));
        assert_eq!(s.found_rate(), None);
        // A budget spent before the lowest rate, every step failing.
        let (rates, outcome, _) = replay(8000, 0, 2);
        assert_eq!((rates, outcome), (vec![8000, 4000], Outcome::NoRate));
        // A start below the lowest rate starts at it.
        let (rates, _, _) = replay(3, 0, 20);
        assert_eq!(rates, vec![10]);
    }

    #[test]
    fn rates_one_apart_cannot_be_split_and_end_the_search() {
        let mut s = search(20);
        s.asked.tolerance = 0.0;
        s.steps = vec![step(1, 40, true), step(2, 41, false)];
        assert_eq!(next(&s, 40), Next::Done(Outcome::Found));
    }

    fn cell(ok: u64, failed: u64, p99_us: f64, verified: bool) -> Cell {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results.json"),
        )
        .unwrap();
        let results: rpclab_model::result::Results = serde_json::from_str(&text).unwrap();
        let mut c = results.cells[0].clone();
        c.calls_ok = ok;
        c.calls_failed = failed;
        c.duration_s = 1.0;
        c.latency_us.p99 = p99_us;
        c.report.verified = verified;
        c
    }

    #[test]
    fn a_step_fails_on_latency_errors_unverified_replies_or_a_rate_not_carried() {
        let a = asked(10);
        let j = |c: &Cell| judge(&a, c, 1000, 1, 1);
        let good = j(&cell(1000, 0, 4000.0, true));
        assert!(good.pass, "{good:?}");
        assert_eq!(good.achieved_per_s, 1000.0);
        assert_eq!(j(&cell(1000, 0, 5000.0, true)).failures, [Failure::Latency]);
        assert_eq!(j(&cell(999, 1, 100.0, true)).failures, [Failure::Errors]);
        assert_eq!(
            j(&cell(1000, 0, 100.0, false)).failures,
            [Failure::NotVerified]
        );
        // 1000 due in 1 s: 3 standard deviations are 9.5 %.
        assert!(j(&cell(920, 0, 100.0, true)).pass);
        assert_eq!(j(&cell(880, 0, 100.0, true)).failures, [Failure::Shortfall]);
        assert_eq!(
            j(&cell(0, 0, 0.0, true)).failures,
            [Failure::NoCalls, Failure::Shortfall]
        );
        let line = step_line(&a, &j(&cell(880, 0, 100.0, true)));
        assert!(line.contains("offered 1000 calls/s"), "{line}");
        assert!(line.contains("fail (shortfall)"), "{line}");
    }
}
