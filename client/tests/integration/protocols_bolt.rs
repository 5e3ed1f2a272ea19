//! The bolt protocol (SOFA-RPC) over real sockets:
//!
//! * against a **real SOFA-RPC provider** (sofa-rpc-all, started from the
//!   golden generator's Maven project, `crates/rpclab-protocols/src/protocols/bolt/golden/java`):
//!   Java decodes what Rust writes and Rust decodes what Java answers, for
//!   every operation. Needs Java 17 and Maven; without them the test fails;
//!   set `RPCLAB_SKIP_JAVA_TESTS=1` to skip it deliberately;
//! * against an in-process provider that answers out of order, sends
//!   heartbeats and hangs up (multiplexing, heartbeats, failure);
//! * and, when `RPCLAB_SOFA_TARGET` is set, against a running provider
//!   (`servers/sofa-rpc`), optionally through ZooKeeper.

use crate::common;

use common::{options, Behaviour, FakeConnection, Heartbeats, KilledOnDrop, NORMAL};
use rpclab_client::protocol::{CallError, Connection, Protocol};
use rpclab_client::protocols::bolt::codec::{self, Header};
use rpclab_client::protocols::bolt::hessian::{DValue, Reader, Writer};
use rpclab_client::protocols::bolt::Bolt;
use rpclab_model::contract::{Call, Operation, Value};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

// ---- a real SOFA-RPC provider ------------------------------------------------

/// Builds the golden project and starts its `Serve` provider on `port`.
fn start_java_provider(port: u16) -> KilledOnDrop {
    let project = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/rpclab-protocols/src/protocols/bolt/golden/java");
    let built = Command::new("mvn")
        .args(["-B", "-q", "-Dstyle.color=never", "package", "-DskipTests", "-f"])
        .arg(project.join("pom.xml"))
        .status()
        .expect("cannot run mvn: this test needs Java 17+ and Maven (RPCLAB_SKIP_JAVA_TESTS=1 skips it)");
    assert!(
        built.success(),
        "mvn package of {} failed",
        project.display()
    );
    let mut child = Command::new("java")
        .args([
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.util=ALL-UNNAMED",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-cp",
        ])
        .arg(project.join("target/server.jar"))
        .arg("rpclab.bolt.golden.Serve")
        .arg(port.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .expect("cannot run java");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if line.contains("ready on") {
                let _ = tx.send(());
            }
        }
    });
    let provider = KilledOnDrop(child);
    rx.recv_timeout(Duration::from_secs(120))
        .expect("the SOFA-RPC provider did not say it was ready within 120 s");
    provider
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_real_sofa_provider_answers_every_operation() {
    if std::env::var("RPCLAB_SKIP_JAVA_TESTS").as_deref() == Ok("1") {
        eprintln!(
            "a_real_sofa_provider_answers_every_operation: skipped (RPCLAB_SKIP_JAVA_TESTS=1)"
        );
        return;
    }
    let port = common::free_port();
    let _provider = tokio::task::spawn_blocking(move || start_java_provider(port))
        .await
        .unwrap();
    let target = format!("127.0.0.1:{port}");
    // SOFA-RPC discards a request whose declared timeout has passed by the
    // time it reaches the service, and never answers it: on a busy machine a
    // cold provider JVM can take longer than the default 3 s, so the request
    // declares ten minutes (this test checks replies, not speed).
    let protocol = Bolt::new(&options(&[("timeout_ms", "600000")])).unwrap();
    let counter = common::every_operation_verified(&protocol, &target, 2, 4, 3).await;
    let (sent, received) = counter.totals();
    assert!(sent > 0 && received > 0);
}

// ---- an in-process provider ------------------------------------------------------

type FakeProvider = common::SeeingServer<Heartbeats>;

/// A provider of `hello` and `empty` that answers each request on its own
/// task (`hello("slow")` after 200 ms, so replies overtake each other).
async fn fake_provider(behaviour: Behaviour) -> FakeProvider {
    common::fake_server_seeing(move |conn, seen| serve(conn, behaviour, seen)).await
}

fn sofa_response(id: u32, value: Option<&str>) -> Vec<u8> {
    let mut content = Vec::new();
    let mut w = Writer::new(&mut content);
    w.object(
        codec::RESPONSE_CLASS,
        &["isError", "errorMsg", "appResponse", "responseProps"],
    );
    w.bool(false);
    w.null();
    match value {
        Some(s) => w.string(s),
        None => w.null(),
    }
    w.null();
    let mut out = vec![
        codec::PROTOCOL_V1,
        codec::TYPE_RESPONSE,
        0,
        2,
        codec::VERSION2,
    ];
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&[codec::HESSIAN2, 0, 0]);
    out.extend_from_slice(&(codec::RESPONSE_CLASS.len() as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&(content.len() as u32).to_be_bytes());
    out.extend_from_slice(codec::RESPONSE_CLASS.as_bytes());
    out.extend_from_slice(&content);
    out
}

async fn serve(mut conn: FakeConnection, behaviour: Behaviour, seen: Heartbeats) {
    if behaviour.heartbeat_first {
        conn.send(codec::heartbeat_request(1_000_000).to_vec());
    }
    let mut requests = 0;
    while let Some((h, frame)) = conn.next_frame(|b| codec::frame(b).unwrap()).await {
        answer(&h, &frame, &conn.tx, &seen);
        if h.is_request() && !h.is_heartbeat() {
            requests += 1;
            if Some(requests) == behaviour.close_after {
                conn.hang_up();
                return;
            }
        }
    }
}

fn answer(h: &Header, frame: &[u8], tx: &mpsc::UnboundedSender<Vec<u8>>, seen: &Heartbeats) {
    if h.is_heartbeat() {
        if h.is_request() {
            seen.heartbeat_seen();
            let _ = tx.send(codec::heartbeat_ack(h.id).to_vec());
        } else {
            seen.answer_seen();
        }
        return;
    }
    let p = codec::parts(h, frame);
    assert_eq!(p.class, codec::REQUEST_CLASS.as_bytes());
    let mut r = Reader::new(p.content);
    let request = r.value().unwrap();
    let method = match request.field("methodName") {
        Some(DValue::String(m)) => m.clone(),
        other => panic!("methodName {other:?}"),
    };
    let (id, tx) = (h.id, tx.clone());
    match method.as_str() {
        "hello" => {
            let name = r.opt_string().unwrap().unwrap();
            tokio::spawn(async move {
                if name == "slow" {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                let _ = tx.send(sofa_response(id, Some(&format!("hello {name}"))));
            });
        }
        "empty" => {
            let _ = tx.send(sofa_response(id, None));
        }
        other => panic!("unexpected method {other}"),
    }
}

fn hello(name: &str) -> Call {
    let mut call = Operation::Hello.call();
    call.argument = Value::Str(name.into());
    call.expected = Value::Str(format!("hello {name}"));
    call
}

#[tokio::test]
async fn many_calls_in_flight_on_one_connection_come_back_out_of_order() {
    let provider = fake_provider(Behaviour::HEARTBEAT_FIRST).await;
    let protocol = Bolt::new(&options(&[("heartbeat_s", "0")])).unwrap();
    let conn = Arc::new(common::connect(&protocol, provider.addr).await);
    let mut tasks = Vec::new();
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    for i in 0..40 {
        let (conn, order) = (Arc::clone(&conn), Arc::clone(&order));
        tasks.push(tokio::spawn(async move {
            let call = if i % 10 == 0 {
                hello("slow")
            } else if i % 3 == 0 {
                Operation::Empty.call()
            } else {
                hello(&format!("n{i}"))
            };
            let got = conn.call(&call).await.unwrap();
            assert_eq!(got, call.expected);
            order.lock().unwrap().push(i);
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let order = order.lock().unwrap().clone();
    // The slow ones (0, 10, 20, 30) were overtaken.
    assert_eq!(order.len(), 40);
    assert!(order[..36].iter().all(|i| i % 10 != 0), "{order:?}");
    // The provider's heartbeat was answered.
    common::eventually("the heartbeat's answer", || provider.seen.answered() >= 1).await;
    assert_eq!(provider.seen.answered(), 1);
}

#[tokio::test]
async fn an_idle_connection_sends_heartbeats() {
    let provider = fake_provider(NORMAL).await;
    let protocol = Bolt::new(&options(&[("heartbeat_s", "1")])).unwrap();
    let conn = common::connect(&protocol, provider.addr).await;
    common::eventually("an idle heartbeat", || provider.seen.received() >= 1).await;
    // Still usable afterwards (the ack matched no call).
    assert_eq!(conn.call(&hello("aa")).await.unwrap(), hello("aa").expected);
}

#[tokio::test]
async fn a_server_that_hangs_up_fails_waiting_and_later_calls() {
    let provider = fake_provider(Behaviour::hanging_up_after(2)).await;
    let protocol = Bolt::new(&options(&[("heartbeat_s", "0")])).unwrap();
    let conn = Arc::new(common::connect(&protocol, provider.addr).await);
    // The first is slow (answered after the hang-up: never), the second
    // makes the provider hang up.
    let slow = {
        let conn = Arc::clone(&conn);
        tokio::spawn(async move { conn.call(&hello("slow")).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let second = conn.call(&hello("x")).await;
    let slow = tokio::time::timeout(Duration::from_secs(5), slow)
        .await
        .expect("a waiting call must fail when the server hangs up")
        .unwrap();
    assert!(matches!(slow, Err(CallError::Io(_))), "{slow:?}");
    assert!(second.is_err() || second.as_ref().ok() == Some(&hello("x").expected));
    common::eventually("the connection's close", || conn.is_closed()).await;
    assert!(matches!(
        conn.call(&hello("later")).await,
        Err(CallError::Io(_))
    ));
}

#[tokio::test]
async fn options_are_checked() {
    let b = Bolt::new(&options(&[])).unwrap();
    assert_eq!(b.heartbeat(), Some(Duration::from_secs(15)));
    assert_eq!(b.timeout_ms(), 3000);
    assert_eq!(b.registry(), None);
    let b = Bolt::new(&options(&[
        ("registry", "zookeeper://127.0.0.1:2181"),
        ("heartbeat_s", "0"),
        ("timeout_ms", "10000"),
    ]))
    .unwrap();
    assert_eq!(
        (b.heartbeat(), b.timeout_ms(), b.registry()),
        (None, 10_000, Some("zookeeper://127.0.0.1:2181"))
    );
    for bad in [
        options(&[("heartbeat_s", "-1")]),
        options(&[("timeout_ms", "0")]),
        options(&[("timeout_ms", "soon")]),
        options(&[("registry", "nacos://127.0.0.1:8848")]),
        options(&[("serialization", "hessian2")]),
    ] {
        assert!(
            matches!(Bolt::new(&bad), Err(CallError::Config(_))),
            "{bad:?}"
        );
    }
    // A registry nobody listens on is a connect error that names it.
    common::a_silent_registry_fails_the_connect::<Bolt>("127.0.0.1:12200").await;
}

/// Every operation against a running provider:
/// `RPCLAB_SOFA_TARGET=127.0.0.1:12200 cargo test -p rpclab-client --test integration protocols_bolt:: -- --ignored`;
/// through ZooKeeper discovery with
/// `RPCLAB_SOFA_OPTIONS=registry=zookeeper://127.0.0.1:2181`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs a running provider named by RPCLAB_SOFA_TARGET"]
async fn against_a_running_server() {
    // On the poll engine too: a provider at the target.
    common::every_operation_against_a_running_server::<Bolt>("SOFA").await;
}
