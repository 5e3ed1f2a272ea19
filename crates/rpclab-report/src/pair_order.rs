//! `lab compare` of two lab runs, pair by pair: of the pairs of servers
//! whose order each run decided, how many kept it?
//!
//! Kendall's τ ([`crate::compare::kendall_tau_b`]) weighs every
//! pair alike, including pairs whose figures lie within each other's
//! noise, whose order a second run reverses by chance. A pair is *decided*
//! in a run when the two servers' median-throughput intervals
//! ([`Aggregate::throughput_ci`]) at the same scenario and level are
//! disjoint; a decided pair that reverses between runs is a real change (of
//! the code or of the host), one that keeps its order is what can be
//! repeated. The data ([`OrderAgreement`]) is built by a pure function
//! ([`order_agreement`]) and rendered apart ([`render`]).

use crate::format::fmt_value;
use rpclab_model::result::{Aggregate, Results};

/// One system's figure at one scenario × level: the median throughput and
/// its interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

impl Figure {
    /// None without an interval (one repetition, or an older snapshot):
    /// such a figure decides no order.
    fn of(a: &Aggregate) -> Option<Figure> {
        a.throughput_ci.map(|ci| Figure {
            median: a.throughput_median,
            low: ci.low,
            high: ci.high,
        })
    }
}

/// A pair decided in both runs: `first` is ahead of `second` in run a.
#[derive(Clone, Debug, PartialEq)]
pub struct DecidedPair {
    pub first: String,
    pub second: String,
    /// `first`'s and `second`'s figures in a, then in b.
    pub a: (Figure, Figure),
    pub b: (Figure, Figure),
    /// `first` is still ahead in b.
    pub kept: bool,
}

/// The decided pairs at one scenario × level.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderAgreement {
    pub scenario: String,
    pub level: u32,
    /// Systems with an interval in both runs.
    pub systems: usize,
    /// Pairs of those systems.
    pub pairs: usize,
    pub decided_in_a: usize,
    pub decided_in_b: usize,
    pub both: Vec<DecidedPair>,
}

impl OrderAgreement {
    pub fn kept(&self) -> usize {
        self.both.iter().filter(|p| p.kept).count()
    }
}

/// Two intervals that share no point decide which system is ahead.
fn disjoint(x: &Figure, y: &Figure) -> bool {
    x.high < y.low || y.high < x.low
}

fn name(a: &Aggregate) -> String {
    format!("{} {}", a.server, a.variant)
}

/// Every system's figure at one scenario × level of a run, in run order.
fn figures(r: &Results, scenario: &str, level: u32) -> Vec<(String, Figure)> {
    r.aggregates
        .iter()
        .filter(|a| a.scenario == scenario && a.concurrency == level)
        .filter_map(|a| Figure::of(a).map(|f| (name(a), f)))
        .collect()
}

/// Scenario × level groups of `a` that `b` has too, in a's order.
fn groups(a: &Results, b: &Results) -> Vec<(String, u32)> {
    let mut out: Vec<(String, u32)> = Vec::new();
    for x in &a.aggregates {
        let g = (x.scenario.clone(), x.concurrency);
        let in_b = b
            .aggregates
            .iter()
            .any(|y| y.scenario == g.0 && y.concurrency == g.1);
        if in_b && !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

/// The decided pairs of one group.
fn agreement_at(a: &Results, b: &Results, scenario: &str, level: u32) -> OrderAgreement {
    let fb = figures(b, scenario, level);
    // Systems with an interval in both runs: (name, figure in a, figure in b).
    let both: Vec<(String, Figure, Figure)> = figures(a, scenario, level)
        .into_iter()
        .filter_map(|(n, x)| {
            let y = fb.iter().find(|(m, _)| *m == n)?.1.clone();
            Some((n, x, y))
        })
        .collect();
    let mut out = OrderAgreement {
        scenario: scenario.to_owned(),
        level,
        systems: both.len(),
        pairs: both.len() * both.len().saturating_sub(1) / 2,
        decided_in_a: 0,
        decided_in_b: 0,
        both: Vec::new(),
    };
    for (i, (ni, ai, bi)) in both.iter().enumerate() {
        for (nj, aj, bj) in &both[i + 1..] {
            let (in_a, in_b) = (disjoint(ai, aj), disjoint(bi, bj));
            out.decided_in_a += usize::from(in_a);
            out.decided_in_b += usize::from(in_b);
            if !(in_a && in_b) {
                continue;
            }
            // Order the pair as a has it.
            let (first, second, a_pair, b_pair) = if ai.median >= aj.median {
                (ni, nj, (ai, aj), (bi, bj))
            } else {
                (nj, ni, (aj, ai), (bj, bi))
            };
            out.both.push(DecidedPair {
                first: first.clone(),
                second: second.clone(),
                kept: b_pair.0.median > b_pair.1.median,
                a: (a_pair.0.clone(), a_pair.1.clone()),
                b: (b_pair.0.clone(), b_pair.1.clone()),
            });
        }
    }
    out
}

/// The decided pairs of every scenario × level in both runs.
pub fn order_agreement(a: &Results, b: &Results) -> Vec<OrderAgreement> {
    groups(a, b)
        .into_iter()
        .map(|(s, l)| agreement_at(a, b, &s, l))
        .collect()
}

fn describe(f: &Figure) -> String {
    format!(
        "{} [{}–{}]",
        fmt_value(f.median),
        fmt_value(f.low),
        fmt_value(f.high)
    )
}

/// One line per scenario × level, and one per pair that reversed.
pub fn render(orders: &[OrderAgreement]) -> String {
    let mut out = String::from(
        "Decided pairs (two servers whose median-throughput intervals are disjoint, at the same scenario and level):\n",
    );
    if orders.is_empty() {
        out.push_str("  no scenario × level in both snapshots.\n");
        return out;
    }
    for o in orders {
        out.push_str(&format!(
            "  {} level {}: {} servers with intervals in both, {} pairs; decided in a: {}, in b: {}, in both: {}, kept their order: {}\n",
            o.scenario,
            o.level,
            o.systems,
            o.pairs,
            o.decided_in_a,
            o.decided_in_b,
            o.both.len(),
            o.kept()
        ));
        for p in o.both.iter().filter(|p| !p.kept) {
            out.push_str(&format!(
                "    REVERSED: {} ahead of {} in a ({} vs {} calls/s), behind in b ({} vs {})\n",
                p.first,
                p.second,
                describe(&p.a.0),
                describe(&p.a.1),
                describe(&p.b.0),
                describe(&p.b.1)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpclab_model::result::MedianInterval;

    /// The fixture's aggregates with each system's throughput and interval
    /// at one scenario × level set from `figures` (name's server, median,
    /// low, high); the other aggregates of that group are dropped.
    fn with(figures: &[(&str, f64, f64, f64)]) -> Results {
        let text = std::fs::read_to_string(crate::fixture::results_json()).unwrap();
        let mut r: Results = serde_json::from_str(&text).unwrap();
        let template = r.aggregates[0].clone();
        r.aggregates = figures
            .iter()
            .map(|(server, m, lo, hi)| {
                let mut a = template.clone();
                a.server = (*server).into();
                a.variant = "v".into();
                a.scenario = "s".into();
                a.concurrency = 1;
                a.throughput_median = *m;
                a.throughput_ci = Some(MedianInterval {
                    low: *lo,
                    high: *hi,
                    confidence: 0.75,
                });
                a
            })
            .collect();
        r
    }

    #[test]
    fn disjoint_pairs_are_decided_and_a_reversal_is_named() {
        let a = with(&[
            ("x", 100.0, 95.0, 105.0),
            ("y", 50.0, 45.0, 55.0),
            ("z", 52.0, 50.0, 56.0),
        ]);
        let b = with(&[
            ("x", 40.0, 38.0, 42.0),
            ("y", 60.0, 58.0, 62.0),
            ("z", 70.0, 65.0, 75.0),
        ]);
        let o = order_agreement(&a, &b);
        assert_eq!(o.len(), 1);
        let o = &o[0];
        assert_eq!((o.systems, o.pairs), (3, 3));
        // a: x–y, x–z decided; y–z overlap. b: all three decided.
        assert_eq!((o.decided_in_a, o.decided_in_b, o.both.len()), (2, 3, 2));
        assert_eq!(o.kept(), 0);
        assert_eq!(
            (o.both[0].first.as_str(), o.both[0].second.as_str()),
            ("x v", "y v")
        );
        let text = render(std::slice::from_ref(o));
        assert!(
            text.contains("decided in a: 2, in b: 3, in both: 2, kept their order: 0"),
            "{text}"
        );
        assert!(
            text.contains(
                "REVERSED: x v ahead of y v in a (100.0 [95.00–105.0] vs 50.00 [45.00–55.00] calls/s)"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_repeated_order_is_kept_and_figures_without_intervals_decide_nothing() {
        let a = with(&[("x", 100.0, 95.0, 105.0), ("y", 50.0, 45.0, 55.0)]);
        let mut b = with(&[("x", 90.0, 85.0, 95.0), ("y", 40.0, 35.0, 45.0)]);
        let o = order_agreement(&a, &b);
        assert_eq!((o[0].both.len(), o[0].kept()), (1, 1));
        b.aggregates[1].throughput_ci = None;
        let o = order_agreement(&a, &b);
        assert_eq!((o[0].systems, o[0].pairs, o[0].both.len()), (1, 0, 0));
        assert!(order_agreement(&a, &with(&[])).is_empty());
    }
}
