//! End-to-end: the client's generic Thrift call (`--call` with `--idl`,
//! protocol `thrift-generic`) against a real Thrift server in a container
//! that is not rpclab's contract: `fixtures/thrift-shop`, service
//! `shop.Inventory` of `idl/shop.thrift` (an included file, typedefs,
//! enums, nested structs, a list, a set, a map, binary, an exception, a
//! service that extends another), served with the Thrift compiler's own
//! code on the `thrift` crate.
//!
//! The fixture runs in a container of an image `FROM scratch`
//! (`common::fixture`); each test starts its containers and removes them
//! when it ends. The client runs as the `rpclab-client` binary, as a user
//! runs it; the tests read its JSON report or its one error line. Needs a
//! Docker engine. No timing is asserted.

use crate::common;

use common::cli::{self, partially_expected};
use common::containers::Container;
use common::fixture;
use serde_json::{json, Value};

const METHOD: &str = "Inventory.reserve";

fn idl() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/thrift-shop/idl/shop.thrift"
    )
    .to_owned()
}

/// Arguments with a nested struct, a list of structs, an enum, a set, a
/// map, binary and the call's number twice.
fn request() -> Value {
    json!({"req": {
        "requestId": "req-{{.RequestNumber}}",
        "sequence": "{{.RequestNumber}}",
        "customer": {"name": "ada", "tier": "GOLD"},
        "items": [
            {"sku": "apple", "quantity": 3, "price": {"currency": "EUR", "units": 2}},
            {"sku": "pear", "quantity": 150, "price": {"currency": "EUR", "units": 1}},
        ],
        "tags": ["fruit"],
        "attributes": {"channel": "web"},
        "note": "aGVsbG8=",
    }})
}

/// What the fixture answers to [`request`]: the shop's reply, with the
/// length of the request's binary note.
fn reply() -> Value {
    let mut reply = fixture::shop_reply();
    reply["noteBytes"] = json!(5);
    reply
}

/// `args` with `--idl <shop.thrift>` and `--call <METHOD>` in front, unless
/// they name another call.
fn with_call(args: &[&str]) -> Vec<String> {
    let mut all = vec!["--idl".to_owned(), idl()];
    if !args.contains(&"--call") {
        all.extend(["--call".to_owned(), METHOD.to_owned()]);
    }
    all.extend(args.iter().map(|a| (*a).to_owned()));
    all
}

fn report(shop: &Container, args: &[&str]) -> Value {
    let args = with_call(args);
    fixture::report(shop, &args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn refusal(shop: &Container, args: &[&str]) -> String {
    let args = with_call(args);
    fixture::refusal(shop, &args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Every call verified, and the report says what was called.
fn assert_verified(report: &Value, method: &str) {
    let call = cli::assert_generic_calls_verified(report, "thrift-generic", method, None);
    assert_eq!(call["descriptors"], format!("idl {}", idl()), "{call:#}");
}

#[test]
fn calls_from_the_idl_are_verified_on_both_engines_and_wires() {
    let shop = fixture::start("thrift-shop", &[], None);
    let data = request().to_string();
    let expect = reply().to_string();
    let common = cli::verified_run(&data, &expect);

    // The poll engine (the closed loop's default for one call in flight).
    let polled = report(&shop, &common);
    assert_verified(&polled, METHOD);
    assert_eq!(polled["engine"], "poll");
    assert_eq!(polled["calls_ok"], 200);
    assert_eq!(polled["call"]["expected_reply"], true);
    assert_eq!(
        polled["call"]["templates"],
        json!(["req-{{.RequestNumber}}", "{{.RequestNumber}}"])
    );
    // The tasks engine, whose first connection verifies one call first.
    let tasks = report(&shop, &[&common[..], &["--engine", "tasks"]].concat());
    assert_verified(&tasks, METHOD);
    assert_eq!(tasks["engine"], "tasks");
    assert_eq!(tasks["calls_ok"], 200);

    // A method inherited through `extends`, from the included file; the
    // `--protocol thrift-generic` form; no expected reply (decoded).
    let ping = report(
        &shop,
        &[
            "--protocol",
            "thrift-generic",
            "--call",
            "Inventory/ping",
            "--data",
            r#"{"who": "w"}"#,
            "--calls",
            "20",
        ],
    );
    assert_verified(&ping, "Inventory.ping");
    assert_eq!(ping["call"]["expected_reply"], false);

    // The open loop goes through the same connections.
    let open = report(&shop, &[&common[..4], fixture::OPEN_LOOP].concat());
    fixture::assert_all_verified(&open);

    // The compact protocol, buffered, against a server that speaks it.
    let compact = fixture::start(
        "thrift-shop",
        &["--transport", "buffered", "--protocol", "compact"],
        None,
    );
    let by_compact = report(
        &compact,
        &[
            &common[..],
            &[
                "--option",
                "transport=buffered",
                "--option",
                "protocol=compact",
            ],
        ]
        .concat(),
    );
    assert_verified(&by_compact, METHOD);
}

/// A partial expectation compares only its keys, matchers judge their
/// fields, a matcher that fails names its field, and one it does not know
/// is one line before load.
#[test]
fn partial_expectations_and_matchers_verify_every_reply() {
    let shop = fixture::start("thrift-shop", &[], None);
    let data = request().to_string();
    let partial = json!({"status": "PARTIAL", "total": {"units": 156}}).to_string();
    let verified = report(
        &shop,
        &[&["--data", &data][..], &partially_expected(&partial, "25")].concat(),
    );
    assert_verified(&verified, METHOD);
    assert_eq!(verified["calls_ok"], 50);

    let matched = json!({
        "requestId": {"$regex": "^req-[0-9]+$"},
        "sequence": {"$range": [0, null]},
        "status": "PARTIAL",
        "lines": {"$type": "array"},
        "totalQuantity": {"$range": [100, 110]},
        "total": {"$any": true},
        "customer": {"$type": "string"},
        "noteBytes": 5,
    })
    .to_string();
    let verified = report(
        &shop,
        &["--data", &data, "--expect", &matched, "--calls", "30"],
    );
    assert_verified(&verified, METHOD);
    assert_eq!(verified["calls_ok"], 30);

    fixture::assert_matcher_refusals(&data, |args| refusal(&shop, args));
}

#[test]
fn a_declared_exception_counts_only_when_expected() {
    let shop = fixture::start("thrift-shop", &[], None);
    let data = json!({"req": {"requestId": "r", "items": [{"sku": "sold-out-7", "quantity": 1}]}})
        .to_string();
    let thrown = json!({"outOfStock": {"sku": "sold-out-7", "available": 0}}).to_string();
    let expected = report(
        &shop,
        &["--data", &data, "--expect", &thrown, "--calls", "20"],
    );
    assert_verified(&expected, METHOD);
    assert_eq!(expected["calls_ok"], 20);

    let line = refusal(
        &shop,
        &["--data", &data, "--calls", "20", "--engine", "tasks"],
    );
    cli::assert_unmeasured(
        &line,
        r#"the server threw outOfStock (OutOfStock) {"sku":"sold-out-7","available":0}, and no --expect names it"#,
    );
}

#[test]
fn bad_input_is_one_line_and_nothing_is_measured() {
    let shop = fixture::start("thrift-shop", &[], None);
    let line = refusal(&shop, &["--call", "Inventory.cancel"]);
    assert!(
        line.contains(
            "service `Inventory` has no method `cancel` (its methods: ping, reserve, forget)"
        ),
        "{line}"
    );
    let line = refusal(&shop, &["--call", "Store.reserve"]);
    assert!(
        line.contains("unknown service `Store`") && line.contains("Inventory, shared.Health"),
        "{line}"
    );
    let line = refusal(
        &shop,
        &[
            "--data",
            r#"{"req": {"items": [{"sku": "a", "quantity": 1}, {"sku": "b", "quantity": "x"}]}}"#,
        ],
    );
    assert!(
        line.contains(r#"--data: req.items[1].quantity: expected i32, got "x""#),
        "{line}"
    );
    let line = refusal(
        &shop,
        &["--data", r#"{"req": {"items": [{"quantity": 1}]}}"#],
    );
    assert!(
        line.contains("--data: req.items[0].sku: required field of Item missing"),
        "{line}"
    );

    // A reply that is not the expected one: the first call fails, and the
    // line names the first differing field.
    let data =
        json!({"req": {"requestId": "r", "items": [{"sku": "a", "quantity": 5}]}}).to_string();
    let mut expect = reply();
    expect["requestId"] = json!("r");
    expect["sequence"] = json!(0);
    expect["status"] = json!("RESERVED");
    expect["lines"] = json!([{"sku": "a", "reserved": 4}]);
    let line = refusal(
        &shop,
        &[
            "--data",
            &data,
            "--expect",
            &expect.to_string(),
            "--calls",
            "100",
            "--engine",
            "tasks",
        ],
    );
    cli::assert_unmeasured(&line, "lines[0].reserved: expected 4, got 5");
}

/// ghz's template values in the arguments: the call's number and its
/// connection's, and the method's names, come back in the reply and are
/// compared on both engines; drawn values (random, UUID, time) reach the
/// server; an unknown action, a drawn value in --expect and -m are one
/// line before any load.
#[test]
fn template_values_reach_the_server_and_bad_ones_are_one_line() {
    let shop = fixture::start("thrift-shop", &[], None);
    let data = json!({"req": {
        "requestId": "{{.ServiceName}}.{{.MethodName}}-w{{.WorkerID}}-{{.RequestNumber}}",
        "sequence": "{{.RequestNumber}}",
        "items": [{"sku": "apple", "quantity": "{{randomInt 1 50}}"}],
        "tags": ["{{randomString 0}}", "{{.UUID}}", "{{.Timestamp}}", "{{.TimestampUnixNano}}"],
    }})
    .to_string();
    // The reply echoes the id and the sequence; the drawn quantity makes
    // the rest vary, so only a decoded reply is asked for there.
    let drawn = report(
        &shop,
        &["--data", &data, "--concurrency", "2", "--calls", "30"],
    );
    assert_verified(&drawn, METHOD);
    assert_eq!(drawn["calls_ok"], 60);

    let data = json!({"req": {
        "requestId": "{{.ServiceName}}.{{.MethodName}}-w{{.WorkerID}}-{{.RequestNumber}}",
        "sequence": "{{.RequestNumber}}",
        "items": [{"sku": "apple", "quantity": 1}],
    }})
    .to_string();
    let expect = json!({
        "requestId": "Inventory.reserve-w{{.WorkerID}}-{{.RequestNumber}}",
        "sequence": "{{.RequestNumber}}",
        "status": "RESERVED",
        "lines": [{"sku": "apple", "reserved": 1}],
        "totalQuantity": 1,
        "total": {"currency": "EUR", "units": 0},
        "customer": "",
        "noteBytes": 0,
    })
    .to_string();
    for (engine, used) in [("auto", "poll"), ("tasks", "tasks")] {
        let compared = report(
            &shop,
            &[
                "--data",
                &data,
                "--expect",
                &expect,
                "--concurrency",
                "3",
                "--calls",
                "20",
                "--engine",
                engine,
            ],
        );
        assert_verified(&compared, METHOD);
        assert_eq!(compared["engine"], used);
        assert_eq!(compared["calls_ok"], 60, "{engine}");
    }

    let line = refusal(&shop, &["--data", r#"{"req": {"requestId": "{{uuid}}"}}"#]);
    assert!(
        line.contains("--data: req.requestId: unknown template action `{{uuid}}`"),
        "{line}"
    );
    let line = refusal(
        &shop,
        &[
            "--data",
            r#"{"req": {"items": [{"sku": "a", "quantity": "{{.UUID}}"}]}}"#,
        ],
    );
    assert!(
        line.contains(
            "req.items[0].quantity: an integer field's value is one integer action alone"
        ),
        "{line}"
    );
    let line = refusal(
        &shop,
        &["--expect", r#"{"requestId": "{{randomString 3}}"}"#],
    );
    assert!(
        line.contains("{{randomString 3}} is drawn anew for every call and cannot be expected"),
        "{line}"
    );
    let line = refusal(&shop, &["-m", r#"{"tenant": "a"}"#]);
    assert!(line.contains("Thrift calls carry no metadata"), "{line}");
}

/// A data array (a JSON array of argument objects, or a file of one a
/// line) goes round-robin: each request's own reply comes back, every
/// reply verified against a matcher that takes either; an expectation
/// that fits only the first fails on the second; an element of the wrong
/// shape is named by its index before any load.
#[test]
fn a_data_array_is_sent_round_robin_and_its_elements_named_in_errors() {
    let shop = fixture::start("thrift-shop", &[], None);
    let one = |id: &str, name: &str, tier: &str| {
        json!({"req": {
            "requestId": format!("{id}-{{{{.RequestNumber}}}}"),
            "customer": {"name": name, "tier": tier},
            "items": [{"sku": "apple", "quantity": 1}],
        }})
    };
    let array = json!([one("a", "ada", "GOLD"), one("b", "bob", "SILVER")]);
    let either = json!({
        "requestId": {"$regex": "^(a|b)-[0-9]+$"},
        "customer": {"$regex": "^(ada \\(GOLD\\)|bob \\(SILVER\\))$"},
    })
    .to_string();
    let lines =
        std::env::temp_dir().join(format!("rpclab-thrift-array-{}.jsonl", std::process::id()));
    std::fs::write(&lines, format!("{}\n{}\n", array[0], array[1])).unwrap();
    let file = lines.display().to_string();
    for data in [["--data", &array.to_string()], ["--data-file", &file]] {
        let verified = report(
            &shop,
            &[&data[..], &partially_expected(&either, "20")].concat(),
        );
        assert_verified(&verified, METHOD);
        assert_eq!(verified["calls_ok"], 40);
        assert_eq!(
            verified["call"]["templates"],
            json!(["a-{{.RequestNumber}}", "b-{{.RequestNumber}}"])
        );
    }
    // The second request's reply is bob's: an expectation of ada's alone
    // fails on every second call, bob's.
    let only_ada = json!({"customer": "ada (GOLD)"}).to_string();
    let half = report(
        &shop,
        &[
            "--data",
            &array.to_string(),
            "--expect",
            &only_ada,
            "--expect-partial",
            "--calls",
            "10",
            "--engine",
            "tasks",
        ],
    );
    let _ = std::fs::remove_file(&lines);
    assert_eq!(half["calls_ok"], 5, "{half:#}");
    assert_eq!(half["calls_failed"], 5, "{half:#}");
    assert!(
        half["failures"].to_string().contains("bob (SILVER)"),
        "{half:#}"
    );
    // An element of the wrong shape: its index and the field.
    let mut bad = array.clone();
    bad[1]["req"]["items"][0]["quantity"] = json!("x");
    let line = refusal(&shop, &["--data", &bad.to_string()]);
    assert!(
        line.contains(r#"--data[1]: req.items[0].quantity: expected i32, got "x""#),
        "{line}"
    );
}

/// While it runs, standard error (not a terminal here) gets a line a
/// second with the rate, the failed calls and, once the window has had a
/// whole second, the last second's p50 and p99; standard output only the
/// report.
#[test]
fn a_line_a_second_says_the_rate_and_the_last_second_s_percentiles() {
    let shop = fixture::start("thrift-shop", &[], None);
    let data = request().to_string();
    let out = fixture::client(
        &shop,
        &with_call(&[
            "--data",
            &data,
            "--duration-s",
            "3",
            "--warmup-s",
            "0.5",
            "--json",
        ])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("stdout is the report alone");
    assert!(report["calls_ok"].as_u64().unwrap() > 0);
    let measured: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("rpclab-progress: phase=Measure"))
        .collect();
    assert!(!measured.is_empty(), "{err}");
    let with_percentiles = measured
        .iter()
        .find(|l| l.contains(" p50=") && l.contains(" p99="))
        .unwrap_or_else(|| panic!("no second with percentiles in:\n{err}"));
    for field in ["calls=", "rate=", "/s failed=0", "ms p99="] {
        assert!(with_percentiles.contains(field), "{with_percentiles}");
    }
}
