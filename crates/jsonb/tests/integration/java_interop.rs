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

use common::{case_names, golden, rust_write};
use java_interop::{check_java_reads, JavaVerify};

#[test]
fn java_reads_what_rust_writes() {
    let cases = case_names().into_iter().map(|n| (n, rust_write(n)));
    let tmp = env!("CARGO_TARGET_TMPDIR");
    check_java_reads("fastjson2-jsonb", tmp, cases, &golden(), JavaVerify::verify);
}
