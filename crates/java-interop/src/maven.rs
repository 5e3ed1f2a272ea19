//! "Rust writes, Java reads": every golden case is written with the crate's
//! Rust API to a folder, and golden/java's `rpclab.golden.Verify` reads the
//! folder with the real Java implementation, compares what it reads with
//! its own case and prints `<n> passed, <m> failed`.
//!
//! The test needs Maven and a JDK 17+. Without them it fails, so that a
//! missing JDK is not mistaken for a pass; RPCLAB_SKIP_JAVA_TESTS=1 skips
//! it deliberately.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::golden::Golden;

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

/// `<n> passed, 0 failed`: what the codec crates' Verify prints when it
/// read all `written` files.
pub fn all_passed(written: usize) -> String {
    format!("{written} passed, 0 failed")
}

/// The whole "Rust writes, Java reads" test of a golden project that reads
/// one folder: unless the Java tests are off ([`java_tests_enabled`]),
/// writes `cases` to `<target_tmpdir>/<label>-java-interop`, runs the
/// Verify that `verify` (e.g. [`JavaVerify::verify`] or
/// [`JavaVerify::exec_exec`]) makes of the project's pom and that folder,
/// and panics unless Java read every file. `target_tmpdir` is the test's
/// `env!("CARGO_TARGET_TMPDIR")`.
pub fn check_java_reads<N: AsRef<str>>(
    label: &str,
    target_tmpdir: &str,
    cases: impl IntoIterator<Item = (N, Vec<u8>)>,
    golden: &Golden,
    verify: impl FnOnce(&Path, &Path) -> JavaVerify,
) {
    let pom = golden.pom();
    if let Err(e) = java_reads(label, target_tmpdir, cases, |dir| verify(&pom, dir)) {
        panic!("{e}");
    }
}

/// [`check_java_reads`] that returns what went wrong instead of panicking
/// (and `Ok` when the Java tests are off), for a test that runs several
/// Verify and reports every failure; `verify` makes the Verify of the
/// folder.
pub fn java_reads<N: AsRef<str>>(
    label: &str,
    target_tmpdir: &str,
    cases: impl IntoIterator<Item = (N, Vec<u8>)>,
    verify: impl FnOnce(&Path) -> JavaVerify,
) -> Result<(), String> {
    if !java_tests_enabled() {
        return Ok(());
    }
    let dir = Path::new(target_tmpdir).join(format!("{label}-java-interop"));
    let written = write_cases(&dir, cases);
    verify(&dir).run(label, &all_passed(written))
}

/// One run of a golden project's Verify with Maven.
pub struct JavaVerify {
    pom: PathBuf,
    profile: Option<String>,
    clean: bool,
    env: Vec<(String, String)>,
    exec: Vec<String>,
}

impl JavaVerify {
    /// `mvn compile exec:java` of `main_class` in the project `pom`, with
    /// `args` as its arguments (the folder, and what else it takes).
    pub fn exec_java(pom: &Path, main_class: &str, args: &str) -> Self {
        Self::new(
            pom,
            vec![
                "exec:java".into(),
                format!("-Dexec.mainClass={main_class}"),
                format!("-Dexec.args={args}"),
            ],
        )
    }

    /// `mvn compile exec:java` of the golden project's `rpclab.golden.Verify`
    /// over `dir` alone, as most codec crates' projects take it.
    pub fn verify(pom: &Path, dir: &Path) -> Self {
        Self::exec_java(pom, "rpclab.golden.Verify", &dir.display().to_string())
    }

    /// `mvn compile exec:exec` of `rpclab.golden.Verify` over `dir`, for a
    /// project whose pom forks the JVM itself (to pass it flags) and takes
    /// the main class and the folder as the properties `golden.main` and
    /// `golden.dir`.
    pub fn exec_exec(pom: &Path, dir: &Path) -> Self {
        Self::new(
            pom,
            vec![
                "exec:exec".into(),
                "-Dgolden.main=rpclab.golden.Verify".into(),
                format!("-Dgolden.dir={}", dir.display()),
            ],
        )
    }

    fn new(pom: &Path, exec: Vec<String>) -> Self {
        Self {
            pom: pom.to_owned(),
            profile: None,
            clean: false,
            env: Vec::new(),
            exec,
        }
    }

    /// Activates the Maven profile `profile` (a line of the Java library).
    pub fn profile(mut self, profile: &str) -> Self {
        self.profile = Some(profile.to_owned());
        self
    }

    /// Cleans the build first (when profiles compile different sources
    /// into one build folder).
    pub fn clean(mut self) -> Self {
        self.clean = true;
        self
    }

    /// Sets the environment variable `key` of Maven's JVM (MAVEN_OPTS for
    /// the flags that `exec:java`, which runs in that JVM, needs).
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Runs Maven, prints what Verify said under `label`, and returns Err
    /// with Maven's output unless it succeeded and Verify printed
    /// `verdict`.
    pub fn run(self, label: &str, verdict: &str) -> Result<(), String> {
        let mut mvn = Command::new("mvn");
        mvn.args(["-B", "-q", "-Dstyle.color=never", "-f"])
            .arg(&self.pom)
            .args(self.profile.map(|p| format!("-P{p}")))
            .args(self.clean.then_some("clean"))
            .arg("compile")
            .args(&self.exec)
            .envs(self.env);
        let out = mvn.output().expect("run mvn");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!("{label}: Java says:\n{}", stdout.trim());
        if out.status.success() && stdout.contains(verdict) {
            Ok(())
        } else {
            Err(format!(
                "{label}: Java could not read what Rust wrote ({}, expected \"{verdict}\"):\n{stdout}\n{stderr}",
                out.status
            ))
        }
    }
}
