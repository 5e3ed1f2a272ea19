//! End-to-end: streaming methods as generic gRPC calls (`--call` on a
//! server, client or bidirectional streaming method, with ghz's
//! `--stream-call-count`, `--stream-call-duration`, `--stream-interval`
//! and `--stream-dynamic-messages`) against a real server in a container:
//! `fixtures/grpc-shop` (tonic), whose `Watch`, `ReserveAll` and
//! `ReserveEach` are made of its unary `Reserve`, so that every message's
//! content is known (see its `main.rs`), and which put a stream's
//! `x-request-id` header in its replies, so that `-m` is seen arriving.
//!
//! A call is one stream; every message received is decoded and compared
//! with `--expect`, and the report counts the messages beside the calls.
//! The tests assert counts, verified replies and the report's structure;
//! no timing is asserted.

use crate::common;

use common::containers::Container;
use common::fixture;
use serde_json::{json, Value};
use std::path::Path;

/// The fixture, with reflection.
fn shop() -> Container {
    fixture::start("grpc-shop", &[], None)
}

/// A request for one apple line of 3 at 2 EUR, its id numbered;
/// `extra` adds fields.
fn request(id: &str, extra: Value) -> String {
    let mut request = json!({
        "requestId": format!("{id}-{{{{.RequestNumber}}}}"),
        "items": [{"sku": "apple", "quantity": 3, "price": {"currency": "EUR", "units": 2}}],
    });
    request
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    request.to_string()
}

/// The reservation of `lines` such requests' items together, as the
/// fixture answers it.
fn reservation(id: &str, lines: u64) -> String {
    json!({
        "requestId": format!("{id}-{{{{.RequestNumber}}}}"),
        "status": "RESERVED",
        "lines": (0..lines).map(|_| json!({"sku": "apple", "reserved": 3})).collect::<Vec<_>>(),
        "totalQuantity": 3 * lines,
        "total": {"currency": "EUR", "units": (6 * lines).to_string()},
    })
    .to_string()
}

/// A run of `method` that must succeed: its JSON report.
fn report(shop: &Container, method: &str, args: &[&str]) -> Value {
    let call = format!("shop.v1.Inventory/{method}");
    fixture::report(shop, &[&["--call", call.as_str()][..], args].concat())
}

/// A run of `method` that must succeed, sending `data` and comparing
/// every reply with `expect`, with `flags` (words split at white space)
/// added: its JSON report.
fn verified_report(shop: &Container, method: &str, data: &str, expect: &str, flags: &str) -> Value {
    let mut args = vec!["--data", data, "--expect", expect];
    args.extend(flags.split_whitespace());
    report(shop, method, &args)
}

/// Every stream verified, of `kind`, `calls` of them.
fn assert_streams(report: &Value, kind: &str, calls: u64) {
    assert_eq!(report["calls_failed"], 0, "{report:#}");
    assert_eq!(report["calls_ok"], calls, "{report:#}");
    assert_eq!(report["verified"], true);
    assert_eq!(report["call"]["stream"]["kind"], kind, "{report:#}");
    assert!(report["messages"].is_object(), "{report:#}");
}

fn messages(report: &Value) -> (u64, u64) {
    let m = &report["messages"];
    (m["sent"].as_u64().unwrap(), m["received"].as_u64().unwrap())
}

#[test]
fn server_streams_are_read_to_their_end_or_ended_after_a_count_or_a_duration() {
    let shop = shop();
    // Three slots: three messages a stream, each compared.
    let data = request("w", json!({"slots": [1, 2, 3]}));
    let expect = reservation("w", 1);
    let whole = verified_report(&shop, "Watch", &data, &expect, "--concurrency 2 --calls 10");
    assert_streams(&whole, "server", 20);
    assert_eq!(messages(&whole), (20, 60));
    assert!(whole["messages"]["latency_us"]["max"].as_f64().unwrap() > 0.0);

    // Without end (`express`): the client ends each stream after 5.
    let endless = request("w", json!({"express": true}));
    let counted = verified_report(
        &shop,
        "Watch",
        &endless,
        &expect,
        "--stream-call-count 5 --calls 8",
    );
    assert_streams(&counted, "server", 8);
    assert_eq!(messages(&counted), (8, 40));
    assert_eq!(counted["call"]["stream"]["call_count"], 5);

    // ... or once a duration has passed.
    let timed = verified_report(
        &shop,
        "Watch",
        &endless,
        &expect,
        "--stream-call-duration 100ms --calls 3",
    );
    assert_streams(&timed, "server", 3);
    assert_eq!(timed["call"]["stream"]["call_duration_us"], 100_000);
    assert_eq!(messages(&timed).0, 3);
}

#[test]
fn client_streams_send_their_count_and_get_one_verified_reply() {
    let shop = shop();
    let data = request("a", json!({}));
    // Four requests a stream, reserved together under the last one's id.
    let expect = reservation("a", 4);
    let counted = verified_report(
        &shop,
        "ReserveAll",
        &data,
        &expect,
        "--stream-call-count 4 --concurrency 2 --calls 10",
    );
    assert_streams(&counted, "client", 20);
    assert_eq!(messages(&counted), (80, 20));

    // Each message its own number, paced: the reply carries the last one's.
    let dynamic = verified_report(
        &shop,
        "ReserveAll",
        &data,
        &reservation("a", 3),
        "--stream-call-count 3 --stream-interval 2ms --stream-dynamic-messages --calls 5",
    );
    assert_streams(&dynamic, "client", 5);
    assert_eq!(messages(&dynamic), (15, 5));
    assert_eq!(dynamic["call"]["stream"]["interval_us"], 2_000);
    assert_eq!(dynamic["call"]["stream"]["dynamic_messages"], true);
}

#[test]
fn bidirectional_streams_get_each_request_answered_and_compared() {
    let shop = shop();
    let data = request("e", json!({}));
    let expect = reservation("e", 1);
    // Each reply is compared with the expectation of its own request's
    // number.
    let counted = verified_report(
        &shop,
        "ReserveEach",
        &data,
        &expect,
        "--stream-call-count 5 --stream-dynamic-messages --concurrency 2 --calls 6",
    );
    assert_streams(&counted, "bidi", 12);
    assert_eq!(messages(&counted), (60, 60));

    // For a duration, paced: however many were sent, each was answered.
    let timed = verified_report(
        &shop,
        "ReserveEach",
        &data,
        &expect,
        "--stream-call-duration 50ms --stream-interval 5ms --calls 4",
    );
    assert_streams(&timed, "bidi", 4);
    let (sent, received) = messages(&timed);
    assert!(sent >= 4, "{timed:#}");
    assert_eq!(sent, received, "{timed:#}");
}

#[test]
fn a_stream_sends_its_metadata_once_and_a_data_array_element_by_its_number() {
    let shop = shop();
    // The fixture puts a stream's x-request-id after every reply's id; the
    // header holds the stream's number, and so does each of its messages
    // (without --stream-dynamic-messages), whose element is the stream's.
    let element = |id: &str| request(id, json!({}));
    let reply = |id: &str| {
        let mut reply: Value = serde_json::from_str(&reservation(id, 1)).unwrap();
        reply["requestId"] = json!(format!(
            "{id}-{{{{.RequestNumber}}}}/h-{{{{.RequestNumber}}}}"
        ));
        reply
    };
    let data = format!("[{},{}]", element("a"), element("b"));
    let expect = json!([reply("a"), reply("b")]).to_string();
    let run = report(
        &shop,
        "ReserveEach",
        &[
            "--data",
            &data,
            "--expect",
            &expect,
            "-m",
            r#"{"x-request-id":"h-{{.RequestNumber}}"}"#,
            "--stream-call-count",
            "3",
            "--calls",
            "4",
        ],
    );
    assert_streams(&run, "bidi", 4);
    assert_eq!(messages(&run), (12, 12));
    assert!(
        run["call"]["templates"]
            .to_string()
            .contains("x-request-id: h-{{.RequestNumber}}"),
        "{run:#}"
    );
}

#[test]
fn streams_run_under_the_open_loop_from_proto_files_and_in_the_text_summary() {
    let shop = shop();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/grpc-shop/proto");
    let file = root.join("shop/v1/inventory.proto");
    let data = request("o", json!({"slots": [1, 2]}));
    let expect = reservation("o", 1);
    let open = report(
        &shop,
        "Watch",
        &[
            &["--data", &data, "--expect", &expect][..],
            &[
                "--proto",
                file.to_str().unwrap(),
                "-i",
                root.to_str().unwrap(),
            ],
            fixture::OPEN_LOOP,
        ]
        .concat(),
    );
    fixture::assert_all_verified(&open);
    let calls = open["calls_ok"].as_u64().unwrap();
    assert_eq!(messages(&open), (calls, 2 * calls));
    assert!(open["service_time_us"].is_object());

    // The text summary says what streamed and how many messages.
    let out = fixture::client(
        &shop,
        &[
            "--call",
            "shop.v1.Inventory/ReserveAll",
            "--data",
            &request("t", json!({})),
            "--stream-call-count",
            "2",
            "--calls",
            "5",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("client streaming, each call one stream, 2 messages"),
        "{text}"
    );
    assert!(text.contains("messages: 10 sent = "), "{text}");
    assert!(text.contains(" 5 received = "), "{text}");

    // A threshold judges streams as it judges calls: one the run cannot
    // hold exits 99 after a verified run.
    let data = request("t", json!({}));
    let out = fixture::client(
        &shop,
        &[
            &["--call", "shop.v1.Inventory/ReserveEach", "--data", &data][..],
            &["--stream-call-count", "2", "--calls", "5"],
            fixture::UNREACHABLE_THRESHOLD,
        ]
        .concat(),
    );
    fixture::assert_threshold_breached(&out);
}

#[test]
fn a_stream_flag_on_a_unary_method_or_a_wrong_message_is_one_line() {
    let shop = shop();
    let call = ["--call", "shop.v1.Inventory/Reserve"];
    let line = fixture::refusal(&shop, &[&call[..], &["--stream-call-count", "3"]].concat());
    assert!(
        line.contains(
            "--stream-call-count is for streaming methods; `shop.v1.Inventory/Reserve` is unary: leave it out"
        ),
        "{line}"
    );
    let line = fixture::refusal(
        &shop,
        &[
            &call[..],
            &["--stream-interval", "1ms", "--stream-call-duration", "1s"],
        ]
        .concat(),
    );
    assert!(
        line.contains("--stream-call-duration, --stream-interval are for streaming methods"),
        "{line}"
    );
    let line = fixture::refusal(
        &shop,
        &[
            "--call",
            "shop.v1.Inventory/ReserveEach",
            "--stream-interval",
            "soon",
        ],
    );
    assert!(
        line.contains("--stream-interval `soon` is not a duration"),
        "{line}"
    );

    // A reply that differs from --expect, in the middle of a stream: the
    // first stream fails there, and nothing is measured.
    let data = request("x", json!({}));
    let line = fixture::refusal(
        &shop,
        &[
            "--call",
            "shop.v1.Inventory/ReserveAll",
            "--data",
            &data,
            "--expect",
            &reservation("x", 2),
            "--stream-call-count",
            "3",
            "--calls",
            "10",
        ],
    );
    assert!(line.contains("nothing was measured"), "{line}");
    assert!(line.contains("lines"), "{line}");
}

/// `fixtures/grpc-py-shop`'s image: the same service in Python's grpcio
/// (from PyPI, on the lab's runtime image), built once per test process.
fn python_image() -> &'static str {
    const IMAGE: &str = "rpclab-test/grpc-py-shop:latest";
    const RUNTIME: &str = "rpclab/runtime:bookworm";
    static BUILT: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        common::containers::require_images(&[RUNTIME], "cargo xtask lab build --only grpc-java");
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let context = fixture::scratch().join("image-grpc-py-shop");
        let proto = context.join("proto/shop/v1");
        std::fs::create_dir_all(&proto).unwrap();
        for file in ["Dockerfile", "shop_server.py"] {
            std::fs::copy(
                repo.join("fixtures/grpc-py-shop").join(file),
                context.join(file),
            )
            .unwrap();
        }
        for file in ["common.proto", "inventory.proto"] {
            std::fs::copy(
                repo.join("fixtures/grpc-shop/proto/shop/v1").join(file),
                proto.join(file),
            )
            .unwrap();
        }
        fixture::run(
            common::containers::docker_build(IMAGE)
                .args(["--build-arg", &format!("RPCLAB_RUNTIME_IMAGE={RUNTIME}")])
                .arg(&context),
            "docker build (the grpc-py-shop fixture)",
        );
        let _ = std::fs::remove_dir_all(&context);
    });
    IMAGE
}

#[test]
fn a_python_grpcio_server_s_streams_are_verified_message_by_message() {
    let image = python_image();
    let shop = Container::start("grpc-py-shop", image, |cmd, port| {
        cmd.arg(image)
            .args(["--listen", &format!("127.0.0.1:{port}")]);
    });
    shop.wait_for_line("grpc-py-shop: shop.v1.Inventory on");
    // No reflection there: the types come from the .proto files.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/grpc-shop/proto");
    let file = root.join("shop/v1/inventory.proto");
    let types = [
        "--proto",
        file.to_str().unwrap(),
        "-i",
        root.to_str().unwrap(),
    ];
    let data = request("p", json!({}));
    let expect = reservation("p", 1);
    let base = [
        &types[..],
        &["--data", &data, "--concurrency", "2", "--calls", "5"],
    ]
    .concat();

    let unary = report(
        &shop,
        "Reserve",
        &[&base[..], &["--expect", &expect]].concat(),
    );
    fixture::assert_all_verified(&unary);
    assert_eq!(unary["calls_ok"], 10);
    assert!(unary["messages"].is_null(), "{unary:#}");

    let slots = request("p", json!({"slots": [1, 2, 3, 4]}));
    let server = report(
        &shop,
        "Watch",
        &[
            &types[..],
            &[
                "--data",
                &slots,
                "--expect",
                &expect,
                "--concurrency",
                "2",
                "--calls",
                "5",
            ],
        ]
        .concat(),
    );
    assert_streams(&server, "server", 10);
    assert_eq!(messages(&server), (10, 40));

    let endless = request("p", json!({"express": true}));
    let counted = report(
        &shop,
        "Watch",
        &[
            &types[..],
            &[
                "--data",
                &endless,
                "--expect",
                &expect,
                "--stream-call-count",
                "3",
                "--calls",
                "4",
            ],
        ]
        .concat(),
    );
    assert_streams(&counted, "server", 4);
    assert_eq!(messages(&counted), (4, 12));

    let client = report(
        &shop,
        "ReserveAll",
        &[
            &base[..],
            &["--expect", &reservation("p", 3), "--stream-call-count", "3"],
        ]
        .concat(),
    );
    assert_streams(&client, "client", 10);
    assert_eq!(messages(&client), (30, 10));

    let bidi = report(
        &shop,
        "ReserveEach",
        &[
            &base[..],
            &[
                "--expect",
                &expect,
                "--stream-call-count",
                "4",
                "--stream-dynamic-messages",
                "--stream-interval",
                "1ms",
            ],
        ]
        .concat(),
    );
    assert_streams(&bidi, "bidi", 10);
    assert_eq!(messages(&bidi), (40, 40));

    // Metadata through grpcio too: Checkout's headers (a binary one
    // among them) and a bidi stream's x-request-id come back in the
    // replies.
    let mut checked: Value = serde_json::from_str(&expect).unwrap();
    checked["requestId"] = json!("p-{{.RequestNumber}}/h-{{.RequestNumber}}");
    let metadata = r#"{"authorization":"Bearer shop-token","x-request-id":"h-{{.RequestNumber}}","x-tenant":"acme","trace-bin":"AP8="}"#;
    let mut checkout = checked.clone();
    checkout["customer"] = json!("tenant=acme trace=00ff");
    let checkout = report(
        &shop,
        "Checkout",
        &[
            &base[..],
            &["--expect", &checkout.to_string(), "-m", metadata],
        ]
        .concat(),
    );
    fixture::assert_all_verified(&checkout);
    let tagged = report(
        &shop,
        "ReserveEach",
        &[
            &base[..],
            &[
                "--expect",
                &checked.to_string(),
                "-m",
                metadata,
                "--stream-call-count",
                "2",
            ],
        ]
        .concat(),
    );
    assert_streams(&tagged, "bidi", 10);
}
