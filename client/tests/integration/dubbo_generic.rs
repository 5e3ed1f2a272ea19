//! End-to-end: the client's generic Dubbo call (`--protocol dubbo-generic
//! --call`) against a real Dubbo 3.3 provider of an interface that is not
//! rpclab's contract, `fixtures/dubbo-shop`
//! (`com.example.shop.InventoryService`: a POJO in and out, with nested
//! lists, an enum, a long and a double; and primitives), found through a
//! real ZooKeeper, or by its address.
//!
//! The fixture is built as the lab builds every JVM server, by
//! `images/java-server/Dockerfile` on the lab's JDK and Maven images (from a
//! build context of its folder and `contract/java-shared` alone, so that
//! nothing else invalidates its layers), and ZooKeeper is the lab's image:
//! `rpclab/jdk:17`, `rpclab/maven:17` and `rpclab/zookeeper:3.9` must be on
//! the engine (CI builds them before the tests; by hand: `cargo xtask lab
//! build --only dubbo-3.3`). Each container runs on the host network,
//! bound to 127.0.0.1, confined as the lab's are, and is removed when the
//! test ends, panics included. The client runs as a user would run it, as
//! the `rpclab-client` binary; the test reads its JSON report or its one
//! error line. No timing is asserted.

use crate::common;

use common::cli::{self, run};
use common::containers::{self, Container};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

const IMAGE: &str = "rpclab-test/dubbo-shop:latest";
const JDK: &str = "rpclab/jdk:17";
const MAVEN: &str = "rpclab/maven:17";
const ZOOKEEPER: &str = "rpclab/zookeeper:3.9";
const SERVICE: &str = "com.example.shop.InventoryService";
/// The shop's `reserve` (of [`SERVICE`]) and its parameter's type, as a
/// generic call names them.
const RESERVE: [&str; 4] = [
    "--call",
    "com.example.shop.InventoryService/reserve",
    "--types",
    "com.example.shop.ReserveRequest",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Copies the folder (or file) `from` to `to`.
fn copy(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    }
}

/// The fixture's image, built by the lab's Dockerfile of JVM servers.
/// The fixture's image, by its id (the engine is shared: another
/// checkout's tests may tag their own build meanwhile).
fn image() -> &'static str {
    static BUILT: OnceLock<String> = OnceLock::new();
    BUILT.get_or_init(|| {
        containers::require_images(
            &[JDK, MAVEN, ZOOKEEPER],
            "cargo xtask lab build --only dubbo-3.3",
        );
        let context =
            std::env::temp_dir().join(format!("rpclab-dubbo-shop-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&context);
        let repo = repo();
        copy(
            &repo.join("images/java-server/Dockerfile"),
            &context.join("Dockerfile"),
        );
        for root in ["server", "dubbo3"] {
            let shared = format!("contract/java-shared/{root}");
            copy(&repo.join(&shared), &context.join(&shared));
        }
        for part in ["pom.xml", "src"] {
            let path = format!("fixtures/dubbo-shop/{part}");
            copy(&repo.join(&path), &context.join(&path));
        }
        let built = run(
            containers::docker_build(IMAGE)
                .args(["--build-arg", "SERVER_DIR=fixtures/dubbo-shop"])
                .args(["--build-arg", &format!("RPCLAB_JDK_IMAGE={JDK}")])
                .args(["--build-arg", &format!("RPCLAB_MAVEN_IMAGE={MAVEN}")])
                .arg(&context),
            "docker build (the dubbo-shop fixture)",
        );
        let _ = std::fs::remove_dir_all(&context);
        let id = String::from_utf8_lossy(&built.stdout).trim().to_owned();
        assert!(id.starts_with("sha256:"), "docker build -q printed `{id}`");
        id
    })
}

/// ZooKeeper and the provider registered in it.
struct Shop {
    registry: String,
    target: String,
    // Dropped provider first: it unregisters from a live ZooKeeper.
    _provider: Container,
    _zookeeper: Container,
}

impl Shop {
    fn start() -> Shop {
        let image = image();
        let zookeeper = Container::start("zookeeper", ZOOKEEPER, |cmd, port| {
            containers::jvm_confined(cmd);
            cmd.args([
                "--tmpfs",
                "/var/lib/zookeeper/data:rw,noexec,nosuid,nodev,size=64m,uid=10001,gid=10001",
            ])
            .args(["-e", &format!("ZK_PORT={port}")])
            .arg(ZOOKEEPER);
        });
        zookeeper.wait_listening();
        let registry = format!("zookeeper://{}", zookeeper.target);
        let provider = Container::start("dubbo-shop", image, |cmd, port| {
            containers::jvm_confined(cmd);
            cmd.args(["-e", &format!("RPCLAB_PORT={port}")])
                .args(["-e", &format!("ZK_ADDRESS={registry}")])
                .args(["-e", "JAVA_OPTS=-Xms128m -Xmx256m -XX:TieredStopAtLevel=1"])
                .arg(image);
        });
        provider.wait_for_line("rpclab server ready on 127.0.0.1");
        Shop {
            registry,
            target: provider.target.clone(),
            _provider: provider,
            _zookeeper: zookeeper,
        }
    }
}

/// `rpclab-client --protocol dubbo-generic <args>`.
fn client(args: &[&str]) -> Output {
    cli::client()
        .args(["--protocol", "dubbo-generic"])
        .args(args)
        .output()
        .expect("rpclab-client starts")
}

/// A run that must succeed: its JSON report.
fn report(args: &[&str]) -> Value {
    cli::report(client(&[args, &["--json"]].concat()), args)
}

/// A run that must fail before any load: its one error line.
fn refusal(args: &[&str]) -> String {
    cli::refusal(client(args), args)
}

/// The flags of a call of [`RESERVE`] to the shop `at` (`--target` or
/// `--registry`, and where) with `data` (`--data` or `--data-file`, and
/// what).
fn reserve_call<'a>(at: [&'a str; 2], data: [&'a str; 2]) -> Vec<&'a str> {
    [&at[..], &RESERVE[..], &data[..]].concat()
}

/// A reservation request with nested POJOs in a list and the call's number.
fn request() -> Value {
    json!([{
        "requestId": "req-{{.RequestNumber}}",
        "customer": "ada",
        "items": [{"sku": "apple", "quantity": 3}, {"sku": "plum", "quantity": 25}],
    }])
}

/// What the provider answers to [`request`], generalized.
fn reply() -> Value {
    json!({
        "requestId": "req-{{.RequestNumber}}",
        "customer": "ada",
        "status": "PARTIAL",
        "lines": [{"sku": "apple", "reserved": 3}, {"sku": "plum", "reserved": 20}],
        "totalQuantity": 23,
        "price": 21.5,
    })
}

/// Every call verified, and the report says what was called.
fn assert_verified(report: &Value, calls: u64, method: &str) {
    let method = format!("{SERVICE}/{method}");
    cli::assert_generic_calls_verified(report, "dubbo-generic", &method, Some(calls));
}

/// A partial expectation compares only its keys, matchers judge their
/// fields (a generalized POJO's `class` is never asked for), a matcher
/// that fails names its field, and one it does not know is one line
/// before load.
#[test]
fn partial_expectations_and_matchers_verify_every_reply() {
    let shop = Shop::start();
    let data = request().to_string();
    let call = reserve_call(["--target", &shop.target], ["--data", &data]);
    let partial =
        json!({"status": "PARTIAL", "lines": [{"sku": "apple"}, {"reserved": 20}]}).to_string();
    let verified = report(&[&call[..], &cli::partially_expected(&partial, "25")].concat());
    assert_verified(&verified, 50, "reserve");

    let matched = json!({
        "requestId": {"$regex": "^req-[0-9]+$"},
        "customer": {"$type": "string"},
        "status": "PARTIAL",
        "lines": {"$type": "array"},
        "totalQuantity": {"$range": [20, 30]},
        "price": {"$range": [21, 22]},
    })
    .to_string();
    let verified = report(&[&call[..], &["--expect", &matched, "--calls", "30"]].concat());
    assert_verified(&verified, 30, "reserve");

    let too_many = json!({"totalQuantity": {"$range": [0, 10]}}).to_string();
    let line = refusal(
        &[
            &call[..],
            &["--expect", &too_many, "--expect-partial", "--calls", "10"],
        ]
        .concat(),
    );
    cli::assert_unmeasured(&line, "totalQuantity: expected a number in [0, 10], got 23");

    let unknown = json!({"status": {"$oneOf": ["PARTIAL"]}}).to_string();
    let line = refusal(&[&call[..], &["--expect", &unknown]].concat());
    assert!(
        line.contains("--expect: status: unknown matcher `$oneOf`; the matchers are"),
        "{line}"
    );

    // A data array: a file of one call's arguments a line, round-robin;
    // each reply is its own request's (bob's come back as bob's).
    let mut bob = request();
    bob[0]["customer"] = json!("bob");
    let lines =
        std::env::temp_dir().join(format!("rpclab-dubbo-array-{}.jsonl", std::process::id()));
    std::fs::write(&lines, format!("{}\n{}\n", request(), bob)).unwrap();
    let file = lines.display().to_string();
    let array = reserve_call(["--target", &shop.target], ["--data-file", &file]);
    let either = json!({"customer": {"$regex": "^(ada|bob)$"}, "status": "PARTIAL"}).to_string();
    let verified = report(&[&array[..], &cli::partially_expected(&either, "20")].concat());
    assert_verified(&verified, 40, "reserve");
    let only_ada = json!({"customer": "ada"}).to_string();
    let half = report(
        &[
            &array[..],
            &["--expect", &only_ada, "--expect-partial", "--calls", "10"],
        ]
        .concat(),
    );
    let _ = std::fs::remove_file(&lines);
    assert!(half["calls_failed"].as_u64().unwrap() >= 4, "{half:#}");
    assert!(half["calls_ok"].as_u64().unwrap() >= 4, "{half:#}");
    assert!(half["failures"].to_string().contains("bob"), "{half:#}");
}

#[test]
fn generic_calls_through_zookeeper_are_verified_and_bad_input_is_one_line() {
    let shop = Shop::start();
    let data = request().to_string();
    let expect = reply().to_string();
    let through_registry = [
        &reserve_call(["--registry", &shop.registry], ["--data", &data])[..],
        &["--expect", &expect],
    ]
    .concat();

    // A POJO in and out, found through ZooKeeper, every reply compared.
    let verified = report(
        &[
            &through_registry[..],
            &["--concurrency", "4", "--calls", "50"],
        ]
        .concat(),
    );
    assert_verified(&verified, 200, "reserve");
    assert_eq!(verified["call"]["expected_reply"], true);
    assert_eq!(
        verified["call"]["templates"],
        json!(["req-{{.RequestNumber}}"])
    );
    assert_eq!(
        verified["call"]["descriptors"],
        "parameter types com.example.shop.ReserveRequest"
    );
    // The open loop goes through the same calls.
    let open = report(
        &[
            &through_registry[..],
            &["--rate", "200", "--duration-s", "1"],
        ]
        .concat(),
    );
    assert_eq!(open["calls_failed"], 0, "{open:#}");
    assert!(open["calls_ok"].as_u64().unwrap() > 0, "{open:#}");

    // Primitives, by the provider's address; types left out: the provider
    // finds the method by its name.
    let restock = format!("{SERVICE}.restock");
    let by_target = ["--target", &shop.target];
    let primitives = report(
        &[
            &by_target[..],
            &["--call", &restock, "--types", "java.lang.String, int"],
            &[
                "--data",
                r#"["plum", 5]"#,
                "--expect",
                "25",
                "--calls",
                "20",
            ],
        ]
        .concat(),
    );
    assert_verified(&primitives, 20, "restock");
    let stock = format!("{SERVICE}/stock");
    let untyped = report(
        &[
            &by_target[..],
            &["--call", &stock, "--data", r#"["apple"]"#, "--calls", "10"],
        ]
        .concat(),
    );
    assert_verified(&untyped, 10, "stock");
    assert_eq!(untyped["call"]["expected_reply"], false);

    // A method the provider does not have: as registered, and as Dubbo's
    // reply says it.
    let cancel = format!("{SERVICE}/cancel");
    let line = refusal(&[
        "--registry",
        &shop.registry,
        "--call",
        &cancel,
        "--data",
        "[1]",
    ]);
    assert!(
        line.contains(&format!(
            "the provider of {SERVICE} at {} has no method `cancel`",
            shop.target
        )) && line.contains("reserve"),
        "{line}"
    );
    let line = refusal(&[&by_target[..], &["--call", &cancel, "--data", "[1]"]].concat());
    cli::assert_unmeasured(&line, "No such method cancel");

    // A field the POJO does not have: the provider ignores it, and the
    // reply names what that changed.
    let skewed = json!([{"requestId": "req-{{.RequestNumber}}", "customer": "ada",
        "items": [{"skew": "apple", "quantity": 3}, {"sku": "plum", "quantity": 25}]}])
    .to_string();
    let line = refusal(
        &[
            &through_registry[..6],
            &["--data", &skewed, "--expect", &expect],
        ]
        .concat(),
    );
    cli::assert_unmeasured(&line, "lines[0].reserved: expected 3, got 0");

    // A value of the wrong type: for a parameter, the client says so; in a
    // POJO's field, the provider does.
    let line = refusal(
        &[
            &by_target[..],
            &[
                "--call",
                &restock,
                "--types",
                "java.lang.String,int",
                "--data",
                r#"["plum", "lots"]"#,
            ],
        ]
        .concat(),
    );
    assert!(
        line.contains("--data: [1]: an integer for `int` expected, got a string `\"lots\"`"),
        "{line}"
    );
    let lots =
        json!([{"requestId": "r", "items": [{"sku": "apple", "quantity": "lots"}]}]).to_string();
    let line = refusal(&[&through_registry[..6], &["--data", &lots]].concat());
    cli::assert_unmeasured(&line, "lots");

    // No provider of the interface in the registry: named, with what is.
    let line = refusal(&[
        "--registry",
        &shop.registry,
        "--call",
        "com.example.shop.Nope/x",
    ]);
    assert!(
        line.contains(&format!(
            "registry {}: no dubbo provider of com.example.shop.Nope is registered (the \
             interfaces registered under /dubbo: {SERVICE})",
            shop.registry
        )),
        "{line}"
    );
    // A version the provider does not export: what is registered instead.
    let line = refusal(&[&through_registry[..], &["--option", "version=2.0.0"]].concat());
    assert!(
        line.contains(&format!(
            "no provider of {SERVICE} with version 2.0.0 and group none; registered: {} \
             (version none, group none)",
            shop.target
        )),
        "{line}"
    );
    // The count of types and arguments, and malformed JSON.
    let line = refusal(&[&through_registry[..6], &["--data", "[]"]].concat());
    assert!(
        line.contains("--types names 1 parameter type (com.example.shop.ReserveRequest) but --data holds 0 arguments"),
        "{line}"
    );
    let line = refusal(&[&through_registry[..6], &["--data", "[{"]].concat());
    assert!(line.contains("--data is not JSON"), "{line}");

    // Metadata are attachments: `attachment(key)` answers the value the
    // call came with, so a templated value comes back call by call, and
    // sets go round-robin.
    let attachment = format!("{SERVICE}/attachment");
    let ask = [
        &by_target[..],
        &[
            "--call",
            &attachment,
            "--types",
            "java.lang.String",
            "--data",
            r#"["tenant"]"#,
        ],
    ]
    .concat();
    let templated = report(
        &[
            &ask[..],
            &[
                "-m",
                r#"{"tenant":"acme-{{.RequestNumber}}"}"#,
                "--expect",
                r#""acme-{{.RequestNumber}}""#,
                "--concurrency",
                "2",
                "--calls",
                "20",
            ],
        ]
        .concat(),
    );
    assert_verified(&templated, 40, "attachment");
    assert_eq!(
        templated["call"]["templates"],
        json!(["tenant: acme-{{.RequestNumber}}"])
    );
    // Without -m the provider has no such attachment: the reply is null.
    let line = refusal(&[&ask[..], &["--expect", r#""acme""#]].concat());
    assert!(line.contains("nothing was measured"), "{line}");
    let line = refusal(&[&ask[..], &["-m", r#"{"generic":"false"}"#]].concat());
    assert!(
        line.contains("`generic` is an attachment rpclab sends itself"),
        "{line}"
    );
    // ghz's template values in the arguments: drawn per call, sent.
    let drawn = report(
        &[
            &by_target[..],
            &["--call", &restock, "--types", "java.lang.String, int"],
            &[
                "--data",
                r#"["{{randomString 6}}-{{.UUID}}", "{{randomInt 1 9}}"]"#,
            ],
            &["--calls", "20"],
        ]
        .concat(),
    );
    assert_verified(&drawn, 20, "restock");
    let line = refusal(
        &[
            &by_target[..],
            &["--call", &stock, "--data", r#"["{{.Nope}}"]"#],
        ]
        .concat(),
    );
    assert!(
        line.contains("--data: [0]: unknown template action `{{.Nope}}`"),
        "{line}"
    );
}
