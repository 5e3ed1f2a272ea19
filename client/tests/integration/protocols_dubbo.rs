//! The dubbo protocol over real sockets: against an in-process provider
//! that reads requests as Dubbo's `DecodeableRpcInvocation` does and answers
//! out of order (multiplexing, heartbeats, cancelled calls, a server that
//! hangs up); and, when `RPCLAB_DUBBO_TARGET` is set, against a real Dubbo
//! provider (`servers/dubbo-*`).

use crate::common;

use common::{options, Behaviour, FakeProvider, Inbound, NORMAL};
use hessian2::{Decoder, Encoder, Value as HValue};
use rpclab_client::protocol::{CallError, Connection, Protocol};
use rpclab_client::protocols::dubbo::codec::{self, Header, HEADER_LEN};
use rpclab_client::protocols::dubbo::serialization::hessian2::{Hessian2, ID as HESSIAN2};
use rpclab_client::protocols::dubbo::Dubbo;
use rpclab_model::contract::{Operation, Value};
use std::time::Duration;

/// A provider of `rpclab.contract.BenchService`: echoes, greets (slowly for
/// "slow", so replies overtake each other), and answers each request on its
/// own task.
async fn fake_provider(behaviour: Behaviour) -> FakeProvider {
    common::multiplexing_provider(
        behaviour,
        codec::heartbeat_request(&Hessian2, 1_000_000).unwrap(),
        |b| codec::frame(b).unwrap(),
        |header: Header, frame| match (header.is_event(), header.is_request()) {
            (true, true) => {
                Inbound::Heartbeat(codec::heartbeat_response(&Hessian2, header.id).unwrap())
            }
            (true, false) => Inbound::HeartbeatAnswer,
            (false, _) => Inbound::Request((header, frame)),
        },
        |(header, frame)| async move { answer(&header, &frame[HEADER_LEN..]).await },
    )
    .await
}

/// Reads a request as Dubbo does and builds the reply frame.
async fn answer(header: &Header, body: &[u8]) -> Vec<u8> {
    let mut dec = Decoder::new(body);
    let dubbo_version = dec.read_string().unwrap();
    let path = dec.read_string().unwrap();
    let _version = dec.read_string().unwrap();
    let method = dec.read_string().unwrap();
    let desc = dec.read_string().unwrap();
    let arg = (!desc.is_empty()).then(|| dec.read_value().unwrap());
    let _attachments = dec.read_value().unwrap();
    assert_eq!(dubbo_version, "2.0.2");

    let mut out = Vec::new();
    let mut enc = Encoder::new(&mut out);
    let status = if path != codec::SERVICE {
        enc.write_string(&format!("Not found exported service: {path}"));
        codec::SERVICE_NOT_FOUND
    } else {
        match (method.as_str(), arg) {
            ("hello", Some(HValue::String(name))) => {
                if name == "slow" {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                }
                if name == "throw" {
                    enc.write_int(codec::RESPONSE_WITH_EXCEPTION_WITH_ATTACHMENTS);
                    let e = hessian2::Object::new(
                        "java.lang.IllegalArgumentException",
                        [
                            ("detailMessage", HValue::String("no throwing".into())),
                            ("cause", HValue::Ref(0)),
                        ],
                    );
                    enc.write_value(&HValue::Object(e)).unwrap();
                } else {
                    enc.write_int(codec::RESPONSE_VALUE_WITH_ATTACHMENTS);
                    enc.write_string(&format!("hello {name}"));
                }
            }
            ("empty", None) => enc.write_int(codec::RESPONSE_NULL_VALUE_WITH_ATTACHMENTS),
            (_, Some(v)) => {
                enc.write_int(codec::RESPONSE_VALUE_WITH_ATTACHMENTS);
                enc.write_value(&v).unwrap();
            }
            (m, None) => panic!("{m} without an argument"),
        }
        enc.begin_map(None).unwrap();
        enc.write_string("dubbo");
        enc.write_string("2.0.2");
        enc.end_map();
        codec::OK
    };
    let mut frame = Header {
        flag: HESSIAN2,
        status,
        id: header.id,
        len: out.len(),
    }
    .encode()
    .to_vec();
    frame.extend_from_slice(&out);
    frame
}

common::fake_server_tests!(
    Dubbo,
    fake_provider,
    thrown: "exception java.lang.IllegalArgumentException: no throwing"
);

#[tokio::test]
async fn mismatched_arguments_are_refused() {
    let dubbo = Dubbo::new(&options(&[])).unwrap();
    let server = fake_provider(NORMAL).await;
    let conn = common::connect(&dubbo, server.addr).await;
    let mut call = Operation::OrderEcho.call();
    call.argument = Value::Unit;
    assert!(matches!(conn.call(&call).await, Err(CallError::Config(_))));
}

/// Every operation against a real provider, e.g. `servers/dubbo-3.3`:
/// `RPCLAB_DUBBO_TARGET=127.0.0.1:20880 cargo test -p rpclab-client --test integration protocols_dubbo:: -- --ignored`;
/// through ZooKeeper discovery with
/// `RPCLAB_DUBBO_OPTIONS=registry=zookeeper://127.0.0.1:2181` (the target's
/// port then selects the provider).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs a running provider named by RPCLAB_DUBBO_TARGET"]
async fn against_a_running_server() {
    // On the poll engine too: a provider at the target.
    let (target, protocol, counter) =
        common::every_operation_against_a_running_server::<Dubbo>("DUBBO").await;

    // A server-side failure comes back as a clear error: an unknown method
    // is not reachable through the contract, so check a wrong argument
    // type is refused before anything is sent.
    let conn = protocol.connect(&target, counter).await.unwrap();
    let mut call = Operation::Hello.call();
    call.argument = Value::Unit;
    assert!(matches!(conn.call(&call).await, Err(CallError::Config(_))));
}
