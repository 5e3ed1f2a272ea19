//! Rust writes, Java reads: every golden case is written with the Rust API
//! (the contract's Order field by field, as the client writes it) to a
//! directory and read back by golden/java's rpclab.golden.Verify with
//! Dubbo 2.5.10's own GenericObjectInput, which compares what it reads with
//! the Java-side case and requires every byte to be consumed.
//!
//! Needs Maven and a JDK 17+. Without them the test fails; set
//! RPCLAB_SKIP_JAVA_TESTS=1 to skip it deliberately.

mod common;

use std::path::Path;
use std::process::Command;

use common::{case_names, golden_dir, rust_write};

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

    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dubbo-serialization-java-interop");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut written = 0;
    for name in case_names() {
        std::fs::write(dir.join(format!("{name}.bin")), rust_write(name)).unwrap();
        written += 1;
    }

    let pom = golden_dir().join("java").join("pom.xml");
    let out = Command::new("mvn")
        .args(["-B", "-q", "-Dstyle.color=never", "-f"])
        .arg(&pom)
        .args(["compile", "exec:exec", "-Dgolden.main=rpclab.golden.Verify"])
        .arg(format!("-Dgolden.dir={}", dir.display()))
        .output()
        .expect("run mvn");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("Rust wrote {written} files; Java says:\n{}", stdout.trim());
    assert!(
        out.status.success() && stdout.contains(&format!("{written} passed, 0 failed")),
        "Java could not read what Rust wrote ({}):\n{stdout}\n{stderr}",
        out.status
    );
}
