//! `lab compare` of two reproductions of one post, claim by claim: does
//! the lab say the same thing twice?
//!
//! A reproduction stores its verdicts in `results.json`
//! (`reproduction.verdicts`, [`ClaimVerdict`]), decided once when it was
//! written. Comparing two reproductions of the same seed reads those
//! records and recomputes nothing, so the comparison cannot disagree with
//! either snapshot's own page. The comparison ([`VerdictComparison`]) is
//! data, built by a pure function ([`compare_verdicts`]) and rendered apart
//! ([`render`]), so a test can check agreement, overlap and flips without
//! reading any text.
//!
//! A *flip* is the one thing that counts as a regression here: a claim
//! decided in both reproductions whose direction or magnitude differs. A
//! claim decided in one only is not a flip (one run could not tell), and
//! neither is a moved ratio whose verdict stands.

use crate::format::{fmt_value, table};
use anyhow::{bail, Result};
use rpclab_model::result::Reproduction;
use rpclab_model::verdict::{Basis, ClaimVerdict, Direction, Magnitude, PairVerdict};
use tabled::builder::Builder;

/// How one claim (or pair) fares across the two reproductions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// Decided in both, same direction and magnitude.
    Agree,
    /// Decided in both, and the direction or the magnitude differs.
    Flip,
    /// Decided in both, and one of them rests on a host-dependent
    /// (latency-bound) pair: decided on each host, counted apart.
    HostDependent,
    /// Present in both, decided in at most one.
    NotDecidedInBoth,
    /// Present in one reproduction only.
    Missing,
}

impl Agreement {
    fn label(self) -> &'static str {
        match self {
            Agreement::Agree => "agree",
            Agreement::Flip => "FLIP",
            Agreement::HostDependent => "host-dependent",
            Agreement::NotDecidedInBoth => "not decided in both",
            Agreement::Missing => "in one only",
        }
    }

    /// Compares two sides, each decided or not, by their direction and
    /// magnitude: the two things a verdict asserts.
    fn of(a: Option<Said>, b: Option<Said>) -> Agreement {
        match (a, b) {
            (Some(a), Some(b)) if a.decided && b.decided => {
                if a.direction == b.direction && a.magnitude == b.magnitude {
                    Agreement::Agree
                } else {
                    Agreement::Flip
                }
            }
            (Some(_), Some(_)) => Agreement::NotDecidedInBoth,
            _ => Agreement::Missing,
        }
    }
}

/// What a verdict asserts, for [`Agreement::of`].
#[derive(Clone, Copy)]
struct Said {
    decided: bool,
    direction: Direction,
    magnitude: Option<Magnitude>,
}

/// One claim's verdict in one reproduction, without its pairs (they are
/// compared in [`PairRow`]s).
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimSide {
    pub label: String,
    pub decided: bool,
    pub direction: Direction,
    pub magnitude: Option<Magnitude>,
    pub basis: Option<Basis>,
    pub checked: u32,
    pub of: u32,
    pub unit: String,
    pub host_dependent: bool,
}

impl From<&ClaimVerdict> for ClaimSide {
    fn from(v: &ClaimVerdict) -> ClaimSide {
        ClaimSide {
            label: v.label.clone(),
            decided: v.decided,
            direction: v.direction,
            magnitude: v.magnitude,
            basis: v.basis,
            checked: v.checked,
            of: v.of,
            unit: v.unit.clone(),
            host_dependent: v.host_dependent,
        }
    }
}

impl ClaimSide {
    fn said(&self) -> Said {
        Said {
            decided: self.decided,
            direction: self.direction,
            magnitude: self.magnitude,
        }
    }
}

/// One claim in both reproductions.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimRow {
    pub claim: String,
    pub a: Option<ClaimSide>,
    pub b: Option<ClaimSide>,
    pub agreement: Agreement,
}

impl From<&PairVerdict> for Said {
    fn from(p: &PairVerdict) -> Said {
        Said {
            decided: p.decided,
            direction: p.direction,
            magnitude: p.magnitude,
        }
    }
}

/// A pair's ratio: `1.23 [1.10–1.35, 75 %]`, or the ratio alone.
fn describe(p: &PairVerdict) -> String {
    let mut s = fmt_value(p.measured);
    if let Some((lo, hi)) = p.low.zip(p.high) {
        s.push_str(&format!(" [{}–{}", fmt_value(lo), fmt_value(hi)));
        if let Some(c) = p.coverage {
            s.push_str(&format!(", {:.0} %", c * 100.0));
        }
        s.push(']');
    }
    s
}

/// One pair (over, under, level) of a claim present in both reproductions.
#[derive(Clone, Debug, PartialEq)]
pub struct PairRow {
    pub claim: String,
    pub over: String,
    pub under: String,
    pub level: Option<u32>,
    /// The pair's verdict in each reproduction.
    pub a: PairVerdict,
    pub b: PairVerdict,
    /// Whether the two ratios' intervals overlap; None when either has no
    /// interval (a single round).
    pub overlap: Option<bool>,
    pub agreement: Agreement,
}

/// Two reproductions of one seed, claim by claim and pair by pair.
#[derive(Clone, Debug, PartialEq)]
pub struct VerdictComparison {
    pub seed: String,
    /// The snapshots (`"a"`, `"b"`) that store no verdicts: written before
    /// verdicts were stored, they must be re-rendered to be compared.
    pub without_verdicts: Vec<&'static str>,
    pub claims: Vec<ClaimRow>,
    pub pairs: Vec<PairRow>,
    /// Pairs present in one reproduction only (not compared).
    pub pairs_in_one_only: usize,
}

impl VerdictComparison {
    fn count(&self, agreement: Agreement) -> usize {
        self.claims
            .iter()
            .filter(|c| c.agreement == agreement)
            .count()
    }
    /// Claims decided in both reproductions.
    pub fn decided_in_both(&self) -> usize {
        self.agree() + self.flips()
    }
    /// Claims decided in both, with the same direction and magnitude.
    pub fn agree(&self) -> usize {
        self.count(Agreement::Agree)
    }
    /// Claims decided in both whose direction or magnitude differs: the
    /// regressions `--fail-on-regression` fails on.
    pub fn flips(&self) -> usize {
        self.count(Agreement::Flip)
    }
}

/// Whether the intervals `[a.0, a.1]` and `[b.0, b.1]` share a point.
pub fn overlaps(a: (f64, f64), b: (f64, f64)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

/// The seed of a snapshot's reproduction, or why it has none, for the
/// error that two snapshots of different posts get.
fn seed_of(r: Option<&Reproduction>) -> String {
    r.map_or_else(
        || "no seed (a lab run)".to_owned(),
        |r| format!("seed {}", r.seed),
    )
}

/// Refuses to compare the verdicts of two different posts (or of a
/// reproduction and a lab run): their claims have nothing in common.
pub fn same_seed<'a>(
    a: Option<&'a Reproduction>,
    b: Option<&'a Reproduction>,
) -> Result<Option<(&'a Reproduction, &'a Reproduction)>> {
    match (a, b) {
        (None, None) => Ok(None),
        (Some(x), Some(y)) if x.seed == y.seed => Ok(Some((x, y))),
        _ => bail!(
            "a reproduces {}, b {}: only two reproductions of one post (or two lab runs) can be compared",
            seed_of(a),
            seed_of(b)
        ),
    }
}

/// Compares the stored verdicts of two reproductions of one seed; an error
/// when the seeds differ.
pub fn compare_verdicts(a: &Reproduction, b: &Reproduction) -> Result<VerdictComparison> {
    same_seed(Some(a), Some(b))?;
    let without_verdicts = [("a", a), ("b", b)]
        .into_iter()
        .filter(|(_, r)| r.verdicts.is_empty() && !r.claims.is_empty())
        .map(|(n, _)| n)
        .collect();
    let mut claims = Vec::new();
    let mut pairs = Vec::new();
    let mut pairs_in_one_only = 0;
    for id in claim_ids(a, b) {
        let va = a.verdicts.iter().find(|v| v.claim == id);
        let vb = b.verdicts.iter().find(|v| v.claim == id);
        let (sa, sb) = (va.map(ClaimSide::from), vb.map(ClaimSide::from));
        let host_dependent = [&sa, &sb]
            .iter()
            .any(|s| s.as_ref().is_some_and(|s| s.host_dependent));
        claims.push(ClaimRow {
            agreement: match Agreement::of(
                sa.as_ref().map(ClaimSide::said),
                sb.as_ref().map(ClaimSide::said),
            ) {
                Agreement::Agree | Agreement::Flip if host_dependent => Agreement::HostDependent,
                agreement => agreement,
            },
            claim: id.clone(),
            a: sa,
            b: sb,
        });
        if let (Some(va), Some(vb)) = (va, vb) {
            let (rows, lone) = pair_rows(&id, va, vb);
            pairs.extend(rows);
            pairs_in_one_only += lone;
        }
    }
    Ok(VerdictComparison {
        seed: a.seed.clone(),
        without_verdicts,
        claims,
        pairs,
        pairs_in_one_only,
    })
}

/// Claim ids with a verdict in either reproduction: a's order, then b's.
fn claim_ids(a: &Reproduction, b: &Reproduction) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for v in a.verdicts.iter().chain(&b.verdicts) {
        if !ids.contains(&v.claim) {
            ids.push(v.claim.clone());
        }
    }
    ids
}

/// The pairs of one claim present in both verdicts, and how many are in
/// one only.
fn pair_rows(claim: &str, a: &ClaimVerdict, b: &ClaimVerdict) -> (Vec<PairRow>, usize) {
    let key = |p: &PairVerdict| (p.over.clone(), p.under.clone(), p.level);
    let mut rows = Vec::new();
    for pa in &a.pairs {
        let Some(pb) = b.pairs.iter().find(|pb| key(pb) == key(pa)) else {
            continue;
        };
        rows.push(PairRow {
            claim: claim.to_owned(),
            over: pa.over.clone(),
            under: pa.under.clone(),
            level: pa.level,
            overlap: pa
                .low
                .zip(pa.high)
                .zip(pb.low.zip(pb.high))
                .map(|(x, y)| overlaps(x, y)),
            agreement: Agreement::of(Some(pa.into()), Some(pb.into())),
            a: pa.clone(),
            b: pb.clone(),
        });
    }
    let lone = a.pairs.len() + b.pairs.len() - 2 * rows.len();
    (rows, lone)
}

fn kebab<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// `decided, holds, matches, trustworthy, 3 of 3 pairs` for one side.
fn side_cells(s: Option<&ClaimSide>) -> [String; 2] {
    match s {
        None => ["-".into(), "no verdict".into()],
        Some(s) => [
            s.label.clone(),
            format!(
                "{}, {}, {}, {}, {} of {} {}",
                if s.decided { "decided" } else { "undecided" },
                kebab(&s.direction),
                s.magnitude.map_or("-".into(), |m| kebab(&m)),
                s.basis.map_or("-".into(), |b| kebab(&b)),
                s.checked,
                s.of,
                s.unit
            ),
        ],
    }
}

fn claims_table(c: &VerdictComparison, markdown: bool) -> String {
    let mut t = Builder::default();
    t.push_record([
        "claim",
        "a",
        "a: decided, direction, magnitude, basis, k of n",
        "b",
        "b: decided, direction, magnitude, basis, k of n",
        "",
    ]);
    for r in &c.claims {
        let [la, da] = side_cells(r.a.as_ref());
        let [lb, db] = side_cells(r.b.as_ref());
        t.push_record([
            r.claim.clone(),
            la,
            da,
            lb,
            db,
            r.agreement.label().to_owned(),
        ]);
    }
    table(t, markdown)
}

fn pairs_table(c: &VerdictComparison, markdown: bool) -> String {
    let mut t = Builder::default();
    t.push_record([
        "claim",
        "pair",
        "level",
        "ratio a",
        "ratio b",
        "intervals",
        "",
    ]);
    for p in &c.pairs {
        t.push_record([
            p.claim.clone(),
            format!("{} / {}", p.over, p.under),
            p.level.map_or("-".into(), |l| l.to_string()),
            describe(&p.a),
            describe(&p.b),
            match p.overlap {
                Some(true) => "overlap".into(),
                Some(false) => "DISJOINT".into(),
                None => "no interval".into(),
            },
            p.agreement.label().to_owned(),
        ]);
    }
    table(t, markdown)
}

/// The comparison as text (or Markdown): a line per snapshot without
/// verdicts, the claims side by side, the pairs' ratios, and the counts.
pub fn render(c: &VerdictComparison, markdown: bool) -> String {
    let mut out = format!(
        "{}Verdicts of two reproductions of seed {}\n\n",
        if markdown { "### " } else { "" },
        c.seed
    );
    for n in &c.without_verdicts {
        out.push_str(&format!(
            "{n}: no verdicts stored; re-render it with `cargo xtask lab report --redecide`\n"
        ));
    }
    if c.claims.is_empty() {
        return out;
    }
    out.push_str(&claims_table(c, markdown));
    out.push('\n');
    if !c.pairs.is_empty() {
        out.push_str("\nPairs in both (ratio: above 1, `over` is better; [interval, coverage]):\n");
        out.push_str(&pairs_table(c, markdown));
        out.push('\n');
    }
    if c.pairs_in_one_only > 0 {
        out.push_str(&format!(
            "{} pair(s) in one reproduction only, not compared.\n",
            c.pairs_in_one_only
        ));
    }
    out.push_str(&format!(
        "decided in both: {}, agree: {}, flips: {}, host-dependent (decided on each host, apart): {}{}\n",
        c.decided_in_both(),
        c.agree(),
        c.flips(),
        c.count(Agreement::HostDependent),
        if c.flips() > 0 {
            " (a flip is a regression: a decided verdict that changed its direction or magnitude)"
        } else {
            ""
        }
    ));
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn pair(
        over: &str,
        measured: f64,
        low: f64,
        high: f64,
        decided: bool,
    ) -> PairVerdict {
        PairVerdict {
            over: over.into(),
            under: "base".into(),
            level: Some(5),
            published: Some(2.0),
            measured,
            low: Some(low),
            high: Some(high),
            coverage: Some(0.75),
            rounds: 3,
            basis: Basis::Trustworthy,
            direction: if measured > 1.0 {
                Direction::Holds
            } else {
                Direction::Reversed
            },
            magnitude: Some(Magnitude::Matches),
            decided,
            why_undecided: (!decided).then(|| "interval crosses the noise band".into()),
            within_rounds: true,
            host_dependent: false,
            server_cpu: None,
            left_out: Vec::new(),
            starts: Vec::new(),
            cpu_disagrees: false,
            both_saturated: false,
        }
    }

    pub(crate) fn claim(
        id: &str,
        direction: Direction,
        decided: bool,
        pairs: Vec<PairVerdict>,
    ) -> ClaimVerdict {
        ClaimVerdict {
            claim: id.into(),
            decided,
            direction,
            magnitude: Some(Magnitude::Matches),
            basis: Some(Basis::Trustworthy),
            checked: pairs.len() as u32,
            of: pairs.len() as u32,
            unit: "pairs".into(),
            not_run: false,
            label: format!("{direction:?}"),
            detail: String::new(),
            pairs,
            plan: None,
            host_dependent: false,
            coverage: None,
        }
    }

    /// The reproduction of the committed fixture, with `verdicts`.
    pub(crate) fn reproduction(verdicts: Vec<ClaimVerdict>) -> Reproduction {
        let text = std::fs::read_to_string(crate::fixture::results_json()).unwrap();
        let results: rpclab_model::result::Results = serde_json::from_str(&text).unwrap();
        let mut r = results.reproduction.expect("the fixture is a reproduction");
        r.verdicts = verdicts;
        r
    }

    #[test]
    fn agreement_overlap_and_flips() {
        use Direction::{Holds, Reversed};
        let a = reproduction(vec![
            claim("c1", Holds, true, vec![pair("x", 2.0, 1.8, 2.2, true)]),
            claim("c2", Holds, true, vec![pair("y", 1.5, 1.4, 1.6, true)]),
            claim("c3", Holds, false, vec![pair("z", 1.1, 0.9, 1.3, false)]),
            claim("c4", Holds, true, Vec::new()),
        ]);
        let b = reproduction(vec![
            // The same verdict, a ratio that moved inside its interval.
            claim("c1", Holds, true, vec![pair("x", 2.1, 1.9, 2.3, true)]),
            // Reversed: a flip, with intervals far apart.
            claim("c2", Reversed, true, vec![pair("y", 0.6, 0.5, 0.7, true)]),
            // Decided now, undecided in a: not a flip.
            claim("c3", Reversed, true, vec![pair("z", 0.8, 0.7, 0.95, true)]),
            // c4 is missing; c5 is new.
            claim("c5", Holds, true, Vec::new()),
        ]);
        let c = compare_verdicts(&a, &b).unwrap();
        assert!(c.without_verdicts.is_empty());
        let agreement: Vec<(&str, Agreement)> = c
            .claims
            .iter()
            .map(|r| (r.claim.as_str(), r.agreement))
            .collect();
        assert_eq!(
            agreement,
            [
                ("c1", Agreement::Agree),
                ("c2", Agreement::Flip),
                ("c3", Agreement::NotDecidedInBoth),
                ("c4", Agreement::Missing),
                ("c5", Agreement::Missing),
            ]
        );
        assert_eq!((c.decided_in_both(), c.agree(), c.flips()), (2, 1, 1));
        let overlap: Vec<(&str, Option<bool>)> = c
            .pairs
            .iter()
            .map(|p| (p.over.as_str(), p.overlap))
            .collect();
        assert_eq!(
            overlap,
            [("x", Some(true)), ("y", Some(false)), ("z", Some(true))]
        );
        let text = render(&c, false);
        assert!(
            text.contains("decided in both: 2, agree: 1, flips: 1"),
            "{text}"
        );
        assert!(text.contains("FLIP") && text.contains("DISJOINT"), "{text}");
        assert!(text.contains("2.10 [1.90–2.30, 75 %]"), "{text}");
        assert!(render(&c, true).contains("| claim"), "markdown");
    }

    #[test]
    fn a_changed_magnitude_is_a_flip_and_a_single_round_has_no_overlap() {
        let a = reproduction(vec![claim(
            "c1",
            Direction::Holds,
            true,
            vec![pair("x", 2.0, 1.8, 2.2, true)],
        )]);
        let mut differs = claim(
            "c1",
            Direction::Holds,
            true,
            vec![pair("x", 5.0, 5.0, 5.0, true)],
        );
        differs.magnitude = Some(Magnitude::Differs);
        differs.pairs[0].low = None;
        differs.pairs[0].high = None;
        let b = reproduction(vec![differs]);
        let c = compare_verdicts(&a, &b).unwrap();
        assert_eq!(c.flips(), 1);
        assert_eq!(c.pairs[0].overlap, None);
    }

    #[test]
    fn different_seeds_are_one_error_and_missing_verdicts_one_line() {
        let a = reproduction(Vec::new());
        let mut b = a.clone();
        b.seed = "other-post".into();
        let e = compare_verdicts(&a, &b).unwrap_err().to_string();
        assert!(e.contains("seed other-post"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        let e = same_seed(Some(&a), None).unwrap_err().to_string();
        assert!(e.contains("no seed (a lab run)"), "{e}");
        assert!(same_seed(None, None).unwrap().is_none());
        let c = compare_verdicts(&a, &a).unwrap();
        assert_eq!(c.without_verdicts, ["a", "b"]);
        let text = render(&c, false);
        assert!(
            text.contains(
                "a: no verdicts stored; re-render it with `cargo xtask lab report --redecide`\n"
            ),
            "{text}"
        );
        assert_eq!(c.decided_in_both(), 0);
    }
}
