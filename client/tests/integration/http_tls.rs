//! End-to-end: HTTPS for the protocols over HTTP/1.1, Hessian and SOAP,
//! against the lab's own servers in containers: `servers/hessian-servlet`
//! (Caucho's HessianServlet) and `servers/cxf` (Apache CXF), both in the
//! shared embedded Tomcat (`contract/java-shared/tomcat`), which serves
//! HTTPS when its environment names a PEM certificate and key
//! (`RPCLAB_TLS_CERT`, `RPCLAB_TLS_KEY`; `RPCLAB_TLS_CLIENT_CA` asks for
//! client certificates too).
//!
//! Each server's image is built as the lab builds it, from
//! `images/java-server/Dockerfile` with its `server.toml`'s `[build]` table
//! and first variant (so the engine's cached layers of the lab's own
//! builds are reused), on the lab's `rpclab/maven` and `rpclab/jdk` images
//! (`cargo xtask lab build` makes them; CI builds them before the tests).
//! Containers run confined as the lab's servers do, on 127.0.0.1, and are
//! removed when a test ends. The client runs as a user runs it, as the
//! `rpclab-client` binary; the tests read its JSON report or its one error
//! line. Certificates come from `openssl`. No timing is asserted.

use crate::common;

use common::certs::certificates;
use common::containers::{self, report, run, Container};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn scratch() -> PathBuf {
    containers::scratch("http-tls")
}

/// The certificates, made once for every test of this process.
fn certs() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| certificates(&scratch())).clone()
}

/// What the image build needs of a server's `server.toml`.
#[derive(serde::Deserialize)]
struct Manifest {
    build: Build,
    variant: Vec<Variant>,
}

#[derive(serde::Deserialize)]
struct Build {
    #[serde(default)]
    maven_properties: BTreeMap<String, String>,
    version_jar: Option<String>,
}

#[derive(serde::Deserialize)]
struct Variant {
    version: String,
    #[serde(default)]
    build_args: BTreeMap<String, String>,
}

/// The image of `servers/<server>`'s first variant, built from the shared
/// JVM server Dockerfile with the build arguments the lab gives it
/// (xtask/src/definitions/java_build.rs), under a test tag of its own.
fn image(server: &str) -> String {
    static BUILT: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(tag) = built.get(server) {
        return tag.clone();
    }
    containers::require_images(
        &["rpclab/maven:17", "rpclab/jdk:17"],
        &format!("cargo xtask lab build --only {server} --profile smoke"),
    );
    let dir = format!("servers/{server}");
    let text = std::fs::read_to_string(root().join(&dir).join("server.toml")).unwrap();
    let manifest: Manifest = toml::from_str(&text).unwrap();
    let variant = &manifest.variant[0];
    let maven: Vec<String> = manifest
        .build
        .maven_properties
        .iter()
        .filter_map(|(property, arg)| {
            let value = variant.build_args.get(arg)?;
            Some(format!("-D{property}={value}"))
        })
        .collect();
    let version_jar = manifest
        .build
        .version_jar
        .map(|jar| jar.replace("{version}", &variant.version))
        .unwrap_or_default();
    let tag = format!("rpclab-test/{server}:latest");
    let dockerfile = "images/java-server/Dockerfile";
    // The context as the lab makes it: contract/, the server's folder and
    // the shared Dockerfile, without build outputs.
    let mut tar = Command::new("tar")
        .current_dir(root())
        .args(["--exclude=target", "--exclude=.*", "-cf", "-"])
        .args(["contract", &dir, dockerfile])
        .stdout(Stdio::piped())
        .spawn()
        .expect("tar starts");
    let context = tar.stdout.take().unwrap();
    let build_args = [
        ("SERVER_DIR", dir.clone()),
        ("MAVEN_PROPERTIES", maven.join(" ")),
        ("MAVEN_TEST_PROPERTIES", String::new()),
        ("DEBIAN_PACKAGES", String::new()),
        ("VERSION_JAR", version_jar),
    ];
    let mut build = Command::new("docker");
    build.args(["build", "-q", "-t", &tag, "-f", dockerfile]);
    build.args([
        "--label",
        containers::LAB_IMAGE,
        "--network",
        "host",
        "--force-rm",
    ]);
    for (arg, value) in &build_args {
        build.arg("--build-arg").arg(format!("{arg}={value}"));
    }
    run(
        build.arg("-").stdin(Stdio::from(context)),
        &format!("docker build of {dir}"),
    );
    assert!(tar.wait().unwrap().success(), "tar of the build context");
    built.insert(server.to_owned(), tag.clone());
    tag
}

/// `servers/<server>` in a container serving HTTPS with the test's
/// server certificate, `env` added (e.g. `RPCLAB_TLS_CLIENT_CA`); ready
/// once it printed its ready line.
fn https_server(server: &str, env: &[(&str, &str)]) -> Container {
    let image = image(server);
    let certs = certs();
    let container = Container::start(server, &image, |cmd, port| {
        containers::jvm_confined(cmd);
        cmd.arg("-v")
            .arg(format!("{}:/certs:ro", certs.display()))
            .args(["-e", &format!("RPCLAB_PORT={port}")])
            .args(["-e", "JAVA_OPTS=-Xmx256m"])
            .args(["-e", "TOMCAT_THREADS=16"])
            .args(["-e", "RPCLAB_TLS_CERT=/certs/server.pem"])
            .args(["-e", "RPCLAB_TLS_KEY=/certs/server.key"]);
        for (key, value) in env {
            cmd.arg("-e").arg(format!("{key}={value}"));
        }
        cmd.arg(&image);
    });
    container.wait_for_line("rpclab server ready");
    let logs = container.logs();
    assert!(logs.contains(", TLS"), "not serving TLS:\n{logs}");
    container
}

/// A certificate file of the test's, as a path argument.
fn cert_file(name: &str) -> String {
    certs().join(name).display().to_string()
}

/// The client's flags for `protocol` against the contract's `order-echo`,
/// then `extra`.
fn args<'a>(protocol: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    [
        &[
            "--protocol",
            protocol,
            "--operation",
            "order-echo",
            "--concurrency",
            "2",
            "--calls",
            "25",
        ][..],
        extra,
    ]
    .concat()
}

/// Every call verified, some made, none failed, TLS recorded as `tls`.
fn assert_verified(report: &Value, protocol: &str, tls: Value) {
    assert_eq!(report["protocol"], protocol);
    assert_eq!(report["calls_failed"], 0, "{report:#}");
    assert_eq!(report["calls_ok"], 50, "{report:#}");
    assert_eq!(report["verified"], true);
    assert!(report["bytes_received_per_call"].as_f64().unwrap() > 0.0);
    assert_eq!(report["tls"], tls, "{report:#}");
}

#[test]
fn hessian_over_https_verified_by_a_ca_or_not_and_a_wrong_ca_refused() {
    let server = https_server("hessian-servlet", &[]);
    let target = &server.target;
    let ca = cert_file("ca.pem");

    let verified = report(target, &args("hessian", &["--cacert", &ca]));
    assert_verified(
        &verified,
        "hessian",
        json!({"mode": "verified", "roots": format!("CA file {ca}")}),
    );
    let unverified = report(target, &args("hessian", &["--skipTLS"]));
    assert_verified(&unverified, "hessian", json!({"mode": "unverified"}));

    // Before any load: a CA that did not sign the server's certificate,
    // and a plaintext client on the TLS port.
    let other = cert_file("other-ca.pem");
    let line = containers::refusal(target, &args("hessian", &["--cacert", &other]));
    assert!(
        line.contains("TLS handshake failed")
            && line.contains("UnknownIssuer")
            && line.contains("--cacert"),
        "{line}"
    );
    let line = containers::refusal(target, &args("hessian", &[]));
    assert!(
        line.contains("nothing was measured")
            && line.contains("speaks TLS")
            && line.contains("--cacert"),
        "{line}"
    );
}

#[test]
fn hessian_over_mutual_tls_needs_the_clients_certificate() {
    let server = https_server(
        "hessian-servlet",
        &[("RPCLAB_TLS_CLIENT_CA", "/certs/ca.pem")],
    );
    let target = &server.target;
    let (ca, cert, key) = (
        cert_file("ca.pem"),
        cert_file("client.pem"),
        cert_file("client.key"),
    );
    let mutual = report(
        target,
        &args(
            "hessian",
            &["--cacert", &ca, "--cert", &cert, "--key", &key],
        ),
    );
    assert_verified(
        &mutual,
        "hessian",
        json!({"mode": "verified", "roots": format!("CA file {ca}"), "client_cert": cert}),
    );
    let line = containers::refusal(target, &args("hessian", &["--cacert", &ca]));
    common::cli::assert_unmeasured(&line, "--cert and --key");
}

#[test]
fn soap_over_https_reads_its_wsdl_and_verifies_every_call() {
    let server = https_server("cxf", &[]);
    let target = &server.target;
    let ca = cert_file("ca.pem");
    let path = "--option=path=/services/bench";
    let verified = report(target, &args("soap", &[path, "--cacert", &ca]));
    assert_verified(
        &verified,
        "soap",
        json!({"mode": "verified", "roots": format!("CA file {ca}")}),
    );
    let unverified = report(target, &args("soap", &[path, "--skipTLS"]));
    assert_verified(&unverified, "soap", json!({"mode": "unverified"}));
}
