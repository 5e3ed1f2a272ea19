//! Result tables, for the terminal and `summary.md`, rendered from
//! `results.json` alone so that any old snapshot can be re-rendered.
//!
//! One table per scenario, one row per aggregate (the repetitions of a cell
//! summarised): the median throughput with its order-statistic confidence
//! interval and CV, latency percentiles (medians over repetitions; the max
//! is the largest of all repetitions), cost, and flags. Scenarios of the `users` shape (seed 004) default to
//! JMeter's summary-report columns, so they read like the published table.

use rpclab_model::result::{Aggregate, Results};
use rpclab_model::spec::{Load, Shape};
use tabled::builder::Builder;

/// Which columns a table has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Throughput with its spread, latency percentiles, CPU cost per call.
    Standard,
    /// JMeter's summary report: Samples, KO, Error %, Average, Min, Max,
    /// 90th/95th/99th pct, Throughput, Received KB/s, Sent KB/s.
    Jmeter,
}

fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

/// The median throughput's confidence interval and its coverage
/// (`2948–5488 (75 %)`), or `-` with one repetition: there is no interval.
pub fn median_ci(a: &Aggregate) -> String {
    match a.throughput_ci {
        Some(ci) => format!(
            "{:.0}–{:.0} ({} %)",
            ci.low,
            ci.high,
            trim(ci.confidence * 100.0)
        ),
        None => "-".into(),
    }
}

/// The throughput CV with two decimals, or `-` with one repetition.
pub fn cv(a: &Aggregate) -> String {
    if a.repetitions > 1 {
        format!("{:.2} %", a.throughput_cv * 100.0)
    } else {
        "-".into()
    }
}

fn trim(p: f64) -> String {
    let s = format!("{p:.1}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |x| format!("{x:.1}"))
}

/// One cell of the standard table: its text, and the number it shows
/// (what a page sorts by; none for text and for a missing figure).
pub struct Figure {
    pub text: String,
    pub value: Option<f64>,
}

/// One column of the standard table.
pub struct Column {
    pub header: &'static str,
    /// Text (left-aligned) rather than a number.
    pub text: bool,
    /// Shown on the page only; the terminal's table is wide enough.
    pub page_only: bool,
    pub cell: fn(&Aggregate) -> Figure,
}

impl Column {
    const fn text(header: &'static str, cell: fn(&Aggregate) -> Figure) -> Column {
        Column {
            header,
            text: true,
            page_only: false,
            cell,
        }
    }

    const fn number(header: &'static str, cell: fn(&Aggregate) -> Figure) -> Column {
        Column {
            header,
            text: false,
            page_only: false,
            cell,
        }
    }

    const fn on_page_only(self) -> Column {
        Column {
            page_only: true,
            ..self
        }
    }
}

fn number(value: Option<f64>, text: String) -> Figure {
    Figure {
        text: if value.is_some() { text } else { "-".into() },
        value,
    }
}

fn words(text: String) -> Figure {
    Figure { text, value: None }
}

fn ms_figure(us: f64) -> Figure {
    number(Some(us / 1000.0), ms(us))
}

fn one_decimal(v: Option<f64>) -> Figure {
    number(v, opt(v))
}

/// Calls per server-core-second: 10⁶ / the server's CPU µs per call.
pub fn efficiency(a: &Aggregate) -> Option<f64> {
    a.server_cpu_us_per_call
        .filter(|us| *us > 0.0)
        .map(|us| 1e6 / us)
}

/// The standard table's columns, for the terminal, `summary.md` and the
/// page alike.
pub const STANDARD: &[Column] = &[
    Column::text("server", |a| words(a.server.clone())),
    Column::text("variant", |a| words(a.variant.clone())),
    Column::number("conc./rate", |a| {
        number(Some(a.concurrency.into()), a.concurrency.to_string())
    }),
    Column::number("reps", |a| {
        number(Some(a.repetitions.into()), a.repetitions.to_string())
    }),
    Column::number("calls/s", |a| {
        number(
            Some(a.throughput_median),
            format!("{:.0}", a.throughput_median),
        )
    }),
    Column::number("CI of median", |a| Figure {
        text: median_ci(a),
        value: a.throughput_ci.map(|c| c.low),
    }),
    Column::number("CV", |a| {
        number((a.repetitions > 1).then_some(a.throughput_cv), cv(a))
    }),
    Column::number("p50 ms", |a| ms_figure(a.latency_us.p50)),
    Column::number("p90 ms", |a| ms_figure(a.latency_us.p90)),
    Column::number("p99 ms", |a| ms_figure(a.latency_us.p99)),
    Column::number("p99.9 ms", |a| ms_figure(a.latency_us.p999)),
    Column::number("max ms", |a| ms_figure(a.latency_us.max)),
    Column::number("srv CPU µs/call", |a| {
        one_decimal(a.server_cpu_us_per_call)
    }),
    Column::number("cli CPU µs/call", |a| {
        one_decimal(a.client_cpu_us_per_call)
    }),
    Column::number("calls/srv core-s", |a| {
        number(
            efficiency(a),
            efficiency(a).map_or(String::new(), |v| format!("{v:.0}")),
        )
    })
    .on_page_only(),
    Column::number("B/call out", |a| {
        number(
            Some(a.bytes_sent_per_call),
            format!("{:.0}", a.bytes_sent_per_call),
        )
    }),
    Column::number("B/call in", |a| {
        number(
            Some(a.bytes_received_per_call),
            format!("{:.0}", a.bytes_received_per_call),
        )
    }),
    Column::text("flags", |a| words(a.flags.join("; "))),
];

fn standard_rows(aggs: &[&Aggregate]) -> Builder {
    let columns: Vec<&Column> = STANDARD.iter().filter(|c| !c.page_only).collect();
    let mut b = Builder::default();
    b.push_record(columns.iter().map(|c| c.header));
    for a in aggs {
        b.push_record(columns.iter().map(|c| (c.cell)(a).text));
    }
    b
}

fn jmeter_rows(aggs: &[&Aggregate]) -> Builder {
    let mut b = Builder::default();
    b.push_record([
        "Label",
        "# Samples",
        "KO",
        "Error %",
        "Average",
        "Min",
        "Max",
        "90th pct",
        "95th pct",
        "99th pct",
        "Throughput",
        "Received KB/sec",
        "Sent KB/sec",
    ]);
    for a in aggs {
        let samples = a.calls_ok + a.calls_failed;
        let kb =
            |bytes_per_call: f64| format!("{:.2}", bytes_per_call * a.throughput_median / 1024.0);
        b.push_record([
            format!("{} {} ({} users)", a.server, a.variant, a.concurrency),
            samples.to_string(),
            a.calls_failed.to_string(),
            format!(
                "{:.2}%",
                if samples == 0 {
                    0.0
                } else {
                    a.calls_failed as f64 * 100.0 / samples as f64
                }
            ),
            format!("{:.2}", a.latency_us.mean / 1000.0),
            ms(a.latency_us.min),
            ms(a.latency_us.max),
            format!("{:.2}", a.latency_us.p90 / 1000.0),
            format!("{:.2}", a.latency_us.p95 / 1000.0),
            format!("{:.2}", a.latency_us.p99 / 1000.0),
            format!("{:.2}", a.throughput_median),
            kb(a.bytes_received_per_call),
            kb(a.bytes_sent_per_call),
        ]);
    }
    b
}

/// All tables of a snapshot. `force` overrides each scenario's default layout.
pub fn render(results: &Results, markdown: bool, force: Option<Layout>) -> String {
    let mut scenarios: Vec<&str> = Vec::new();
    for a in &results.aggregates {
        if !scenarios.contains(&a.scenario.as_str()) {
            scenarios.push(&a.scenario);
        }
    }
    let mut out = String::new();
    for scenario in scenarios {
        let aggs: Vec<&Aggregate> = results
            .aggregates
            .iter()
            .filter(|a| a.scenario == scenario)
            .collect();
        let Some(cell) = results.cells.iter().find(|c| c.scenario == scenario) else {
            continue;
        };
        let users = matches!(&cell.report.load, Load::Closed(c) if c.shape == Shape::Users);
        let layout = force.unwrap_or(if users {
            Layout::Jmeter
        } else {
            Layout::Standard
        });
        let rows = match layout {
            Layout::Standard => standard_rows(&aggs),
            Layout::Jmeter => jmeter_rows(&aggs),
        };
        let table = crate::format::table(rows, markdown);
        out.push_str(&format!(
            "{}scenario {scenario}: {}, {}\n\n{table}\n\n",
            if markdown { "### " } else { "" },
            cell.report.called(),
            cell.report.load.describe(),
        ));
    }
    out
}
