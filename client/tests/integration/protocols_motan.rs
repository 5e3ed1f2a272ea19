//! The motan2 protocol over real sockets: against an in-process provider
//! that reads requests as `MotanV2Codec` does and answers out of order
//! (multiplexing, heartbeats, exceptions in the meta map, cancelled calls,
//! a provider that hangs up); and, when `RPCLAB_MOTAN_TARGET` is set,
//! against a real Motan provider (`servers/motan-1.2`).

use crate::common;

use common::{options, Behaviour, FakeProvider, Inbound, NORMAL};
use hessian2::{Decoder, Encoder, Value as HValue};
use rpclab_client::protocol::{CallError, Connection, Protocol, WireCounter};
use rpclab_client::protocols::motan::codec::{self, Header, Serialization};
use rpclab_client::protocols::motan::simple::{self, SimpleReader, SimpleValue};
use rpclab_client::protocols::motan::Motan;
use rpclab_model::contract::Operation;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A motan2 provider of `rpclab.contract.BenchService` in group `rpclab`:
/// echoes, greets (slowly for "slow", so replies overtake each other),
/// throws for "throw", and answers each request on its own task.
async fn fake_provider(behaviour: Behaviour) -> FakeProvider {
    common::multiplexing_provider(
        behaviour,
        codec::heartbeat(1_000_000, false).to_vec(),
        |b| {
            codec::frame(b).unwrap().map(|(h, l)| {
                let len = l.total();
                ((h, l), len)
            })
        },
        |(header, layout), frame| match (header.is_heartbeat(), header.is_response()) {
            (true, true) => Inbound::HeartbeatAnswer,
            (true, false) => Inbound::Heartbeat(codec::heartbeat(header.id, true).to_vec()),
            (false, _) => Inbound::Request((header, layout, frame)),
        },
        |(header, layout, frame)| async move {
            let meta: BTreeMap<String, String> = codec::parse_meta(&frame[layout.meta.clone()])
                .unwrap()
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            answer(&header, &meta, &frame[layout.body]).await
        },
    )
    .await
}

/// A decoded argument, whichever the serialization.
enum Arg {
    None,
    Hessian(HValue),
    Simple(SimpleValue),
}

/// Reads a request as a Motan provider does and builds the reply frame.
async fn answer(header: &Header, meta: &BTreeMap<String, String>, body: &[u8]) -> Vec<u8> {
    assert_eq!(meta["M_p"], codec::SERVICE);
    assert_eq!(meta["M_g"], "rpclab");
    let hessian = header.serialization == Serialization::Hessian2.id();
    let arg = if body.is_empty() {
        Arg::None
    } else if hessian {
        let mut dec = Decoder::new(body);
        let v = dec.read_value().unwrap();
        assert!(dec.is_empty());
        Arg::Hessian(v)
    } else {
        let mut r = SimpleReader::new(body);
        let v = r.read_value().unwrap();
        assert!(r.is_empty());
        Arg::Simple(v)
    };
    let name = match &arg {
        Arg::Hessian(HValue::String(s)) | Arg::Simple(SimpleValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let mut reply_meta = format!("M_pt\n{}", 1);
    let mut status = codec::STATUS_NORMAL;
    let mut out = Vec::new();
    match (meta["M_m"].as_str(), meta["M_md"].as_str()) {
        ("hello", "java.lang.String") => {
            let name = name.unwrap();
            if name == "slow" {
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            if name == "throw" {
                status = codec::STATUS_EXCEPTION;
                reply_meta.push_str(
                    "\nM_e\n{\"errcode\":500,\"errmsg\":\"provider call process error, org err:no throwing\",\"errtype\":2}",
                );
            } else {
                let greeting = format!("hello {name}");
                if hessian {
                    Encoder::new(&mut out).write_string(&greeting);
                } else {
                    simple::put_string(&mut out, &greeting);
                }
            }
        }
        ("empty", "void") => {
            assert!(matches!(arg, Arg::None));
            if hessian {
                Encoder::new(&mut out).write_null();
            } else {
                simple::put_null(&mut out);
            }
        }
        (_, _) => match arg {
            Arg::Hessian(v) => Encoder::new(&mut out).write_value(&v).unwrap(),
            Arg::Simple(v) => simple::put_value(&mut out, &v),
            Arg::None => panic!("{} without an argument", meta["M_m"]),
        },
    }
    let mut frame = Header {
        flags: codec::FLAG_RESPONSE,
        version: codec::VERSION,
        status,
        serialization: header.serialization,
        id: header.id,
    }
    .encode()
    .to_vec();
    frame.extend_from_slice(&(reply_meta.len() as u32).to_be_bytes());
    frame.extend_from_slice(reply_meta.as_bytes());
    frame.extend_from_slice(&(out.len() as u32).to_be_bytes());
    frame.extend_from_slice(&out);
    frame
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simple_serialization_carries_strings_and_void() {
    let server = fake_provider(NORMAL).await;
    let motan = Motan::new(&options(&[("serialization", "simple")])).unwrap();
    let conn = common::connect(&motan, server.addr).await;
    for op in Operation::ALL {
        let call = op.call();
        match op {
            Operation::OrderEcho | Operation::OrdersEcho => assert!(
                matches!(conn.call(&call).await, Err(CallError::Config(m)) if m.contains("no POJOs")),
                "{op}"
            ),
            _ => assert!(conn.call(&call).await.unwrap() == call.expected, "{op}"),
        }
    }
}

/// A refused call completes without sending, and a worker repeating it at
/// once must not hold the (here single) runtime thread: the timer that ends
/// a load window has to fire.
#[tokio::test(flavor = "current_thread")]
async fn refused_calls_do_not_starve_the_runtime() {
    let server = fake_provider(NORMAL).await;
    let motan = Motan::new(&options(&[("serialization", "simple")])).unwrap();
    let conn = Arc::new(common::connect(&motan, server.addr).await);
    let spinner = {
        let conn = Arc::clone(&conn);
        tokio::spawn(async move {
            let call = Operation::OrderEcho.call();
            let mut refused = 0u64;
            loop {
                assert!(conn.call(&call).await.is_err());
                refused += 1;
                if refused == u64::MAX {
                    return;
                }
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    spinner.abort();
}

common::fake_server_tests!(
    Motan,
    fake_provider,
    thrown: "motan business exception (errcode 500): provider call process error, org err:no throwing"
);

#[tokio::test]
async fn a_silent_registry_fails_the_connect() {
    common::a_silent_registry_fails_the_connect::<Motan>("127.0.0.1:8002").await;
}

/// Every operation against a real provider, e.g. `servers/motan-1.2`:
/// `RPCLAB_MOTAN_TARGET=127.0.0.1:8002 cargo test -p rpclab-client --test integration protocols_motan:: -- --ignored`;
/// through ZooKeeper discovery with
/// `RPCLAB_MOTAN_OPTIONS=registry=zookeeper://127.0.0.1:2181` (the target's
/// port then selects the provider); `serialization=simple` for a provider
/// with `MOTAN_SERIALIZATION=simple` (then the Order operations must be
/// refused, clearly, and every other one verified).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs a running provider named by RPCLAB_MOTAN_TARGET"]
async fn against_a_running_server() {
    let options = common::options_from_env("RPCLAB_MOTAN_OPTIONS");
    let (target, protocol) = common::running_server::<Motan>("MOTAN");
    let counter = if protocol.serialization() == Serialization::Hessian2 {
        common::every_operation_verified(&protocol, &target, 2, 4, 5).await
    } else {
        // simple: every operation but the Order ones, which must be refused.
        let counter = WireCounter::default();
        let conn = protocol.connect(&target, counter.clone()).await.unwrap();
        for op in Operation::ALL {
            let call = op.call();
            match conn.call(&call).await {
                Ok(reply) => assert!(reply == call.expected, "{op}: wrong reply"),
                Err(CallError::Config(m))
                    if matches!(op, Operation::OrderEcho | Operation::OrdersEcho) =>
                {
                    assert!(m.contains("no POJOs"), "{m}")
                }
                Err(e) => panic!("{op}: {e}"),
            }
        }
        counter
    };
    let (sent, received) = counter.totals();
    assert!(sent > 0 && received > 0);
    // The same calls on the poll engine (a provider at the target; the
    // Order operations of `simple` are refused on tasks, above).
    common::every_operation_on_the_poll_engine::<Motan>(&target, &options, 2, 20).await;

    // Heartbeats on an idle connection are answered and calls go on.
    let with_beats = {
        let mut o = options.clone();
        o.insert("heartbeat_s".into(), "1".into());
        Motan::new(&o).unwrap()
    };
    let conn = with_beats.connect(&target, counter).await.unwrap();
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let call = Operation::Hello.call();
    assert_eq!(conn.call(&call).await.unwrap(), call.expected);
    assert!(!conn.is_closed());

    // The provider's own exception comes back as a clear server error: a
    // method it does not have, sent by hand on a raw socket (the contract
    // cannot name one).
    let mut stream = tokio::net::TcpStream::connect(&target).await.unwrap();
    let meta = format!(
        "M_p\n{}\nM_m\nnope\nM_md\nvoid\nM_g\nrpclab\nM_v\n1.0",
        codec::SERVICE
    );
    let mut request = Header::request(protocol.serialization(), 42)
        .encode()
        .to_vec();
    request.extend_from_slice(&(meta.len() as u32).to_be_bytes());
    request.extend_from_slice(meta.as_bytes());
    request.extend_from_slice(&0u32.to_be_bytes());
    stream.write_all(&request).await.unwrap();
    let mut buf = Vec::new();
    let (header, layout) = loop {
        let mut chunk = [0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut chunk))
            .await
            .expect("the provider answers")
            .unwrap();
        assert!(n > 0, "the provider closed the connection");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(f) = codec::frame(&buf).unwrap() {
            break f;
        }
    };
    assert_eq!(header.id, 42);
    let result = codec::decode_response(
        &header,
        &buf[layout.meta.clone()],
        &buf[layout.body.clone()],
        codec::Method::Empty,
        protocol.serialization(),
    );
    match result {
        Err(CallError::Server(m)) => {
            eprintln!("the provider's exception: {m}");
            assert!(m.contains("nope"), "{m}")
        }
        other => panic!("expected the provider's exception, got {other:?}"),
    }
}
