//! Hessian over HTTP against the real Java library and servers:
//!
//! * golden vectors (`crates/rpclab-protocols/src/protocols/hessian/golden/`, made by
//!   com.caucho:hessian): the Rust client writes exactly the call bytes
//!   `HessianProxy` writes, and decodes what `HessianSkeleton` replies,
//!   faults included;
//! * Java reads what Rust writes: the golden project's `Verify` reads the
//!   Rust calls as the skeleton does and runs the skeleton on them (needs
//!   Maven; `RPCLAB_SKIP_JAVA_TESTS=1` skips it);
//! * an in-process HTTP/1.1 server answering with the golden replies, over
//!   the client's keep-alive pool;
//! * with `RPCLAB_HESSIAN_TARGET` set, a real server (`servers/hessian-servlet`
//!   or Dubbo's hessian protocol).

use crate::common;

use common::options;

use java_interop::{java_tests_enabled, write_cases, Golden, JavaVerify};
use rpclab_client::load::timed_call;
use rpclab_client::protocol::{CallError, Connection, Protocol, WireCounter};
use rpclab_client::protocols::hessian::codec::{self, Method};
use rpclab_client::protocols::hessian::Hessian;
use rpclab_model::contract::Operation;
use rpclab_protocols::testing::http::{http_reply, http_server, HttpRequest};
use rpclab_protocols::testing::small_operations;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn golden() -> Golden {
    Golden::at(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../crates/rpclab-protocols/src/protocols/hessian/golden"),
    )
}

// The golden vectors are of the small operations, each named as the
// operation (the 1 MiB string is left out to keep the repository small;
// 1 KiB and 100 KiB cover the chunking).

fn vector(name: &str) -> Vec<u8> {
    golden().file(name)
}

fn rust_call(op: Operation) -> Vec<u8> {
    let call = op.call();
    let mut out = Vec::new();
    codec::encode_call(&mut out, Method::of(&call).unwrap(), &call.argument).unwrap();
    out
}

#[test]
fn rust_writes_the_calls_hessian_proxy_writes() {
    for op in small_operations() {
        let name = op.name();
        let java = vector(&format!("{name}.call.bin"));
        assert!(
            rust_call(op) == java,
            "{name}: call bytes differ from Java's"
        );
    }
}

#[test]
fn rust_reads_the_skeletons_replies_and_faults() {
    for op in small_operations() {
        let name = op.name();
        let call = op.call();
        let reply = vector(&format!("{name}.reply.bin"));
        let value = codec::decode_reply(&reply, Method::of(&call).unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(value == call.expected, "{name}: wrong value");
    }
    match codec::decode_reply(&vector("fault-no-such-method.reply.bin"), Method::Hello) {
        Err(CallError::Server(m)) => {
            assert!(
                m.starts_with("hessian fault NoSuchMethodException: "),
                "{m}"
            );
            assert!(m.contains("nope"), "{m}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn java_reads_what_rust_writes() {
    if !java_tests_enabled() {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hessian-rpc-java-interop");
    let calls = small_operations()
        .into_iter()
        .map(|op| (format!("{}.call", op.name()), rust_call(op)));
    write_cases(&dir, calls);
    let verify = JavaVerify::exec_java(
        &golden().pom(),
        "rpclab.hessiangolden.Verify",
        &dir.display().to_string(),
    );
    if let Err(e) = verify.run(
        "hessian",
        &format!("checked {} calls, 0 failed", small_operations().len()),
    ) {
        panic!("{e}");
    }
}

/// An HTTP/1.1 server that answers each golden call with the golden reply
/// (any other call with the fault), keeping connections alive; counts
/// accepted connections.
async fn golden_server() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let mut replies: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
    for name in small_operations().into_iter().map(Operation::name) {
        replies.insert(
            vector(&format!("{name}.call.bin")),
            vector(&format!("{name}.reply.bin")),
        );
    }
    let fault = vector("fault-no-such-method.reply.bin");
    let shared = Arc::new((replies, fault));
    http_server(move |request: HttpRequest| {
        let shared = shared.clone();
        async move {
            let (replies, fault) = &*shared;
            assert!(request.header("content-length").is_some(), "{request:?}");
            let (status, reply) = if request.path() != "/svc" {
                ("404 Not Found", &b"no servlet here"[..])
            } else {
                assert_eq!(
                    request.header("content-type"),
                    Some("x-application/hessian")
                );
                ("200 OK", &replies.get(&request.body).unwrap_or(fault)[..])
            };
            http_reply(status, "x-application/hessian", reply)
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_over_a_keep_alive_pool() {
    let (addr, accepted) = golden_server().await;
    let hessian = Hessian::new(&options(&[("path", "/svc"), ("pool", "3")])).unwrap();
    let counter = WireCounter::default();
    let conn = Arc::new(hessian.connect(&addr, counter.clone()).await.unwrap());
    common::calls_verified(&conn, "golden", small_operations(), 2, 5).await;
    // 12 concurrent callers, at most 3 TCP connections.
    assert!(accepted.load(std::sync::atomic::Ordering::Relaxed) <= 3);
    let (sent, received) = counter.totals();
    assert!(sent > 10 * 100 * 1024 && received > 10 * 100 * 1024);

    // Verified calls, on a connection whose first call (the one it
    // prepares) is `hello`: the reply, once it is the reference, verifies
    // the call; the same reply does not verify a call that expects another
    // value, though its request is the same.
    let fresh = hessian
        .connect(&addr, WireCounter::default())
        .await
        .unwrap();
    let call = Operation::Hello.call();
    for _ in 0..3 {
        let (_, outcome) = timed_call(&fresh, &call, Duration::from_secs(60)).await;
        assert!(outcome.is_ok(), "{outcome:?}");
    }
    let mut expects_other = call.clone();
    expects_other.expected = rpclab_model::contract::Value::Str("someone else".into());
    let (_, outcome) = timed_call(&fresh, &expects_other, Duration::from_secs(60)).await;
    assert!(
        matches!(outcome, Err(CallError::WrongResponse(_))),
        "{outcome:?}"
    );

    // A string the server does not know: the fault, as a server error.
    let mut call = Operation::Hello.call();
    call.argument = rpclab_model::contract::Value::Str("bb".into());
    assert!(
        matches!(conn.call(&call).await, Err(CallError::Server(m)) if m.contains("NoSuchMethod"))
    );

    // A wrong path is a configuration error that names the option.
    let wrong = common::connect(
        &Hessian::new(&options(&[("path", "/elsewhere")])).unwrap(),
        &addr,
    )
    .await;
    match wrong.call(&Operation::Hello.call()).await {
        Err(CallError::Config(m)) => assert!(m.contains("`path`"), "{m}"),
        other => panic!("{other:?}"),
    }
}

/// Every operation against a real server, e.g. `servers/hessian-servlet`:
/// `RPCLAB_HESSIAN_TARGET=127.0.0.1:8090 cargo test -p rpclab-client --test integration protocols_hessian:: -- --ignored`
/// (`RPCLAB_HESSIAN_OPTIONS=path=/rpclab.contract.BenchService` for Dubbo's
/// hessian protocol).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs a running server named by RPCLAB_HESSIAN_TARGET"]
async fn against_a_running_server() {
    let (target, protocol) = common::running_server::<Hessian>("HESSIAN");
    common::every_operation_verified(&protocol, &target, 2, 4, 5).await;
}
