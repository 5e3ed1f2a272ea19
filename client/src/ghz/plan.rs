//! What a ghz command line means, as one cell of rpclab's client: a pure
//! translation of [`GhzArgs`] into a [`CellSpec`] and an output, or one
//! line that says why a flag cannot mean here what it means in ghz.
//!
//! The flags mean what ghz means: 50 workers sharing one connection, 200
//! calls in total, TLS unless `--insecure`, `--rps` as the total rate.
//! Where rpclab measures differently (a warm-up until every connection has
//! answered; latency from when a rated call was due), the difference is
//! stated once, in the table of `docs/your-own-service.md` ("From ghz").

use super::args::GhzArgs;
use rpclab_model::contract::Operation;
use rpclab_model::duration;
use rpclab_model::percentile::Percentile;
use rpclab_model::spec::{CellSpec, ClosedLoop, Load, OpenLoop, Schedule, Shape, Step, Stop};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// How the report is written (`-O`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Summary,
    Json,
    Pretty,
    InfluxSummary,
    Prometheus,
}

/// A ghz command line, translated.
#[derive(Debug)]
pub struct Plan {
    pub spec: CellSpec,
    pub format: Format,
    /// `-o`: the file the output goes to (standard output without it).
    pub output: Option<PathBuf>,
    /// `--cpus`: the client's worker threads.
    pub cpus: Option<usize>,
    /// What the outputs label the run with (ghz's options, as it prints
    /// them in its JSON, InfluxDB and Prometheus outputs).
    pub labels: Labels,
}

/// The run's options as ghz's outputs name them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Labels {
    pub name: String,
    pub call: String,
    pub host: String,
    pub proto: String,
    pub n: u64,
    pub c: u32,
    pub rps: f64,
    pub z_s: f64,
    pub timeout_s: f64,
    pub connections: u32,
    /// `--tags`, as given (a JSON object of strings).
    pub tags: BTreeMap<String, String>,
}

/// The latency percentiles ghz's summary lists (10 to 99).
pub const DISTRIBUTION: [u32; 7] = [10, 25, 50, 75, 90, 95, 99];

/// Those of [`DISTRIBUTION`] a report's latency figures do not keep.
const EXTRA_PERCENTILES: [u32; 3] = [10, 25, 75];

/// No timeout (`-t 0`): a day.
const NO_TIMEOUT_MS: u64 = 86_400_000;

/// Translates `args`, reading `-d @` from `stdin` when asked; the error is
/// one line naming the flag and what to do.
pub fn plan(
    args: &GhzArgs,
    stdin: impl FnOnce() -> std::io::Result<String>,
) -> Result<Plan, String> {
    if let Some(why) = refused(args) {
        return Err(why);
    }
    let host = args
        .host
        .clone()
        .ok_or("ghz's target is missing: give host:port as the last argument")?;
    let call = args
        .call
        .clone()
        .ok_or("--call is missing: give the method as package.Service/Method")?;
    let format = format(&args.format)?;
    if args.connections == 0 || args.concurrency == 0 {
        return Err("-c and --connections must be at least 1".into());
    }
    if args.connections > args.concurrency {
        return Err(format!(
            "--connections ({}) cannot exceed the concurrency -c ({}), as in ghz",
            args.connections, args.concurrency
        ));
    }
    let z = args
        .duration
        .as_deref()
        .map(|z| go_seconds("-z", z))
        .transpose()?;
    let timeout_ms = match args.timeout.trim() {
        "0" | "0s" => NO_TIMEOUT_MS,
        t => (go_seconds("-t", t)? * 1e3).ceil() as u64,
    };
    go_seconds("--connect-timeout", &args.connect_timeout)?;
    let data = match args.data.as_deref() {
        Some("@") => Some(stdin().map_err(|e| format!("-d @: cannot read standard input: {e}"))?),
        other => other.map(str::to_owned),
    };
    if args.disable_template_data || args.disable_template_functions {
        let templated = [data.as_deref(), args.metadata.as_deref()]
            .into_iter()
            .flatten()
            .any(|text| text.contains("{{"));
        if templated {
            return Err(
                "--disable-template-data/--disable-template-functions: the data or \
                        metadata holds a template (`{{`), which rpclab always renders; remove \
                        the flag or the template"
                    .into(),
            );
        }
    }
    let load = load(args, z)?;
    let mut options = BTreeMap::new();
    let mut put = |key: &str, value: Option<String>| {
        if let Some(value) = value {
            options.insert(key.to_owned(), value);
        }
    };
    let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    put("call", Some(call.clone()));
    put("data", data);
    put("data_file", path(&args.data_file));
    // ghz: --proto wins over --protoset.
    put("proto", path(&args.proto));
    if args.proto.is_none() {
        put("protoset", path(&args.protoset));
    }
    put("import_paths", args.import_paths.clone());
    put("metadata", args.metadata.clone());
    put("metadata_file", path(&args.metadata_file));
    for (key, value) in stream_options(
        args.stream_call_count,
        &args.stream_call_duration,
        &args.stream_interval,
        args.stream_dynamic_messages,
    ) {
        put(key, value);
    }
    // ghz's TLS: on, against the system's roots, unless --insecure.
    let tls = if args.insecure {
        "off"
    } else if args.skip_tls {
        "skip-verify"
    } else {
        "on"
    };
    put("tls", Some(tls.to_owned()));
    if !args.insecure {
        put("cacert", path(&args.cacert));
        put("server_name", args.cname.clone());
        put("cert", path(&args.cert));
        put("key", path(&args.key));
    }
    let tags: BTreeMap<String, String> = match &args.tags {
        None => BTreeMap::new(),
        Some(json) => serde_json::from_str(json).map_err(|e| {
            format!("--tags is not a JSON object of strings ({e}): give {{\"env\":\"staging\"}}")
        })?,
    };
    let labels = Labels {
        name: args.name.clone().unwrap_or_default(),
        call,
        host: host.clone(),
        proto: path(&args.proto)
            .or_else(|| path(&args.protoset))
            .unwrap_or_default(),
        n: args.total,
        c: args.concurrency,
        rps: args.rps.unwrap_or(0.0),
        z_s: z.unwrap_or(0.0),
        timeout_s: timeout_ms as f64 / 1e3,
        connections: args.connections,
        tags,
    };
    let spec = CellSpec {
        protocol: "grpc-generic".to_owned(),
        target: host,
        operation: Operation::Hello,
        load,
        warmup_s: 0.0,
        warmup_calls: args.skip_first,
        warmup_max_s: None,
        steady: None,
        min_calls: 1,
        // The distribution's percentiles a report does not keep already.
        percentiles: EXTRA_PERCENTILES
            .iter()
            .map(|p| {
                p.to_string()
                    .parse::<Percentile>()
                    .expect("a whole percentile")
            })
            .collect(),
        cooldown_s: 0.0,
        timeout_ms,
        // ghz counts every call, from the first: without --skipFirst the
        // window is the whole run (its connections' set-up in it, and no
        // warm-up); with it, a warm-up of at least those calls.
        include_connect: args.skip_first == 0,
        options,
        engine: Default::default(),
    };
    spec.validate()?;
    Ok(Plan {
        spec,
        format,
        output: args.output.clone(),
        cpus: args.cpus,
        labels,
    })
}

/// ghz's stream flags (`--stream-call-count`, `--stream-call-duration`,
/// `--stream-interval`, `--stream-dynamic-messages`) as the options of a
/// generic call, `None` where a flag is not given: what `rpclab ghz` and
/// `rpclab --call` both pass on.
pub fn stream_options(
    call_count: Option<u64>,
    call_duration: &Option<String>,
    interval: &Option<String>,
    dynamic_messages: bool,
) -> [(&'static str, Option<String>); 4] {
    [
        ("stream_call_count", call_count.map(|n| n.to_string())),
        ("stream_call_duration", call_duration.clone()),
        ("stream_interval", interval.clone()),
        (
            "stream_dynamic_messages",
            dynamic_messages.then(|| "true".to_owned()),
        ),
    ]
}

/// The first flag given that cannot mean here what it means in ghz, and
/// why, in one line.
fn refused(a: &GhzArgs) -> Option<String> {
    let given: [(bool, &str, &str); 14] = [
        (a.config.is_some(), "--config", "ghz's config files are not read: give their settings as flags"),
        (a.authority.is_some(), "--authority", "the :authority is the target's host:port; give the host you want as the target"),
        (a.binary || a.binary_file.is_some(), "-b/-B", "binary requests are not read: give the request as JSON (-d or -D)"),
        (a.reflect_metadata.is_some(), "--reflect-metadata", "reflection requests carry no metadata of their own: give --proto or --protoset"),
        (a.max_recv_message_size.is_some() || a.max_send_message_size.is_some(), "--max-recv/send-message-size", "message size limits are not set here: leave the flag out"),
        (a.keepalive.is_some(), "--keepalive", "HTTP/2 keep-alive pings are not sent: leave the flag out"),
        (a.debug.is_some(), "--debug", "there is no debug log: --json's report has each failure's first example"),
        (a.enable_compression, "-e/--enable-compression", "requests are not compressed: leave the flag out"),
        (a.lb_strategy.is_some(), "--lb-strategy", "one target, no client-side load balancing: leave the flag out"),
        (a.count_errors, "--count-errors", "latencies are of successful calls only; failed calls are counted by kind beside them"),
        (a.max_duration.is_some(), "-x/--max-duration", "a window ends after -n calls or after -z, not at the first of both: give one of them"),
        (a.duration_stop == "wait", "--duration-stop=wait", "calls still in flight at -z's end are left out (as `ignore`), never waited for"),
        (!matches!(a.duration_stop.as_str(), "close" | "ignore" | "wait"), "--duration-stop", "takes close, wait or ignore"),
        (a.concurrency_schedule != "const", "--concurrency-schedule", "a window keeps its workers from start to end: run each -c apart, or search a rate with `cargo xtask lab capacity`"),
    ];
    given
        .into_iter()
        .find(|(on, _, _)| *on)
        .map(|(_, flag, why)| format!("{flag}: {why}"))
}

fn format(name: &str) -> Result<Format, String> {
    Ok(match name {
        "summary" | "" => Format::Summary,
        "json" => Format::Json,
        "pretty" => Format::Pretty,
        "influx-summary" => Format::InfluxSummary,
        "prometheus" => Format::Prometheus,
        "csv" | "html" | "influx-details" => {
            return Err(format!(
                "-O {name} lists every call, and rpclab keeps a histogram instead: use -O json, \
                 pretty, summary, influx-summary or prometheus"
            ))
        }
        other => {
            return Err(format!(
                "-O {other}: give summary, json, pretty, influx-summary or prometheus"
            ))
        }
    })
}

/// A Go duration flag, in seconds, or one line naming the flag.
fn go_seconds(flag: &str, text: &str) -> Result<f64, String> {
    duration::go_form(text).ok_or_else(|| {
        format!("{flag} `{text}` is not a duration as Go writes it (500ms, 10s, 1m30s)")
    })
}

/// The load: ghz's workers on its connections, by count or time; with a
/// rate (`--rps`, a step or line schedule) an open loop whose senders are
/// the workers.
fn load(a: &GhzArgs, z: Option<f64>) -> Result<Load, String> {
    let schedule = match a.load_schedule.as_str() {
        "const" => a.rps.map(|rate| Schedule::Constant { rate }),
        "step" | "line" => Some(Schedule::Steps {
            steps: stepped(a, z)?,
        }),
        other => return Err(format!("--load-schedule {other}: give const, step or line")),
    };
    let Some(schedule) = schedule else {
        if a.asynchronous {
            return Err(
                "--async without --rps sends without bound: give --rps (or a load \
                        schedule) for an open loop"
                    .into(),
            );
        }
        let shape = if a.connections == 1 {
            Shape::SharedClient
        } else {
            Shape::Users
        };
        return Ok(Load::Closed(ClosedLoop {
            shape,
            workers: a.concurrency,
            connections: a.connections,
            stop: z.map_or(Stop::TotalCalls(a.total), Stop::Seconds),
            outstanding: 1,
        }));
    };
    if schedule.peak_rate() <= 0.0 {
        return Err("--rps must be more than 0".into());
    }
    let seconds = match z {
        Some(z) => z,
        None => seconds_for(&schedule, a.total),
    };
    Ok(Load::Open(OpenLoop {
        schedule,
        connections: a.connections,
        max_in_flight: a.concurrency,
        seconds,
    }))
}

/// A step (or line) schedule's rates, each held for its step's length:
/// from --load-start by --load-step until --load-end or
/// --load-max-duration, whichever comes first; then the rate reached holds
/// (the last step). A line is steps of one second. Steps are made only as
/// far as the run goes (-n calls or -z).
fn stepped(a: &GhzArgs, z: Option<f64>) -> Result<Vec<Step>, String> {
    let line = a.load_schedule == "line";
    let (Some(start), Some(step)) = (a.load_start, a.load_step) else {
        return Err(format!(
            "--load-schedule {} needs --load-start and --load-step",
            a.load_schedule
        ));
    };
    let step_s = if line {
        1.0
    } else {
        let text = a
            .load_step_duration
            .as_deref()
            .ok_or("--load-schedule step needs --load-step-duration")?;
        go_seconds("--load-step-duration", text)?
    };
    let max_s = a
        .load_max_duration
        .as_deref()
        .map(|m| go_seconds("--load-max-duration", m))
        .transpose()?;
    if start <= 0.0 || step == 0.0 {
        return Err("--load-start must be more than 0 and --load-step not 0".into());
    }
    let past_end = |rate: f64| {
        a.load_end
            .is_some_and(|end| (step > 0.0 && rate >= end) || (step < 0.0 && rate <= end))
    };
    let (mut steps, mut rate, mut t, mut calls) = (Vec::new(), start, 0.0, 0.0);
    loop {
        let last = past_end(rate) || max_s.is_some_and(|m| t + step_s > m + 1e-9);
        if past_end(rate) {
            rate = a.load_end.expect("past an end");
        }
        if rate <= 0.0 {
            return Err(format!(
                "the {} schedule reaches {rate} calls/s before it ends: give a --load-end above 0",
                a.load_schedule
            ));
        }
        steps.push(Step {
            rate,
            seconds: step_s,
        });
        t += step_s;
        calls += rate * step_s;
        let done = z.map_or(calls >= a.total as f64, |z| t >= z);
        if last || done {
            return Ok(steps);
        }
        if steps.len() >= 100_000 {
            return Err("the load schedule has over 100000 steps: give --load-end or -z".into());
        }
        rate += step;
    }
}

/// How long a schedule takes to make `total` calls (ghz's -n with a rate).
fn seconds_for(schedule: &Schedule, total: u64) -> f64 {
    let total = total as f64;
    match schedule {
        Schedule::Steps { steps } => {
            let (mut t, mut calls) = (0.0, 0.0);
            for (i, s) in steps.iter().enumerate() {
                let here = s.rate * s.seconds;
                if calls + here >= total || i + 1 == steps.len() {
                    return t + (total - calls) / s.rate;
                }
                t += s.seconds;
                calls += here;
            }
            t
        }
        other => total / other.peak_rate(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        ghz: GhzArgs,
    }

    fn args(line: &str) -> GhzArgs {
        let words = std::iter::once("ghz").chain(line.split_whitespace());
        Cli::try_parse_from(words).unwrap().ghz
    }

    fn planned(line: &str) -> Result<Plan, String> {
        plan(&args(line), || Ok("{\"name\":\"stdin\"}".to_owned()))
    }

    /// The open loop's length (s) and steps that a line with a stepped
    /// schedule plans; panics on any other load.
    fn planned_steps(line: &str) -> (f64, Vec<Step>) {
        let plan = planned(line).unwrap();
        let Load::Open(open) = plan.spec.load else {
            panic!("{line}: not an open loop")
        };
        let Schedule::Steps { steps } = open.schedule else {
            panic!("{line}: not stepped")
        };
        (open.seconds, steps)
    }

    #[test]
    fn ghzs_defaults_are_fifty_workers_on_one_connection_two_hundred_calls_and_tls() {
        let p = planned("--call a.B/C 127.0.0.1:50051").unwrap();
        assert_eq!(p.spec.target, "127.0.0.1:50051");
        assert_eq!(
            p.spec.load,
            Load::Closed(ClosedLoop {
                shape: Shape::SharedClient,
                workers: 50,
                connections: 1,
                stop: Stop::TotalCalls(200),
                outstanding: 1,
            })
        );
        assert_eq!(p.spec.options["tls"], "on");
        assert_eq!(p.spec.timeout_ms, 20_000);
        assert_eq!(p.format, Format::Summary);
        let insecure = planned("--insecure --call a.B/C h:1").unwrap();
        assert_eq!(insecure.spec.options["tls"], "off");
        let flag_form = planned("--insecure=true --call a.B/C h:1").unwrap();
        assert_eq!(flag_form.spec.options["tls"], "off");
    }

    #[test]
    fn counts_durations_and_connections_mean_what_ghz_means() {
        let p = planned("--insecure --call a.B/C -n 2000 -c 20 --connections=10 h:1").unwrap();
        let Load::Closed(c) = &p.spec.load else {
            panic!("{:?}", p.spec.load)
        };
        assert_eq!((c.workers, c.connections), (20, 10));
        assert_eq!(c.stop, Stop::TotalCalls(2000));
        let z = planned("--call a.B/C -z 1m30s h:1").unwrap();
        let Load::Closed(c) = &z.spec.load else {
            panic!()
        };
        assert_eq!(c.stop, Stop::Seconds(90.0));
        assert_eq!(
            planned("--call a.B/C -c 2 --connections 3 h:1").unwrap_err(),
            "--connections (3) cannot exceed the concurrency -c (2), as in ghz"
        );
        assert!(planned("--call a.B/C -t 0 h:1").unwrap().spec.timeout_ms >= 86_400_000);
        let every = planned("--call a.B/C h:1").unwrap().spec;
        assert!(every.include_connect && every.warmup_calls == 0);
        let skipped = planned("--call a.B/C --skipFirst 7 h:1").unwrap().spec;
        assert!(!skipped.include_connect && skipped.warmup_calls == 7);
    }

    #[test]
    fn a_rate_is_an_open_loop_whose_senders_are_the_workers() {
        let p = planned("--call a.B/C -c 10 -n 10000 --rps 200 h:1").unwrap();
        assert_eq!(
            p.spec.load,
            Load::Open(OpenLoop {
                schedule: Schedule::Constant { rate: 200.0 },
                connections: 1,
                max_in_flight: 10,
                seconds: 50.0,
            })
        );
        assert!(planned("--call a.B/C --async h:1")
            .unwrap_err()
            .starts_with("--async without --rps"));
    }

    #[test]
    fn step_and_line_schedules_are_steps_until_their_end_then_hold() {
        let (seconds, steps) = planned_steps(
            "--call a.B/C -c 10 -n 10000 --load-schedule=step --load-start=50 --load-end=150 \
             --load-step=10 --load-step-duration=5s h:1",
        );
        let rates: Vec<f64> = steps.iter().map(|s| s.rate).collect();
        assert_eq!(
            rates,
            [50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 110.0, 120.0, 130.0, 140.0, 150.0]
        );
        // 50..140 for 5 s each is 4750 calls; 5250 more at 150/s.
        assert!(
            (seconds - (50.0 + 5250.0 / 150.0)).abs() < 1e-9,
            "{seconds}"
        );

        let (_, steps) = planned_steps(
            "--call a.B/C -n 10000 --load-schedule=line --load-start=200 --load-step=-2 \
             --load-end=50 h:1",
        );
        assert!(steps.iter().all(|s| s.seconds == 1.0));
        assert_eq!(steps[0].rate, 200.0);
        assert_eq!(steps[1].rate, 198.0);

        let (seconds, steps) = planned_steps(
            "--call a.B/C -z 100s --load-schedule=step --load-start=50 --load-step=10 \
             --load-step-duration=5s --load-max-duration=20s h:1",
        );
        // As ghz's StepPacer: 20 s of 5 s steps is 4 steps, and from 20 s
        // on the rate is the fifth's, held.
        let rates: Vec<f64> = steps.iter().map(|s| s.rate).collect();
        assert_eq!(rates, [50.0, 60.0, 70.0, 80.0, 90.0]);
        assert_eq!(seconds, 100.0);
    }

    #[test]
    fn what_cannot_mean_the_same_is_refused_in_one_line() {
        for (line, starts) in [
            ("--config c.json", "--config:"),
            ("-B req.bin --call a.B/C h:1", "-b/-B:"),
            ("--call a.B/C -x 10s h:1", "-x/--max-duration:"),
            ("--call a.B/C -O csv h:1", "-O csv lists every call"),
            ("--call a.B/C -O yaml h:1", "-O yaml:"),
            (
                "--call a.B/C --concurrency-schedule=step --concurrency-start=5 h:1",
                "--concurrency-schedule:",
            ),
            (
                "--call a.B/C --load-schedule=step --load-start=5 h:1",
                "--load-schedule step needs",
            ),
            ("--call a.B/C -z soon h:1", "-z `soon` is not a duration"),
            ("--call a.B/C", "ghz's target is missing"),
            ("h:1", "--call is missing"),
            (
                "--call a.B/C --disable-template-data -d {\"a\":\"{{.UUID}}\"} h:1",
                "--disable-template-data",
            ),
        ] {
            let e = planned(line).unwrap_err();
            assert!(e.starts_with(starts), "{line}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn data_from_standard_input_and_proto_over_protoset() {
        let p = planned("--call a.B/C -d @ --proto a.proto --protoset b.protoset h:1").unwrap();
        assert_eq!(p.spec.options["data"], "{\"name\":\"stdin\"}");
        assert_eq!(p.spec.options["proto"], "a.proto");
        assert!(!p.spec.options.contains_key("protoset"));
    }
}
