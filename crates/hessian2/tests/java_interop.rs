//! Rust writes, Java reads: every golden case the Rust encoder can write is
//! written to a directory and read back by golden/java's rpclab.golden.Verify
//! with each real Java implementation, which compares what it reads with its
//! own expected Java objects (including shared and cyclic references).
//!
//! Needs Maven and a JDK (and Maven Central, the first time). Without them
//! the test fails; set RPCLAB_SKIP_JAVA_TESTS=1 to skip it deliberately.

mod common;

use std::path::Path;
use std::process::Command;

use common::{golden_dir, manifest, IMPLS};
use hessian2::Encoder;

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

    let pom = golden_dir().join("java").join("pom.xml");
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hessian2-java-interop");
    let mut failures = Vec::new();
    for impl_name in IMPLS {
        let m = manifest(impl_name);
        let dir = root.join(impl_name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut written = 0;
        for case in m.cases.iter().filter(|c| c.rust_writes) {
            let mut enc = Encoder::new(Vec::new());
            for v in &case.values {
                enc.write_value(v)
                    .unwrap_or_else(|e| panic!("{impl_name}/{}: {e}", case.name));
            }
            std::fs::write(dir.join(format!("{}.bin", case.name)), enc.into_inner()).unwrap();
            written += 1;
        }

        let (java_impl, profile) = match impl_name {
            "caucho" => ("caucho", None),
            "dubbo-lite" => ("lite", None),
            "alibaba-lite" => ("lite", Some("-Palibaba-lite")),
            other => panic!("unknown implementation {other}"),
        };
        let mut cmd = Command::new("mvn");
        cmd.args(["-B", "-q", "-Dstyle.color=never", "-f"])
            .arg(&pom);
        if let Some(p) = profile {
            cmd.arg(p);
        }
        cmd.args([
            "compile",
            "exec:java",
            "-Dexec.mainClass=rpclab.golden.Verify",
        ])
        .arg(format!("-Dexec.args={java_impl} {}", dir.display()));
        let out = cmd.output().expect("run mvn");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!(
            "{impl_name}: Rust wrote {written} files; Java says:\n{}",
            stdout.trim()
        );
        if !out.status.success() {
            failures.push(format!(
                "{impl_name} ({}): {}\n{stdout}\n{stderr}",
                m.artifact, out.status
            ));
        } else if !stdout.contains(&format!("{written} passed, 0 failed")) {
            failures.push(format!(
                "{impl_name}: expected {written} passed, got:\n{stdout}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "Java could not read what Rust wrote:\n{}",
        failures.join("\n")
    );
}
