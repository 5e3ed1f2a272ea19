//! The snapshot's charts (`charts/*.svg`) and its HTML page (`report.html`):
//! how the run was made, the flags' legend, tables and charts together in
//! one self-contained file (inline SVG, CSS and a few lines of script that
//! sort the tables; no network), so it opens from the file system years
//! later. Everything is rendered from `results.json` and the setup
//! ([`Setup`], from `manifest.toml`) alone.

use crate::charts::{self, Chart};
use crate::forest;
use crate::format::{fmt_value, slug};
use crate::reproduction::{self, CellComparison, ClaimOutcome, Comparison};
use crate::snapshot::Setup;
use crate::svg::{hatch_swatch, Hatch};
use crate::tables;
use anyhow::{Context, Result};
use maud::{html, Markup, PreEscaped, Render, DOCTYPE};
use rpclab_model::manifest::{ClientBuild, HostLoadSummary, RunManifest, ServerRecord};
use rpclab_model::result::{Aggregate, Calibration, CalibrationFigures, CellFlag, Results};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const CSS: &str = "body{font-family:sans-serif;margin:1.5em 2em;max-width:1560px;color:#222}\
h2{border-bottom:2px solid #ddd;padding-bottom:2px;margin-top:1.6em}\
table{border-collapse:collapse;margin:0.8em 0;font-size:13px}\
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right;vertical-align:top}\
th{background:#f3f3f3}td{white-space:nowrap}td.l,th.l{text-align:left;white-space:normal}\
table.pvm td.lab{white-space:normal;max-width:22em}td.ratio{font-weight:bold}\
table.kv th{text-align:left;white-space:nowrap}table.kv td{text-align:left;white-space:normal}\
table.sortable td.l{white-space:nowrap}table.sortable td.flags{white-space:normal}\
table.sortable th{cursor:pointer;user-select:none}\
table.sortable th[aria-sort=ascending]::after{content:' \\25B2'}\
table.sortable th[aria-sort=descending]::after{content:' \\25BC'}\
tr.caveat td{background:#fafafa;color:#555}\
.flag{display:inline-block;border-radius:3px;padding:0 4px;margin:1px;font-size:11px;background:#eee;white-space:nowrap}\
.f-client-bound{background:#fde0c8}.f-not-steady,.f-noisy{background:#fff0a8}\
.f-too-few-calls{background:#f6d0e4}.f-shared-cpus{background:#d8d8f4}.f-server-bound{background:#dcefdc}\
.pub{color:#a06000}.lab{color:#0060a0}.why{color:#777;font-size:11px}\
.holds{background:#e3f5e3}.reversed{background:#fbe3e3}.noise{background:#fff6d6}.nc{background:#eee}\
tr.forest td{background:white;padding:2px 4px 10px}.forest svg,.forest-legend svg{max-width:none}\
nav{font-size:13px;margin:0.5em 0}nav a{margin-right:1em}\
.charts{display:flex;flex-wrap:wrap;gap:10px}\
figure{margin:0.4em 0;flex:0 1 660px;max-width:760px}svg{max-width:100%;height:auto}";

/// Sorts a table of class `sortable` by the column whose header is
/// clicked, numerically where the cells carry `data-v`; a second click
/// reverses. Marks the page `data-sortable="ready"` once wired, which the
/// browser test looks for.
const SCRIPT: &str = "(function(){\
function key(c){var v=c.getAttribute('data-v');if(v===null)return c.textContent.trim().toLowerCase();var n=parseFloat(v);return isNaN(n)?-Infinity:n;}\
document.querySelectorAll('table.sortable').forEach(function(t){\
t.querySelectorAll('thead th').forEach(function(th,i){th.addEventListener('click',function(){\
var asc=th.getAttribute('aria-sort')!=='ascending';\
t.querySelectorAll('thead th').forEach(function(h){h.removeAttribute('aria-sort');});\
th.setAttribute('aria-sort',asc?'ascending':'descending');\
var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows);\
rows.sort(function(x,y){var p=key(x.cells[i]),q=key(y.cells[i]);return (p<q?-1:p>q?1:0)*(asc?1:-1);});\
rows.forEach(function(r){b.appendChild(r);});});});});\
document.documentElement.setAttribute('data-sortable','ready');})();";

/// Every cell flag, in the order the legend lists them.
const FLAGS: [CellFlag; 6] = [
    CellFlag::ClientBound,
    CellFlag::ServerBound,
    CellFlag::NotSteady,
    CellFlag::TooFewCalls,
    CellFlag::SharedCpus,
    CellFlag::HostBusy,
];

/// What a cell flag means for the figure (the legend's words).
fn flag_meaning(f: CellFlag) -> &'static str {
    match f {
        CellFlag::ClientBound => {
            "the client's cores were the limit: the figure is a lower bound of what the server can do"
        }
        CellFlag::ServerBound => {
            "the server's cores were the limit: the wanted case for a throughput figure"
        }
        CellFlag::NotSteady => {
            "the warm-up reached its maximum before successive intervals agreed"
        }
        CellFlag::TooFewCalls => {
            "fewer calls than the profile's minimum completed in the window"
        }
        CellFlag::SharedCpus => "server and client shared CPUs (--allow-shared-cpus)",
        CellFlag::HostBusy => {
            "something other than the lab used the server's or the client's CPUs during the window, or the hypervisor stole time"
        }
    }
}

/// How charts mark a figure with this flag.
fn flag_hatch(f: CellFlag) -> Option<Hatch> {
    match f {
        CellFlag::ClientBound => Some(Hatch::LowerBound),
        f if f.untrustworthy() => Some(Hatch::Unsteady),
        _ => None,
    }
}

/// The flag's class in the page (`f-client-bound`) from its words
/// (`noisy: throughput CV 33% > 10%` is `f-noisy`).
fn flag_class(words: &str) -> String {
    let head = words.split(':').next().unwrap_or(words);
    format!("f-{}", slug(head))
}

/// A flag's words as a badge in its colour.
fn flag_badge(words: &str) -> Markup {
    html! { span class={ "flag " (flag_class(words)) } { (words) } }
}

/// Writes `charts/*.svg` and `report.html` into `dir`; returns the files.
/// `comparison` is the results' reproduction compared
/// ([`reproduction::of`]), none for a lab run.
pub fn write_report(
    dir: &Path,
    name: &str,
    results: &Results,
    setup: &Setup,
    comparison: Option<&Comparison>,
) -> Result<Vec<PathBuf>> {
    let charts_dir = dir.join("charts");
    std::fs::create_dir_all(&charts_dir)
        .with_context(|| format!("cannot create {}", charts_dir.display()))?;
    // The folder holds exactly the page's charts: a chart an older
    // rendering wrote under another name goes.
    for entry in std::fs::read_dir(&charts_dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "svg") {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    let mut written = Vec::new();
    // Saves charts under charts/ and returns them inline, side by side.
    let mut figures = |charts: Vec<Chart>| -> Result<Markup> {
        for c in &charts {
            let p = charts_dir.join(format!("{}.svg", c.name));
            std::fs::write(&p, &c.svg).with_context(|| format!("cannot write {}", p.display()))?;
            written.push(p);
        }
        Ok(html! {
            @if !charts.is_empty() {
                div class="charts" {
                    // A chart is SVG that svg.rs escaped as it drew it.
                    @for c in &charts { figure id=(c.name) { (PreEscaped(&c.svg)) } }
                }
            }
        })
    };
    let scenarios = charts::scenarios(results);
    let reproduction = match comparison {
        Some(cmp) => {
            let mut inline = Vec::new();
            for (ti, t) in cmp.tables.iter().enumerate() {
                let charts = (0..t.columns.len())
                    .filter_map(|ci| {
                        let id = format!(
                            "published-{}-{}-{}",
                            ti + 1,
                            slug(&t.title),
                            slug(&t.columns[ci])
                        );
                        charts::published_vs_measured(t, ci, &id)
                    })
                    .collect();
                inline.push(figures(charts)?);
            }
            Some(reproduction_html(cmp, &inline))
        }
        None => None,
    };
    let capacity = match &results.capacity {
        Some(search) => Some(crate::capacity::html(
            search,
            figures(
                crate::capacity::chart(search)
                    .map(|svg| Chart {
                        name: crate::capacity::CHART.to_owned(),
                        svg,
                    })
                    .into_iter()
                    .collect(),
            )?,
        )),
        None => None,
    };
    let mut measurements = Vec::new();
    for scenario in &scenarios {
        let mut all = charts::throughput(results, scenario);
        all.extend(charts::efficiency(results, scenario));
        all.extend(charts::latency_spectra(results, scenario));
        measurements.push(scenario_html(results, scenario, figures(all)?));
    }
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "rpclab " (name) }
                style { (PreEscaped(CSS)) }
            }
            body {
                h1 { "rpclab snapshot " (name) }
                p {
                    @if results.complete {
                        "complete run"
                    } @else {
                        b { "partial run" } ": it stopped early or some servers could not run"
                    }
                    " · " (results.cells.len()) " cells, " (results.aggregates.len())
                    " aggregates · results.json schema " (results.schema_version)
                }
                @if !results.errors.is_empty() {
                    ul { @for e in &results.errors { li class="why" { (e) } } }
                }
                nav {
                    a href="#setup" { "setup" }
                    a href="#flags" { "flags" }
                    @if results.reproduction.is_some() {
                        a href="#reproduction" { "reproduction" }
                    }
                    @if results.capacity.is_some() {
                        a href="#capacity-search" { "capacity" }
                    }
                    @for s in &scenarios { a href={ "#scenario-" (slug(s)) } { (s) } }
                }
                (setup_html(setup, results))
                (flags_html(results))
                @if let Some(r) = reproduction { (r) }
                @if let Some(c) = capacity { (c) }
                h2 { "Measurements" }
                @for m in measurements { (m) }
                p class="why" {
                    "Rendered by " code { "cargo xtask lab report" }
                    " from results.json and manifest.toml alone. Click a column's header to sort its table."
                }
                script { (PreEscaped(SCRIPT)) }
            }
        }
        "\n"
    };
    let path = dir.join("report.html");
    std::fs::write(&path, page.into_string())
        .with_context(|| format!("cannot write {}", path.display()))?;
    written.push(path);
    Ok(written)
}

/// One scenario's measurements: how it loaded the servers, its table and
/// its `figures`.
fn scenario_html(results: &Results, scenario: &str, figures: Markup) -> Markup {
    let aggs: Vec<&Aggregate> = results
        .aggregates
        .iter()
        .filter(|a| a.scenario == scenario)
        .collect();
    let load = results
        .cells
        .iter()
        .find(|c| c.scenario == scenario)
        .map(|c| format!("{}, {}", c.report.called(), c.report.load.describe()))
        .unwrap_or_default();
    html! {
        h3 id={ "scenario-" (slug(scenario)) } { "scenario " (scenario) }
        p { (load) }
        (aggregates_html(&aggs))
        (figures)
    }
}

/// A row of the setup's table.
fn kv(key: &str, value: impl Render) -> Markup {
    html! { tr { th { (key) } td { (value) } } }
}

/// The host's load beside the lab in one line: how many windows another
/// process disturbed, how much, and what the idle servers of an
/// interleaved run cost.
fn host_load_line(h: &HostLoadSummary, results: &Results) -> String {
    let mut idle: Vec<f64> = results
        .cells
        .iter()
        .filter_map(|c| c.host_load.map(|l| l.idle_servers_cores))
        .collect();
    idle.sort_by(f64::total_cmp);
    let mut line = format!(
        "{} of {} windows host-busy (another process above {:.2} core, or steal from {:.2}); other processes: median {:.3} / max {:.3} core(s) on the server's CPUs, {:.3} / {:.3} on the client's; steal median {:.3} / max {:.3}",
        h.busy_windows,
        h.windows,
        h.threshold_cores,
        h.steal_threshold_cores,
        h.other_server_cores_median,
        h.other_server_cores_max,
        h.other_client_cores_median,
        h.other_client_cores_max,
        h.steal_cores_median,
        h.steal_cores_max
    );
    if idle.iter().any(|c| *c > 0.0) {
        let _ = write!(
            line,
            "; the idle servers beside the one under load: median {:.3}, max {:.3} core(s)",
            idle[idle.len() / 2],
            idle[idle.len() - 1]
        );
    }
    line
}

/// How the run was made: host, CPU split, calibration, profile, versions;
/// or why it is unknown.
fn setup_html(setup: &Setup, results: &Results) -> Markup {
    html! {
        h2 id="setup" { "Setup" }
        @match setup {
            Ok(manifest) => { (manifest_html(manifest, results)) }
            Err(why) => { p class="why" { "The setup is unknown: " (why) "." } }
        }
    }
}

/// The setup's table and the servers' versions, from the manifest.
fn manifest_html(setup: &RunManifest, results: &Results) -> Markup {
    let h = &setup.host;
    let c = &setup.cpus;
    let sides = [
        ("server", &c.server),
        ("registry", &c.registry),
        ("client", &c.client),
    ];
    let settings: Vec<String> = setup
        .profile_settings()
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    let ran = |v: &&ServerRecord| {
        results
            .aggregates
            .iter()
            .any(|a| a.server == v.name && a.variant == v.variant)
    };
    let (run, not_run): (Vec<_>, Vec<_>) = setup.servers.iter().partition(ran);
    html! {
        table class="kv" {
            (kv("host", format!(
                "{} · memory GiB {} · kernel {} · Docker {}",
                setup.host_line(),
                h.memory_gib,
                h.kernel,
                h.docker_version
            )))
            (kv("CPU split", html! {
                @for (side, cpus) in sides.iter().filter(|(_, cpus)| !cpus.is_empty()) {
                    (side) " on CPU " (cpus) " · "
                }
                span class="why" { (c.note) }
            }))
            @for v in setup.servers.iter().filter(|v| v.target.is_some()) {
                (kv("not started by the lab", format!(
                    "{} at {}: a running service, called from the client's container on the host's network; nothing of it was built, started, pinned, confined or costed (no server CPU, no host load)",
                    v.name,
                    v.target.as_deref().unwrap_or_default()
                )))
            }
            @if let Some(cal) = &setup.calibration {
                (kv("calibration", calibration_line(cal)))
            }
            @if let Some(h) = &setup.host_load {
                (kv("host beside the lab", host_load_line(h, results)))
            }
            @if let Some(seed) = setup.rounds_seed {
                (kv("rounds", format!(
                    "interleaved: every variant started and primed once, each round in a fresh random order (seed {seed}, `--rounds-seed {seed}` replays it)"
                )))
            }
            (kv("profile", html! {
                b { (setup.profile) }
                @if !settings.is_empty() { ": " (settings.join(", ")) }
            }))
            (kv("network", setup.network.as_deref().unwrap_or(
                "not recorded (before 2026-12-05 every run used the host's)"
            )))
            @if let Some(stopped) = &setup.stopped {
                (kv("stopped", html! {
                    b { "at " (stopped.utc) } ": " (stopped.why)
                }))
            }
            @if !setup.resumed_utc.is_empty() {
                (kv("resumed", format!(
                    "{} (`--resume`: the cells measured before each stop are kept as they were)",
                    setup.resumed_utc.join(", ")
                )))
            }
            (kv("rpclab", format!(
                "{} at git {} · load client built {} · started {}",
                setup.rpclab_version,
                setup.revision_line(),
                setup.client_build.map_or("?", ClientBuild::cargo_profile),
                setup.started_utc,
            )))
        }
        h3 { "Versions of the servers measured" }
        table class="sortable" {
            thead {
                tr {
                    @for h in ["server", "variant", "framework", "protocol", "version", "JVM", "JVM flags"] {
                        th class="l" { (h) }
                    }
                }
            }
            tbody {
                @for v in &run {
                    tr {
                        @for cell in [&v.name, &v.variant, &v.framework, &v.protocol, &v.version] {
                            td class="l" { (cell) }
                        }
                        td class="l" { (v.jvm.as_deref().unwrap_or("")) }
                        td class="l" { (jvm_flags(&v.jvm_flags)) }
                    }
                }
            }
        }
        @if !not_run.is_empty() {
            details {
                summary { (not_run.len()) " variant(s) of the lab not measured in this snapshot" }
                ul {
                    @for v in &not_run {
                        li {
                            (v.name) " " (v.variant) ": "
                            span class="why" {
                                (v.not_run.as_deref().unwrap_or("no cell of it in this snapshot"))
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The calibration of the run's CPU sets in one line.
fn calibration_line(cal: &Calibration) -> String {
    let side = |what: &str, f: &CalibrationFigures| {
        format!(
            "{what} (CPU {}): {} rounds/s, {} loopback round trips/s",
            f.cpus,
            fmt_value(f.cpu_rounds_per_s),
            fmt_value(f.loopback_round_trips_per_s)
        )
    };
    let mut line = format!(
        "{} · {}",
        side("server", &cal.server),
        side("client", &cal.client)
    );
    if let Some(a) = &cal.across {
        let _ = write!(
            line,
            " · across (CPU {}): {} loopback round trips/s, the path of a single synchronous caller's every call",
            a.cpus,
            fmt_value(a.loopback_round_trips_per_s)
        );
    }
    line
}

/// A variant's JVM flags in a line: the module-opening ones
/// (`--add-opens`, `--add-exports`) counted, the others as they are.
fn jvm_flags(flags: &[String]) -> String {
    let opening = |f: &&String| f.starts_with("--add-opens") || f.starts_with("--add-exports");
    let mut shown: Vec<&str> = flags
        .iter()
        .filter(|f| !opening(f))
        .map(String::as_str)
        .collect();
    let opened = flags.iter().filter(opening).count();
    let more = format!("(+{opened} --add-opens/--add-exports)");
    if opened > 0 {
        shown.push(&more);
    }
    shown.join(" ")
}

/// The legend of the flags, with how many aggregates carry each here.
fn flags_html(results: &Results) -> Markup {
    let count = |f: CellFlag| {
        results
            .aggregates
            .iter()
            .filter(|a| a.cell_flags.contains(&f) || a.flags.iter().any(|w| w == f.as_str()))
            .count()
    };
    let mut rows: Vec<(&str, &str, Option<Hatch>, usize)> = FLAGS
        .into_iter()
        .map(|f| (f.as_str(), flag_meaning(f), flag_hatch(f), count(f)))
        .collect();
    rows.push((
        "noisy",
        "the repetitions disagree: the throughput's coefficient of variation exceeds the profile's cv_threshold",
        Some(Hatch::Unsteady),
        results
            .aggregates
            .iter()
            .filter(|a| a.noisy || a.flags.iter().any(|w| w.starts_with("noisy")))
            .count(),
    ));
    html! {
        h2 id="flags" { "Flags" }
        p {
            "A flag says what a reader must know before trusting a figure. Every flag but "
            i { "server-bound" }
            " keeps a figure out of headlines and verdicts; the charts hatch those figures."
        }
        table {
            thead {
                tr {
                    @for h in ["flag", "meaning", "in charts"] { th class="l" { (h) } }
                    th { "aggregates here" }
                }
            }
            tbody {
                @for (name, meaning, hatch, n) in rows {
                    tr {
                        td class="l" { (flag_badge(name)) }
                        td class="l" { (meaning) }
                        td class="l" {
                            @match hatch {
                                // The swatch is SVG that svg.rs escaped as it drew it.
                                Some(h) => {
                                    (PreEscaped(hatch_swatch(h, &format!("legend-{}", slug(h.meaning())))))
                                    " " (h.meaning())
                                }
                                None => { "plain" }
                            }
                        }
                        td { (n) }
                    }
                }
            }
        }
    }
}

/// The standard table ([`tables::STANDARD`]), sortable: numbers carry
/// their value in `data-v`, flags are badges, a row with a caveat is grey.
fn aggregates_html(aggs: &[&Aggregate]) -> Markup {
    html! {
        table class="sortable" {
            thead {
                tr {
                    @for c in tables::STANDARD { th class=[c.text.then_some("l")] { (c.header) } }
                }
            }
            tbody {
                @for a in aggs {
                    tr class=[(!a.trustworthy()).then_some("caveat")] {
                        @for c in tables::STANDARD {
                            @let f = (c.cell)(a);
                            @if c.header == "flags" {
                                td class="l flags" { @for w in &a.flags { (flag_badge(w)) } }
                            } @else if c.text {
                                td class="l" { (f.text) }
                            } @else {
                                td data-v=(f.value.filter(|v| v.is_finite()).map_or(String::new(), |v| v.to_string())) {
                                    (f.text)
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The reproduction: systems, each seed table (published, measured and
/// their ratio side by side) followed by its charts (`figures`, one entry
/// per table), the claims and the notes.
fn reproduction_html(cmp: &Comparison, figures: &[Markup]) -> Markup {
    let r = &cmp.reproduction;
    let missing = reproduction::unmeasured(cmp);
    html! {
        h2 id="reproduction" { "Reproduction of seed " (r.seed) ": " (r.title) }
        p { "Source: " (r.source) }
        p {
            "Each column shows the " span class="pub" { "published" } " figure, the "
            span class="lab" { "lab's" }
            " figure in the same unit, and lab / published. Absolute figures come from other hardware; the claims below compare ratios and rankings."
        }
        h3 { "Systems" }
        table {
            tr { @for h in ["system", "published as", "lab stand-in", "status"] { th class="l" { (h) } } }
            @for s in &r.systems {
                tr {
                    td class="l" { (s.key) }
                    td class="l" { (s.published_as) }
                    td class="l" {
                        @match (&s.server, &s.variant) {
                            (Some(server), Some(variant)) => { (server) " " (variant) }
                            _ => { "—" }
                        }
                    }
                    td class="l" { (reproduction::system_status(cmp, s)) }
                }
            }
        }
        @for (ti, t) in cmp.tables.iter().enumerate() {
            h3 { (t.title) }
            table class="pvm" {
                thead {
                    tr {
                        th rowspan="2" {}
                        @for c in &t.columns { th colspan="3" { (c) } }
                    }
                    tr {
                        @for _ in &t.columns {
                            th class="pub" { "published" }
                            th class="lab" { "measured" }
                            th { "lab / pub" }
                        }
                    }
                }
                tbody {
                    @for (row, cells) in &t.rows {
                        tr {
                            th class="l" { (row) }
                            @for c in cells { (comparison_cells(c.as_ref())) }
                        }
                    }
                }
            }
            @if let Some(f) = figures.get(ti) { (f) }
        }
        @if !missing.is_empty() {
            h3 { "Published figures without a measured twin" }
            ul {
                @for (why, n) in &missing {
                    li { (n) " figure" @if *n != 1 { "s" } ": " (why) }
                }
            }
        }
        (claims_html(cmp))
        @if !r.deviations.is_empty() {
            h3 id="deviations" { "Deviations from the post" }
            ul { @for d in &r.deviations { li { (d) } } }
        }
        @if !r.notes.is_empty() {
            h3 { "Notes" }
            ul { @for n in &r.notes { li { (n) } } }
        }
    }
}

/// The claims table: each claim's row (its verdict in words, coloured),
/// followed by its forest plot ([`forest::forest_svg`]) so that a reader
/// sees why each pair is decided, undecided or withheld; the plots'
/// legend once above the table.
fn claims_html(cmp: &Comparison) -> Markup {
    let bands = forest::Bands::of(&cmp.reproduction);
    html! {
        h3 { "Claims" }
        p class="why" {
            "Under each claim, its forest plot: one row per pair and level, on a log scale of the speed ratio."
        }
        // SVG that forest.rs escaped as it drew it.
        div class="forest-legend" { (PreEscaped(forest::legend_svg(&bands))) }
        table class="claims" {
            tr { @for h in ["claim", "verdict", "measured"] { th class="l" { (h) } } }
            @for c in &cmp.claims {
                tr class=(claim_class(c)) id={ "claim-" (c.id) } {
                    td class="l" { (c.text) }
                    td class="l" { (c.label()) }
                    td class="l" { (c.detail()) }
                }
                @if let Some(svg) = forest::forest_svg(&c.verdict, &bands) {
                    tr class="forest" id={ "forest-" (c.id) } {
                        td class="l" colspan="3" { (PreEscaped(svg)) }
                    }
                }
            }
        }
        p class="why" { (reproduction::verdict_legend()) }
    }
}

/// One column of a seed table's row: the published figure, the lab's and
/// their ratio (three empty cells where the column has no figure).
fn comparison_cells(c: Option<&CellComparison>) -> Markup {
    let Some(c) = c else {
        return html! { td {} td {} td {} };
    };
    let p = &c.published;
    html! {
        td class="pub" { (p.raw.trim()) @if p.value.is_none() { " (failed)" } }
        td class="lab" {
            @match (c.measured, &c.missing) {
                (Some(m), _) => {
                    (fmt_value(m)) " " (p.unit)
                    @if !c.caveats.is_empty() {
                        " " span class="why" { "(" (c.caveats.join(", ")) ")" }
                    }
                }
                (None, Some(why)) => { span class="why" { (why) } }
                (None, None) => { "—" }
            }
        }
        td class="ratio" { @if let Some(r) = c.ratio { "×" (fmt_value(r)) } }
    }
}

/// A claim's row class, its verdict's colour (not comparable when nothing
/// was checked).
fn claim_class(c: &ClaimOutcome) -> &'static str {
    use rpclab_model::verdict::Direction;
    forest::direction_class(if c.verdict.checked == 0 {
        Direction::NotComparable
    } else {
        c.verdict.direction
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `s` as the page shows it.
    fn escaped(s: &str) -> String {
        html! { (s) }.into_string()
    }

    /// The fixture has no manifest: the page says its setup is unknown.
    fn no_setup() -> Setup {
        Err("no manifest beside the fixture".into())
    }

    /// Renders `results` with `setup` into a fresh folder: the folder,
    /// the files written and the page.
    fn render(results: &Results, setup: &Setup) -> (tempfile::TempDir, Vec<PathBuf>, String) {
        let dir = tempfile::tempdir().unwrap();
        let files = write_report(
            dir.path(),
            "fixture",
            results,
            setup,
            reproduction::of(results).as_ref(),
        )
        .unwrap();
        let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
        (dir, files, page)
    }

    fn fixture() -> Results {
        let path = crate::fixture::results_json();
        let text = std::fs::read_to_string(&path).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn the_fixture_renders_charts_and_a_self_contained_page() {
        let results = fixture();
        let (_dir, files, page) = render(&results, &no_setup());
        assert!(page.contains("<svg"), "no inline chart");
        // One inline script, nothing loaded: the page opens from file://.
        assert_eq!(page.matches("<script").count(), 1);
        for loads in ["src=", "href=\"http", "@import", "url(http"] {
            assert!(
                !page.contains(loads),
                "the page must not load anything: {loads}"
            );
        }
        assert!(page.contains("<table class=\"sortable\">"));
        // Charts per scenario: throughput, efficiency, and the latency
        // spectrum of each level.
        let has = |stem: String| {
            files
                .iter()
                .any(|f| f.ends_with(format!("charts/{stem}.svg")))
        };
        for s in charts::scenarios(&results) {
            assert!(has(format!("throughput-{}", slug(&s))), "{s}");
            assert!(has(format!("efficiency-{}", slug(&s))), "{s}");
            for a in results.aggregates.iter().filter(|a| a.scenario == s) {
                assert!(
                    has(format!("latency-{}-at-{}", slug(&s), a.concurrency)),
                    "{s}"
                );
            }
        }
        for f in files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "svg"))
        {
            let svg = std::fs::read_to_string(f).unwrap();
            assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
            assert!(svg.trim_end().ends_with("</svg>"));
            assert!(!svg.contains("NaN"), "{}", f.display());
        }
        let r = results
            .reproduction
            .as_ref()
            .expect("the fixture is a reproduction");
        assert!(page.contains("Reproduction of seed"));
        for c in &r.cells {
            assert!(
                page.contains(&escaped(c.raw.trim())),
                "published {} missing",
                c.raw
            );
        }
        assert!(page.contains("id=\"claim-"), "no claim rows");
        assert!(files
            .iter()
            .any(|f| f.to_string_lossy().contains("published-")));
    }

    #[test]
    fn a_system_that_did_not_run_says_why_in_the_page() {
        let mut results = fixture();
        let r = results.reproduction.as_mut().unwrap();
        r.systems[0].server = None;
        r.systems[0].variant = None;
        r.systems[0].not_run = Some("no server folder for it yet".into());
        let key = r.systems[0].key.clone();
        let (_dir, _, page) = render(&results, &no_setup());
        assert!(
            page.contains("not run: no server folder for it yet"),
            "{key}"
        );
    }

    #[test]
    fn a_reproduction_shows_its_deviations_and_its_figures_without_a_twin() {
        let mut results = fixture();
        let r = results
            .reproduction
            .as_mut()
            .expect("the fixture is a reproduction");
        r.deviations = vec!["the provider's 5000 ms timeout <is not set>".into()];
        let cmp = reproduction::compare(&results, results.reproduction.as_ref().unwrap());
        let missing = reproduction::unmeasured(&cmp);
        let (_dir, _, page) = render(&results, &no_setup());
        assert!(page.contains("Deviations from the post"));
        assert!(
            page.contains("<li>the provider&#39;s 5000 ms timeout &lt;is not set&gt;</li>")
                || page.contains("<li>the provider's 5000 ms timeout &lt;is not set&gt;</li>")
        );
        for (why, _) in &missing {
            assert!(page.contains(&escaped(why)), "{why}");
        }
        assert_eq!(
            page.contains("Published figures without a measured twin"),
            !missing.is_empty()
        );
    }

    #[test]
    fn a_snapshot_from_before_reproductions_still_loads_and_renders() {
        let path = crate::fixture::results_json();
        let mut value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        value.as_object_mut().unwrap().remove("reproduction");
        let results: Results = serde_json::from_value(value).unwrap();
        assert!(results.reproduction.is_none());
        let (_dir, _, page) = render(&results, &no_setup());
        assert!(!page.contains("Reproduction of seed"));
        assert!(page.contains("<svg"));
    }

    #[test]
    fn the_setup_and_the_flags_legend_head_the_page() {
        let results = fixture();
        let setup = crate::snapshot::read_manifest(&crate::fixture::committed(
            "20261129T235428Z-vm-c20a70e",
        ));
        let (dir, _, page) = render(&results, &setup);
        let at = |s: &str| page.find(s).unwrap_or_else(|| panic!("no {s}"));
        assert!(at("id=\"setup\"") < at("id=\"flags\""));
        assert!(at("id=\"flags\"") < at("<h2>Measurements"));
        for shown in [
            "vm (AMD EPYC, 2 cores)",
            "server on CPU 0",
            "client on CPU 1",
            "<b>standard</b>",
            "repetitions = 3",
        ] {
            assert!(page.contains(shown), "{shown}");
        }
        for f in FLAGS {
            assert!(page.contains(&format!(">{}</span>", f.as_str())), "{f}");
        }
        // Without a manifest the page says so instead.
        let (_, _, page) = render(&results, &crate::snapshot::read_manifest(dir.path()));
        assert!(page.contains("The setup is unknown"));
    }

    #[test]
    fn a_stopped_and_resumed_run_says_why_and_when_and_its_network() {
        let results = fixture();
        let mut setup = crate::snapshot::read_manifest(&crate::fixture::committed(
            "20261129T235428Z-vm-c20a70e",
        ))
        .unwrap();
        let (_dir, _, page) = render(&results, &Ok(setup.clone()));
        assert!(page.contains("not recorded (before 2026-12-05"), "{page}");
        assert!(!page.contains(">stopped<"));
        setup.network = Some("private: a namespace of its own".into());
        setup.stopped = Some(rpclab_model::manifest::Stopped {
            utc: "2026-12-05T07:00:00Z".into(),
            why: "the Docker engine at unix:///var/run/docker.sock stopped answering".into(),
        });
        setup.resumed_utc = vec!["2026-12-05T07:05:00Z".into()];
        let (_dir, _, page) = render(&results, &Ok(setup.clone()));
        for shown in [
            "private: a namespace of its own",
            "<b>at 2026-12-05T07:00:00Z</b>: the Docker engine at unix:///var/run/docker.sock stopped answering",
            "2026-12-05T07:05:00Z (`--resume`",
        ] {
            assert!(page.contains(shown), "{shown}");
        }
    }

    #[test]
    fn module_openings_are_counted_not_listed() {
        let flags: Vec<String> = [
            "-Xmx2G",
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-exports=a/b=c",
        ]
        .map(String::from)
        .into();
        assert_eq!(jvm_flags(&flags), "-Xmx2G (+2 --add-opens/--add-exports)");
        assert_eq!(jvm_flags(&flags[..1]), "-Xmx2G");
    }

    /// The fixture's comparison, its three claims decided by hand: one
    /// with decided and undecided pairs, one withheld and not checked,
    /// one with no pairs.
    fn forest_comparison() -> Comparison {
        use crate::forest::tests::{claim, indicative, pair, undecided, withheld};
        let mut cmp = reproduction::of(&fixture()).unwrap();
        let ids: Vec<String> = cmp.claims.iter().map(|c| c.id.clone()).collect();
        let level = |mut p: rpclab_model::verdict::PairVerdict, n| {
            p.level = Some(n);
            p
        };
        cmp.claims[0].verdict = claim(
            &ids[0],
            vec![
                level(pair("ice", "thrift"), 1),
                level(undecided("ice", "dubbo"), 1),
            ],
        );
        cmp.claims[1].verdict = claim(
            &ids[1],
            vec![
                level(withheld("ice", "dubbo"), 5),
                level(indicative("ice", "grpc"), 5),
            ],
        );
        cmp.claims[2].verdict = claim(&ids[2], Vec::new());
        cmp
    }

    #[test]
    fn each_claim_with_pairs_carries_its_forest_plot_under_one_legend() {
        let cmp = forest_comparison();
        let html = claims_html(&cmp).into_string();
        assert_eq!(html.matches("class=\"forest-legend\"").count(), 2);
        let at = |s: &str| html.find(s).unwrap_or_else(|| panic!("no {s}"));
        assert!(at("forest-legend") < at("<table class=\"claims\">"));
        for c in &cmp.claims[..2] {
            assert!(at(&format!("id=\"claim-{}\"", c.id)) < at(&format!("id=\"forest-{}\"", c.id)));
        }
        assert!(!html.contains(&format!("id=\"forest-{}\"", cmp.claims[2].id)));
        assert_eq!(html.matches("class=\"fp-row\"").count(), 4);
        assert!(html.contains(">withheld: throughput and CPU disagree</text>"));
    }

    #[test]
    fn the_forest_plots_colours_are_the_claim_rows() {
        for class in ["holds", "reversed", "noise", "nc"] {
            let (light, _) = forest::class_colours(class);
            assert!(
                CSS.contains(&format!(".{class}{{background:{light}}}")),
                "{class}"
            );
        }
    }

    /// Writes the claims of [`forest_comparison`] as a page to look at in
    /// a browser (`FOREST_PAGE`, else `/tmp/forest.html`): `cargo test -p
    /// rpclab-report forest_page -- --ignored`.
    #[test]
    #[ignore]
    fn forest_page() {
        let cmp = forest_comparison();
        let page = html! {
            (DOCTYPE)
            html lang="en" {
                head { meta charset="utf-8"; style { (PreEscaped(CSS)) } }
                body { (claims_html(&cmp)) }
            }
        };
        let path = std::env::var("FOREST_PAGE").unwrap_or_else(|_| "/tmp/forest.html".into());
        std::fs::write(&path, page.into_string()).unwrap();
    }

    #[test]
    fn flag_words_get_their_class() {
        assert_eq!(flag_class("noisy: throughput CV 33% > 10%"), "f-noisy");
        assert_eq!(flag_class("client-bound"), "f-client-bound");
    }
}
