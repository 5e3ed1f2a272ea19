//! Rust writes, Java reads: every golden case is written with the Rust
//! encoder API to a directory and read back by golden/java's
//! rpclab.golden.Verify with java.io.ObjectInputStream, which compares what
//! it reads with the Java-side case (primitives, strings, boxed values,
//! Order, ArrayList, HashMap, arrays, enums, shared references).
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
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("javaser-java-interop");
    let cases = case_names().into_iter().map(|name| {
        let bytes = rust_write(&name).unwrap_or_else(|| panic!("{name}: no Rust writer"));
        (name, bytes)
    });
    let written = write_cases(&dir, cases);
    let verify = JavaVerify::verify(&golden().pom(), &dir);
    if let Err(e) = verify.run("javaser", &all_passed(written)) {
        panic!("{e}");
    }
}
