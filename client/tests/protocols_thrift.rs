//! The Thrift protocol over real sockets, against a server made of the
//! Thrift compiler's own code for `contract/bench.thrift` (its processor)
//! and the `thrift` crate's synchronous transports, for every transport and
//! protocol; and against misbehaving servers.

mod common;

#[path = "../src/protocols/thrift/generated.rs"]
#[allow(clippy::all, dead_code)]
mod generated;

use generated::{BenchSyncHandler, BenchSyncProcessor};
use rpclab_client::load::timed_call;
use rpclab_client::protocol::{CallError, Connection, Protocol, WireCounter};
use rpclab_client::protocols::thrift::Thrift;
use rpclab_model::contract::{Operation, Value, HELLO_PREFIX};
use std::collections::BTreeMap;
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

/// Echoes as the contract says; `hello` greets, and takes its time when
/// greeting "slow".
struct Echo;

impl BenchSyncHandler for Echo {
    fn handle_echo_order(&self, order: generated::Order) -> thrift::Result<generated::Order> {
        Ok(order)
    }
    fn handle_echo_orders(
        &self,
        orders: Vec<generated::Order>,
    ) -> thrift::Result<Vec<generated::Order>> {
        Ok(orders)
    }
    fn handle_echo_string(&self, value: String) -> thrift::Result<String> {
        Ok(value)
    }
    fn handle_hello(&self, name: String) -> thrift::Result<String> {
        if name == "slow" {
            std::thread::sleep(Duration::from_millis(300));
        }
        Ok(format!("{HELLO_PREFIX}{name}"))
    }
    fn handle_empty(&self) -> thrift::Result<()> {
        Ok(())
    }
}

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
    let options: BTreeMap<String, String> = [("transport", transport), ("protocol", protocol)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Thrift::new(&options).unwrap()
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
    let conn = Arc::new(
        thrift("framed", "binary")
            .connect(&server.addr.to_string(), WireCounter::default())
            .await
            .unwrap(),
    );
    let mut tasks = Vec::new();
    for i in 0..16 {
        let conn = Arc::clone(&conn);
        tasks.push(tokio::spawn(async move {
            let op = Operation::ALL[i % Operation::ALL.len()];
            let call = op.call();
            for _ in 0..10 {
                let reply = conn.call(&call).await.unwrap();
                assert!(reply == call.expected, "{op}: wrong reply");
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(server.accepted.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn a_cancelled_call_does_not_leave_its_reply_to_the_next() {
    for (transport, protocol) in COMBINATIONS {
        let server = sync_server(transport, protocol);
        let conn = thrift(transport, protocol)
            .connect(&server.addr.to_string(), WireCounter::default())
            .await
            .unwrap();
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

#[tokio::test]
async fn an_oversized_frame_is_refused() {
    let addr = raw_server(|_| {
        let mut bytes = 0x7fff_ffffu32.to_be_bytes().to_vec();
        bytes.extend_from_slice(&[0x80, 0x01, 0x00, 0x02]);
        bytes
    })
    .await;
    let conn = thrift("framed", "binary")
        .connect(&addr.to_string(), WireCounter::default())
        .await
        .unwrap();
    match conn.call(&Operation::Empty.call()).await {
        Err(CallError::Protocol(message)) => assert!(message.contains("frame length"), "{message}"),
        other => panic!("expected a protocol error, got {other:?}"),
    }
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
    let conn = thrift("framed", "binary")
        .connect(&addr.to_string(), WireCounter::default())
        .await
        .unwrap();
    match conn.call(&Operation::Empty.call()).await {
        Err(CallError::Protocol(message)) => assert!(message.contains("sequence id"), "{message}"),
        other => panic!("expected a protocol error, got {other:?}"),
    }
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

/// A server that answers right and wrong in turn, with replies of the same
/// length: every wrong one is a failed call, before and after a right one
/// became the reference the others are compared with.
#[tokio::test]
async fn wrong_replies_are_failed_calls_before_and_after_the_reference() {
    let call = Operation::Hello.call();
    let Value::Str(right) = call.expected.clone() else {
        panic!("hello returns a string")
    };
    let wrong: String = right.chars().rev().collect();
    assert_ne!(wrong, right);
    let turn = AtomicUsize::new(0);
    let addr = raw_server(move |request| {
        // The request: frame length, version and type, "hello", seqid.
        let seqid = i32::from_be_bytes(request[17..21].try_into().unwrap());
        let text = if turn.fetch_add(1, Ordering::Relaxed).is_multiple_of(2) {
            &right
        } else {
            &wrong
        };
        hello_reply(seqid, text)
    })
    .await;
    let conn = thrift("framed", "binary")
        .connect(&addr.to_string(), WireCounter::default())
        .await
        .unwrap();
    for i in 0..6 {
        let (_, outcome) = timed_call(&conn, &call, Duration::from_secs(60)).await;
        match (i % 2, outcome) {
            (0, Ok(())) => {}
            (1, Err(CallError::WrongResponse(m))) => assert!(m.contains("hello"), "{m}"),
            (_, other) => panic!("call {i}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_server_that_hangs_up_is_an_io_error() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf).await;
            drop(stream);
        }
    });
    let conn = thrift("buffered", "compact")
        .connect(&addr.to_string(), WireCounter::default())
        .await
        .unwrap();
    let result = conn.call(&Operation::Hello.call()).await;
    assert!(matches!(result, Err(CallError::Io(_))), "{result:?}");
}

#[tokio::test]
async fn refused_connection_is_a_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let result = thrift("framed", "binary")
        .connect(&addr.to_string(), WireCounter::default())
        .await;
    assert!(matches!(result, Err(CallError::Connect(_))), "{result:?}");
}

/// Every operation against a server already running, e.g. thrift-java:
/// `RPCLAB_THRIFT_TARGET=127.0.0.1:9090 RPCLAB_THRIFT_OPTIONS=transport=framed,protocol=binary
/// cargo test -p rpclab-client --test protocols_thrift -- --ignored`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a running server named by RPCLAB_THRIFT_TARGET"]
async fn against_a_running_server() {
    let target = std::env::var("RPCLAB_THRIFT_TARGET").expect("set RPCLAB_THRIFT_TARGET=host:port");
    let protocol = Thrift::new(&common::options_from_env("RPCLAB_THRIFT_OPTIONS")).unwrap();
    common::every_operation_verified(&protocol, &target, 2, 2, 5).await;
}
