//! A snapshot's figures in the formats continuous-benchmarking tools read
//! (`lab report <snapshot> --format ...`): bencher's BMF,
//! github-action-benchmark's custom JSON, and plain CSV and JSON.
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
}

/// Every format, by the name `--format` takes.
pub const FORMATS: [(&str, Format); 5] = [
    ("bmf", Format::Bmf),
    ("github-action-benchmark", Format::GithubActionBenchmark),
    (
        "github-action-benchmark-latency",
        Format::GithubActionBenchmarkLatency,
    ),
    ("csv", Format::Csv),
    ("json", Format::Json),
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
    fn formats_read_by_name_and_an_unknown_one_lists_them() {
        for (name, format) in FORMATS {
            assert_eq!(name.parse::<Format>().unwrap(), format);
        }
        let e = "xml".parse::<Format>().unwrap_err().to_string();
        assert!(e.contains("bmf, github-action-benchmark"), "{e}");
    }
}
