//! The generic Dubbo call (protocol `dubbo-generic`) against frames written
//! by Apache Dubbo 3.3's own `DubboCodec` (`tests/golden/dubbo`, made by
//! its `GenericFrames` generator through `regenerate.sh`): the client's
//! request reads as what a Java consumer's `GenericService` sends, and the
//! client reads a provider's generalized reply and its errors.

use hessian2::{Decoder, Value as HValue};
use rpclab_client::protocol::CallError;
use rpclab_client::protocols::dubbo::codec::{frame, HEADER_LEN};
use rpclab_client::protocols::dubbo_generic::reply;
use rpclab_client::protocols::dubbo_generic::request::{Invocation, Request};
use rpclab_protocols::metadata::Metadata;
use rpclab_protocols::template::{CallValues, Needs};
use serde_json::json;
use std::path::PathBuf;

fn vector(case: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/dubbo/vectors/3.3")
        .join(format!("generic-{case}.bin"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A body's values as a provider reads them, with every map's entries in
/// one order (Java writes a `HashMap` in its hash order).
fn values(body: &[u8]) -> Vec<HValue> {
    let mut dec = Decoder::new(body);
    let mut values = Vec::new();
    while !dec.is_empty() {
        values.push(sorted(dec.read_value().unwrap()));
    }
    values
}

fn sorted(v: HValue) -> HValue {
    match v {
        HValue::Map(mut map) => {
            map.entries = map
                .entries
                .into_iter()
                .map(|(k, v)| (k, sorted(v)))
                .collect();
            map.entries
                .sort_by(|a, b| format!("{:?}", a.0).cmp(&format!("{:?}", b.0)));
            HValue::Map(map)
        }
        HValue::List(mut list) => {
            list.items = list.items.into_iter().map(sorted).collect();
            HValue::List(list)
        }
        other => other,
    }
}

#[test]
fn the_request_reads_as_a_java_generic_service_request() {
    let java = vector("request-reserve");
    let args = json!([{
        "requestId": "req-1",
        "customer": "ada",
        "items": [{"sku": "apple", "quantity": 3}],
    }]);
    let types = vec!["com.example.shop.ReserveRequest".to_owned()];
    let ours = Request::new(&Invocation {
        interface: "com.example.shop.InventoryService",
        method: "reserve",
        types: Some(types.as_slice()),
        args: &args,
        version: None,
        group: None,
        metadata: &Metadata::EMPTY,
    })
    .unwrap()
    .frame(21, &CallValues::new(0, 0, Needs::NONE));
    let (java_header, java_len) = frame(&java).unwrap().unwrap();
    let (our_header, our_len) = frame(&ours).unwrap().unwrap();
    assert_eq!(java_len, java.len());
    assert_eq!(our_len, ours.len());
    // The same flags (request, two-way, hessian2), id and status.
    assert_eq!(our_header.flag, java_header.flag);
    assert_eq!(
        (our_header.id, our_header.status),
        (java_header.id, java_header.status)
    );
    // The same values in the same order: the five strings, `$invoke`'s
    // method, types (`[string`) and arguments (`[object`, a map), and the
    // attachments Java's consumer sends.
    assert_eq!(values(&ours[HEADER_LEN..]), values(&java[HEADER_LEN..]));
    // And, maps aside, the same bytes: everything up to the arguments.
    let args_at = java
        .windows(b"[object".len())
        .position(|w| w == b"[object")
        .unwrap();
    assert_eq!(ours[HEADER_LEN..args_at], java[HEADER_LEN..args_at]);
}

#[test]
fn a_generalized_reply_is_decoded_and_compared() {
    let bytes = vector("reply-reservation");
    let (header, total) = frame(&bytes).unwrap().unwrap();
    let value = reply::decode(&header, &bytes[HEADER_LEN..total]).unwrap();
    let class = "com.example.shop.Reservation";
    let expected = json!({
        "requestId": "req-1", "customer": "ada", "status": "PARTIAL",
        "lines": [{"sku": "apple", "reserved": 3}, {"sku": "pear", "reserved": 100}],
        "totalQuantity": 103, "price": 26.5,
    });
    assert_eq!(reply::first_difference(&expected, &value, 0), None);
    let mut named = expected.clone();
    named["class"] = json!(class);
    assert_eq!(reply::first_difference(&named, &value, 0), None);
    let json = reply::to_json(&value);
    assert_eq!(json["class"], class);
    assert_eq!(json["lines"][1]["class"], "com.example.shop.Line");
    let mut wrong = expected;
    wrong["lines"][1]["reserved"] = json!(99);
    assert_eq!(
        reply::first_difference(&wrong, &value, 0).unwrap(),
        "lines[1].reserved: expected 99, got 100"
    );
}

#[test]
fn a_method_the_interface_lacks_is_the_providers_first_line() {
    let bytes = vector("reply-no-such-method");
    let (header, total) = frame(&bytes).unwrap().unwrap();
    match reply::decode(&header, &bytes[HEADER_LEN..total]) {
        Err(CallError::Server(m)) => assert_eq!(
            m,
            "SERVICE_ERROR (70): org.apache.dubbo.rpc.RpcException: No such method cancel \
             in class interface com.example.shop.InventoryService"
        ),
        other => panic!("{other:?}"),
    }
}
