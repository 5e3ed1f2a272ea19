//! Rust writes, Java reads: every golden case is written with the Rust
//! encoder API to a directory and read back by golden/java's
//! rpclab.golden.Verify with java.io.ObjectInputStream, which compares what
//! it reads with the Java-side case (primitives, strings, boxed values,
//! Order, ArrayList, HashMap, arrays, enums, shared references).
//!
//! Needs Maven and a JDK 17+. Without them the test fails; set
//! RPCLAB_SKIP_JAVA_TESTS=1 to skip it deliberately.

use crate::common;

use common::{case_names, golden, rust_write};
use java_interop::{check_java_reads, JavaVerify};

#[test]
fn java_reads_what_rust_writes() {
    let cases = case_names().into_iter().map(|name| {
        let bytes = rust_write(&name).unwrap_or_else(|| panic!("{name}: no Rust writer"));
        (name, bytes)
    });
    let tmp = env!("CARGO_TARGET_TMPDIR");
    check_java_reads("javaser", tmp, cases, &golden(), JavaVerify::verify);
}
