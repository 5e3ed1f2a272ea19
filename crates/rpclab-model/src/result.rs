//! What the load client reports for one cell.
//!
//! [`ClientReport`] is the client's whole answer for a cell; the orchestrator
//! wraps it with what only it knows (server, variant, repetition, server-side
//! cost) into a [`Cell`], one row of `results.json`. The schema is versioned
//! by [`SCHEMA_VERSION`] and documented in `docs/results-schema.md`.

use crate::contract::Operation;
use crate::percentile::Percentile;
use crate::spec::Load;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of `results.json`; bump it on any incompatible change.
pub const SCHEMA_VERSION: u32 = 2;

/// Latency percentiles in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl Latency {
    /// The percentile `p` when these figures keep it (0 is `min`, 50, 90,
    /// 95, 99, 99.9, 100 is `max`), µs; any other is a cell's extra
    /// percentile ([`ClientReport::percentiles_us`]).
    pub fn stored(&self, p: Percentile) -> Option<f64> {
        Some(match p {
            Percentile::MIN => self.min,
            Percentile::P50 => self.p50,
            Percentile::P90 => self.p90,
            Percentile::P95 => self.p95,
            Percentile::P99 => self.p99,
            Percentile::P999 => self.p999,
            Percentile::MAX => self.max,
            _ => return None,
        })
    }
}

/// CPU time and memory a container spent over the measurement window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// CPU time over the window, all threads.
    pub cpu_ms: f64,
    /// CPU time per call (successful or not).
    pub cpu_us_per_call: f64,
    /// Average number of cores busy over the window.
    pub cpu_cores_busy: f64,
    /// Peak memory of the container (cgroup high-water mark).
    pub memory_peak_mib: f64,
    /// Context switches (voluntary and not) of all its threads per call,
    /// over the window: where a rate changes with the same work per call,
    /// how often the threads slept and woke tells one cause from another.
    /// Absent where the container's processes are not visible here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_switches_per_call: Option<f64>,
    /// CPU time of the JVM's JIT compiler threads over the window, ms: a
    /// cell measured while its server still compiles its call path is
    /// measuring the compiler too. Absent where the container's threads are
    /// not visible here (and in snapshots before it was kept); 0 for a
    /// server without a JIT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler_cpu_ms: Option<f64>,
}

/// Why calls failed, by class.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failures {
    pub timeout: u64,
    pub connect: u64,
    pub io: u64,
    pub protocol: u64,
    pub server_error: u64,
    pub wrong_response: u64,
    /// First message seen per class, so a failed run explains itself.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub examples: BTreeMap<String, String>,
}

impl Failures {
    /// Each kind's count, named as [`Failures::examples`] keys its example.
    pub fn by_kind(&self) -> [(&'static str, u64); 6] {
        [
            ("timeout", self.timeout),
            ("connect", self.connect),
            ("io", self.io),
            ("protocol", self.protocol),
            ("server_error", self.server_error),
            ("wrong_response", self.wrong_response),
        ]
    }

    pub fn total(&self) -> u64 {
        self.timeout
            + self.connect
            + self.io
            + self.protocol
            + self.server_error
            + self.wrong_response
    }
}

/// The client's report for one cell.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClientReport {
    pub protocol: String,
    /// How the protocol used its connections (multiplexed, one call in
    /// flight, keep-alive pool...).
    pub connection_model: String,
    /// Which of the client's engines made the calls: `tasks` (tokio tasks)
    /// or `poll` (one `epoll` loop over sans-IO exchanges, for a closed loop
    /// with one call in flight per connection; `client/src/poll_loop.rs`).
    /// Absent in snapshots made before there were two: `tasks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    pub operation: Operation,
    pub load: Load,
    pub calls_ok: u64,
    pub calls_failed: u64,
    pub failures: Failures,
    /// Length of the measurement window in seconds.
    pub duration_s: f64,
    pub throughput_per_s: f64,
    /// Closed loop: send to reply. Open loop: from when the call was *due*
    /// to its reply (corrected for coordinated omission).
    pub latency_us: Latency,
    /// The percentiles of `latency_us`'s calls that a cell asked beyond
    /// those it keeps (`spec::CellSpec::percentiles`, for a threshold such
    /// as `p(97.5)<2ms` or `lab capacity --percentile 97.5`), µs, by
    /// percentile (`p97.5`). Added compatibly to schema version 2 on
    /// 2026-12-07; absent when none was asked.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub percentiles_us: BTreeMap<Percentile, f64>,
    /// Open loop only: send to reply (uncorrected service time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_time_us: Option<Latency>,
    /// Open loop only: how late calls were sent after they were due (the
    /// client's own lag; large values mean the client or its in-flight limit
    /// shaped the result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_lag_us: Option<Latency>,
    /// Connection set-up time, when the spec counted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_ms: Option<f64>,
    /// Bytes on the wire per call during the measurement window (both
    /// directions, TCP payload, framing included).
    pub bytes_sent_per_call: f64,
    pub bytes_received_per_call: f64,
    /// Start and end of the measurement window, wall clock (seconds since
    /// the Unix epoch), so that other processes' counters can be placed on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_unix_s: Option<[f64; 2]>,
    /// The client process's own CPU time and memory over the window,
    /// measured from inside (exact window, all threads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cost: Option<Cost>,
    /// Every reply was compared with the expected value; a mismatch counts as
    /// a failed call (`failures.wrong_response`).
    pub verified: bool,
    /// File name (in the cell's directory) of the HdrHistogram log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hlog: Option<String>,
    /// How the warm-up before the window went (absent in older snapshots
    /// and when the cell counts connection set-up, which has no warm-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Warmup>,
    /// Fewer calls than this completed in the window make the cell
    /// [`CellFlag::TooFewCalls`]: its figures rest on too little.
    #[serde(default)]
    pub min_calls: u64,
    /// The transport security of the cell's connections, for the
    /// protocols that offer TLS (gRPC, Hessian and SOAP over HTTP); absent
    /// for the others and in snapshots made before there was TLS
    /// (plaintext).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsSetting>,
    /// What a generic call called (`--call`, protocol `grpc-generic`,
    /// `dubbo-generic` or `thrift-generic`): the method, where its types
    /// came from, the request. Absent for the
    /// contract's operations; when present, `operation` is not what was
    /// called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<GenericCall>,
    /// The messages of a streaming call's streams (a generic gRPC call of
    /// a server, client or bidirectional streaming method, where each call
    /// is one stream): absent for unary calls and in older snapshots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<StreamMessages>,
}

/// The messages of the window's streams, beside its calls: a streaming
/// call (one stream) carries many messages, and its latency says nothing
/// of each one's. They are counted on the streams that completed well in
/// the window, the calls `calls_ok` counts, so that both rest on the same
/// streams.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamMessages {
    /// Messages the client sent on those streams (a server stream's one
    /// request counts).
    pub sent: u64,
    /// Messages the client received on them, each decoded (and compared,
    /// with an expected reply).
    pub received: u64,
    /// `sent` and `received` over the window's duration.
    pub sent_per_s: f64,
    pub received_per_s: f64,
    /// Each received message's latency: from the later of its stream's
    /// last sent and last received message (or the stream's opening) to
    /// its arrival. For a server stream, the first message's wait and then
    /// the gaps between messages; for a bidirectional stream that answers
    /// each request, the request's round trip; for a client stream, the
    /// reply's wait after the last request.
    pub latency_us: Latency,
}

impl ClientReport {
    /// The window's latency percentile `p`, µs, when the report has it:
    /// kept in `latency_us`, or asked by the cell (`percentiles_us`).
    pub fn latency_at(&self, p: Percentile) -> Option<f64> {
        self.latency_us
            .stored(p)
            .or_else(|| self.percentiles_us.get(&p).copied())
    }

    /// What the cell called, as a report's heading says it: `operation
    /// order-echo` for the contract's, `call package.Service/Method` for a
    /// generic call (whose `operation` was not called).
    pub fn called(&self) -> String {
        match &self.call {
            Some(call) => format!("call {}", call.method),
            None => format!("operation {}", self.operation),
        }
    }
}

/// How a client's connections are secured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum TlsSetting {
    /// No TLS (`--insecure`, the default).
    Plaintext,
    /// TLS, the server's certificate verified against `roots` (`system
    /// roots`, or `CA file <path>`), for `server_name` when one was given
    /// (else the target's host); with `client_cert` (the PEM file of
    /// `--cert`) the client proves its own identity too (mutual TLS).
    Verified {
        roots: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_cert: Option<String>,
    },
    /// TLS without verifying the server's certificate (`--skipTLS`).
    Unverified {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_cert: Option<String>,
    },
}

impl std::fmt::Display for TlsSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (text, client_cert) = match self {
            TlsSetting::Plaintext => return f.write_str("plaintext"),
            TlsSetting::Verified {
                roots, client_cert, ..
            } => (format!("TLS verified against {roots}"), client_cert),
            TlsSetting::Unverified { client_cert, .. } => {
                ("TLS, certificate not verified".to_owned(), client_cert)
            }
        };
        f.write_str(&text)?;
        match client_cert {
            Some(cert) => write!(f, ", client certificate {cert}"),
            None => Ok(()),
        }
    }
}

/// A generic call: a method of the user's own service, its types from a
/// descriptor set or the server's reflection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenericCall {
    /// `package.Service/Method` (gRPC), `interface/method` (Dubbo),
    /// `Service.method` (Thrift).
    pub method: String,
    /// Where the method's types came from: `protoset <path>`, or
    /// `reflection grpc.reflection.v1` (or `v1alpha`); for Dubbo, the
    /// parameter types given (`parameter types a.B, int`), or none; for
    /// Thrift, `idl <path>`.
    pub descriptors: String,
    /// The request message's encoded size in bytes (with the template's
    /// value as it is in the first call).
    pub request_bytes: u64,
    /// The per-call template values the request holds (`{{.RequestNumber}}`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub templates: Vec<String>,
    /// Whether every reply was compared with an expected reply (`--expect`);
    /// otherwise each reply was decoded as the method's output type.
    pub expected_reply: bool,
    /// How a streaming method's streams were made (gRPC); absent for a
    /// unary method and in older snapshots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamSetting>,
}

/// How each call of a streaming gRPC method (one stream) was made, with
/// ghz's stream flags.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamSetting {
    /// `server`, `client` or `bidi` (bidirectional) streaming.
    pub kind: String,
    /// `--stream-call-count`: messages sent (client and bidi streams) or
    /// received (server streams) before the client ends the stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_count: Option<u64>,
    /// `--stream-call-duration`, µs: how long the client keeps a stream
    /// open before it ends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_duration_us: Option<u64>,
    /// `--stream-interval`, µs: the pause between two messages sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_us: Option<u64>,
    /// `--stream-dynamic-messages`: each message sent takes the next
    /// `{{.RequestNumber}}`, not its stream's.
    #[serde(default)]
    pub dynamic_messages: bool,
}

/// The warm-up of one cell: the load runs in fixed intervals until every
/// connection has completed a verified call and the last intervals agree
/// (steady state), or until the maximum is reached.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Warmup {
    /// How long the warm-up lasted.
    pub seconds: f64,
    /// Verified calls completed during the warm-up.
    pub calls: u64,
    /// Every connection completed at least one verified call before the
    /// window opened.
    pub every_connection_answered: bool,
    /// The last intervals agreed within the tolerance before the maximum.
    pub steady: bool,
    /// What was compared per interval: `throughput` (calls/s, closed loop)
    /// or `service-time` (mean µs, open loop).
    pub signal: String,
    /// The signal of every warm-up interval, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<f64>,
}

/// One row of `results.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cell {
    pub server: String,
    pub variant: String,
    pub framework: String,
    pub framework_version: String,
    pub protocol: String,
    pub scenario: String,
    pub operation: Operation,
    pub concurrency: u32,
    pub repetition: u32,
    pub calls_ok: u64,
    pub calls_failed: u64,
    pub duration_s: f64,
    pub throughput_per_s: f64,
    pub latency_us: Latency,
    /// The server container's cost (with its registry, when it has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cost: Option<Cost>,
    /// The client container's cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cost: Option<Cost>,
    /// Read from snapshots written before 2026-12-05, which said in words
    /// that the client may have been the limit; never written now (the
    /// `client-bound` flag and `limit` carry the facts).
    #[serde(default, skip_serializing)]
    pub client_bound: Option<String>,
    /// The registry container's cost (ZooKeeper), measured apart from the
    /// server's, when the server uses one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_cost: Option<Cost>,
    /// Which side's cores were the limit of this cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    /// What a reader must know before trusting this cell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<CellFlag>,
    /// The load the server was primed with just before this cell, when this
    /// is the first cell after the server (re)started and the profile
    /// primes (`prime_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primed: Option<Priming>,
    /// What the host did beside the lab over the window (absent in older
    /// snapshots and where the engine is on another machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_load: Option<HostLoad>,
    /// In a run measured in interleaved rounds, this cell's place in its
    /// round's order (1 = measured first); `repetition` is then the round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_position: Option<u32>,
    /// Which JVM start of its server the cell was measured in (1-based),
    /// in a run with several; absent where the server was started once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u32>,
    pub report: ClientReport,
}

impl Cell {
    /// The window's latency percentile `p`, µs, when the cell has it: one
    /// every cell keeps (`latency_us`), or one its spec asked for
    /// (`report.percentiles_us`).
    pub fn latency_at(&self, p: Percentile) -> Option<f64> {
        self.latency_us
            .stored(p)
            .or_else(|| self.report.percentiles_us.get(&p).copied())
    }
}

/// CPU used on the lab's CPU sets over a cell's window by anything but the
/// cell's own containers, read from `/proc/stat` less the containers'
/// cgroup counters, in cores (1.0 = one core busy for the whole window).
///
/// A shared host shows here: a build on the client's cores, a hypervisor
/// stealing time. Without it a slow window cannot be told from a slow server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostLoad {
    /// Busy cores on the server's CPU set not used by the server under
    /// load, its registry or the idle servers.
    pub other_server_cores: f64,
    /// Busy cores on the client's CPU set not used by the client.
    pub other_client_cores: f64,
    /// Cores' worth of time stolen by the hypervisor on both sets.
    pub steal_cores: f64,
    /// Cores the servers not under load (an interleaved run keeps every
    /// server of a post running) used on the server's set.
    #[serde(default)]
    pub idle_servers_cores: f64,
    /// Cores spent in interrupts and softirqs on both sets, already inside
    /// the busy figures above (so inside `other_*` where the kernel does
    /// not charge them to a container): on loopback the lab's own traffic
    /// is processed there, and this tells such work from a neighbour's.
    #[serde(default)]
    pub irq_cores: f64,
    /// The share of a core above which [`CellFlag::HostBusy`] is set.
    #[serde(default)]
    pub threshold_cores: f64,
    /// Where the kernel's network processing ran, per CPU set: absent
    /// where `/proc/softirqs` or the ksoftirqd threads cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub softirq: Option<SoftirqSides>,
}

/// The kernel's softirq work on the server's and the client's CPU sets
/// over a window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SoftirqSides {
    pub server: Softirq,
    pub client: Softirq,
}

/// Softirq work on one CPU set. On loopback every packet a call sends is
/// received in a NET_RX softirq, run either on the way out of the sender's
/// system call or, when the kernel defers it, by that CPU's ksoftirqd
/// thread, which the scheduler then runs beside (and instead of) the
/// system's own threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Softirq {
    /// Cores spent in softirqs (`/proc/stat`'s softirq field).
    pub softirq_cores: f64,
    /// NET_RX softirqs raised per second (`/proc/softirqs`).
    pub net_rx_per_s: f64,
    /// Cores the set's ksoftirqd threads ran (their utime + stime): the
    /// share of softirq work deferred to them.
    pub ksoftirqd_cores: f64,
}

/// Load given to a freshly (re)started server before its first cell, at the
/// highest level of its first scenario, and never measured.
///
/// A JVM compiles a method once it has been called often enough, so a cold
/// server at one client keeps compiling through several cells (the SOAP
/// servers climbed across all three 1-client repetitions of a standard run)
/// while the same calls at the highest level reach the thresholds in a few
/// seconds. The priming run follows the profile's warm-up rule, with the
/// cold limit (`cold_warmup_max_s`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Priming {
    /// The scenario and level the priming load ran.
    pub scenario: String,
    pub concurrency: u32,
    /// Its warm-up: length, calls, whether it reached steady state, and its
    /// 1 s intervals (the server's climb from cold).
    pub warmup: Warmup,
    /// Verified and failed calls of the priming run, warm-up included
    /// (every pass's).
    pub calls_ok: u64,
    pub calls_failed: u64,
    /// Under the profile's JIT rule (`prime_jit_quiet_cores`): the cores
    /// the server's JIT compiler threads used over each pass's window, the
    /// first pass's first. A pass followed while the last was above the
    /// rule's bound. Empty without the rule, or where the server's threads
    /// are not visible.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compiler_cores_by_pass: Vec<f64>,
    /// Seconds of the passes after the first (their warm-ups and windows).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_passes_s: f64,
    /// Whether the JIT was quiet when priming ended: false when the rule's
    /// `prime_max_s` ran out first. Absent where the rule was not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jit_quiet: Option<bool>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Where a cell stands: server, variant, scenario and level. The
/// repetitions of one measurement share it, and one [`Aggregate`] of that
/// key summarises them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellKey<'a> {
    pub server: &'a str,
    pub variant: &'a str,
    pub scenario: &'a str,
    pub level: u32,
}

/// A cell's identity: its [`CellKey`] and its repetition (a run in rounds
/// numbers its rounds as repetitions). What a resumed run looks for among
/// the cells already measured, and what a plan names its cells by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellId<'a> {
    pub key: CellKey<'a>,
    pub repetition: u32,
}

impl CellId<'_> {
    /// Whether `measured` holds this cell.
    pub fn is_in(self, measured: &[Cell]) -> bool {
        measured.iter().any(|c| c.id() == self)
    }
}

impl Cell {
    /// A cell whose figure can stand for the server: steady, enough calls,
    /// and not limited by the client.
    pub fn trustworthy(&self) -> bool {
        !self.flags.iter().any(|f| f.untrustworthy())
    }

    pub fn key(&self) -> CellKey<'_> {
        CellKey {
            server: &self.server,
            variant: &self.variant,
            scenario: &self.scenario,
            level: self.concurrency,
        }
    }

    pub fn id(&self) -> CellId<'_> {
        CellId {
            key: self.key(),
            repetition: self.repetition,
        }
    }
}

/// Why a cell should be read with care.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CellFlag {
    /// The warm-up reached its maximum before the intervals agreed.
    NotSteady,
    /// Fewer calls than the profile's minimum completed in the window.
    TooFewCalls,
    /// The client's cores were the limit: the figure is a lower bound of
    /// what the server can do.
    ClientBound,
    /// The server's cores were the limit (the normal, wanted case for a
    /// throughput figure; recorded so tables can say so).
    ServerBound,
    /// Server and client shared CPUs (`--allow-shared-cpus`).
    SharedCpus,
    /// Something other than the lab's containers used the server's or the
    /// client's CPU set during the window, or the hypervisor stole time
    /// from them (see [`HostLoad`]).
    HostBusy,
}

impl CellFlag {
    /// Flags that keep a cell out of headlines and verdicts.
    pub fn untrustworthy(self) -> bool {
        matches!(
            self,
            CellFlag::NotSteady
                | CellFlag::TooFewCalls
                | CellFlag::ClientBound
                | CellFlag::SharedCpus
                | CellFlag::HostBusy
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CellFlag::NotSteady => "not-steady",
            CellFlag::TooFewCalls => "too-few-calls",
            CellFlag::ClientBound => "client-bound",
            CellFlag::ServerBound => "server-bound",
            CellFlag::SharedCpus => "shared-cpus",
            CellFlag::HostBusy => "host-busy",
        }
    }
}

impl std::fmt::Display for CellFlag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which side of a cell ran out of cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LimitSide {
    Server,
    Client,
    /// Neither side's cores were nearly all busy (latency-bound, a lock,
    /// the network path, or a small closed loop).
    Neither,
}

/// How busy each side's CPU set was over the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    pub side: LimitSide,
    /// Share of the server's CPU set that the server container used (0..1),
    /// registry excluded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_busy: Option<f64>,
    /// Share of the client's CPU set that the client used (0..1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_busy: Option<f64>,
    /// The busy share at or above which a side counts as the limit.
    pub threshold: f64,
    // Snapshots written before 2026-12-05 also carry `note`, the same facts
    // in words; it is ignored when read: the report words the facts.
}

/// A short, fixed measurement of the host taken at the start of a run, on
/// the server's and on the client's CPU sets, so that snapshots from
/// different hosts can be told apart (and normalised) by `lab compare`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub server: CalibrationFigures,
    pub client: CalibrationFigures,
    /// The loopback ping-pong from the client's CPU set to the server's
    /// (the path of a single synchronous caller's every call), when both
    /// sets are on one machine; absent in older manifests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub across: Option<CalibrationFigures>,
}

/// The calibration figures of one CPU set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CalibrationFigures {
    /// The CPU set measured.
    pub cpus: String,
    /// Rounds per second of a fixed single-threaded CPU-bound kernel
    /// (integer hashing and a small sort, no memory traffic to speak of).
    pub cpu_rounds_per_s: f64,
    /// Round trips per second of a one-byte TCP ping-pong over loopback,
    /// both ends pinned to this CPU set.
    pub loopback_round_trips_per_s: f64,
}

/// The repetitions of one cell (server × variant × scenario × concurrency)
/// summarised: medians, spread and flags. Derived from the cells, never
/// measured on its own.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Aggregate {
    pub server: String,
    pub variant: String,
    pub scenario: String,
    pub concurrency: u32,
    pub repetitions: u32,
    pub throughput_median: f64,
    pub throughput_min: f64,
    pub throughput_max: f64,
    /// Coefficient of variation of the throughput over repetitions
    /// (standard deviation / mean; 0 with one repetition).
    pub throughput_cv: f64,
    /// A distribution-free confidence interval of the median throughput
    /// (order statistics); absent with one repetition, which has no spread,
    /// and in snapshots written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_ci: Option<MedianInterval>,
    /// Median over repetitions of each latency percentile, except `min` and
    /// `max`, which are the extremes over every repetition (the smallest
    /// minimum and the largest maximum: a maximum is not averaged away).
    pub latency_us: Latency,
    pub calls_ok: u64,
    pub calls_failed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_us_per_call: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_us_per_call: Option<f64>,
    pub bytes_sent_per_call: f64,
    pub bytes_received_per_call: f64,
    /// Every flag of any repetition (a cell's legacy `client_bound` text
    /// counts as [`CellFlag::ClientBound`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cell_flags: Vec<CellFlag>,
    /// The throughput CV exceeded the profile's threshold.
    #[serde(default)]
    pub noisy: bool,
    /// Why this aggregate should be read with care, in words (the cell
    /// flags, `noisy: throughput CV 10.07 % > 10 %`, `N failed calls`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
}

impl Aggregate {
    /// The key of the cells it summarises.
    pub fn key(&self) -> CellKey<'_> {
        CellKey {
            server: &self.server,
            variant: &self.variant,
            scenario: &self.scenario,
            level: self.concurrency,
        }
    }

    /// An aggregate whose figure can stand for the server in a headline or
    /// a verdict: no repetition carries an untrustworthy cell flag
    /// ([`CellFlag::untrustworthy`]) and the repetitions agree (not noisy).
    pub fn trustworthy(&self) -> bool {
        self.caveats().is_empty()
    }

    /// What must be said next to the figure when it is not trustworthy:
    /// `lower bound` (client-bound: the server could do more), `unsteady`
    /// (not steady after warm-up, or noisy), `too few calls`, `shared CPUs`.
    pub fn caveats(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        let mut add = |c: &'static str| {
            if !out.contains(&c) {
                out.push(c);
            }
        };
        for f in &self.cell_flags {
            match f {
                CellFlag::ClientBound => add("lower bound"),
                CellFlag::NotSteady => add("unsteady"),
                CellFlag::TooFewCalls => add("too few calls"),
                CellFlag::SharedCpus => add("shared CPUs"),
                CellFlag::HostBusy => add("host busy"),
                CellFlag::ServerBound => {}
            }
        }
        if self.noisy {
            add("unsteady");
        }
        // Aggregates written before `cell_flags` and `noisy` said it in words.
        for f in &self.flags {
            if f == "client-bound" {
                add("lower bound");
            } else if f.starts_with("noisy") {
                add("unsteady");
            }
        }
        out
    }
}

/// A confidence interval of a median from order statistics: the interval
/// between the `rank`-th smallest and the `rank`-th largest of `n` values
/// covers the true median with probability `confidence` (binomial, p = ½),
/// whatever the distribution. With few values the widest interval, the
/// range, is all there is: 50 % with 2 values, 75 % with 3, 87.5 % with 4.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MedianInterval {
    pub low: f64,
    pub high: f64,
    /// Coverage probability of the interval (0..1).
    pub confidence: f64,
}

/// `results.json`: every cell of a lab run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Results {
    pub schema_version: u32,
    /// False when the run stopped early; the cells present are still valid.
    pub complete: bool,
    /// The failures the run kept, as data (`crate::run_error`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<crate::run_error::RunError>,
    pub cells: Vec<Cell>,
    /// The cells' repetitions summarised (recomputed whenever a cell is added).
    #[serde(default)]
    pub aggregates: Vec<Aggregate>,
    /// Set by `lab reproduce`: the published figures and claims this run is
    /// compared with (absent in plain `lab run` snapshots and in older ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproduction: Option<Reproduction>,
    /// Set when the run measured its systems in interleaved rounds: the
    /// seed of the shuffles and every round's order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<Rounds>,
    /// Set when `lab run` was given `--threshold`: the thresholds and the
    /// cells that breached them (absent otherwise and in older snapshots).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thresholds: Option<crate::breach::ThresholdCheck>,
    /// Set by `lab capacity`: the search, every step and its outcome; the
    /// steps' cells are in `cells` (absent otherwise and in older
    /// snapshots).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<crate::capacity::CapacitySearch>,
}

impl Results {
    /// A run's results before anything is recorded: this schema version,
    /// not complete, no cells, errors nor extras. A new snapshot starts from
    /// it, and a caller that sets a few fields writes only those
    /// (`Results { errors, ..Results::empty() }`).
    pub fn empty() -> Results {
        Results {
            schema_version: SCHEMA_VERSION,
            complete: false,
            errors: Vec::new(),
            cells: Vec::new(),
            aggregates: Vec::new(),
            reproduction: None,
            rounds: None,
            thresholds: None,
            capacity: None,
        }
    }
}

/// How an interleaved run ordered its rounds (`rounds` in a profile).
///
/// Every server of the run is started and primed once; then each round
/// measures every server once at a scenario's level, in an order drawn
/// afresh from a generator seeded with `seed`, so that a drift of the host
/// lands on every system alike and a pair's ratio can be taken within a
/// round.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Rounds {
    /// Seed of the order's generator (recorded so a run can be replayed).
    pub seed: u64,
    /// Rounds measured at least, and at most while a claim is undecided
    /// (runs made before plans); under a plan both are the rounds per
    /// start.
    pub min: u32,
    pub max: u32,
    /// Independent JVM starts per system (1 for runs made before plans).
    #[serde(default = "one")]
    pub starts: u32,
    /// Every round, in the order measured.
    pub orders: Vec<RoundOrder>,
}

fn one() -> u32 {
    1
}

/// One round: which systems (`server/variant`) it measured, in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundOrder {
    pub scenario: String,
    pub concurrency: u32,
    pub round: u32,
    pub order: Vec<String>,
}

/// A reproduction of a published benchmark (`cargo xtask lab reproduce`),
/// carried inside `results.json` so that the published-vs-measured tables
/// and the claim verdicts can be re-rendered from the snapshot alone, even
/// after the seed definitions in `compose/seeds/` have changed.
///
/// Added compatibly to schema version 1: snapshots without it load as before.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reproduction {
    /// The seed definition's id (`compose/seeds/<id>.toml`).
    pub seed: String,
    pub title: String,
    /// Where the published figures come from (post, year).
    pub source: String,
    /// Caveats and metric meanings a reader needs next to the tables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// How the lab's reproduction still differs from what the post did
    /// (load shape, settings, versions, warm-up), one sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deviations: Vec<String>,
    /// Every system the seed measured, and what stands in for it here.
    pub systems: Vec<SeedSystem>,
    /// Every published figure, placed in the seed's own table layout.
    pub cells: Vec<PublishedCell>,
    pub claims: Vec<SeedClaim>,
    /// Every claim decided once, when the reproduction was written (or
    /// re-rendered by `lab report`): what every rendering prints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<crate::verdict::ClaimVerdict>,
    /// Which rpclab decided `verdicts` (`<git revision>`, `(dirty)` after
    /// it when its tree was): the run's own, or a later `lab report
    /// --redecide` by newer rules over the same measured cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdicts_by: Option<String>,
    /// The analysis plan `verdicts` were decided under: the seed's plan as
    /// it stood when the run started (absent for runs made before plans;
    /// their verdicts were decided by rounds added until a claim decided,
    /// and the README does not show them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<crate::plan::RecordedPlan>,
    /// The run followed its plan's design (its profile, starts and rounds):
    /// only such verdicts count as the plan's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub under_plan: bool,
    /// Re-analyses under other plans (`lab report --redecide`), each
    /// labelled, beside `verdicts`, never in their place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reanalyses: Vec<Reanalysis>,
}

/// A reproduction's claims decided again, under a plan other than the one
/// its run was made with: kept beside the original verdicts, labelled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reanalysis {
    pub plan: crate::plan::RecordedPlan,
    /// Which rpclab decided them (`<git revision>`, `(dirty)` when so).
    pub by: String,
    pub verdicts: Vec<crate::verdict::ClaimVerdict>,
}

/// One system of a seed and the lab server variant linked to it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeedSystem {
    /// The key used in cells and claims (e.g. `dubbo`, `s-hsf`, `config A`).
    pub key: String,
    /// What the seed ran (e.g. `dubbox 2.8.4, kryo`).
    pub published_as: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Why nothing was measured for this system, when nothing was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
    /// How the lab's stand-in differs from what the seed ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// How a measured figure is derived from an [`Aggregate`], in the
/// published metric's unit. The same published name can mean different
/// things in different posts (seed 003's `avg_ms` is total time / calls),
/// so the seed definition chooses the derivation, not the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Measure {
    /// Calls per second (median over repetitions).
    Throughput,
    /// Seconds the published number of calls takes at the measured rate.
    TotalSeconds,
    /// The same in milliseconds.
    TotalMs,
    /// 1000 / throughput: milliseconds of run time per call.
    MsPerCall,
    LatencyMeanMs,
    LatencyMinMs,
    LatencyMaxMs,
    LatencyP50Ms,
    LatencyP90Ms,
    LatencyP95Ms,
    LatencyP99Ms,
    /// Calls made (ok + failed).
    Samples,
    /// Failed calls.
    Failed,
    /// Failed / all calls, percent.
    ErrorPercent,
    /// KiB per second received by the client.
    ReceivedKbPerS,
    /// KiB per second sent by the client.
    SentKbPerS,
}

impl Measure {
    /// True when a larger value is better (throughput), false when smaller
    /// is (times, latencies, errors).
    pub fn higher_is_better(self) -> bool {
        matches!(
            self,
            Measure::Throughput | Measure::Samples | Measure::ReceivedKbPerS | Measure::SentKbPerS
        )
    }
}

/// One published figure, where it sits in the seed's table, and the lab
/// cell it is compared with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PublishedCell {
    /// Title of the seed table (or sub-table) the figure belongs to.
    pub table: String,
    pub row: String,
    pub column: String,
    /// [`SeedSystem::key`].
    pub system: String,
    /// The published metric name (`tps`, `avg_ms`, ...).
    pub metric: String,
    pub unit: String,
    /// The number as published; absent when the seed's run failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// The cell's text as printed.
    pub raw: String,
    /// How the measured value is derived; absent when unlinked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<Measure>,
    /// Calls of the published run (for [`Measure::TotalSeconds`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_calls: Option<u64>,
    /// The lab scenario and level linked to this figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    /// Why the figure has no lab counterpart, when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unlinked: Option<String>,
    /// Its measured twin, once decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<crate::verdict::Twin>,
    /// Why it has no measured twin, when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
}

/// A claim of the post and how the lab checks it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedClaim {
    pub id: String,
    /// The claim in our words.
    pub text: String,
    pub check: ClaimCheck,
}

/// The measurable form of a claim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ClaimCheck {
    /// "X is N times Y": measured ratio X / Y against N, per pair.
    Ratio {
        measure: Measure,
        scenario: String,
        concurrency: u32,
        /// Empty in a seed definition: taken from the claim's `ratios`.
        #[serde(default)]
        pairs: Vec<RatioPair>,
    },
    /// Systems from best to worst, at each level.
    Ranking {
        measure: Measure,
        scenario: String,
        levels: Vec<u32>,
        order: Vec<String>,
    },
    /// These systems are the best `systems.len()` of `among`, at each level.
    Top {
        measure: Measure,
        scenario: String,
        levels: Vec<u32>,
        systems: Vec<String>,
        among: Vec<String>,
    },
    /// These systems are the worst `systems.len()` of `among`, at each level.
    Bottom {
        measure: Measure,
        scenario: String,
        levels: Vec<u32>,
        systems: Vec<String>,
        among: Vec<String>,
    },
    /// "X is about as fast as Y" (差不多, 基本同级别): every system's
    /// measured ratio to the first is within the equivalence tolerance of 1,
    /// at each level; every system of `behind` must beat each of them.
    Equivalent {
        measure: Measure,
        scenario: String,
        levels: Vec<u32>,
        /// The systems claimed to be level with each other (two or more).
        systems: Vec<String>,
        /// Systems the claim puts ahead of the whole group ("both trail
        /// Hessian"); empty when it says nothing of the sort.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        behind: Vec<String>,
    },
    /// No call of these systems failed in the scenario.
    NoErrors {
        scenario: String,
        systems: Vec<String>,
    },
    /// Calls of these systems failed in the scenario (seed 002's Hessian
    /// "threw exceptions after 300 to 400 calls" at 100 threads): holds
    /// when some did.
    Fails {
        scenario: String,
        systems: Vec<String>,
    },
    /// A claim the lab cannot check, and why (absolute figures from other
    /// hardware, opinions, quotes of other studies).
    NotCheckable { reason: String },
}

/// One "X is N times Y" ratio.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatioPair {
    pub over: String,
    pub under: String,
    pub published: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generic_call_without_a_stream_reads_as_before_and_a_stream_round_trips() {
        let old = r#"{"method":"shop.v1.Inventory/Reserve","descriptors":"protoset x","request_bytes":9,"expected_reply":true}"#;
        let call: GenericCall = serde_json::from_str(old).unwrap();
        assert_eq!(call.stream, None);
        assert_eq!(serde_json::to_string(&call).unwrap(), old);
        let streaming = GenericCall {
            stream: Some(StreamSetting {
                kind: "bidi".into(),
                call_count: Some(5),
                call_duration_us: None,
                interval_us: Some(1_000),
                dynamic_messages: true,
            }),
            ..call
        };
        let text = serde_json::to_string(&streaming).unwrap();
        assert!(text.contains(r#""stream":{"kind":"bidi","call_count":5,"interval_us":1000,"dynamic_messages":true}"#), "{text}");
        assert_eq!(
            serde_json::from_str::<GenericCall>(&text).unwrap(),
            streaming
        );
        let messages = StreamMessages {
            sent: 10,
            received: 40,
            sent_per_s: 5.0,
            received_per_s: 20.0,
            latency_us: Latency::default(),
        };
        let text = serde_json::to_string(&messages).unwrap();
        assert_eq!(
            serde_json::from_str::<StreamMessages>(&text).unwrap(),
            messages
        );
    }

    /// An aggregate as snapshots wrote it before intervals and cell flags.
    const OLD: &str = r#"{"server": "ice-3.7", "variant": "3.7", "scenario": "order-echo",
        "concurrency": 5, "repetitions": 3, "throughput_median": 102635.0,
        "throughput_min": 96000.0, "throughput_max": 113658.0, "throughput_cv": 0.06,
        "latency_us": {"min": 30.0, "mean": 45.0, "p50": 39.0, "p90": 59.0, "p95": 70.0,
        "p99": 103.0, "p999": 2323.0, "max": 16511.0},
        "calls_ok": 1500000, "calls_failed": 0, "bytes_sent_per_call": 111.0,
        "bytes_received_per_call": 92.0, "flags": ["client-bound"]}"#;

    #[test]
    fn a_tls_setting_names_the_client_certificate_only_when_there_is_one() {
        let verified = TlsSetting::Verified {
            roots: "CA file ca.pem".into(),
            server_name: None,
            client_cert: Some("client.pem".into()),
        };
        assert_eq!(
            serde_json::to_value(&verified).unwrap(),
            serde_json::json!({"mode": "verified", "roots": "CA file ca.pem", "client_cert": "client.pem"})
        );
        assert_eq!(
            verified.to_string(),
            "TLS verified against CA file ca.pem, client certificate client.pem"
        );
        // Cells written before client certificates existed read as before.
        let older: TlsSetting = serde_json::from_str(r#"{"mode": "unverified"}"#).unwrap();
        assert_eq!(
            older,
            TlsSetting::Unverified {
                server_name: None,
                client_cert: None
            }
        );
        assert_eq!(older.to_string(), "TLS, certificate not verified");
    }

    #[test]
    fn older_aggregates_load_and_new_fields_decide_trust() {
        let mut a: Aggregate = serde_json::from_str(OLD).unwrap();
        assert_eq!(a.throughput_ci, None);
        assert!(a.cell_flags.is_empty() && !a.noisy);
        // The old text still counts.
        assert_eq!(a.caveats(), ["lower bound"]);
        a.flags.clear();
        assert!(a.trustworthy());
        a.cell_flags = vec![CellFlag::ServerBound];
        assert!(a.trustworthy(), "server-bound is the wanted case");
        a.cell_flags = vec![CellFlag::ClientBound, CellFlag::NotSteady];
        a.noisy = true;
        assert_eq!(a.caveats(), ["lower bound", "unsteady"]);
        assert!(!a.trustworthy());
        a.cell_flags = vec![CellFlag::TooFewCalls, CellFlag::SharedCpus];
        a.noisy = false;
        assert_eq!(a.caveats(), ["too few calls", "shared CPUs"]);
    }
}
