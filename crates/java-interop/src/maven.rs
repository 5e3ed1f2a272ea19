//! "Rust writes, Java reads": every golden case is written with the crate's
//! Rust API to a folder, and golden/java's `rpclab.golden.Verify` reads the
//! folder with the real Java implementation, compares what it reads with
//! its own case and prints `<n> passed, <m> failed`.
//!
//! The test needs Maven and a JDK 17+. Without them it fails, so that a
//! missing JDK is not mistaken for a pass; RPCLAB_SKIP_JAVA_TESTS=1 skips
//! it deliberately.

use std::path::Path;
use std::process::Command;

const SKIP_VARIABLE: &str = "RPCLAB_SKIP_JAVA_TESTS";

/// Whether the Java test runs: false when RPCLAB_SKIP_JAVA_TESTS=1 (and
/// says so); panics, saying what is needed, when `mvn -v` does not run.
pub fn java_tests_enabled() -> bool {
    if std::env::var(SKIP_VARIABLE).as_deref() == Ok("1") {
        eprintln!("java_reads_what_rust_writes: skipped ({SKIP_VARIABLE}=1)");
        return false;
    }
    let needed = format!(
        "Maven and a JDK 17+ are needed to check that Java reads what Rust writes; \
         set {SKIP_VARIABLE}=1 to skip this test"
    );
    match Command::new("mvn").arg("-v").output() {
        Ok(out) if out.status.success() => true,
        Ok(out) => panic!(
            "`mvn -v` failed ({}): {needed}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!("cannot run `mvn` ({e}): {needed}"),
    }
}

/// Empties `dir` and writes each `(case name, bytes)` to `<dir>/<name>.bin`;
/// returns how many files it wrote.
pub fn write_cases<N: AsRef<str>>(
    dir: &Path,
    cases: impl IntoIterator<Item = (N, Vec<u8>)>,
) -> usize {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut written = 0;
    for (name, bytes) in cases {
        let path = dir.join(format!("{}.bin", name.as_ref()));
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        written += 1;
    }
    written
}

/// One run of `rpclab.golden.Verify` with Maven.
pub struct JavaVerify {
    mvn: Command,
    passed_prefix: String,
}

impl JavaVerify {
    /// `mvn compile exec:java` of Verify in the project `pom`, with
    /// `args` as its arguments (the folder, and what else the project's
    /// Verify takes).
    pub fn exec_java(pom: &Path, args: &str) -> Self {
        let mut verify = Self::compile(pom);
        verify
            .mvn
            .args(["exec:java", "-Dexec.mainClass=rpclab.golden.Verify"])
            .arg(format!("-Dexec.args={args}"));
        verify
    }

    /// `mvn compile exec:exec` of Verify over `dir`, for a project whose
    /// pom forks the JVM itself (to pass it flags) and takes the main class
    /// and the folder as the properties `golden.main` and `golden.dir`.
    pub fn exec_exec(pom: &Path, dir: &Path) -> Self {
        let mut verify = Self::compile(pom);
        verify
            .mvn
            .args(["exec:exec", "-Dgolden.main=rpclab.golden.Verify"])
            .arg(format!("-Dgolden.dir={}", dir.display()));
        verify
    }

    fn compile(pom: &Path) -> Self {
        let mut mvn = Command::new("mvn");
        mvn.args(["-B", "-q", "-Dstyle.color=never", "-f"])
            .arg(pom)
            .arg("compile");
        Self {
            mvn,
            passed_prefix: String::new(),
        }
    }

    /// Activates the Maven profile `profile` (a line of the Java library).
    pub fn profile(mut self, profile: &str) -> Self {
        self.mvn.arg(format!("-P{profile}"));
        self
    }

    /// Sets the environment variable `key` of Maven's JVM (MAVEN_OPTS for
    /// the flags that `exec:java`, which runs in that JVM, needs).
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.mvn.env(key, value);
        self
    }

    /// Requires Verify's verdict line to start with `prefix`, as
    /// `kryo4: 40 passed, 0 failed` when one project verifies several lines.
    pub fn verdict_prefix(mut self, prefix: &str) -> Self {
        self.passed_prefix = prefix.to_owned();
        self
    }

    /// Runs Maven, prints what Verify said under `label`, and returns Err
    /// with Maven's output unless it succeeded and Verify passed all
    /// `written` files.
    pub fn run(mut self, label: &str, written: usize) -> Result<(), String> {
        let out = self.mvn.output().expect("run mvn");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!(
            "{label}: Rust wrote {written} files; Java says:\n{}",
            stdout.trim()
        );
        let verdict = format!("{}{written} passed, 0 failed", self.passed_prefix);
        if out.status.success() && stdout.contains(&verdict) {
            Ok(())
        } else {
            Err(format!(
                "{label}: Java could not read what Rust wrote ({}, expected \"{verdict}\"):\n{stdout}\n{stderr}",
                out.status
            ))
        }
    }
}
