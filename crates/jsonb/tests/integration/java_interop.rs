//! Rust writes, Java reads: every golden case is written with the Rust API
//! (the contract's Order field by field, as the client writes it) to a
//! directory and read back by golden/java's rpclab.golden.Verify with
//! Dubbo 3.3.6's own FastJson2ObjectInput (its JSONReader features and
//! STRICT allow-list), which compares what it reads with the Java-side case
//! and requires every byte to be consumed.
//!
//! Needs Maven and a JDK 17+. Without them the test fails; set
//! RPCLAB_SKIP_JAVA_TESTS=1 to skip it deliberately.

use crate::common;

use std::path::Path;

use common::{case_names, golden, rust_write};
use java_interop::{all_passed, java_tests_enabled, write_cases, JavaVerify};

#[test]
fn java_reads_what_rust_writes() {
    if !java_tests_enabled() {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fastjson2-jsonb-java-interop");
    let written = write_cases(&dir, case_names().into_iter().map(|n| (n, rust_write(n))));
    let verify = JavaVerify::verify(&golden().pom(), &dir);
    if let Err(e) = verify.run("fastjson2-jsonb", &all_passed(written)) {
        panic!("{e}");
    }
}
