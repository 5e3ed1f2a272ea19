//! The Thrift protocol over real sockets, against a server made of the
//! Thrift compiler's own code for `contract/bench.thrift` (its processor)
//! and the `thrift` crate's synchronous transports, for every transport and
//! protocol; and against misbehaving servers.

use crate::common;

use rpclab_client::load::timed_call;
use rpclab_client::protocol::{CallError, Connection, Protocol, WireCounter};
use rpclab_client::protocols::thrift::Thrift;
use rpclab_client::runner::run_cell;
use rpclab_model::contract::{Operation, Value};
use rpclab_model::result::ClientReport;
use rpclab_model::spec::{CellSpec, EngineChoice, Load, Shape, Stop};
use rpclab_protocols::protocols::thrift::generated::BenchSyncProcessor;
use rpclab_protocols::testing::thrift::Echo;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol,
    TInputProtocol, TOutputProtocol,
};
use thrift::server::TProcessor;
use thrift::transport::{
    TBufferedReadTransport, TBufferedWriteTransport, TFramedReadTransport, TFramedWriteTransport,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const COMBINATIONS: [(&str, &str); 4] = [
    ("framed", "binary"),
    ("framed", "compact"),
    ("buffered", "binary"),
    ("buffered", "compact"),
];

/// A blocking Thrift server on a loopback port, one thread per connection,
/// like Java's `TThreadPoolServer`. Its threads end with the test process.
struct SyncServer {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
}

fn sync_server(transport: &str, protocol: &str) -> SyncServer {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&accepted);
    let processor = Arc::new(BenchSyncProcessor::new(Echo));
    let (framed, compact) = (transport == "framed", protocol == "compact");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            counted.fetch_add(1, Ordering::Relaxed);
            let processor = Arc::clone(&processor);
            std::thread::spawn(move || {
                stream.set_nodelay(true).unwrap();
                let reader = stream.try_clone().unwrap();
                let (r, w): (Box<dyn Read + Send>, Box<dyn Write + Send>) = if framed {
                    (
                        Box::new(TFramedReadTransport::new(reader)),
                        Box::new(TFramedWriteTransport::new(stream)),
                    )
                } else {
                    (
                        Box::new(TBufferedReadTransport::new(reader)),
                        Box::new(TBufferedWriteTransport::new(stream)),
                    )
                };
                let (mut i, mut o): (Box<dyn TInputProtocol>, Box<dyn TOutputProtocol>) = if compact
                {
                    (
                        Box::new(TCompactInputProtocol::new(r)),
                        Box::new(TCompactOutputProtocol::new(w)),
                    )
                } else {
                    (
                        Box::new(TBinaryInputProtocol::new(r, true)),
                        Box::new(TBinaryOutputProtocol::new(w, true)),
                    )
                };
                // Until the client hangs up.
                while processor.process(&mut *i, &mut *o).is_ok() {}
            });
        }
    });
    SyncServer { addr, accepted }
}

fn thrift(transport: &str, protocol: &str) -> Thrift {
    Thrift::new(&common::options(&[
        ("transport", transport),
        ("protocol", protocol),
    ]))
    .unwrap()
}

#[tokio::test]
async fn every_operation_with_every_transport_and_protocol() {
    for (transport, protocol) in COMBINATIONS {
        let server = sync_server(transport, protocol);
        let counter = WireCounter::default();
        let conn = thrift(transport, protocol)
            .connect(&server.addr.to_string(), counter.clone())
            .await
            .unwrap();
        for op in Operation::ALL {
            let call = op.call();
            for round in 0..2 {
                let reply = conn
                    .call(&call)
                    .await
                    .unwrap_or_else(|e| panic!("{transport}/{protocol} {op} #{round}: {e}"));
                assert!(
                    reply == call.expected,
                    "{transport}/{protocol} {op}: wrong reply"
                );
            }
        }
        let (sent, received) = counter.totals();
        assert!(
            sent > 2 * 1024 * 1024,
            "{transport}/{protocol}: sent {sent}"
        );
        assert!(
            received > 2 * 1024 * 1024,
            "{transport}/{protocol}: received {received}"
        );
        assert_eq!(server.accepted.load(Ordering::Relaxed), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_callers_take_turns_on_one_connection() {
    let server = sync_server("framed", "binary");
    let conn = Arc::new(common::connect(&thrift("framed", "binary"), server.addr).await);
    // 14 callers at once, 2 on each operation.
    common::calls_verified(&conn, "thrift", Operation::ALL, 2, 10).await;
    assert_eq!(server.accepted.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn a_cancelled_call_does_not_leave_its_reply_to_the_next() {
    for (transport, protocol) in COMBINATIONS {
        let server = sync_server(transport, protocol);
        let conn = common::connect(&thrift(transport, protocol), server.addr).await;
        let mut slow = Operation::Hello.call();
        slow.argument = Value::Str("slow".into());
        let cancelled = tokio::time::timeout(Duration::from_millis(50), conn.call(&slow)).await;
        assert!(cancelled.is_err(), "the slow call should have timed out");

        // The late reply to the cancelled call must not be taken for this one.
        let call = Operation::Hello.call();
        assert_eq!(conn.call(&call).await.unwrap(), call.expected);
        assert_eq!(
            server.accepted.load(Ordering::Relaxed),
            2,
            "a new connection replaces the dirty one"
        );
        assert_eq!(conn.call(&call).await.unwrap(), call.expected);
        assert_eq!(server.accepted.load(Ordering::Relaxed), 2);
    }
}

/// A server that answers every request with `reply(request_bytes)`.
async fn raw_server<F>(reply: F) -> SocketAddr
where
    F: Fn(&[u8]) -> Vec<u8> + Send + Sync + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let reply = Arc::new(reply);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let reply = Arc::clone(&reply);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(n) = stream.read(&mut buf).await {
                    if n == 0 || stream.write_all(&reply(&buf[..n])).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    addr
}

/// `empty()` on a framed binary connection to `addr` fails with a protocol
/// error that says `what`.
async fn empty_is_a_protocol_error(addr: SocketAddr, what: &str) {
    let conn = common::connect(&thrift("framed", "binary"), addr).await;
    match conn.call(&Operation::Empty.call()).await {
        Err(CallError::Protocol(message)) => assert!(message.contains(what), "{message}"),
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[tokio::test]
async fn an_oversized_frame_is_refused() {
    let addr = raw_server(|_| {
        let mut bytes = 0x7fff_ffffu32.to_be_bytes().to_vec();
        bytes.extend_from_slice(&[0x80, 0x01, 0x00, 0x02]);
        bytes
    })
    .await;
    empty_is_a_protocol_error(addr, "frame length").await;
}

#[tokio::test]
async fn a_reply_with_another_sequence_id_is_refused() {
    // Answers the framed binary request with a REPLY to `empty` of seqid 999.
    let addr = raw_server(|_| {
        let mut message = 0x8001_0002u32.to_be_bytes().to_vec();
        message.extend_from_slice(&5i32.to_be_bytes());
        message.extend_from_slice(b"empty");
        message.extend_from_slice(&999i32.to_be_bytes());
        message.push(0);
        let mut frame = (message.len() as i32).to_be_bytes().to_vec();
        frame.extend_from_slice(&message);
        frame
    })
    .await;
    empty_is_a_protocol_error(addr, "sequence id").await;
}

/// A framed binary REPLY to `hello` with sequence id `seqid` and `text`.
fn hello_reply(seqid: i32, text: &str) -> Vec<u8> {
    let mut message = 0x8001_0002u32.to_be_bytes().to_vec();
    message.extend_from_slice(&5i32.to_be_bytes());
    message.extend_from_slice(b"hello");
    message.extend_from_slice(&seqid.to_be_bytes());
    message.extend_from_slice(&[11, 0, 0]); // field 0, a string
    message.extend_from_slice(&(text.len() as i32).to_be_bytes());
    message.extend_from_slice(text.as_bytes());
    message.push(0);
    let mut frame = (message.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&message);
    frame
}

/// A server answering framed binary `hello` requests right and wrong in
/// turn (the greeting reversed: a reply of the same length).
async fn right_and_wrong_in_turn() -> SocketAddr {
    let right = hello_text();
    let wrong: String = right.chars().rev().collect();
    assert_ne!(wrong, right);
    let turn = AtomicUsize::new(0);
    raw_server(move |request| {
        // The request: frame length, version and type, "hello", seqid.
        let seqid = i32::from_be_bytes(request[17..21].try_into().unwrap());
        let text = if turn.fetch_add(1, Ordering::Relaxed).is_multiple_of(2) {
            &right
        } else {
            &wrong
        };
        hello_reply(seqid, text)
    })
    .await
}

/// A server that answers right and wrong in turn, with replies of the same
/// length: every wrong one is a failed call, before and after a right one
/// became the reference the others are compared with.
#[tokio::test]
async fn wrong_replies_are_failed_calls_before_and_after_the_reference() {
    let call = Operation::Hello.call();
    let addr = right_and_wrong_in_turn().await;
    let conn = common::connect(&thrift("framed", "binary"), addr).await;
    for i in 0..6 {
        let (_, outcome) = timed_call(&conn, &call, Duration::from_secs(60)).await;
        match (i % 2, outcome) {
            (0, Ok(())) => {}
            (1, Err(CallError::WrongResponse(m))) => assert!(m.contains("hello"), "{m}"),
            (_, other) => panic!("call {i}: {other:?}"),
        }
    }
}

/// A server that reads a request and hangs up, on every connection.
async fn hanging_up_server() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf).await;
            drop(stream);
        }
    });
    addr
}

#[tokio::test]
async fn a_server_that_hangs_up_is_an_io_error() {
    let addr = hanging_up_server().await;
    let conn = common::connect(&thrift("buffered", "compact"), addr).await;
    let result = conn.call(&Operation::Hello.call()).await;
    assert!(matches!(result, Err(CallError::Io(_))), "{result:?}");
}

#[tokio::test]
async fn refused_connection_is_a_connect_error() {
    common::connecting_to_a_closed_port_fails(&thrift("framed", "binary")).await;
}

/// Every operation against a server already running, e.g. thrift-java:
/// `RPCLAB_THRIFT_TARGET=127.0.0.1:9090 RPCLAB_THRIFT_OPTIONS=transport=framed,protocol=binary
/// cargo test -p rpclab-client --test integration protocols_thrift:: -- --ignored`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a running server named by RPCLAB_THRIFT_TARGET"]
async fn against_a_running_server() {
    let (target, protocol) = common::running_server::<Thrift>("THRIFT");
    common::every_operation_verified(&protocol, &target, 2, 2, 5).await;
}

/// A closed-loop cell of `callers` client programs (a connection each)
/// making `calls` calls each, opening its window at once.
fn cell(
    target: SocketAddr,
    (transport, protocol): (&str, &str),
    operation: Operation,
    callers: u32,
    calls: u64,
    timeout_ms: u64,
    engine: EngineChoice,
) -> CellSpec {
    CellSpec {
        timeout_ms,
        options: [("transport", transport), ("protocol", protocol)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        engine,
        ..common::calls_cell("thrift", &target.to_string(), operation, callers, calls)
    }
}

/// The poll engine runs a cell of client programs on every transport and
/// protocol, verifying every reply, small and large (a 100 KiB string
/// arrives in many reads); the tasks engine runs the same cell to the same
/// counts.
#[tokio::test]
async fn both_engines_make_every_call_of_a_cell_verified() {
    for combination in COMBINATIONS {
        let server = sync_server(combination.0, combination.1);
        for operation in [
            Operation::Hello,
            Operation::OrderEcho,
            Operation::StringEcho(rpclab_model::contract::StringSize::K100),
        ] {
            for (engine, name) in [(EngineChoice::Auto, "poll"), (EngineChoice::Tasks, "tasks")] {
                let spec = cell(server.addr, combination, operation, 3, 40, 60_000, engine);
                let report = run_cell(&spec).await.unwrap().report;
                let what = format!("{combination:?} {operation} {name}: {report:?}");
                assert_eq!(report.engine.as_deref(), Some(name), "{what}");
                assert_eq!((report.calls_ok, report.calls_failed), (120, 0), "{what}");
                assert!(report.verified, "{what}");
                assert!(report.bytes_sent_per_call > 0.0, "{what}");
                assert!(report.bytes_received_per_call > 0.0, "{what}");
            }
        }
    }
}

/// A cell the poll engine cannot run (callers sharing a connection) runs
/// on tasks.
#[tokio::test]
async fn callers_sharing_a_connection_run_on_tasks() {
    let server = sync_server("framed", "binary");
    let mut spec = cell(
        server.addr,
        ("framed", "binary"),
        Operation::Hello,
        4,
        10,
        60_000,
        EngineChoice::Auto,
    );
    spec.load = Load::Closed(Shape::SharedClient.closed(4, None, Stop::CallsPerWorker(10)));
    let report = run_cell(&spec).await.unwrap().report;
    assert_eq!(report.engine.as_deref(), Some("tasks"), "{report:?}");
    assert_eq!(
        (report.calls_ok, report.calls_failed),
        (40, 0),
        "{report:?}"
    );
    assert_eq!(server.accepted.load(Ordering::Relaxed), 1);
}

/// On the poll engine, as on tasks, a wrong reply is a failed call, before
/// and after a right one became the reference.
#[tokio::test]
async fn the_poll_engine_counts_wrong_replies_as_failed_calls() {
    let addr = right_and_wrong_in_turn().await;
    let report = hellos_on_poll_engine(addr, ("framed", "binary"), 2, 50, 60_000).await;
    assert_eq!(report.calls_ok + report.calls_failed, 100, "{report:?}");
    assert_eq!(
        report.failures.wrong_response, report.calls_failed,
        "{report:?}"
    );
    assert!(report.calls_ok > 0 && report.calls_failed > 0, "{report:?}");
}

/// A call past its timeout fails as a timeout, and its connection is
/// replaced: the first connection never answers, the next ones do.
#[tokio::test]
async fn the_poll_engine_times_out_a_silent_connection_and_replaces_it() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&accepted);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let silent = counted.fetch_add(1, Ordering::Relaxed) == 0;
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(n) = stream.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    if silent {
                        continue;
                    }
                    let seqid = i32::from_be_bytes(buf[17..21].try_into().unwrap());
                    let reply = hello_reply(seqid, &hello_text());
                    if stream.write_all(&reply).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    let report = hellos_on_poll_engine(addr, ("framed", "binary"), 1, 3, 200).await;
    // The timed-out call is the window's only if the window had opened by
    // then; every call after it is answered.
    assert_eq!(report.calls_ok + report.calls_failed, 3, "{report:?}");
    assert_eq!(report.failures.timeout, report.calls_failed, "{report:?}");
    assert!(report.calls_ok >= 2, "{report:?}");
    assert_eq!(accepted.load(Ordering::Relaxed), 2, "{report:?}");
}

/// The report of a cell of `hello` calls to `target` (`callers` making
/// `calls` each), which must have run on the poll engine.
async fn hellos_on_poll_engine(
    target: SocketAddr,
    wire: (&str, &str),
    callers: u32,
    calls: u64,
    timeout_ms: u64,
) -> ClientReport {
    let spec = cell(
        target,
        wire,
        Operation::Hello,
        callers,
        calls,
        timeout_ms,
        EngineChoice::Auto,
    );
    let report = run_cell(&spec).await.unwrap().report;
    assert_eq!(report.engine.as_deref(), Some("poll"), "{report:?}");
    report
}

/// What `hello` answers as the contract says.
fn hello_text() -> String {
    match Operation::Hello.call().expected {
        Value::Str(text) => text,
        other => panic!("hello returns a string, not {other:?}"),
    }
}

/// A server that hangs up on every request: every call of the window
/// fails, none is lost, and the engine stops when its calls are made.
#[tokio::test]
async fn the_poll_engine_survives_a_server_that_hangs_up() {
    let addr = hanging_up_server().await;
    let report = hellos_on_poll_engine(addr, ("buffered", "compact"), 2, 5, 60_000).await;
    assert_eq!(
        (report.calls_ok, report.calls_failed),
        (0, 10),
        "{report:?}"
    );
    let f = &report.failures;
    assert_eq!(f.io + f.connect, 10, "{report:?}");
}
