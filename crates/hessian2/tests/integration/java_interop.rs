//! Rust writes, Java reads: every golden case the Rust encoder can write is
//! written to a directory and read back by golden/java's rpclab.golden.Verify
//! with each real Java implementation, which compares what it reads with its
//! own expected Java objects (including shared and cyclic references).
//!
//! Needs Maven and a JDK (and Maven Central, the first time). Without them
//! the test fails; set RPCLAB_SKIP_JAVA_TESTS=1 to skip it deliberately.

use crate::common;

use std::path::Path;

use common::{golden, manifest, IMPLS};
use hessian2::Encoder;
use java_interop::{all_passed, java_tests_enabled, write_cases, JavaVerify};

#[test]
fn java_reads_what_rust_writes() {
    if !java_tests_enabled() {
        return;
    }
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hessian2-java-interop");
    let mut failures = Vec::new();
    for impl_name in IMPLS {
        let m = manifest(impl_name);
        let dir = root.join(impl_name);
        let cases = m.cases.iter().filter(|c| c.rust_writes).map(|case| {
            let mut enc = Encoder::new(Vec::new());
            for v in &case.values {
                enc.write_value(v)
                    .unwrap_or_else(|e| panic!("{impl_name}/{}: {e}", case.name));
            }
            (&case.name, enc.into_inner())
        });
        let written = write_cases(&dir, cases);

        let (java_impl, profile) = match impl_name {
            "caucho" => ("caucho", None),
            "dubbo-lite" => ("lite", None),
            "alibaba-lite" => ("lite", Some("alibaba-lite")),
            other => panic!("unknown implementation {other}"),
        };
        let mut verify = JavaVerify::exec_java(
            &golden().pom(),
            "rpclab.golden.Verify",
            &format!("{java_impl} {}", dir.display()),
        );
        if let Some(p) = profile {
            verify = verify.profile(p);
        }
        if let Err(e) = verify.run(
            &format!("{impl_name} ({})", m.artifact),
            &all_passed(written),
        ) {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "Java could not read what Rust wrote:\n{}",
        failures.join("\n")
    );
}
