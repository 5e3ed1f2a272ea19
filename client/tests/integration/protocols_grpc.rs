//! The gRPC protocol against an in-process tonic server generated from the
//! same `contract/bench.proto` (the server half of `build.rs`'s output).

use crate::common;

use rpclab_client::load::timed_call;
use rpclab_client::protocol::{CallError, Connection, Protocol, WireCounter};
use rpclab_client::protocols::grpc::Grpc;
use rpclab_client::runner::run_cell;
use rpclab_model::contract::{Operation, StringSize, Value, HELLO_PREFIX};
use rpclab_model::spec::{CellSpec, Load, Shape, Stop};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_stream::wrappers::TcpListenerStream;
use tokio_stream::StreamExt;
use tonic::{Code, Request, Response, Status};

use pb::bench_server::{Bench, BenchServer};
use rpclab_protocols::protocols::grpc::echo_server::Echo;
use rpclab_protocols::protocols::grpc::server_pb as pb;

/// Refuses every call with the same status.
struct Busy;

#[tonic::async_trait]
impl Bench for Busy {
    async fn echo_order(&self, _: Request<pb::Order>) -> Result<Response<pb::Order>, Status> {
        Err(busy())
    }

    async fn echo_orders(
        &self,
        _: Request<pb::OrderList>,
    ) -> Result<Response<pb::OrderList>, Status> {
        Err(busy())
    }

    async fn echo_string(&self, _: Request<pb::Text>) -> Result<Response<pb::Text>, Status> {
        Err(busy())
    }

    async fn hello(&self, _: Request<pb::Text>) -> Result<Response<pb::Text>, Status> {
        Err(busy())
    }

    async fn empty(&self, _: Request<pb::Nothing>) -> Result<Response<pb::Nothing>, Status> {
        Err(busy())
    }
}

fn busy() -> Status {
    Status::new(Code::ResourceExhausted, "too busy")
}

/// Answers every call, but every second reply of each operation is wrong
/// (another greeting, another string, another order), and every third
/// `empty` fails with a status: a reply equal in bytes to a verified one
/// must not hide the wrong ones after it.
#[derive(Default)]
struct Flaky {
    calls: AtomicUsize,
}

impl Flaky {
    /// Whether this call's reply is the wrong one.
    fn wrong(&self) -> bool {
        self.calls.fetch_add(1, Ordering::Relaxed) % 2 == 1
    }
}

#[tonic::async_trait]
impl Bench for Flaky {
    async fn echo_order(&self, request: Request<pb::Order>) -> Result<Response<pb::Order>, Status> {
        let mut order = request.into_inner();
        if self.wrong() {
            order.amount += 1.0;
        }
        Ok(Response::new(order))
    }

    async fn echo_orders(
        &self,
        request: Request<pb::OrderList>,
    ) -> Result<Response<pb::OrderList>, Status> {
        let mut list = request.into_inner();
        if self.wrong() {
            list.orders.pop();
        }
        Ok(Response::new(list))
    }

    async fn echo_string(&self, request: Request<pb::Text>) -> Result<Response<pb::Text>, Status> {
        let mut text = request.into_inner();
        if self.wrong() {
            // Same length, one byte off.
            text.value.replace_range(0..1, "#");
        }
        Ok(Response::new(text))
    }

    async fn hello(&self, request: Request<pb::Text>) -> Result<Response<pb::Text>, Status> {
        let name = request.into_inner().value;
        let value = if self.wrong() {
            format!("{HELLO_PREFIX}{name}!")
        } else {
            format!("{HELLO_PREFIX}{name}")
        };
        Ok(Response::new(pb::Text { value }))
    }

    async fn empty(&self, _: Request<pb::Nothing>) -> Result<Response<pb::Nothing>, Status> {
        if self.wrong() {
            return Err(Status::new(Code::Internal, "broken: 100% (✓)"));
        }
        Ok(Response::new(pb::Nothing {}))
    }
}

/// A running in-process server: its address, how many TCP connections it
/// accepted, and a switch to stop it.
struct TestServer {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl TestServer {
    async fn start<B: Bench>(service: B) -> TestServer {
        TestServer::start_on("127.0.0.1:0", service).await
    }

    /// A server on `addr` (e.g. the address of one just stopped).
    async fn start_on<B: Bench>(addr: &str, service: B) -> TestServer {
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&accepted);
        let incoming = TcpListenerStream::new(listener).map(move |conn| {
            counted.fetch_add(1, Ordering::Relaxed);
            conn
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let service = BenchServer::new(service)
            .max_decoding_message_size(16 << 20)
            .max_encoding_message_size(16 << 20);
        let task = tokio::spawn(async move {
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming_shutdown(incoming, async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        TestServer {
            addr,
            accepted,
            stop: Some(stop),
            task,
        }
    }

    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.await.unwrap();
    }
}

fn grpc() -> Grpc {
    Grpc::new(&BTreeMap::new()).unwrap()
}

#[tokio::test]
async fn every_operation_round_trips_and_is_counted() {
    let server = TestServer::start(Echo).await;
    let counter = WireCounter::default();
    let conn = grpc()
        .connect(&server.addr.to_string(), counter.clone())
        .await
        .unwrap();

    for op in Operation::ALL {
        let call = op.call();
        let reply = conn
            .call(&call)
            .await
            .unwrap_or_else(|e| panic!("{op}: {e}"));
        assert!(reply == call.expected, "{op}: wrong reply");
        // A second call on the same connection decodes the same.
        let again = conn
            .call(&call)
            .await
            .unwrap_or_else(|e| panic!("{op}: {e}"));
        assert!(again == call.expected, "{op}: wrong second reply");
    }

    let (sent, received) = counter.totals();
    // Both directions carried the 1 MiB string twice, plus everything else.
    assert!(sent > 2 * 1024 * 1024, "sent {sent}");
    assert!(received > 2 * 1024 * 1024, "received {received}");
    assert_eq!(server.accepted.load(Ordering::Relaxed), 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_share_one_connection() {
    let server = TestServer::start(Echo).await;
    let counter = WireCounter::default();
    let conn = Arc::new(
        grpc()
            .connect(&server.addr.to_string(), counter.clone())
            .await
            .unwrap(),
    );

    // 35 callers at once, 5 on each operation.
    common::calls_verified(&conn, "tonic", Operation::ALL, 5, 5).await;
    assert_eq!(server.accepted.load(Ordering::Relaxed), 1);
    let (sent, received) = counter.totals();
    assert!(sent > 0 && received > 0);
    server.stop().await;
}

#[tokio::test]
async fn server_status_becomes_a_server_error() {
    let server = TestServer::start(Busy).await;
    let conn = common::connect(&grpc(), server.addr).await;
    for op in Operation::ALL {
        match conn.call(&op.call()).await {
            Err(CallError::Server(message)) => assert_eq!(message, "RESOURCE_EXHAUSTED: too busy"),
            other => panic!("{op}: expected a server error, got {other:?}"),
        }
    }
    server.stop().await;
}

/// Wrong replies and failed statuses are failed calls, before and after a
/// right reply became the reference the others are compared with.
#[tokio::test]
async fn wrong_replies_are_failed_calls_not_ok() {
    let server = TestServer::start(Flaky::default()).await;
    let conn = common::connect(&grpc(), server.addr).await;
    let timeout = Duration::from_secs(60);
    for op in Operation::ALL {
        let call = op.call();
        // The server's counter is shared: find where this operation starts.
        let mut outcomes = Vec::new();
        for _ in 0..6 {
            let (_, outcome) = timed_call(&conn, &call, timeout).await;
            outcomes.push(outcome);
        }
        let ok = outcomes.iter().filter(|o| o.is_ok()).count();
        assert_eq!(ok, 3, "{op}: {outcomes:?}");
        for pair in outcomes.chunks(2) {
            assert!(pair[0].is_ok() != pair[1].is_ok(), "{op}: {outcomes:?}");
        }
        for failed in outcomes.iter().filter_map(|o| o.as_ref().err()) {
            match (op, failed) {
                (Operation::Empty, CallError::Server(m)) => {
                    assert_eq!(m, "INTERNAL: broken: 100% (✓)")
                }
                (Operation::Empty, other) => panic!("{op}: {other:?}"),
                (_, CallError::WrongResponse(_)) => {}
                (_, other) => panic!("{op}: expected a wrong response, got {other:?}"),
            }
        }
    }
    server.stop().await;
}

/// A cell against the flaky server counts half its calls as failed, with
/// their reasons, and never a wrong reply as verified.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cell_counts_wrong_replies_as_failures() {
    let server = TestServer::start(Flaky::default()).await;
    let spec = CellSpec {
        protocol: "grpc".into(),
        target: server.addr.to_string(),
        options: BTreeMap::new(),
        operation: Operation::Hello,
        load: Load::Closed(Shape::SharedClient.closed(4, None, Stop::CallsPerWorker(50))),
        warmup_s: 0.0,
        warmup_calls: 0,
        warmup_max_s: None,
        steady: None,
        cooldown_s: 0.0,
        timeout_ms: 60_000,
        include_connect: false,
        min_calls: rpclab_model::spec::DEFAULT_MIN_CALLS,
        percentiles: Vec::new(),
        engine: Default::default(),
    };
    let report = run_cell(&spec).await.unwrap().report;
    assert_eq!(report.calls_ok + report.calls_failed, 200, "{report:?}");
    // Calls complete in any order, so about half are wrong, not exactly.
    assert!(
        report.calls_failed >= 50 && report.calls_ok >= 50,
        "{report:?}"
    );
    assert_eq!(
        report.failures.wrong_response, report.calls_failed,
        "{report:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_stopped_server_is_a_transport_error_not_a_server_error() {
    let server = TestServer::start(Echo).await;
    let conn = common::connect(&grpc(), server.addr).await;
    let call = Operation::Hello.call();
    assert_eq!(conn.call(&call).await.unwrap(), call.expected);
    server.stop().await;

    // The server is gone: the call fails on the closed connection or on
    // reconnecting, and never looks like a status the server sent.
    match conn.call(&call).await {
        Err(CallError::Connect(_) | CallError::Io(_)) => {}
        other => panic!("expected a transport error, got {other:?}"),
    }
}

/// A connection the server closed is reopened by the next call, once a
/// server listens again.
#[tokio::test]
async fn the_next_call_reopens_a_closed_connection() {
    let server = TestServer::start(Echo).await;
    let addr = server.addr.to_string();
    let conn = grpc().connect(&addr, WireCounter::default()).await.unwrap();
    let call = Operation::Hello.call();
    assert_eq!(conn.call(&call).await.unwrap(), call.expected);
    server.stop().await;
    // Until the connection is seen closed, calls fail; none succeeds.
    let again = TestServer::start_on(&addr, Echo).await;
    let mut reply = conn.call(&call).await;
    for _ in 0..1000 {
        if reply.is_ok() {
            break;
        }
        assert!(
            matches!(reply, Err(CallError::Io(_) | CallError::Connect(_))),
            "{reply:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        reply = conn.call(&call).await;
    }
    assert_eq!(reply.unwrap(), call.expected);
    assert_eq!(again.accepted.load(Ordering::Relaxed), 1);
    again.stop().await;
}

#[tokio::test]
async fn a_mismatched_argument_is_refused_before_sending() {
    let server = TestServer::start(Echo).await;
    let conn = common::connect(&grpc(), server.addr).await;
    let mut call = Operation::OrderEcho.call();
    call.argument = Value::Unit;
    assert!(matches!(conn.call(&call).await, Err(CallError::Config(_))));
    server.stop().await;
}

/// Every operation against a server already running, e.g. grpc-java:
/// `RPCLAB_GRPC_TARGET=127.0.0.1:50051 cargo test -p rpclab-client --test integration protocols_grpc:: -- --ignored`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a running server named by RPCLAB_GRPC_TARGET"]
async fn against_a_running_server() {
    let target = std::env::var("RPCLAB_GRPC_TARGET").expect("set RPCLAB_GRPC_TARGET=host:port");
    common::every_operation_verified(&grpc(), &target, 1, 4, 5).await;
}

/// A cell of client programs (a connection each, one call in flight) runs
/// on the poll engine when the request fits one DATA frame of the
/// smallest size a server may set, and verifies every reply there; larger
/// requests run on tasks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_programs_run_on_the_poll_engine_and_verify_every_reply() {
    let server = TestServer::start(Echo).await;
    let target = server.addr.to_string();
    for op in Operation::ALL {
        let spec = common::calls_cell("grpc", &target, op, 3, 20);
        let report = run_cell(&spec).await.unwrap().report;
        let what = format!("{op}: {report:?}");
        let poll = grpc().exchange_to(&op.call(), &target).unwrap().is_some();
        let large = matches!(op, Operation::StringEcho(StringSize::K100 | StringSize::M1));
        assert_eq!(poll, !large, "{op}");
        let engine = if poll { "poll" } else { "tasks" };
        assert_eq!(report.engine.as_deref(), Some(engine), "{what}");
        assert_eq!((report.calls_ok, report.calls_failed), (60, 0), "{what}");
        assert!(report.verified, "{what}");
    }
    assert_eq!(
        server.accepted.load(Ordering::Relaxed),
        3 * Operation::ALL.len()
    );
    server.stop().await;
}

/// On the poll engine too, wrong replies and failed statuses are failed
/// calls with their reasons, and the connection carries on after each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_poll_engine_counts_wrong_replies_and_statuses_as_failures() {
    let server = TestServer::start(Flaky::default()).await;
    let target = server.addr.to_string();
    for op in [Operation::Hello, Operation::Empty] {
        let spec = common::calls_cell("grpc", &target, op, 1, 60);
        let report = run_cell(&spec).await.unwrap().report;
        let what = format!("{op}: {report:?}");
        assert_eq!(report.engine.as_deref(), Some("poll"), "{what}");
        assert_eq!((report.calls_ok, report.calls_failed), (30, 30), "{what}");
        match op {
            Operation::Empty => assert_eq!(report.failures.server_error, 30, "{what}"),
            _ => assert_eq!(report.failures.wrong_response, 30, "{what}"),
        }
    }
    // Wrong replies break no connection.
    assert_eq!(server.accepted.load(Ordering::Relaxed), 2);
    server.stop().await;
}
