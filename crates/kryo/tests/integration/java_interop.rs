//! Rust writes, Java reads: every golden case is written with the Rust API
//! (once sharing equal strings as Java does, once writing every string in
//! full as the rpclab client does) and read back by golden/java's
//! rpclab.golden.Verify with Dubbo's own KryoObjectInput, for both Kryo
//! lines (Maven profiles kryo4 and kryo5), which compares what it reads
//! with the Java-side case. One Maven run (one JVM) per Kryo line reads
//! both writings, named `shared~<case>.bin` and `full~<case>.bin`.
//! Exceptions are read-only and not written.
//!
//! Needs Maven and a JDK 17+ (and Maven Central or a local repository
//! holding Dubbo 2.6.12, Dubbo 3.3.6 and their kryo artifacts). Without them
//! the test fails; set RPCLAB_SKIP_JAVA_TESTS=1 to skip it deliberately.

use crate::common;

use std::path::Path;

use common::{cases, dialects, golden, rust_write_with};
use java_interop::{all_passed, java_tests_enabled, write_cases, JavaVerify};

/// What Kryo's reflection needs opened on Java 17 (as the servers'
/// jvm_flags and golden/regenerate.sh).
const OPENS: &[&str] = &[
    "java.base/java.lang",
    "java.base/java.lang.reflect",
    "java.base/java.lang.invoke",
    "java.base/java.util",
    "java.base/java.util.concurrent",
    "java.base/java.util.concurrent.atomic",
    "java.base/java.util.regex",
    "java.base/java.math",
    "java.base/java.net",
    "java.base/java.nio",
    "java.base/java.text",
    "java.base/java.time",
    "java.base/java.io",
    "java.base/java.security",
    "java.sql/java.sql",
];

#[test]
fn java_reads_what_rust_writes() {
    if !java_tests_enabled() {
        return;
    }
    let opens: Vec<String> = OPENS
        .iter()
        .map(|m| format!("--add-opens={m}=ALL-UNNAMED"))
        .collect();
    // One JVM per Kryo line: both writings of every case in one folder,
    // each file `<writing>~<case>.bin`, which Verify reads as `<case>`.
    for (line, dialect) in dialects() {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("kryo-java-interop-{line}"));
        let written = write_cases(
            &dir,
            [(true, "shared"), (false, "full")]
                .into_iter()
                .flat_map(|(share, writing)| {
                    cases().into_iter().filter_map(move |(name, steps)| {
                        rust_write_with(&steps, dialect, share)
                            .map(|bytes| (format!("{writing}~{name}"), bytes))
                    })
                }),
        );
        let verify = JavaVerify::verify(&golden().pom(), &dir)
            .profile(line)
            .env("MAVEN_OPTS", &opens.join(" "));
        if let Err(e) = verify.run(
            &format!("{line} (shared strings, and every string in full)"),
            &format!("{line}: {}", all_passed(written)),
        ) {
            panic!("{e}");
        }
    }
}
