//! A reproduction's report: every published figure beside the lab's
//! measurement of the same cell, and every claim of the post with its
//! verdict, rendered from what the snapshot stores.
//!
//! Absolute numbers from 2011–2019 hardware cannot match today's, so the
//! per-cell ratio (measured / published) is shown for orientation only; the
//! verdicts look at what can carry over between machines: which system is
//! faster, and by roughly how much.
//!
//! The verdicts and the measured twins are decided once
//! ([`crate::verdicts`]) and stored in `results.json`
//! ([`Reproduction::verdicts`], [`PublishedCell::measured`]); this module
//! prints them and recomputes nothing, except for a snapshot written
//! before they were stored, which [`compare`] decides on the fly.

use crate::format::{fmt_value, table, wrapped_table};
use crate::verdicts;
pub use crate::verdicts::{EQUIVALENCE_TOLERANCE, MAGNITUDE_TOLERANCE, NOISE_FLOOR, NOISE_SIGMAS};
use rpclab_model::result::{PublishedCell, Reproduction, Results, SeedSystem};
use rpclab_model::verdict::{Basis, ClaimVerdict, Direction, PairVerdict};
use std::fmt::Write as _;
use tabled::builder::Builder;

/// A claim beside its stored verdict.
#[derive(Clone, Debug)]
pub struct ClaimOutcome {
    pub id: String,
    pub text: String,
    pub verdict: ClaimVerdict,
}

impl ClaimOutcome {
    /// Some parts were decided, not all.
    pub fn partly_checked(&self) -> bool {
        self.verdict.checked > 0 && self.verdict.checked < self.verdict.of
    }

    /// The verdict in words, as stored.
    pub fn label(&self) -> &str {
        &self.verdict.label
    }

    pub fn detail(&self) -> &str {
        &self.verdict.detail
    }

    /// The pairs measured on a basis that can decide (not indicative).
    pub fn ratios(&self) -> impl Iterator<Item = &PairVerdict> {
        self.verdict
            .pairs
            .iter()
            .filter(|p| p.basis != Basis::Indicative)
    }
}

/// A pair's measured ratio as the README prints it: `1.42× [1.30, 1.55]
/// over 6 rounds`, with its basis when not the claim's measure and
/// `undecided` when it is.
pub fn pair_measured_text(p: &PairVerdict) -> String {
    let mut s = verdicts::pair_ratio_text(p);
    if p.basis != Basis::Trustworthy {
        s.push_str(&format!(" ({})", p.basis.label()));
    }
    if p.cpu_disagrees {
        s.push_str(" (withheld: throughput and CPU disagree)");
    } else if !p.decided {
        s.push_str(" (undecided)");
    }
    if p.host_dependent {
        s.push_str(" (host-dependent)");
    }
    s
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
    /// Why the measured value is not trustworthy, in the published unit
    /// (`lower bound`, `upper bound`, `unsteady`).
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
    /// With its verdicts and twins (decided now when the snapshot had none).
    pub reproduction: Reproduction,
    /// System key → why its stand-in's run failed (from the snapshot's errors).
    pub run_errors: Vec<(String, String)>,
    pub tables: Vec<ComparisonTable>,
    pub claims: Vec<ClaimOutcome>,
}

/// A twin's stored caveat as the charts' word (the set is closed: see
/// [`rpclab_model::verdict::Twin::caveats`]).
fn caveat_word(s: &str) -> &'static str {
    const WORDS: [&str; 6] = [
        "lower bound",
        "upper bound",
        "unsteady",
        "too few calls",
        "shared CPUs",
        "host busy",
    ];
    WORDS.into_iter().find(|w| *w == s).unwrap_or("unsteady")
}

/// One published figure beside its stored twin (or why it has none).
fn cell_comparison(cell: &PublishedCell) -> CellComparison {
    let (measured, missing, caveats) = match (&cell.measured, &cell.not_run) {
        (Some(t), _) => (
            Some(t.value.median),
            None,
            t.caveats.iter().map(|c| caveat_word(c)).collect(),
        ),
        (None, why) => (
            None,
            Some(why.clone().unwrap_or_else(|| "no lab cell".into())),
            Vec::new(),
        ),
    };
    CellComparison {
        published: cell.clone(),
        measured,
        ratio: measured
            .zip(cell.value)
            .and_then(|(m, p)| (p != 0.0).then_some(m / p)),
        missing,
        caveats,
    }
}

/// Places a comparison in its seed table, adding the table, column and row
/// as they first appear.
fn place(tables: &mut Vec<ComparisonTable>, cmp: CellComparison) {
    let cell = &cmp.published;
    let ti = match tables.iter().position(|t| t.title == cell.table) {
        Some(i) => i,
        None => {
            tables.push(ComparisonTable {
                title: cell.table.clone(),
                columns: Vec::new(),
                rows: Vec::new(),
            });
            tables.len() - 1
        }
    };
    let table = &mut tables[ti];
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

/// The comparison of a snapshot that is a reproduction, none for a lab
/// run: computed once per rendering and handed to each part that shows it.
pub fn of(results: &Results) -> Option<Comparison> {
    results.reproduction.as_ref().map(|r| compare(results, r))
}

/// The reproduction's figures and claims as stored in the snapshot (decided
/// now, by [`verdicts::decided`], when it stores none).
pub fn compare(results: &Results, reproduction: &Reproduction) -> Comparison {
    let r = verdicts::decided(results, reproduction);
    let mut tables: Vec<ComparisonTable> = Vec::new();
    for cell in &r.cells {
        place(&mut tables, cell_comparison(cell));
    }
    let claims = r
        .claims
        .iter()
        .enumerate()
        .map(|(i, c)| ClaimOutcome {
            id: c.id.clone(),
            text: c.text.clone(),
            // Stored in the claims' order; by id should they ever differ.
            verdict: r
                .verdicts
                .get(i)
                .filter(|v| v.claim == c.id)
                .or_else(|| r.verdicts.iter().find(|v| v.claim == c.id))
                .cloned()
                .unwrap_or_else(|| not_decided(&c.id)),
        })
        .collect();
    let run_errors = r
        .systems
        .iter()
        .filter_map(|s| {
            let (server, variant) = (s.server.as_deref()?, s.variant.as_deref()?);
            let e = results.errors.iter().find(|e| e.is_of(server, variant))?;
            Some((s.key.clone(), e.first_line().to_owned()))
        })
        .collect();
    Comparison {
        reproduction: r,
        run_errors,
        tables,
        claims,
    }
}

/// A claim with no stored verdict (cannot happen after [`verdicts::decided`]).
fn not_decided(id: &str) -> ClaimVerdict {
    ClaimVerdict {
        claim: id.to_owned(),
        decided: false,
        direction: Direction::NotComparable,
        magnitude: None,
        basis: None,
        checked: 0,
        of: 0,
        unit: "parts".into(),
        not_run: false,
        label: Direction::NotComparable.label().into(),
        detail: "no verdict stored".into(),
        pairs: Vec::new(),
        plan: None,
        host_dependent: false,
        coverage: None,
    }
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
    out.push_str(&wrapped_table(b, markdown, &[(1, 32), (3, 80)]));
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
        out.push_str(&table(b, markdown));
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
        b.push_record([c.text.clone(), c.label().to_owned(), c.detail().to_owned()]);
    }
    out.push_str(&wrapped_table(b, markdown, &[(0, 44), (1, 36), (2, 80)]));
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
    let f = NOISE_FLOOR * 100.0;
    format!(
        "Each pair's ratio is the median of its per-round ratios (systems measured in interleaved rounds; \
         rounds with a host-busy or failed cell left out) with its order-statistic interval, or, for cells not \
         measured in rounds, the ratio of the medians with the corners of their intervals. \
         Direction: within noise (decided: the systems are level) when the interval lies inside \
         [{down:.2}, {up:.2}]; when it is clear of 1, holds (reversed) if its median is ≥ {up:.2} (≤ {down:.2}), \
         else within noise (a real difference below the {f:.0} % floor); undecided when it holds 1 and reaches \
         past that band. Basis: trustworthy figures (not client-bound, steady, enough \
         calls, own CPUs, host quiet on most rounds) decide on the claim's measure; a client-bound figure whose server \
         was below 90 % busy decides on calls per server core-second; anything else is indicative and decides \
         nothing. A latency-bound pair (one synchronous caller, neither side's cores the limit) is marked \
         host-dependent, with its server CPU per call. Magnitude: the published ratio matches inside the interval \
         widened by {m:.0} %. Equivalence: holds when the interval lies within ±{e:.0} % of 1, does not hold when \
         it lies outside.",
        up = 1.0 + NOISE_FLOOR,
        down = 1.0 / (1.0 + NOISE_FLOOR),
        m = MAGNITUDE_TOLERANCE * 100.0,
        e = EQUIVALENCE_TOLERANCE * 100.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdicts::derive;
    use crate::verdicts::tests_support::*;
    use rpclab_model::result::{ClaimCheck, Measure};
    use rpclab_model::verdict::Direction as Verdict;

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
    fn ratio_claims_hold_reverse_or_cannot_be_compared() {
        let res = results(vec![
            agg("a", 300.0, 0.01, 0),
            agg("b", 100.0, 0.01, 0),
            agg("c", 400.0, 0.01, 0),
        ]);
        let r = repro(
            vec![
                ratio_claim("a", "b", 1.4),
                ratio_claim("a", "c", 1.4),
                ratio_claim("a", "ice", 3.0),
                ratio_claim("b", "a", 0.5),
            ],
            [systems(&["a", "b", "c"]), vec![system("ice", None)]].concat(),
            Vec::new(),
        );
        let cmp = compare(&res, &r);
        let v: Vec<Verdict> = cmp.claims.iter().map(|c| c.verdict.direction).collect();
        assert_eq!(
            v,
            [
                Verdict::Holds,
                Verdict::Reversed,
                Verdict::NotComparable,
                Verdict::Holds
            ]
        );
        assert_says(cmp.claims[0].detail(), "3.00×");
        assert_says(cmp.claims[2].detail(), "not run");
    }

    #[test]
    fn rankings_top_sets_and_error_claims() {
        let res = results(vec![
            agg("a", 300.0, 0.0, 0),
            agg("b", 200.0, 0.0, 0),
            agg("c", 250.0, 0.0, 3),
        ]);
        let systems = systems(&["a", "b", "c"]);
        let extremes = |id: &str, top: bool, systems: &[&str]| {
            let (scenario, levels, among) = ("s".into(), vec![1], names(&["a", "b", "c"]));
            let (measure, systems) = (Measure::Throughput, names(systems));
            let check = if top {
                ClaimCheck::Top {
                    measure,
                    scenario,
                    levels,
                    systems,
                    among,
                }
            } else {
                ClaimCheck::Bottom {
                    measure,
                    scenario,
                    levels,
                    systems,
                    among,
                }
            };
            claim(id, check)
        };
        let claims = vec![
            claim(
                "rank",
                ClaimCheck::Ranking {
                    measure: Measure::Throughput,
                    scenario: "s".into(),
                    levels: vec![1],
                    order: names(&["a", "b", "c"]),
                },
            ),
            extremes("top", true, &["a", "c"]),
            extremes("bottom", false, &["b"]),
            extremes("bottom-wrong", false, &["a"]),
            claim(
                "errors",
                ClaimCheck::NoErrors {
                    scenario: "s".into(),
                    systems: names(&["a", "c"]),
                },
            ),
        ];
        let cmp = compare(&res, &repro(claims, systems, Vec::new()));
        let expected = [
            // b (200) is not ahead of c (250): the ranking is reversed.
            Verdict::Reversed,
            Verdict::Holds,
            Verdict::Holds,
            Verdict::Reversed,
            // Failed calls are not a direction: the claim does not hold.
            Verdict::DoesNotHold,
        ];
        assert_eq!(cmp.claims.len(), expected.len());
        for (c, want) in cmp.claims.iter().zip(expected) {
            assert_eq!(c.verdict.direction, want, "{}", c.detail());
        }
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
    use super::*;
    use crate::verdicts::derive_interval;
    use crate::verdicts::tests_support::*;
    use rpclab_model::result::{CellFlag, ClaimCheck, Measure, RatioPair, SeedClaim};
    use rpclab_model::verdict::{Direction as Verdict, Magnitude};

    /// The comparison of `res` with a reproduction of `claims` over the
    /// named systems and no published cells: what most claim tests ask.
    fn compare_claims(res: &Results, claims: Vec<SeedClaim>, names: &[&str]) -> Comparison {
        compare(res, &repro(claims, systems(names), Vec::new()))
    }

    fn pairs_claim(pairs: &[(&str, &str, f64)]) -> SeedClaim {
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

    #[test]
    fn a_right_direction_with_the_wrong_size_differs_in_magnitude() {
        // "Ice is 4.7× gRPC", measured 1.9× [1.7, 2.1]-ish.
        let res = results(vec![
            spread("ice", 1900.0, 1850.0, 1950.0),
            spread("grpc", 1000.0, 930.0, 1080.0),
        ]);
        let cmp = compare_claims(
            &res,
            vec![pairs_claim(&[("ice", "grpc", 4.7)])],
            &["ice", "grpc"],
        );
        let c = &cmp.claims[0];
        assert_eq!(c.verdict.direction, Verdict::Holds);
        assert!(c.verdict.decided);
        assert_eq!(c.verdict.magnitude, Some(Magnitude::Differs));
        assert_eq!(c.label(), "holds; magnitude differs");
        assert_says(
            c.detail(),
            "ice over grpc 1.90× [1.68, 2.14] over 3 rounds in 3 starts (holds), magnitude differs: published 4.7× (band ±25 %)",
        );
        // The whole interval inside [2.0 / 1.25, 2.0 × 1.25] = [1.6, 2.5]:
        // a match; across the edge of [2.0, 3.125] (published 2.5): the
        // measurement cannot tell.
        let cmp = compare_claims(
            &res,
            vec![
                pairs_claim(&[("ice", "grpc", 2.0)]),
                pairs_claim(&[("ice", "grpc", 2.5)]),
            ],
            &["ice", "grpc"],
        );
        assert_eq!(cmp.claims[0].label(), "holds; magnitude matches");
        assert_eq!(cmp.claims[1].label(), "holds; magnitude undecided");
    }

    #[test]
    fn magnitude_is_judged_only_where_the_direction_holds() {
        let (a, b) = (agg("a", 1060.0, 0.0, 0), agg("b", 1000.0, 0.0, 0));
        let claims = vec![
            pairs_claim(&[("a", "b", 4.7)]),
            pairs_claim(&[("b", "a", 1.3)]),
        ];
        let cmp = compare_claims(&results(vec![a, b]), claims, &["a", "b"]);
        // 6 % is past the 5 % floor: the direction holds; 4.7 is far off.
        assert_eq!(cmp.claims[0].label(), "holds; magnitude differs");
        // Reversed: no magnitude.
        assert_eq!(cmp.claims[1].verdict.direction, Verdict::Reversed);
        assert_eq!(cmp.claims[1].verdict.magnitude, None);
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
                vec![pairs_claim(&[
                    ("ice", "thrift", 1.4),
                    ("ice", "dubbo", 3.2),
                    ("ice", "grpc", 4.7),
                ])],
                sys,
                Vec::new(),
            ),
        );
        let c = &cmp.claims[0];
        assert_eq!((c.verdict.checked, c.verdict.of), (1, 3));
        assert!(!c.verdict.decided);
        assert_eq!(
            c.label(),
            "partly checked (1 of 3 pairs): holds; magnitude matches"
        );
        assert_says(c.detail(), "ice over dubbo: dubbo not run");
        assert_says(c.detail(), "not measured");
    }

    #[test]
    fn untrustworthy_figures_are_shown_with_their_caveat_and_decide_nothing() {
        let mut ice = agg("ice", 100_000.0, 0.01, 0);
        ice.cell_flags = vec![CellFlag::ClientBound];
        // Noisy repetitions no longer distrust a figure: the interval carries the noise.
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
        let cmp = compare_claims(
            &res,
            vec![pairs_claim(&[("ice", "grpc", 4.7)]), ranking],
            &["ice", "rmi", "grpc"],
        );
        let c = &cmp.claims[0];
        assert_eq!((c.verdict.checked, c.verdict.of), (0, 1));
        assert_eq!(c.verdict.direction, Verdict::NotComparable);
        assert_eq!(
            c.verdict.basis,
            Some(rpclab_model::verdict::Basis::Indicative)
        );
        assert!(
            c.label() == "undecided (0 of 1 pairs decided)",
            "{}",
            c.label()
        );
        assert_says(
            c.detail(),
            "ice over grpc: not checked, ice 100000 calls/s (lower bound: client-bound;",
        );
        // 100000 / 20000: the direction it points to, undecided, and no
        // magnitude (judged only on a decided direction).
        assert!(
            c.detail().contains("indicative 5.00×") && !c.detail().contains("magnitude"),
            "{}",
            c.detail()
        );
        let r = &cmp.claims[1];
        assert_eq!((r.verdict.checked, r.verdict.of), (1, 2), "{}", r.detail());
        assert!(
            r.label()
                .starts_with("partly checked (1 of 2 pairs): holds"),
            "{}",
            r.label()
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
        assert_says(cmp.claims[0].detail(), "dubbo / motan 0.95×");
        // 0.30: not level, and equivalence has no direction to reverse.
        assert_eq!(cmp.claims[1].verdict.direction, Verdict::DoesNotHold);
        // Level with each other, both behind Hessian: 3 parts.
        assert_eq!(cmp.claims[2].verdict.of, 3);
        assert_eq!(cmp.claims[2].verdict.direction, Verdict::Holds);
        // ... but not behind sofa.
        assert_eq!(cmp.claims[3].verdict.direction, Verdict::Reversed);
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
        assert_says(c.detail(), "published 1.2×");
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

    #[test]
    fn a_time_from_a_lower_bound_throughput_is_an_upper_bound() {
        let mut a = agg("a", 1000.0, 0.0, 0);
        a.cell_flags = vec![CellFlag::ClientBound];
        let res = results(vec![a]);
        let published = |measure: Measure| PublishedCell {
            table: "T".into(),
            row: "a".into(),
            column: format!("{measure:?}"),
            system: "a".into(),
            unit: crate::verdicts::unit(measure).into(),
            value: Some(1.0),
            raw: "1".into(),
            measure: Some(measure),
            total_calls: Some(10_000),
            scenario: Some("s".into()),
            concurrency: Some(1),
            ..PublishedCell::default()
        };
        let cells = vec![
            published(Measure::Throughput),
            published(Measure::TotalSeconds),
        ];
        let mut r = repro(Vec::new(), vec![system("a", Some("a"))], cells);
        crate::verdicts::fill(&res, &mut r);
        let tput = r.cells[0].measured.as_ref().unwrap();
        let total = r.cells[1].measured.as_ref().unwrap();
        assert_eq!(tput.caveats, ["lower bound"]);
        assert_eq!(
            (total.value.median, total.caveats.as_slice()),
            (10.0, &["upper bound".to_owned()][..])
        );
        assert!(!total.trustworthy);
        let text = render(&compare(&res, &r), false);
        assert!(text.contains("lab 10.00 s (upper bound)"), "{text}");
        assert!(!text.contains(" s (lower bound)"), "{text}");
    }

    #[test]
    fn stored_verdicts_are_rendered_as_stored_and_older_snapshots_are_decided() {
        let mut cells = rounds("x", &[1200.0; 6]);
        cells.extend(rounds("y", &[1000.0; 6]));
        let res = run(cells);
        let mut r = repro(
            vec![pairs_claim(&[("x", "y", 1.2)])],
            systems(&["x", "y"]),
            Vec::new(),
        );
        assert!(crate::verdicts::needs_decision(&r));
        let older = compare(&res, &r);
        assert_eq!(older.claims[0].label(), "holds; magnitude matches");
        crate::verdicts::fill(&res, &mut r);
        assert!(!crate::verdicts::needs_decision(&r));
        // What is stored is what is printed.
        r.verdicts[0].label = "as stored".into();
        let cmp = compare(&res, &r);
        assert_eq!(cmp.claims[0].label(), "as stored");
        // And it survives results.json.
        let json = serde_json::to_string(&r).unwrap();
        let back: Reproduction = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }
}
