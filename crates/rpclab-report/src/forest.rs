//! A claim's forest plot: every pair of the claim at every level as one
//! row on a shared log scale of the speed ratio, with the bands its
//! verdict was decided by.
//!
//! A verdict in words ("undecided", "withheld") says what was concluded;
//! the plot says why. An interval that straddles an edge of the noise band
//! is undecided, one wholly beyond it decides a direction, one inside the
//! published ratio's tolerance band matches it; the dots (each JVM start's
//! own ratio) show whether the width comes from one odd start or from all
//! of them. The scale is logarithmic so that 2× and ½× lie equally far
//! from 1, as the rule treats them.
//!
//! Drawn by hand as inline SVG, like the rest of the report's charts
//! ([`crate::svg`]), from the stored [`ClaimVerdict`] alone.

use crate::svg::{esc, shorten, tick_label};
use crate::verdicts::{spread_text, MAGNITUDE_TOLERANCE, NOISE_FLOOR};
use rpclab_model::result::Reproduction;
use rpclab_model::verdict::{Basis, ClaimVerdict, Direction, Magnitude, PairVerdict};
use std::fmt::Write as _;

/// The bands a claim's verdicts were decided by, as the plot shades them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bands {
    /// f: ratios within [1 / (1 + f), 1 + f] are "within noise".
    pub noise_floor: f64,
    /// t: a published ratio P is matched by an interval inside
    /// [P / (1 + t), P · (1 + t)].
    pub magnitude_tolerance: f64,
}

impl Bands {
    /// A reproduction's bands: its recorded plan's, or, for a run made
    /// before plans, the bands it was decided with.
    pub fn of(r: &Reproduction) -> Bands {
        match &r.plan {
            Some(p) => Bands {
                noise_floor: p.plan.noise_floor,
                magnitude_tolerance: p.plan.magnitude_tolerance,
            },
            None => Bands {
                noise_floor: NOISE_FLOOR,
                magnitude_tolerance: MAGNITUDE_TOLERANCE,
            },
        }
    }
}

/// A verdict's class in the page (`holds`, `reversed`, `noise`, `nc`): the
/// claims table colours its rows by it, and the plot its rows.
pub fn direction_class(d: Direction) -> &'static str {
    match d {
        Direction::Holds => "holds",
        Direction::Reversed | Direction::DoesNotHold => "reversed",
        Direction::WithinNoise => "noise",
        Direction::NotComparable => "nc",
    }
}

/// A class's light colour (the page's row background, see `CSS` in
/// [`crate::html`]) and a dark one of the same hue for marks and text.
pub fn class_colours(class: &str) -> (&'static str, &'static str) {
    match class {
        "holds" => ("#e3f5e3", "#2e7d32"),
        "reversed" => ("#fbe3e3", "#c62828"),
        "noise" => ("#fff6d6", "#9a7300"),
        _ => ("#eee", "#666"),
    }
}

/// The published ratio's colour (the page's `.pub`), for its diamond and
/// the band around it.
const PUBLISHED: &str = "#a06000";
const PUBLISHED_BAND: &str = "#f3dcc0";
/// The noise band's shade: the "within noise" class's colour, a touch
/// deeper so that it shows on white.
const NOISE_BAND: &str = "#fbefc0";

const ROW_H: f64 = 32.0;
const TOP: f64 = 6.0;
const PLOT_W: f64 = 380.0;
/// Below the rows: the tick labels and the axis caption.
const AXIS_H: f64 = 40.0;
const GAP: f64 = 14.0;
/// A generous average width of a 12 px sans-serif character, so that an
/// estimated text width errs towards room to spare.
const CHAR_W: f64 = 6.8;
const NOTE_CHAR_W: f64 = 6.0;
const LABEL_CHARS: usize = 44;
/// Wide enough for most pairs' labels, so that the plots of a page's
/// claims mostly start at one place.
const MIN_LABEL_W: f64 = 190.0;

/// The plot of `v`'s pairs under `bands`, as inline SVG; none when the
/// claim has no pairs (a claim on systems alone, or nothing measured).
pub fn forest_svg(v: &ClaimVerdict, bands: &Bands) -> Option<String> {
    if v.pairs.is_empty() {
        return None;
    }
    let rows: Vec<Row> = v.pairs.iter().map(|p| Row::of(p, v, bands)).collect();
    let label_w = rows
        .iter()
        .map(|r| r.label.chars().count() as f64 * CHAR_W)
        .fold(MIN_LABEL_W, f64::max)
        + GAP;
    let verdict_w = rows
        .iter()
        .map(|r| {
            let main = r.verdict.chars().count() as f64 * CHAR_W;
            let notes = r.notes.chars().count() as f64 * NOTE_CHAR_W;
            main.max(notes)
        })
        .fold(120.0, f64::max)
        + 22.0;
    let (x0, x1) = (label_w, label_w + PLOT_W);
    let width = x1 + GAP + verdict_w;
    let bottom = TOP + rows.len() as f64 * ROW_H;
    let height = bottom + AXIS_H;
    let scale = Scale::new(&marks(&v.pairs, bands), x0, x1);

    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="forest" viewBox="0 0 {width:.0} {height:.0}" width="{width:.0}" height="{height:.0}" font-family="sans-serif" font-size="12" role="img" aria-label="forest plot of claim {}">"#,
        esc(&v.claim)
    );
    let _ = write!(
        svg,
        r#"<rect width="{width:.0}" height="{height:.0}" fill="white"/><rect class="fp-plot" x="{x0:.1}" y="{TOP:.1}" width="{PLOT_W:.1}" height="{:.1}" fill="none"/>"#,
        bottom - TOP
    );
    // The noise band first, so that everything else lies on top of it.
    let (nlo, nhi) = (
        scale.px(1.0 / (1.0 + bands.noise_floor)),
        scale.px(1.0 + bands.noise_floor),
    );
    let _ = write!(
        svg,
        r#"<rect class="fp-band-noise" x="{nlo:.1}" y="{TOP:.1}" width="{:.1}" height="{:.1}" fill="{NOISE_BAND}"/>"#,
        nhi - nlo,
        bottom - TOP
    );
    for t in &scale.ticks {
        let x = scale.px(*t);
        let _ = write!(
            svg,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{TOP:.1}" y2="{:.1}" stroke="#e4e4e4"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#444">{}</text>"##,
            bottom + 4.0,
            bottom + 17.0,
            tick_label(*t)
        );
    }
    let one = scale.px(1.0);
    let _ = write!(
        svg,
        r##"<line x1="{x0:.1}" x2="{x1:.1}" y1="{bottom:.1}" y2="{bottom:.1}" stroke="#888"/><line x1="{one:.1}" x2="{one:.1}" y1="{TOP:.1}" y2="{bottom:.1}" stroke="#555" stroke-width="1.2"/><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11" fill="#555">speed ratio, log scale: right of 1, the first system is faster</text>"##,
        (x0 + x1) / 2.0,
        bottom + 33.0
    );
    for (i, row) in rows.iter().enumerate() {
        let top = TOP + i as f64 * ROW_H;
        row.draw(&mut svg, &scale, bands, top, width);
    }
    svg.push_str("</svg>");
    Some(svg)
}

/// A small standalone SVG naming the plots' marks and bands, for a legend
/// above the plots: two lines of three entries.
pub fn legend_svg(bands: &Bands) -> String {
    let (_, dark) = class_colours("holds");
    let (_, grey) = class_colours("nc");
    let (width, height) = (900.0, 46.0);
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="forest-legend" viewBox="0 0 {width} {height}" width="{width}" height="{height}" font-family="sans-serif" font-size="12"><rect width="{width}" height="{height}" fill="white"/>"#
    );
    let (y1, y2) = (14.0, 34.0);
    let mut text = |x: f64, y: f64, words: &str| {
        let _ = write!(
            svg,
            r#"<text x="{x}" y="{:.1}">{}</text>"#,
            y + 4.0,
            esc(words)
        );
    };
    text(
        58.0,
        y1,
        "bar: the interval at the claim's coverage; tick: the ratio",
    );
    text(58.0, y2, "dots: each JVM start's ratio");
    text(
        494.0,
        y1,
        &format!("noise band: 1 ± {}", percent(bands.noise_floor)),
    );
    text(
        494.0,
        y2,
        &format!(
            "magnitude band: published ± {}",
            percent(bands.magnitude_tolerance)
        ),
    );
    text(752.0, y1, "published ratio");
    text(752.0, y2, "hollow: no interval");
    let _ = write!(
        svg,
        r#"<rect x="6" y="{:.1}" width="44" height="7" fill="{dark}" fill-opacity="0.3" stroke="{dark}"/><line x1="30" x2="30" y1="{:.1}" y2="{:.1}" stroke="{dark}" stroke-width="2.5"/>"#,
        y1 - 3.5,
        y1 - 8.0,
        y1 + 8.0
    );
    for x in [12.0, 22.0, 40.0] {
        let _ = write!(
            svg,
            r#"<circle cx="{x:.1}" cy="{y2:.1}" r="3" fill="{dark}" fill-opacity="0.6" stroke="white" stroke-width="0.8"/>"#
        );
    }
    let _ = write!(
        svg,
        r#"<rect x="460" y="{:.1}" width="28" height="14" fill="{NOISE_BAND}"/><rect x="460" y="{:.1}" width="28" height="14" fill="{PUBLISHED_BAND}"/>"#,
        y1 - 7.0,
        y2 - 7.0
    );
    let _ = write!(
        svg,
        r#"<polygon points="{}" fill="{PUBLISHED}" stroke="white" stroke-width="0.8"/><circle cx="740" cy="{y2:.1}" r="4.5" fill="white" stroke="{grey}" stroke-width="1.8"/></svg>"#,
        diamond(740.0, y1, 5.5)
    );
    svg
}

/// One row of the plot: a pair at a level, with its words.
struct Row<'a> {
    pair: &'a PairVerdict,
    /// `over / under · level N`.
    label: String,
    /// What was concluded: a direction, `undecided`, `withheld: …`, `not
    /// checked`.
    verdict: String,
    /// Magnitude, basis and flags, joined.
    notes: String,
    class: &'static str,
    tooltip: String,
}

impl<'a> Row<'a> {
    fn of(p: &'a PairVerdict, v: &ClaimVerdict, bands: &Bands) -> Row<'a> {
        let mut label = format!("{} / {}", p.over, p.under);
        if let Some(level) = p.level {
            let _ = write!(label, " · level {level}");
        }
        let (verdict, class) = verdict_of(p);
        let notes = notes_of(p).join(" · ");
        let tooltip = tooltip_of(p, v, bands, &label, &verdict, &notes);
        Row {
            pair: p,
            label: shorten(&label, LABEL_CHARS),
            verdict,
            notes,
            class,
            tooltip,
        }
    }

    /// Draws the row whose top is `top` into `svg`, the whole row's
    /// tooltip on its group.
    fn draw(&self, svg: &mut String, scale: &Scale, bands: &Bands, top: f64, width: f64) {
        let p = self.pair;
        let cy = top + ROW_H / 2.0;
        let (light, dark) = class_colours(self.class);
        let _ = write!(
            svg,
            r##"<g class="fp-row"><title>{}</title><rect x="0" y="{top:.1}" width="{width:.0}" height="{ROW_H:.1}" fill="white" fill-opacity="0"/><line x1="0" x2="{width:.0}" y1="{:.1}" y2="{:.1}" stroke="#eee"/>"##,
            esc(&self.tooltip),
            top + ROW_H,
            top + ROW_H
        );
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            scale.x0 - GAP,
            cy + 4.0,
            esc(&self.label)
        );
        if let Some(pb) = positive(p.published) {
            let t = 1.0 + bands.magnitude_tolerance;
            let (a, b) = (scale.px(pb / t), scale.px(pb * t));
            let _ = write!(
                svg,
                r#"<rect class="fp-band-pub" x="{a:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{PUBLISHED_BAND}" fill-opacity="0.75"/>"#,
                top + 3.0,
                b - a,
                ROW_H - 6.0
            );
        }
        // The interval under the starts, the ratio on top of both.
        let interval = positive(p.low).zip(positive(p.high));
        if let Some((low, high)) = interval {
            let (a, b) = (scale.px(low), scale.px(high));
            let _ = write!(
                svg,
                r#"<rect class="fp-bar" x="{a:.1}" y="{:.1}" width="{:.1}" height="7" fill="{dark}" fill-opacity="0.3" stroke="{dark}"/>"#,
                cy + 1.5,
                (b - a).max(1.0)
            );
        }
        for s in p.starts.iter().filter_map(|s| positive(Some(*s))) {
            let _ = write!(
                svg,
                r#"<circle class="fp-start" cx="{:.1}" cy="{:.1}" r="3" fill="{dark}" fill-opacity="0.6" stroke="white" stroke-width="0.8"/>"#,
                scale.px(s),
                cy + 5.0
            );
        }
        match (interval, positive(Some(p.measured))) {
            (Some(_), Some(m)) => {
                let x = scale.px(m);
                let _ = write!(
                    svg,
                    r#"<line class="fp-ratio" x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="{dark}" stroke-width="2.5"/>"#,
                    cy - 3.0,
                    cy + 13.0
                );
            }
            (None, Some(m)) => {
                let _ = write!(
                    svg,
                    r#"<circle class="fp-point" cx="{:.1}" cy="{:.1}" r="4.5" fill="white" stroke="{dark}" stroke-width="1.8"/>"#,
                    scale.px(m),
                    cy + 5.0
                );
            }
            (_, None) => {}
        }
        if let Some(pb) = positive(p.published) {
            let _ = write!(
                svg,
                r#"<polygon class="fp-pub" points="{}" fill="{PUBLISHED}" stroke="white" stroke-width="0.8"/>"#,
                diamond(scale.px(pb), cy - 7.0, 5.5)
            );
        }
        let vx = scale.x1 + GAP;
        let _ = write!(
            svg,
            r#"<rect x="{vx:.1}" y="{:.1}" width="10" height="10" fill="{light}" stroke="{dark}"/>"#,
            cy - (if self.notes.is_empty() { 5.0 } else { 11.0 })
        );
        let main_y = if self.notes.is_empty() {
            cy + 4.0
        } else {
            cy - 2.0
        };
        let _ = write!(
            svg,
            r#"<text class="fp-verdict" x="{:.1}" y="{main_y:.1}" fill="{dark}" font-weight="bold">{}</text>"#,
            vx + 16.0,
            esc(&self.verdict)
        );
        if !self.notes.is_empty() {
            let _ = write!(
                svg,
                r##"<text class="fp-notes" x="{:.1}" y="{:.1}" font-size="11" fill="#555">{}</text>"##,
                vx + 16.0,
                cy + 11.0,
                esc(&self.notes)
            );
        }
        svg.push_str("</g>");
    }
}

/// What a pair's row says it concluded, and its class: a pair measured
/// only indicatively or withheld or undecided concludes nothing (grey); a
/// decided one is coloured by its direction.
fn verdict_of(p: &PairVerdict) -> (String, &'static str) {
    if p.basis == Basis::Indicative {
        ("not checked".into(), "nc")
    } else if p.cpu_disagrees {
        ("withheld: throughput and CPU disagree".into(), "nc")
    } else if !p.decided {
        ("undecided".into(), "nc")
    } else {
        (p.direction.label().into(), direction_class(p.direction))
    }
}

/// The short words after a row's verdict: where it leaned, its magnitude,
/// the basis when it is not the claim's measure, and the flags that
/// qualify it.
fn notes_of(p: &PairVerdict) -> Vec<String> {
    let mut notes = Vec::new();
    let concluded = p.basis != Basis::Indicative && !p.cpu_disagrees;
    if concluded && !p.decided && p.direction != Direction::NotComparable {
        notes.push(format!("leaning {}", p.direction.label()));
    }
    if let Some(m) = p.magnitude.filter(|_| p.basis != Basis::Indicative) {
        notes.push(format!("magnitude {}", m.label()));
    }
    if p.low.is_none() || p.high.is_none() {
        notes.push("no interval".into());
    }
    match p.basis {
        Basis::PerServerCore | Basis::ServerCpuPerCall => notes.push(p.basis.label().into()),
        Basis::Trustworthy | Basis::Indicative => {}
    }
    if p.host_dependent {
        notes.push("host-dependent".into());
    }
    if p.both_saturated {
        notes.push("both saturated".into());
    }
    notes
}

/// The row's tooltip: every number behind it, one line each.
fn tooltip_of(
    p: &PairVerdict,
    v: &ClaimVerdict,
    bands: &Bands,
    label: &str,
    verdict: &str,
    notes: &str,
) -> String {
    let mut lines = vec![label.to_owned()];
    let mut ratio = format!(
        "ratio {}",
        spread_text(
            p.measured,
            p.low,
            p.high,
            p.within_rounds.then_some(p.rounds)
        )
    );
    if let Some(c) = p.coverage.or(v.coverage) {
        let _ = write!(ratio, ", interval at {} coverage", percent(c));
    }
    lines.push(ratio);
    if !p.starts.is_empty() {
        let starts: Vec<String> = p.starts.iter().map(|s| format!("{s:.2}")).collect();
        lines.push(format!(
            "{} JVM starts: {}",
            p.starts.len(),
            starts.join(", ")
        ));
    }
    let f = 1.0 + bands.noise_floor;
    lines.push(format!("noise band [{:.3}, {:.3}]", 1.0 / f, f));
    if let Some(pb) = p.published {
        let t = 1.0 + bands.magnitude_tolerance;
        lines.push(format!(
            "published {pb:.2}×, magnitude band [{:.2}, {:.2}]",
            pb / t,
            pb * t
        ));
    }
    if let Some(c) = &p.server_cpu {
        lines.push(format!(
            "server CPU per call: {}",
            spread_text(c.median, c.low, c.high, Some(c.rounds))
        ));
    }
    let mut concluded = verdict.to_owned();
    if !notes.is_empty() {
        let _ = write!(concluded, " ({notes})");
    }
    if let (Basis::Indicative, Some(m)) = (p.basis, p.magnitude) {
        let would = match m {
            Magnitude::Matches => "match",
            Magnitude::Differs => "differ",
            Magnitude::Undecided => "be undecided",
        };
        let _ = write!(concluded, "; magnitude would {would}");
    }
    lines.push(format!("verdict: {concluded}"));
    if let Some(why) = &p.why_undecided {
        lines.push(format!("why: {why}"));
    }
    if !p.left_out.is_empty() {
        lines.push(format!("left out: {}", p.left_out.join(", ")));
    }
    if let Some(plan) = &v.plan {
        lines.push(format!("plan {plan}"));
    }
    lines.join("\n")
}

/// Every ratio the plot must show: intervals, ratios, starts, published
/// ratios with their bands, and the noise band around 1.
fn marks(pairs: &[PairVerdict], bands: &Bands) -> Vec<f64> {
    let f = 1.0 + bands.noise_floor;
    let t = 1.0 + bands.magnitude_tolerance;
    let mut all = vec![1.0 / f, 1.0, f];
    for p in pairs {
        all.extend([Some(p.measured), p.low, p.high].into_iter().flatten());
        all.extend(&p.starts);
        if let Some(pb) = p.published {
            all.extend([pb / t, pb, pb * t]);
        }
    }
    all.retain(|v| v.is_finite() && *v > 0.0);
    all
}

/// A ratio that can be placed on a log scale.
fn positive(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite() && *v > 0.0)
}

/// The points of a diamond of half-diagonal `r` around (x, y).
fn diamond(x: f64, y: f64, r: f64) -> String {
    format!(
        "{x:.1},{:.1} {:.1},{y:.1} {x:.1},{:.1} {:.1},{y:.1}",
        y - r,
        x + r,
        y + r,
        x - r
    )
}

/// `0.05` as `5 %`, `0.975` as `97.5 %`.
fn percent(share: f64) -> String {
    let s = format!("{:.1}", share * 100.0);
    format!("{} %", s.trim_end_matches(".0"))
}

/// The tick ladders, coarse to fine: the mantissas of the ticks in each
/// decade. A ratio axis spans anything from a few percent (two level
/// systems) to two decades (a published 50×), so one ladder cannot serve.
const LADDERS: [&[f64]; 5] = [
    &[1.0],
    &[1.0, 2.0, 5.0],
    &[1.0, 1.5, 2.0, 3.0, 5.0],
    &[1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0],
    &[
        1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0,
    ],
];
/// Closest two tick labels may come, in pixels.
const MIN_TICK_GAP: f64 = 44.0;
const MAX_TICKS: usize = 7;
/// The narrowest span shown (high / low): narrower data would be blown up
/// until noise looks like a difference.
const MIN_SPAN: f64 = 1.3;

/// The plot's log axis: from the tick just below the smallest mark to the
/// tick just above the largest, so that the ticks bracket every mark.
struct Scale {
    lo: f64,
    hi: f64,
    x0: f64,
    x1: f64,
    ticks: Vec<f64>,
}

impl Scale {
    /// The axis over `values` (positive, finite, not empty) drawn from
    /// `x0` to `x1`: of the ladders whose labels do not crowd and that
    /// give at most [`MAX_TICKS`], the one with the most ticks (then the
    /// one the data fill best).
    fn new(values: &[f64], x0: f64, x1: f64) -> Scale {
        let (mut lo, mut hi) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(*v), b.max(*v))
            });
        if !(lo.is_finite() && hi.is_finite()) {
            (lo, hi) = (1.0, 1.0);
        }
        if hi / lo < MIN_SPAN {
            let mid = (lo * hi).sqrt();
            (lo, hi) = (mid / MIN_SPAN.sqrt(), mid * MIN_SPAN.sqrt());
        }
        let width = x1 - x0;
        let mut best: Option<(usize, f64, Vec<f64>)> = None;
        for ladder in LADDERS {
            let ticks = bracket(ladder, lo, hi);
            let (a, b) = (ticks[0], ticks[ticks.len() - 1]);
            let decades = (b / a).ln();
            let crowded = ticks
                .windows(2)
                .any(|w| (w[1] / w[0]).ln() / decades * width < MIN_TICK_GAP);
            if crowded || ticks.len() > MAX_TICKS {
                continue;
            }
            let fill = (hi / lo).ln() / decades;
            let better = match &best {
                None => true,
                Some((n, f, _)) => ticks.len() > *n || (ticks.len() == *n && fill > *f),
            };
            if better {
                best = Some((ticks.len(), fill, ticks));
            }
        }
        let ticks = best.map_or_else(|| bracket(LADDERS[0], lo, hi), |(_, _, t)| t);
        Scale {
            lo: ticks[0],
            hi: ticks[ticks.len() - 1],
            x0,
            x1,
            ticks,
        }
    }

    /// Where `v` lies, clamped to the plot.
    fn px(&self, v: f64) -> f64 {
        let t = (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln());
        let x = self.x0 + t.clamp(0.0, 1.0) * (self.x1 - self.x0);
        if x.is_finite() {
            x
        } else {
            self.x0
        }
    }
}

/// The ladder's ticks from the last one at or below `lo` to the first one
/// at or above `hi`.
fn bracket(ladder: &[f64], lo: f64, hi: f64) -> Vec<f64> {
    let (from, to) = (lo.log10().floor() as i32 - 1, hi.log10().ceil() as i32 + 1);
    let all: Vec<f64> = (from..=to)
        .flat_map(|k| ladder.iter().map(move |m| m * 10f64.powi(k)))
        .collect();
    let eps = 1e-9;
    let first = all
        .iter()
        .rposition(|t| *t <= lo * (1.0 + eps))
        .unwrap_or(0);
    let last = all
        .iter()
        .position(|t| *t >= hi * (1.0 - eps))
        .unwrap_or(all.len() - 1);
    all[first..=last].to_vec()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    const BANDS: Bands = Bands {
        noise_floor: 0.05,
        magnitude_tolerance: 0.25,
    };

    /// A decided pair, holding, its magnitude matched, three starts.
    pub(crate) fn pair(over: &str, under: &str) -> PairVerdict {
        PairVerdict {
            over: over.into(),
            under: under.into(),
            level: Some(20),
            published: Some(1.4),
            measured: 1.42,
            low: Some(1.30),
            high: Some(1.55),
            coverage: Some(0.975),
            rounds: 6,
            within_rounds: true,
            basis: Basis::Trustworthy,
            direction: Direction::Holds,
            magnitude: Some(Magnitude::Matches),
            decided: true,
            why_undecided: None,
            host_dependent: false,
            server_cpu: None,
            left_out: Vec::new(),
            starts: vec![1.33, 1.44, 1.49],
            cpu_disagrees: false,
            both_saturated: false,
        }
    }

    pub(crate) fn claim(id: &str, pairs: Vec<PairVerdict>) -> ClaimVerdict {
        ClaimVerdict {
            claim: id.into(),
            decided: pairs.iter().all(|p| p.decided),
            direction: Direction::Holds,
            magnitude: None,
            basis: Some(Basis::Trustworthy),
            checked: pairs.iter().filter(|p| p.decided).count() as u32,
            of: pairs.len() as u32,
            unit: "pairs".into(),
            not_run: false,
            label: "holds".into(),
            detail: String::new(),
            pairs,
            plan: Some("ice-dubbo-thrift-grpc@3f2a9c1b".into()),
            host_dependent: false,
            coverage: Some(0.95),
        }
    }

    /// An undecided pair: its interval holds 1 and reaches past the band.
    pub(crate) fn undecided(over: &str, under: &str) -> PairVerdict {
        PairVerdict {
            published: None,
            measured: 1.04,
            low: Some(0.91),
            high: Some(1.19),
            direction: Direction::WithinNoise,
            magnitude: None,
            decided: false,
            why_undecided: Some(
                "interval [0.91, 1.19] reaches across an edge of the 5 % noise band".into(),
            ),
            starts: vec![0.93, 1.02, 1.16],
            ..pair(over, under)
        }
    }

    /// A withheld pair: throughput says faster, server CPU says dearer.
    pub(crate) fn withheld(over: &str, under: &str) -> PairVerdict {
        PairVerdict {
            measured: 3.4,
            low: Some(3.1),
            high: Some(3.8),
            published: Some(3.2),
            magnitude: None,
            decided: false,
            cpu_disagrees: true,
            host_dependent: true,
            why_undecided: Some("withheld: throughput and CPU disagree".into()),
            starts: vec![3.2, 3.35, 3.7],
            ..pair(over, under)
        }
    }

    /// An indicative pair measured in one start: no interval.
    pub(crate) fn indicative(over: &str, under: &str) -> PairVerdict {
        PairVerdict {
            measured: 0.62,
            low: None,
            high: None,
            published: Some(4.7),
            basis: Basis::Indicative,
            direction: Direction::Reversed,
            magnitude: Some(Magnitude::Differs),
            decided: false,
            starts: vec![0.62],
            both_saturated: true,
            why_undecided: Some("grpc: lower bound (client-bound)".into()),
            ..pair(over, under)
        }
    }

    /// The numbers in `attr="…"` of every element whose class starts with
    /// `fp-` and is one of `classes`.
    fn xs(svg: &str, classes: &[&str]) -> Vec<f64> {
        let attr = |el: &str, name: &str| -> Option<String> {
            let key = format!(" {name}=\"");
            let at = el.find(&key)? + key.len();
            Some(el[at..].split('"').next()?.to_owned())
        };
        let mut out = Vec::new();
        for el in svg.split('<') {
            let Some(class) = attr(el, "class") else {
                continue;
            };
            if !classes.contains(&class.as_str()) {
                continue;
            }
            for name in ["x", "x1", "x2", "cx"] {
                out.extend(attr(el, name).and_then(|v| v.parse::<f64>().ok()));
            }
            if let (Some(x), Some(w)) = (attr(el, "x"), attr(el, "width")) {
                out.push(x.parse::<f64>().unwrap() + w.parse::<f64>().unwrap());
            }
            if let Some(points) = attr(el, "points") {
                for pt in points.split(' ') {
                    out.push(pt.split(',').next().unwrap().parse().unwrap());
                }
            }
        }
        out
    }

    fn sample() -> ClaimVerdict {
        claim(
            "c20-ratios",
            vec![
                pair("ice", "thrift"),
                undecided("ice", "dubbo"),
                withheld("thrift", "dubbo"),
                indicative("ice", "grpc"),
            ],
        )
    }

    #[test]
    fn a_claim_without_pairs_has_no_plot() {
        assert_eq!(forest_svg(&claim("c0", Vec::new()), &BANDS), None);
    }

    #[test]
    fn one_row_per_pair_one_dot_per_start_a_diamond_per_published_ratio() {
        let v = sample();
        let svg = forest_svg(&v, &BANDS).unwrap();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.ends_with("</svg>"));
        assert!(!svg.contains("NaN") && !svg.contains("=\"inf") && !svg.contains("=\"-inf"));
        assert_eq!(svg.matches("class=\"fp-row\"").count(), 4);
        let starts: usize = v.pairs.iter().map(|p| p.starts.len()).sum();
        assert_eq!(svg.matches("class=\"fp-start\"").count(), starts);
        // The undecided pair has no published ratio: three diamonds, three
        // bands, one noise band.
        assert_eq!(svg.matches("class=\"fp-pub\"").count(), 3);
        assert_eq!(svg.matches("class=\"fp-band-pub\"").count(), 3);
        assert_eq!(svg.matches("class=\"fp-band-noise\"").count(), 1);
        // Intervals as bars; the pair without one only as a hollow point.
        assert_eq!(svg.matches("class=\"fp-bar\"").count(), 3);
        assert_eq!(svg.matches("class=\"fp-point\"").count(), 1);
        assert_eq!(svg.matches("class=\"fp-ratio\"").count(), 3);
        for label in [
            "ice / thrift · level 20",
            "ice / dubbo · level 20",
            "thrift / dubbo · level 20",
            "ice / grpc · level 20",
        ] {
            assert!(svg.contains(&format!(">{label}</text>")), "{label}");
        }
    }

    #[test]
    fn each_row_says_what_was_concluded() {
        let svg = forest_svg(&sample(), &BANDS).unwrap();
        let verdicts: Vec<&str> = svg
            .split("class=\"fp-verdict\"")
            .skip(1)
            .map(|s| s.split('>').nth(1).unwrap().split('<').next().unwrap())
            .collect();
        assert_eq!(
            verdicts,
            [
                "holds",
                "undecided",
                "withheld: throughput and CPU disagree",
                "not checked"
            ]
        );
        for note in [
            "magnitude matches",
            "leaning within noise",
            "host-dependent",
            "no interval · both saturated",
        ] {
            assert!(svg.contains(note), "{note}");
        }
        // Decided rows take the page's colours, the others are grey.
        assert!(svg.contains(&format!("fill=\"{}\"", class_colours("holds").1)));
        let reversed = claim(
            "c",
            vec![PairVerdict {
                direction: Direction::Reversed,
                measured: 0.5,
                low: Some(0.45),
                high: Some(0.56),
                magnitude: None,
                ..pair("a", "b")
            }],
        );
        let svg = forest_svg(&reversed, &BANDS).unwrap();
        assert!(svg.contains(">reversed</text>"));
        assert!(svg.contains(&format!("stroke=\"{}\"", class_colours("reversed").1)));
    }

    #[test]
    fn each_row_has_a_tooltip_with_its_numbers() {
        let svg = forest_svg(&sample(), &BANDS).unwrap();
        assert_eq!(svg.matches("<title>").count(), 4);
        assert!(svg.contains(
            "<title>ice / thrift · level 20\nratio 1.42× [1.30, 1.55] over 6 rounds, interval at 97.5 % coverage\n3 JVM starts: 1.33, 1.44, 1.49\nnoise band [0.952, 1.050]\npublished 1.40×, magnitude band [1.12, 1.75]\nverdict: holds (magnitude matches)\nplan ice-dubbo-thrift-grpc@3f2a9c1b</title>"
        ), "{svg}");
        assert!(svg.contains("magnitude would differ"));
    }

    #[test]
    fn names_are_escaped() {
        let mut p = pair("a<b", "c&d");
        p.why_undecided = Some("\"quoted\" <why>".into());
        let v = claim("c<1>", vec![p]);
        let svg = forest_svg(&v, &BANDS).unwrap();
        assert!(svg.contains(">a&lt;b / c&amp;d · level 20</text>"));
        assert!(svg.contains("claim c&lt;1&gt;"));
        assert!(svg.contains("&quot;quoted&quot; &lt;why&gt;"));
        assert!(!svg.contains("a<b") && !svg.contains("c&d") && !svg.contains("<why>"));
    }

    #[test]
    fn every_mark_lies_within_the_plot() {
        let plot = |svg: &str| {
            let x = xs(svg, &["fp-plot"]);
            (x[0], x[1])
        };
        let wide = claim(
            "wide",
            vec![
                PairVerdict {
                    measured: 55.0,
                    low: Some(40.0),
                    high: Some(80.0),
                    published: Some(12.0),
                    starts: vec![38.0, 55.0, 90.0],
                    ..pair("a", "b")
                },
                PairVerdict {
                    measured: 0.02,
                    low: Some(0.01),
                    high: Some(0.03),
                    published: None,
                    starts: vec![0.009, 0.02],
                    ..pair("c", "d")
                },
            ],
        );
        let narrow = claim(
            "narrow",
            vec![PairVerdict {
                measured: 1.01,
                low: Some(0.99),
                high: Some(1.02),
                published: None,
                starts: vec![0.995, 1.01, 1.02],
                ..pair("a", "b")
            }],
        );
        for v in [sample(), wide, narrow] {
            let svg = forest_svg(&v, &BANDS).unwrap();
            let (x0, x1) = plot(&svg);
            assert!((x1 - x0 - PLOT_W).abs() < 0.5);
            let marks = xs(
                &svg,
                &["fp-bar", "fp-ratio", "fp-start", "fp-point", "fp-pub"],
            );
            assert!(marks.len() >= v.pairs.len(), "{}", v.claim);
            for x in marks {
                assert!(
                    x >= x0 - 5.6 && x <= x1 + 5.6,
                    "{}: {x} outside [{x0}, {x1}]",
                    v.claim
                );
            }
            // Centres of marks (not a diamond's corners) lie inside.
            for x in xs(&svg, &["fp-start", "fp-ratio", "fp-bar"]) {
                assert!(x >= x0 && x <= x1, "{}: {x}", v.claim);
            }
        }
    }

    #[test]
    fn ticks_bracket_the_marks_without_crowding() {
        let s = Scale::new(&[0.95, 1.0, 1.05, 1.3, 1.42], 0.0, PLOT_W);
        assert!(s.lo <= 0.95 && s.hi >= 1.42, "{:?}", s.ticks);
        assert!(s.ticks.contains(&1.0));
        assert!(s.ticks.len() >= 3 && s.ticks.len() <= MAX_TICKS);
        let s = Scale::new(&[0.3, 1.0, 5.9], 0.0, PLOT_W);
        let labels: Vec<String> = s.ticks.iter().map(|t| tick_label(*t)).collect();
        assert_eq!(labels, ["0.2", "0.5", "1", "2", "5", "10"]);
        let s = Scale::new(&[0.001, 1.0, 900.0], 0.0, PLOT_W);
        assert_eq!((s.lo, s.hi), (0.001, 1000.0));
        for w in s.ticks.windows(2) {
            assert!(s.px(w[1]) - s.px(w[0]) >= MIN_TICK_GAP);
        }
    }

    #[test]
    fn bands_come_from_the_plan_or_the_old_defaults() {
        let mut r = Reproduction::default();
        assert_eq!(
            Bands::of(&r),
            Bands {
                noise_floor: NOISE_FLOOR,
                magnitude_tolerance: MAGNITUDE_TOLERANCE
            }
        );
        r.plan = Some(rpclab_model::plan::RecordedPlan {
            plan: rpclab_model::plan::Plan {
                rule: rpclab_model::plan::RULE.into(),
                alpha: 0.05,
                noise_floor: 0.03,
                magnitude_tolerance: 0.2,
                equivalence_tolerance: 0.1,
                profile: "reproduce".into(),
                starts: 3,
                rounds: 2,
                reason: String::new(),
                windows: None,
            },
            hash: "3f2a9c1b".into(),
        });
        assert_eq!(Bands::of(&r).noise_floor, 0.03);
        assert_eq!(Bands::of(&r).magnitude_tolerance, 0.2);
    }
}
