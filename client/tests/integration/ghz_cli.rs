//! End-to-end: ghz's documented command lines, run as they are by
//! `rpclab-client ghz`, against the gRPC fixture (`fixtures/grpc-shop`, in
//! a container): each runs, every call answered and decoded, or is refused
//! in one line that says why.
//!
//! The lines are ghz's own, from its docs (www/docs/examples.md, load.md,
//! concurrency.md and options.md of ghz v0.121), written below as this
//! test's data. Only what names ghz's example service changes, through
//! placeholders: `{proto}`, `{call}` (a unary, client- or server-streaming
//! method of the fixture), `{data}` and `{host}`; and `-n 10000` is
//! `-n 200`, so that a rated run takes seconds, not minutes. A line
//! without `--insecure` is TLS, as in ghz: it runs against the fixture
//! serving TLS, its CA given as the system's roots (`SSL_CERT_FILE`).
//!
//! The outputs ghz writes for other programs (`-O json`, `influx-summary`,
//! `prometheus`) are read back with real parsers. Nothing here is timed.

use crate::common;

use common::certs::certificates;
use common::cli;
use common::fixture;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// What a documented line must do here.
enum Outcome {
    /// Run: exit 0, every call successful; the summary's count is this
    /// (`None`: a rate decides it).
    Runs(Option<u64>),
    /// Be refused before any load, in one line that starts so.
    Refused(&'static str),
}

/// Which of the fixture's methods stands for the example's.
#[derive(Clone, Copy)]
enum Method {
    Unary,
    ClientStream,
    ServerStream,
}

/// ghz's documented command lines, in its docs' order.
const LINES: &[(&str, Method, Outcome, &str)] = &[
    (
        "examples.md: a simple insecure unary call",
        Method::Unary,
        Outcome::Runs(Some(200)),
        "ghz --insecure \
           --proto {proto} \
           --call {call} \
           -d '{data}' \
           {host}",
    ),
    (
        "examples.md: server reflection",
        Method::Unary,
        Outcome::Runs(Some(200)),
        "ghz --insecure --call {call} -d '{data}' {host}",
    ),
    (
        "examples.md: metadata using template variables",
        Method::Unary,
        Outcome::Runs(Some(200)),
        "ghz --insecure \
           --proto {proto} \
           --call {call} \
           -d '{data}' \
           -m '{\"trace_id\":\"{{.RequestNumber}}\", \"timestamp\":\"{{.TimestampUnix}}\"}' \
           {host}",
    ),
    (
        "examples.md: binary data",
        Method::Unary,
        Outcome::Refused("-b/-B: binary requests are not read"),
        "ghz --proto {proto} --call {call} -B ./hello_request_data.bin {host}",
    ),
    (
        "examples.md: binary fields, base64 in the JSON (TLS)",
        Method::Unary,
        Outcome::Runs(Some(1)),
        "ghz --proto {proto} --call {call} -d '{data}' -c 1 -n 1 {host}",
    ),
    (
        "examples.md: variable data for unary calls",
        Method::Unary,
        Outcome::Runs(Some(200)),
        "ghz --insecure \
           --proto {proto} \
           --call {call} \
           -d '[{data},{data}]' \
           {host}",
    ),
    (
        "examples.md: custom number of requests and concurrency (TLS)",
        Method::Unary,
        Outcome::Runs(Some(2000)),
        "ghz --proto {proto} --call {call} -d '{data}' -n 2000 -c 20 {host}",
    ),
    (
        "examples.md: custom number of connections (TLS)",
        Method::Unary,
        Outcome::Runs(Some(2000)),
        "ghz --proto {proto} --call {call} -d '{data}' -n 2000 -c 20 --connections=10 {host}",
    ),
    (
        "examples.md: client streaming data as an array (TLS)",
        Method::ClientStream,
        Outcome::Runs(Some(200)),
        "ghz --proto {proto} --call {call} -d '[{data},{data},{data}]' {host}",
    ),
    (
        "examples.md: protoset (TLS)",
        Method::Unary,
        Outcome::Runs(Some(1000)),
        "ghz --protoset {protoset} --call {call} -d '{data}' -n 1000 -c 10 {host}",
    ),
    (
        "examples.md: config file",
        Method::Unary,
        Outcome::Refused("--config: ghz's config files are not read"),
        "ghz --config ./config.json",
    ),
    (
        "examples.md: config file and flags",
        Method::Unary,
        Outcome::Refused("--config: ghz's config files are not read"),
        "ghz --config ./config.json -c 20 -n 1000",
    ),
    (
        "examples.md: debug logging",
        Method::Unary,
        Outcome::Refused("--debug: there is no debug log"),
        "ghz --insecure \
           --proto {proto} \
           --call {call} \
           -d '{data}' -c 5 -n 50 -m '{\"request-id\":\"{{.RequestNumber}}\", \"timestamp\":\"{{.TimestampUnix}}\"}' \
           --debug ./logs/debug.json \
           {host}",
    ),
    (
        "examples.md: client streaming with metadata",
        Method::ClientStream,
        Outcome::Runs(Some(200)),
        "ghz --insecure \
           --proto {proto} \
           --call {call} \
           -d '[{data},{data},{data},{data}]' \
           -m '{\"trace_id\":\"{{.RequestNumber}}\", \"timestamp\":\"{{.TimestampUnixNano}}\"}' \
           {host}",
    ),
    (
        "examples.md: server streaming with metadata",
        Method::ServerStream,
        Outcome::Runs(Some(200)),
        "ghz --insecure \
           --proto {proto} \
           --call {call} \
           -d '{data}' \
           -m '{\"trace_id\":\"{{.RequestNumber}}\", \"timestamp\":\"{{.TimestampUnixNano}}\"}' \
           {host}",
    ),
    (
        "load.md: constant rate, -n 10000 as -n 200",
        Method::Unary,
        Outcome::Runs(None),
        "ghz --insecure --async \
           --proto {proto} \
           --call {call} \
           -c 10 -n 200 --rps 200 \
           -d '{data}' {host}",
    ),
    (
        "load.md: step up to an end, -n 10000 as -n 200",
        Method::Unary,
        Outcome::Runs(None),
        "ghz --insecure --async --proto {proto} \
           --call {call} \
           -c 10 -n 200 \
           --load-schedule=step --load-start=50 --load-end=150 --load-step=10 --load-step-duration=5s \
           -d '{data}' {host}",
    ),
    (
        "load.md: step down for at most 40 s, -n 10000 as -n 200",
        Method::Unary,
        Outcome::Runs(None),
        "ghz --insecure --async --proto {proto} \
           --call {call} \
           -c 10 -n 200 \
           --load-schedule=step --load-start=200 --load-step=-10 --load-step-duration=5s --load-max-duration=40s \
           -d '{data}' {host}",
    ),
    (
        "load.md: a line up, -n 10000 as -n 200",
        Method::Unary,
        Outcome::Runs(None),
        "ghz --insecure --async --proto {proto} \
           --call {call} \
           -c 10 -n 200 \
           --load-schedule=line --load-start=5 --load-step=5 \
           -d '{data}' {host}",
    ),
    (
        "load.md: a line down to an end, -n 10000 as -n 200",
        Method::Unary,
        Outcome::Runs(None),
        "ghz --insecure --async --proto {proto} \
           --call {call} \
           -c 10 -n 200 \
           --load-schedule=line --load-start=200 --load-step=-2 --load-end=100 \
           -d '{data}' {host}",
    ),
    (
        "concurrency.md: step up concurrency",
        Method::Unary,
        Outcome::Refused("--concurrency-schedule: a window keeps its workers"),
        "ghz --insecure --async --proto {proto} \
           --call {call} \
           -n 10000 --rps 200 \
           --concurrency-schedule=step --concurrency-start=5 --concurrency-step=5 --concurrency-end=50 --concurrency-step-duration=5s \
           -d '{data}' {host}",
    ),
    (
        "options.md: --stream-dynamic-messages with a template function",
        Method::ClientStream,
        Outcome::Runs(Some(200)),
        "ghz --insecure --proto {proto} --call {call} \
           --stream-dynamic-messages=true --stream-call-count=5 -d '{named}' {host}",
    ),
];

/// The fixture's request: one apple line, the worker's number in its id
/// (load.md's `{{.WorkerID}}`).
const DATA: &str = r#"{"requestId":"w-{{.WorkerID}}","items":[{"sku":"apple","quantity":3,"price":{"currency":"EUR","units":2}}]}"#;

/// A server stream's request: three slots, three messages.
const WATCH: &str = r#"{"requestId":"w-{{.WorkerID}}","slots":[1,2,3],"items":[{"sku":"apple","quantity":3,"price":{"currency":"EUR","units":2}}]}"#;

/// options.md's `{"name":"{{randomString 8 }}"}`, for the fixture.
const NAMED: &str = r#"{"requestId":"{{randomString 8 }}","items":[{"sku":"apple","quantity":1,"price":{"currency":"EUR","units":1}}]}"#;

fn proto_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/grpc-shop/proto")
}

/// A documented line's words, its placeholders filled in: a shell's
/// quoting (single and double quotes, backslash escapes in double ones)
/// and line continuations, nothing more.
fn words(line: &str, method: Method, host: &str, protoset: &Path) -> Vec<String> {
    let (call, data) = match method {
        Method::Unary => ("shop.v1.Inventory.Reserve", DATA),
        Method::ClientStream => ("shop.v1.Inventory.ReserveAll", DATA),
        Method::ServerStream => ("shop.v1.Inventory/Watch", WATCH),
    };
    let line = line
        .replace("{proto}", "shop/v1/inventory.proto")
        .replace("{protoset}", protoset.to_str().unwrap())
        .replace("{call}", call)
        .replace("{data}", data)
        .replace("{named}", NAMED)
        .replace("{host}", host);
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    w.push(c);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => w.extend(chars.next()),
                        c => w.push(c),
                    }
                }
            }
            c if c.is_whitespace() => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    assert_eq!(words.first().map(String::as_str), Some("ghz"), "{line}");
    words.remove(0);
    words
}

/// `rpclab-client ghz <words>` from the proto root (ghz looks for a
/// proto's imports in the current folder too), with `ca` as the system's
/// roots.
fn ghz(words: &[String], ca: &Path) -> Output {
    cli::client()
        .arg("ghz")
        .args(words)
        .current_dir(proto_root())
        .env("SSL_CERT_FILE", ca)
        .output()
        .expect("rpclab-client starts")
}

/// The count, and the calls by status, of ghz's summary.
fn summary_counts(text: &str) -> (u64, Vec<(String, u64)>) {
    let count = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Count:"))
        .unwrap_or_else(|| panic!("no count in:\n{text}"))
        .trim()
        .parse()
        .unwrap();
    let statuses = text
        .lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix('[')?;
            let (status, rest) = l.split_once(']')?;
            let n = rest.trim().strip_suffix("responses")?.trim().parse().ok()?;
            Some((status.to_owned(), n))
        })
        .collect();
    (count, statuses)
}

#[test]
fn ghzs_documented_command_lines_run_or_are_refused_in_one_line() {
    let scratch = fixture::scratch();
    let certs = certificates(&scratch);
    let ca = certs.join("ca.pem");
    let protoset = scratch.join("ghz-shop.protoset");
    let written = std::process::Command::new(fixture::binary("grpc-shop"))
        .arg("--write-protoset")
        .arg(&protoset)
        .status()
        .unwrap();
    assert!(written.success());
    let plain = fixture::start("grpc-shop", &[], None);
    let tls = fixture::start(
        "grpc-shop",
        &[
            "--tls-cert",
            "/certs/server.pem",
            "--tls-key",
            "/certs/server.key",
        ],
        Some(&certs),
    );
    for (source, method, outcome, line) in LINES {
        let secure = !line.contains("--insecure");
        let host = if secure { &tls.target } else { &plain.target };
        let words = words(line, *method, host, &protoset);
        let out = ghz(&words, &ca);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        match outcome {
            Outcome::Runs(expected) => {
                assert!(
                    out.status.success(),
                    "{source}: {words:?} failed:\n{stdout}\n{stderr}"
                );
                let (count, statuses) = summary_counts(&stdout);
                assert_eq!(statuses.len(), 1, "{source}: not all OK:\n{stdout}");
                assert_eq!(statuses[0], ("OK".to_owned(), count), "{source}:\n{stdout}");
                match expected {
                    Some(n) => assert_eq!(count, *n, "{source}:\n{stdout}"),
                    None => assert!(count > 0, "{source}:\n{stdout}"),
                }
                assert!(
                    stdout.contains("every reply decoded as the method's output type"),
                    "{source}:\n{stdout}"
                );
            }
            Outcome::Refused(start) => {
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                let line = cli::refusal(out, &words);
                assert!(line.contains(start), "{source}: {line}");
            }
        }
    }
}

#[test]
fn json_influx_and_prometheus_outputs_parse_with_real_parsers() {
    let shop = fixture::start("grpc-shop", &[], None);
    let scratch = fixture::scratch();
    let base = "ghz --insecure --call {call} -d '{data}' -n 120 -c 4 --connections 2 \
                --name shop --tags '{\"env\":\"ci\",\"created by\":\"rpclab test\"}'";
    let run = |format: &str| -> String {
        let file = scratch.join(format!("ghz.{format}"));
        let line = format!("{base} -O {format} -o {} {{host}}", file.display());
        let out = ghz(
            &words(&line, Method::Unary, &shop.target, Path::new("")),
            Path::new(""),
        );
        assert!(
            out.status.success(),
            "-O {format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read_to_string(&file).unwrap()
    };

    let report: Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(report["count"], 120);
    assert_eq!(report["statusCodeDistribution"]["OK"], 120);
    assert_eq!(report["options"]["concurrency"], 4);
    assert_eq!(report["options"]["connections"], 2);
    assert_eq!(report["name"], "shop");
    let distribution = report["latencyDistribution"].as_array().unwrap();
    let percentages: Vec<u64> = distribution
        .iter()
        .map(|d| d["percentage"].as_u64().unwrap())
        .collect();
    assert_eq!(percentages, [10, 25, 50, 75, 90, 95, 99]);
    let latencies: Vec<u64> = distribution
        .iter()
        .map(|d| d["latency"].as_u64().unwrap())
        .collect();
    assert!(latencies.windows(2).all(|w| w[0] <= w[1]), "{latencies:?}");
    assert!(report["fastest"].as_u64() <= report["slowest"].as_u64());
    assert_eq!(report["rpclab"]["calls_ok"], 120);

    let influx = run("influx-summary");
    let points: Vec<_> = influxdb_line_protocol::parse_lines(influx.trim_end())
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{e}:\n{influx}"));
    assert_eq!(points.len(), 1, "{influx}");
    let point = &points[0];
    assert_eq!(point.series.measurement.to_string(), "ghz_run");
    let tag = |name: &str| {
        point
            .series
            .tag_set
            .as_ref()
            .and_then(|tags| tags.iter().find(|(k, _)| *k == name))
            .map(|(_, v)| v.to_string())
    };
    assert_eq!(tag("call").as_deref(), Some("shop.v1.Inventory.Reserve"));
    assert_eq!(tag("created by").as_deref(), Some("rpclab test"));
    assert_eq!(tag("name").as_deref(), Some("shop"));
    let field = |name: &str| {
        point
            .field_set
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
            .unwrap_or_else(|| panic!("no field {name}: {influx}"))
    };
    // Integers, as line protocol writes them (`120i`).
    assert_eq!(field("count"), "120i");
    assert_eq!(field("errors"), "0i");
    assert!(point.timestamp.unwrap() > 0);

    let prometheus = run("prometheus");
    let lines = prometheus.lines().map(|l| Ok(l.to_owned()));
    let scrape = prometheus_parse::Scrape::parse(lines).unwrap();
    let value = |name: &str| {
        scrape
            .samples
            .iter()
            .find(|s| s.metric == name)
            .unwrap_or_else(|| panic!("no {name}:\n{prometheus}"))
    };
    assert!(
        matches!(value("ghz_run_count").value, prometheus_parse::Value::Gauge(n) if n == 120.0)
    );
    assert_eq!(value("ghz_run_count").labels.get("env"), Some("ci"));
    assert_eq!(
        value("ghz_run_count").labels.get("created_by"),
        Some("rpclab test")
    );
    let prometheus_parse::Value::Summary(quantiles) = &value("ghz_run_latency").value else {
        panic!("ghz_run_latency is no summary:\n{prometheus}")
    };
    let qs: Vec<f64> = quantiles.iter().map(|q| q.quantile).collect();
    assert_eq!(qs, [0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99]);
}
