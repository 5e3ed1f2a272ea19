//! The rmi protocol: the contract's calls as the JDK and Spring write them
//! (against the JRMP golden vectors of crates/jrmp, recorded from the JDK's
//! own client), and end to end against the lab's real Java servers
//! (servers/rmi-jdk, rmi-spring and dubbo-rmi, built with Maven and started
//! here as child JVMs): every operation verified, the free list growing
//! under concurrency, remote exceptions, wrong names and styles.
//!
//! The end-to-end tests need Java 17+ and Maven and fail with a clear
//! message without them; set RPCLAB_SKIP_JAVA_TESTS=1 to skip them.

use crate::common;

use common::options;

use jrmp::message::{self, Progress};
use jrmp::{method_hash, RemoteRef};
use rpclab_client::protocol::{CallError, Connection, Protocol, WireCounter};
use rpclab_client::protocols::rmi::contract::{self, Method};
use rpclab_client::protocols::rmi::Rmi;
use rpclab_model::contract::{Operation, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn vector(name: &str) -> Vec<u8> {
    let path = repo().join("crates/jrmp/golden/vectors").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A case's first-connection bytes without a leading ping / ping ack.
fn case(name: &str) -> (Vec<u8>, Vec<u8>) {
    let mut c2s = vector(&format!("{name}-c0-c2s.bin"));
    let mut s2c = vector(&format!("{name}-c0-s2c.bin"));
    if c2s.first() == Some(&jrmp::wire::PING) {
        c2s.remove(0);
        s2c.remove(0);
    }
    (c2s, s2c)
}

fn stub(lookup_case: &str) -> RemoteRef {
    let s2c = vector(&format!("{lookup_case}-c0-s2c.bin"));
    let Progress::Done { len, .. } = jrmp::wire::parse_protocol_ack(&s2c).unwrap() else {
        panic!()
    };
    let Progress::Done { value, .. } = message::parse_return(&s2c[len..], true, 1 << 26).unwrap()
    else {
        panic!()
    };
    RemoteRef::from_stub(value.value.as_ref().unwrap()).unwrap()
}

#[test]
fn plain_calls_are_the_jdk_clients_bytes() {
    let stub = stub("jdk-lookup");
    for (name, op) in [
        ("jdk-order", Operation::OrderEcho),
        ("jdk-orders", Operation::OrdersEcho),
        (
            "jdk-string-1k",
            Operation::StringEcho(rpclab_model::contract::StringSize::K1),
        ),
        ("jdk-hello", Operation::Hello),
        ("jdk-empty", Operation::Empty),
    ] {
        let call = op.call();
        let method = Method::of(&call).unwrap();
        let mut enc = message::begin_call(
            Vec::new(),
            &stub.obj_id,
            message::HASH_OP,
            method_hash(method.java_signature()),
        );
        contract::write_argument(&mut enc, &call.argument).unwrap();
        assert!(
            case(name).0 == enc.finish(),
            "{name}: Rust's call differs from the JDK's"
        );
    }
}

#[test]
fn spring_invocations_are_springs_bytes() {
    let stub = stub("spring-lookup");
    let invoke = method_hash(jrmp::invocation::INVOKE);
    for (name, op) in [
        ("spring-order", Operation::OrderEcho),
        ("spring-orders", Operation::OrdersEcho),
        ("spring-hello", Operation::Hello),
        ("spring-empty", Operation::Empty),
    ] {
        let call = op.call();
        let method = Method::of(&call).unwrap();
        let mut enc = message::begin_call(Vec::new(), &stub.obj_id, message::HASH_OP, invoke);
        jrmp::invocation::write_remote_invocation(
            &mut enc,
            &jrmp::invocation::remote_invocation_desc(),
            method.name(),
            contract::parameter_types(method),
            |enc| Ok(contract::write_argument(enc, &call.argument)?),
            |enc| {
                enc.write_null();
                Ok(())
            },
        )
        .unwrap();
        assert!(
            case(name).0 == enc.finish(),
            "{name}: Rust's invocation differs from Spring's"
        );
    }
}

#[test]
fn recorded_returns_decode_to_the_expected_replies() {
    for (name, op, void) in [
        ("jdk-order", Operation::OrderEcho, false),
        ("jdk-orders", Operation::OrdersEcho, false),
        (
            "jdk-string-100k",
            Operation::StringEcho(rpclab_model::contract::StringSize::K100),
            false,
        ),
        ("jdk-hello", Operation::Hello, false),
        ("jdk-empty", Operation::Empty, true),
        ("spring-order", Operation::OrderEcho, false),
        ("spring-orders", Operation::OrdersEcho, false),
        ("spring-empty", Operation::Empty, false),
    ] {
        let call = op.call();
        let method = Method::of(&call).unwrap();
        let (_, s2c) = case(name);
        let Progress::Done {
            value: mut ret,
            len,
        } = message::parse_return(&s2c, !void, 1 << 26).unwrap()
        else {
            panic!("{name}: incomplete")
        };
        assert_eq!(len, s2c.len());
        let reply = contract::decode_reply(method, ret.value.take(), &ret.decoder).unwrap();
        assert!(reply == call.expected, "{name}: wrong reply");
    }
    // A reply of the wrong type is an error, not a success.
    let (_, s2c) = case("jdk-hello");
    let Progress::Done { value: mut ret, .. } = message::parse_return(&s2c, true, 1 << 26).unwrap()
    else {
        panic!()
    };
    assert!(contract::decode_reply(Method::EchoOrder, ret.value.take(), &ret.decoder).is_err());
}

#[test]
fn options_are_checked() {
    assert!(Rmi::new(&options(&[("style", "corba")])).is_err());
    assert!(Rmi::new(&options(&[("ping", "sometimes")])).is_err());
    assert!(Rmi::new(&options(&[("dgc", "maybe")])).is_err());
    assert!(Rmi::new(&options(&[("colour", "blue")])).is_err());
    assert!(Rmi::new(&options(&[
        ("style", "dubbo"),
        ("ping", "never"),
        ("dgc", "off")
    ]))
    .is_ok());
}

// ---- against the real servers ------------------------------------------

fn skip_java() -> bool {
    std::env::var("RPCLAB_SKIP_JAVA_TESTS").is_ok_and(|v| v == "1")
}

/// A server JVM started for a test, stopped when dropped.
struct Server {
    _child: common::KilledOnDrop,
    port: u16,
}

/// Builds `servers/<name>` with Maven (once per test binary) and starts it
/// on a free port; returns when it prints that it is ready.
fn start(name: &str, extra_jvm: &[&str]) -> Server {
    let dir = repo().join("servers").join(name);
    let jar = dir.join("target/server.jar");
    static BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    {
        let _g = BUILD.lock().unwrap();
        let status = Command::new("mvn")
            .args(["-B", "-q", "-o", "package", "-DskipTests"])
            .current_dir(&dir)
            .status()
            .unwrap_or_else(|e| panic!("cannot run Maven ({e}); install Maven and JDK 17+, or set RPCLAB_SKIP_JAVA_TESTS=1"));
        if !status.success() {
            // Offline failed (empty local repository): try online once.
            let status = Command::new("mvn")
                .args(["-B", "-q", "package", "-DskipTests"])
                .current_dir(&dir)
                .status()
                .unwrap();
            assert!(
                status.success(),
                "building servers/{name} with Maven failed"
            );
        }
    }
    let port = common::free_port();
    let mut child = Command::new("java")
        .args(extra_jvm)
        .arg("-jar")
        .arg(&jar)
        .env("RPCLAB_PORT", port.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run java ({e}); install JDK 17+, or set RPCLAB_SKIP_JAVA_TESTS=1")
        });
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) if line.starts_with("rpclab server ready") => break,
            Some(Ok(_)) => {}
            _ => panic!("servers/{name} exited before it was ready"),
        }
    }
    // Keep draining its output so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Server {
        _child: common::KilledOnDrop(child),
        port,
    }
}

async fn check_server(name: &str, style: &str, extra_jvm: &[&str]) {
    let server = start(name, extra_jvm);
    let target = format!("127.0.0.1:{}", server.port);
    let rmi = Rmi::new(&options(&[("style", style)])).unwrap();
    // Every operation, 3 connections x 4 callers each.
    common::every_operation_verified(&rmi, &target, 3, 4, 3).await;

    // One connection shared by 8 concurrent callers grows to 8 sockets
    // (JRMP has one call in flight per socket), then reuses them.
    let conn = Arc::new(rmi.connect(&target, WireCounter::default()).await.unwrap());
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let conn = Arc::clone(&conn);
        tasks.push(tokio::spawn(async move {
            let call = Operation::OrdersEcho.call();
            for _ in 0..20 {
                assert!(conn.call(&call).await.unwrap() == call.expected);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let idle = conn.idle_connections();
    assert!(
        (2..=8).contains(&idle),
        "{name}: {idle} idle connections after 8 concurrent callers"
    );
    assert!(conn.address().starts_with("127.0.0.1:"));

    // Sequential calls after an idle spell: pinged first, still correct.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let call = Operation::Hello.call();
    assert!(conn.call(&call).await.unwrap() == call.expected);

    // A name nobody bound: the registry's NotBoundException.
    let wrong = Rmi::new(&options(&[("style", style), ("name", "nobody")])).unwrap();
    let e = common::connect_error(&wrong, &target).await;
    assert!(
        matches!(&e, CallError::Server(m) if m.contains("java.rmi.NotBoundException")),
        "{name}: lookup of an unbound name: {e:?}"
    );
    // The wrong style is named in the error.
    let other_style = if style == "plain" { "spring" } else { "plain" };
    let mismatched = Rmi::new(&options(&[("style", other_style)])).unwrap();
    let e = common::connect_error(&mismatched, &target).await;
    assert!(
        matches!(&e, CallError::Config(m) if m.contains("style=")),
        "{name}: style {other_style}: {e:?}"
    );
    // Without ping and DGC calls too.
    let lean = Rmi::new(&options(&[
        ("style", style),
        ("ping", "never"),
        ("dgc", "off"),
    ]))
    .unwrap();
    common::every_operation_verified(&lean, &target, 1, 2, 2).await;
    // Nothing listens: a connect error.
    common::connecting_to_a_closed_port_fails(&rmi).await;
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn jdk_rmi_server_end_to_end() {
    if skip_java() {
        return;
    }
    check_server("rmi-jdk", "plain", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn spring_rmi_server_end_to_end() {
    if skip_java() {
        return;
    }
    check_server("rmi-spring", "spring", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dubbo_rmi_server_end_to_end() {
    if skip_java() {
        return;
    }
    check_server(
        "dubbo-rmi",
        "dubbo",
        &["--add-opens=java.base/java.lang=ALL-UNNAMED"],
    )
    .await;
}

#[test]
fn method_table_is_the_contracts() {
    // Every contract operation maps to a method whose hash is distinct.
    let hashes: std::collections::BTreeSet<i64> = Method::ALL
        .iter()
        .map(|m| method_hash(m.java_signature()))
        .collect();
    assert_eq!(hashes.len(), Method::ALL.len());
    for op in Operation::ALL {
        let call = op.call();
        let m = Method::of(&call).unwrap();
        assert_eq!(m.returns_value(), !matches!(call.expected, Value::Unit));
    }
}
