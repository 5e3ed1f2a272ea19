//! The snapshot's charts (`charts/*.svg`) and its HTML page (`report.html`):
//! how the run was made, the flags' legend, tables and charts together in
//! one self-contained file (inline SVG, CSS and a few lines of script that
//! sort the tables; no network), so it opens from the file system years
//! later. Everything is rendered from `results.json` and the setup
//! ([`Setup`], from `manifest.toml`) alone.

use crate::charts::{self, Chart};
use crate::format::{fmt_value, slug};
use crate::reproduction::{self, Comparison};
use crate::snapshot::Setup;
use crate::svg::{esc, hatch_defs, Hatch};
use crate::tables;
use anyhow::{Context, Result};
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

/// A small swatch of a hatching, as the charts draw it.
fn hatch_swatch(h: Hatch) -> String {
    let id = format!("legend-{}", slug(h.meaning()));
    let mut svg = String::from(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="28" height="14" viewBox="0 0 28 14">"#,
    );
    hatch_defs(&mut svg, &id);
    let _ = write!(
        svg,
        r##"<rect width="28" height="14" fill="#0072B2"/><rect width="28" height="14" fill="{}"/></svg>"##,
        h.fill(&id)
    );
    svg
}

/// The flag's class in the page (`f-client-bound`) from its words
/// (`noisy: throughput CV 33% > 10%` is `f-noisy`).
fn flag_class(words: &str) -> String {
    let head = words.split(':').next().unwrap_or(words);
    format!("f-{}", slug(head))
}

fn flag_badges(a: &Aggregate) -> String {
    a.flags
        .iter()
        .map(|f| format!("<span class=\"flag {}\">{}</span>", flag_class(f), esc(f)))
        .collect()
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
    let mut figures = |charts: Vec<Chart>| -> Result<String> {
        let mut out = String::new();
        if charts.is_empty() {
            return Ok(out);
        }
        out.push_str("<div class=\"charts\">");
        for c in charts {
            let p = charts_dir.join(format!("{}.svg", c.name));
            std::fs::write(&p, &c.svg).with_context(|| format!("cannot write {}", p.display()))?;
            written.push(p);
            let _ = write!(out, "<figure id=\"{}\">{}</figure>", esc(&c.name), c.svg);
        }
        out.push_str("</div>");
        Ok(out)
    };
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>rpclab {}</title><style>{CSS}</style></head><body>",
        esc(name)
    );
    let _ = write!(html, "<h1>rpclab snapshot {}</h1>", esc(name));
    let _ = write!(
        html,
        "<p>{} · {} cells, {} aggregates · results.json schema {}</p>",
        if results.complete {
            "complete run"
        } else {
            "<b>partial run</b>: it stopped early or some servers could not run"
        },
        results.cells.len(),
        results.aggregates.len(),
        results.schema_version
    );
    if !results.errors.is_empty() {
        html.push_str("<ul>");
        for e in &results.errors {
            let _ = write!(html, "<li class=\"why\">{}</li>", esc(e));
        }
        html.push_str("</ul>");
    }
    let scenarios = charts::scenarios(results);
    html.push_str("<nav><a href=\"#setup\">setup</a><a href=\"#flags\">flags</a>");
    if results.reproduction.is_some() {
        html.push_str("<a href=\"#reproduction\">reproduction</a>");
    }
    for s in &scenarios {
        let _ = write!(html, "<a href=\"#scenario-{}\">{}</a>", slug(s), esc(s));
    }
    html.push_str("</nav>");
    setup_html(&mut html, setup, results);
    flags_html(&mut html, results);
    if let Some(cmp) = comparison {
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
        reproduction_html(&mut html, cmp, &inline);
    }
    html.push_str("<h2>Measurements</h2>");
    for scenario in &scenarios {
        let aggs: Vec<&Aggregate> = results
            .aggregates
            .iter()
            .filter(|a| &a.scenario == scenario)
            .collect();
        let load = results
            .cells
            .iter()
            .find(|c| &c.scenario == scenario)
            .map(|c| format!("operation {}, {}", c.operation, c.report.load.describe()))
            .unwrap_or_default();
        let _ = write!(
            html,
            "<h3 id=\"scenario-{}\">scenario {}</h3><p>{}</p>",
            slug(scenario),
            esc(scenario),
            esc(&load)
        );
        aggregates_html(&mut html, &aggs);
        let mut all = charts::throughput(results, scenario);
        all.extend(charts::efficiency(results, scenario));
        all.extend(charts::latency_spectra(results, scenario));
        html.push_str(&figures(all)?);
    }
    let _ = writeln!(
        html,
        "<p class=\"why\">Rendered by <code>cargo xtask lab report</code> from results.json and manifest.toml alone. Click a column's header to sort its table.</p><script>{SCRIPT}</script></body></html>"
    );
    let page = dir.join("report.html");
    std::fs::write(&page, html).with_context(|| format!("cannot write {}", page.display()))?;
    written.push(page);
    Ok(written)
}

fn kv(html: &mut String, key: &str, value: &str) {
    let _ = write!(html, "<tr><th>{}</th><td>{value}</td></tr>", esc(key));
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
fn setup_html(html: &mut String, setup: &Setup, results: &Results) {
    html.push_str("<h2 id=\"setup\">Setup</h2>");
    match setup {
        Ok(manifest) => manifest_html(html, manifest, results),
        Err(why) => {
            let _ = write!(
                html,
                "<p class=\"why\">The setup is unknown: {}.</p>",
                esc(why)
            );
        }
    }
}

/// The setup's table and the servers' versions, from the manifest.
fn manifest_html(html: &mut String, setup: &RunManifest, results: &Results) {
    html.push_str("<table class=\"kv\">");
    let h = &setup.host;
    kv(
        html,
        "host",
        &esc(&format!(
            "{} · memory GiB {} · kernel {} · Docker {}",
            setup.host_line(),
            h.memory_gib,
            h.kernel,
            h.docker_version
        )),
    );
    let c = &setup.cpus;
    let mut split: Vec<String> = [
        ("server", &c.server),
        ("registry", &c.registry),
        ("client", &c.client),
    ]
    .into_iter()
    .filter(|(_, cpus)| !cpus.is_empty())
    .map(|(side, cpus)| format!("{side} on CPU {}", esc(cpus)))
    .collect();
    split.push(format!("<span class=\"why\">{}</span>", esc(&c.note)));
    kv(html, "CPU split", &split.join(" · "));
    if let Some(cal) = &setup.calibration {
        kv(html, "calibration", &calibration_line(cal));
    }
    if let Some(h) = &setup.host_load {
        kv(
            html,
            "host beside the lab",
            &esc(&host_load_line(h, results)),
        );
    }
    if let Some(seed) = setup.rounds_seed {
        kv(
            html,
            "rounds",
            &esc(&format!(
                "interleaved: every variant started and primed once, each round in a fresh random order (seed {seed}, `--rounds-seed {seed}` replays it)"
            )),
        );
    }
    let settings: Vec<String> = setup
        .profile_settings()
        .iter()
        .map(|(k, v)| format!("{} = {}", esc(k), esc(v)))
        .collect();
    kv(
        html,
        "profile",
        &format!(
            "<b>{}</b>{}",
            esc(&setup.profile),
            if settings.is_empty() {
                String::new()
            } else {
                format!(": {}", settings.join(", "))
            }
        ),
    );
    kv(
        html,
        "rpclab",
        &esc(&format!(
            "{} at git {} · load client built {} · started {}",
            setup.rpclab_version,
            setup.revision_line(),
            setup.client_build.map_or("?", ClientBuild::cargo_profile),
            setup.started_utc,
        )),
    );
    html.push_str("</table>");
    let ran = |v: &&ServerRecord| {
        results
            .aggregates
            .iter()
            .any(|a| a.server == v.name && a.variant == v.variant)
    };
    let (run, not_run): (Vec<_>, Vec<_>) = setup.servers.iter().partition(ran);
    html.push_str("<h3>Versions of the servers measured</h3><table class=\"sortable\"><thead><tr><th class=\"l\">server</th><th class=\"l\">variant</th><th class=\"l\">framework</th><th class=\"l\">protocol</th><th class=\"l\">version</th><th class=\"l\">JVM</th><th class=\"l\">JVM flags</th></tr></thead><tbody>");
    for v in &run {
        let _ = write!(
            html,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            esc(&v.name),
            esc(&v.variant),
            esc(&v.framework),
            esc(&v.protocol),
            esc(&v.version),
            esc(v.jvm.as_deref().unwrap_or("")),
            esc(&jvm_flags(&v.jvm_flags))
        );
    }
    html.push_str("</tbody></table>");
    if !not_run.is_empty() {
        let _ = write!(
            html,
            "<details><summary>{} variant(s) of the lab not measured in this snapshot</summary><ul>",
            not_run.len()
        );
        for v in &not_run {
            let _ = write!(
                html,
                "<li>{} {}: <span class=\"why\">{}</span></li>",
                esc(&v.name),
                esc(&v.variant),
                esc(v
                    .not_run
                    .as_deref()
                    .unwrap_or("no cell of it in this snapshot"))
            );
        }
        html.push_str("</ul></details>");
    }
}

/// The calibration of the run's CPU sets in one line (HTML).
fn calibration_line(cal: &Calibration) -> String {
    let side = |what: &str, f: &CalibrationFigures| {
        format!(
            "{what} (CPU {}): {} rounds/s, {} loopback round trips/s",
            esc(&f.cpus),
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
            esc(&a.cpus),
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
fn flags_html(html: &mut String, results: &Results) {
    html.push_str("<h2 id=\"flags\">Flags</h2><p>A flag says what a reader must know before trusting a figure. Every flag but <i>server-bound</i> keeps a figure out of headlines and verdicts; the charts hatch those figures.</p><table><thead><tr><th class=\"l\">flag</th><th class=\"l\">meaning</th><th class=\"l\">in charts</th><th>aggregates here</th></tr></thead><tbody>");
    let row = |html: &mut String, name: &str, meaning: &str, hatch: Option<Hatch>, n: usize| {
        let _ = write!(
            html,
            "<tr><td class=\"l\"><span class=\"flag {}\">{}</span></td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{n}</td></tr>",
            flag_class(name),
            esc(name),
            esc(meaning),
            hatch.map_or("plain".to_owned(), |h| format!(
                "{} {}",
                hatch_swatch(h),
                esc(h.meaning())
            ))
        );
    };
    for f in FLAGS {
        let n = results
            .aggregates
            .iter()
            .filter(|a| a.cell_flags.contains(&f) || a.flags.iter().any(|w| w == f.as_str()))
            .count();
        row(html, f.as_str(), flag_meaning(f), flag_hatch(f), n);
    }
    let noisy = results
        .aggregates
        .iter()
        .filter(|a| a.noisy || a.flags.iter().any(|w| w.starts_with("noisy")))
        .count();
    row(
        html,
        "noisy",
        "the repetitions disagree: the throughput's coefficient of variation exceeds the profile's cv_threshold",
        Some(Hatch::Unsteady),
        noisy,
    );
    html.push_str("</tbody></table>");
}

/// The standard table ([`tables::STANDARD`]), sortable: numbers carry
/// their value in `data-v`, flags are badges, a row with a caveat is grey.
fn aggregates_html(html: &mut String, aggs: &[&Aggregate]) {
    html.push_str("<table class=\"sortable\"><thead><tr>");
    for c in tables::STANDARD {
        let _ = write!(
            html,
            "<th{}>{}</th>",
            if c.text { " class=\"l\"" } else { "" },
            esc(c.header)
        );
    }
    html.push_str("</tr></thead><tbody>");
    for a in aggs {
        let _ = write!(
            html,
            "<tr{}>",
            if a.trustworthy() {
                ""
            } else {
                " class=\"caveat\""
            }
        );
        for c in tables::STANDARD {
            let f = (c.cell)(a);
            if c.header == "flags" {
                let _ = write!(html, "<td class=\"l flags\">{}</td>", flag_badges(a));
            } else if c.text {
                let _ = write!(html, "<td class=\"l\">{}</td>", esc(&f.text));
            } else {
                let v = f
                    .value
                    .filter(|v| v.is_finite())
                    .map_or(String::new(), |v| v.to_string());
                let _ = write!(html, "<td data-v=\"{v}\">{}</td>", esc(&f.text));
            }
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table>");
}

/// The reproduction: systems, each seed table (published, measured and
/// their ratio side by side) followed by its charts (`figures`, one entry
/// per table), the claims and the notes.
fn reproduction_html(html: &mut String, cmp: &Comparison, figures: &[String]) {
    let r = &cmp.reproduction;
    let _ = write!(
        html,
        "<h2 id=\"reproduction\">Reproduction of seed {}: {}</h2><p>Source: {}</p><p>Each column shows the <span class=\"pub\">published</span> figure, the <span class=\"lab\">lab's</span> figure in the same unit, and lab / published. Absolute figures come from other hardware; the claims below compare ratios and rankings.</p>",
        esc(&r.seed),
        esc(&r.title),
        esc(&r.source)
    );
    html.push_str("<h3>Systems</h3><table><tr><th class=\"l\">system</th><th class=\"l\">published as</th><th class=\"l\">lab stand-in</th><th class=\"l\">status</th></tr>");
    for s in &r.systems {
        let standin = match (&s.server, &s.variant) {
            (Some(a), Some(b)) => format!("{a} {b}"),
            _ => "—".into(),
        };
        let status = reproduction::system_status(cmp, s);
        let _ = write!(
            html,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            esc(&s.key),
            esc(&s.published_as),
            esc(&standin),
            esc(&status)
        );
    }
    html.push_str("</table>");
    for (ti, t) in cmp.tables.iter().enumerate() {
        let _ = write!(
            html,
            "<h3>{}</h3><table class=\"pvm\"><thead><tr><th rowspan=\"2\"></th>",
            esc(&t.title)
        );
        for c in &t.columns {
            let _ = write!(html, "<th colspan=\"3\">{}</th>", esc(c));
        }
        html.push_str("</tr><tr>");
        for _ in &t.columns {
            html.push_str(
                "<th class=\"pub\">published</th><th class=\"lab\">measured</th><th>lab / pub</th>",
            );
        }
        html.push_str("</tr></thead><tbody>");
        for (row, cells) in &t.rows {
            let _ = write!(html, "<tr><th class=\"l\">{}</th>", esc(row));
            for c in cells {
                let Some(c) = c else {
                    html.push_str("<td></td><td></td><td></td>");
                    continue;
                };
                let p = &c.published;
                let measured = match (c.measured, &c.missing) {
                    (Some(m), _) if c.caveats.is_empty() => {
                        format!("{} {}", fmt_value(m), esc(&p.unit))
                    }
                    (Some(m), _) => format!(
                        "{} {} <span class=\"why\">({})</span>",
                        fmt_value(m),
                        esc(&p.unit),
                        c.caveats.join(", ")
                    ),
                    (None, Some(why)) => format!("<span class=\"why\">{}</span>", esc(why)),
                    (None, None) => "—".into(),
                };
                let _ = write!(
                    html,
                    "<td class=\"pub\">{}{}</td><td class=\"lab\">{measured}</td><td class=\"ratio\">{}</td>",
                    esc(p.raw.trim()),
                    if p.value.is_none() { " (failed)" } else { "" },
                    c.ratio.map_or(String::new(), |r| format!("×{}", fmt_value(r)))
                );
            }
            html.push_str("</tr>");
        }
        html.push_str("</tbody></table>");
        if let Some(f) = figures.get(ti) {
            html.push_str(f);
        }
    }
    let missing = reproduction::unmeasured(cmp);
    if !missing.is_empty() {
        html.push_str("<h3>Published figures without a measured twin</h3><ul>");
        for (why, n) in &missing {
            let _ = write!(
                html,
                "<li>{n} figure{}: {}</li>",
                if *n == 1 { "" } else { "s" },
                esc(why)
            );
        }
        html.push_str("</ul>");
    }
    html.push_str("<h3>Claims</h3><table><tr><th class=\"l\">claim</th><th class=\"l\">verdict</th><th class=\"l\">measured</th></tr>");
    for c in &cmp.claims {
        use rpclab_model::verdict::Direction;
        let class = match if c.verdict.checked == 0 {
            Direction::NotComparable
        } else {
            c.verdict.direction
        } {
            Direction::Holds => "holds",
            Direction::Reversed | Direction::DoesNotHold => "reversed",
            Direction::WithinNoise => "noise",
            Direction::NotComparable => "nc",
        };
        let _ = write!(
            html,
            "<tr class=\"{class}\" id=\"claim-{}\"><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            esc(&c.id),
            esc(&c.text),
            esc(c.label()),
            esc(c.detail())
        );
    }
    let _ = write!(
        html,
        "</table><p class=\"why\">{}</p>",
        esc(&reproduction::verdict_legend())
    );
    if !r.deviations.is_empty() {
        html.push_str("<h3 id=\"deviations\">Deviations from the post</h3><ul>");
        for d in &r.deviations {
            let _ = write!(html, "<li>{}</li>", esc(d));
        }
        html.push_str("</ul>");
    }
    if !r.notes.is_empty() {
        html.push_str("<h3>Notes</h3><ul>");
        for n in &r.notes {
            let _ = write!(html, "<li>{}</li>", esc(n));
        }
        html.push_str("</ul>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                page.contains(&esc(c.raw.trim())),
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
            assert!(page.contains(&esc(why)), "{why}");
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

    #[test]
    fn flag_words_get_their_class() {
        assert_eq!(flag_class("noisy: throughput CV 33% > 10%"), "f-noisy");
        assert_eq!(flag_class("client-bound"), "f-client-bound");
    }
}
