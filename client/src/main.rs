//! `rpclab-client`: the load client's command line.
//!
//! Three ways to use it:
//!
//! * against any running server, like `ghz` or `wrk`:
//!   `rpclab-client --protocol grpc --target 127.0.0.1:50051 --operation order-echo --concurrency 20 --calls 300000`
//! * on a method of your own gRPC service, with ghz's flags:
//!   `rpclab-client --target 127.0.0.1:50051 --call shop.v1.Inventory/Reserve --data '{"sku":"a"}' --proto shop/v1/inventory.proto -i proto -m '{"authorization":"Bearer t"}'`
//! * on a method of your own Dubbo interface, by generic invocation:
//!   `rpclab-client --protocol dubbo-generic --registry zookeeper://127.0.0.1:2181 --call com.example.shop.InventoryService/reserve --types com.example.shop.ReserveRequest --data '[{"sku":"a","quantity":1}]'`
//! * on a method of your own Thrift service, from its IDL:
//!   `rpclab-client --protocol thrift-generic --target 127.0.0.1:9090 --idl shop.thrift --call Inventory.reserve --data '{"req":{}}'`
//! * as the lab runs it, from a cell spec: `rpclab-client run-spec --spec cell.json --out DIR`
//! * as a readiness check: `rpclab-client probe --protocol thrift --target 127.0.0.1:9090`

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use rpclab_client::{probe, protocols, runner};
use rpclab_model::contract::Operation;
use rpclab_model::duration;
use rpclab_model::result::ClientReport;
use rpclab_model::spec::{
    CellSpec, EngineChoice, Load, OpenLoop, Pool, Schedule, Shape, Steady, Stop,
};
use rpclab_model::threshold::{self, Breached, Figures, Threshold};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "rpclab-client",
    version,
    about = "rpclab's native-protocol RPC load client"
)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    direct: Direct,
}

#[derive(Subcommand)]
enum Command {
    /// A ghz command line, as it is: `rpclab-client ghz --insecure --call
    /// pkg.Service/Method -d '{...}' -c 10 -n 1000 host:port`. ghz's flags
    /// mean what they mean in ghz (50 workers on one connection, -n in
    /// total, TLS unless --insecure); where rpclab measures differently,
    /// docs/your-own-service.md's table says so, and a flag that cannot
    /// mean the same is refused in one line before any load.
    Ghz(Box<rpclab_client::ghz::args::GhzArgs>),
    /// Run one cell described by a JSON spec; write report.json into --out.
    RunSpec {
        /// The cell spec (JSON, `rpclab_model::spec::CellSpec`).
        #[arg(long)]
        spec: PathBuf,
        /// Folder for report.json, latency.hlog and the client's files.
        #[arg(long)]
        out: PathBuf,
    },
    /// Make one verified call and exit 0 if it succeeded.
    Probe {
        /// Protocol module, as for a direct run (`--protocol`).
        #[arg(long)]
        protocol: String,
        /// host:port of the server.
        #[arg(long)]
        target: String,
        /// The contract operation to call and verify (a generic protocol,
        /// such as grpc-generic, calls the method its `call` option names).
        /// `--scenario` is its old name, kept as an alias.
        #[arg(long = "operation", alias = "scenario", default_value = "hello")]
        operation: Operation,
        /// Protocol option key=value (repeatable), e.g. serialization=kryo.
        #[arg(long, value_parser = parse_option)]
        option: Vec<(String, String)>,
        /// Give up after this long (connect and call): `5s`, or seconds.
        #[arg(long, alias = "timeout", value_name = "DURATION", default_value = "5", value_parser = duration::parse_seconds)]
        timeout_s: f64,
        /// Try again (every 250 ms) until a call is verified or this many
        /// seconds have passed; 0: one try. The lab's readiness check from
        /// inside a run's private network.
        #[arg(long, alias = "wait", value_name = "DURATION", default_value = "0", value_parser = duration::parse_seconds_or_zero)]
        wait_s: f64,
    },
    /// Measure the CPU set this process runs on (a fixed CPU kernel and a
    /// loopback ping-pong); print the figures as JSON.
    Calibrate {
        /// Seconds each workload runs.
        #[arg(long, default_value_t = 1.0)]
        seconds: f64,
        /// The CPU set being measured, recorded with the figures.
        #[arg(long, default_value = "")]
        cpus: String,
        /// Measure only the loopback ping-pong across two CPU sets: the
        /// pinging thread on `--cpus`, the echo thread on these CPUs.
        #[arg(long)]
        echo_cpus: Option<String>,
    },
}

/// A run's window without --calls or --duration, seconds.
const DEFAULT_SECONDS: f64 = 10.0;

/// Flags for a one-off run against a running server.
#[derive(Args)]
struct Direct {
    /// Protocol module (the list comes from `protocols::NAMES`).
    #[arg(long, help = protocol_help())]
    protocol: Option<String>,
    /// host:port of the server.
    #[arg(long)]
    target: Option<String>,
    /// Operation of the contract: order-echo, orders-echo, string-1k,
    /// string-100k, string-1m, hello, empty. (A lab's `--scenario` is a
    /// scenario of its definition, an operation with a load; this is the
    /// operation alone. `--scenario` is this flag's old name, kept as an
    /// alias.)
    #[arg(
        long = "operation",
        alias = "scenario",
        default_value = "order-echo",
        conflicts_with = "call"
    )]
    operation: Operation,
    #[command(flatten)]
    generic: Generic,
    #[command(flatten)]
    dubbo: DubboGenericFlags,
    #[command(flatten)]
    tls: TlsFlags,
    /// Concurrent callers.
    #[arg(long, default_value_t = 1)]
    concurrency: u32,
    /// How the callers are arranged: client-programs (one connection each),
    /// shared-client, thread-pool (shared budget of --calls), users.
    #[arg(long, default_value = "client-programs")]
    shape: String,
    /// Calls per caller (or in total with --shape thread-pool).
    #[arg(long, conflicts_with = "duration")]
    calls: Option<u64>,
    /// Measure for this long instead of a call count: a duration (`10s`,
    /// `2m`, `500ms`) or seconds. Without it or --calls: 10 s.
    #[arg(long, alias = "duration-s", value_name = "DURATION", value_parser = duration::parse_seconds)]
    duration: Option<f64>,
    /// Minimum warm-up (`5s`, or seconds); the window also waits until
    /// every connection has completed a verified call.
    #[arg(long, alias = "warmup-s", value_name = "DURATION", default_value = "0", value_parser = duration::parse_seconds_or_zero)]
    warmup: f64,
    /// Longest warm-up (`90s`, or seconds; default: --warmup plus 60 s).
    #[arg(long, alias = "warmup-max-s", value_name = "DURATION", value_parser = duration::parse_seconds)]
    warmup_max: Option<f64>,
    /// Warm up until this many 1 s intervals agree within --steady-tolerance.
    #[arg(long)]
    steady_intervals: Option<u32>,
    /// Relative half-width of the steady band (0.03: ±3 % of the mean).
    #[arg(long, default_value_t = 0.03, requires = "steady_intervals")]
    steady_tolerance: f64,
    /// Fewer calls than this in the window flag the result too-few-calls.
    #[arg(long, default_value_t = rpclab_model::spec::DEFAULT_MIN_CALLS)]
    min_calls: u64,
    /// Load kept on, unrecorded, after the window (`2s`, or seconds).
    #[arg(long, alias = "cooldown-s", value_name = "DURATION", default_value = "0", value_parser = duration::parse_seconds_or_zero)]
    cooldown: f64,
    /// Calls each caller keeps in flight: 1 is the synchronous style, more
    /// the asynchronous (callback) style.
    #[arg(long, default_value_t = 1)]
    outstanding: u32,
    /// Connection pool size for --shape users (a fixed pool; a scenario's
    /// `pool = { min, max }` comes in through a cell spec).
    #[arg(long)]
    pool: Option<u32>,
    /// Open loop: send this many calls per second whatever the replies do,
    /// measuring latency from when each call was due, for --duration
    /// (default 10 s; an open loop's window is a time, never a count).
    #[arg(long, conflicts_with = "calls")]
    rate: Option<f64>,
    /// Open loop arrivals: constant or poisson.
    #[arg(long, default_value = "constant", requires = "rate")]
    arrival: String,
    /// Open loop: calls in flight at most (senders).
    #[arg(long, default_value_t = 64, requires = "rate")]
    max_in_flight: u32,
    /// Open loop: connections shared by the senders.
    #[arg(long, default_value_t = 1, requires = "rate")]
    connections: u32,
    /// Per-call timeout, in milliseconds: a slower call is a failed call.
    #[arg(long, default_value_t = 5000, conflicts_with = "timeout")]
    timeout_ms: u64,
    /// Per-call timeout as a duration (`5s`, `250ms`), in place of
    /// --timeout-ms.
    #[arg(long, value_name = "DURATION", value_parser = duration::parse_seconds)]
    timeout: Option<f64>,
    /// Protocol option key=value (repeatable), e.g. transport=framed.
    #[arg(long, value_parser = parse_option)]
    option: Vec<(String, String)>,
    /// Which engine makes the calls: auto (the poll engine where it can run
    /// the cell: a closed loop with one call in flight per connection, on a
    /// protocol with a sans-IO exchange; else tokio tasks) or tasks.
    #[arg(long, default_value = "auto", value_parser = EngineChoice::parse)]
    engine: EngineChoice,
    /// Print the report as JSON instead of a summary.
    #[arg(long)]
    json: bool,
    /// A limit the window must hold, as k6's thresholds: a latency
    /// `pN`/`p(N)` (any percentile), `avg`, `med`, `min` or `max` with a
    /// unit (`p99<2ms`, `p(95)<200ms`, `avg<1ms`), `errors<0.1%` (share),
    /// `errors==0` (count), `errors.rate<0.001` (fraction), `rate>5000`
    /// or `throughput>5000` (calls/s); repeatable. A breach is printed in
    /// one line and the client exits with code 99.
    #[arg(long)]
    threshold: Vec<Threshold>,
}

/// A method of the user's own gRPC service (protocol `grpc-generic`), with
/// ghz's flag names, or of their own Thrift service from its IDL (protocol
/// `thrift-generic`, with `--idl`).
#[derive(Args)]
struct Generic {
    /// A method of your own gRPC service, `package.Service/Method` (or
    /// `package.Service.Method`), as ghz's `--call`: calls it instead of the
    /// contract (protocol grpc-generic), its types from --proto, --protoset or the
    /// server's reflection (grpc.reflection.v1, else v1alpha). With
    /// --protocol dubbo-generic: a method of your own Dubbo interface,
    /// `interface/method`, by Dubbo's generic invocation. With --idl (or
    /// --protocol thrift-generic): a Thrift method, `Service.method`.
    #[arg(long)]
    call: Option<String>,
    /// The request as JSON (default `{}`; for dubbo-generic the arguments,
    /// a JSON array, default `[]`). ghz's template values go in a string or
    /// as an integer field's whole value, rendered per call:
    /// {{.RequestNumber}} (0, 1, ...), {{.WorkerID}} (the connection's
    /// number), {{.FullyQualifiedName}}, {{.MethodName}}, {{.ServiceName}},
    /// {{.InputName}}, {{.OutputName}}, {{.IsClientStreaming}},
    /// {{.IsServerStreaming}}, {{.Timestamp}}, {{.TimestampUnix}},
    /// {{.TimestampUnixMilli}}, {{.TimestampUnixNano}}, {{.UUID}},
    /// {{randomString N}} (N ≤ 0: 2 to 16 characters), {{randomInt MIN
    /// MAX}} (in [MIN, MAX)); an unknown one is refused before any load.
    /// For grpc-generic a JSON array is a data array: its messages are sent
    /// round-robin.
    #[arg(long, short = 'd', requires = "call")]
    data: Option<String>,
    /// The request's JSON from a file; for grpc-generic also one JSON
    /// message a line, sent round-robin.
    #[arg(long, short = 'D', requires = "call", conflicts_with = "data")]
    data_file: Option<PathBuf>,
    /// Metadata (grpc-generic: request headers; dubbo-generic:
    /// attachments; Thrift has none), as ghz's -m: a JSON
    /// object of string values (`{"authorization":"Bearer t"}`), or an
    /// array of such objects used round-robin; values may hold --data's
    /// template values. A key ending in -bin is a binary header, its value
    /// base64. Keys HTTP/2 forbids (upper case, pseudo-headers,
    /// connection-specific ones, grpc-...) are refused before any load.
    /// A stream sends the set of its first call number once, with its
    /// head.
    #[arg(long, short = 'm', requires = "call")]
    metadata: Option<String>,
    /// The metadata's JSON from a file (ghz's -M).
    #[arg(long, short = 'M', requires = "call", conflicts_with = "metadata")]
    metadata_file: Option<PathBuf>,
    /// The service's descriptor set (`protoc --descriptor_set_out=FILE
    /// --include_imports`); without it or --proto, the server's reflection.
    #[arg(long, requires = "call")]
    protoset: Option<PathBuf>,
    /// The `.proto` file that defines the --call service, compiled
    /// in-process (no protoc needed), as ghz's --proto; its imports are
    /// looked for in --import-paths, then in its own folder and the current
    /// one (google/protobuf's files are built in).
    #[arg(long, requires = "call", conflicts_with = "protoset")]
    proto: Option<PathBuf>,
    /// With --proto: the folders its imports are relative to,
    /// comma-separated, searched in this order (ghz's -i).
    #[arg(long, short = 'i', requires = "proto")]
    import_paths: Option<String>,
    /// The reply every call must get, as JSON (may hold
    /// {{.RequestNumber}} and {{.WorkerID}}; with a --data array, an array
    /// of as many replies); a reply that differs is a failed call that
    /// names the first differing field. Without it, each reply is decoded
    /// as the method's output type. In place of a value, a matcher:
    /// `{"$any": true}`, `{"$type": "string"}` (string number integer
    /// boolean object array null), `{"$regex": "^r-"}`, `{"$range": [1,
    /// 100]}` (null: no bound); any other `$` key is refused. Each
    /// element of an array may hold matchers; an expectation with one (or
    /// with --expect-partial) may hold {{.RequestNumber}}, no other
    /// template value.
    #[arg(long, requires = "call")]
    expect: Option<String>,
    /// The expected reply's JSON from a file.
    #[arg(long, requires = "call", conflicts_with = "expect")]
    expect_file: Option<PathBuf>,
    /// For a streaming method (ghz's flag): client and bidi streams send
    /// this many messages, then end their side; a server stream is ended
    /// by the client once this many have come. Refused on a unary method.
    #[arg(long, requires = "call")]
    stream_call_count: Option<u64>,
    /// For a streaming method (ghz's flag): client and bidi streams send
    /// until this has passed (Go's form: 500ms, 2s, 1m), then end their
    /// side; a server stream is ended by the client once it has passed.
    #[arg(long, requires = "call")]
    stream_call_duration: Option<String>,
    /// For client and bidi streams (ghz's flag): the pause between two
    /// messages sent (500ms, 10ms, 250us).
    #[arg(long, requires = "call")]
    stream_interval: Option<String>,
    /// For client and bidi streams (ghz's flag): each message sent takes
    /// the next {{.RequestNumber}} and template values of its own (and so
    /// a data array's next element), not its stream's.
    #[arg(long, requires = "call")]
    stream_dynamic_messages: bool,
    /// Compare only the keys --expect (or --expect-file) gives, at every
    /// depth, in each element of an expect array: a reply may carry
    /// others (a counter, a timestamp).
    #[arg(long, requires = "call")]
    expect_partial: bool,
    /// The `.thrift` IDL of your own Thrift service (its includes read
    /// relative to it): --call Service.method is then a Thrift method
    /// (protocol thrift-generic), its arguments in --data by name.
    #[arg(long, requires = "call", conflicts_with_all = ["protoset", "proto"])]
    idl: Option<PathBuf>,
}

/// What a generic Dubbo call adds to `--call` (`--protocol dubbo-generic`).
#[derive(Args)]
struct DubboGenericFlags {
    /// With --protocol dubbo-generic: the parameter types of the --call
    /// method, Java names, comma-separated (`com.example.shop.ReserveRequest,int`);
    /// without them, the provider finds the method by its name.
    #[arg(long, requires = "call")]
    types: Option<String>,
    /// With --protocol dubbo-generic: the ZooKeeper registry in which the
    /// provider of the --call interface is found (`zookeeper://127.0.0.1:2181`);
    /// --target may then be left out (its port picks one of several providers).
    #[arg(long, requires = "call")]
    registry: Option<String>,
}

impl DubboGenericFlags {
    /// The flags as options of protocol `dubbo-generic`.
    fn options(&self) -> Vec<(String, String)> {
        [("types", &self.types), ("registry", &self.registry)]
            .into_iter()
            .filter_map(|(key, value)| Some((key.to_owned(), value.clone()?)))
            .collect()
    }
}

/// TLS for the protocols that have it (grpc, --call's grpc-generic,
/// hessian, soap), as ghz's flags, except that plaintext is the default
/// (ghz's default is --tls).
#[derive(Args)]
struct TlsFlags {
    /// TLS (gRPC, Hessian, SOAP), the server's certificate verified
    /// against the system's roots.
    #[arg(long)]
    tls: bool,
    /// TLS, the server's certificate verified against the CA certificates
    /// in this PEM file.
    #[arg(long)]
    cacert: Option<PathBuf>,
    /// TLS without verifying the server's certificate (ghz's --skipTLS).
    #[arg(long = "skipTLS", alias = "skip-tls", conflicts_with = "cacert")]
    skip_tls: bool,
    /// Plaintext, no TLS (the default; ghz's --insecure).
    #[arg(long, conflicts_with_all = ["tls", "cacert", "skip_tls"])]
    insecure: bool,
    /// The name the server's certificate is checked for, and sent as SNI
    /// (default: the target's host; ghz's --cname).
    #[arg(long)]
    cname: Option<String>,
    /// The client's own certificate (PEM, its chain), for a server that
    /// asks for one: mutual TLS (ghz's --cert; needs --key).
    #[arg(long, requires = "key")]
    cert: Option<PathBuf>,
    /// The private key of --cert (PEM: PKCS#8, PKCS#1 or SEC1; ghz's --key).
    #[arg(long, requires = "cert")]
    key: Option<PathBuf>,
}

impl TlsFlags {
    /// The flags as the TLS options of a protocol (`tls`, `cacert`,
    /// `server_name`, `cert`, `key`: `rpclab_protocols::tls`).
    fn options(&self) -> Vec<(String, String)> {
        let mut options = Vec::new();
        let mode = if self.skip_tls {
            Some("skip-verify")
        } else if self.tls || self.cacert.is_some() {
            Some("on")
        } else if self.insecure {
            Some("off")
        } else {
            None
        };
        if let Some(mode) = mode {
            options.push(("tls".to_owned(), mode.to_owned()));
        }
        if let Some(ca) = &self.cacert {
            options.push(("cacert".to_owned(), ca.display().to_string()));
        }
        if let Some(name) = &self.cname {
            options.push(("server_name".to_owned(), name.clone()));
        }
        for (key, path) in [("cert", &self.cert), ("key", &self.key)] {
            if let Some(path) = path {
                options.push((key.to_owned(), path.display().to_string()));
            }
        }
        options
    }
}

impl Generic {
    /// The flags as options of protocol `grpc-generic` (or
    /// `thrift-generic`, with `--idl`).
    fn options(&self) -> Vec<(String, String)> {
        let mut options = Vec::new();
        let mut put = |key: &str, value: Option<String>| {
            if let Some(value) = value {
                options.push((key.to_owned(), value));
            }
        };
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        put("call", self.call.clone());
        put("data", self.data.clone());
        put("data_file", path(&self.data_file));
        put("protoset", path(&self.protoset));
        put("proto", path(&self.proto));
        put("import_paths", self.import_paths.clone());
        for (key, value) in rpclab_client::ghz::plan::stream_options(
            self.stream_call_count,
            &self.stream_call_duration,
            &self.stream_interval,
            self.stream_dynamic_messages,
        ) {
            put(key, value);
        }
        put("expect", self.expect.clone());
        put("expect_file", path(&self.expect_file));
        put(
            rpclab_protocols::expect::PARTIAL_OPTION,
            self.expect_partial.then(|| "true".to_owned()),
        );
        put("metadata", self.metadata.clone());
        put("metadata_file", path(&self.metadata_file));
        put("idl", path(&self.idl));
        options
    }
}

/// The protocols that make a generic call (`--call`), each with the
/// `--protocol` names that select it; the first is `--call`'s default.
const GENERIC_PROTOCOLS: &[(&str, &[&str])] = &[
    ("grpc-generic", &["grpc-generic", "grpc"]),
    ("dubbo-generic", &["dubbo-generic", "dubbo"]),
    ("thrift-generic", &["thrift-generic", "thrift"]),
];

/// The generic protocol `--idl` implies when `--protocol` is not given.
const IDL_PROTOCOL: &str = "thrift-generic";

/// The protocol a `--call` run uses, from `--protocol` (if given) and
/// whether an IDL was given.
fn generic_protocol(protocol: Option<&str>, idl: bool) -> Result<&'static str> {
    let Some(asked) = protocol else {
        return Ok(if idl {
            IDL_PROTOCOL
        } else {
            GENERIC_PROTOCOLS[0].0
        });
    };
    GENERIC_PROTOCOLS
        .iter()
        .find(|(_, names)| names.contains(&asked))
        .map(|(name, _)| *name)
        .ok_or_else(|| {
            let names: Vec<&str> = GENERIC_PROTOCOLS.iter().map(|(name, _)| *name).collect();
            anyhow::anyhow!(
                "--call is a method of gRPC (the default), Dubbo or Thrift (with --idl); \
                 --protocol {asked} has none (give one of {})",
                names.join(", ")
            )
        })
}

/// `--protocol`'s help, from the one list of protocols.
fn protocol_help() -> String {
    format!("Protocol module: {}", protocols::NAMES.join(", "))
}

fn parse_option(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("expected key=value, got `{s}`"))
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    // A ghz command line is translated before anything starts: a refusal
    // is one line, and --cpus sizes the runtime.
    let ghz = match &cli.command {
        Some(Command::Ghz(args)) => Some(rpclab_client::ghz::plan_of(args)?),
        _ => None,
    };
    // ghz's --cpus, or the CPUs the process may use (see `runtime`).
    let cpus = ghz
        .as_ref()
        .and_then(|plan| plan.cpus)
        .unwrap_or_else(rpclab_client::runtime::available_cpus);
    let runtime =
        rpclab_client::runtime::for_cpus(cpus).context("cannot start the async runtime")?;
    let outcome = runtime.block_on(async {
        match cli.command {
            Some(Command::RunSpec { spec, out }) => run_spec(&spec, &out).await,
            Some(Command::Ghz(_)) => {
                rpclab_client::ghz::run(ghz.as_ref().expect("planned above")).await
            }
            Some(Command::Probe {
                protocol,
                target,
                operation,
                option,
                timeout_s,
                wait_s,
            }) => {
                let options: BTreeMap<_, _> = option.into_iter().collect();
                let started = std::time::Instant::now();
                let verified = loop {
                    let tried = probe::probe(
                        &protocol,
                        &options,
                        &target,
                        operation,
                        Duration::from_secs_f64(timeout_s),
                    )
                    .await;
                    match tried {
                        Ok(verified) => break verified,
                        Err(e) if started.elapsed().as_secs_f64() >= wait_s => {
                            return Err(anyhow::Error::new(e)
                                .context(format!("probe of {protocol} at {target} failed")));
                        }
                        Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
                    }
                };
                println!(
                    "ok: {} verified in {:.3} ms",
                    verified.call.unwrap_or_else(|| operation.to_string()),
                    verified.latency.as_secs_f64() * 1e3
                );
                Ok(())
            }
            Some(Command::Calibrate {
                seconds,
                cpus,
                echo_cpus: Some(echo),
            }) => {
                let figures = rpclab_client::calibrate::calibrate_across(
                    Duration::from_secs_f64(seconds),
                    &cpus,
                    &echo,
                )
                .context("the cross-CPU loopback calibration failed")?;
                println!("{}", serde_json::to_string(&figures)?);
                Ok(())
            }
            Some(Command::Calibrate { seconds, cpus, .. }) => {
                let mut figures =
                    rpclab_client::calibrate::calibrate(Duration::from_secs_f64(seconds))
                        .context("the loopback calibration failed")?;
                figures.cpus = cpus;
                println!("{}", serde_json::to_string(&figures)?);
                Ok(())
            }
            None => run_direct(cli.direct).await,
        }
    });
    if let Err(e) = &outcome {
        if e.is::<Breached>() {
            eprintln!("error: {e}");
            std::process::exit(threshold::BREACH_EXIT_CODE);
        }
    }
    outcome
}

async fn run_spec(spec_path: &PathBuf, out: &PathBuf) -> Result<()> {
    let text = std::fs::read_to_string(spec_path)
        .with_context(|| format!("cannot read {}", spec_path.display()))?;
    let spec: CellSpec = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a valid cell spec", spec_path.display()))?;
    let run = runner::run_cell(&spec).await?;
    std::fs::create_dir_all(out)?;
    if let Some(name) = &run.report.hlog {
        std::fs::write(out.join(name), &run.hlog)
            .with_context(|| format!("cannot write {name}"))?;
    }
    let path = out.join("report.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&run.report)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    print_summary(&run.report);
    Ok(())
}

async fn run_direct(d: Direct) -> Result<()> {
    let protocol = match &d.generic.call {
        None => d.protocol,
        Some(_) => {
            Some(generic_protocol(d.protocol.as_deref(), d.generic.idl.is_some())?.to_owned())
        }
    };
    // With a registry, the provider is found there: no target is needed.
    let target = d
        .target
        .or_else(|| d.dubbo.registry.as_ref().map(|_| String::new()));
    let (Some(protocol), Some(target)) = (protocol, target) else {
        bail!(
            "give --protocol and --target to measure a running server (protocols: {}), or use a subcommand; see --help",
            protocols::NAMES.join(", ")
        );
    };
    let shape: Shape =
        serde_json::from_value(serde_json::Value::String(d.shape.clone())).map_err(|_| {
            anyhow::anyhow!(
                "unknown --shape `{}`; use client-programs, shared-client, thread-pool or users",
                d.shape
            )
        })?;
    let stop = match (d.calls, d.duration) {
        (_, Some(s)) => Stop::Seconds(s),
        (Some(n), None) if shape == Shape::ThreadPool => Stop::TotalCalls(n),
        (Some(n), None) => Stop::CallsPerWorker(n),
        (None, None) => Stop::Seconds(DEFAULT_SECONDS),
    };
    let load = match d.rate {
        None => Load::Closed(
            shape
                .closed(d.concurrency, d.pool.map(Pool::fixed), stop)
                .with_outstanding(d.outstanding),
        ),
        Some(rate) => Load::Open(OpenLoop {
            schedule: match d.arrival.as_str() {
                "constant" => Schedule::Constant { rate },
                "poisson" => Schedule::Poisson { rate },
                other => bail!("unknown --arrival `{other}`; use constant or poisson"),
            },
            connections: d.connections,
            max_in_flight: d.max_in_flight,
            seconds: d.duration.unwrap_or(DEFAULT_SECONDS),
        }),
    };
    let spec = CellSpec {
        protocol,
        target,
        operation: d.operation,
        load,
        warmup_s: d.warmup,
        warmup_calls: 0,
        warmup_max_s: d.warmup_max,
        steady: d.steady_intervals.map(|intervals| Steady {
            intervals,
            tolerance: d.steady_tolerance,
            interval_s: 1.0,
        }),
        min_calls: d.min_calls,
        percentiles: threshold::extra_percentiles(&d.threshold),
        cooldown_s: d.cooldown,
        timeout_ms: d.timeout.map_or(d.timeout_ms, |s| (s * 1e3).ceil() as u64),
        include_connect: false,
        options: d
            .option
            .into_iter()
            .chain(d.generic.options())
            .chain(d.dubbo.options())
            .chain(d.tls.options())
            .collect(),
        engine: d.engine,
    };
    if spec.protocol == IDL_PROTOCOL
        && (d.generic.metadata.is_some() || d.generic.metadata_file.is_some())
    {
        bail!(
            "Thrift calls carry no metadata: -m/-M are gRPC headers (grpc-generic) and Dubbo \
             attachments (dubbo-generic); remove them"
        );
    }
    let report = runner::run_cell(&spec).await?.report;
    if d.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_summary(&report);
    }
    if report.calls_ok == 0 {
        bail!("no call succeeded: {:?}", report.failures.examples);
    }
    let level = match d.rate {
        Some(rate) => format!("rate={rate}"),
        None => format!("c={}", d.concurrency),
    };
    let subject = format!("{} {} {level}", report.protocol, what_was_called(&report));
    let breaches = threshold::judge_all(&d.threshold, &subject, &Figures::of_report(&report));
    for breach in &breaches {
        eprintln!("{breach}");
    }
    if !breaches.is_empty() {
        return Err(Breached(breaches.len()).into());
    }
    Ok(())
}

/// The method a generic call called, or the contract's operation.
fn what_was_called(r: &ClientReport) -> String {
    match &r.call {
        Some(call) => call.method.clone(),
        None => r.operation.to_string(),
    }
}

/// How a streaming method's streams were made, in one line.
fn stream_line(s: &rpclab_model::result::StreamSetting) -> String {
    let mut line = format!("{} streaming, each call one stream", s.kind);
    if let Some(n) = s.call_count {
        line.push_str(&format!(", {n} messages"));
    }
    if let Some(us) = s.call_duration_us {
        line.push_str(&format!(", {} ms long", us as f64 / 1e3));
    }
    if let Some(us) = s.interval_us {
        line.push_str(&format!(", {} ms between messages sent", us as f64 / 1e3));
    }
    if s.dynamic_messages {
        line.push_str(", each message its own {{.RequestNumber}}");
    }
    line
}

fn print_summary(r: &ClientReport) {
    let l = &r.latency_us;
    println!(
        "{} {}: {} ok, {} failed in {:.3} s = {:.0} calls/s; latency us p50 {:.0} p90 {:.0} p99 {:.0} p99.9 {:.0} max {:.0}; bytes/call sent {:.0} received {:.0}",
        r.protocol, what_was_called(r), r.calls_ok, r.calls_failed, r.duration_s, r.throughput_per_s,
        l.p50, l.p90, l.p99, l.p999, l.max, r.bytes_sent_per_call, r.bytes_received_per_call
    );
    if let Some(call) = &r.call {
        println!(
            "  {} from {}; request {} bytes{}; replies {}",
            call.method,
            call.descriptors,
            call.request_bytes,
            if call.templates.is_empty() {
                String::new()
            } else {
                format!(" with {}", call.templates.join(", "))
            },
            if call.expected_reply {
                "compared with --expect"
            } else {
                "decoded as the output type"
            }
        );
    }
    if let Some(stream) = r.call.as_ref().and_then(|c| c.stream.as_ref()) {
        println!("  {}", stream_line(stream));
    }
    if let Some(m) = &r.messages {
        let l = &m.latency_us;
        println!(
            "  messages: {} sent = {:.0}/s, {} received = {:.0}/s; per-message latency us p50 {:.0} p90 {:.0} p99 {:.0} max {:.0}",
            m.sent, m.sent_per_s, m.received, m.received_per_s, l.p50, l.p90, l.p99, l.max
        );
    }
    if let Some(tls) = &r.tls {
        println!("  connections: {tls}");
    }
    for (name, view) in [
        ("service time", &r.service_time_us),
        ("send lag", &r.send_lag_us),
    ] {
        if let Some(l) = view {
            println!(
                "  {name} us: p50 {:.0} p99 {:.0} max {:.0}",
                l.p50, l.p99, l.max
            );
        }
    }
    for (class, example) in &r.failures.examples {
        println!("  {class}: {example}");
    }
}
