//! A report in ghz's output formats (`-O`): its summary, its JSON report,
//! InfluxDB line protocol (`influx-summary`) and Prometheus text.
//!
//! The figures are the window's (rpclab's calls after the warm-up), in
//! ghz's units: nanoseconds in the JSON, InfluxDB and Prometheus outputs,
//! milliseconds in the summary. The formats that list every call (csv,
//! html, influx-details) are refused by the plan: the client keeps a
//! histogram, never a record per call.

use super::plan::{Labels, DISTRIBUTION};
use rpclab_model::exposition;
use rpclab_model::percentile::Percentile;
use rpclab_model::result::ClientReport;
use serde_json::{json, Value};
use std::fmt::Write;

/// The window's figures, as ghz names them (latencies in µs).
struct Figures {
    count: u64,
    total_s: f64,
    average_us: f64,
    fastest_us: f64,
    slowest_us: f64,
    rps: f64,
    /// (percent, µs) for each of [`DISTRIBUTION`] the report has.
    distribution: Vec<(u32, f64)>,
    /// (class, calls) of the failed calls, classes with calls only.
    failed: Vec<(&'static str, u64)>,
    errors: u64,
}

impl Figures {
    fn of(r: &ClientReport) -> Figures {
        let count = r.calls_ok + r.calls_failed;
        // ghz's names of rpclab's failure kinds, in `Failures::by_kind`'s order.
        let ghz = [
            "Timeout",
            "Connect",
            "IO",
            "Protocol",
            "ServerError",
            "WrongReply",
        ];
        let failed = ghz
            .into_iter()
            .zip(r.failures.by_kind())
            .map(|(name, (_, n))| (name, n))
            .filter(|(_, n)| *n > 0)
            .collect();
        Figures {
            count,
            total_s: r.duration_s,
            average_us: r.latency_us.mean,
            fastest_us: r.latency_us.min,
            slowest_us: r.latency_us.max,
            rps: if r.duration_s > 0.0 {
                count as f64 / r.duration_s
            } else {
                0.0
            },
            distribution: DISTRIBUTION
                .iter()
                .filter_map(|p| Some((*p, percentile_us(r, *p)?)))
                .collect(),
            failed,
            errors: r.calls_failed,
        }
    }

    fn at(&self, percent: u32) -> f64 {
        self.distribution
            .iter()
            .find(|(p, _)| *p == percent)
            .map_or(0.0, |(_, us)| *us)
    }
}

/// Percentile `p` of the report's latency, µs: kept by its figures, or
/// asked by the plan.
fn percentile_us(r: &ClientReport, p: u32) -> Option<f64> {
    let p: Percentile = p.to_string().parse().ok()?;
    r.latency_us
        .stored(p)
        .or_else(|| r.percentiles_us.get(&p).copied())
}

fn ns(us: f64) -> u64 {
    (us * 1e3).round() as u64
}

fn ms(us: f64) -> String {
    format!("{:.2} ms", us / 1e3)
}

/// ghz's summary: counts, times, the latency distribution, the calls by
/// outcome and each failure kind's first example; then what rpclab
/// verified.
pub fn summary(r: &ClientReport) -> String {
    let f = Figures::of(r);
    let mut out = String::new();
    let _ = writeln!(out, "\nSummary:");
    let _ = writeln!(out, "  Count:\t{}", f.count);
    let _ = writeln!(out, "  Total:\t{}", ms(f.total_s * 1e6));
    let _ = writeln!(out, "  Slowest:\t{}", ms(f.slowest_us));
    let _ = writeln!(out, "  Fastest:\t{}", ms(f.fastest_us));
    let _ = writeln!(out, "  Average:\t{}", ms(f.average_us));
    let _ = writeln!(out, "  Requests/sec:\t{:.2}", f.rps);
    let _ = writeln!(out, "\nLatency distribution:");
    for (p, us) in &f.distribution {
        let _ = writeln!(out, "  {p} % in {}", ms(*us));
    }
    let _ = writeln!(out, "\nStatus code distribution:");
    let _ = writeln!(out, "  [OK]   {} responses", r.calls_ok);
    for (class, n) in &f.failed {
        let _ = writeln!(out, "  [{class}]   {n} responses");
    }
    if !r.failures.examples.is_empty() {
        let _ = writeln!(out, "\nError distribution:");
        for (class, example) in &r.failures.examples {
            let _ = writeln!(out, "  [{class}]\t{example}");
        }
    }
    let compared = r.call.as_ref().is_some_and(|c| c.expected_reply);
    let _ = writeln!(
        out,
        "\nrpclab: every reply {} (latency {}); {}",
        if compared {
            "compared with --expect"
        } else {
            "decoded as the method's output type"
        },
        match r.load {
            rpclab_model::spec::Load::Open(_) => "from when each call was due",
            rpclab_model::spec::Load::Closed(_) => "from send to reply",
        },
        match &r.warmup {
            Some(w) => format!("after a warm-up of {} calls (--skipFirst)", w.calls),
            None => "every call counted, from the first".to_owned(),
        },
    );
    out
}

/// ghz's JSON report (`-O json`, `-O pretty`): its keys, durations in
/// nanoseconds; `rpclab` holds the client's whole report beside them.
pub fn json(r: &ClientReport, labels: &Labels) -> Value {
    let f = Figures::of(r);
    let start_ns = r
        .window_unix_s
        .map_or(0, |[start, _]| (start * 1e9) as i128);
    let date = rpclab_protocols::template::rfc3339(start_ns);
    let mut status = serde_json::Map::new();
    status.insert("OK".into(), json!(r.calls_ok));
    for (class, n) in &f.failed {
        status.insert((*class).into(), json!(n));
    }
    let errors: serde_json::Map<String, Value> = r
        .failures
        .examples
        .iter()
        .map(|(class, example)| (format!("{class}: {example}"), json!(failed_of(r, class))))
        .collect();
    json!({
        "name": labels.name,
        "endReason": "normal",
        "options": {
            "call": labels.call,
            "host": labels.host,
            "proto": labels.proto,
            "total": labels.n,
            "concurrency": labels.c,
            "connections": labels.connections,
            "rps": labels.rps,
            "duration": ns(labels.z_s * 1e6),
            "timeout": ns(labels.timeout_s * 1e6),
            "tags": labels.tags,
        },
        "date": String::from_utf8_lossy(&date),
        "count": f.count,
        "total": ns(f.total_s * 1e6),
        "average": ns(f.average_us),
        "fastest": ns(f.fastest_us),
        "slowest": ns(f.slowest_us),
        "rps": f.rps,
        "errorDistribution": errors,
        "statusCodeDistribution": status,
        "latencyDistribution": f.distribution.iter()
            .map(|(p, us)| json!({"percentage": p, "latency": ns(*us)}))
            .collect::<Vec<_>>(),
        "rpclab": r,
    })
}

/// How many calls failed of the kind an example is kept under.
fn failed_of(r: &ClientReport, kind: &str) -> u64 {
    r.failures
        .by_kind()
        .into_iter()
        .find(|(k, _)| *k == kind)
        .map_or(0, |(_, n)| n)
}

/// ghz's `influx-summary`: one point of measurement `ghz_run`, the run's
/// options as tags (empty ones left out: line protocol has no empty tag
/// value) and its figures as fields, at the window's start.
pub fn influx_summary(r: &ClientReport, labels: &Labels) -> String {
    let f = Figures::of(r);
    let mut tags: Vec<(String, String)> = vec![
        ("name".into(), labels.name.clone()),
        ("proto".into(), labels.proto.clone()),
        ("call".into(), labels.call.clone()),
        ("host".into(), labels.host.clone()),
        ("n".into(), labels.n.to_string()),
        ("c".into(), labels.c.to_string()),
        ("rps".into(), labels.rps.to_string()),
        ("z".into(), labels.z_s.to_string()),
        ("timeout".into(), labels.timeout_s.to_string()),
        ("connections".into(), labels.connections.to_string()),
        ("has_errors".into(), (f.errors > 0).to_string()),
    ];
    tags.extend(labels.tags.iter().map(|(k, v)| (k.clone(), v.clone())));
    let mut line = String::from("ghz_run");
    for (key, value) in tags.iter().filter(|(_, v)| !v.is_empty()) {
        let _ = write!(
            line,
            ",{}={}",
            exposition::influx_key(key),
            exposition::influx_key(value)
        );
    }
    let fields = [
        ("count", format!("{}i", f.count)),
        ("total", format!("{}i", ns(f.total_s * 1e6))),
        ("average", format!("{}i", ns(f.average_us))),
        ("fastest", format!("{}i", ns(f.fastest_us))),
        ("slowest", format!("{}i", ns(f.slowest_us))),
        ("rps", format!("{}", f.rps)),
        ("median", format!("{}i", ns(f.at(50)))),
        ("p95", format!("{}i", ns(f.at(95)))),
        ("errors", format!("{}i", f.errors)),
    ];
    let fields: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let at_ns = r
        .window_unix_s
        .map_or(0, |[start, _]| (start * 1e9) as u128);
    format!("{line} {} {at_ns}\n", fields.join(","))
}

/// ghz's `prometheus`: its gauges (count, total, average, fastest,
/// slowest, rps, errors) and the latency as a summary with the
/// distribution's quantiles, nanoseconds, labelled with the run's options.
pub fn prometheus(r: &ClientReport, labels: &Labels) -> String {
    let f = Figures::of(r);
    let (n, c, connections) = (
        labels.n.to_string(),
        labels.c.to_string(),
        labels.connections.to_string(),
    );
    let mut pairs: Vec<(&str, &str)> = vec![
        ("name", &labels.name),
        ("call", &labels.call),
        ("host", &labels.host),
        ("n", &n),
        ("c", &c),
        ("connections", &connections),
    ];
    pairs.extend(labels.tags.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let label_text = |extra: Option<(&str, &str)>| {
        exposition::prometheus_labels(pairs.iter().copied().chain(extra))
    };
    let mut out = String::new();
    let gauges = [
        (
            "ghz_run_count",
            "Calls completed in the window.",
            f.count as f64,
        ),
        (
            "ghz_run_total",
            "The window's length, ns.",
            (f.total_s * 1e9).round(),
        ),
        (
            "ghz_run_average",
            "Mean latency, ns.",
            ns(f.average_us) as f64,
        ),
        (
            "ghz_run_fastest",
            "Fastest call, ns.",
            ns(f.fastest_us) as f64,
        ),
        (
            "ghz_run_slowest",
            "Slowest call, ns.",
            ns(f.slowest_us) as f64,
        ),
        ("ghz_run_rps", "Calls per second.", f.rps),
        ("ghz_run_errors", "Failed calls.", f.errors as f64),
    ];
    for (name, help, value) in gauges {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} gauge");
        let _ = writeln!(out, "{name}{} {value}", label_text(None));
    }
    let name = "ghz_run_latency";
    let _ = writeln!(out, "# HELP {name} Latency of the successful calls, ns.");
    let _ = writeln!(out, "# TYPE {name} summary");
    for (p, us) in &f.distribution {
        let quantile = format!("{}", f64::from(*p) / 100.0);
        let _ = writeln!(
            out,
            "{name}{} {}",
            label_text(Some(("quantile", quantile.as_str()))),
            ns(*us)
        );
    }
    let _ = writeln!(
        out,
        "{name}_sum{} {}",
        label_text(None),
        (f.average_us * 1e3 * r.calls_ok as f64).round()
    );
    let _ = writeln!(out, "{name}_count{} {}", label_text(None), r.calls_ok);
    out
}
