//! `lab reproduce <seed>`: run a seed's lab definition, then set every
//! published figure beside the lab's measurement of the same cell, and
//! check every claim of the post against the measured ratios and rankings.
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

use crate::run::{self, RunOptions};
use crate::seeds::Seed;
use anyhow::{bail, Result};
use rpclab_model::result::{
    Aggregate, ClaimCheck, Measure, PublishedCell, Reproduction, Results, SeedSystem,
};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
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

/// What the lab's measurement says about a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Measured in the same direction as claimed.
    Holds,
    /// Measured in the opposite direction.
    Reversed,
    /// Measured, but the difference is smaller than the noise.
    WithinNoise,
    /// Not measured (a system did not run, the claim is not measurable).
    NotComparable,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Reversed => "reversed",
            Verdict::WithinNoise => "within noise",
            Verdict::NotComparable => "not comparable",
        }
    }
}

/// A claim with its verdict and the figures behind it.
#[derive(Clone, Debug)]
pub struct ClaimOutcome {
    pub id: String,
    pub text: String,
    pub verdict: Verdict,
    pub detail: String,
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

/// Several verdicts as one: any reversal wins, then noise, and a claim
/// holds only when every measured part of it holds.
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
    } else if measured.contains(&Verdict::WithinNoise) {
        Verdict::WithinNoise
    } else {
        Verdict::Holds
    }
}

struct Lookup<'a> {
    results: &'a Results,
    systems: &'a [SeedSystem],
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

    fn value(
        &self,
        key: &str,
        scenario: &str,
        level: u32,
        m: Measure,
    ) -> Result<(f64, f64), String> {
        let a = self.aggregate(key, scenario, level)?;
        derive(a, m, None)
            .map(|v| (v, noise(a)))
            .ok_or_else(|| format!("{key}: no {m:?} in its measurement"))
    }
}

/// Compares a snapshot's measurements with the published figures it carries.
pub fn compare(results: &Results, reproduction: &Reproduction) -> Comparison {
    let lookup = Lookup {
        results,
        systems: &reproduction.systems,
    };
    let mut tables: Vec<ComparisonTable> = Vec::new();
    for cell in &reproduction.cells {
        let (measured, missing) = match (
            &cell.unlinked,
            &cell.scenario,
            cell.concurrency,
            cell.measure,
        ) {
            (Some(why), _, _, _) => (None, Some(format!("no lab cell: {why}"))),
            (None, Some(s), Some(c), Some(m)) => match lookup.aggregate(&cell.system, s, c) {
                Ok(a) => match derive(a, m, cell.total_calls) {
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
            let (verdict, detail) = check_claim(&lookup, &c.check);
            ClaimOutcome {
                id: c.id.clone(),
                text: c.text.clone(),
                verdict,
                detail,
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

fn check_claim(lookup: &Lookup, check: &ClaimCheck) -> (Verdict, String) {
    match check {
        ClaimCheck::NotCheckable { reason } => (Verdict::NotComparable, reason.clone()),
        ClaimCheck::Ratio {
            measure,
            scenario,
            concurrency,
            pairs,
        } => {
            let mut verdicts = Vec::new();
            let mut parts = Vec::new();
            for p in pairs {
                let a = lookup.value(&p.over, scenario, *concurrency, *measure);
                let b = lookup.value(&p.under, scenario, *concurrency, *measure);
                match (a, b) {
                    (Ok((a, na)), Ok((b, nb))) => {
                        let (ratio, v) = judge(a, b, na, nb, *measure);
                        // The claim's direction: a published ratio below 1
                        // says `over` is the slower one.
                        let v = if p.published < 1.0 {
                            match v {
                                Verdict::Holds => Verdict::Reversed,
                                Verdict::Reversed => Verdict::Holds,
                                other => other,
                            }
                        } else {
                            v
                        };
                        verdicts.push(v);
                        parts.push(format!(
                            "{}/{}: measured {ratio:.2}× vs published {}× ({})",
                            p.over,
                            p.under,
                            p.published,
                            v.label()
                        ));
                    }
                    (Err(why), _) | (_, Err(why)) => {
                        verdicts.push(Verdict::NotComparable);
                        parts.push(format!("{}/{}: {why}", p.over, p.under));
                    }
                }
            }
            (combine(&verdicts), parts.join("; "))
        }
        ClaimCheck::Ranking {
            measure,
            scenario,
            levels,
            order,
        } => {
            let mut verdicts = Vec::new();
            let mut parts = Vec::new();
            for level in levels {
                let mut measured = Vec::new();
                let mut errors = Vec::new();
                for key in order {
                    match lookup.value(key, scenario, *level, *measure) {
                        Ok(v) => measured.push((key, v)),
                        Err(why) => errors.push((key.clone(), why)),
                    }
                }
                parts.extend(level_errors(*level, errors));
                if measured.len() < 2 {
                    verdicts.push(Verdict::NotComparable);
                    continue;
                }
                let mut line = Vec::new();
                for w in measured.windows(2) {
                    let ((ka, (a, na)), (kb, (b, nb))) = (&w[0], &w[1]);
                    let (ratio, v) = judge(*a, *b, *na, *nb, *measure);
                    verdicts.push(v);
                    line.push(format!("{ka} over {kb} {ratio:.2}× ({})", v.label()));
                }
                parts.push(format!("level {level}: {}", line.join(", ")));
            }
            (combine(&verdicts), parts.join("; "))
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
        ClaimCheck::NoErrors { scenario, systems } => {
            let mut verdicts = Vec::new();
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
                        parts.push(format!("{key} not run (see systems)"));
                        verdicts.push(Verdict::NotComparable);
                        continue;
                    }
                    _ => Vec::new(),
                };
                if aggs.is_empty() {
                    verdicts.push(Verdict::NotComparable);
                    parts.push(format!("{key}: not measured"));
                    continue;
                }
                let failed: u64 = aggs.iter().map(|a| a.calls_failed).sum();
                let calls: u64 = aggs.iter().map(|a| a.calls_ok + a.calls_failed).sum();
                verdicts.push(if failed == 0 {
                    Verdict::Holds
                } else {
                    Verdict::Reversed
                });
                parts.push(format!("{key}: {failed} of {calls} calls failed"));
            }
            (combine(&verdicts), parts.join("; "))
        }
    }
}

/// Checks that `systems` are the best (or, with `worst`, the worst) of
/// `among` at each level: the weakest member of the claimed group must beat
/// the strongest outsider beyond the noise.
fn extremes(
    lookup: &Lookup,
    measure: Measure,
    scenario: &str,
    levels: &[u32],
    systems: &[String],
    among: &[String],
    worst: bool,
) -> (Verdict, String) {
    let mut verdicts = Vec::new();
    let mut parts = Vec::new();
    for level in levels {
        let mut group = Vec::new();
        let mut rest = Vec::new();
        let mut errors = Vec::new();
        for key in among {
            match lookup.value(key, scenario, *level, measure) {
                Ok(v) if systems.contains(key) => group.push((key, v)),
                Ok(v) => rest.push((key, v)),
                Err(why) => errors.push((key.clone(), why)),
            }
        }
        parts.extend(level_errors(*level, errors));
        if group.len() < systems.len() || rest.is_empty() {
            verdicts.push(Verdict::NotComparable);
            continue;
        }
        // "Better" in the claim's sense: for a bottom claim, worse.
        let ahead = |x: f64, y: f64| (x > y) == (measure.higher_is_better() != worst);
        let weakest = group
            .iter()
            .copied()
            .reduce(|acc, x| if ahead(acc.1 .0, x.1 .0) { x } else { acc })
            .expect("not empty");
        let strongest = rest
            .iter()
            .copied()
            .reduce(|acc, x| if ahead(x.1 .0, acc.1 .0) { x } else { acc })
            .expect("not empty");
        let (a, b) = if worst {
            (strongest, weakest)
        } else {
            (weakest, strongest)
        };
        let (ratio, v) = judge(a.1 .0, b.1 .0, a.1 .1, b.1 .1, measure);
        verdicts.push(v);
        parts.push(format!(
            "level {level}: {} over {} {ratio:.2}× ({})",
            a.0,
            b.0,
            v.label()
        ));
    }
    (combine(&verdicts), parts.join("; "))
}

/// A number at a precision that suits its size.
pub fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0".to_owned()
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
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
    let published = match p.value {
        Some(_) => format!("pub {}", p.raw.trim()),
        None => format!("pub {} (failed)", p.raw.trim()),
    };
    let measured = match (c.measured, &c.missing) {
        (Some(m), _) if p.unit == "count" => format!("lab {m:.0}"),
        (Some(m), _) => format!("lab {} {}", fmt_value(m), p.unit),
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
    let _ = writeln!(out, "{}Claims\n", h(3));
    let mut b = Builder::default();
    b.push_record(["claim", "verdict", "measured"]);
    for c in &cmp.claims {
        b.push_record([
            c.text.clone(),
            c.verdict.label().to_owned(),
            c.detail.clone(),
        ]);
    }
    out.push_str(&style(b, markdown, &[(0, 44), (2, 80)]));
    out.push_str("\n\n");
    if !r.notes.is_empty() {
        let _ = writeln!(out, "{}Notes\n", h(3));
        for n in &r.notes {
            let _ = writeln!(out, "- {n}");
        }
        out.push('\n');
    }
    out
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

/// What `lab reproduce` was asked for.
pub struct ReproduceOptions {
    pub profile: Option<String>,
    pub cpus: crate::cpus::CpuArgs,
    pub ca_certificates: Option<PathBuf>,
    pub results_dir: PathBuf,
    pub verbose: bool,
    pub port_wait_s: u64,
}

/// Runs one seed (or all) and prints its comparison; the snapshot also
/// gets it in `summary.md`, the charts and `report.html`.
pub async fn reproduce(root: &Path, ids: Vec<String>, opts: ReproduceOptions) -> Result<()> {
    let mut failures = Vec::new();
    for id in &ids {
        if let Err(e) = reproduce_one(root, id, &opts).await {
            eprintln!("error: seed {id}: {e:#}");
            failures.push(format!("{id}: {e:#}"));
        }
    }
    if !failures.is_empty() {
        bail!(
            "{} of {} seed reproduction(s) did not finish cleanly:\n- {}",
            failures.len(),
            ids.len(),
            failures.join("\n- ")
        );
    }
    Ok(())
}

async fn reproduce_one(root: &Path, id: &str, opts: &ReproduceOptions) -> Result<()> {
    let seed = Seed::load(root, id)?;
    let manifests = crate::manifest::load_all(root)?;
    let systems = seed.resolve(&manifests);
    let reproduction = seed.reproduction(systems.clone());
    let mut variants: Vec<(String, String)> = Vec::new();
    for s in &systems {
        if let (Some(server), Some(variant)) = (&s.server, &s.variant) {
            if !variants.contains(&(server.clone(), variant.clone())) {
                variants.push((server.clone(), variant.clone()));
            }
        }
    }
    eprintln!("seed {id}: {}", seed.def.title);
    for s in &systems {
        match (&s.server, &s.not_run) {
            (Some(server), _) => eprintln!(
                "  {:<18} → {server} {}",
                s.key,
                s.variant.as_deref().unwrap_or("")
            ),
            (None, Some(why)) => eprintln!("  {:<18} not run: {why}", s.key),
            _ => {}
        }
    }
    if variants.is_empty() {
        // Nothing can run yet: still show what was published and why.
        let empty = Results {
            schema_version: rpclab_model::result::SCHEMA_VERSION,
            complete: false,
            errors: vec!["no system of this seed can run in the lab yet".into()],
            cells: Vec::new(),
            aggregates: Vec::new(),
            reproduction: Some(reproduction.clone()),
        };
        println!("{}", render(&compare(&empty, &reproduction), false));
        eprintln!("seed {id}: no system can run yet, so no snapshot was written");
        return Ok(());
    }
    let mut only: Vec<String> = Vec::new();
    for (server, _) in &variants {
        if !only.contains(server) {
            only.push(server.clone());
        }
    }
    let (snapshot, outcome) = run::run_lab(
        root,
        seed.lab.clone(),
        RunOptions {
            lab: seed.path.clone(),
            only,
            profile: opts.profile.clone(),
            cpus: opts.cpus.clone(),
            ca_certificates: opts.ca_certificates.clone(),
            results_dir: opts.results_dir.clone(),
            verbose: opts.verbose,
            variants,
            reproduction: Some(reproduction),
            port_wait_s: opts.port_wait_s,
        },
    )
    .await;
    if let Some(dir) = &snapshot {
        let results = crate::snapshot::read_results(dir)?;
        if let Some(r) = &results.reproduction {
            println!("{}", render(&compare(&results, r), false));
        }
        eprintln!(
            "report: {} (charts in {})",
            dir.join("report.html").display(),
            dir.join("charts").display()
        );
    }
    outcome.map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpclab_model::result::{Latency, RatioPair, SeedClaim};

    fn agg(server: &str, tput: f64, cv: f64, failed: u64) -> Aggregate {
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
            latency_us: Latency {
                mean: 2000.0,
                p99: 5000.0,
                ..Latency::default()
            },
            calls_ok: 1000,
            calls_failed: failed,
            server_cpu_us_per_call: None,
            client_cpu_us_per_call: None,
            bytes_sent_per_call: 100.0,
            bytes_received_per_call: 200.0,
            flags: Vec::new(),
        }
    }

    fn system(key: &str, server: Option<&str>) -> SeedSystem {
        SeedSystem {
            key: key.into(),
            published_as: key.into(),
            server: server.map(Into::into),
            variant: server.map(|_| "v".into()),
            not_run: server.is_none().then(|| "no server folder yet".into()),
            note: None,
        }
    }

    fn results(aggs: Vec<Aggregate>) -> Results {
        Results {
            schema_version: 1,
            complete: true,
            errors: Vec::new(),
            cells: Vec::new(),
            aggregates: aggs,
            reproduction: None,
        }
    }

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
        assert_eq!(combine(&[NotComparable]), NotComparable);
        assert_eq!(combine(&[]), NotComparable);
    }

    fn repro(
        claims: Vec<SeedClaim>,
        systems: Vec<SeedSystem>,
        cells: Vec<PublishedCell>,
    ) -> Reproduction {
        Reproduction {
            seed: "t".into(),
            title: "t".into(),
            source: "s".into(),
            notes: Vec::new(),
            systems,
            cells,
            claims,
        }
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
        assert_eq!(
            cmp.claims[4].verdict,
            Verdict::Reversed,
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
    }
}
