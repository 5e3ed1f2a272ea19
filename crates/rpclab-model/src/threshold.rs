//! Thresholds that fail a run, as k6 has them: `p99<2ms`, k6's own
//! `p(95)<200ms`, `avg<1ms`, `errors<0.1%`, `rate>5000`.
//!
//! A threshold is a limit every measured window must hold, so that CI can
//! gate on a run without reading its numbers. `rpclab-client` judges its
//! one window, `lab run` each of its cells (every repetition); a breach is
//! one line naming the threshold, the cell and the figure, and the process
//! exits with [`BREACH_EXIT_CODE`] (99, k6's code), apart from 1 (any
//! other error) and `lab compare`'s 3 (a regression).
//!
//! This is the one reader of thresholds; its percentiles are
//! [`crate::percentile::Percentile`], the type `lab capacity --percentile`
//! reads too. The grammar, which a threshold that does not parse quotes in
//! full ([`GRAMMAR`]): `METRIC OP VALUE`, OP one of `< <= > >= == != ===`
//! (k6's; `===` is `==`), METRIC one of
//!
//! * a latency: `pN` or k6's `p(N)` (any percentile from 0 to 100, `p999`
//!   being 99.9), `avg`, `med` (p50), `min`, `max`; VALUE a duration with
//!   its unit (`2ms`; [`crate::duration`]). k6 reads a bare number as ms; here the
//!   unit is required, so that `p(95)<200` is never read in the wrong unit;
//! * `errors`: VALUE with `%`, the failed calls' share of all calls
//!   (`errors<1%`); without, their count (`errors==0`);
//! * `errors.rate`: the same share as a fraction, as k6 writes a Rate
//!   metric (`errors.rate<0.01` is `errors<1%`);
//! * `rate` (k6's rate of a Counter, calls per second) or `throughput`:
//!   the window's successful calls per second (`rate>1000`, `/s` allowed).
//!
//! A percentile other than those every report keeps (`Latency::stored`)
//! is measured because it is asked: [`Threshold::percentile`] is added to
//! the cell's `CellSpec::percentiles`, and the client reports it from the
//! window's histogram.

pub use crate::breach::{Breach, ThresholdCheck};
use crate::capacity::BadSlo;
use crate::duration::non_negative as number;
use crate::percentile::Percentile;
use crate::result::{Cell, ClientReport, Latency};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// The exit code of a run that breached a threshold (k6's).
pub const BREACH_EXIT_CODE: i32 = 99;

/// The grammar in one line, quoted by every parse error.
pub const GRAMMAR: &str = "a threshold is METRIC OP VALUE with OP <|<=|>|>=|==|!=: a latency pN or p(N) (any percentile 0-100), avg, med, min or max, VALUE with a unit ns|us|ms|s|m|h (p99<2ms, p(95)<200ms, avg<1ms); errors in % of calls or as a count (errors<1%, errors==0); errors.rate as a fraction (errors.rate<0.01); rate or throughput in calls/s (rate>1000)";

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
    /// A latency percentile (`min` and `max` are p0 and p100), µs.
    Latency(Percentile),
    /// The mean latency, µs.
    Mean,
    /// The failed calls' share of all calls.
    ErrorShare,
    /// The number of failed calls.
    ErrorCount,
    /// Successful calls per second.
    Throughput,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// A threshold that does not parse: what was written, and the grammar.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot read threshold `{0}`: {grammar}", grammar = GRAMMAR)]
pub struct BadThreshold(pub String);

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
    let at = compact.find(['<', '>', '=', '!'])?;
    let (name, rest) = compact.split_at(at);
    let (op, value) = [
        ("===", Op::Eq),
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("==", Op::Eq),
        ("!=", Op::Ne),
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
        "errors.rate" => (Metric::ErrorShare, number(value).filter(|v| *v <= 1.0)?),
        "rate" | "throughput" => (
            Metric::Throughput,
            number(value.strip_suffix("/s").unwrap_or(value))?,
        ),
        "avg" => (Metric::Mean, micros(value)?),
        _ => (Metric::Latency(latency(name)?), micros(value)?),
    };
    Some(Threshold {
        text: compact,
        metric,
        op,
        bound,
    })
}

/// A latency metric's name: `pN`, `p(N)`, `med`, `min`, `max`.
fn latency(name: &str) -> Option<Percentile> {
    match name {
        "med" => Some(Percentile::P50),
        "min" => Some(Percentile::MIN),
        "max" => Some(Percentile::MAX),
        _ if name.starts_with('p') => name.parse().ok(),
        _ => None,
    }
}

/// A duration with its unit (`2ms`, `500us`), in µs; the unit is required.
/// The thresholds' latencies and `lab capacity`'s SLO ([`parse_slo`])
/// read with it: the one duration syntax ([`crate::duration`]).
pub fn micros(text: &str) -> Option<f64> {
    crate::duration::with_unit(text).map(|s| s * 1e6)
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

/// The percentiles `thresholds` judge that a report does not keep unless
/// its cell asks for them (`CellSpec::percentiles`), each once.
pub fn extra_percentiles(thresholds: &[Threshold]) -> Vec<Percentile> {
    let mut asked: Vec<Percentile> = thresholds
        .iter()
        .filter_map(Threshold::percentile)
        .filter(|p| Latency::default().stored(*p).is_none())
        .collect();
    asked.sort();
    asked.dedup();
    asked
}

/// The figures of one window that a threshold can judge.
#[derive(Clone, Copy, Debug)]
pub struct Figures<'a> {
    /// The window's latencies that every report keeps.
    pub latency_us: &'a Latency,
    /// The percentiles its cell asked for beyond them
    /// (`ClientReport::percentiles_us`).
    pub percentiles_us: &'a BTreeMap<Percentile, f64>,
    pub calls_ok: u64,
    pub calls_failed: u64,
    pub throughput_per_s: f64,
}

impl<'a> Figures<'a> {
    /// A client's report of its window.
    pub fn of_report(r: &'a ClientReport) -> Figures<'a> {
        Figures {
            latency_us: &r.latency_us,
            percentiles_us: &r.percentiles_us,
            calls_ok: r.calls_ok,
            calls_failed: r.calls_failed,
            throughput_per_s: r.throughput_per_s,
        }
    }

    /// One cell of a snapshot (one repetition).
    pub fn of_cell(c: &'a Cell) -> Figures<'a> {
        Figures {
            latency_us: &c.latency_us,
            percentiles_us: &c.report.percentiles_us,
            calls_ok: c.calls_ok,
            calls_failed: c.calls_failed,
            throughput_per_s: c.throughput_per_s,
        }
    }
}

impl Threshold {
    /// The latency percentile this threshold judges, if it judges one.
    pub fn percentile(&self) -> Option<Percentile> {
        match self.metric {
            Metric::Latency(p) => Some(p),
            _ => None,
        }
    }

    /// The figure this threshold judges in `figures`, in its own unit;
    /// `None`: a percentile the window's report does not have (a snapshot
    /// whose cells were not asked for it).
    fn observed(&self, figures: &Figures<'_>) -> Option<f64> {
        Some(match self.metric {
            Metric::Latency(p) => figures
                .latency_us
                .stored(p)
                .or_else(|| figures.percentiles_us.get(&p).copied())?,
            Metric::Mean => figures.latency_us.mean,
            Metric::ErrorShare => {
                let all = figures.calls_ok + figures.calls_failed;
                figures.calls_failed as f64 / all.max(1) as f64
            }
            Metric::ErrorCount => figures.calls_failed as f64,
            Metric::Throughput => figures.throughput_per_s,
        })
    }

    /// Whether `figures` hold this threshold; a percentile that was not
    /// measured does not hold (a gate never passes on a figure it lacks).
    pub fn holds(&self, figures: &Figures<'_>) -> bool {
        let Some(v) = self.observed(figures) else {
            return false;
        };
        let b = self.bound;
        match self.op {
            Op::Lt => v < b,
            Op::Le => v <= b,
            Op::Gt => v > b,
            Op::Ge => v >= b,
            Op::Eq => v == b,
            Op::Ne => v != b,
        }
    }

    /// The figure judged, as a breach line shows it: `p99 3.1 ms`.
    fn describe(&self, figures: &Figures<'_>) -> String {
        let Some(v) = self.observed(figures) else {
            let p = self
                .percentile()
                .map_or_else(String::new, |p| p.to_string());
            return format!("{p} not measured (the cell was not asked for it)");
        };
        let duration = |name: String| {
            if v >= 1e6 {
                format!("{name} {:.3} s", v / 1e6)
            } else if v >= 1e3 {
                format!("{name} {:.3} ms", v / 1e3)
            } else {
                format!("{name} {v:.1} us")
            }
        };
        match self.metric {
            Metric::Latency(Percentile::MAX) => duration("max".into()),
            Metric::Latency(Percentile::MIN) => duration("min".into()),
            Metric::Latency(p) => duration(p.to_string()),
            Metric::Mean => duration("avg".into()),
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
#[derive(Debug, thiserror::Error)]
#[error("{0} threshold breach(es); exit code {code}", code = BREACH_EXIT_CODE)]
pub struct Breached(pub usize);

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
    use crate::testing::refused_in_one_line;

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

    const NONE: &BTreeMap<Percentile, f64> = &BTreeMap::new();

    fn figures(l: &Latency, ok: u64, failed: u64, throughput: f64) -> Figures<'_> {
        Figures {
            latency_us: l,
            percentiles_us: NONE,
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
    fn k6s_forms_read_as_k6_means_them() {
        let l = latency(3100.0);
        let f = figures(&l, 9900, 100, 5000.0);
        assert!(t("p(95)<5ms").holds(&f), "p95 is 4 us");
        assert!(t("p(95) < 4.001us").holds(&f));
        assert!(!t("p(99)<3ms").holds(&f));
        assert!(t("p(99.9)<=6.2ms").holds(&f));
        assert!(t("avg<3us").holds(&f), "the mean is 2 us");
        assert!(!t("avg<2us").holds(&f));
        assert!(t("med<=2us").holds(&f));
        assert!(t("min>=1us").holds(&f));
        assert!(t("max<10ms").holds(&f));
        assert!(!t("max<9ms").holds(&f));
        assert!(t("errors<=1%").holds(&f), "100 of 10000");
        assert!(t("errors.rate<=0.01").holds(&f));
        assert!(!t("errors.rate<0.01").holds(&f));
        assert!(t("rate>1000").holds(&f));
        assert!(t("rate>=5000/s").holds(&f));
        assert!(t("errors!=0").holds(&f));
        assert!(!t("errors===0").holds(&f));
        assert_eq!(t("p(97.5)<1ms").percentile().unwrap().to_string(), "p97.5");
        assert_eq!(t("med<1ms").percentile(), Some(Percentile::P50));
    }

    #[test]
    fn any_percentile_is_judged_from_what_its_cell_was_asked_to_measure() {
        let l = latency(3100.0);
        let ts = [
            t("p(97.5)<3ms"),
            t("p99<5ms"),
            t("p(99.99)<1s"),
            t("p(99.99)<2s"),
        ];
        assert_eq!(
            extra_percentiles(&ts),
            [
                "97.5".parse::<Percentile>().unwrap(),
                "99.99".parse().unwrap()
            ],
            "each once, and none a report keeps anyway"
        );
        let measured = BTreeMap::from([("97.5".parse::<Percentile>().unwrap(), 2500.0)]);
        let f = Figures {
            percentiles_us: &measured,
            ..figures(&l, 10, 0, 1.0)
        };
        assert!(t("p(97.5)<3ms").holds(&f));
        assert!(!t("p(97.5)<2ms").holds(&f));
        assert!(!t("p(97.4)<1s").holds(&f), "not measured: not held");
        let breach = t("p(97.4)<1s").judge("cell", &f).unwrap().to_string();
        assert!(
            breach.ends_with("cell p97.4 not measured (the cell was not asked for it)"),
            "{breach}"
        );
    }

    #[test]
    fn a_threshold_that_does_not_parse_quotes_the_grammar_in_one_line() {
        let bad = [
            "p(95)<200",
            "p(101)<2ms",
            "p()<2ms",
            "avg<2",
            "rate>fast",
            "errors.rate<2",
            "mean<1ms",
            "p99<2",
            "p99<2min",
            "p99",
            "errors<x%",
            "latency<1ms",
            "p99=<1ms",
            "",
            "p99<-1ms",
        ];
        refused_in_one_line(bad, str::parse::<Threshold>, GRAMMAR);
    }

    #[test]
    fn an_slo_is_a_latency_with_a_unit_else_one_line_with_the_grammar() {
        use crate::capacity::SLO_GRAMMAR;
        assert_eq!(parse_slo(Some("5ms")), Ok(5000.0));
        assert_eq!(parse_slo(Some("250us")), Ok(250.0));
        let bad = [None, Some("5"), Some("fast"), Some("0ms"), Some("-1ms")];
        refused_in_one_line(bad, parse_slo, SLO_GRAMMAR);
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
