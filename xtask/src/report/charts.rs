//! Charts as small, self-contained SVG documents, written by hand rather
//! than with a plotting crate: the lab needs three kinds of chart, and plain
//! SVG text keeps them dependency-free, diffable and inline-able in the HTML
//! report (which must open from the file system with no network).
//!
//! * [`throughput`]: throughput against concurrency (or offered rate), one
//!   line per server variant, with the repetitions' min–max as whiskers;
//! * [`latency_spectrum`]: the latency percentile spectrum of every cell of
//!   a scenario, on HdrHistogram's usual axis (1 / (1 − q), log scale);
//! * [`published_vs_measured`]: a seed table's published and measured
//!   figures side by side, on a log scale since they come from different
//!   decades of hardware.

use crate::report::format::fmt_value;
use crate::report::reproduction::ComparisonTable;
use crate::report::svg::{esc, frame, legend, open, shorten, tick_label, Axis, BOTTOM, H, LEFT, PALETTE, RIGHT, TOP, W};
use rpclab_model::result::{Aggregate, Results};
use std::fmt::Write as _;

/// One line of a line chart: (x, y, whisker low, whisker high).
struct Line {
    name: String,
    points: Vec<(f64, f64, f64, f64)>,
}

fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    x_log: bool,
    x_ticks: Option<Vec<(f64, String)>>,
    lines: &[Line],
) -> Option<String> {
    let xs = lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
    let x = Axis::new(xs, x_log, LEFT + 20.0, W - RIGHT - 20.0)?;
    let ys = lines
        .iter()
        .flat_map(|l| l.points.iter().flat_map(|p| [p.1, p.2, p.3]));
    let ys: Vec<f64> = ys.collect();
    let y_log = {
        let pos: Vec<f64> = ys.iter().copied().filter(|v| *v > 0.0).collect();
        let (lo, hi) = pos
            .iter()
            .fold((f64::INFINITY, 0f64), |(a, b), v| (a.min(*v), b.max(*v)));
        !pos.is_empty() && hi / lo > 30.0
    };
    let y = Axis::new(ys.into_iter(), y_log, H - BOTTOM, TOP)?;
    let ticks = x_ticks.unwrap_or_else(|| {
        let mut levels: Vec<f64> = lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.0))
            .collect();
        levels.sort_by(f64::total_cmp);
        levels.dedup();
        levels.into_iter().map(|v| (v, tick_label(v))).collect()
    });
    let mut svg = String::new();
    open(&mut svg, title);
    frame(
        &mut svg,
        &x,
        &y,
        x_label,
        &format!("{y_label}{}", if y_log { " (log)" } else { "" }),
        &ticks,
    );
    for (i, l) in lines.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let path: Vec<String> = l
            .points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x.px(p.0), y.px(p.1)))
            .collect();
        let _ = write!(
            svg,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            path.join(" ")
        );
        for p in &l.points {
            let (px, py) = (x.px(p.0), y.px(p.1));
            if p.3 > p.2 {
                let _ = write!(
                    svg,
                    r#"<line x1="{px:.1}" x2="{px:.1}" y1="{:.1}" y2="{:.1}" stroke="{colour}"/>"#,
                    y.px(p.2),
                    y.px(p.3)
                );
            }
            let _ = write!(
                svg,
                r#"<circle cx="{px:.1}" cy="{py:.1}" r="3.5" fill="{colour}"><title>{}: {}</title></circle>"#,
                esc(&l.name),
                fmt_value(p.1)
            );
        }
    }
    let entries: Vec<(String, &str)> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| (l.name.clone(), PALETTE[i % PALETTE.len()]))
        .collect();
    legend(&mut svg, &entries);
    svg.push_str("</svg>\n");
    Some(svg)
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

fn open_loop(results: &Results, scenario: &str) -> bool {
    results
        .cells
        .iter()
        .find(|c| c.scenario == scenario)
        .is_some_and(|c| matches!(c.report.load, rpclab_model::spec::Load::Open(_)))
}

/// Throughput against concurrency (or offered rate) for one scenario.
pub fn throughput(results: &Results, scenario: &str) -> Option<String> {
    let aggs: Vec<&Aggregate> = results
        .aggregates
        .iter()
        .filter(|a| a.scenario == scenario)
        .collect();
    let mut lines: Vec<Line> = Vec::new();
    for a in &aggs {
        let name = format!("{} {}", a.server, a.variant);
        let point = (
            a.concurrency as f64,
            a.throughput_median,
            a.throughput_min,
            a.throughput_max,
        );
        match lines.iter_mut().find(|l| l.name == name) {
            Some(l) => l.points.push(point),
            None => lines.push(Line {
                name,
                points: vec![point],
            }),
        }
    }
    for l in &mut lines {
        l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let levels: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .collect();
    let (lo, hi) = levels
        .iter()
        .fold((f64::INFINITY, 0f64), |(a, b), v| (a.min(*v), b.max(*v)));
    let x_label = if open_loop(results, scenario) {
        "offered rate (calls/s)"
    } else {
        "concurrency"
    };
    line_chart(
        &format!("{scenario}: throughput (median, min–max of repetitions)"),
        x_label,
        "calls/s",
        hi / lo >= 10.0,
        None,
        &lines,
    )
}

/// Where a percentile sits on the spectrum's x axis: log10(1 / (1 − q)).
fn spectrum_x(q: f64) -> f64 {
    (1.0 / (1.0 - q)).log10()
}

/// The latency percentile spectrum of every cell of one scenario.
pub fn latency_spectrum(results: &Results, scenario: &str) -> Option<String> {
    let qs = [0.5, 0.9, 0.95, 0.99, 0.999];
    let max_x = spectrum_x(0.9999);
    let lines: Vec<Line> = results
        .aggregates
        .iter()
        .filter(|a| a.scenario == scenario)
        .map(|a| {
            let l = &a.latency_us;
            let vals = [l.p50, l.p90, l.p95, l.p99, l.p999];
            let mut points: Vec<(f64, f64, f64, f64)> = qs
                .iter()
                .zip(vals)
                .map(|(q, v)| (spectrum_x(*q), v / 1000.0, 0.0, 0.0))
                .collect();
            points.push((max_x, l.max / 1000.0, 0.0, 0.0));
            Line {
                name: format!("{} {} @{}", a.server, a.variant, a.concurrency),
                points,
            }
        })
        .collect();
    // 95% is plotted but not labelled: it would overlap 90%.
    let mut ticks: Vec<(f64, String)> =
        [("50%", 0.5), ("90%", 0.9), ("99%", 0.99), ("99.9%", 0.999)]
            .iter()
            .map(|(label, q)| (spectrum_x(*q), label.to_string()))
            .collect();
    ticks.push((max_x, "max".into()));
    line_chart(
        &format!("{scenario}: latency percentile spectrum (median of repetitions)"),
        "percentile",
        "latency ms",
        false,
        Some(ticks),
        &lines,
    )
}

/// Published and measured figures of one column of a seed table, side by
/// side per row, on a log scale. None when nothing of it was measured.
pub fn published_vs_measured(table: &ComparisonTable, column: usize) -> Option<String> {
    let rows: Vec<(&str, Option<f64>, Option<f64>)> = table
        .rows
        .iter()
        .filter_map(|(row, cells)| {
            let c = cells.get(column)?.as_ref()?;
            Some((row.as_str(), c.published.value, c.measured))
        })
        .collect();
    if !rows.iter().any(|r| r.2.is_some()) {
        return None;
    }
    let unit = table
        .rows
        .iter()
        .find_map(|(_, c)| c.get(column)?.as_ref().map(|c| c.published.unit.clone()))
        .unwrap_or_default();
    let values = rows.iter().flat_map(|r| [r.1, r.2]).flatten();
    let y = Axis::new(values, true, H - BOTTOM, TOP)?;
    let mut svg = String::new();
    let title = format!("{}: published vs measured", table.columns[column]);
    open(&mut svg, &shorten(&title, 76));
    let _ = write!(
        svg,
        r##"<text x="{LEFT}" y="38" fill="#555">{}</text>"##,
        esc(&shorten(&table.title, 100))
    );
    let n = rows.len() as f64;
    let band = (W - RIGHT - LEFT) / n;
    let x = Axis {
        lo: 0.0,
        hi: n,
        log: false,
        from: LEFT,
        to: W - RIGHT,
    };
    let ticks: Vec<(f64, String)> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (i as f64 + 0.5, shorten(r.0, (band / 7.0).max(4.0) as usize)))
        .collect();
    frame(&mut svg, &x, &y, "", &format!("{unit} (log)"), &ticks);
    let bar = (band * 0.35).min(40.0);
    for (i, (row, published, measured)) in rows.iter().enumerate() {
        let cx = LEFT + band * (i as f64 + 0.5);
        for (k, (v, colour, what)) in [
            (published, PALETTE[1], "published"),
            (measured, PALETTE[0], "measured"),
        ]
        .into_iter()
        .enumerate()
        {
            let left = cx - bar + k as f64 * bar;
            match v {
                Some(v) if *v > 0.0 => {
                    let top = y.px(*v);
                    let _ = write!(
                        svg,
                        r#"<rect x="{left:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{colour}"><title>{} {what}: {} {}</title></rect>"#,
                        bar - 2.0,
                        (H - BOTTOM - top).max(0.0),
                        esc(row),
                        fmt_value(*v),
                        esc(&unit)
                    );
                }
                _ => {
                    let _ = write!(
                        svg,
                        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#999" font-size="10">none</text>"##,
                        left + bar / 2.0,
                        H - BOTTOM - 4.0
                    );
                }
            }
        }
    }
    legend(
        &mut svg,
        &[
            ("published".into(), PALETTE[1]),
            ("measured".into(), PALETTE[0]),
        ],
    );
    svg.push_str("</svg>\n");
    Some(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spectrum_positions() {
        assert!((spectrum_x(0.99) - 2.0).abs() < 1e-9);
        assert!((spectrum_x(0.9) - 1.0).abs() < 1e-9);
    }
}
