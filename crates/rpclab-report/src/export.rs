//! A snapshot's figures in the formats continuous-benchmarking tools read
//! (`lab report <snapshot> --format ...`): bencher's BMF,
//! github-action-benchmark's custom JSON, plain CSV and JSON; and for
//! dashboards beside a service's own metrics, InfluxDB line protocol and
//! Prometheus text (both escaped by [`rpclab_model::exposition`]).
//!
//! Data in, text out: each aggregate (a server variant × scenario × level,
//! its repetitions summarised) gives one benchmark, named
//! `server/variant scenario c=N`, with two figures:
//!
//! * its **throughput**, the median over repetitions in calls/s, with its
//!   interval: the median's order-statistic interval where there is one
//!   (two repetitions or more), else the lowest and highest repetition
//!   (one repetition: the value itself);
//! * its **p99 latency**, the median over repetitions of each window's p99.
//!
//! github-action-benchmark judges a file by one tool, bigger or smaller is
//! better for every entry, so throughput and latency are two files:
//! `github-action-benchmark` (`customBiggerIsBetter`, calls/s) and
//! `github-action-benchmark-latency` (`customSmallerIsBetter`, ms).

use rpclab_model::exposition;
use rpclab_model::result::{Aggregate, Results};
use serde_json::{json, Map, Value};
use std::fmt;
use std::str::FromStr;

/// An export format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Bencher Metric Format: `{"<bench>": {"throughput": {...}, "latency": {...}}}`.
    Bmf,
    /// github-action-benchmark, `customBiggerIsBetter`: throughput entries.
    GithubActionBenchmark,
    /// github-action-benchmark, `customSmallerIsBetter`: p99 entries.
    GithubActionBenchmarkLatency,
    /// One row per benchmark, with a header.
    Csv,
    /// One object per benchmark.
    Json,
    /// InfluxDB line protocol: a point `rpclab` per benchmark, tagged with
    /// its server, variant, scenario and level, at its first window's start.
    Influx,
    /// Prometheus text: gauges `rpclab_throughput_calls_per_second`,
    /// `rpclab_latency_seconds` (by `percentile`) and `rpclab_calls_failed`.
    Prometheus,
}

/// Every format, by the name `--format` takes.
pub const FORMATS: [(&str, Format); 7] = [
    ("bmf", Format::Bmf),
    ("github-action-benchmark", Format::GithubActionBenchmark),
    (
        "github-action-benchmark-latency",
        Format::GithubActionBenchmarkLatency,
    ),
    ("csv", Format::Csv),
    ("json", Format::Json),
    ("influx", Format::Influx),
    ("prometheus", Format::Prometheus),
];

/// A `--format` that is none of [`FORMATS`].
#[derive(Debug)]
pub struct UnknownFormat(String);

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = FORMATS.iter().map(|(n, _)| *n).collect();
        write!(f, "unknown format `{}`; use {}", self.0, names.join(", "))
    }
}

impl std::error::Error for UnknownFormat {}

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        FORMATS
            .iter()
            .find(|(name, _)| *name == s)
            .map(|(_, f)| *f)
            .ok_or_else(|| UnknownFormat(s.to_owned()))
    }
}

/// One benchmark's exported figures.
struct Row<'a> {
    aggregate: &'a Aggregate,
    name: String,
    lower: f64,
    upper: f64,
}

fn rows(results: &Results) -> Vec<Row<'_>> {
    results
        .aggregates
        .iter()
        .map(|a| {
            let (lower, upper) = a
                .throughput_ci
                .map_or((a.throughput_min, a.throughput_max), |ci| (ci.low, ci.high));
            Row {
                aggregate: a,
                name: format!(
                    "{}/{} {} c={}",
                    a.server, a.variant, a.scenario, a.concurrency
                ),
                lower,
                upper,
            }
        })
        .collect()
}

/// `results` in `format`, ending with a newline.
pub fn export(results: &Results, format: Format) -> String {
    let rows = rows(results);
    let text = match format {
        Format::Bmf => pretty(bmf(&rows)),
        Format::GithubActionBenchmark => pretty(Value::Array(
            rows.iter()
                .map(|r| {
                    json!({
                        "name": r.name,
                        "unit": "calls/s",
                        "value": r.aggregate.throughput_median,
                        "range": format!("{:.0} .. {:.0}", r.lower, r.upper),
                    })
                })
                .collect(),
        )),
        Format::GithubActionBenchmarkLatency => pretty(Value::Array(
            rows.iter()
                .map(|r| {
                    json!({
                        "name": format!("{} p99", r.name),
                        "unit": "ms",
                        "value": r.aggregate.latency_us.p99 / 1e3,
                    })
                })
                .collect(),
        )),
        Format::Csv => csv(&rows),
        Format::Json => pretty(Value::Array(rows.iter().map(plain).collect())),
        Format::Influx => influx(results, &rows),
        Format::Prometheus => prometheus(&rows),
    };
    format!("{}\n", text.trim_end())
}

fn pretty(v: Value) -> String {
    serde_json::to_string_pretty(&v).expect("a JSON value serialises")
}

/// BMF: the measures `throughput` (calls/s, with its interval) and
/// `latency` (the p99, in ns, bencher's unit for it).
fn bmf(rows: &[Row<'_>]) -> Value {
    let mut benches = Map::new();
    for r in rows {
        benches.insert(
            r.name.clone(),
            json!({
                "throughput": {
                    "value": r.aggregate.throughput_median,
                    "lower_value": r.lower,
                    "upper_value": r.upper,
                },
                "latency": { "value": r.aggregate.latency_us.p99 * 1e3 },
            }),
        );
    }
    Value::Object(benches)
}

fn plain(r: &Row<'_>) -> Value {
    let a = r.aggregate;
    json!({
        "name": r.name,
        "server": a.server,
        "variant": a.variant,
        "scenario": a.scenario,
        "concurrency": a.concurrency,
        "repetitions": a.repetitions,
        "throughput_per_s": a.throughput_median,
        "throughput_lower": r.lower,
        "throughput_upper": r.upper,
        "p99_us": a.latency_us.p99,
    })
}

/// How an aggregate keeps one latency percentile, µs.
type LatencyOf = fn(&Aggregate) -> f64;

/// The latency percentiles the dashboards' formats carry, with how an
/// aggregate keeps each.
const PERCENTILES: [(&str, LatencyOf); 4] = [
    ("50", |a| a.latency_us.p50),
    ("90", |a| a.latency_us.p90),
    ("99", |a| a.latency_us.p99),
    ("99.9", |a| a.latency_us.p999),
];

/// A benchmark's tags (InfluxDB) or labels (Prometheus).
fn tags(a: &Aggregate) -> [(&'static str, String); 4] {
    [
        ("server", a.server.clone()),
        ("variant", a.variant.clone()),
        ("scenario", a.scenario.clone()),
        ("concurrency", a.concurrency.to_string()),
    ]
}

/// One point a benchmark, at the start of its first window (nanoseconds
/// since the Unix epoch; none when no cell kept its window).
fn influx(results: &Results, rows: &[Row<'_>]) -> String {
    let mut out = String::new();
    for r in rows {
        let a = r.aggregate;
        let mut line = String::from("rpclab");
        for (key, value) in tags(a).iter().filter(|(_, v)| !v.is_empty()) {
            line.push_str(&format!(",{key}={}", exposition::influx_key(value)));
        }
        let mut fields = vec![
            format!("throughput={}", a.throughput_median),
            format!("throughput_lower={}", r.lower),
            format!("throughput_upper={}", r.upper),
            format!("throughput_cv={}", a.throughput_cv),
            format!("repetitions={}i", a.repetitions),
            format!("calls_ok={}i", a.calls_ok),
            format!("calls_failed={}i", a.calls_failed),
        ];
        for (p, of) in PERCENTILES {
            fields.push(format!("p{}_us={}", p.replace('.', ""), of(a)));
        }
        for (name, figure) in [
            ("server_cpu_us_per_call", a.server_cpu_us_per_call),
            ("client_cpu_us_per_call", a.client_cpu_us_per_call),
        ] {
            if let Some(figure) = figure {
                fields.push(format!("{name}={figure}"));
            }
        }
        line.push(' ');
        line.push_str(&fields.join(","));
        let started = results
            .cells
            .iter()
            .filter(|c| c.key() == a.key())
            .filter_map(|c| c.report.window_unix_s.map(|[start, _]| start))
            .reduce(f64::min);
        if let Some(start) = started {
            line.push_str(&format!(" {}", (start * 1e9) as u128));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Each gauge with its help, every benchmark's value labelled.
fn prometheus(rows: &[Row<'_>]) -> String {
    let mut out = String::new();
    let mut gauge = |name: &str, help: &str, values: &mut dyn Iterator<Item = (String, f64)>| {
        out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} gauge\n"));
        for (labels, value) in values {
            out.push_str(&format!("{name}{labels} {value}\n"));
        }
    };
    let labelled = |a: &Aggregate, extra: Option<(&str, &str)>| {
        let tags = tags(a);
        exposition::prometheus_labels(tags.iter().map(|(k, v)| (*k, v.as_str())).chain(extra))
    };
    gauge(
        "rpclab_throughput_calls_per_second",
        "The median over repetitions of the calls per second.",
        &mut rows
            .iter()
            .map(|r| (labelled(r.aggregate, None), r.aggregate.throughput_median)),
    );
    gauge(
        "rpclab_latency_seconds",
        "The median over repetitions of each window's latency percentile.",
        &mut rows.iter().flat_map(|r| {
            PERCENTILES.iter().map(move |(p, of)| {
                (
                    labelled(r.aggregate, Some(("percentile", p))),
                    of(r.aggregate) / 1e6,
                )
            })
        }),
    );
    gauge(
        "rpclab_calls_failed",
        "Failed calls over every window of the benchmark.",
        &mut rows
            .iter()
            .map(|r| (labelled(r.aggregate, None), r.aggregate.calls_failed as f64)),
    );
    out
}

/// The CSV header; every row has these columns, in this order.
const CSV_HEADER: &str = "name,server,variant,scenario,concurrency,repetitions,throughput_per_s,throughput_lower,throughput_upper,p99_us";

fn csv(rows: &[Row<'_>]) -> String {
    let mut out = format!("{CSV_HEADER}\n");
    for r in rows {
        let a = r.aggregate;
        let line = [
            quoted(&r.name),
            quoted(&a.server),
            quoted(&a.variant),
            quoted(&a.scenario),
            a.concurrency.to_string(),
            a.repetitions.to_string(),
            format!("{:.1}", a.throughput_median),
            format!("{:.1}", r.lower),
            format!("{:.1}", r.upper),
            format!("{:.1}", a.latency_us.p99),
        ];
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

/// A CSV field, quoted when it must be (RFC 4180).
fn quoted(field: &str) -> String {
    if field.contains([',', '"', '\n']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::path::Path;

    /// A committed lab run: 22 aggregates of three repetitions each.
    fn committed() -> Results {
        let dir =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results/20261203T063645Z-vm-df511bd");
        let results = crate::snapshot::read_snapshot(&dir).unwrap();
        assert!(!results.aggregates.is_empty());
        results
    }

    fn keys(v: &Value) -> BTreeSet<&str> {
        v.as_object().unwrap().keys().map(String::as_str).collect()
    }

    fn set<'a>(names: &[&'a str]) -> BTreeSet<&'a str> {
        names.iter().copied().collect()
    }

    #[test]
    fn bmf_has_a_throughput_with_its_interval_and_a_latency_in_ns_per_benchmark() {
        let results = committed();
        let v: Value = serde_json::from_str(&export(&results, Format::Bmf)).unwrap();
        let benches = v.as_object().unwrap();
        assert_eq!(benches.len(), results.aggregates.len());
        for (name, bench) in benches {
            assert_eq!(keys(bench), set(&["throughput", "latency"]), "{name}");
            let t = &bench["throughput"];
            assert_eq!(keys(t), set(&["value", "lower_value", "upper_value"]));
            let (value, low, high) = (
                t["value"].as_f64().unwrap(),
                t["lower_value"].as_f64().unwrap(),
                t["upper_value"].as_f64().unwrap(),
            );
            assert!(
                low <= value && value <= high,
                "{name}: {low} {value} {high}"
            );
            assert_eq!(keys(&bench["latency"]), set(&["value"]));
        }
        let a = &results.aggregates[0];
        let name = format!(
            "{}/{} {} c={}",
            a.server, a.variant, a.scenario, a.concurrency
        );
        assert_eq!(
            benches[&name]["latency"]["value"].as_f64().unwrap(),
            a.latency_us.p99 * 1e3
        );
    }

    #[test]
    fn github_action_benchmark_files_have_exactly_its_custom_keys() {
        let results = committed();
        for (format, expected, unit) in [
            (
                Format::GithubActionBenchmark,
                set(&["name", "unit", "value", "range"]),
                "calls/s",
            ),
            (
                Format::GithubActionBenchmarkLatency,
                set(&["name", "unit", "value"]),
                "ms",
            ),
        ] {
            let v: Value = serde_json::from_str(&export(&results, format)).unwrap();
            let entries = v.as_array().unwrap();
            assert_eq!(entries.len(), results.aggregates.len());
            for e in entries {
                assert_eq!(keys(e), expected);
                assert_eq!(e["unit"], unit);
                assert!(e["name"].is_string() && e["value"].is_f64());
            }
        }
    }

    #[test]
    fn csv_and_json_give_one_row_per_benchmark_with_the_same_columns() {
        let results = committed();
        let csv = export(&results, Format::Csv);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(lines.len(), results.aggregates.len() + 1);
        let columns = CSV_HEADER.split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == columns));
        let v: Value = serde_json::from_str(&export(&results, Format::Json)).unwrap();
        for row in v.as_array().unwrap() {
            assert_eq!(keys(row), CSV_HEADER.split(',').collect());
        }
    }

    #[test]
    fn influx_line_protocol_parses_with_influxdbs_own_parser_one_point_a_benchmark() {
        let results = committed();
        let text = export(&results, Format::Influx);
        let points: Vec<_> = influxdb_line_protocol::parse_lines(text.trim_end())
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{e}:\n{text}"));
        assert_eq!(points.len(), results.aggregates.len());
        for (point, a) in points.iter().zip(&results.aggregates) {
            assert_eq!(point.series.measurement.to_string(), "rpclab");
            let tags: Vec<(String, String)> = point
                .series
                .tag_set
                .iter()
                .flatten()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            assert!(
                tags.contains(&("server".into(), a.server.clone())),
                "{tags:?}"
            );
            assert!(tags.contains(&("concurrency".into(), a.concurrency.to_string())));
            let field = |name: &str| {
                point
                    .field_set
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
                    .unwrap_or_else(|| panic!("no {name}"))
            };
            assert_eq!(field("throughput"), a.throughput_median.to_string());
            assert_eq!(field("calls_ok"), format!("{}i", a.calls_ok));
            assert!(point.timestamp.is_some_and(|t| t > 0));
        }
    }

    #[test]
    fn prometheus_text_parses_with_a_prometheus_parser_every_gauge_labelled() {
        let results = committed();
        let text = export(&results, Format::Prometheus);
        let scrape =
            prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
        let n = results.aggregates.len();
        let of = |metric: &str| scrape.samples.iter().filter(|s| s.metric == metric).count();
        assert_eq!(of("rpclab_throughput_calls_per_second"), n);
        assert_eq!(of("rpclab_latency_seconds"), 4 * n);
        assert_eq!(of("rpclab_calls_failed"), n);
        let a = &results.aggregates[0];
        let sample = scrape
            .samples
            .iter()
            .find(|s| {
                s.metric == "rpclab_latency_seconds"
                    && s.labels.get("server") == Some(a.server.as_str())
                    && s.labels.get("variant") == Some(a.variant.as_str())
                    && s.labels.get("scenario") == Some(a.scenario.as_str())
                    && s.labels.get("concurrency") == Some(a.concurrency.to_string().as_str())
                    && s.labels.get("percentile") == Some("99")
            })
            .unwrap();
        assert!(
            matches!(sample.value, prometheus_parse::Value::Gauge(v) if (v - a.latency_us.p99 / 1e6).abs() < 1e-12),
            "{:?}",
            sample.value
        );
    }

    #[test]
    fn formats_read_by_name_and_an_unknown_one_lists_them() {
        for (name, format) in FORMATS {
            assert_eq!(name.parse::<Format>().unwrap(), format);
        }
        let e = "xml".parse::<Format>().unwrap_err().to_string();
        assert!(e.contains("bmf, github-action-benchmark"), "{e}");
    }
}
