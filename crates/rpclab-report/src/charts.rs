//! Charts as small, self-contained SVG documents, written by hand rather
//! than with a plotting crate (docs/architecture.md says why): plain SVG
//! text keeps them dependency-free, diffable and inline-able in the HTML
//! report, which must open from the file system with no network.
//!
//! The data a chart shows ([`Series`] of [`Point`]s, taken from the
//! results by [`level_series`]) is kept apart from how it is drawn
//! ([`grouped_bars`], [`lines`]). The kinds of chart:
//!
//! * [`throughput`]: calls/s of every server variant at each level
//!   (concurrency or offered rate), with the repetitions' min–max as
//!   whiskers: a chart of bars per level, each on its own y axis, or one
//!   chart of lines where a scenario has three levels or more;
//! * [`efficiency`]: calls per server-core-second (1 / the server's CPU
//!   time per call), drawn the same way;
//! * [`latency_spectra`]: the latency percentile spectrum at each level,
//!   on HdrHistogram's usual axis (1 / (1 − q), log scale);
//! * [`published_vs_measured`]: a seed table's published and measured
//!   figures side by side with their ratio, on a log scale since they come
//!   from different decades of hardware.
//!
//! Every series keeps one colour and marker across the page (its place
//! among all the snapshot's series); a chart with more than
//! [`STYLES`] series is split into parts sharing one y axis, so no chart
//! repeats a colour or a marker. Bars (and markers) whose figure carries a
//! caveat are hatched ([`Hatch`]).

use crate::format::{fmt_value, slug};
use crate::reproduction::ComparisonTable;
use crate::svg::{
    esc, frame, hatch_defs, legend, marker, open, shorten, style, tick_label, Axis, Hatch, Key,
    BOTTOM, H, LEFT, RIGHT, STYLES, TOP, W,
};
use rpclab_model::result::{Aggregate, Results};
use rpclab_model::spec::Load;
use std::fmt::Write as _;

/// One rendered chart: its SVG document and the file stem it is saved as
/// (`charts/<name>.svg`), also the prefix of its element ids.
#[derive(Clone, Debug)]
pub struct Chart {
    pub name: String,
    pub svg: String,
}

/// One figure of a series: where it sits on the x axis, its value (a
/// median over repetitions), the whisker's ends (the repetitions' min and
/// max; equal to the value when there is no spread), and the caveats the
/// figure carries ([`Aggregate::caveats`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub value: f64,
    pub low: f64,
    pub high: f64,
    pub caveats: Vec<&'static str>,
}

/// A named series; `style` is its colour and marker ([`style`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub style: usize,
    pub points: Vec<Point>,
}

/// What a chart of levels shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Calls per second, median of the repetitions.
    Throughput,
    /// Calls per server-core-second: 10⁶ / the server's CPU µs per call.
    Efficiency,
}

/// Scenarios of a snapshot, in the order they were measured.
pub fn scenarios(results: &Results) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in &results.aggregates {
        if !out.contains(&a.scenario) {
            out.push(a.scenario.clone());
        }
    }
    out
}

fn series_name(a: &Aggregate) -> String {
    format!("{} {}", a.server, a.variant)
}

/// Every series (server variant) of a snapshot, in the order measured: a
/// series' place here is its style on every chart of the page.
pub fn series_names(results: &Results) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in &results.aggregates {
        let name = series_name(a);
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The distinct values of a figure over a scenario's aggregates, ascending.
fn distinct(results: &Results, scenario: &str, figure: impl Fn(&Aggregate) -> u32) -> Vec<u32> {
    let mut values: Vec<u32> = results
        .aggregates
        .iter()
        .filter(|a| a.scenario == scenario)
        .map(figure)
        .collect();
    values.sort_unstable();
    values.dedup();
    values
}

fn open_loop(results: &Results, scenario: &str) -> bool {
    results
        .cells
        .iter()
        .find(|c| c.scenario == scenario)
        .is_some_and(|c| matches!(c.report.load, Load::Open(_)))
}

/// The x axis' name of a scenario's levels.
pub fn level_label(results: &Results, scenario: &str) -> &'static str {
    if open_loop(results, scenario) {
        "offered rate (calls/s)"
    } else {
        "concurrency"
    }
}

/// The calls per server-core-second of each repetition of `a`.
fn efficiency_of_repetitions(results: &Results, a: &Aggregate) -> Vec<f64> {
    results
        .cells
        .iter()
        .filter(|c| c.key() == a.key())
        .filter_map(|c| c.server_cost.map(|x| x.cpu_us_per_call))
        .filter(|us| *us > 0.0)
        .map(|us| 1e6 / us)
        .collect()
}

/// One series per server variant of `scenario`, one point per level.
/// A level without the figure (no server CPU measured) has no point.
pub fn level_series(results: &Results, scenario: &str, metric: Metric) -> Vec<Series> {
    let names = series_names(results);
    let mut out: Vec<Series> = Vec::new();
    for a in results.aggregates.iter().filter(|a| a.scenario == scenario) {
        let point = match metric {
            Metric::Throughput => Some((a.throughput_median, a.throughput_min, a.throughput_max)),
            Metric::Efficiency => a.server_cpu_us_per_call.filter(|us| *us > 0.0).map(|us| {
                let value = 1e6 / us;
                let reps = efficiency_of_repetitions(results, a);
                let low = reps.iter().copied().fold(value, f64::min);
                let high = reps.iter().copied().fold(value, f64::max);
                (value, low, high)
            }),
        };
        let Some((value, low, high)) = point else {
            continue;
        };
        let name = series_name(a);
        let point = Point {
            x: a.concurrency as f64,
            value,
            low,
            high,
            caveats: a.caveats(),
        };
        match out.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => out.push(Series {
                style: names.iter().position(|n| *n == name).unwrap_or(0),
                name,
                points: vec![point],
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    out
}

/// Splits series into parts of at most [`STYLES`], by their style, so that
/// no part repeats a colour or a marker.
pub fn parts(series: &[Series]) -> Vec<Vec<&Series>> {
    let mut out: Vec<(usize, Vec<&Series>)> = Vec::new();
    for s in series {
        let part = s.style / STYLES;
        match out.iter_mut().find(|(p, _)| *p == part) {
            Some((_, v)) => v.push(s),
            None => out.push((part, vec![s])),
        }
    }
    out.sort_by_key(|(p, _)| *p);
    out.into_iter().map(|(_, v)| v).collect()
}

/// The words above a chart.
#[derive(Clone, Debug)]
pub struct Titles {
    /// The chart's id: its file stem, and the prefix of its element ids.
    pub id: String,
    pub title: String,
    pub subtitle: String,
    pub x_label: String,
    pub y_label: String,
}

impl Titles {
    /// The same titles for part `k` (from 0) of `n`.
    fn part(&self, k: usize, n: usize) -> Titles {
        if n <= 1 {
            return self.clone();
        }
        Titles {
            id: format!("{}-{}", self.id, k + 1),
            title: format!("{} (part {} of {n})", self.title, k + 1),
            ..self.clone()
        }
    }
}

fn head(svg: &mut String, t: &Titles) {
    open(svg, &shorten(&t.title, 80));
    hatch_defs(svg, &t.id);
    if !t.subtitle.is_empty() {
        let _ = write!(
            svg,
            r##"<text x="{LEFT}" y="38" fill="#555">{}</text>"##,
            esc(&shorten(&t.subtitle, 110))
        );
    }
}

/// The legend: the series, then the hatchings the chart uses.
fn legend_of(svg: &mut String, id: &str, series: &[&Series]) {
    let mut entries: Vec<(String, Key)> = series
        .iter()
        .map(|s| (s.name.clone(), Key::Series(s.style)))
        .collect();
    let mut used: Vec<Hatch> = series
        .iter()
        .flat_map(|s| s.points.iter().flat_map(|p| Hatch::of(&p.caveats)))
        .collect();
    used.sort();
    used.dedup();
    entries.extend(
        used.into_iter()
            .map(|h| (h.meaning().to_owned(), Key::Hatched(h))),
    );
    legend(svg, id, &entries);
}

/// A tooltip: the series, the value, the spread, the caveats.
fn tip(series: &str, p: &Point, unit: &str) -> String {
    let mut t = format!("{series}: {} {unit}", fmt_value(p.value));
    if p.high > p.low {
        let _ = write!(t, " (min–max {}–{})", fmt_value(p.low), fmt_value(p.high));
    }
    if !p.caveats.is_empty() {
        let _ = write!(t, " [{}]", p.caveats.join(", "));
    }
    t
}

fn whisker(svg: &mut String, x: f64, y: &Axis, p: &Point) {
    if p.high > p.low {
        let (a, b) = (y.px(p.low), y.px(p.high));
        let _ = write!(
            svg,
            r##"<path d="M{x:.1} {a:.1}V{b:.1}M{:.1} {a:.1}H{:.1}M{:.1} {b:.1}H{:.1}" stroke="#333" stroke-width="1.2" fill="none"/>"##,
            x - 3.0,
            x + 3.0,
            x - 3.0,
            x + 3.0
        );
    }
}

/// Grouped bars: one group per x value of `groups` (position, label), one
/// bar per series with a point there, on the y axis `y`; `notes` are
/// written above their group (a ratio). Values are written above the bars
/// when there is room.
pub fn grouped_bars(
    t: &Titles,
    groups: &[(f64, String)],
    notes: &[String],
    series: &[&Series],
    y: &Axis,
    unit: &str,
) -> String {
    let mut svg = String::new();
    head(&mut svg, t);
    let n = groups.len().max(1) as f64;
    let band = (W - RIGHT - LEFT) / n;
    let x = Axis {
        lo: 0.0,
        hi: n,
        log: false,
        from: LEFT,
        to: W - RIGHT,
    };
    let ticks: Vec<(f64, String)> = groups
        .iter()
        .enumerate()
        .map(|(i, (_, label))| {
            (
                i as f64 + 0.5,
                shorten(label, (band / 7.0).max(4.0) as usize),
            )
        })
        .collect();
    let y_label = format!("{}{}", t.y_label, if y.log { " (log)" } else { "" });
    frame(&mut svg, &x, y, &t.x_label, &y_label, &ticks);
    let per_group = series.len().max(1) as f64;
    let bar = (band * 0.84 / per_group).min(44.0);
    let base = H - BOTTOM;
    for (g, (gx, _)) in groups.iter().enumerate() {
        let left0 = LEFT + band * (g as f64 + 0.5) - bar * per_group / 2.0;
        let mut top_of_group = base;
        for (k, s) in series.iter().enumerate() {
            let (colour, m) = style(s.style);
            let left = left0 + k as f64 * bar;
            let cx = left + bar / 2.0;
            let Some(p) = s.points.iter().find(|p| p.x == *gx) else {
                let _ = write!(
                    svg,
                    r##"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" fill="#999" font-size="10">–</text>"##,
                    base - 4.0
                );
                continue;
            };
            let top = y.px(p.value).min(base);
            let width = (bar - 2.0).max(1.0);
            let rect = |fill: &str| {
                format!(
                    r#"<rect x="{left:.1}" y="{top:.1}" width="{width:.1}" height="{:.1}" fill="{fill}"/>"#,
                    base - top
                )
            };
            let _ = write!(
                svg,
                "<g><title>{}</title>{}",
                esc(&tip(&s.name, p, unit)),
                rect(colour)
            );
            for h in Hatch::of(&p.caveats) {
                svg.push_str(&rect(&h.fill(&t.id)));
            }
            svg.push_str("</g>");
            whisker(&mut svg, cx, y, p);
            if bar >= 9.0 {
                svg.push_str(&marker(
                    m,
                    cx,
                    top,
                    (bar / 5.0).clamp(2.5, 4.5),
                    colour,
                    "white",
                    "",
                ));
            }
            let label_at = y.px(p.high).min(top) - 7.0;
            top_of_group = top_of_group.min(label_at);
            if bar >= 13.0 {
                let _ = write!(
                    svg,
                    r##"<text transform="translate({:.1} {label_at:.1}) rotate(-90)" font-size="10" fill="#333">{}</text>"##,
                    cx + 3.5,
                    fmt_value(p.value)
                );
            }
        }
        if let Some(note) = notes.get(g).filter(|n| !n.is_empty()) {
            let _ = write!(
                svg,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-weight="bold">{}</text>"#,
                LEFT + band * (g as f64 + 0.5),
                (top_of_group - if bar >= 13.0 { 36.0 } else { 4.0 }).max(TOP + 12.0),
                esc(note)
            );
        }
    }
    legend_of(&mut svg, &t.id, series);
    svg.push_str("</svg>\n");
    svg
}

/// Lines with markers and whiskers on the axes `x` and `y`; `ticks` label
/// the x axis. A point with caveats gets a hatched marker.
pub fn lines(
    t: &Titles,
    x: &Axis,
    y: &Axis,
    ticks: &[(f64, String)],
    series: &[&Series],
    unit: &str,
) -> String {
    let mut svg = String::new();
    head(&mut svg, t);
    let y_label = format!("{}{}", t.y_label, if y.log { " (log)" } else { "" });
    frame(&mut svg, x, y, &t.x_label, &y_label, ticks);
    for s in series {
        let (colour, m) = style(s.style);
        let path: Vec<String> = s
            .points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x.px(p.x), y.px(p.value)))
            .collect();
        let _ = write!(
            svg,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2" stroke-opacity="0.85"/>"#,
            path.join(" ")
        );
        for p in &s.points {
            let (px, py) = (x.px(p.x), y.px(p.value));
            whisker(&mut svg, px, y, p);
            let hatches = Hatch::of(&p.caveats);
            let tip = tip(&s.name, p, unit);
            svg.push_str(&marker(m, px, py, 4.5, colour, colour, &tip));
            for h in hatches {
                svg.push_str(&marker(m, px, py, 4.5, colour, &h.fill(&t.id), &tip));
            }
        }
    }
    legend_of(&mut svg, &t.id, series);
    svg.push_str("</svg>\n");
    svg
}

/// A linear axis from 0 (or a logarithmic one) over the points' whiskers;
/// `labels` leaves room above the highest for bars' value labels.
fn value_axis(series: &[Series], log: bool, labels: bool) -> Option<Axis> {
    let values = series
        .iter()
        .flat_map(|s| s.points.iter().flat_map(|p| [p.value, p.high]));
    if log {
        let lows = series.iter().flat_map(|s| s.points.iter().map(|p| p.low));
        Axis::new(values.chain(lows), true, H - BOTTOM, TOP)
    } else {
        let headroom = values.fold(0f64, f64::max) * if labels { 1.2 } else { 1.0 };
        Axis::new([0.0, headroom].into_iter(), false, H - BOTTOM, TOP)
    }
}

/// True when the values span more than `ratio` (log axis wanted).
fn wide(series: &[Series], ratio: f64) -> bool {
    let pos: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.value))
        .filter(|v| *v > 0.0)
        .collect();
    let (lo, hi) = pos
        .iter()
        .fold((f64::INFINITY, 0f64), |(a, b), v| (a.min(*v), b.max(*v)));
    !pos.is_empty() && hi / lo > ratio
}

/// Levels (distinct x) of some series, in order.
fn levels(series: &[Series]) -> Vec<f64> {
    let mut v: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// Charts of a metric over levels: grouped bars with fewer than three
/// levels, lines from three; split into parts of at most [`STYLES`]
/// series sharing one y axis.
fn level_charts(t: &Titles, series: &[Series], unit: &str) -> Vec<Chart> {
    let levels = levels(series);
    if levels.is_empty() {
        return Vec::new();
    }
    let parts = parts(series);
    let as_lines = levels.len() >= 3;
    let log_y = as_lines && wide(series, 30.0);
    let Some(y) = value_axis(series, log_y, !as_lines) else {
        return Vec::new();
    };
    let n = parts.len();
    parts
        .iter()
        .enumerate()
        .map(|(k, part)| {
            let t = t.part(k, n);
            let svg = if as_lines {
                let (lo, hi) = (levels[0], levels[levels.len() - 1]);
                let x_log = lo > 0.0 && hi / lo >= 10.0;
                // The levels' own range, not whole decades: the first and
                // the last level sit at the ends.
                let x = Axis {
                    lo,
                    hi,
                    log: x_log,
                    from: LEFT + 20.0,
                    to: W - RIGHT - 20.0,
                };
                let ticks: Vec<(f64, String)> =
                    levels.iter().map(|v| (*v, tick_label(*v))).collect();
                lines(&t, &x, &y, &ticks, part, unit)
            } else {
                let groups: Vec<(f64, String)> =
                    levels.iter().map(|v| (*v, tick_label(*v))).collect();
                grouped_bars(&t, &groups, &[], part, &y, unit)
            };
            Chart { name: t.id, svg }
        })
        .collect()
}

fn repetitions_note(results: &Results, scenario: &str) -> String {
    let reps = distinct(results, scenario, |a| a.repetitions);
    match reps.as_slice() {
        [1] => "one repetition: no whiskers".to_owned(),
        [n] => format!("median of {n} repetitions, whiskers min–max"),
        _ => "median of the repetitions, whiskers min–max".to_owned(),
    }
}

/// Throughput of every server variant at each level of one scenario.
///
/// Bars (fewer than three levels) get one chart per level, each with its
/// own y axis: on one axis the highest level's figures (client-bound at 5
/// connections in the default lab) set the scale, and the eleven 1-client
/// bars were 10–17 px tall, unreadable and uncomparable. Lines (three
/// levels or more) keep one chart: the curve over levels is what they
/// show, on a log axis when the values span more than 30×.
pub fn throughput(results: &Results, scenario: &str) -> Vec<Chart> {
    let series = level_series(results, scenario, Metric::Throughput);
    let t = Titles {
        id: format!("throughput-{}", slug(scenario)),
        title: format!("{scenario}: throughput"),
        subtitle: repetitions_note(results, scenario),
        x_label: level_label(results, scenario).to_owned(),
        y_label: "calls/s".to_owned(),
    };
    if levels(&series).len() == 2 {
        per_level_charts(&t, &series, level_word(results, scenario), "calls/s")
    } else {
        level_charts(&t, &series, "calls/s")
    }
}

/// The series' points at level `x` only; a series without one is left out.
fn at_level(series: &[Series], x: f64) -> Vec<Series> {
    series
        .iter()
        .filter_map(|s| {
            let points: Vec<Point> = s.points.iter().filter(|p| p.x == x).cloned().collect();
            (!points.is_empty()).then(|| Series {
                points,
                ..s.clone()
            })
        })
        .collect()
}

/// One bar chart per level, each scaled to its own figures: the chart `t`
/// becomes `<id>-at-<level>`, "… at concurrency 5".
fn per_level_charts(t: &Titles, series: &[Series], level_word: &str, unit: &str) -> Vec<Chart> {
    levels(series)
        .into_iter()
        .flat_map(|x| {
            let level = tick_label(x);
            let t = Titles {
                id: format!("{}-at-{}", t.id, x as u64),
                title: format!("{} at {level_word} {level}", t.title),
                subtitle: format!("{}; y axis scaled to this level", t.subtitle),
                ..t.clone()
            };
            level_charts(&t, &at_level(series, x), unit)
        })
        .collect()
}

/// What a scenario's levels are, in a chart's title.
fn level_word(results: &Results, scenario: &str) -> &'static str {
    if open_loop(results, scenario) {
        "offered"
    } else {
        "concurrency"
    }
}

/// Calls per server-core-second of every server variant at each level of
/// one scenario: how much work the server gets out of a core.
pub fn efficiency(results: &Results, scenario: &str) -> Vec<Chart> {
    let series = level_series(results, scenario, Metric::Efficiency);
    let t = Titles {
        id: format!("efficiency-{}", slug(scenario)),
        title: format!("{scenario}: calls per server-core-second"),
        subtitle: format!(
            "10⁶ / server CPU µs per call (registry apart); {}",
            repetitions_note(results, scenario)
        ),
        x_label: level_label(results, scenario).to_owned(),
        y_label: "calls per core-second".to_owned(),
    };
    level_charts(&t, &series, "calls/core-s")
}

/// Where a percentile sits on the spectrum's x axis: log10(1 / (1 − q)).
fn spectrum_x(q: f64) -> f64 {
    (1.0 / (1.0 - q)).log10()
}

/// The latency spectrum's series at one level: p50 … p99.9 and the max, in ms.
pub fn spectrum_series(results: &Results, scenario: &str, level: u32) -> Vec<Series> {
    let names = series_names(results);
    let qs = [0.5, 0.9, 0.95, 0.99, 0.999];
    let max_x = spectrum_x(0.9999);
    results
        .aggregates
        .iter()
        .filter(|a| a.scenario == scenario && a.concurrency == level)
        .map(|a| {
            let l = &a.latency_us;
            let caveats = a.caveats();
            let at = |x: f64, us: f64| Point {
                x,
                value: us / 1000.0,
                low: us / 1000.0,
                high: us / 1000.0,
                caveats: caveats.clone(),
            };
            let mut points: Vec<Point> = qs
                .iter()
                .zip([l.p50, l.p90, l.p95, l.p99, l.p999])
                .map(|(q, v)| at(spectrum_x(*q), v))
                .collect();
            points.push(at(max_x, l.max));
            let name = series_name(a);
            Series {
                style: names.iter().position(|n| *n == name).unwrap_or(0),
                name,
                points,
            }
        })
        .collect()
}

/// The latency percentile spectrum at each level of one scenario, each
/// level split into parts of at most [`STYLES`] lines.
pub fn latency_spectra(results: &Results, scenario: &str) -> Vec<Chart> {
    let levels = distinct(results, scenario, |a| a.concurrency);
    let max_x = spectrum_x(0.9999);
    // 95% is plotted but not labelled: it would overlap 90%.
    let mut ticks: Vec<(f64, String)> =
        [("50%", 0.5), ("90%", 0.9), ("99%", 0.99), ("99.9%", 0.999)]
            .iter()
            .map(|(label, q)| (spectrum_x(*q), label.to_string()))
            .collect();
    ticks.push((max_x, "max".into()));
    let x = Axis {
        lo: 0.0,
        hi: max_x,
        log: false,
        from: LEFT + 20.0,
        to: W - RIGHT - 20.0,
    };
    let level_word = level_word(results, scenario);
    let mut out = Vec::new();
    for level in levels {
        let series = spectrum_series(results, scenario, level);
        let log_y = wide(&series, 30.0);
        let Some(y) = value_axis(&series, log_y, false) else {
            continue;
        };
        let t = Titles {
            id: format!("latency-{}-at-{}", slug(scenario), level),
            title: format!("{scenario}: latency spectrum at {level_word} {level}"),
            subtitle: "percentiles: median of the repetitions; max: the largest of them".into(),
            x_label: "percentile".into(),
            y_label: "latency ms".into(),
        };
        let parts = parts(&series);
        let n = parts.len();
        for (k, part) in parts.iter().enumerate() {
            let t = t.part(k, n);
            let svg = lines(&t, &x, &y, &ticks, part, "ms");
            out.push(Chart { name: t.id, svg });
        }
    }
    out
}

/// Published and measured figures of one column of a seed table, side by
/// side per row with measured / published above each pair, on a log
/// scale. None when nothing of it was measured.
pub fn published_vs_measured(table: &ComparisonTable, column: usize, id: &str) -> Option<Chart> {
    let mut groups = Vec::new();
    let mut notes = Vec::new();
    let mut published = Series {
        name: "published".into(),
        style: 1,
        points: Vec::new(),
    };
    let mut measured = Series {
        name: "measured".into(),
        style: 0,
        points: Vec::new(),
    };
    let mut unit = String::new();
    for (row, cells) in &table.rows {
        let Some(c) = cells.get(column).and_then(Option::as_ref) else {
            continue;
        };
        let x = groups.len() as f64;
        groups.push((x, row.clone()));
        unit.clone_from(&c.published.unit);
        let at = |v: f64, caveats: Vec<&'static str>| Point {
            x,
            value: v,
            low: v,
            high: v,
            caveats,
        };
        if let Some(v) = c.published.value.filter(|v| *v > 0.0) {
            published.points.push(at(v, Vec::new()));
        }
        if let Some(v) = c.measured.filter(|v| *v > 0.0) {
            measured.points.push(at(v, c.caveats.clone()));
        }
        notes.push(
            c.ratio
                .map_or(String::new(), |r| format!("×{}", fmt_value(r))),
        );
    }
    if measured.points.is_empty() {
        return None;
    }
    let both = [published, measured];
    let y = value_axis(&both, true, true)?;
    let t = Titles {
        id: id.to_owned(),
        title: format!("{}: published vs measured", table.columns[column]),
        subtitle: format!("{} · above each pair: measured / published", table.title),
        x_label: String::new(),
        y_label: unit.clone(),
    };
    let series: Vec<&Series> = both.iter().collect();
    Some(Chart {
        name: t.id.clone(),
        svg: grouped_bars(&t, &groups, &notes, &series, &y, &unit),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, style: usize, xs: &[f64]) -> Series {
        Series {
            name: name.into(),
            style,
            points: xs
                .iter()
                .map(|x| Point {
                    x: *x,
                    value: 10.0 * x,
                    low: 9.0 * x,
                    high: 11.0 * x,
                    caveats: Vec::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn spectrum_positions() {
        assert!((spectrum_x(0.99) - 2.0).abs() < 1e-9);
        assert!((spectrum_x(0.9) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn parts_never_repeat_a_style() {
        let all: Vec<Series> = (0..30)
            .map(|i| series(&format!("s{i}"), i, &[1.0]))
            .collect();
        let parts = parts(&all);
        assert_eq!(parts.iter().map(Vec::len).collect::<Vec<_>>(), [12, 12, 6]);
        for p in &parts {
            let styles: std::collections::BTreeSet<usize> =
                p.iter().map(|s| s.style % STYLES).collect();
            assert_eq!(styles.len(), p.len(), "a style repeats within a part");
        }
    }

    #[test]
    fn bars_below_three_levels_lines_from_three() {
        let t = Titles {
            id: "t".into(),
            title: "t".into(),
            subtitle: String::new(),
            x_label: "concurrency".into(),
            y_label: "calls/s".into(),
        };
        let two = [series("a", 0, &[1.0, 5.0]), series("b", 1, &[1.0, 5.0])];
        let charts = level_charts(&t, &two, "calls/s");
        assert_eq!(charts.len(), 1);
        assert!(!charts[0].svg.contains("<polyline"));
        assert!(charts[0].svg.matches("<rect x=").count() >= 4);
        let three = [series("a", 0, &[1.0, 5.0, 20.0])];
        let charts = level_charts(&t, &three, "calls/s");
        assert!(charts[0].svg.contains("<polyline"));
    }

    #[test]
    fn caveats_are_hatched_and_said_in_the_legend() {
        let t = Titles {
            id: "c".into(),
            title: "t".into(),
            subtitle: String::new(),
            x_label: String::new(),
            y_label: String::new(),
        };
        let mut s = series("a", 0, &[1.0]);
        let plain = level_charts(&t, std::slice::from_ref(&s), "").remove(0).svg;
        assert!(!plain.contains("fill=\"url(#c-hatch"));
        s.points[0].caveats = vec!["lower bound"];
        let hatched = level_charts(&t, &[s], "").remove(0).svg;
        assert!(hatched.contains("fill=\"url(#c-hatch-lb)\""));
        assert!(hatched.contains(Hatch::LowerBound.meaning()));
        assert!(hatched.contains("<pattern id=\"c-hatch-lb\""));
    }

    /// The heights of a chart's bars (their first `<rect>`, hatching apart).
    fn bar_heights(svg: &str) -> Vec<f64> {
        svg.split("<g><title>")
            .skip(1)
            .filter_map(|g| {
                let at = g.find("height=\"")? + 8;
                g[at..at + g[at..].find('"')?].parse().ok()
            })
            .collect()
    }

    #[test]
    fn each_level_of_the_default_lab_gets_its_own_readable_chart() {
        let dir = crate::fixture::committed("20261203T063645Z-vm-df511bd");
        let results = crate::snapshot::read_snapshot(&dir).unwrap();
        let charts = throughput(&results, "order-echo");
        let names: Vec<&str> = charts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["throughput-order-echo-at-1", "throughput-order-echo-at-5"]
        );
        assert!(charts[0]
            .svg
            .contains("order-echo: throughput at concurrency 1"));
        let heights: Vec<Vec<f64>> = charts.iter().map(|c| bar_heights(&c.svg)).collect();
        for (c, h) in charts.iter().zip(&heights) {
            assert_eq!(h.len(), 11, "{}", c.name);
            // Each axis is scaled to its own level's tallest bar.
            let tallest = h.iter().copied().fold(0.0, f64::max);
            assert!(tallest > 150.0, "{}: {h:?}", c.name);
        }
        // On one axis the eleven 1-client bars were 10–17 px tall.
        let lowest = heights[0].iter().copied().fold(f64::INFINITY, f64::min);
        assert!(lowest > 100.0, "{:?}", heights[0]);
    }

    #[test]
    fn one_level_or_three_keep_one_throughput_chart() {
        let text = std::fs::read_to_string(crate::fixture::results_json()).unwrap();
        let results: Results = serde_json::from_str(&text).unwrap();
        let names: Vec<String> = throughput(&results, "order-echo")
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(names, ["throughput-order-echo"]);
        let three = [
            series("a", 0, &[1.0, 5.0, 20.0]),
            series("b", 1, &[1.0, 5.0]),
        ];
        assert_eq!(at_level(&three, 20.0).len(), 1);
        assert_eq!(at_level(&three, 5.0)[1].points.len(), 1);
    }
}
