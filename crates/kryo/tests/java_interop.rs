//! Rust writes, Java reads: every golden case is written with the Rust API
//! (once sharing equal strings as Java does, once writing every string in
//! full as the rpclab client does) and read back by golden/java's
//! rpclab.golden.Verify with Dubbo's own KryoObjectInput, for both Kryo
//! lines (Maven profiles kryo4 and kryo5), which compares what it reads
//! with the Java-side case. Exceptions are read-only and not written.
//!
//! Needs Maven and a JDK 17+ (and Maven Central or a local repository
//! holding Dubbo 2.6.12, Dubbo 3.3.6 and their kryo artifacts). Without them
//! the test fails; set RPCLAB_SKIP_JAVA_TESTS=1 to skip it deliberately.

mod common;

use std::path::Path;
use std::process::Command;

use common::{cases, dialects, golden_dir, rust_write_with};

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
    if std::env::var("RPCLAB_SKIP_JAVA_TESTS").as_deref() == Ok("1") {
        eprintln!("java_reads_what_rust_writes: skipped (RPCLAB_SKIP_JAVA_TESTS=1)");
        return;
    }
    match Command::new("mvn").arg("-v").output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "`mvn -v` failed ({}): Maven and a JDK 17+ are needed to check that Java reads what Rust writes; \
             set RPCLAB_SKIP_JAVA_TESTS=1 to skip this test\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!(
            "cannot run `mvn` ({e}): Maven and a JDK 17+ are needed to check that Java reads what Rust writes; \
             set RPCLAB_SKIP_JAVA_TESTS=1 to skip this test"
        ),
    }
    let opens: Vec<String> = OPENS
        .iter()
        .map(|m| format!("--add-opens={m}=ALL-UNNAMED"))
        .collect();
    let pom = golden_dir().join("java").join("pom.xml");
    for (line, dialect) in dialects() {
        for share in [true, false] {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
                .join(format!("kryo-java-interop-{line}-{share}"));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            let mut written = 0;
            for (name, steps) in cases() {
                if let Some(bytes) = rust_write_with(&steps, dialect, share) {
                    std::fs::write(dir.join(format!("{name}.bin")), bytes).unwrap();
                    written += 1;
                }
            }
            let out = Command::new("mvn")
                .env("MAVEN_OPTS", opens.join(" "))
                .args(["-B", "-q", "-Dstyle.color=never", "-P", line, "-f"])
                .arg(&pom)
                .args([
                    "compile",
                    "exec:java",
                    "-Dexec.mainClass=rpclab.golden.Verify",
                ])
                .arg(format!("-Dexec.args={}", dir.display()))
                .output()
                .expect("run mvn");
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            eprintln!(
                "{line} (shared strings: {share}): Rust wrote {written} files; Java says:\n{}",
                stdout.trim()
            );
            assert!(
                out.status.success()
                    && stdout.contains(&format!("{line}: {written} passed, 0 failed")),
                "{line}: Java could not read what Rust wrote ({}):\n{stdout}\n{stderr}",
                out.status
            );
        }
    }
}
