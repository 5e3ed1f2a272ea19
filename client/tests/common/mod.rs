//! What the protocol tests share: checking every operation of the contract
//! against a server that is already running (a real one, named by an
//! environment variable), through the public `Protocol` API; many calls in
//! flight on one connection; and the skeleton of the in-process fake
//! servers (listening, framing what the client sends, writing replies from
//! any task). [`cli`]: the client binary as a user runs it;
//! [`containers`]: real servers in confined containers and the client
//! binary run against them; [`fixture`]: the generic-call tests'
//! fixtures (`fixtures/grpc-shop`, `fixtures/thrift-shop`) in images of
//! their own; [`certs`]: certificates for the TLS tests.

pub mod certs;
#[allow(dead_code)]
pub mod cli;
pub mod containers;
#[allow(dead_code)]
pub mod fixture;

#[allow(unused_imports)]
pub use containers::free_port;

use rpclab_client::protocol::{CallError, Connection, Protocol, WireCounter};
use rpclab_model::contract::{Operation, Value};
use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// `key=value,key=value` from the environment variable `var` (empty if unset).
#[allow(dead_code)]
pub fn options_from_env(var: &str) -> BTreeMap<String, String> {
    std::env::var(var)
        .unwrap_or_default()
        .split(',')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("options are key=value,...");
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// The running server an ignored test is pointed at: its address from
/// `RPCLAB_<NAME>_TARGET` (required) and the protocol built from the
/// options in `RPCLAB_<NAME>_OPTIONS`.
#[allow(dead_code)]
pub fn running_server<P: Protocol>(name: &str) -> (String, P) {
    let var = format!("RPCLAB_{name}_TARGET");
    let target = std::env::var(&var).unwrap_or_else(|_| panic!("set {var}=host:port"));
    let protocol = P::new(&options_from_env(&format!("RPCLAB_{name}_OPTIONS"))).unwrap();
    (target, protocol)
}

/// Every operation against the running server an ignored test is pointed
/// at ([`running_server`]): on tasks, 4 callers on each of 2 connections,
/// 5 rounds ([`every_operation_verified`]), then on the poll engine, 2
/// programs making 20 calls each ([`every_operation_on_the_poll_engine`]).
/// The target, the protocol and the bytes counted on tasks.
#[allow(dead_code)]
pub async fn every_operation_against_a_running_server<P: Protocol>(
    name: &str,
) -> (String, P, WireCounter) {
    let (target, protocol) = running_server::<P>(name);
    let counter = every_operation_verified(&protocol, &target, 2, 4, 5).await;
    let options = options_from_env(&format!("RPCLAB_{name}_OPTIONS"));
    every_operation_on_the_poll_engine::<P>(&target, &options, 2, 20).await;
    (target, protocol, counter)
}

/// Calls every operation `rounds` times from `callers` tasks on each of
/// `connections` connections to `target`, checking every reply; returns the
/// counter of the bytes on the wire.
#[allow(dead_code)]
pub async fn every_operation_verified<P: Protocol>(
    protocol: &P,
    target: &str,
    connections: usize,
    callers: usize,
    rounds: usize,
) -> WireCounter {
    let counter = WireCounter::default();
    let mut tasks = Vec::new();
    for op in Operation::ALL {
        for _ in 0..connections {
            let conn = Arc::new(protocol.connect(target, counter.clone()).await.unwrap());
            tasks.extend(spawn_callers(&conn, target, op, callers, rounds));
        }
    }
    for task in tasks {
        task.await.unwrap();
    }
    let (sent, received) = counter.totals();
    assert!(sent > 0 && received > 0);
    counter
}

/// Every operation `P` has an exchange for, in a closed-loop cell of
/// `callers` client programs (a connection each) making `calls` calls
/// each against `target` with `options`: the cell runs on the poll engine
/// and every reply is verified. An operation without an exchange (a
/// located proxy, a registry, a call the serialization cannot carry)
/// runs on tasks elsewhere and is skipped here; returns how many
/// operations ran.
#[allow(dead_code)]
pub async fn every_operation_on_the_poll_engine<P: Protocol>(
    target: &str,
    options: &BTreeMap<String, String>,
    callers: u32,
    calls: u64,
) -> usize {
    use rpclab_client::runner::run_cell;
    use rpclab_model::spec::CellSpec;
    let protocol = P::new(options).unwrap();
    let mut ran = 0;
    for operation in Operation::ALL {
        if protocol.exchange(&operation.call()).unwrap().is_none() {
            continue;
        }
        let spec = CellSpec {
            options: options.clone(),
            ..calls_cell(P::NAME, target, operation, callers, calls)
        };
        let report = run_cell(&spec).await.unwrap().report;
        let what = format!("{} {operation}: {report:?}", P::NAME);
        assert_eq!(report.engine.as_deref(), Some("poll"), "{what}");
        assert_eq!(
            (report.calls_ok, report.calls_failed),
            (u64::from(callers) * calls, 0),
            "{what}"
        );
        assert!(report.verified, "{what}");
        ran += 1;
    }
    ran
}

/// Calls each of `ops` `rounds` times from `callers` tasks each on `conn`,
/// all at once, checking every reply (`server` names the server in a
/// failure).
#[allow(dead_code)]
pub async fn calls_verified<C: Connection>(
    conn: &Arc<C>,
    server: &str,
    ops: impl IntoIterator<Item = Operation>,
    callers: usize,
    rounds: usize,
) {
    let tasks: Vec<_> = ops
        .into_iter()
        .flat_map(|op| spawn_callers(conn, server, op, callers, rounds))
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
}

/// `callers` tasks, each calling `op` `rounds` times on `conn` and checking
/// every reply.
fn spawn_callers<C: Connection>(
    conn: &Arc<C>,
    server: &str,
    op: Operation,
    callers: usize,
    rounds: usize,
) -> Vec<JoinHandle<()>> {
    (0..callers)
        .map(|_| {
            let conn = Arc::clone(conn);
            let server = server.to_owned();
            tokio::spawn(async move {
                let call = op.call();
                for _ in 0..rounds {
                    let reply = conn
                        .call(&call)
                        .await
                        .unwrap_or_else(|e| panic!("{server} {op}: {e}"));
                    assert!(reply == call.expected, "{server} {op}: wrong reply");
                }
            })
        })
        .collect()
}

/// Calls every operation `rounds` times from 8 tasks each on one
/// connection of `protocol` to the fake server at `addr`, after a
/// `hello("slow")` that the fake servers answer late, so that every other
/// reply overtakes it; checks every reply, and that the connection counted
/// the 1 MiB strings' bytes both ways. The connection, for more checks.
#[allow(dead_code)]
pub async fn many_in_flight_out_of_order<P: Protocol>(
    protocol: &P,
    addr: SocketAddr,
    rounds: usize,
) -> Arc<P::Conn> {
    let counter = WireCounter::default();
    let conn = Arc::new(
        protocol
            .connect(&addr.to_string(), counter.clone())
            .await
            .unwrap(),
    );
    let slow = {
        let conn = Arc::clone(&conn);
        tokio::spawn(async move {
            let mut call = Operation::Hello.call();
            call.argument = Value::Str("slow".into());
            conn.call(&call).await
        })
    };
    calls_verified(&conn, "fake", Operation::ALL, 8, rounds).await;
    assert_eq!(
        slow.await.unwrap().unwrap(),
        Value::Str("hello slow".into())
    );
    let (sent, received) = counter.totals();
    let strings = rounds as u64 * 8 * (1 << 20);
    assert!(sent > strings && received > strings, "{sent} {received}");
    conn
}

/// A child process (a server JVM, a server binary) killed when dropped, so
/// a failing test leaves nothing running.
#[allow(dead_code)]
pub struct KilledOnDrop(pub std::process::Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Listens on a free local port and serves each connection with `serve`,
/// on its own task.
#[allow(dead_code)]
pub async fn fake_server<F, Fut>(serve: F) -> SocketAddr
where
    F: Fn(FakeConnection) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(FakeConnection::new(stream)));
        }
    });
    addr
}

/// A fake server started by [`fake_server_seeing`]: where it listens, and
/// what its connections saw (counters the test waits on and checks).
#[allow(dead_code)]
pub struct SeeingServer<S> {
    pub addr: SocketAddr,
    pub seen: S,
}

/// Like [`fake_server`], handing every connection a clone of one fresh `S`
/// (counters behind `Arc`s) to record what it saw.
#[allow(dead_code)]
pub async fn fake_server_seeing<S, F, Fut>(serve: F) -> SeeingServer<S>
where
    S: Default + Clone + Send + Sync + 'static,
    F: Fn(FakeConnection, S) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let seen = S::default();
    let for_connections = seen.clone();
    let addr = fake_server(move |conn| serve(conn, for_connections.clone())).await;
    SeeingServer { addr, seen }
}

/// How a multiplexing fake provider (bolt, dubbo, motan) behaves besides
/// answering.
#[derive(Clone, Copy)]
#[allow(dead_code)]
pub struct Behaviour {
    /// Send a heartbeat request before the first reply.
    pub heartbeat_first: bool,
    /// Hang up after this many requests.
    pub close_after: Option<usize>,
}

/// A provider that only answers.
#[allow(dead_code)]
pub const NORMAL: Behaviour = Behaviour {
    heartbeat_first: false,
    close_after: None,
};

#[allow(dead_code)]
impl Behaviour {
    /// A provider that sends a heartbeat before its first reply.
    pub const HEARTBEAT_FIRST: Behaviour = Behaviour {
        heartbeat_first: true,
        close_after: None,
    };

    /// A provider that hangs up after `requests` requests.
    pub fn hanging_up_after(requests: usize) -> Behaviour {
        Behaviour {
            close_after: Some(requests),
            ..NORMAL
        }
    }
}

/// The heartbeats a fake provider's connections saw: answers to its own,
/// and the client's idle ones.
#[derive(Clone, Default)]
#[allow(dead_code)]
pub struct Heartbeats {
    pub answered: Arc<AtomicUsize>,
    pub received: Arc<AtomicUsize>,
}

#[allow(dead_code)]
impl Heartbeats {
    /// Counts an answer to the provider's heartbeat.
    pub fn answer_seen(&self) {
        self.answered.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a heartbeat of the client.
    pub fn heartbeat_seen(&self) {
        self.received.fetch_add(1, Ordering::Relaxed);
    }

    pub fn answered(&self) -> usize {
        self.answered.load(Ordering::Relaxed)
    }

    pub fn received(&self) -> usize {
        self.received.load(Ordering::Relaxed)
    }
}

/// A frame a multiplexing fake provider read, as its protocol tells.
#[allow(dead_code)]
pub enum Inbound<R> {
    /// The client's heartbeat, and the answer to send it.
    Heartbeat(Vec<u8>),
    /// The client's answer to the provider's heartbeat.
    HeartbeatAnswer,
    /// A request, answered on its own task.
    Request(R),
}

/// A multiplexing fake provider (dubbo, motan2) started by
/// [`multiplexing_provider`]: where it listens, and the heartbeats its
/// connections saw.
#[allow(dead_code)]
pub type FakeProvider = SeeingServer<Heartbeats>;

/// A multiplexing fake provider (dubbo, motan2) on a free local port,
/// serving each connection as `behaviour` says: sends `heartbeat` first if
/// asked; answers and counts the client's heartbeats and counts its
/// answers; answers each request on a task of its own (so replies overtake
/// each other) with the reply `answer` makes; hangs up on the request after
/// `close_after`. `split` frames what the client sends, `inbound` tells
/// what a frame is.
#[allow(dead_code)]
pub async fn multiplexing_provider<H, R, Fut>(
    behaviour: Behaviour,
    heartbeat: Vec<u8>,
    split: impl Fn(&[u8]) -> Option<(H, usize)> + Copy + Send + Sync + 'static,
    inbound: impl Fn(H, Vec<u8>) -> Inbound<R> + Copy + Send + Sync + 'static,
    answer: impl Fn(R) -> Fut + Copy + Send + Sync + 'static,
) -> FakeProvider
where
    H: Send + 'static,
    R: Send + 'static,
    Fut: Future<Output = Vec<u8>> + Send + 'static,
{
    fake_server_seeing(move |conn, seen| {
        serve_multiplexed(
            conn,
            behaviour,
            seen,
            heartbeat.clone(),
            split,
            inbound,
            answer,
        )
    })
    .await
}

/// Serves one connection of a [`multiplexing_provider`], counting the
/// heartbeats in `seen`.
async fn serve_multiplexed<H, R, Fut>(
    mut conn: FakeConnection,
    behaviour: Behaviour,
    seen: Heartbeats,
    heartbeat: Vec<u8>,
    split: impl Fn(&[u8]) -> Option<(H, usize)>,
    inbound: impl Fn(H, Vec<u8>) -> Inbound<R>,
    answer: impl Fn(R) -> Fut,
) where
    Fut: Future<Output = Vec<u8>> + Send + 'static,
{
    if behaviour.heartbeat_first {
        conn.send(heartbeat);
    }
    let mut requests = 0;
    while let Some((head, frame)) = conn.next_frame(&split).await {
        let request = match inbound(head, frame) {
            Inbound::Heartbeat(reply) => {
                seen.heartbeat_seen();
                conn.send(reply);
                continue;
            }
            Inbound::HeartbeatAnswer => {
                seen.answer_seen();
                continue;
            }
            Inbound::Request(request) => request,
        };
        requests += 1;
        if behaviour.close_after.is_some_and(|n| requests > n) {
            conn.hang_up();
            return;
        }
        let (tx, reply) = (conn.tx.clone(), answer(request));
        tokio::spawn(async move {
            let _ = tx.send(reply.await);
        });
    }
}

/// On `conn` to a provider started with `heartbeat_first` and a client
/// with `heartbeat_s = 1`: `hello("throw")` fails with the server error
/// `thrown`; the provider's heartbeat is answered once and the idle client
/// sends its own; the connection stays usable.
#[allow(dead_code)]
pub async fn a_thrown_exception_and_heartbeats_both_ways<C: Connection>(
    conn: &C,
    heartbeats: &Heartbeats,
    thrown: &str,
) {
    let mut call = Operation::Hello.call();
    call.argument = Value::Str("throw".into());
    match conn.call(&call).await {
        Err(CallError::Server(m)) => assert_eq!(m, thrown),
        other => panic!("{other:?}"),
    }
    eventually(
        "the answer to the provider's heartbeat and an idle one",
        || heartbeats.answered() >= 1 && heartbeats.received() >= 1,
    )
    .await;
    assert_eq!(heartbeats.answered(), 1);
    let call = Operation::Empty.call();
    assert_eq!(conn.call(&call).await.unwrap(), Value::Unit);
}

/// Why connecting `protocol` to `target` fails; panics if it connects.
#[allow(dead_code)]
pub async fn connect_error<P: Protocol>(protocol: &P, target: &str) -> CallError {
    match protocol.connect(target, WireCounter::default()).await {
        Ok(_) => panic!("{} connected to {target}", P::NAME),
        Err(e) => e,
    }
}

/// Connecting `P` through a ZooKeeper registry nobody answers on (its
/// option `registry`) to the provider `target` is a connect error that
/// names the registry's address.
#[allow(dead_code)]
pub async fn a_silent_registry_fails_the_connect<P: Protocol>(target: &str) {
    let registry = format!("127.0.0.1:{}", free_port());
    let protocol = P::new(&options(&[(
        "registry",
        &format!("zookeeper://{registry}"),
    )]))
    .unwrap();
    let e = connect_error(&protocol, target).await;
    assert!(
        matches!(&e, CallError::Connect(m) if m.contains(&registry)),
        "{e:?}"
    );
}

/// Connecting `protocol` to a local port nothing listens on is a connect
/// error.
#[allow(dead_code)]
pub async fn connecting_to_a_closed_port_fails<P: Protocol>(protocol: &P) {
    let e = connect_error(protocol, &format!("127.0.0.1:{}", free_port())).await;
    assert!(matches!(e, CallError::Connect(_)), "{e:?}");
}

/// Options as a cell gives them, from `(key, value)` pairs.
#[allow(unused_imports)]
pub use rpclab_protocols::testing::options;

/// A connection of `protocol` to the (fake) server at `addr`.
#[allow(dead_code)]
pub async fn connect<P: Protocol>(protocol: &P, addr: impl std::fmt::Display) -> P::Conn {
    protocol
        .connect(&addr.to_string(), WireCounter::default())
        .await
        .unwrap()
}

/// A fake server's side of a connection: the client's frames as they come
/// (read in chunks, split as the test says), and a channel whose messages
/// a task writes in order (so replies can be sent from other tasks).
#[allow(dead_code)]
pub struct FakeConnection {
    read: OwnedReadHalf,
    buf: Vec<u8>,
    /// Messages to write to the client.
    pub tx: mpsc::UnboundedSender<Vec<u8>>,
    writer: JoinHandle<()>,
}

#[allow(dead_code)]
impl FakeConnection {
    fn new(stream: TcpStream) -> FakeConnection {
        let (read, mut write) = stream.into_split();
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let writer = tokio::spawn(async move {
            while let Some(bytes) = rx.recv().await {
                if write.write_all(&bytes).await.is_err() {
                    return;
                }
            }
        });
        FakeConnection {
            read,
            buf: Vec::new(),
            tx,
            writer,
        }
    }

    /// Queues `bytes` for the client.
    pub fn send(&self, bytes: Vec<u8>) {
        let _ = self.tx.send(bytes);
    }

    /// The next whole frame with what `split` says of it (`split` gives
    /// that and the frame's length once the buffer starts with a whole
    /// frame); `None` when the client closes the connection.
    pub async fn next_frame<H>(
        &mut self,
        split: impl Fn(&[u8]) -> Option<(H, usize)>,
    ) -> Option<(H, Vec<u8>)> {
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            if let Some((head, len)) = split(&self.buf) {
                return Some((head, self.buf.drain(..len).collect()));
            }
            match self.read.read(&mut chunk).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// Hangs up at once, dropping whatever is still queued.
    pub fn hang_up(self) {
        self.writer.abort();
    }
}

/// Waits until `condition` holds, however slowly the machine runs: these
/// tests assert that something happens (a heartbeat, a close), never that
/// it happens within a time. The bound only keeps a broken test from
/// hanging CI forever.
#[allow(dead_code)]
pub async fn eventually(what: &str, condition: impl Fn() -> bool) {
    for _ in 0..6000 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{what} did not happen within two minutes");
}

/// A `hello("slow")` (answered late by the fake servers) cancelled by a
/// timeout leaves `conn` usable, before and after its late reply arrives.
#[allow(dead_code)]
pub async fn a_cancelled_call_leaves_the_connection_usable<C: Connection>(conn: &C) {
    let mut slow = Operation::Hello.call();
    slow.argument = Value::Str("slow".into());
    assert!(
        tokio::time::timeout(Duration::from_millis(50), conn.call(&slow))
            .await
            .is_err()
    );
    let call = Operation::OrdersEcho.call();
    assert!(conn.call(&call).await.unwrap() == call.expected);
    // The late reply to the cancelled call arrives and is dropped.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let call = Operation::OrderEcho.call();
    assert!(conn.call(&call).await.unwrap() == call.expected);
}

/// On a connection whose server hangs up after one request: the first call
/// succeeds, the next fails (not hangs) with an I/O error, returned, and so
/// does every later one, at once.
#[allow(dead_code)]
pub async fn calls_fail_once_the_server_hangs_up<C: Connection>(conn: &C) -> std::io::Error {
    let call = Operation::Hello.call();
    assert_eq!(conn.call(&call).await.unwrap(), call.expected);
    let result = tokio::time::timeout(Duration::from_secs(5), conn.call(&call))
        .await
        .expect("a call on a closed connection must not hang");
    let Err(CallError::Io(e)) = result else {
        panic!("{result:?}");
    };
    let result = tokio::time::timeout(Duration::from_secs(1), conn.call(&call))
        .await
        .unwrap();
    assert!(matches!(result, Err(CallError::Io(_))), "{result:?}");
    e
}

/// The tests of a multiplexed protocol `$protocol` against its fake server
/// (`$fake`, an async fn of the calling module's `Behaviour`, `NORMAL` the
/// plain one, whose server has an `addr` and, for the heartbeats, the
/// [`Heartbeats`] it `seen`): connecting to a closed port fails, and a
/// cancelled call leaves the connection usable; with `thrown` (the error
/// its `hello("throw")` gives), also ten calls in flight at once whose
/// replies overtake each other ([`many_in_flight_out_of_order`]),
/// [`a_thrown_exception_and_heartbeats_both_ways`] and
/// [`calls_fail_once_the_server_hangs_up`].
macro_rules! fake_server_tests {
    ($protocol:ty, $fake:ident) => {
        #[tokio::test]
        async fn connecting_to_a_closed_port_fails() {
            let protocol = <$protocol>::new(&common::options(&[])).unwrap();
            common::connecting_to_a_closed_port_fails(&protocol).await;
        }

        #[tokio::test]
        async fn a_cancelled_call_leaves_the_connection_usable() {
            let server = $fake(NORMAL).await;
            let protocol = <$protocol>::new(&common::options(&[])).unwrap();
            let conn = common::connect(&protocol, server.addr).await;
            common::a_cancelled_call_leaves_the_connection_usable(&conn).await;
        }
    };
    ($protocol:ty, $fake:ident, thrown: $thrown:expr) => {
        common::fake_server_tests!($protocol, $fake);

        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn every_operation_many_in_flight_on_one_connection() {
            let server = $fake(NORMAL).await;
            let protocol = <$protocol>::new(&common::options(&[])).unwrap();
            // A slow call first: every other reply overtakes it.
            common::many_in_flight_out_of_order(&protocol, server.addr, 10).await;
        }

        #[tokio::test]
        async fn exceptions_and_heartbeats_both_ways() {
            let server = $fake(Behaviour::HEARTBEAT_FIRST).await;
            let protocol = <$protocol>::new(&common::options(&[("heartbeat_s", "1")])).unwrap();
            let conn = common::connect(&protocol, server.addr).await;
            common::a_thrown_exception_and_heartbeats_both_ways(&conn, &server.seen, $thrown).await;
        }

        #[tokio::test]
        async fn a_server_that_hangs_up_fails_the_calls() {
            let server = $fake(Behaviour::hanging_up_after(1)).await;
            let protocol = <$protocol>::new(&common::options(&[])).unwrap();
            let conn = common::connect(&protocol, server.addr).await;
            common::calls_fail_once_the_server_hangs_up(&conn).await;
        }
    };
}
#[allow(unused_imports)]
pub(crate) use fake_server_tests;

/// A closed-loop cell of `callers` client programs (a connection each)
/// making `calls` calls each, opening its window at once, on the engine the
/// runner picks; a test sets its options, timeout or engine on top.
pub fn calls_cell(
    protocol: &str,
    target: &str,
    operation: Operation,
    callers: u32,
    calls: u64,
) -> rpclab_model::spec::CellSpec {
    use rpclab_model::spec::{CellSpec, EngineChoice, Load, Shape, Stop};
    CellSpec {
        protocol: protocol.into(),
        target: target.to_owned(),
        operation,
        load: Load::Closed(Shape::ClientPrograms.closed(
            callers,
            None,
            Stop::CallsPerWorker(calls),
        )),
        warmup_s: 0.0,
        warmup_calls: 0,
        warmup_max_s: Some(0.0),
        steady: None,
        min_calls: rpclab_model::spec::DEFAULT_MIN_CALLS,
        percentiles: Vec::new(),
        cooldown_s: 0.0,
        timeout_ms: 30_000,
        include_connect: false,
        options: Default::default(),
        engine: EngineChoice::Auto,
    }
}
