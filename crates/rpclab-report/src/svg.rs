//! The SVG primitives the charts are drawn with: axes (linear and
//! logarithmic, with nice ticks), the document's frame and legend, and
//! escaping. Written by hand rather than with a plotting crate (see
//! docs/architecture.md, "Why these choices").

use std::fmt::Write as _;

pub const W: f64 = 760.0;
pub const H: f64 = 400.0;
pub const LEFT: f64 = 72.0;
pub const RIGHT: f64 = 232.0;
pub const TOP: f64 = 44.0;
pub const BOTTOM: f64 = 52.0;

/// How many series a chart tells apart: twelve colours and twelve
/// markers, so no two series of one chart share either. A chart with more
/// series is split into parts of at most this many (the charts' business).
pub const STYLES: usize = 12;

/// The series colours: Okabe–Ito's eight colour-blind-safe colours, then
/// four of Tableau's (brown, purple, olive, grey), yellow last since it is
/// the faintest on white.
pub const PALETTE: [&str; STYLES] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#8C564B",
    "#9467BD", "#BCBD22", "#7F7F7F", "#F0E442",
];

/// The series markers, one per colour, told apart by shape alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Plus,
    Cross,
    Star,
    Pentagon,
    Hexagon,
    TriangleLeft,
    TriangleRight,
}

pub const MARKERS: [Marker; STYLES] = [
    Marker::Circle,
    Marker::Square,
    Marker::TriangleUp,
    Marker::Diamond,
    Marker::TriangleDown,
    Marker::Plus,
    Marker::Cross,
    Marker::Star,
    Marker::Pentagon,
    Marker::Hexagon,
    Marker::TriangleLeft,
    Marker::TriangleRight,
];

/// The colour and marker of series number `i` (cycled past [`STYLES`]).
pub fn style(i: usize) -> (&'static str, Marker) {
    (PALETTE[i % STYLES], MARKERS[i % STYLES])
}

/// The points of a polygon of `n` corners around (cx, cy), the first at
/// `start` degrees (0 is up, clockwise), corner k at `r * radii[k % len]`
/// (one radius: a regular polygon; two alternating: a star).
fn polygon(cx: f64, cy: f64, r: f64, n: usize, start: f64, radii: &[f64]) -> String {
    let points: Vec<String> = (0..n)
        .map(|k| {
            let a = (start + 360.0 * k as f64 / n as f64).to_radians();
            let rk = r * radii[k % radii.len()];
            format!("{:.1},{:.1}", cx + rk * a.sin(), cy - rk * a.cos())
        })
        .collect();
    points.join(" ")
}

/// A marker of radius `r` at (cx, cy): `fill` inside (white for a hollow
/// marker), `colour` around; `title` becomes its tooltip.
pub fn marker(
    m: Marker,
    cx: f64,
    cy: f64,
    r: f64,
    colour: &str,
    fill: &str,
    title: &str,
) -> String {
    let paint = format!(r#"fill="{fill}" stroke="{colour}" stroke-width="1.5""#);
    let tip = if title.is_empty() {
        String::new()
    } else {
        format!("<title>{}</title>", esc(title))
    };
    let poly = |pts: String| format!(r#"<polygon points="{pts}" {paint}>{tip}</polygon>"#);
    match m {
        Marker::Circle => {
            format!(r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="{r:.1}" {paint}>{tip}</circle>"#)
        }
        Marker::Square => {
            let a = r * 0.9;
            format!(
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" {paint}>{tip}</rect>"#,
                cx - a,
                cy - a,
                2.0 * a,
                2.0 * a
            )
        }
        Marker::TriangleUp => poly(polygon(cx, cy, r * 1.2, 3, 0.0, &[1.0])),
        Marker::TriangleDown => poly(polygon(cx, cy, r * 1.2, 3, 180.0, &[1.0])),
        Marker::TriangleLeft => poly(polygon(cx, cy, r * 1.2, 3, 270.0, &[1.0])),
        Marker::TriangleRight => poly(polygon(cx, cy, r * 1.2, 3, 90.0, &[1.0])),
        Marker::Diamond => poly(polygon(cx, cy, r * 1.25, 4, 0.0, &[1.0])),
        Marker::Pentagon => poly(polygon(cx, cy, r * 1.1, 5, 0.0, &[1.0])),
        Marker::Hexagon => poly(polygon(cx, cy, r * 1.1, 6, 0.0, &[1.0])),
        Marker::Star => poly(polygon(cx, cy, r * 1.4, 10, 0.0, &[1.0, 0.45])),
        Marker::Plus | Marker::Cross => {
            let a = r * 1.2;
            let turn = if m == Marker::Cross { 45 } else { 0 };
            format!(
                r#"<g transform="rotate({turn} {cx:.1} {cy:.1})"><path d="{d}" stroke="white" stroke-width="5.5"/><path d="{d}" stroke="{colour}" stroke-width="2.5"/>{tip}</g>"#,
                d = format_args!(
                    "M{:.1} {cy:.1}H{:.1}M{cx:.1} {:.1}V{:.1}",
                    cx - a,
                    cx + a,
                    cy - a,
                    cy + a
                )
            )
        }
    }
}

/// The hatchings laid over a bar (or a hollow marker on a line) whose
/// figure carries a caveat.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Hatch {
    /// Diagonal lines: client-bound, the figure is a bound of the server's
    /// (a lower bound of its throughput, an upper bound of a time derived
    /// from it).
    LowerBound,
    /// Crossed lines: unsteady after warm-up, noisy repetitions, too few
    /// calls, or shared CPUs.
    Unsteady,
}

impl Hatch {
    fn pattern(self, id: &str) -> String {
        match self {
            Hatch::LowerBound => format!("{id}-hatch-lb"),
            Hatch::Unsteady => format!("{id}-hatch-us"),
        }
    }

    /// What the hatching means, for legends.
    pub fn meaning(self) -> &'static str {
        match self {
            Hatch::LowerBound => "client-bound: lower/upper bound",
            Hatch::Unsteady => "unsteady / noisy / few calls",
        }
    }

    /// The hatchings a figure with these caveats
    /// ([`rpclab_model::result::Aggregate::caveats`]) gets.
    pub fn of(caveats: &[&str]) -> Vec<Hatch> {
        let mut out = Vec::new();
        let bound = |c: &&str| *c == "lower bound" || *c == "upper bound";
        if caveats.iter().any(bound) {
            out.push(Hatch::LowerBound);
        }
        if caveats.iter().any(|c| !bound(c)) {
            out.push(Hatch::Unsteady);
        }
        out
    }

    /// `fill="url(#…)"` of this hatching in the chart `id`.
    pub fn fill(self, id: &str) -> String {
        format!("url(#{})", self.pattern(id))
    }
}

/// The `<defs>` of a chart's hatchings: dark translucent lines that show
/// on every palette colour, ids prefixed with the chart's `id` so that many
/// charts inlined in one page do not clash.
pub fn hatch_defs(svg: &mut String, id: &str) {
    let _ = write!(
        svg,
        r##"<defs><pattern id="{}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="white" fill-opacity="0.35"/><line x1="0" y1="0" x2="0" y2="6" stroke="#222" stroke-width="2.2" stroke-opacity="0.7"/></pattern><pattern id="{}" width="7" height="7" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="7" height="7" fill="white" fill-opacity="0.45"/><path d="M0 0V7M0 0H7" stroke="#222" stroke-width="1.6" stroke-opacity="0.7"/></pattern></defs>"##,
        Hatch::LowerBound.pattern(id),
        Hatch::Unsteady.pattern(id)
    );
}

/// A small swatch of a hatching, as the charts draw it: a standalone
/// `<svg>` whose hatchings' ids start with `id`.
pub fn hatch_swatch(h: Hatch, id: &str) -> String {
    let mut svg = String::from(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="28" height="14" viewBox="0 0 28 14">"#,
    );
    hatch_defs(&mut svg, id);
    let _ = write!(
        svg,
        r##"<rect width="28" height="14" fill="#0072B2"/><rect width="28" height="14" fill="{}"/></svg>"##,
        h.fill(id)
    );
    svg
}

/// What a legend entry shows before its name.
pub enum Key {
    /// A series: its colour as a swatch with its marker on top.
    Series(usize),
    /// A grey swatch under a hatching.
    Hatched(Hatch),
}

/// Escapes text for SVG/HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A linear or base-10 logarithmic axis mapping data to pixels.
#[derive(Clone, Copy, Debug)]
pub struct Axis {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
    pub from: f64,
    pub to: f64,
}

impl Axis {
    pub fn new(values: impl Iterator<Item = f64>, log: bool, from: f64, to: f64) -> Option<Axis> {
        let vals: Vec<f64> = values
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .collect();
        if vals.is_empty() {
            return None;
        }
        let (mut lo, mut hi) = vals
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(*v), b.max(*v))
            });
        if log {
            lo = 10f64.powf(lo.log10().floor());
            hi = 10f64.powf(hi.log10().ceil());
            if hi <= lo {
                hi = lo * 10.0;
            }
        } else {
            lo = lo.min(0.0);
            if hi <= lo {
                hi = lo + 1.0;
            }
            hi = nice_ceiling(hi);
        }
        Some(Axis {
            lo,
            hi,
            log,
            from,
            to,
        })
    }

    pub fn px(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.from + t * (self.to - self.from)
    }

    pub fn ticks(&self) -> Vec<f64> {
        if self.log {
            let mut t = Vec::new();
            let mut v = self.lo;
            let decades = (self.hi / self.lo).log10().round() as i32;
            while v <= self.hi * 1.0001 {
                t.push(v);
                if decades <= 2 {
                    for m in [2.0, 5.0] {
                        if v * m < self.hi {
                            t.push(v * m);
                        }
                    }
                }
                v *= 10.0;
            }
            t.sort_by(f64::total_cmp);
            t
        } else {
            let step = nice_step((self.hi - self.lo) / 5.0);
            let mut t = Vec::new();
            let mut v = (self.lo / step).ceil() * step;
            while v <= self.hi + step * 1e-9 {
                t.push(v);
                v += step;
            }
            t
        }
    }
}

pub fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    p * if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    }
}

pub fn nice_ceiling(v: f64) -> f64 {
    let step = nice_step(v / 5.0);
    (v / step).ceil() * step
}

/// An axis label: thousands and millions abbreviated, no trailing zeros.
pub fn tick_label(v: f64) -> String {
    let plain = |x: f64| {
        let s = format!("{x:.3}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" {
            "0".to_owned()
        } else {
            s.to_owned()
        }
    };
    if v >= 1e6 {
        format!("{}M", plain(v / 1e6))
    } else if v >= 1e4 {
        format!("{}k", plain(v / 1e3))
    } else {
        plain(v)
    }
}

pub fn open(svg: &mut String, title: &str) {
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = write!(svg, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = write!(
        svg,
        r#"<text x="{}" y="22" font-size="15" font-weight="bold">{}</text>"#,
        LEFT,
        esc(title)
    );
}

pub fn frame(
    svg: &mut String,
    x: &Axis,
    y: &Axis,
    x_label: &str,
    y_label: &str,
    x_ticks: &[(f64, String)],
) {
    let (x0, x1, y0, y1) = (LEFT, W - RIGHT, H - BOTTOM, TOP);
    for t in y.ticks() {
        let py = y.px(t);
        let _ = write!(
            svg,
            r##"<line x1="{x0}" x2="{x1}" y1="{py:.1}" y2="{py:.1}" stroke="#e0e0e0"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            x0 - 6.0,
            py + 4.0,
            tick_label(t)
        );
    }
    for (t, label) in x_ticks {
        let px = x.px(*t);
        let _ = write!(
            svg,
            r##"<line x1="{px:.1}" x2="{px:.1}" y1="{y0}" y2="{y1}" stroke="#f0f0f0"/><text x="{px:.1}" y="{}" text-anchor="middle">{}</text>"##,
            y0 + 16.0,
            esc(label)
        );
    }
    let _ = write!(
        svg,
        r##"<rect x="{x0}" y="{y1}" width="{}" height="{}" fill="none" stroke="#888"/>"##,
        x1 - x0,
        y0 - y1
    );
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
        (x0 + x1) / 2.0,
        H - 12.0,
        esc(x_label)
    );
    let _ = write!(
        svg,
        r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (y0 + y1) / 2.0,
        esc(y_label)
    );
}

/// The legend, right of the plot; `id` is the chart's (for hatchings).
pub fn legend(svg: &mut String, id: &str, entries: &[(String, Key)]) {
    for (i, (name, key)) in entries.iter().enumerate().take(20) {
        let y = TOP + 8.0 + i as f64 * 16.0;
        let x = W - RIGHT + 14.0;
        let swatch = |fill: &str| {
            format!(
                r#"<rect x="{x}" y="{:.1}" width="14" height="12" fill="{fill}"/>"#,
                y - 10.0
            )
        };
        let shown = match key {
            Key::Series(k) => {
                let (colour, m) = style(*k);
                format!(
                    "{}{}",
                    swatch(colour),
                    marker(m, x + 7.0, y - 4.0, 3.5, colour, "white", "")
                )
            }
            Key::Hatched(h) => format!("{}{}", swatch("#bbbbbb"), swatch(&h.fill(id))),
        };
        let _ = write!(
            svg,
            r#"{shown}<text x="{}" y="{:.1}">{}</text>"#,
            x + 20.0,
            y,
            esc(&shorten(name, 33))
        );
    }
}

pub fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_spans_whole_decades_and_maps_ends() {
        let a = Axis::new([3.0, 420.0].into_iter(), true, 0.0, 100.0).unwrap();
        assert_eq!((a.lo, a.hi), (1.0, 1000.0));
        assert!((a.px(1.0) - 0.0).abs() < 1e-9);
        assert!((a.px(1000.0) - 100.0).abs() < 1e-9);
        assert!((a.px(10.0) - 100.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn linear_axis_starts_at_zero_with_nice_ticks() {
        let a = Axis::new([12.0, 87.0].into_iter(), false, 0.0, 1.0).unwrap();
        assert_eq!(a.lo, 0.0);
        assert_eq!(a.hi, 100.0);
        assert_eq!(a.ticks(), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick_label(500.0), "500");
        assert_eq!(tick_label(0.01), "0.01");
        assert_eq!(tick_label(20000.0), "20k");
        assert_eq!(tick_label(2_500_000.0), "2.5M");
    }

    #[test]
    fn twelve_distinct_colours_and_markers() {
        for i in 0..STYLES {
            for j in 0..i {
                assert_ne!(PALETTE[i], PALETTE[j]);
                assert_ne!(MARKERS[i], MARKERS[j]);
            }
        }
    }

    #[test]
    fn every_marker_is_one_closed_element() {
        for m in MARKERS {
            let svg = marker(m, 10.0, 10.0, 4.0, "#000", "white", "tip");
            assert!(svg.contains("<title>tip</title>"), "{m:?}");
            assert!(!svg.contains("NaN"), "{m:?}");
            let open = svg.matches('<').count() - svg.matches("</").count() * 2;
            assert_eq!(open, svg.matches("/>").count(), "{m:?}: {svg}");
        }
    }

    #[test]
    fn caveats_map_to_hatchings() {
        assert!(Hatch::of(&[]).is_empty());
        assert_eq!(Hatch::of(&["lower bound"]), [Hatch::LowerBound]);
        assert_eq!(Hatch::of(&["unsteady"]), [Hatch::Unsteady]);
        assert_eq!(
            Hatch::of(&["lower bound", "too few calls"]),
            [Hatch::LowerBound, Hatch::Unsteady]
        );
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
