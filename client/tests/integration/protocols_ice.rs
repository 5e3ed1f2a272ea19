//! The Ice protocol: against golden bytes recorded from the real Ice for
//! Java runtime (`crates/ice-protocol/golden/vectors`, Java wrote, Rust reads and
//! writes the same bytes, on tasks and in the poll engine's exchange); against the real Ice for Java server and locator
//! of `crates/ice-protocol/golden/java` (Rust writes, Java reads; needs Maven, a JDK
//! and slice2java, skipped with RPCLAB_SKIP_JAVA_TESTS=1); against an
//! in-process server that answers out of order, sends heartbeats and hangs
//! up; with property tests of the codec; and, when `RPCLAB_ICE_TARGET` is
//! set, against a running `servers/ice-*` container.

use crate::common;

use common::{options, FakeConnection};
use proptest::prelude::*;
use rpclab_client::protocol::{CallError, Connection, Protocol, WireCounter};
use rpclab_client::protocols::ice::codec::{
    self, Header, Identity, Method, ReplyStatus, HEADER_LEN,
};
use rpclab_client::protocols::ice::{Ice, IceExchange};
use rpclab_model::contract::{Operation, Value};
use rpclab_protocols::testing::{
    decoding, exchange_of, exchanges_verified, one_exchange, with_id_at, wrong_replies_fail,
};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/ice-protocol/golden")
}

/// The messages of a recorded byte stream, in order.
fn messages(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let h = codec::frame(rest)
            .unwrap()
            .expect("the recording ends inside a message");
        out.push(&rest[..h.size]);
        rest = &rest[h.size..];
    }
    out
}

/// A golden exchange recorded from Java: the client's and the server's
/// byte streams and the calls (operation, case) the client made.
struct Recording {
    client: Vec<u8>,
    server: Vec<u8>,
    calls: Vec<(String, String)>,
}

impl Recording {
    /// The client's requests and the server's replies, message by message;
    /// the server validates the connection first, as every Ice server does.
    fn messages(&self) -> (Vec<&[u8]>, Vec<&[u8]>) {
        let replies = messages(&self.server);
        assert_eq!(replies[0], codec::validate_connection());
        (messages(&self.client), replies)
    }
}

fn golden(name: &str) -> Recording {
    let dir = golden_dir().join("vectors");
    let read = |f: String| {
        std::fs::read(dir.join(&f)).unwrap_or_else(|e| {
            panic!("{f}: {e}; run crates/ice-protocol/golden/regenerate.sh to make the vectors")
        })
    };
    let calls = String::from_utf8(read(format!("{name}.calls")))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (op, case) = l.split_once(' ').unwrap();
            (op.to_owned(), case.to_owned())
        })
        .collect();
    Recording {
        client: read(format!("{name}.client.bin")),
        server: read(format!("{name}.server.bin")),
        calls,
    }
}

/// The contract call behind a golden case name (an operation, or an error
/// case that sends `hello("aa")`-like calls).
fn golden_call(case: &str) -> Option<Operation> {
    case.parse::<Operation>().ok()
}

#[test]
fn java_wrote_rust_reads_and_writes_the_same_bytes() {
    let recording = golden("direct");
    let calls = &recording.calls;
    // The server validates the connection first; the client closes it
    // gracefully last.
    let (requests, replies) = recording.messages();
    assert_eq!(*requests.last().unwrap(), codec::close_connection());
    assert_eq!(requests.len(), calls.len() + 1, "one request per call");
    assert_eq!(replies.len(), calls.len() + 1, "one reply per call");

    for (i, (operation, case)) in calls.iter().enumerate() {
        let id = i as i32 + 1;
        let request = requests[i];
        let reply = replies[i + 1];
        let parsed = codec::decode_request(request).unwrap();
        assert_eq!(
            (parsed.id, parsed.operation.as_str()),
            (id, operation.as_str())
        );
        assert_eq!(Header::decode(reply).unwrap().message_type, codec::REPLY);
        assert_eq!(codec::reply_request_id(reply).unwrap(), id);
        let body = &reply[HEADER_LEN + 4..];
        match golden_call(case) {
            Some(op) => {
                let call = op.call();
                let method = op.method();
                // Rust writes exactly what Java wrote.
                let mut mine = Vec::new();
                codec::encode_call(
                    &mut mine,
                    id,
                    &Identity::parse("bench"),
                    method,
                    &call.argument,
                )
                .unwrap();
                assert_eq!(mine, request, "{case}: request bytes");
                // Rust reads what Java wrote.
                assert_eq!(
                    codec::read_argument(parsed.params, method).unwrap(),
                    call.argument,
                    "{case}: argument"
                );
                assert_eq!(
                    codec::decode_reply(body, method).unwrap(),
                    call.expected,
                    "{case}: reply"
                );
            }
            None => {
                let expected = match case.as_str() {
                    "object-not-exist" => "object does not exist",
                    "facet-not-exist" => "facet does not exist",
                    "operation-not-exist" => "operation does not exist",
                    "unknown-exception" => "with UnknownException: ",
                    "unknown-local-exception" => "with UnknownLocalException: ",
                    other => panic!("unknown golden case {other}"),
                };
                match codec::decode_reply(body, Method::Hello) {
                    Err(CallError::Server(m)) => {
                        assert!(m.contains(expected), "{case}: {m}");
                        if case.starts_with("unknown") {
                            assert!(m.contains("raised by the golden servant"), "{case}: {m}");
                        }
                    }
                    other => panic!("{case}: {other:?}"),
                }
                if case == "object-not-exist" {
                    let mut mine = Vec::new();
                    let call = Operation::Hello.call();
                    codec::encode_call(
                        &mut mine,
                        id,
                        &Identity::parse("missing"),
                        Method::Hello,
                        &call.argument,
                    )
                    .unwrap();
                    assert_eq!(mine, request, "{case}: request bytes");
                }
                if case == "operation-not-exist" {
                    let mut mine = Vec::new();
                    codec::encode_request(
                        &mut mine,
                        id,
                        &Identity::parse("bench"),
                        "nope",
                        codec::MODE_NORMAL,
                        |_| {},
                    );
                    assert_eq!(mine, request, "{case}: request bytes");
                }
            }
        }
    }
}

/// An Ice message with its request id (that of a request or a reply)
/// replaced: a reply must carry the id of the request in flight.
fn with_id(message: &[u8], id: u64) -> Vec<u8> {
    with_id_at(message, HEADER_LEN, &(id as i32).to_le_bytes())
}

/// A direct proxy's exchange.
fn exchange(operation: Operation) -> IceExchange {
    exchange_of(&Ice::new(&options(&[])).unwrap(), operation)
}

/// The poll engine's exchange on a new connection: Java's requests (ids
/// counted per connection from 1), the server's validate-connection
/// skipped, Java's replies verified whole or in pieces.
#[test]
fn the_exchange_writes_javas_requests_and_verifies_javas_replies() {
    let recording = golden("direct");
    let calls = &recording.calls;
    let (requests, replies) = recording.messages();
    let mut verified = 0;
    for (i, (_, case)) in calls.iter().enumerate() {
        let Some(operation) = golden_call(case) else {
            continue;
        };
        let server = |id, sent: &[u8]| {
            assert_eq!(sent, with_id(requests[i], id), "{case}: request");
            let mut stream = Vec::new();
            if id == 1 {
                stream.extend_from_slice(replies[0]); // validate-connection
            }
            stream.extend(with_id(replies[i + 1], id));
            stream
        };
        exchanges_verified(
            || exchange(operation),
            &[1, 9, usize::MAX],
            1..=2,
            server,
            case,
        );
        verified += 1;
    }
    assert!(
        verified >= 5,
        "every operation has a golden call: {verified}"
    );
}

/// Java's string replies are found to be the expected strings where they
/// lie (the poll engine then makes no value); its other replies, and a
/// string reply to another call, are not (they are decoded).
#[test]
fn javas_string_replies_are_found_in_place() {
    let recording = golden("direct");
    let (_, replies) = recording.messages();
    let mut found = Vec::new();
    for (i, (_, case)) in recording.calls.iter().enumerate() {
        let body = &replies[i + 1][HEADER_LEN + 4..];
        for operation in Operation::ALL {
            let call = operation.call();
            if codec::is_expected(body, call.operation.method(), &call.expected) {
                let decoded = codec::decode_reply(body, call.operation.method());
                assert!(
                    matches!(&decoded, Ok(v) if *v == call.expected),
                    "{case}: {decoded:?}"
                );
                found.push((case.as_str(), operation));
            }
        }
    }
    let k1 = Operation::StringEcho(rpclab_model::contract::StringSize::K1);
    let k100 = Operation::StringEcho(rpclab_model::contract::StringSize::K100);
    assert_eq!(
        found,
        [
            ("string-1k", k1),
            ("hello", Operation::Hello),
            ("string-100k", k100)
        ]
    );
}

/// A wrong value, a server's exception, a reply to another request and the
/// server closing the connection: a failed call, a failed call, a stream
/// out of step twice.
#[test]
fn the_exchange_fails_wrong_replies() {
    let recording = golden("direct");
    let calls = &recording.calls;
    let (_, replies) = recording.messages();
    let reply_of = |case: &str| {
        let i = calls.iter().position(|(_, c)| c == case).unwrap();
        replies[i + 1].to_vec()
    };
    let mut hello = exchange(Operation::Hello);
    wrong_replies_fail(
        &mut hello,
        |_| with_id(&reply_of("string-1k"), 1),
        |_| with_id(&reply_of("object-not-exist"), 2),
        |_| with_id(&reply_of("hello"), 2),
        "ice",
    );
    let closed = one_exchange(&mut hello, |_| codec::close_connection().to_vec(), 3);
    assert!(matches!(closed, Err(CallError::Protocol(_))), "{closed:?}");
}

/// A proxy located through IceGrid runs on tasks: the poll engine dials
/// the target, not the located adapter.
#[test]
fn an_indirect_proxy_runs_on_tasks() {
    let located = Ice::new(&options(&[
        ("adapter", "BenchAdapter"),
        ("locator", "IceGrid/Locator:tcp -h 127.0.0.1 -p 10000"),
    ]))
    .unwrap();
    assert!(located
        .exchange(&Operation::Hello.call())
        .unwrap()
        .is_none());
}

#[test]
fn java_locator_golden() {
    let recording = golden("locator");
    let (requests, replies) = recording.messages();
    assert_eq!(
        recording.calls[0],
        ("findAdapterById".into(), "BenchAdapter".into())
    );
    // Rust asks exactly as Java's runtime asks.
    let mut mine = Vec::new();
    codec::encode_find_adapter_by_id(
        &mut mine,
        1,
        &Identity::parse("IceGrid/Locator"),
        "BenchAdapter",
    );
    assert_eq!(mine, requests[0]);
    let parsed = codec::decode_request(requests[0]).unwrap();
    assert_eq!(parsed.mode, codec::MODE_NONMUTATING);
    // The located proxy: a direct proxy with one TCP endpoint.
    let proxy = codec::decode_find_adapter_reply(&replies[1][HEADER_LEN + 4..])
        .unwrap()
        .unwrap();
    assert_eq!(proxy.identity.name, "dummy");
    assert_eq!(proxy.endpoints.len(), 1);
    assert_eq!(proxy.endpoints[0].host, "127.0.0.1");
    assert!(proxy.endpoints[0].port > 0);
    // An unknown adapter: the locator's user exception (Java's runtime
    // asks more than once), reported with its type id.
    assert!(replies.len() >= 3);
    for reply in &replies[2..] {
        match codec::decode_find_adapter_reply(&reply[HEADER_LEN + 4..]).map_err(CallError::from) {
            Err(CallError::Server(m)) => {
                assert!(m.contains("::Ice::AdapterNotFoundException"), "{m}");
                assert!(m.contains("is the IceGrid application deployed?"), "{m}");
            }
            other => panic!("{other:?}"),
        }
    }
}

// ------------------------------------------------ Rust writes, Java reads

/// The golden generator's `serve` mode: the real Ice for Java runtime
/// serving contract/bench.ice and a locator; killed when dropped.
struct JavaServer {
    _child: common::KilledOnDrop,
    bench: u16,
    locator: u16,
}

fn java_server() -> Option<JavaServer> {
    if std::env::var("RPCLAB_SKIP_JAVA_TESTS").as_deref() == Ok("1") {
        eprintln!("skipped (RPCLAB_SKIP_JAVA_TESTS=1)");
        return None;
    }
    let pom = golden_dir().join("java/pom.xml");
    let mut child = Command::new("mvn")
        .args(["-B", "-q", "-Dstyle.color=never", "-f"])
        .arg(&pom)
        .args(["compile", "exec:java", "-Dexec.args=serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run `mvn` ({e}): Maven, a JDK 17+ and slice2java 3.7 (Debian: \
                 zeroc-ice-compilers) are needed to check that Java reads what Rust \
                 writes; set RPCLAB_SKIP_JAVA_TESTS=1 to skip this test"
            )
        });
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        // Maven's console may prefix the line with ANSI escapes.
        if let Some(ports) = line.find("READY ").map(|at| &line[at + 6..]) {
            let (bench, locator) = ports.split_once(' ').unwrap();
            // Keep draining stdout so the server never blocks on it.
            std::thread::spawn(move || for _ in lines {});
            return Some(JavaServer {
                _child: common::KilledOnDrop(child),
                bench: bench.parse().unwrap(),
                locator: locator.parse().unwrap(),
            });
        }
    }
    let status = child.wait().unwrap();
    panic!(
        "the Java Ice server did not start ({status}): see Maven's output above; it needs \
         slice2java 3.7 on the PATH (Debian: zeroc-ice-compilers); set \
         RPCLAB_SKIP_JAVA_TESTS=1 to skip this test"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn java_reads_what_rust_writes_direct_and_located() {
    let Some(server) = java_server() else {
        return;
    };
    let target = format!("127.0.0.1:{}", server.bench);
    let direct = Ice::new(&options(&[])).unwrap();
    common::every_operation_verified(&direct, &target, 2, 4, 3).await;
    eprintln!("direct: every operation verified against the Java server");

    let locator = format!("IceGrid/Locator:tcp -h 127.0.0.1 -p {}", server.locator);
    let located = Ice::new(&options(&[
        ("adapter", "BenchAdapter"),
        ("locator", &locator),
    ]))
    .unwrap();
    // The target is not used for an indirect proxy.
    common::every_operation_verified(&located, "127.0.0.1:1", 1, 2, 2).await;
    eprintln!("located: every operation verified through the Java locator");
    assert_eq!(
        located.located_endpoints().unwrap()[0].port,
        server.bench,
        "the locator's endpoints are cached"
    );

    let unknown = Ice::new(&options(&[
        ("adapter", "NoSuchAdapter"),
        ("locator", &locator),
    ]))
    .unwrap();
    let e = common::connect_error(&unknown, "127.0.0.1:1").await;
    assert!(
        matches!(&e, CallError::Server(m) if m.contains("AdapterNotFoundException")),
        "{e:?}"
    );

    // The server's failures come back as clear errors.
    let conn = direct
        .connect(&target, WireCounter::default())
        .await
        .unwrap();
    let mut call = Operation::Hello.call();
    call.argument = Value::Str("raise".into());
    match conn.call(&call).await {
        Err(CallError::Server(m)) => assert!(m.contains("UnknownException"), "{m}"),
        other => panic!("{other:?}"),
    }
    let missing = Ice::new(&options(&[("identity", "missing")])).unwrap();
    let conn = common::connect(&missing, &target).await;
    match conn.call(&Operation::Empty.call()).await {
        Err(CallError::Server(m)) => assert!(m.contains("object does not exist"), "{m}"),
        other => panic!("{other:?}"),
    }
}

// ------------------------------------------------ an in-process server

#[derive(Clone, Copy)]
struct Behaviour {
    /// Send a validate-connection (heartbeat) before each reply.
    heartbeats: bool,
    /// Send close-connection after this many requests.
    close_after: Option<usize>,
}

const NORMAL: Behaviour = Behaviour {
    heartbeats: false,
    close_after: None,
};

/// What the server's connections saw.
#[derive(Clone, Default)]
struct Seen {
    heartbeats_received: Arc<AtomicUsize>,
    closes_received: Arc<AtomicUsize>,
}

type FakeServer = common::SeeingServer<Seen>;

/// An Ice server of `rpclab::Bench` answering each request on its own
/// task, `hello("slow")` late, so replies overtake each other.
async fn fake_server(behaviour: Behaviour) -> FakeServer {
    common::fake_server_seeing(move |conn, seen| serve(conn, behaviour, seen)).await
}

async fn serve(mut conn: FakeConnection, behaviour: Behaviour, seen: Seen) {
    conn.send(codec::validate_connection().to_vec());
    let mut requests = 0;
    while let Some((h, message)) = conn
        .next_frame(|b| codec::frame(b).unwrap().map(|h| (h, h.size)))
        .await
    {
        match h.message_type {
            codec::VALIDATE_CONNECTION => {
                seen.heartbeats_received.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            codec::CLOSE_CONNECTION => {
                seen.closes_received.fetch_add(1, Ordering::Relaxed);
                return;
            }
            _ => {}
        }
        requests += 1;
        if behaviour.close_after.is_some_and(|n| requests > n) {
            conn.send(codec::close_connection().to_vec());
            return;
        }
        if behaviour.heartbeats {
            conn.send(codec::validate_connection().to_vec());
        }
        let tx = conn.tx.clone();
        tokio::spawn(async move {
            let _ = tx.send(answer(&message).await);
        });
    }
}

async fn answer(message: &[u8]) -> Vec<u8> {
    let r = codec::decode_request(message).unwrap();
    assert_eq!(r.encoding, (1, 1));
    let mut out = Vec::new();
    let method = match r.operation.as_str() {
        "echoOrder" => Method::EchoOrder,
        "echoOrders" => Method::EchoOrders,
        "echoString" => Method::EchoString,
        "hello" => Method::Hello,
        "empty" => Method::Empty,
        _ => {
            codec::encode_reply(&mut out, r.id, ReplyStatus::OperationNotExist, |o| {
                codec::write_string(o, &r.identity.name);
                codec::write_string(o, &r.identity.category);
                codec::write_size(o, 0);
                codec::write_string(o, &r.operation);
            });
            return out;
        }
    };
    let argument = codec::read_argument(r.params, method).unwrap();
    let reply = match (method, argument) {
        (Method::Hello, Value::Str(name)) => {
            if name == "slow" {
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            Value::Str(format!("hello {name}"))
        }
        (_, v) => v,
    };
    codec::encode_reply(&mut out, r.id, ReplyStatus::Ok, |o| {
        codec::write_value(o, &reply)
    });
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_in_flight_on_one_connection_out_of_order() {
    let server = fake_server(Behaviour {
        heartbeats: true,
        ..NORMAL
    })
    .await;
    let ice = Ice::new(&options(&[])).unwrap();
    let conn = common::many_in_flight_out_of_order(&ice, server.addr, 5).await;
    // Dropping the connection closes it gracefully.
    drop(conn);
    common::eventually("the graceful close", || {
        server.seen.closes_received.load(Ordering::Relaxed) >= 1
    })
    .await;
    assert_eq!(server.seen.closes_received.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn heartbeats_when_idle() {
    let server = fake_server(NORMAL).await;
    let ice = Ice::new(&options(&[("heartbeat_s", "1")])).unwrap();
    let conn = common::connect(&ice, server.addr).await;
    common::eventually("an idle heartbeat", || {
        server.seen.heartbeats_received.load(Ordering::Relaxed) >= 1
    })
    .await;
    assert_eq!(
        conn.call(&Operation::Empty.call()).await.unwrap(),
        Value::Unit
    );
}

#[tokio::test]
async fn a_server_that_closes_fails_the_calls_clearly() {
    let server = fake_server(Behaviour {
        close_after: Some(1),
        ..NORMAL
    })
    .await;
    let ice = Ice::new(&options(&[])).unwrap();
    let conn = common::connect(&ice, server.addr).await;
    let e = common::calls_fail_once_the_server_hangs_up(&conn).await;
    assert!(e.to_string().contains("close-connection"), "{e}");
    assert!(conn.is_closed());
}

common::fake_server_tests!(Ice, fake_server);

#[tokio::test]
async fn connect_failures() {
    let ice = Ice::new(&options(&[])).unwrap();
    let port = common::free_port();
    // A peer that is not an Ice server: its first bytes are not IceP.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let e = common::connect_error(&ice, &addr.to_string()).await;
    assert!(
        matches!(&e, CallError::Connect(m) if m.contains("not an Ice peer")),
        "{e:?}"
    );
    // A locator nobody serves.
    let located = Ice::new(&options(&[
        ("adapter", "BenchAdapter"),
        (
            "locator",
            &format!("IceGrid/Locator:tcp -h 127.0.0.1 -p {port}"),
        ),
    ]))
    .unwrap();
    let e = common::connect_error(&located, "127.0.0.1:1").await;
    assert!(matches!(e, CallError::Connect(_)), "{e:?}");
}

// ------------------------------------------------ property tests

fn value() -> impl Strategy<Value = (Method, Value)> {
    prop_oneof![
        decoding::order().prop_map(|o| (Method::EchoOrder, Value::Order(o))),
        prop::collection::vec(decoding::order(), 0..300)
            .prop_map(|v| (Method::EchoOrders, Value::Orders(v))),
        ".{0,600}".prop_map(|s| (Method::EchoString, Value::Str(s))),
        Just((Method::Empty, Value::Unit)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn requests_and_replies_round_trip((method, v) in value(), id in 1..i32::MAX) {
        let identity = Identity::parse("bench");
        let mut request = Vec::with_capacity(codec::request_capacity(&identity, method.name(), &v));
        let capacity = request.capacity();
        codec::encode_call(&mut request, id, &identity, method, &v).unwrap();
        prop_assert!(request.len() <= capacity, "the request buffer grew");
        let parsed = codec::decode_request(&request).unwrap();
        prop_assert_eq!(parsed.id, id);
        prop_assert_eq!(codec::read_argument(parsed.params, method).unwrap(), v.clone());

        let mut reply = Vec::new();
        codec::encode_reply(&mut reply, id, ReplyStatus::Ok, |o| codec::write_value(o, &v));
        prop_assert_eq!(codec::frame(&reply).unwrap().unwrap().size, reply.len());
        prop_assert_eq!(codec::reply_request_id(&reply).unwrap(), id);
        prop_assert_eq!(codec::decode_reply(&reply[HEADER_LEN + 4..], method).unwrap(), v);
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..512)) {
        codec::exercise_decoders(&data);
    }

    #[test]
    fn corrupted_replies_never_panic(
        (method, v) in value(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut reply = Vec::new();
        codec::encode_reply(&mut reply, 1, ReplyStatus::Ok, |o| codec::write_value(o, &v));
        let body = &mut reply[HEADER_LEN + 4..];
        for (at, byte) in flips {
            let i = at.index(body.len());
            body[i] = byte;
        }
        let end = cut.index(body.len() + 1);
        let _ = codec::decode_reply(&body[..end], method);
        codec::exercise_decoders(body);
    }
}

/// Every operation against a running server, e.g. `servers/ice-3.7`:
/// `RPCLAB_ICE_TARGET=127.0.0.1:10000 cargo test -p rpclab-client --test integration protocols_ice:: -- --ignored`;
/// through IceGrid with
/// `RPCLAB_ICE_OPTIONS='adapter=BenchAdapter,locator=IceGrid/Locator:tcp -h 127.0.0.1 -p 4061'`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs a running server named by RPCLAB_ICE_TARGET"]
async fn against_a_running_server() {
    // On the poll engine too: a direct proxy.
    common::every_operation_against_a_running_server::<Ice>("ICE").await;
}
