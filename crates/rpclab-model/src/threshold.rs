//! Thresholds that fail a run, as k6 has them: `p99<2ms`, `errors<0.1%`,
//! `throughput>5000`.
//!
//! A threshold is a limit every measured window must hold, so that CI can
//! gate on a run without reading its numbers. `rpclab-client` judges its
//! one window, `lab run` each of its cells (every repetition); a breach is
//! one line naming the threshold, the cell and the figure, and the process
//! exits with [`BREACH_EXIT_CODE`] (99, k6's code), apart from 1 (any
//! other error) and `lab compare`'s 3 (a regression).
//!
//! The grammar, which a threshold that does not parse quotes in full:
//! `METRIC OP VALUE`, with METRIC one of `p50 p90 p99 p999 max` (a latency,
//! VALUE with a unit `ns us ms s`), `errors` (VALUE a share of the calls
//! with `%`, else a count of failed calls) or `throughput` (calls/s, an
//! optional `/s`); OP one of `< <= > >= ==`.

pub use crate::breach::{Breach, ThresholdCheck};
use crate::capacity::BadSlo;
use crate::result::{Cell, ClientReport, Latency};
use std::fmt;
use std::str::FromStr;

/// The exit code of a run that breached a threshold (k6's).
pub const BREACH_EXIT_CODE: i32 = 99;

/// The grammar in one line, quoted by every parse error.
pub const GRAMMAR: &str = "a threshold is METRIC OP VALUE: METRIC p50|p90|p99|p999|max (VALUE with a unit ns|us|ms|s, e.g. p99<2ms), errors (VALUE in % of calls, or a count: errors<0.1%, errors==0) or throughput (calls/s: throughput>5000); OP <|<=|>|>=|==";

/// One parsed threshold; it reads and prints as it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Threshold {
    text: String,
    metric: Metric,
    op: Op,
    /// The bound in the metric's own unit: µs for a latency, a fraction of
    /// the calls or a count for errors, calls/s for throughput.
    bound: f64,
}

/// What a threshold judges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Metric {
    /// A latency percentile (or the maximum), µs.
    Latency(Percentile),
    /// The failed calls' share of all calls.
    ErrorShare,
    /// The number of failed calls.
    ErrorCount,
    /// Successful calls per second.
    Throughput,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Percentile {
    P50,
    P90,
    P99,
    P999,
    Max,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
}

/// A threshold that does not parse: what was written, and the grammar.
#[derive(Debug, PartialEq, Eq)]
pub struct BadThreshold(pub String);

impl fmt::Display for BadThreshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot read threshold `{}`: {GRAMMAR}", self.0)
    }
}

impl std::error::Error for BadThreshold {}

impl FromStr for Threshold {
    type Err = BadThreshold;

    fn from_str(text: &str) -> Result<Threshold, BadThreshold> {
        parse(text).ok_or_else(|| BadThreshold(text.to_owned()))
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn parse(text: &str) -> Option<Threshold> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let at = compact.find(['<', '>', '='])?;
    let (name, rest) = compact.split_at(at);
    let (op, value) = [
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("==", Op::Eq),
        ("<", Op::Lt),
        (">", Op::Gt),
    ]
    .into_iter()
    .find_map(|(sign, op)| rest.strip_prefix(sign).map(|v| (op, v)))?;
    let (metric, bound) = match name {
        "errors" => match value.strip_suffix('%') {
            Some(percent) => (Metric::ErrorShare, number(percent)? / 100.0),
            None => (Metric::ErrorCount, number(value)?),
        },
        "throughput" => (
            Metric::Throughput,
            number(value.strip_suffix("/s").unwrap_or(value))?,
        ),
        _ => (Metric::Latency(percentile(name)?), micros(value)?),
    };
    Some(Threshold {
        text: compact,
        metric,
        op,
        bound,
    })
}

fn number(text: &str) -> Option<f64> {
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
}

fn percentile(name: &str) -> Option<Percentile> {
    Some(match name {
        "p50" => Percentile::P50,
        "p90" => Percentile::P90,
        "p99" => Percentile::P99,
        "p999" => Percentile::P999,
        "max" => Percentile::Max,
        _ => return None,
    })
}

/// A duration with its unit (`2ms`, `500us`), in µs; the unit is required.
/// The thresholds' latencies and `lab capacity`'s SLO ([`parse_slo`])
/// read with it.
pub fn micros(text: &str) -> Option<f64> {
    [("ns", 1e-3), ("us", 1.0), ("ms", 1e3), ("s", 1e6)]
        .into_iter()
        .find_map(|(unit, scale)| Some(number(text.strip_suffix(unit)?)? * scale))
}

/// `lab capacity --slo`: its bound, µs, in this grammar's durations (a
/// number with a unit). Missing or unreadable, the error quotes the
/// SLO's grammar ([`crate::capacity::SLO_GRAMMAR`]) in one line.
pub fn parse_slo(text: Option<&str>) -> Result<f64, BadSlo> {
    let Some(text) = text else {
        return Err(BadSlo("lab capacity needs --slo".into()));
    };
    micros(text.trim())
        .filter(|us| *us > 0.0)
        .ok_or_else(|| BadSlo(format!("cannot read --slo `{text}`")))
}

/// The figures of one window that a threshold can judge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figures<'a> {
    pub latency_us: &'a Latency,
    pub calls_ok: u64,
    pub calls_failed: u64,
    pub throughput_per_s: f64,
}

impl<'a> Figures<'a> {
    /// A client's report of its window.
    pub fn of_report(r: &'a ClientReport) -> Figures<'a> {
        Figures {
            latency_us: &r.latency_us,
            calls_ok: r.calls_ok,
            calls_failed: r.calls_failed,
            throughput_per_s: r.throughput_per_s,
        }
    }

    /// One cell of a snapshot (one repetition).
    pub fn of_cell(c: &'a Cell) -> Figures<'a> {
        Figures {
            latency_us: &c.latency_us,
            calls_ok: c.calls_ok,
            calls_failed: c.calls_failed,
            throughput_per_s: c.throughput_per_s,
        }
    }
}

impl Threshold {
    /// The figure this threshold judges in `figures`, in its own unit.
    fn observed(&self, figures: &Figures<'_>) -> f64 {
        let l = figures.latency_us;
        match self.metric {
            Metric::Latency(Percentile::P50) => l.p50,
            Metric::Latency(Percentile::P90) => l.p90,
            Metric::Latency(Percentile::P99) => l.p99,
            Metric::Latency(Percentile::P999) => l.p999,
            Metric::Latency(Percentile::Max) => l.max,
            Metric::ErrorShare => {
                let all = figures.calls_ok + figures.calls_failed;
                figures.calls_failed as f64 / all.max(1) as f64
            }
            Metric::ErrorCount => figures.calls_failed as f64,
            Metric::Throughput => figures.throughput_per_s,
        }
    }

    /// Whether `figures` hold this threshold.
    pub fn holds(&self, figures: &Figures<'_>) -> bool {
        let (v, b) = (self.observed(figures), self.bound);
        match self.op {
            Op::Lt => v < b,
            Op::Le => v <= b,
            Op::Gt => v > b,
            Op::Ge => v >= b,
            Op::Eq => v == b,
        }
    }

    /// The figure judged, as a breach line shows it: `p99 3.1 ms`.
    fn describe(&self, figures: &Figures<'_>) -> String {
        let v = self.observed(figures);
        match self.metric {
            Metric::Latency(p) => {
                let name = format!("{p:?}").to_lowercase();
                if v >= 1e6 {
                    format!("{name} {:.3} s", v / 1e6)
                } else if v >= 1e3 {
                    format!("{name} {:.3} ms", v / 1e3)
                } else {
                    format!("{name} {v:.1} us")
                }
            }
            Metric::ErrorShare => format!(
                "errors {:.3} % ({} of {} calls)",
                v * 100.0,
                figures.calls_failed,
                figures.calls_ok + figures.calls_failed
            ),
            Metric::ErrorCount => format!("errors {}", figures.calls_failed),
            Metric::Throughput => format!("throughput {v:.0} calls/s"),
        }
    }

    /// `None` when `figures` hold it, else the breach of the window named
    /// `subject` (`grpc-java/1.83 echo c=8 rep 1`).
    pub fn judge(&self, subject: &str, figures: &Figures<'_>) -> Option<Breach> {
        (!self.holds(figures)).then(|| Breach {
            threshold: self.text.clone(),
            subject: subject.to_owned(),
            observed: self.describe(figures),
        })
    }
}

/// Every breach of `thresholds` by one window.
pub fn judge_all(thresholds: &[Threshold], subject: &str, figures: &Figures<'_>) -> Vec<Breach> {
    thresholds
        .iter()
        .filter_map(|t| t.judge(subject, figures))
        .collect()
}

impl ThresholdCheck {
    /// `thresholds` judged on every cell of a snapshot (each repetition).
    pub fn of_cells(thresholds: &[Threshold], cells: &[Cell]) -> ThresholdCheck {
        ThresholdCheck {
            asked: thresholds.iter().map(ToString::to_string).collect(),
            breaches: cells
                .iter()
                .flat_map(|c| judge_all(thresholds, &cell_subject(c), &Figures::of_cell(c)))
                .collect(),
        }
    }
}

/// The error of a run that breached thresholds: the breaches were printed;
/// the process exits with [`BREACH_EXIT_CODE`].
#[derive(Debug)]
pub struct Breached(pub usize);

impl fmt::Display for Breached {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} threshold breach(es); exit code {BREACH_EXIT_CODE}",
            self.0
        )
    }
}

impl std::error::Error for Breached {}

/// The name of a snapshot cell in a breach line.
pub fn cell_subject(c: &Cell) -> String {
    format!(
        "{}/{} {} c={} rep {}",
        c.server, c.variant, c.scenario, c.concurrency, c.repetition
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latency(p99: f64) -> Latency {
        Latency {
            min: 1.0,
            mean: 2.0,
            p50: 2.0,
            p90: 3.0,
            p95: 4.0,
            p99,
            p999: p99 * 2.0,
            max: p99 * 3.0,
        }
    }

    fn figures(l: &Latency, ok: u64, failed: u64, throughput: f64) -> Figures<'_> {
        Figures {
            latency_us: l,
            calls_ok: ok,
            calls_failed: failed,
            throughput_per_s: throughput,
        }
    }

    fn t(text: &str) -> Threshold {
        text.parse().unwrap()
    }

    #[test]
    fn every_form_of_the_grammar_parses_with_its_unit() {
        let l = latency(3100.0);
        let f = figures(&l, 9990, 10, 5000.0);
        assert!(!t("p99<2ms").holds(&f));
        assert!(t("p99 < 3.2ms").holds(&f));
        assert!(t("p99<=3100us").holds(&f));
        assert!(t("p50<=2000ns").holds(&f));
        assert!(t("p999<1s").holds(&f));
        assert!(!t("max<9ms").holds(&f));
        assert!(t("p90<4us").holds(&f));
        assert!(!t("errors<0.1%").holds(&f), "10 of 10000 is 0.1 %");
        assert!(t("errors<=0.1%").holds(&f));
        assert!(!t("errors==0").holds(&f));
        assert!(t("errors<11").holds(&f));
        assert!(!t("throughput>5000").holds(&f));
        assert!(t("throughput>=5000/s").holds(&f));
        assert_eq!(t("p99 < 2ms").to_string(), "p99<2ms");
    }

    #[test]
    fn a_threshold_that_does_not_parse_quotes_the_grammar_in_one_line() {
        for bad in [
            "p95<2ms",
            "p99<2",
            "p99<2min",
            "p99",
            "errors<x%",
            "latency<1ms",
            "p99=<1ms",
            "",
            "p99<-1ms",
        ] {
            let e = bad.parse::<Threshold>().unwrap_err().to_string();
            assert!(e.contains(GRAMMAR), "{bad}: {e}");
            assert!(!e.contains('\n'), "{bad}: one line");
        }
    }

    #[test]
    fn an_slo_is_a_latency_with_a_unit_else_one_line_with_the_grammar() {
        use crate::capacity::SLO_GRAMMAR;
        assert_eq!(parse_slo(Some("5ms")), Ok(5000.0));
        assert_eq!(parse_slo(Some("250us")), Ok(250.0));
        for bad in [None, Some("5"), Some("fast"), Some("0ms"), Some("-1ms")] {
            let e = parse_slo(bad).unwrap_err().to_string();
            assert!(e.contains(SLO_GRAMMAR), "{bad:?}: {e}");
            assert!(!e.contains('\n'), "{bad:?}: one line");
        }
    }

    #[test]
    fn a_breach_names_the_threshold_the_window_and_the_figure() {
        let l = latency(3100.0);
        let f = figures(&l, 100, 0, 10.0);
        let ts = [t("p99<2ms"), t("errors==0"), t("throughput>5000")];
        let lines: Vec<String> = judge_all(&ts, "grpc-java/1.83 echo c=8 rep 1", &f)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            lines,
            [
                "threshold p99<2ms breached: grpc-java/1.83 echo c=8 rep 1 p99 3.100 ms",
                "threshold throughput>5000 breached: grpc-java/1.83 echo c=8 rep 1 throughput 10 calls/s",
            ]
        );
    }
}
