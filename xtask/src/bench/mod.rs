//! `bench client`: the load client's own ceiling.
//!
//! A lab number is only a server's number if the client was not the limit.
//! This command measures how far the client goes against the fastest server
//! at hand: `rpclab-echo`, a minimal tonic server of the contract's gRPC
//! service, started from the client image (entrypoint override) and pinned
//! to the server CPUs, while the client runs cells exactly as `lab run` runs
//! them (its own container, pinned to the client CPUs, a cell spec in a
//! folder mounted at `/cell`, see [`crate::engine::client_container`]).
//!
//! For every cell it prints calls/s, the client's CPU-µs per call and cores
//! busy (measured by the client itself over its window), calls/s per client
//! core (throughput / cores busy: what one client core sustains), the echo
//! server's cores busy (so a cell limited by the server, not the client, is
//! recognisable), latency p50/p99 and, for open loops, the send lag p99.
//!
//! Closed loops: 1, 16, 64 and 256 workers on one shared connection, and 64
//! workers over 4 connections. Open loops (Poisson): rates stepped up as
//! fractions of the best closed-loop throughput until the client no longer
//! sends the rate asked for, or `--rates`; the summary names the highest
//! rate whose calls went out on time (send lag p99 at most
//! [`SEND_LAG_LIMIT_US`]).
//!
//! Cells share the host with whatever else runs on it: pinning keeps the
//! lab's containers apart, not other processes off their CPUs. Each row
//! shows the host's 1-minute load average when the cell ended, so a noisy
//! cell can be told from a slow client.

mod generic;
mod peers;
mod session;
mod setup;

use crate::basics::host;
use crate::basics::run_id::RunId;
use crate::definitions::lab::Lab;
use crate::engine::client_container::{self, ClientCell, ClientRun};
use crate::engine::cost;
use crate::engine::docker::{ContainerSpec, Engine};
use crate::engine::images::{self, Builder};
use crate::engine::readiness;
use crate::engine::run_engine::RunEngine;
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use rpclab_model::contract::Operation;
use rpclab_model::limit;
use rpclab_model::result::{ClientReport, Cost};
use rpclab_model::spec::{CellSpec, Load, OpenLoop, Pool, Schedule, Shape, Stop};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Send lag p99 (µs) above which an open loop's calls went out late: the
/// client could not keep the schedule (the limit `lab run` flags, the
/// model's one rule: [`rpclab_model::limit`]).
pub const SEND_LAG_LIMIT_US: f64 = limit::LATE_SEND_US;

/// How long the echo server may take to answer a verified call.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// Open-loop rates tried without `--rates`, as fractions of the best
/// closed-loop throughput. The ladder stops early once the client no longer
/// sends the rate asked for (see [`KEPT_UP`]).
const OPEN_FRACTIONS: [f64; 6] = [0.1, 0.25, 0.5, 0.75, 0.9, 1.0];

/// Share of the asked rate below which an open loop is past saturation:
/// its calls queue without bound and higher rates measure nothing new.
const KEPT_UP: f64 = 0.95;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Measure the load client's ceiling against a tonic echo server pinned on its own CPUs.
    Client(ClientArgs),
    /// Run the load client beside the raw-socket floor, ghz, h2load and wrk
    /// on gRPC, Hessian, Thrift, Ice, Dubbo, motan2 and bolt servers, and
    /// write the table into docs/client-ceiling.md.
    Peers(peers::PeersArgs),
}

#[derive(Args)]
pub struct ClientArgs {
    /// Measurement window of each cell (`5s`, `500ms`, or seconds).
    #[arg(long = "duration", alias = "duration-s", value_name = "DURATION", default_value = "5", value_parser = rpclab_model::duration::parse_seconds)]
    duration_s: f64,
    /// Warm-up before each cell's window (`5s`, `500ms`, or seconds).
    #[arg(long = "warmup", alias = "warmup-s", value_name = "DURATION", default_value = "2", value_parser = rpclab_model::duration::parse_seconds_or_zero)]
    warmup_s: f64,
    /// CPU set of the echo server (cpuset syntax), overriding the lab definition.
    #[arg(long)]
    server_cpus: Option<String>,
    /// CPU set of the client (cpuset syntax), overriding the lab definition.
    #[arg(long)]
    client_cpus: Option<String>,
    /// Operation of the contract every cell calls.
    #[arg(long, default_value = "hello")]
    operation: Operation,
    /// Open-loop rates (calls/s) instead of fractions of the best closed loop.
    #[arg(long, value_delimiter = ',')]
    rates: Vec<f64>,
    /// Open loop: calls in flight at most (senders), over one connection.
    #[arg(long, default_value_t = 128)]
    max_in_flight: u32,
    /// Port of the echo server on 127.0.0.1.
    #[arg(long, default_value_t = 50052)]
    port: u16,
    /// Lab definition whose [build] and [cpus] sections apply (images are shared with `lab run`).
    #[arg(long, default_value = "compose/lab.toml")]
    lab: PathBuf,
    /// Keep every cell's spec, report and client log in this folder
    /// (default: a temporary folder, removed afterwards).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Show build output and the client's whole log.
    #[arg(long, short)]
    verbose: bool,
    /// Instead of the echo ladder: what a generic gRPC call costs the
    /// client, against fixtures/grpc-shop (its static binary built as
    /// fixtures/servers/grpc-shop/Dockerfile says): a fixed unary call, a
    /// templated one, and bidirectional streams of fixed and templated
    /// messages, each at 16 workers on one connection, every reply
    /// verified (docs/your-own-service.md, "What a templated call costs").
    #[arg(long)]
    generic: bool,
}

pub async fn run(root: &Path, command: BenchCommand) -> Result<()> {
    match command {
        BenchCommand::Client(args) => client(root, args).await,
        BenchCommand::Peers(args) => peers::run(root, args).await,
    }
}

/// What [`Bench::start_server`] starts: its container's name part, its
/// environment, the binary and its arguments, the folders it mounts.
struct Server<'a> {
    name: &'a str,
    env: Vec<String>,
    entrypoint: String,
    cmd: Option<Vec<String>>,
    binds: Vec<String>,
}

/// One measured cell, as printed and as written to `bench.json`.
#[derive(Serialize)]
struct Row {
    cell: String,
    /// Open loop: the rate asked for.
    target_rate: Option<f64>,
    report: ClientReport,
    server_cost: Option<Cost>,
    /// The host's 1-minute load average when the cell ended.
    host_load: Option<f64>,
}

impl Row {
    fn client_cost(&self) -> Option<Cost> {
        self.report.client_cost
    }

    /// Calls/s one client core sustains: throughput over client cores busy.
    fn per_client_core(&self) -> Option<f64> {
        let c = self.client_cost()?;
        (c.cpu_cores_busy > 0.0).then(|| self.report.throughput_per_s / c.cpu_cores_busy)
    }

    fn send_lag_p99(&self) -> Option<f64> {
        self.report.send_lag_us.map(|l| l.p99)
    }

    /// What saturated: the server's or the client's CPUs, or neither (the
    /// loop's concurrency and latency set the rate), by the thresholds of
    /// [`rpclab_model::limit`]. Unlike a lab cell's judgement, late sends
    /// come first, and a busy client counts in an open loop too: this
    /// column is about the client, whose ceiling the command measures.
    fn limit(&self, server_cores: usize, client_cores: usize) -> &'static str {
        let busy = |c: Option<Cost>, cores: usize| {
            c.is_some_and(|c| limit::full(c.cpu_cores_busy / cores.max(1) as f64))
        };
        if self.send_lag_p99().is_some_and(limit::sends_late) {
            "late sends"
        } else if busy(self.server_cost, server_cores) {
            "server CPU"
        } else if busy(self.client_cost(), client_cores) {
            "client CPU"
        } else {
            "-"
        }
    }
}

struct Bench<'a> {
    engine: &'a Engine,
    run_id: &'a RunId,
    server_cpus: &'a str,
    client_cpus: &'a str,
    out: &'a Path,
    args: &'a ClientArgs,
    rows: Vec<Row>,
    /// `rpclab-floor`'s rows, printed beside the client's.
    floor: Vec<String>,
}

async fn client(root: &Path, args: ClientArgs) -> Result<()> {
    if !(args.duration_s > 0.0 && args.warmup_s >= 0.0) {
        bail!("--duration must be positive and --warmup zero or positive");
    }
    let setup::Setup {
        lab,
        engine,
        host,
        server_cpus,
        client_cpus,
    } = setup::set_up(
        &args.lab,
        args.server_cpus.as_deref(),
        args.client_cpus.as_deref(),
    )
    .await?;
    let session = session::Session::open("bench", &engine, args.out.as_deref())?;
    eprintln!(
        "bench client: {} on {} ({} cores); the server on cpus {server_cpus}, client on cpus {client_cpus}{}",
        if args.generic {
            "generic gRPC calls to grpc-shop".to_owned()
        } else {
            args.operation.to_string()
        },
        host.cpu_model,
        host.cores,
        if server_cpus == client_cpus {
            " (shared: this host has too few cores to separate them)"
        } else {
            ""
        }
    );

    let mut bench = Bench {
        engine: &engine,
        run_id: &session.run_id,
        server_cpus: &server_cpus,
        client_cpus: &client_cpus,
        out: &session.dir,
        args: &args,
        rows: Vec::new(),
        floor: Vec::new(),
    };
    let (outcome, removed) = session.run(bench.run_all(root, &lab)).await;
    if !bench.rows.is_empty() {
        let json = serde_json::to_vec_pretty(&bench.rows)?;
        std::fs::write(session.dir.join("bench.json"), json)?;
        println!("{}", bench.summary());
    }
    session.close(outcome, removed)
}

impl Bench<'_> {
    async fn run_all(&mut self, root: &Path, lab: &Lab) -> Result<()> {
        let mut builder = Builder::new(self.engine, root, &lab.def.build, self.args.verbose);
        let binaries = session::build_client(&mut builder, root).await?;
        if self.args.generic {
            return self.run_generic(root).await;
        }

        let echo = self.start_echo().await?;
        let target = format!("127.0.0.1:{}", self.args.port);
        let options = BTreeMap::new();
        readiness::wait(
            self.engine,
            readiness::Probe {
                operation: self.args.operation,
                timeout: READY_TIMEOUT,
                ..readiness::Probe::on_host(
                    "rpclab-echo",
                    &echo,
                    "grpc",
                    &options,
                    &target,
                    self.run_id,
                )
            },
        )
        .await?;
        print_header();

        let window = Stop::Seconds(self.args.duration_s);
        let closed = [
            (
                "closed 1 worker, 1 conn",
                Shape::SharedClient.closed(1, None, window),
            ),
            (
                "closed 16 workers, 1 conn",
                Shape::SharedClient.closed(16, None, window),
            ),
            (
                "closed 64 workers, 1 conn",
                Shape::SharedClient.closed(64, None, window),
            ),
            (
                "closed 256 workers, 1 conn",
                Shape::SharedClient.closed(256, None, window),
            ),
            (
                "closed 64 workers, 4 conns",
                Shape::Users.closed(64, Some(Pool::fixed(4)), window),
            ),
        ];
        for (name, model) in closed {
            self.cell(name, None, Load::Closed(model), &target, &echo)
                .await?;
        }
        self.floor(&binaries.client, &echo).await;

        let best = self
            .rows
            .iter()
            .map(|r| r.report.throughput_per_s)
            .fold(0.0, f64::max);
        let rates: Vec<f64> = if self.args.rates.is_empty() {
            OPEN_FRACTIONS
                .iter()
                .map(|f| round_rate(f * best))
                .collect()
        } else {
            self.args.rates.clone()
        };
        for rate in rates.into_iter().filter(|r| *r > 0.0) {
            let load = Load::Open(OpenLoop {
                schedule: Schedule::Poisson { rate },
                connections: 1,
                max_in_flight: self.args.max_in_flight,
                seconds: self.args.duration_s,
            });
            let name = format!("open Poisson {rate:.0}/s");
            let achieved = self
                .cell(&name, Some(rate), load, &target, &echo)
                .await?
                .report
                .throughput_per_s;
            // Past saturation, higher rates only measure a longer queue.
            // (A late-send spike alone does not stop the ladder: on a busy
            // host it can come from another process taking the CPU.)
            if self.args.rates.is_empty() && achieved < KEPT_UP * rate {
                break;
            }
        }
        Ok(())
    }

    /// The raw-socket floor beside the client: `rpclab-floor` over raw
    /// HTTP/2 (see [`peers::floor_rows`]). Only for `hello`, the request it
    /// records; a failure is reported, not fatal (the floor is a yardstick).
    async fn floor(&mut self, client: &Path, echo: &str) {
        if self.args.operation != Operation::Hello {
            eprintln!("floor: only measured for `hello`");
            return;
        }
        match peers::floor_rows(
            self.engine,
            echo,
            client,
            self.args.port,
            self.client_cpus,
            self.args.warmup_s,
            self.args.duration_s,
        )
        .await
        {
            Ok(lines) => {
                for l in &lines {
                    println!("{l}");
                }
                self.floor = lines;
            }
            Err(e) => eprintln!("floor: not measured ({e:#})"),
        }
    }

    /// Starts `rpclab-echo` from the client image, pinned to the server
    /// CPUs and labelled like every lab container.
    ///
    async fn start_echo(&self) -> Result<String> {
        let port = self.args.port;
        if let Err(e) = std::net::TcpListener::bind(("127.0.0.1", port)) {
            bail!(
                "port {port} on 127.0.0.1, which the echo server needs, is already in use ({e}); \
                 stop whatever listens there or pass --port"
            );
        }
        let id = self
            .start_server(Server {
                name: "echo",
                env: vec![format!("RPCLAB_PORT={port}")],
                entrypoint: host::ECHO_BINARY.to_owned(),
                cmd: None,
                binds: Vec::new(),
            })
            .await?;
        eprintln!(
            "started rpclab-echo on 127.0.0.1:{port} (cpus {})",
            self.server_cpus
        );
        Ok(id)
    }

    /// A server of the bench (a binary of the client's image, or one the
    /// container mounts) on the server's CPUs and the host's network, as
    /// confined as the echo server; its container's id.
    async fn start_server(&self, server: Server<'_>) -> Result<String> {
        self.engine
            .start(ContainerSpec {
                name: format!("rpclab-{}-{}", server.name, self.run_id),
                image: images::CLIENT,
                role: crate::basics::role::Role::Server.into(),
                run_id: self.run_id,
                env: server.env,
                entrypoint: Some(vec![server.entrypoint]),
                cmd: server.cmd,
                cpuset: self.server_cpus,
                binds: server.binds,
                confinement: &crate::basics::confine::echo(),
                network: &crate::engine::docker::Network::Host,
            })
            .await
    }

    /// The spec of a cell of `load` on the contract's gRPC at `target`,
    /// with this bench's warm-up.
    fn spec(&self, load: Load, target: &str) -> CellSpec {
        CellSpec {
            protocol: "grpc".into(),
            target: target.to_owned(),
            operation: self.args.operation,
            load,
            warmup_s: self.args.warmup_s,
            warmup_calls: 0,
            warmup_max_s: None,
            steady: None,
            min_calls: rpclab_model::spec::DEFAULT_MIN_CALLS,
            percentiles: Vec::new(),
            cooldown_s: 0.5,
            timeout_ms: 5_000,
            include_connect: false,
            options: BTreeMap::new(),
            engine: Default::default(),
        }
    }

    /// Runs one cell of `load` against the echo server and prints its row.
    async fn cell(
        &mut self,
        name: &str,
        target_rate: Option<f64>,
        load: Load,
        target: &str,
        echo: &str,
    ) -> Result<&Row> {
        let spec = self.spec(load, target);
        self.measure(name, target_rate, &spec, echo, None).await
    }

    /// Runs `spec` in the client container against the server in container
    /// `server` (with `files` mounted for its options) and prints its row.
    async fn measure(
        &mut self,
        name: &str,
        target_rate: Option<f64>,
        spec: &CellSpec,
        server: &str,
        files: Option<&Path>,
    ) -> Result<&Row> {
        let echo = server;
        let engine = RunEngine::Docker(self.engine.clone());
        let dir = self
            .out
            .join(format!("{:02}-{}", self.rows.len() + 1, slug(name)));
        let ClientRun {
            report,
            log,
            server_cost,
            ..
        } = client_container::run_client(
            &engine,
            ClientCell {
                run_id: self.run_id,
                client_cpus: self.client_cpus,
                dir: &dir,
                spec,
                label: name,
                server: Some((&engine, echo)),
                registry: None,
                host: None,
                verbose: self.args.verbose,
                clock_offset_s: 0.0,
                network: &crate::engine::docker::Network::Host,
                files,
            },
        )
        .await
        .with_context(|| format!("cell `{name}` failed"))?;
        if let Some(code) = self.engine.exit_code(echo).await? {
            let log = self.engine.log_tail(echo, 20).await;
            bail!("the server exited with code {code} during `{name}`:\n{log}");
        }
        if report.calls_failed > 0 && !self.args.verbose {
            let tail: Vec<&str> = log.lines().rev().take(5).collect();
            eprintln!(
                "    {} failed call(s); the client's last lines:\n      {}",
                report.calls_failed,
                tail.into_iter().rev().collect::<Vec<_>>().join("\n      ")
            );
        }
        let row = Row {
            cell: name.to_owned(),
            target_rate,
            report,
            server_cost,
            host_load: host::load_average(),
        };
        println!(
            "{}",
            format_row(
                &row,
                cost::cpuset_len(self.server_cpus),
                cost::cpuset_len(self.client_cpus)
            )
        );
        self.rows.push(row);
        Ok(self.rows.last().expect("just pushed"))
    }

    /// The whole table again, and the ceiling it shows.
    fn summary(&self) -> String {
        if self.args.generic {
            return self.generic_summary();
        }
        let (server_cores, client_cores) = (
            cost::cpuset_len(self.server_cpus),
            cost::cpuset_len(self.client_cpus),
        );
        let mut out = format!(
            "\nclient ceiling, grpc {} (echo server on cpus {}, client on cpus {}, {} s windows):\n{}\n",
            self.args.operation,
            self.server_cpus,
            self.client_cpus,
            self.args.duration_s,
            header()
        );
        for row in &self.rows {
            out.push_str(&format_row(row, server_cores, client_cores));
            out.push('\n');
        }
        if !self.floor.is_empty() {
            out.push_str(
                "rpclab-floor (host process pinned to the client CPUs, raw HTTP/2, one call per connection, no decoding):\n",
            );
            for l in &self.floor {
                out.push_str(l);
                out.push('\n');
            }
        }
        let closed = self
            .rows
            .iter()
            .filter(|r| matches!(r.report.load, Load::Closed(_)));
        if let Some(best) = closed.max_by(|a, b| {
            a.report
                .throughput_per_s
                .total_cmp(&b.report.throughput_per_s)
        }) {
            out.push_str(&format!(
                "closed loop: best {:.0} calls/s ({}), {:.0} calls/s per client core, {:.1} client CPU-µs per call\n",
                best.report.throughput_per_s,
                best.cell,
                best.per_client_core().unwrap_or(0.0),
                best.client_cost().map_or(0.0, |c| c.cpu_us_per_call),
            ));
        }
        let on_time = self
            .rows
            .iter()
            .filter(|r| r.target_rate.is_some())
            .filter(|r| r.send_lag_p99().is_some_and(|l| !limit::sends_late(l)))
            .max_by(|a, b| {
                a.report
                    .throughput_per_s
                    .total_cmp(&b.report.throughput_per_s)
            });
        if let Some(r) = on_time {
            out.push_str(&format!(
                "open loop: highest rate sent on time (send lag p99 <= {:.0} µs): {:.0} calls/s ({})\n",
                SEND_LAG_LIMIT_US, r.report.throughput_per_s, r.cell
            ));
        } else if self.rows.iter().any(|r| r.target_rate.is_some()) {
            out.push_str(&format!(
                "open loop: no rate was sent on time (send lag p99 <= {SEND_LAG_LIMIT_US:.0} µs)\n"
            ));
        }
        out
    }
}

fn header() -> String {
    format!(
        "{:<28} {:>9} {:>9} {:>11} {:>7} {:>7} {:>8} {:>8} {:>8} {:>7} {:>5}  {}",
        "cell",
        "calls/s",
        "cpu-µs/c",
        "calls/s/cc",
        "cli cc",
        "srv cc",
        "p50 µs",
        "p99 µs",
        "lag p99",
        "failed",
        "load",
        "limit"
    )
}

fn print_header() {
    println!("{}", header());
}

fn format_row(row: &Row, server_cores: usize, client_cores: usize) -> String {
    let r = &row.report;
    let opt = |v: Option<f64>, precision: usize| {
        v.map_or_else(|| "-".to_owned(), |v| format!("{v:.precision$}"))
    };
    format!(
        "{:<28} {:>9.0} {:>9} {:>11} {:>7} {:>7} {:>8.0} {:>8.0} {:>8} {:>7} {:>5}  {}",
        row.cell,
        r.throughput_per_s,
        opt(row.client_cost().map(|c| c.cpu_us_per_call), 1),
        opt(row.per_client_core(), 0),
        opt(row.client_cost().map(|c| c.cpu_cores_busy), 2),
        opt(row.server_cost.map(|c| c.cpu_cores_busy), 2),
        r.latency_us.p50,
        r.latency_us.p99,
        opt(row.send_lag_p99(), 0),
        r.calls_failed,
        opt(row.host_load, 1),
        row.limit(server_cores, client_cores)
    )
}

/// A rate rounded to two significant digits, so that the table reads well.
fn round_rate(rate: f64) -> f64 {
    if rate < 100.0 {
        return rate.round().max(1.0);
    }
    let scale = 10f64.powi(rate.log10().floor() as i32 - 1);
    (rate / scale).round() * scale
}

fn slug(name: &str) -> String {
    let mut s = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    s.trim_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_round_to_two_significant_digits() {
        assert_eq!(round_rate(23_456.0), 23_000.0);
        assert_eq!(round_rate(8_750.0), 8_800.0);
        assert_eq!(round_rate(42.4), 42.0);
    }

    #[test]
    fn cell_names_become_folder_names() {
        assert_eq!(slug("open Poisson 5000/s"), "open-poisson-5000-s");
        assert_eq!(
            slug("closed 64 workers, 4 conns"),
            "closed-64-workers-4-conns"
        );
    }
}
