//! Rust writes, Java reads: every golden case the Rust encoder can write is
//! written to a directory and read back by golden/java's rpclab.golden.Verify
//! with each real Java implementation, which compares what it reads with its
//! own expected Java objects (including shared and cyclic references).
//!
//! Needs Maven and a JDK (and Maven Central, the first time). Without them
//! the test fails; set RPCLAB_SKIP_JAVA_TESTS=1 to skip it deliberately.

use crate::common;

use common::{golden, manifest, IMPLS};
use hessian2::Encoder;
use java_interop::{java_reads, JavaVerify};

#[test]
fn java_reads_what_rust_writes() {
    let failures: Vec<String> = IMPLS
        .into_iter()
        .filter_map(|impl_name| java_reads_cases_of(impl_name).err())
        .collect();
    assert!(
        failures.is_empty(),
        "Java could not read what Rust wrote:\n{}",
        failures.join("\n")
    );
}

/// Every case of `impl_name`'s manifest that Rust writes, read by that
/// implementation.
fn java_reads_cases_of(impl_name: &str) -> Result<(), String> {
    let m = manifest(impl_name);
    let cases = m.cases.iter().filter(|c| c.rust_writes).map(|case| {
        let mut enc = Encoder::new(Vec::new());
        for v in &case.values {
            enc.write_value(v)
                .unwrap_or_else(|e| panic!("{impl_name}/{}: {e}", case.name));
        }
        (&case.name, enc.into_inner())
    });
    let (java_impl, profile) = match impl_name {
        "caucho" => ("caucho", None),
        "dubbo-lite" => ("lite", None),
        "alibaba-lite" => ("lite", Some("alibaba-lite")),
        other => panic!("unknown implementation {other}"),
    };
    let label = format!("hessian2-{impl_name}");
    java_reads(&label, env!("CARGO_TARGET_TMPDIR"), cases, |dir| {
        let args = format!("{java_impl} {}", dir.display());
        let verify = JavaVerify::exec_java(&golden().pom(), "rpclab.golden.Verify", &args);
        match profile {
            Some(p) => verify.profile(p),
            None => verify,
        }
    })
}
