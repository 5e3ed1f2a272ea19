//! The SVG primitives the charts are drawn with: axes (linear and
//! logarithmic, with nice ticks), the document's frame and legend, and
//! escaping. Written by hand rather than with a plotting crate (see
//! docs/architecture.md, "Why these choices").

use std::fmt::Write as _;

pub const W: f64 = 760.0;
pub const H: f64 = 400.0;
pub const LEFT: f64 = 72.0;
pub const RIGHT: f64 = 210.0;
pub const TOP: f64 = 44.0;
pub const BOTTOM: f64 = 52.0;

/// Colour-blind-safe palette (Okabe–Ito), cycled.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];

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

pub fn legend(svg: &mut String, entries: &[(String, &str)]) {
    for (i, (name, colour)) in entries.iter().enumerate().take(22) {
        let y = TOP + 8.0 + i as f64 * 16.0;
        let x = W - RIGHT + 14.0;
        let _ = write!(
            svg,
            r#"<rect x="{x}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{}" y="{:.1}">{}</text>"#,
            y - 10.0,
            colour,
            x + 18.0,
            y,
            esc(&shorten(name, 30))
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
    fn text_is_escaped() {
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
