//! End-to-end: the client's generic gRPC call (`--call`, protocol
//! `grpc-generic`) against a real gRPC server in a container that is not
//! rpclab's contract: `fixtures/grpc-shop`, service `shop.v1.Inventory`
//! (tonic, with tonic-reflection), in package `shop.v1` over two files,
//! with nested messages, repeated fields, enums and a map.
//!
//! The fixture runs in a container of an image `FROM scratch`
//! (`common::fixture`, shared with the generic Thrift call's test); each
//! test starts its containers and removes them when it ends. The client
//! runs as a user would run it, as the `rpclab-client` binary, and the
//! tests read its JSON report or its one error line. Needs a Docker engine
//! and, for TLS, the `openssl` command. No timing is asserted.

use crate::common;

use common::certs::certificates;
use common::cli::{self, partially_expected};
use common::containers::Container;
use common::fixture::{self, run, scratch};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const METHOD: &str = "shop.v1.Inventory/Reserve";

/// The fixture, started with `args` (after `--listen`); `certs`, if any,
/// mounted read-only at `/certs`.
fn start(args: &[&str], certs: Option<&Path>) -> Container {
    fixture::start("grpc-shop", args, certs)
}

/// The fixture's descriptor set, as built with it (`build.rs`, the same
/// as `protoc --descriptor_set_out --include_imports`).
fn protoset() -> PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = scratch().join("shop.protoset");
        run(
            Command::new(fixture::binary("grpc-shop"))
                .arg("--write-protoset")
                .arg(&path),
            "grpc-shop --write-protoset",
        );
        path
    })
    .clone()
}

/// A request with a nested message, repeated messages and strings, an
/// enum, a map and the call's number twice.
fn request() -> Value {
    json!({
        "requestId": "req-{{.RequestNumber}}",
        "sequence": "{{.RequestNumber}}",
        "customer": {"name": "ada", "tier": "GOLD"},
        "items": [
            {"sku": "apple", "quantity": 3, "price": {"currency": "EUR", "units": 2}},
            {"sku": "pear", "quantity": 150, "price": {"currency": "EUR", "units": 1}},
        ],
        "tags": ["fruit", "t-{{.RequestNumber}}"],
        "attributes": {"channel": "web"},
    })
}

/// What the fixture answers to [`request`].
fn reply() -> Value {
    fixture::shop_reply()
}

/// `args` with `--call <METHOD>` in front, unless they name another.
fn with_call<'a>(args: &[&'a str]) -> Vec<&'a str> {
    if args.contains(&"--call") {
        args.to_vec()
    } else {
        [&["--call", METHOD][..], args].concat()
    }
}

/// `rpclab-client --target <shop> --call <METHOD> <args>`.
fn client(shop: &Container, args: &[&str]) -> Output {
    fixture::client(shop, &with_call(args))
}

/// A run that must succeed: its JSON report.
fn report(shop: &Container, args: &[&str]) -> Value {
    fixture::report(shop, &with_call(args))
}

/// A run that must fail before any load: its one error line.
fn refusal(shop: &Container, args: &[&str]) -> String {
    fixture::refusal(shop, &with_call(args))
}

/// Every call verified, and the report says what was called.
fn assert_verified(report: &Value, calls: u64, descriptors: &str) {
    let call = cli::assert_generic_calls_verified(report, "grpc-generic", METHOD, Some(calls));
    assert_eq!(call["descriptors"], descriptors, "{call:#}");
}

#[test]
fn calls_through_reflection_and_a_protoset_are_verified() {
    let shop = start(&[], None);
    let data = request().to_string();
    let expect = reply().to_string();
    let common = cli::verified_run(&data, &expect);

    let by_reflection = report(&shop, &common);
    assert_verified(&by_reflection, 200, "reflection grpc.reflection.v1");
    assert_eq!(by_reflection["call"]["expected_reply"], true);
    assert_eq!(
        by_reflection["call"]["templates"],
        json!([
            "req-{{.RequestNumber}}",
            "{{.RequestNumber}}",
            "t-{{.RequestNumber}}"
        ])
    );
    assert_eq!(by_reflection["tls"], json!({"mode": "plaintext"}));

    let file = protoset();
    let file = file.to_str().unwrap();
    let by_protoset = report(&shop, &[&common[..], &["--protoset", file]].concat());
    assert_verified(&by_protoset, 200, &format!("protoset {file}"));

    // Data from a file, no expected reply: every reply decoded as the
    // output type; ghz's Service.Method form.
    let data_file = scratch().join("request.json");
    std::fs::write(&data_file, &data).unwrap();
    let out = client(
        &shop,
        &[
            "--call",
            "shop.v1.Inventory.Reserve",
            "--data-file",
            data_file.to_str().unwrap(),
            "--calls",
            "30",
            "--json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoded: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_verified(&decoded, 30, "reflection grpc.reflection.v1");
    assert_eq!(decoded["call"]["expected_reply"], false);

    // The open loop goes through the same engine.
    let open = report(&shop, &[&common[..4], fixture::OPEN_LOOP].concat());
    fixture::assert_all_verified(&open);
    assert!(open["service_time_us"].is_object());

    // A threshold the run cannot hold exits 99 after a verified run.
    let out = client(
        &shop,
        &[
            &["--data", &data, "--calls", "10"][..],
            fixture::UNREACHABLE_THRESHOLD,
        ]
        .concat(),
    );
    fixture::assert_threshold_breached(&out);
}

/// The calls a run stopped by wrong replies says it made (`… (N calls
/// made in all)`).
fn calls_made(line: &str) -> u64 {
    let before = line
        .rsplit_once(" calls made in all)")
        .unwrap_or_else(|| panic!("no count of calls: {line}"))
        .0;
    before.rsplit(['(', ' ']).next().unwrap().parse().unwrap()
}

/// A service whose first replies match `--expect` and whose later ones do
/// not stops the client after a bounded number of calls, in a window of a
/// minute (or a million calls) that would otherwise hold hundreds of
/// thousands: the count is asserted, never the time.
///
/// `grpc-shop --wrong-after 1` answers only the client's first call right:
/// the call its first connection verifies before the load, so every
/// connection of the load answers only wrong replies (the rule of three
/// each). `--wrong-after 2` answers one call of the load right too, so the
/// run stops by the wrong replies in a row.
#[test]
fn replies_that_turn_wrong_stop_the_run_after_a_bounded_number_of_calls() {
    use rpclab_client::wrong_replies::{EXAMPLES, GIVE_UP_AFTER, STOP_AFTER_IN_A_ROW};
    let data = request().to_string();
    let expect = reply().to_string();
    let concurrency = 4;
    let changed = "customer: expected \"ada (GOLD)\", got \"ada (GOLD) (changed)\"";
    for wrong_after in ["1", "2"] {
        // Each load with its connections; every one has 4 calls in flight
        // at most.
        for (load, connections) in [
            (&["--concurrency", "4", "--duration", "1m"][..], 4),
            (&["--concurrency", "4", "--calls", "1000000"][..], 4),
            (
                &[
                    "--rate",
                    "2000",
                    "--duration",
                    "1m",
                    "--connections",
                    "2",
                    "--max-in-flight",
                    "4",
                ][..],
                2,
            ),
        ] {
            // A fresh fixture each time: it counts the calls it answered.
            let shop = start(&["--wrong-after", wrong_after], None);
            let args = [&["--data", &data, "--expect", &expect][..], load].concat();
            let line = refusal(&shop, &args);
            assert!(line.contains("nothing was measured"), "{line}");
            let made = calls_made(&line);
            if wrong_after == "1" {
                assert!(line.contains("answered only wrong replies"), "{line}");
                assert!(line.contains(changed), "{line}");
                // Three wrong replies at least per connection; the row's
                // rule bounds it too.
                assert!(made >= u64::from(GIVE_UP_AFTER) * connections, "{line}");
                assert!(
                    made <= STOP_AFTER_IN_A_ROW + 2 * concurrency,
                    "{made}: {line}"
                );
            } else {
                let row = format!("stopped after {STOP_AFTER_IN_A_ROW} wrong replies in a row");
                assert!(line.contains(&row), "{line}");
                // The first wrong replies, each naming the field that differs.
                assert_eq!(line.matches(changed).count(), EXAMPLES, "{line}");
                // The row, the load's one right reply, the wrong replies it
                // reset, and the calls in flight when it stopped.
                assert!(made > STOP_AFTER_IN_A_ROW, "{line}");
                assert!(
                    made <= STOP_AFTER_IN_A_ROW + 1 + 2 * concurrency,
                    "{made}: {line}"
                );
            }
        }
    }
}

/// A partial expectation compares only its keys, matchers judge their
/// fields (a regex, a range over proto3's 64-bit integer string, a type,
/// any value), a matcher that fails names its field, and one it does not
/// know is one line before load.
#[test]
fn partial_expectations_and_matchers_verify_every_reply() {
    let shop = start(&[], None);
    let data = request().to_string();
    let partial = json!({"status": "PARTIAL", "total": {"units": 156}}).to_string();
    let verified = report(
        &shop,
        &[&["--data", &data][..], &partially_expected(&partial, "25")].concat(),
    );
    assert_verified(&verified, 50, "reflection grpc.reflection.v1");
    assert_eq!(verified["call"]["expected_reply"], true);

    let matched = json!({
        "requestId": {"$regex": "^req-[0-9]+$"},
        "sequence": {"$range": [0, null]},
        "status": "PARTIAL",
        "lines": {"$type": "array"},
        "totalQuantity": {"$range": [100, 110]},
        "total": {"$any": true},
        "customer": {"$type": "string"},
    })
    .to_string();
    let verified = report(
        &shop,
        &["--data", &data, "--expect", &matched, "--calls", "30"],
    );
    assert_verified(&verified, 30, "reflection grpc.reflection.v1");

    fixture::assert_matcher_refusals(&data, |args| refusal(&shop, args));
    let misspelt = json!({"statos": {"$any": true}}).to_string();
    let line = refusal(
        &shop,
        &["--data", &data, "--expect", &misspelt, "--expect-partial"],
    );
    assert!(
        line.contains("statos"),
        "a field the reply's type lacks: {line}"
    );
}

/// An expect array and matchers together: each element of the array is
/// an expectation of its own, paired with the data array's element by the
/// call's number, holding matchers and `{{.RequestNumber}}`, compared
/// exactly or (`--expect-partial`) partially.
#[test]
fn an_expect_array_holds_matchers_and_templates_element_by_element() {
    let shop = start(&[], None);
    let data = json!([
        {"requestId": "a-{{.RequestNumber}}", "items": [{"sku": "x", "quantity": 1}]},
        {"requestId": "b", "items": [{"sku": "y", "quantity": 200}]},
    ])
    .to_string();
    let exact = json!([
        {"requestId": "a-{{.RequestNumber}}", "status": "RESERVED",
         "lines": [{"sku": "x", "reserved": {"$range": [1, 1]}}], "totalQuantity": 1,
         "total": {"$any": true}},
        {"requestId": {"$regex": "^b$"}, "status": "PARTIAL", "lines": {"$type": "array"},
         "totalQuantity": {"$range": [100, 100]}, "total": {"$any": true}},
    ])
    .to_string();
    let verified = report(
        &shop,
        &[
            "--data",
            &data,
            "--expect",
            &exact,
            "--calls",
            "10",
            "--concurrency",
            "2",
        ],
    );
    assert_verified(&verified, 20, "reflection grpc.reflection.v1");

    let partial = json!([
        {"requestId": "a-{{.RequestNumber}}"},
        {"status": "PARTIAL", "totalQuantity": {"$range": [100, null]}},
    ])
    .to_string();
    let verified = report(
        &shop,
        &[
            "--data",
            &data,
            "--expect",
            &partial,
            "--expect-partial",
            "--calls",
            "10",
        ],
    );
    assert_verified(&verified, 10, "reflection grpc.reflection.v1");

    // The first call (number 0) is judged by the first element.
    let wrong = json!([{"status": {"$regex": "^PARTIAL$"}}, {"status": "PARTIAL"}]).to_string();
    let line = refusal(
        &shop,
        &[
            "--data",
            &data,
            "--expect",
            &wrong,
            "--expect-partial",
            "--calls",
            "10",
        ],
    );
    cli::assert_unmeasured(
        &line,
        "status: expected a match of /^PARTIAL$/, got \"RESERVED\"",
    );

    let worker =
        json!([{"requestId": "a"}, {"requestId": "w-{{.WorkerID}}", "total": {"$any": true}}])
            .to_string();
    let line = refusal(&shop, &["--data", &data, "--expect", &worker]);
    assert!(
        line.contains(
            "--expect[1]: requestId: `w-{{.WorkerID}}`: with matchers or --expect-partial, \
             {{.RequestNumber}} is the one template value"
        ),
        "{line}"
    );
}

/// k6's thresholds on a real call: a percentile the report does not keep
/// is measured because a threshold asks for it, and a breach exits 99.
/// The bounds are a per-call timeout's multiple and a nanosecond: what
/// holds and what breaches does not depend on the host's speed.
#[test]
fn k6_thresholds_with_any_percentile_are_measured_and_judged() {
    let shop = start(&[], None);
    let data = request().to_string();
    let run = ["--data", &data, "--calls", "40", "--timeout", "5s"];
    let held = report(
        &shop,
        &[
            &run[..],
            &[
                "--threshold",
                "p(97.5)<1m",
                "--threshold",
                "avg<1m",
                "--threshold",
                "errors.rate==0",
                "--threshold",
                "rate>0",
            ],
        ]
        .concat(),
    );
    assert_eq!(held["calls_ok"], 40, "{held:#}");
    let p975 = held["percentiles_us"]["p97.5"].as_f64().unwrap();
    assert!(
        p975 >= held["latency_us"]["p50"].as_f64().unwrap(),
        "{held:#}"
    );
    assert!(
        p975 <= held["latency_us"]["max"].as_f64().unwrap(),
        "{held:#}"
    );

    let breached = client(&shop, &[&run[..], &["--threshold", "p(97.5)<1ns"]].concat());
    assert_eq!(breached.status.code(), Some(99), "{breached:?}");
    let stderr = String::from_utf8_lossy(&breached.stderr);
    assert!(
        stderr.contains("threshold p(97.5)<1ns breached:") && stderr.contains(" p97.5 "),
        "{stderr}"
    );
}

#[test]
fn a_server_with_only_v1alpha_reflection_is_still_reflected() {
    let shop = start(&["--reflection", "v1alpha"], None);
    let data = request().to_string();
    let expect = reply().to_string();
    let by_reflection = report(
        &shop,
        &["--data", &data, "--expect", &expect, "--calls", "20"],
    );
    assert_verified(&by_reflection, 20, "reflection grpc.reflection.v1alpha");
}

#[test]
fn bad_input_is_one_line_and_nothing_is_measured() {
    let shop = start(&[], None);
    let file = protoset();
    let protoset = file.to_str().unwrap();

    let line = refusal(&shop, &["--call", "shop.v1.Store/Reserve"]);
    assert!(
        line.contains("does not know service `shop.v1.Store`")
            && line.contains("shop.v1.Inventory"),
        "{line}"
    );
    let line = refusal(
        &shop,
        &["--call", "shop.v1.Inventory/Cancel", "--protoset", protoset],
    );
    assert!(
        line.contains(
            "service `shop.v1.Inventory` has no method `Cancel` (its methods: Reserve, Watch, ReserveAll, ReserveEach, Checkout)"
        ),
        "{line}"
    );
    let line = refusal(
        &shop,
        &["--data", r#"{"items":[{"sku":"a"},{"skew":"b"}]}"#],
    );
    assert!(
        line.contains("--data: items[1].skew: shop.v1.Item has no field `skew`"),
        "{line}"
    );
    let line = refusal(
        &shop,
        &[
            "--data",
            r#"{"items":[{"quantity":"lots"}]}"#,
            "--protoset",
            protoset,
        ],
    );
    assert!(
        line.contains("--data: items[0].quantity: an integer"),
        "{line}"
    );
    let line = refusal(&shop, &["--data", r#"{"customer":{"tier":"PLATINUM"}}"#]);
    assert!(
        line.contains("customer.tier: one of TIER_UNSPECIFIED, SILVER, GOLD"),
        "{line}"
    );

    // A reply that is not the expected one: the first call fails, and the
    // line names the first differing field.
    let data = json!({"requestId": "r", "items": [{"sku": "a", "quantity": 5}]}).to_string();
    let expect =
        json!({"requestId": "r", "status": "RESERVED", "lines": [{"sku": "a", "reserved": 4}]})
            .to_string();
    let line = refusal(
        &shop,
        &["--data", &data, "--expect", &expect, "--calls", "100"],
    );
    cli::assert_unmeasured(&line, "lines[0].reserved: expected 4, got 5");

    // No reflection: the hint to pass --protoset; with it, the call works.
    let bare = start(&["--reflection", "none"], None);
    let line = refusal(&bare, &[]);
    assert!(
        line.contains("UNIMPLEMENTED") && line.contains("--protoset"),
        "{line}"
    );
    let data = request().to_string();
    let by_protoset = report(
        &bare,
        &["--protoset", protoset, "--data", &data, "--calls", "5"],
    );
    assert_verified(&by_protoset, 5, &format!("protoset {protoset}"));
}

/// The fixture's `.proto` folder: `shop/v1/inventory.proto` imports
/// `shop/v1/common.proto`, relative to it.
fn proto_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/grpc-shop/proto")
}

#[test]
fn calls_with_types_from_proto_files_and_their_imports_are_verified() {
    // No reflection: the types can only come from the .proto files.
    let shop = start(&["--reflection", "none"], None);
    let root = proto_root();
    let file = root.join("shop/v1/inventory.proto");
    let (root, file) = (root.to_str().unwrap(), file.to_str().unwrap());
    let data = request().to_string();
    let expect = reply().to_string();
    let common = [
        "--data",
        &data,
        "--expect",
        &expect,
        "--concurrency",
        "2",
        "--calls",
        "25",
    ];

    let by_proto = report(
        &shop,
        &[&common[..], &["--proto", file, "-i", root]].concat(),
    );
    assert_verified(&by_proto, 50, &format!("proto {file}"));
    assert_eq!(by_proto["call"]["expected_reply"], true);
    // ghz's long flag, and an import path that is not the first.
    let long = report(
        &shop,
        &[
            &common[..],
            &["--proto", file, "--import-paths", &format!("/tmp,{root}")],
        ]
        .concat(),
    );
    assert_verified(&long, 50, &format!("proto {file}"));

    // Without the folder its import is relative to: one line naming the
    // import and where it was looked for, before any call.
    let line = refusal(&shop, &["--proto", file]);
    assert!(
        line.contains("--proto: inventory.proto:")
            && line.contains(":1: import 'shop/v1/common.proto' not found in ")
            && line.contains("shop/v1,")
            && line.contains("--import-paths"),
        "{line}"
    );

    // A file that does not compile: the compiler's message, file and line.
    let broken = scratch().join("broken/shop.proto");
    std::fs::create_dir_all(broken.parent().unwrap()).unwrap();
    std::fs::write(
        &broken,
        "syntax = \"proto3\";\npackage shop.v1;\nservice Inventory {\n  rpc Reserve(Nothing) returns (Nothing);\n}\n",
    )
    .unwrap();
    let line = refusal(&shop, &["--proto", broken.to_str().unwrap()]);
    assert!(
        line.contains("shop.proto:4:") && line.contains("Nothing"),
        "{line}"
    );

    // A method the file does not have: named with the ones it has.
    let line = refusal(
        &shop,
        &[
            "--call",
            "shop.v1.Inventory/Cancel",
            "--proto",
            file,
            "-i",
            root,
        ],
    );
    assert!(
        line.contains("service `shop.v1.Inventory` has no method `Cancel` (its methods: Reserve,"),
        "{line}"
    );
}

#[test]
fn tls_verified_by_a_ca_or_not_verified_and_the_setting_is_reported() {
    let certs = certificates(&scratch());
    let shop = start(
        &[
            "--tls-cert",
            "/certs/server.pem",
            "--tls-key",
            "/certs/server.key",
        ],
        Some(&certs),
    );
    let data = request().to_string();
    let expect = reply().to_string();
    let ca = certs.join("ca.pem");
    let ca = ca.to_str().unwrap();
    let base = ["--data", &data, "--expect", &expect, "--calls", "20"];

    let verified = report(&shop, &[&base[..], &["--cacert", ca]].concat());
    assert_verified(&verified, 20, "reflection grpc.reflection.v1");
    assert_eq!(
        verified["tls"],
        json!({"mode": "verified", "roots": format!("CA file {ca}")})
    );
    let named = report(
        &shop,
        &[&base[..], &["--cacert", ca, "--cname", "shop.test"]].concat(),
    );
    assert_eq!(named["tls"]["server_name"], "shop.test");

    let unverified = report(&shop, &[&base[..], &["--skipTLS"]].concat());
    assert_verified(&unverified, 20, "reflection grpc.reflection.v1");
    assert_eq!(unverified["tls"], json!({"mode": "unverified"}));

    let other = certs.join("other-ca.pem");
    let line = refusal(&shop, &["--cacert", other.to_str().unwrap()]);
    assert!(
        line.contains("TLS handshake failed")
            && line.contains("UnknownIssuer")
            && line.contains("--cacert"),
        "{line}"
    );
    let line = refusal(&shop, &["--protoset", protoset().to_str().unwrap()]);
    assert!(line.contains("it speaks TLS"), "{line}");

    // A TLS client against a plaintext server.
    let plain = start(&[], None);
    let line = refusal(&plain, &["--cacert", ca]);
    assert!(
        line.contains("TLS handshake failed") && line.contains("a plaintext server?"),
        "{line}"
    );

    // Mutual TLS: a server that wants a client certificate its CA signed
    // gets one with --cert and --key; without them, one line says so.
    let mutual = start(
        &[
            "--tls-cert",
            "/certs/server.pem",
            "--tls-key",
            "/certs/server.key",
            "--tls-client-ca",
            "/certs/ca.pem",
        ],
        Some(&certs),
    );
    let (cert, key) = (certs.join("client.pem"), certs.join("client.key"));
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    let with_cert = report(
        &mutual,
        &[&base[..], &["--cacert", ca, "--cert", cert, "--key", key]].concat(),
    );
    assert_verified(&with_cert, 20, "reflection grpc.reflection.v1");
    assert_eq!(
        with_cert["tls"],
        json!({"mode": "verified", "roots": format!("CA file {ca}"), "client_cert": cert})
    );
    let file = protoset();
    let line = refusal(
        &mutual,
        &["--cacert", ca, "--protoset", file.to_str().unwrap()],
    );
    assert!(line.contains("--cert and --key"), "{line}");
}

/// `Checkout` needs its token as metadata and says what metadata it got:
/// without `-m` the first call fails with the server's status and its
/// trailer, with `-m` (a templated value and a binary header) every reply
/// carries the headers of its own call.
#[test]
fn metadata_is_sent_as_headers_and_a_refused_call_shows_its_trailers() {
    let shop = start(&[], None);
    let checkout = "shop.v1.Inventory/Checkout";
    let data = json!({"requestId": "r-{{.RequestNumber}}", "items": [{"sku": "a", "quantity": 1}]})
        .to_string();

    let line = refusal(
        &shop,
        &["--call", checkout, "--data", &data, "--calls", "10"],
    );
    assert!(line.contains("nothing was measured"), "{line}");
    assert!(
        line.contains("UNAUTHENTICATED: Checkout needs `authorization: Bearer shop-token`")
            && line.contains("trailers: shop-hint: send authorization"),
        "{line}"
    );

    let metadata = json!({
        "authorization": "Bearer shop-token",
        "x-request-id": "h-{{.RequestNumber}}",
        "x-tenant": "acme",
        "trace-bin": "AP8=",
    })
    .to_string();
    let expect = json!({
        "requestId": "r-{{.RequestNumber}}/h-{{.RequestNumber}}",
        "status": "RESERVED",
        "lines": [{"sku": "a", "reserved": 1}],
        "totalQuantity": 1,
        "total": {},
        "customer": "tenant=acme trace=00ff",
    })
    .to_string();
    let with_metadata = report(
        &shop,
        &[
            "--call",
            checkout,
            "--data",
            &data,
            "-m",
            &metadata,
            "--expect",
            &expect,
            "--concurrency",
            "3",
            "--calls",
            "40",
        ],
    );
    fixture::assert_all_verified(&with_metadata);
    assert_eq!(with_metadata["calls_ok"], 120);
    assert!(
        with_metadata["call"]["templates"]
            .as_array()
            .unwrap()
            .contains(&json!("x-request-id: h-{{.RequestNumber}}")),
        "{with_metadata:#}"
    );

    // From a file (-M), an array of sets used round-robin with a data
    // array: call n sends data[n mod 2] with metadata[n mod 2], and each
    // expected reply pairs with its request.
    let sets = json!([
        {"authorization": "Bearer shop-token", "x-tenant": "even"},
        {"authorization": "Bearer shop-token", "x-tenant": "odd"},
    ]);
    let file = scratch().join("metadata.json");
    std::fs::write(&file, sets.to_string()).unwrap();
    let data = json!([{"requestId": "e"}, {"requestId": "o"}]).to_string();
    let expect = json!([
        {"requestId": "e/", "status": "RESERVED", "total": {}, "customer": "tenant=even trace="},
        {"requestId": "o/", "status": "RESERVED", "total": {}, "customer": "tenant=odd trace="},
    ])
    .to_string();
    let round_robin = report(
        &shop,
        &[
            "--call",
            checkout,
            "--data",
            &data,
            "-M",
            file.to_str().unwrap(),
            "--expect",
            &expect,
            "--concurrency",
            "2",
            "--calls",
            "25",
        ],
    );
    fixture::assert_all_verified(&round_robin);
    assert_eq!(round_robin["calls_ok"], 50);

    // A key HTTP/2 forbids: one line before any load, naming the key.
    for (key, says) in [
        ("Authorization", "write `authorization`"),
        ("connection", "connection-specific header"),
        (":authority", "pseudo-header"),
        ("te", "te: trailers"),
    ] {
        let metadata = json!({ key: "x" }).to_string();
        let line = refusal(&shop, &["--call", checkout, "-m", &metadata]);
        assert!(
            line.contains(&format!("`{key}`")) && line.contains(says),
            "{line}"
        );
    }
    let line = refusal(
        &shop,
        &["--call", checkout, "-m", r#"{"trace-bin":"no base64!"}"#],
    );
    assert!(
        line.contains("`trace-bin` is a binary header (-bin)"),
        "{line}"
    );
}

/// ghz's template values and functions, in the request and compared in
/// the reply where they come back, and a data array from a file of one
/// message a line; bad templates and elements are refused in one line.
#[test]
fn template_values_and_data_arrays_reach_the_server() {
    let shop = start(&[], None);
    // Values drawn per call cannot be expected, but the server must take
    // them: `sequence` (int64) from randomInt, the id from the rest.
    let data = json!({
        "requestId": "{{.MethodName}}|{{.ServiceName}}|{{.InputName}}|{{.OutputName}}|{{.FullyQualifiedName}}|{{.IsClientStreaming}}|{{.IsServerStreaming}}|{{.WorkerID}}|{{.RequestNumber}}",
        "items": [{"sku": "{{randomString 12}}-{{.UUID}}-{{.Timestamp}}-{{.TimestampUnixNano}}", "quantity": "{{randomInt 1 50}}"}],
        "sequence": "{{.TimestampUnixMilli}}",
    })
    .to_string();
    let decoded = report(
        &shop,
        &["--data", &data, "--calls", "30", "--concurrency", "2"],
    );
    assert_verified(&decoded, 60, "reflection grpc.reflection.v1");

    // The method's values are written in once; the call's number and its
    // connection's come back in the reply and are compared.
    let data =
        json!({"requestId": "{{.MethodName}}/{{.InputName}}/{{.WorkerID}}/{{.RequestNumber}}"})
            .to_string();
    let expect = json!({"requestId": "Reserve/ReserveRequest/{{.WorkerID}}/{{.RequestNumber}}", "status": "RESERVED", "total": {}})
        .to_string();
    let compared = report(
        &shop,
        &[
            "--data",
            &data,
            "--expect",
            &expect,
            "--calls",
            "20",
            "--concurrency",
            "3",
        ],
    );
    assert_verified(&compared, 60, "reflection grpc.reflection.v1");

    // A data file of one JSON message a line, sent round-robin, each
    // compared with its own expected reply.
    let file = scratch().join("requests.jsonl");
    std::fs::write(
        &file,
        "{\"requestId\":\"a\",\"items\":[{\"sku\":\"x\",\"quantity\":1}]}\n\n{\"requestId\":\"b\",\"items\":[{\"sku\":\"y\",\"quantity\":200}]}\n",
    )
    .unwrap();
    let expect = json!([
        {"requestId": "a", "status": "RESERVED", "lines": [{"sku": "x", "reserved": 1}], "totalQuantity": 1, "total": {}},
        {"requestId": "b", "status": "PARTIAL", "lines": [{"sku": "y", "reserved": 100}], "totalQuantity": 100, "total": {}},
    ])
    .to_string();
    let lines = report(
        &shop,
        &[
            "--data-file",
            file.to_str().unwrap(),
            "--expect",
            &expect,
            "--calls",
            "21",
        ],
    );
    assert_verified(&lines, 21, "reflection grpc.reflection.v1");

    let line = refusal(&shop, &["--data", r#"{"requestId":"{{randomFloat 1 2}}"}"#]);
    assert!(
        line.contains("requestId: unknown template action `{{randomFloat 1 2}}`"),
        "{line}"
    );
    let line = refusal(
        &shop,
        &[
            "--data",
            r#"[{"requestId":"a"},{"items":[{"sku":"b","quantity":"many"}]}]"#,
        ],
    );
    assert!(
        line.contains("--data[1]: items[0].quantity: an integer"),
        "{line}"
    );
    let line = refusal(
        &shop,
        &[
            "--data",
            r#"{"requestId":"{{.UUID}}"}"#,
            "--expect",
            r#"{"requestId":"{{.UUID}}"}"#,
        ],
    );
    assert!(
        line.contains("{{.UUID}} is drawn anew for every call and cannot be expected"),
        "{line}"
    );
}
