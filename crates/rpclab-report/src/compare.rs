//! `lab compare <a> <b>`: two snapshots cell by cell, with the noise of
//! each taken into account, so that a regression is flagged only when the
//! difference is larger than what repeating the same run would give; and
//! with the hosts taken into account, so that a slower host is not read as
//! slower code.
//!
//! The rule, per cell (server × variant × scenario × level) and per metric
//! (throughput, p99 latency): take the median over repetitions in each
//! snapshot and the relative change from `a` to `b`. The change is real
//! when it exceeds both a floor ([`crate::reproduction::NOISE_FLOOR`]) and
//! [`crate::reproduction::NOISE_SIGMAS`] times the combined coefficient of
//! variation of the two snapshots' repetitions, and, when both have several
//! repetitions, their ranges do not overlap. Otherwise it is "within noise".
//!
//! Hosts: each snapshot's `manifest.toml` says where it ran (`[host]`) and,
//! since calibration exists, how fast that host's CPU sets were
//! (`[calibration]`). Different hosts, or calibrations further apart than
//! [`CALIBRATION_TOLERANCE`], get one warning line each. `--normalize`
//! divides `b`'s throughput by the calibration ratio b / a of the figure
//! that limited the cell ([`calibration_figure`]). And whatever the
//! absolute level did, Kendall's τ-b of the servers' throughput at each
//! scenario × level says whether the ranking held ([`kendall_tau_b`]).
//!
//! Two lab runs also get the pairs of servers whose order each run
//! decided (disjoint throughput intervals) and how many kept it
//! ([`pair_order`]), and both hosts' calibrations side by side
//! ([`calibration_table`]), so a reader sees why figures moved. Two
//! reproductions of one post get their stored verdicts side by side
//! ([`repeatability`]); there a *flip* (a decided verdict whose direction
//! or magnitude changed) is the regression. Two snapshots of different
//! posts, or a reproduction and a lab run, are one error.

use crate::format::fmt_value;
use crate::pair_order;
use crate::repeatability::{self, VerdictComparison};
use crate::reproduction::{NOISE_FLOOR, NOISE_SIGMAS};
use crate::snapshot::Setup;
use anyhow::Result;
use rpclab_model::aggregate::{coefficient_of_variation, keys, median};
use rpclab_model::result::{Calibration, Cell, CellFlag, CellKey, LimitSide, Results};
use std::path::Path;
use tabled::builder::Builder;

/// What a change amounts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Regression,
    Improvement,
    WithinNoise,
}

impl Change {
    fn label(self) -> &'static str {
        match self {
            Change::Regression => "REGRESSION",
            Change::Improvement => "improvement",
            Change::WithinNoise => "within noise",
        }
    }
}

/// The repetitions of one metric of one cell.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub values: Vec<f64>,
}

impl Sample {
    pub fn median(&self) -> f64 {
        median(&self.values)
    }
    fn cv(&self) -> f64 {
        coefficient_of_variation(&self.values)
    }
    fn range(&self) -> (f64, f64) {
        self.values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(*v), b.max(*v))
            })
    }
}

/// Classifies the change from `a` to `b`; `higher_is_better` for throughput.
pub fn classify(a: &Sample, b: &Sample, higher_is_better: bool) -> (f64, Change) {
    let (ma, mb) = (a.median(), b.median());
    if ma == 0.0 {
        return (0.0, Change::WithinNoise);
    }
    let rel = (mb - ma) / ma;
    let band = (NOISE_SIGMAS * (a.cv().powi(2) + b.cv().powi(2)).sqrt()).max(NOISE_FLOOR);
    let overlap = a.values.len() > 1 && b.values.len() > 1 && {
        let ((alo, ahi), (blo, bhi)) = (a.range(), b.range());
        alo <= bhi && blo <= ahi
    };
    if rel.abs() <= band || overlap {
        return (rel, Change::WithinNoise);
    }
    let better = (rel > 0.0) == higher_is_better;
    (
        rel,
        if better {
            Change::Improvement
        } else {
            Change::Regression
        },
    )
}

fn samples(results: &Results, k: &CellKey, f: fn(&Cell) -> f64) -> Sample {
    Sample {
        values: cells_of(results, k).into_iter().map(f).collect(),
    }
}

/// Calibrations whose figures differ by more than this share are
/// different hosts as far as the numbers go: the calibration's own
/// repeatability on one idle host is within a few percent.
pub const CALIBRATION_TOLERANCE: f64 = 0.05;

/// Where a snapshot ran, from its `manifest.toml` (`[host]`, written by
/// every run; `[calibration]`, written since calibration exists).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostRecord {
    pub cpu_model: Option<String>,
    pub cores: Option<usize>,
    pub kernel: Option<String>,
    pub calibration: Option<Calibration>,
    /// Whose network the run's containers used: `private` or `host` (the
    /// manifest's `network`, up to its first `:` or `,`; a run written
    /// before it was recorded used the host's).
    pub network: Option<String>,
    /// Which engine ran its containers ([`engine_of`]): `Docker <version>`,
    /// or `Kubernetes, <the node's runtime>` for a run on a cluster.
    pub engine: Option<String>,
    /// Why the manifest could not be read, when it could not.
    pub unreadable: Option<String>,
}

impl HostRecord {
    /// The host of a snapshot's setup; an unreadable manifest gives an
    /// empty record that says why (in the warnings).
    pub fn of(setup: &Setup) -> HostRecord {
        match setup {
            Ok(m) => HostRecord {
                cpu_model: Some(m.host.cpu_model.clone()),
                cores: Some(m.host.cores),
                kernel: Some(m.host.kernel.clone()),
                calibration: m.calibration.clone(),
                network: Some(network_mode(m.network.as_deref())),
                engine: Some(engine_of(m)),
                unreadable: None,
            },
            Err(why) => HostRecord {
                unreadable: Some(why.clone()),
                ..HostRecord::default()
            },
        }
    }

    fn describe(&self) -> String {
        format!(
            "{}, {} cores, kernel {}",
            self.cpu_model.as_deref().unwrap_or("?"),
            self.cores.map_or("?".into(), |c| c.to_string()),
            self.kernel.as_deref().unwrap_or("?")
        )
    }
}

/// Which engine ran a snapshot's containers: a run on a cluster records its
/// Pods (`[[pods]]`) and its node's runtime in the server's `[[hosts]]`
/// entry; any other ran on Docker (`[host]`'s version).
fn engine_of(m: &rpclab_model::manifest::RunManifest) -> String {
    if !m.ran_on_kubernetes() {
        return format!("Docker {}", m.host.docker_version);
    }
    let runtime = m
        .hosts
        .iter()
        .find(|h| h.roles.iter().any(|r| r == "server"))
        .map_or("?", |h| h.docker_version.as_str());
    format!("Kubernetes, {runtime}")
}

/// The first word of an engine's description: `Docker` or `Kubernetes`.
fn engine_kind(engine: &str) -> &str {
    engine.split([' ', ',']).next().unwrap_or(engine)
}

/// The network mode a manifest's `network` names (`private: ...`,
/// `host, multi-host: ...`): `host` when absent.
fn network_mode(recorded: Option<&str>) -> String {
    recorded
        .and_then(|n| n.split([':', ',']).next())
        .map_or("host", str::trim)
        .to_owned()
}

/// A snapshot to compare: its results and where they were measured.
pub struct Snapshot {
    pub results: Results,
    pub host: HostRecord,
}

impl Snapshot {
    /// Reads `results.json` (aggregates recomputed from the cells) and
    /// `manifest.toml` of a snapshot folder.
    pub fn read(dir: &Path) -> Result<Snapshot> {
        let results = crate::snapshot::read_snapshot(dir)?;
        let host = HostRecord::of(&crate::snapshot::read_manifest(dir));
        Ok(Snapshot { results, host })
    }
}

/// One line per difference between the two hosts that matters to the
/// numbers: different machines (CPU model, cores, kernel), calibrations
/// further apart than [`CALIBRATION_TOLERANCE`], or no calibration to tell.
pub fn host_warnings(a: &HostRecord, b: &HostRecord) -> Vec<String> {
    let mut out = Vec::new();
    if a.cpu_model != b.cpu_model || a.cores != b.cores || a.kernel != b.kernel {
        out.push(format!(
            "warning: different hosts (a: {}; b: {}): absolute changes mix host and code; read the rank agreement below{}",
            a.describe(),
            b.describe(),
            if a.calibration.is_some() && b.calibration.is_some() {
                ", or compare with --normalize"
            } else {
                ""
            }
        ));
    }
    let engines = match (&a.engine, &b.engine) {
        (Some(ea), Some(eb)) if engine_kind(ea) != engine_kind(eb) => Some((ea, eb)),
        _ => None,
    };
    if let Some((ea, eb)) = engines {
        out.push(format!(
            "warning: different engines (a: {ea}; b: {eb}): containers and Pods are started, pinned (cpusets, or the kubelet's CPU manager) and networked (a run's namespace, or the Pod network) differently, so absolute changes mix engine and code; read both hosts' calibrations below and the rank agreement (docs/kubernetes.md, \"A cluster's snapshot beside a Docker host's\")"
        ));
    }
    if let (Some(na), Some(nb), None) = (&a.network, &b.network, engines) {
        if na != nb {
            out.push(format!(
                "warning: different networks (a: {na}, b: {nb}): the loopback of a run's private namespace measured faster than the host's (docs/methodology.md, \"The run's network\"); compare runs of one network"
            ));
        }
    }
    match (&a.calibration, &b.calibration) {
        (Some(ca), Some(cb)) => {
            let diffs: Vec<String> = figures(ca, cb)
                .into_iter()
                .filter(|(_, x, y)| (y / x - 1.0).abs() > CALIBRATION_TOLERANCE)
                .map(|(name, x, y)| format!("{name} {:+.1} %", (y / x - 1.0) * 100.0))
                .collect();
            if !diffs.is_empty() {
                out.push(format!(
                    "warning: the calibrations differ beyond {:.0} % (b vs a: {}): the host's speed moved",
                    CALIBRATION_TOLERANCE * 100.0,
                    diffs.join(", ")
                ));
            }
        }
        _ => {
            let missing: Vec<String> = [("a", a), ("b", b)]
                .iter()
                .filter(|(_, h)| h.calibration.is_none())
                .map(|(n, h)| match &h.unreadable {
                    Some(e) => {
                        format!("{n} (unreadable: {})", e.lines().next().unwrap_or_default())
                    }
                    None => n.to_string(),
                })
                .collect();
            out.push(format!(
                "note: no calibration in snapshot {} (written before calibration existed): host speeds cannot be compared or normalised",
                missing.join(" and ")
            ));
        }
    }
    out
}

/// Every calibration figure of `a` and `b`, by name.
fn figures(a: &Calibration, b: &Calibration) -> Vec<(&'static str, f64, f64)> {
    vec![
        (
            "server cpu_rounds_per_s",
            a.server.cpu_rounds_per_s,
            b.server.cpu_rounds_per_s,
        ),
        (
            "server loopback_round_trips_per_s",
            a.server.loopback_round_trips_per_s,
            b.server.loopback_round_trips_per_s,
        ),
        (
            "client cpu_rounds_per_s",
            a.client.cpu_rounds_per_s,
            b.client.cpu_rounds_per_s,
        ),
        (
            "client loopback_round_trips_per_s",
            a.client.loopback_round_trips_per_s,
            b.client.loopback_round_trips_per_s,
        ),
    ]
    .into_iter()
    .filter(|(_, x, y)| *x > 0.0 && *y > 0.0)
    .collect()
}

/// Which calibration figure stands for the speed that limited a cell:
/// the client CPU set's `cpu_rounds_per_s` when the client was the limit
/// (client-bound), the server CPU set's `loopback_round_trips_per_s` when
/// neither side's cores were (a latency-bound closed loop: its rate is set
/// by round trips), and otherwise, server-bound or not recorded, the server
/// CPU set's `cpu_rounds_per_s`: the server's code is what is measured.
pub fn calibration_figure(cells: &[&Cell]) -> (&'static str, fn(&Calibration) -> f64) {
    let client_bound = cells.iter().any(|c| {
        c.flags.contains(&CellFlag::ClientBound)
            || c.client_bound.is_some()
            || c.limit
                .as_ref()
                .is_some_and(|l| l.side == LimitSide::Client)
    });
    let neither = !cells.is_empty()
        && cells.iter().all(|c| {
            c.limit
                .as_ref()
                .is_some_and(|l| l.side == LimitSide::Neither)
                && !c.flags.contains(&CellFlag::ServerBound)
        });
    fn server_cpu(c: &Calibration) -> f64 {
        c.server.cpu_rounds_per_s
    }
    fn client_cpu(c: &Calibration) -> f64 {
        c.client.cpu_rounds_per_s
    }
    fn server_loopback(c: &Calibration) -> f64 {
        c.server.loopback_round_trips_per_s
    }
    if client_bound {
        ("client cpu_rounds_per_s", client_cpu)
    } else if neither {
        ("server loopback_round_trips_per_s", server_loopback)
    } else {
        ("server cpu_rounds_per_s", server_cpu)
    }
}

/// `b`'s throughput in `a`'s host units: divided by the calibration ratio
/// b / a of the chosen figure. None when a figure is missing or zero.
pub fn normalise(throughput_b: f64, figure_a: f64, figure_b: f64) -> Option<f64> {
    (figure_a > 0.0 && figure_b > 0.0).then(|| throughput_b / (figure_b / figure_a))
}

/// Kendall's τ-b between two paired rankings (ties allowed in either):
/// (concordant − discordant) / √((n₀ − ties in x)(n₀ − ties in y)), with n₀
/// the number of pairs. 1: the same order; −1: reversed; None when fewer
/// than two items or one side is all ties. Also returns the discordant
/// pairs and all pairs.
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Option<(f64, usize, usize)> {
    let n = x.len().min(y.len());
    if n < 2 {
        return None;
    }
    let (mut concordant, mut discordant, mut ties_x, mut ties_y) = (0usize, 0usize, 0usize, 0usize);
    for i in 0..n {
        for j in i + 1..n {
            let dx = (x[i] - x[j]).partial_cmp(&0.0)?;
            let dy = (y[i] - y[j]).partial_cmp(&0.0)?;
            use std::cmp::Ordering::Equal;
            match (dx, dy) {
                (Equal, Equal) => {
                    ties_x += 1;
                    ties_y += 1;
                }
                (Equal, _) => ties_x += 1,
                (_, Equal) => ties_y += 1,
                (a, b) if a == b => concordant += 1,
                _ => discordant += 1,
            }
        }
    }
    let pairs = n * (n - 1) / 2;
    let denom = (((pairs - ties_x) * (pairs - ties_y)) as f64).sqrt();
    if denom == 0.0 {
        return None;
    }
    Some((
        (concordant as f64 - discordant as f64) / denom,
        discordant,
        pairs,
    ))
}

/// The rank agreement at one scenario × level.
#[derive(Clone, Debug, PartialEq)]
pub struct RankAgreement {
    pub scenario: String,
    pub level: u32,
    pub servers: usize,
    pub tau: Option<f64>,
    pub discordant: usize,
    pub pairs: usize,
}

/// The comparison's outcome: its text (host warnings, table, counts, rank
/// agreement, decided pairs or verdicts) and what it found, as data.
pub struct Report {
    pub text: String,
    /// Cells whose throughput or p99 changed beyond their noise.
    pub regressions: usize,
    /// Two reproductions of one post: their verdicts side by side.
    pub verdicts: Option<VerdictComparison>,
}

impl Report {
    /// What `--fail-on-regression` fails on, in words, or None: for two
    /// reproductions a flipped verdict (a cell's change between two
    /// reproductions is what the verdicts already weigh); for two lab runs
    /// a cell's regression.
    pub fn regression(&self) -> Option<String> {
        match &self.verdicts {
            Some(v) => (v.flips() > 0).then(|| {
                format!(
                    "{} decided verdict(s) of seed {} flipped",
                    v.flips(),
                    v.seed
                )
            }),
            None => (self.regressions > 0).then(|| format!("{} regression(s)", self.regressions)),
        }
    }
}

/// `lab compare --fail-on-regression`'s exit code when it finds a
/// regression, apart from 1 (any error: an unreadable snapshot, two
/// different posts), so CI can tell a regression from a broken comparison.
pub const REGRESSION_EXIT_CODE: i32 = 3;

/// The error `--fail-on-regression` returns; `main` exits with
/// [`REGRESSION_EXIT_CODE`] on it.
#[derive(Debug)]
pub struct RegressionFound(pub String);

impl std::fmt::Display for RegressionFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RegressionFound {}

/// Compares snapshot folders `a` (before) and `b` (after).
pub fn compare_dirs(a: &Path, b: &Path, normalize: bool) -> Result<Report> {
    compare(&Snapshot::read(a)?, &Snapshot::read(b)?, normalize)
}

/// Both hosts' calibration figures side by side, with the ratio b / a:
/// the host's share of why figures moved. One line when neither snapshot
/// has a calibration.
pub fn calibration_table(a: &HostRecord, b: &HostRecord) -> String {
    if a.calibration.is_none() && b.calibration.is_none() {
        return "Host calibration: none in either snapshot.\n".into();
    }
    let mut t = Builder::default();
    t.push_record(["calibration", "a", "b", "b / a"]);
    let value = |h: &HostRecord, f: fn(&Calibration) -> f64| h.calibration.as_ref().map(f);
    for (name, f) in calibration_figures() {
        let (x, y) = (value(a, f), value(b, f));
        t.push_record([
            name.to_owned(),
            x.map_or("-".into(), fmt_value),
            y.map_or("-".into(), fmt_value),
            match (x, y) {
                (Some(x), Some(y)) if x > 0.0 => format!("{:.3}", y / x),
                _ => "-".into(),
            },
        ]);
    }
    let table = crate::format::table(t, false);
    format!("Host calibration (per second, measured at the start of each run):\n{table}\n")
}

/// A calibration figure: its name and how to read it.
type CalibrationFigure = (&'static str, fn(&Calibration) -> f64);

/// The four calibration figures, by name, in the order they are shown.
fn calibration_figures() -> [CalibrationFigure; 4] {
    [
        ("server cpu_rounds_per_s", |c| c.server.cpu_rounds_per_s),
        ("server loopback_round_trips_per_s", |c| {
            c.server.loopback_round_trips_per_s
        }),
        ("client cpu_rounds_per_s", |c| c.client.cpu_rounds_per_s),
        ("client loopback_round_trips_per_s", |c| {
            c.client.loopback_round_trips_per_s
        }),
    ]
}

fn cells_of<'a>(results: &'a Results, k: &CellKey) -> Vec<&'a Cell> {
    results.cells.iter().filter(|c| c.key() == *k).collect()
}

/// Compares snapshot `a` (before) with `b` (after); with `normalize` (and
/// both calibrations), `b`'s throughput is expressed in `a`'s host units.
/// An error when they are reproductions of different posts (or one is a
/// reproduction and the other a lab run).
pub fn compare(sa: &Snapshot, sb: &Snapshot, normalize: bool) -> Result<Report> {
    let (a, b) = (&sa.results, &sb.results);
    let verdicts = match repeatability::same_seed(a.reproduction.as_ref(), b.reproduction.as_ref())?
    {
        Some((ra, rb)) => Some(repeatability::compare_verdicts(ra, rb)?),
        None => None,
    };
    let warnings = host_warnings(&sa.host, &sb.host);
    let calibrations = match (&sa.host.calibration, &sb.host.calibration) {
        (Some(x), Some(y)) if normalize => Some((x, y)),
        _ => None,
    };
    let mut notes = Vec::new();
    if normalize && calibrations.is_none() {
        notes.push(
            "--normalize not applied: both snapshots need a calibration; the figures below are as measured."
                .to_owned(),
        );
    }
    let cells = cell_table(a, b, calibrations);
    let (regressions, agreement) = (cells.regressions, rank_agreement(&cells.medians));
    let mut text = String::new();
    for w in warnings.iter().chain(&notes) {
        text.push_str(w);
        text.push('\n');
    }
    text.push_str(&cells.render(calibrations.is_some(), !warnings.is_empty()));
    text.push_str(&render_agreement(&agreement));
    text.push_str(&calibration_table(&sa.host, &sb.host));
    if verdicts.is_none() {
        text.push_str(&pair_order::render(&pair_order::order_agreement(a, b)));
    }
    if let Some(v) = &verdicts {
        text.push('\n');
        text.push_str(&repeatability::render(v, false));
    }
    Ok(Report {
        text,
        regressions,
        verdicts,
    })
}

/// Both snapshots' cells side by side, one row per key, and what the rows
/// add up to.
struct CellTable<'a> {
    table: Builder,
    regressions: usize,
    improvements: usize,
    /// Keys in one snapshot only.
    unmatched: usize,
    /// The calibration figures `b`'s throughput was normalised by.
    used_figures: Vec<&'static str>,
    /// Median throughput per key in both, for the rank agreement.
    medians: Vec<(CellKey<'a>, f64, f64)>,
}

/// One row of the cells table: key, throughput a and b, change, p99 a and
/// b, change, verdict.
type Row = [String; 11];

/// The cells table of `a` against `b`, `b`'s throughput normalised by
/// `calibrations` when given.
fn cell_table<'a>(
    a: &'a Results,
    b: &Results,
    calibrations: Option<(&Calibration, &Calibration)>,
) -> CellTable<'a> {
    let mut t = Builder::default();
    t.push_record([
        "server",
        "variant",
        "scenario",
        "level",
        "calls/s a",
        if calibrations.is_some() {
            "calls/s b (norm.)"
        } else {
            "calls/s b"
        },
        "Δ",
        "p99 ms a",
        "p99 ms b",
        "Δ",
        "verdict",
    ]);
    let mut cells = CellTable {
        table: t,
        regressions: 0,
        improvements: 0,
        unmatched: 0,
        used_figures: Vec::new(),
        medians: Vec::new(),
    };
    let (ka, kb) = (keys(&a.cells), keys(&b.cells));
    for k in &ka {
        if !kb.contains(k) {
            cells.unmatched += 1;
            cells.table.push_record(only_in(k, "a", a));
            continue;
        }
        let (row, change) = matched_row(a, b, k, calibrations, &mut cells);
        match change {
            Change::Regression => cells.regressions += 1,
            Change::Improvement => cells.improvements += 1,
            Change::WithinNoise => {}
        }
        cells.table.push_record(row);
    }
    for k in kb.iter().filter(|k| !ka.contains(k)) {
        cells.unmatched += 1;
        cells.table.push_record(only_in(k, "b", b));
    }
    cells
}

/// The row of a key measured in one snapshot only (`side`, whose
/// `results` give its throughput).
fn only_in(k: &CellKey, side: &str, results: &Results) -> Row {
    let figure = fmt_value(samples(results, k, |c| c.throughput_per_s).median());
    let (in_a, in_b) = if side == "a" {
        (figure, "-".to_owned())
    } else {
        ("-".to_owned(), figure)
    };
    [
        k.server.to_owned(),
        k.variant.to_owned(),
        k.scenario.to_owned(),
        k.level.to_string(),
        in_a,
        in_b,
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        format!("only in {side}"),
    ]
}

/// The row of a key in both snapshots and its change: throughput
/// (normalised when `calibrations` are given, the figure used noted in
/// `cells`) and p99, each against its noise.
fn matched_row<'a>(
    a: &Results,
    b: &Results,
    k: &CellKey<'a>,
    calibrations: Option<(&Calibration, &Calibration)>,
    cells: &mut CellTable<'a>,
) -> (Row, Change) {
    let ta = samples(a, k, |c| c.throughput_per_s);
    let mut tb = samples(b, k, |c| c.throughput_per_s);
    if let Some((ca, cb)) = calibrations {
        let (name, figure) = calibration_figure(&cells_of(b, k));
        if let Some(values) = tb
            .values
            .iter()
            .map(|v| normalise(*v, figure(ca), figure(cb)))
            .collect::<Option<Vec<f64>>>()
        {
            tb.values = values;
            if !cells.used_figures.contains(&name) {
                cells.used_figures.push(name);
            }
        }
    }
    let (pa, pb) = (
        samples(a, k, |c| c.latency_us.p99 / 1e3),
        samples(b, k, |c| c.latency_us.p99 / 1e3),
    );
    let (dt, ct) = classify(&ta, &tb, true);
    let (dp, cp) = classify(&pa, &pb, false);
    cells.medians.push((*k, ta.median(), tb.median()));
    let (change, verdict) = if ct == Change::Regression || cp == Change::Regression {
        let what: Vec<&str> = [(ct, "throughput"), (cp, "p99")]
            .into_iter()
            .filter(|(c, _)| *c == Change::Regression)
            .map(|(_, w)| w)
            .collect();
        let label = format!("{} ({})", Change::Regression.label(), what.join(", "));
        (Change::Regression, label)
    } else if ct == Change::Improvement || cp == Change::Improvement {
        (Change::Improvement, Change::Improvement.label().to_owned())
    } else {
        (Change::WithinNoise, Change::WithinNoise.label().to_owned())
    };
    let row = [
        k.server.to_owned(),
        k.variant.to_owned(),
        k.scenario.to_owned(),
        k.level.to_string(),
        fmt_value(ta.median()),
        fmt_value(tb.median()),
        format!("{:+.1}%", dt * 100.0),
        fmt_value(pa.median()),
        fmt_value(pb.median()),
        format!("{:+.1}%", dp * 100.0),
        verdict,
    ];
    (row, change)
}

impl CellTable<'_> {
    /// The table with what it adds up to: the normalisation used, the
    /// counts, the noise rule, and a word when the hosts differ (`hosts_differ`)
    /// and nothing was normalised.
    fn render(self, normalised: bool, hosts_differ: bool) -> String {
        let mut text = String::new();
        if normalised {
            text.push_str(&format!(
                "normalised: b's throughput divided by the calibration ratio b / a of {} (the figure of the side that limited each cell); p99 as measured.\n",
                if self.used_figures.is_empty() { "no figure".to_owned() } else { self.used_figures.join(", ") }
            ));
        }
        let table = crate::format::table(self.table, false);
        text.push_str(&format!(
            "{table}\n{} regression(s), {} improvement(s), {} cell(s) in one snapshot only.\n\
             A change counts when it exceeds {:.0}% and {NOISE_SIGMAS}× the combined CV of both snapshots' repetitions, \
             and their repetitions' ranges do not overlap.\n",
            self.regressions,
            self.improvements,
            self.unmatched,
            NOISE_FLOOR * 100.0
        ));
        if hosts_differ && self.regressions > 0 && !normalised {
            text.push_str(
                "The hosts differ (see above): a regression here may be the host, not the code.\n",
            );
        }
        text
    }
}

/// Kendall's τ-b of the servers' median throughput in `a` and `b`, per
/// scenario × level present in both.
fn rank_agreement(medians: &[(CellKey, f64, f64)]) -> Vec<RankAgreement> {
    let mut groups: Vec<(&str, u32)> = Vec::new();
    for (k, _, _) in medians {
        if !groups.contains(&(k.scenario, k.level)) {
            groups.push((k.scenario, k.level));
        }
    }
    groups
        .into_iter()
        .map(|(scenario, level)| {
            let (x, y): (Vec<f64>, Vec<f64>) = medians
                .iter()
                .filter(|(k, _, _)| k.scenario == scenario && k.level == level)
                .map(|(_, a, b)| (*a, *b))
                .unzip();
            let tau = kendall_tau_b(&x, &y);
            RankAgreement {
                scenario: scenario.to_owned(),
                level,
                servers: x.len(),
                tau: tau.map(|t| t.0),
                discordant: tau.map_or(0, |t| t.1),
                pairs: tau.map_or(0, |t| t.2),
            }
        })
        .collect()
}

fn render_agreement(agreement: &[RankAgreement]) -> String {
    if agreement.is_empty() {
        return "Rank agreement: no scenario × level in both snapshots.\n".into();
    }
    let mut out = String::from(
        "Rank agreement (Kendall's τ-b of the servers' median throughput, a vs b; 1 = the same order, whatever the absolute level did):\n",
    );
    for r in agreement {
        match r.tau {
            Some(tau) => out.push_str(&format!(
                "  {} level {}: τ = {tau:.2} over {} servers ({} of {} pairs swapped)\n",
                r.scenario, r.level, r.servers, r.discordant, r.pairs
            )),
            None => out.push_str(&format!(
                "  {} level {}: no τ ({} server(s) in both)\n",
                r.scenario, r.level, r.servers
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[f64]) -> Sample {
        Sample { values: v.to_vec() }
    }

    #[test]
    fn a_clear_drop_in_throughput_is_a_regression() {
        let (rel, c) = classify(
            &s(&[1000.0, 1010.0, 990.0]),
            &s(&[800.0, 805.0, 795.0]),
            true,
        );
        assert_eq!(c, Change::Regression);
        assert!((rel + 0.2).abs() < 1e-9);
        assert_eq!(
            classify(
                &s(&[800.0, 805.0, 795.0]),
                &s(&[1000.0, 1010.0, 990.0]),
                true
            )
            .1,
            Change::Improvement
        );
    }

    #[test]
    fn higher_latency_is_a_regression() {
        assert_eq!(
            classify(&s(&[1.0, 1.02, 0.98]), &s(&[2.0, 2.02, 1.98]), false).1,
            Change::Regression
        );
    }

    #[test]
    fn a_change_inside_the_spread_is_noise() {
        // 15% apart, but each snapshot's repetitions vary by ~10%: 2·√2·10% ≈ 28% band.
        let a = s(&[1000.0, 900.0, 1100.0]);
        let b = s(&[1150.0, 1035.0, 1265.0]);
        assert_eq!(classify(&a, &b, true).1, Change::WithinNoise);
        // Below the floor with a single repetition each.
        assert_eq!(
            classify(&s(&[1000.0]), &s(&[970.0]), true).1,
            Change::WithinNoise
        );
        // Single repetitions beyond the floor count.
        assert_eq!(
            classify(&s(&[1000.0]), &s(&[900.0]), true).1,
            Change::Regression
        );
    }

    #[test]
    fn kendall_tau_b_known_values_and_ties() {
        // The same order, the reverse, and nothing to rank.
        assert_eq!(
            kendall_tau_b(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]),
            Some((1.0, 0, 3))
        );
        assert_eq!(
            kendall_tau_b(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]),
            Some((-1.0, 3, 3))
        );
        assert_eq!(kendall_tau_b(&[1.0], &[1.0]), None);
        assert_eq!(kendall_tau_b(&[1.0, 1.0], &[1.0, 2.0]), None);
        // One swap in four: C = 5, D = 1 of 6 pairs: τ = 4/6.
        let (tau, d, n) = kendall_tau_b(&[1.0, 2.0, 3.0, 4.0], &[1.0, 3.0, 2.0, 4.0]).unwrap();
        assert!((tau - 4.0 / 6.0).abs() < 1e-12 && d == 1 && n == 6, "{tau}");
        // Ties: x = (1, 2, 2, 3), y = (1, 2, 3, 4): C = 5, D = 0, one tie in
        // x: τ-b = 5 / √(5 · 6).
        let (tau, _, _) = kendall_tau_b(&[1.0, 2.0, 2.0, 3.0], &[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!((tau - 5.0 / 30f64.sqrt()).abs() < 1e-12, "{tau}");
    }

    #[test]
    fn normalising_divides_by_the_calibration_ratio() {
        // b's host is 25 % slower: 750 calls/s there are 1000 on a's host.
        assert_eq!(normalise(750.0, 2.0e6, 1.5e6), Some(1000.0));
        assert_eq!(normalise(750.0, 0.0, 1.5e6), None);
    }

    fn calibration(server: f64, client: f64) -> Calibration {
        let f = |cpu: f64| rpclab_model::result::CalibrationFigures {
            cpus: "0".into(),
            cpu_rounds_per_s: cpu,
            loopback_round_trips_per_s: 40_000.0,
        };
        Calibration {
            server: f(server),
            client: f(client),
            across: None,
        }
    }

    /// A host of two cores on kernel 6.18, without a calibration.
    fn host(cpu_model: &str) -> HostRecord {
        HostRecord {
            cpu_model: Some(cpu_model.into()),
            cores: Some(2),
            kernel: Some("6.18".into()),
            calibration: None,
            network: None,
            engine: None,
            unreadable: None,
        }
    }

    /// `said` has a line for each of `starts`, beginning with it.
    #[track_caller]
    fn assert_lines_start(said: &[String], starts: &[&str]) {
        assert_eq!(said.len(), starts.len(), "{said:?}");
        for (line, start) in said.iter().zip(starts) {
            assert!(line.starts_with(start), "{start:?}: {said:?}");
        }
    }

    #[test]
    fn host_differences_get_one_line_each_and_old_snapshots_a_note() {
        let a = host("AMD EPYC");
        // Same host, no calibration: only the note.
        let w = host_warnings(&a, &a);
        assert_lines_start(&w, &["note: no calibration in snapshot a and b"]);
        // A calibrated, slower host with another CPU.
        let mut b = HostRecord {
            calibration: Some(calibration(1.5e6, 2.0e6)),
            ..host("Intel Xeon")
        };
        let w = host_warnings(&a, &b);
        assert_lines_start(
            &w,
            &[
                "warning: different hosts (a: AMD EPYC, 2 cores, kernel 6.18; b: Intel Xeon",
                "",
            ],
        );
        assert!(w[1].contains("no calibration in snapshot a "), "{w:?}");
        // Both calibrated: the figure beyond the tolerance is named.
        let mut a2 = a.clone();
        a2.calibration = Some(calibration(2.0e6, 2.02e6));
        b.cpu_model = a2.cpu_model.clone();
        let w = host_warnings(&a2, &b);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("server cpu_rounds_per_s -25.0 %"), "{w:?}");
        assert!(
            !w[0].contains("client cpu_rounds_per_s"),
            "1 % is within the tolerance: {w:?}"
        );
        // Within the tolerance and on the same host: nothing to say.
        b.calibration = Some(calibration(1.95e6, 2.0e6));
        assert!(host_warnings(&a2, &b).is_empty());
        // Two networks are said; a manifest before `network` read as host.
        let private = HostRecord {
            network: Some(network_mode(Some("private: the run's own namespace"))),
            ..a2.clone()
        };
        let older = HostRecord {
            network: Some(network_mode(None)),
            ..a2.clone()
        };
        let said = host_warnings(&older, &private);
        assert!(
            said.iter()
                .any(|w| w.contains("different networks (a: host, b: private)")),
            "{said:?}"
        );
        assert!(host_warnings(&older, &older).is_empty());
        // Two engines are said once, in place of their networks.
        let docker = HostRecord {
            engine: Some("Docker 20.10.24".into()),
            ..private.clone()
        };
        let cluster = HostRecord {
            engine: Some("Kubernetes, containerd://2.4.2 (kubelet v1.34.4)".into()),
            network: Some(network_mode(Some(
                "pods: every server, registry and client is a Pod",
            ))),
            ..a2.clone()
        };
        let said = host_warnings(&docker, &cluster);
        assert_lines_start(
            &said,
            &["warning: different engines (a: Docker 20.10.24; b: Kubernetes, containerd://2.4.2"],
        );
        let newer_docker = HostRecord {
            engine: Some("Docker 27.0".into()),
            ..docker.clone()
        };
        assert!(host_warnings(&docker, &newer_docker).is_empty());
        // An unreadable manifest is said, not fatal.
        let bad = HostRecord::of(&Err("manifest.toml does not parse".into()));
        assert_eq!(bad.cpu_model, None);
        assert!(host_warnings(&a2, &bad)
            .iter()
            .any(|l| l.contains("b (unreadable")));
    }

    #[test]
    fn a_slower_host_is_not_slower_code_once_normalised() {
        let text = std::fs::read_to_string(crate::fixture::results_json()).unwrap();
        let results: Results = serde_json::from_str(&text).unwrap();
        let mut slower = results.clone();
        for c in &mut slower.cells {
            c.throughput_per_s *= 0.7;
        }
        let a = Snapshot {
            results,
            host: HostRecord {
                calibration: Some(calibration(2.0e6, 2.0e6)),
                ..host("AMD EPYC")
            },
        };
        let b = Snapshot {
            results: slower,
            host: HostRecord {
                calibration: Some(calibration(1.4e6, 1.4e6)),
                ..host("Intel Xeon")
            },
        };
        let raw = compare(&a, &b, false).unwrap();
        assert!(raw.regressions > 0, "{}", raw.text);
        assert!(
            raw.text.contains("warning: different hosts"),
            "{}",
            raw.text
        );
        assert!(
            raw.text.contains("may be the host, not the code"),
            "{}",
            raw.text
        );
        // The order of the servers did not move.
        assert!(
            raw.text
                .contains("τ = 1.00 over 4 servers (0 of 6 pairs swapped)"),
            "{}",
            raw.text
        );
        let norm = compare(&a, &b, true).unwrap();
        assert!(
            norm.text
                .contains("normalised: b's throughput divided by the calibration ratio"),
            "{}",
            norm.text
        );
        assert!(
            !norm.text.contains("REGRESSION (throughput"),
            "{}",
            norm.text
        );
        // Asking to normalise without calibrations says it was not done.
        let mut old = b;
        old.host.calibration = None;
        let text = compare(&a, &old, true).unwrap().text;
        assert!(text.contains("--normalize not applied"), "{text}");
    }

    #[test]
    fn the_limiting_side_picks_the_calibration_figure() {
        let text = std::fs::read_to_string(crate::fixture::results_json()).unwrap();
        let results: Results = serde_json::from_str(&text).unwrap();
        let mut c = results.cells[0].clone();
        c.client_bound = None;
        c.flags = vec![CellFlag::ServerBound];
        c.limit = None;
        assert_eq!(calibration_figure(&[&c]).0, "server cpu_rounds_per_s");
        c.flags = vec![CellFlag::ClientBound];
        assert_eq!(calibration_figure(&[&c]).0, "client cpu_rounds_per_s");
        c.flags.clear();
        c.limit = Some(rpclab_model::result::Limit {
            side: LimitSide::Neither,
            server_busy: Some(0.3),
            client_busy: Some(0.2),
            threshold: 0.9,
        });
        assert_eq!(
            calibration_figure(&[&c]).0,
            "server loopback_round_trips_per_s"
        );
        let cal = calibration(2.0e6, 1.0e6);
        assert_eq!((calibration_figure(&[&c]).1)(&cal), 40_000.0);
    }

    #[test]
    fn overlapping_ranges_are_noise_even_past_the_band() {
        // Medians 10% apart with tiny CVs... but one outlier makes the ranges overlap.
        let a = s(&[1000.0, 1000.0, 1000.0, 1000.0, 900.0]);
        let b = s(&[900.0, 900.0, 900.0, 900.0, 905.0]);
        assert_eq!(classify(&a, &b, true).1, Change::WithinNoise);
    }

    fn fixture() -> Results {
        let text = std::fs::read_to_string(crate::fixture::results_json()).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    fn snapshot(results: Results) -> Snapshot {
        Snapshot {
            results,
            host: host("AMD EPYC"),
        }
    }

    #[test]
    fn two_reproductions_compare_their_verdicts_and_a_flip_is_the_regression() {
        use crate::repeatability::tests::{claim, pair};
        use rpclab_model::verdict::Direction;
        let mut a = fixture();
        let holds = |d| {
            vec![claim(
                "c1-ratios",
                d,
                true,
                vec![pair("ice", 2.0, 1.8, 2.2, true)],
            )]
        };
        a.reproduction.as_mut().unwrap().verdicts = holds(Direction::Holds);
        let same = compare(&snapshot(a.clone()), &snapshot(a.clone()), false).unwrap();
        let v = same.verdicts.as_ref().expect("two reproductions");
        assert_eq!((v.decided_in_both(), v.agree(), v.flips()), (1, 1, 0));
        assert_eq!(same.regression(), None);
        assert!(
            !same.text.contains("Decided pairs"),
            "reproductions compare verdicts, not pairs"
        );
        assert!(
            same.text.contains("decided in both: 1, agree: 1, flips: 0"),
            "{}",
            same.text
        );
        let mut b = a.clone();
        b.reproduction.as_mut().unwrap().verdicts = holds(Direction::Reversed);
        let flipped = compare(&snapshot(a.clone()), &snapshot(b), false).unwrap();
        assert_eq!(
            flipped.regression().as_deref(),
            Some("1 decided verdict(s) of seed ice-dubbo-thrift-grpc flipped")
        );
        // Another post, or a lab run: one error.
        let mut other = a.clone();
        other.reproduction.as_mut().unwrap().seed = "java-remoting".into();
        let e = compare(&snapshot(a.clone()), &snapshot(other), false)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("seed java-remoting"), "{e}");
        let mut lab = a.clone();
        lab.reproduction = None;
        assert!(compare(&snapshot(a), &snapshot(lab), false).is_err());
    }

    #[test]
    fn two_lab_runs_get_decided_pairs_and_both_calibrations() {
        let mut a = fixture();
        a.reproduction = None;
        a.aggregates = rpclab_model::aggregate::aggregate(&a.cells, 0.1);
        let mut sa = snapshot(a.clone());
        sa.host.calibration = Some(calibration(2.0e6, 2.0e6));
        let mut sb = snapshot(a);
        sb.host.calibration = Some(calibration(1.0e6, 2.0e6));
        let r = compare(&sa, &sb, false).unwrap();
        assert!(r.verdicts.is_none());
        let orders = pair_order::order_agreement(&sa.results, &sb.results);
        assert!(!orders.is_empty());
        for o in &orders {
            assert_eq!(o.kept(), o.both.len(), "the same run keeps every order");
        }
        assert!(r.text.contains(&pair_order::render(&orders)), "{}", r.text);
        assert!(
            r.text
                .contains("│ server cpu_rounds_per_s           │ 2000000 │ 1000000 │ 0.500 │"),
            "{}",
            r.text
        );
        let none = calibration_table(&HostRecord::default(), &HostRecord::default());
        assert_eq!(none, "Host calibration: none in either snapshot.\n");
        let one = calibration_table(&sa.host, &HostRecord::default());
        assert!(one.contains("│ 2000000 │ -"), "{one}");
    }
}
