//! Runs one measurement cell: connect, warm up, measure, cool down, report.
//!
//! What a window counts is decided once: the load models keep the calls
//! that completed in it, and [`crate::window::Figures`] derives every
//! per-call figure from exactly those calls.
//!
//! The runner owns time. It opens the connections, starts the load model,
//! moves the shared [`Phase`] at the window boundaries and, when the load
//! model returns, merges the workers' stats into a [`ClientReport`].
//!
//! Phase changes are also printed to standard error as lines starting with
//! [`PHASE_MARKER`], so that the orchestrator, which follows the client's
//! log, can read the server's CPU counters at the same moments.

use crate::load::{Clock, LoadModel, Phase, Run};
use crate::poll_loop;
use crate::stats::{latency_summary, percentile_us, WorkerStats};
use crate::warmup::{warm_up, Signal};
use crate::window::{Edges, Figures};
use rpclab_model::result::{ClientReport, StreamMessages};
use rpclab_model::spec::{CellSpec, ClosedLoop, EngineChoice, Load};
use rpclab_protocols::protocol::{CallError, Protocol, WireCounter};
use rpclab_protocols::protocols::{dispatch, WithProtocol};
use self_cost::{peak_rss, process_context_switches, process_cpu_time};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Prefix of the machine-readable phase lines on standard error.
pub const PHASE_MARKER: &str = "rpclab-phase:";

/// The prefix of the client's once-a-second progress line on stderr,
/// which the orchestrator shows on its progress bar ([`crate::live`]).
pub use crate::live::PROGRESS_MARKER;

/// A finished cell: the report and its interval log.
pub struct CellRun {
    pub report: ClientReport,
    /// The `.hlog` text (see [`crate::stats::IntervalSink::to_hlog`]).
    pub hlog: Vec<u8>,
}

/// Runs `spec` and returns its report. Errors are reserved for cells that
/// could not run at all (bad spec, no connection); failed calls are counted
/// in the report.
pub async fn run_cell(spec: &CellSpec) -> Result<CellRun, CallError> {
    spec.validate().map_err(CallError::Config)?;
    dispatch(&spec.protocol, &spec.options, CellJob { spec }).await?
}

struct CellJob<'a> {
    spec: &'a CellSpec,
}

impl WithProtocol for CellJob<'_> {
    type Output = Result<CellRun, CallError>;

    async fn run<P: Protocol>(self, protocol: P) -> Self::Output {
        let spec = self.spec;
        match &spec.load {
            Load::Closed(model) => match poll_exchanges(&protocol, spec, model)? {
                Some(exchanges) => {
                    run_model(&protocol, spec, model, Engine::Poll(model, exchanges)).await
                }
                None => run_model(&protocol, spec, model, Engine::Tasks).await,
            },
            Load::Open(model) => run_model(&protocol, spec, model, Engine::Tasks).await,
        }
    }
}

/// Which engine makes a cell's calls.
enum Engine<'a, E> {
    /// Tokio tasks over the protocol's connections: every load model.
    Tasks,
    /// The poll engine over sans-IO exchanges ([`crate::poll_loop`]): a
    /// closed loop with one call in flight per connection, when the
    /// protocol offers an exchange.
    Poll(&'a ClosedLoop, Vec<E>),
}

/// One exchange per connection, when the poll engine can run the cell: a
/// closed loop it is eligible for ([`poll_loop::eligible`]), a protocol
/// with an exchange for the call, connections opened before the window
/// (a cell that counts connection set-up measures the protocol's own
/// connect), and not turned off by the cell (`engine = "tasks"`).
fn poll_exchanges<P: Protocol>(
    protocol: &P,
    spec: &CellSpec,
    model: &ClosedLoop,
) -> Result<Option<Vec<P::Exchange>>, CallError> {
    let connections = spec.load.connections();
    if spec.include_connect
        || spec.engine == EngineChoice::Tasks
        || !poll_loop::eligible(model, connections)
    {
        return Ok(None);
    }
    let call = spec.operation.call();
    let mut exchanges = Vec::with_capacity(connections as usize);
    for _ in 0..connections {
        match protocol.exchange_to(&call, &spec.target)? {
            Some(exchange) => exchanges.push(exchange),
            None => return Ok(None),
        }
    }
    Ok(Some(exchanges))
}

async fn connect_all<P: Protocol>(
    protocol: &P,
    target: &str,
    n: u32,
    counter: &WireCounter,
) -> Result<Vec<Arc<P::Conn>>, CallError> {
    let mut conns = Vec::with_capacity(n as usize);
    for _ in 0..n {
        conns.push(Arc::new(protocol.connect(target, counter.clone()).await?));
    }
    Ok(conns)
}

/// A cell's open connections, for the engine that makes its calls.
enum Connections<'a, C, E> {
    Tasks(Vec<Arc<C>>),
    Poll(&'a ClosedLoop, Vec<poll_loop::Link<E>>),
}

/// Name of the tokio tasks engine in reports.
pub const TASKS_ENGINE: &str = "tasks";

fn phase_line(phase: &str) {
    // For the orchestrator, which reads a container's log; in a terminal
    // the live panel says the phase ([`crate::live`]).
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!("{PHASE_MARKER} {phase}");
    }
}

async fn run_model<P: Protocol, M: LoadModel>(
    protocol: &P,
    spec: &CellSpec,
    model: &M,
    engine: Engine<'_, P::Exchange>,
) -> Result<CellRun, CallError> {
    let counter = WireCounter::default();
    let cooldown = Duration::from_secs_f64(spec.cooldown_s);
    let open_loop = matches!(spec.load, Load::Open(_));

    let connect_start = Instant::now();
    let connections = match engine {
        Engine::Tasks => Connections::Tasks(
            connect_all(protocol, &spec.target, spec.load.connections(), &counter).await?,
        ),
        Engine::Poll(closed, exchanges) => {
            Connections::Poll(closed, poll_loop::connect_all(&spec.target, exchanges)?)
        }
    };
    let connect_time = connect_start.elapsed();
    let (engine_name, opened) = match &connections {
        Connections::Tasks(c) => (TASKS_ENGINE, c.len()),
        Connections::Poll(_, links) => (poll_loop::ENGINE, links.len()),
    };

    // A cell that counts connection set-up measures from the first connect,
    // with no warm-up; every other cell warms up first.
    // The warm-up waits for the connections that carry calls: a pool
    // larger than its callers keeps the rest open and idle.
    let used = (spec.load.used_connections() as usize).clamp(1, opened.max(1));
    let clock = Clock::new(model.workers(), used, spec.include_connect);
    let timeout = Duration::from_millis(spec.timeout_ms);
    let keep_load_until_done = !cooldown.is_zero();
    let drive = async {
        match connections {
            Connections::Tasks(connections) => {
                let run = Run {
                    connections,
                    call: Arc::new(spec.operation.call()),
                    timeout,
                    clock: Arc::clone(&clock),
                    keep_load_until_done,
                };
                model.drive(run).await
            }
            Connections::Poll(closed, links) => {
                let plan = poll_loop::Plan {
                    target: spec.target.clone(),
                    timeout,
                    clock: Arc::clone(&clock),
                    keep_load_until_done,
                    counter: counter.clone(),
                };
                poll_loop::drive(closed, links, plan).await
            }
        }
    };

    let controller = async {
        let warmup = if spec.include_connect {
            None
        } else {
            phase_line("warmup");
            let signal = if open_loop {
                Signal::ServiceTime
            } else {
                Signal::Throughput
            };
            match warm_up(&clock, spec, signal).await {
                Ok(record) => {
                    clock.start_measuring();
                    Some(record)
                }
                Err(why) => {
                    // Every caller stops at its next call.
                    clock.set(Phase::Done);
                    return Err(why);
                }
            }
        };
        phase_line("measure");
        let window_start = unix_seconds();
        let cpu_start = process_cpu_time();
        let switches_start = process_context_switches();
        let bytes_at_start = counter.totals();
        let start = if spec.include_connect {
            connect_start
        } else {
            Instant::now()
        };
        // The window ends by time or by calls, or at once when the
        // service's replies turned wrong (`crate::wrong_replies`).
        let window = async {
            match model.timed_window() {
                Some(window) => tokio::time::sleep(window).await,
                None => clock.wait_all_finished().await,
            }
        };
        tokio::select! {
            () = window => {}
            () = clock.stopped() => {}
        }
        if let Some(why) = clock.wrong_service() {
            return Err(CallError::WrongResponse(why));
        }
        clock.set(Phase::Cooldown);
        let duration = start.elapsed();
        let bytes_at_end = counter.totals();
        let edges = Edges {
            duration,
            cpu: process_cpu_time().saturating_sub(cpu_start),
            bytes_sent: bytes_at_end.0 - bytes_at_start.0,
            bytes_received: bytes_at_end.1 - bytes_at_start.1,
            memory_peak: peak_rss(),
            context_switches: process_context_switches().saturating_sub(switches_start),
        };
        let window = [window_start, unix_seconds()];
        phase_line("cooldown");
        tokio::time::sleep(cooldown).await;
        clock.set(Phase::Done);
        Ok((edges, window, warmup))
    };
    let what = format!("{} {}", P::NAME, spec.target);
    let progress = crate::live::show(&clock, &what);
    let (stats, controlled) = tokio::select! {
        both = async { tokio::join!(drive, controller) } => both,
        _ = progress => unreachable!("progress reporting never ends"),
    };
    phase_line("done");
    // A run stopped by wrong replies says how many calls it made in all:
    // the count is the bound a user (and a test) can check.
    let (edges, window, warmup) = controlled.map_err(|e| match e {
        CallError::WrongResponse(why) => CallError::WrongResponse(format!(
            "{why} ({} calls made in all)",
            clock.completed_calls()
        )),
        other => other,
    })?;

    let mut total = WorkerStats::default();
    for s in stats {
        total.merge(s);
    }
    let hlog = match clock.sink() {
        Some(sink) => sink
            .to_hlog(&format!(
                "rpclab {} {} {}",
                P::NAME,
                spec.operation,
                spec.target
            ))
            .map_err(CallError::Io)?,
        None => Vec::new(),
    };
    // Every figure below comes from this one set of calls.
    let figures = Figures::of(&total, &edges);
    let call = protocol.generic_call();
    let messages = call
        .as_ref()
        .and_then(|c| c.stream.as_ref())
        .map(|_| StreamMessages {
            sent: total.messages_sent,
            received: total.messages_received(),
            sent_per_s: figures.messages_sent_per_s,
            received_per_s: figures.messages_received_per_s,
            latency_us: latency_summary(&total.message_latency),
        });
    let report = ClientReport {
        protocol: P::NAME.to_owned(),
        connection_model: P::CONNECTION_MODEL.to_owned(),
        engine: Some(engine_name.to_owned()),
        operation: spec.operation,
        load: spec.load.clone(),
        calls_ok: figures.calls_ok,
        calls_failed: figures.calls_failed,
        duration_s: figures.duration_s,
        throughput_per_s: figures.throughput_per_s,
        latency_us: latency_summary(&total.latency),
        percentiles_us: spec
            .percentiles
            .iter()
            .map(|p| (*p, percentile_us(&total.latency, *p)))
            .collect(),
        service_time_us: open_loop.then(|| latency_summary(&total.service)),
        send_lag_us: open_loop.then(|| latency_summary(&total.send_lag)),
        connect_ms: spec
            .include_connect
            .then_some(connect_time.as_secs_f64() * 1e3),
        bytes_sent_per_call: figures.bytes_sent_per_call,
        bytes_received_per_call: figures.bytes_received_per_call,
        failures: total.failures,
        client_cost: Some(figures.client_cost),
        window_unix_s: Some(window),
        verified: true,
        hlog: (!hlog.is_empty()).then(|| HLOG_FILE.to_owned()),
        warmup,
        min_calls: spec.min_calls,
        tls: protocol.tls(),
        call,
        messages,
    };
    Ok(CellRun { report, hlog })
}

/// Wall-clock time in seconds since the epoch: containers share the host's
/// clock, so the orchestrator can place the window on its own samples.
fn unix_seconds() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Name of the interval log in a cell's directory.
pub const HLOG_FILE: &str = "latency.hlog";
