//! `cargo xtask fuzz`: every cargo-fuzz target of the repository, in turn,
//! from a seed corpus of golden vectors.
//!
//! The targets are found, not listed: each `crates/*/fuzz/Cargo.toml` and
//! `client/fuzz/Cargo.toml` is a cargo-fuzz workspace of its own, and each
//! of its `[[bin]]` entries is a target, named `<folder>/<bin>` (the folder
//! holding `fuzz/`: `javaser/decode`, `client/dubbo_response`).
//!
//! Seeds are golden vectors, never copies kept by hand: a `seeds.toml`
//! beside each fuzz `Cargo.toml` names, per target, glob patterns of golden
//! files (relative to the fuzz folder), and this module copies the files
//! they match, byte for byte, into `target/fuzz-seeds/<folder>/<bin>/` before
//! every run (`--seeds-only` does just that, for running cargo-fuzz by
//! hand). Nothing is checked in but the patterns, and the tests below
//! check that every target has a pattern list, that every pattern still
//! matches golden files and that the seed folder written is exactly those
//! files.
//!
//! A run is `cargo +nightly fuzz run <bin> <corpus> <seeds> -- ...` with a
//! working corpus under `target/fuzz-corpus/<folder>/<bin>/`, which libFuzzer
//! grows and which later runs start from (with the seeds), crash artifacts
//! under `target/fuzz-artifacts/`, and libFuzzer's whole output kept in
//! `target/fuzz-logs/<folder>-<bin>.log`. The summary of each target
//! (executions, coverage edges and features, corpus size, crashes) is read
//! from that output: the last status line (`#N DONE cov: X ft: Y corp: Z/..`)
//! and the `-print_final_stats=1` lines (`stat::number_of_executed_units`).

use anyhow::{bail, Context, Result};
use clap::Args;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tabled::builder::Builder;
use tabled::settings::Style;

/// Longest input libFuzzer makes, and how much of a longer seed it reads.
pub const DEFAULT_MAX_LEN: usize = 8192;

/// Seconds one input may take before libFuzzer calls it a hang (a crash).
const INPUT_TIMEOUT_S: u64 = 10;

const INSTALL_HELP: &str = "cargo xtask fuzz needs the nightly toolchain and cargo-fuzz: \
    `rustup toolchain install nightly` and `cargo install cargo-fuzz`";

/// `cargo xtask fuzz`.
#[derive(Args, Debug)]
pub struct FuzzArgs {
    /// Minutes per target (the default: 1).
    #[arg(long, conflicts_with = "seconds")]
    pub minutes: Option<u64>,
    /// Seconds per target.
    #[arg(long)]
    pub seconds: Option<u64>,
    /// Stop a target after this many executions (libFuzzer's `-runs`), or
    /// at its time limit, whichever comes first.
    #[arg(long)]
    pub runs: Option<u64>,
    /// Targets to run: `<folder>/<bin>` (`javaser/decode`), a folder
    /// (`client`) or a bin name (`decode`: every crate's); comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Longest input libFuzzer generates (longer seeds are read up to it).
    #[arg(long, default_value_t = DEFAULT_MAX_LEN)]
    pub max_len: usize,
    /// Only write the seed corpora (target/fuzz-seeds/) and list them.
    #[arg(long)]
    pub seeds_only: bool,
    /// cargo-fuzz's sanitizer. `none` by default: the fuzzed decoders are
    /// safe Rust (the codec crates `forbid(unsafe_code)`), where
    /// AddressSanitizer can find nothing a panic would not, and it costs
    /// two to three times the runs. `address` for a run that also checks
    /// the unsafe code of dependencies.
    #[arg(long, value_enum, default_value_t = Sanitizer::None)]
    pub sanitizer: Sanitizer,
}

/// The sanitizer a target is built with (cargo-fuzz's `--sanitizer`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sanitizer {
    /// No sanitizer: libFuzzer's coverage and Rust's own checks only.
    None,
    /// AddressSanitizer.
    Address,
}

impl Sanitizer {
    fn flag(self) -> &'static str {
        match self {
            Sanitizer::None => "none",
            Sanitizer::Address => "address",
        }
    }
}

/// One cargo-fuzz target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The folder holding `fuzz/` (`javaser`, `ice-protocol`, `client`).
    pub folder: String,
    /// The cargo-fuzz workspace (`.../fuzz`).
    pub fuzz_dir: PathBuf,
    /// The `[[bin]]` name.
    pub bin: String,
}

impl Target {
    /// `<folder>/<bin>`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.folder, self.bin)
    }

    fn matches(&self, selector: &str) -> bool {
        selector == self.id() || selector == self.folder || selector == self.bin
    }
}

#[derive(Deserialize)]
struct FuzzManifest {
    #[serde(default)]
    bin: Vec<FuzzBin>,
}

#[derive(Deserialize)]
struct FuzzBin {
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedManifest {
    targets: BTreeMap<String, Vec<String>>,
}

/// The cargo-fuzz workspaces: `crates/*/fuzz` and `client/fuzz`.
pub fn fuzz_dirs(root: &Path) -> Result<Vec<PathBuf>> {
    let crates = root.join("crates");
    let mut dirs = Vec::new();
    for entry in
        fs::read_dir(&crates).with_context(|| format!("cannot list {}", crates.display()))?
    {
        let dir = entry?.path().join("fuzz");
        if dir.join("Cargo.toml").is_file() {
            dirs.push(dir);
        }
    }
    dirs.sort();
    let client = root.join("client").join("fuzz");
    if client.join("Cargo.toml").is_file() {
        dirs.push(client);
    }
    Ok(dirs)
}

/// Every target, from the `[[bin]]` entries of every fuzz workspace.
pub fn discover(root: &Path) -> Result<Vec<Target>> {
    let mut targets = Vec::new();
    for dir in fuzz_dirs(root)? {
        let path = dir.join("Cargo.toml");
        let text =
            fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let manifest: FuzzManifest = toml::from_str(&text)
            .with_context(|| format!("{} is not a Cargo manifest", path.display()))?;
        let folder = dir
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .with_context(|| format!("{} has no parent folder", dir.display()))?;
        for bin in manifest.bin {
            targets.push(Target {
                folder: folder.clone(),
                fuzz_dir: dir.clone(),
                bin: bin.name,
            });
        }
    }
    Ok(targets)
}

fn seed_manifest(fuzz_dir: &Path) -> Result<SeedManifest> {
    let path = fuzz_dir.join("seeds.toml");
    let text = fs::read_to_string(&path).with_context(|| {
        format!(
            "cannot read {} (every fuzz folder names its targets' golden seeds there)",
            path.display()
        )
    })?;
    toml::from_str(&text).with_context(|| format!("{} is malformed", path.display()))
}

/// One seed: the golden file it is a copy of, and its name in the seed folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seed {
    pub name: String,
    pub source: PathBuf,
}

/// The seeds of `target`: every file its patterns match, in order, without
/// repeating a file's bytes. Fails when the target has no entry or a
/// pattern matches nothing (a golden folder moved or renamed).
pub fn seeds(target: &Target) -> Result<Vec<Seed>> {
    let manifest = seed_manifest(&target.fuzz_dir)?;
    let patterns = manifest.targets.get(&target.bin).with_context(|| {
        format!(
            "{} has no seed patterns for target `{}`",
            target.fuzz_dir.join("seeds.toml").display(),
            target.bin
        )
    })?;
    let mut out: Vec<Seed> = Vec::new();
    let mut seen: HashMap<Vec<u8>, PathBuf> = HashMap::new();
    let mut names: HashMap<String, PathBuf> = HashMap::new();
    for pattern in patterns {
        let (base, matched) = glob(&target.fuzz_dir, pattern)?;
        if matched.is_empty() {
            bail!(
                "seed pattern `{pattern}` of {} matches no file",
                target.id()
            );
        }
        for path in matched {
            let bytes =
                fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
            if seen.insert(bytes, path.clone()).is_some() {
                continue;
            }
            let rel = path.strip_prefix(&base).unwrap_or(&path);
            let name = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("__");
            if let Some(other) = names.insert(name.clone(), path.clone()) {
                bail!(
                    "{}: seeds {} and {} would both be named {name}",
                    target.id(),
                    other.display(),
                    path.display()
                );
            }
            out.push(Seed { name, source: path });
        }
    }
    Ok(out)
}

/// Files matching `pattern` relative to `dir` (`/`-separated segments, `*`
/// within a segment), sorted, and the folder of the pattern's literal
/// leading segments (seed names are the rest of the path).
fn glob(dir: &Path, pattern: &str) -> Result<(PathBuf, Vec<PathBuf>)> {
    let segments: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    if segments.is_empty() || segments.iter().any(|s| s.contains("**")) {
        bail!("seed pattern `{pattern}`: use `*` within segments of a relative path");
    }
    let literal = segments
        .iter()
        .take_while(|s| !s.contains('*'))
        .count()
        .min(segments.len() - 1);
    let mut base = dir.to_path_buf();
    for s in &segments[..literal] {
        base.push(s);
    }
    let mut current = vec![base.clone()];
    for (i, segment) in segments[literal..].iter().enumerate() {
        let last = literal + i == segments.len() - 1;
        let mut next = Vec::new();
        for d in &current {
            let Ok(entries) = fs::read_dir(d) else {
                continue;
            };
            for entry in entries {
                let entry = entry?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let kind = entry.file_type()?;
                let wanted = if last { kind.is_file() } else { kind.is_dir() };
                if wanted && wildcard(segment, &name) {
                    next.push(entry.path());
                }
            }
        }
        next.sort();
        current = next;
    }
    Ok((base, current))
}

/// `*` matches any run of characters (none included); the rest literally.
fn wildcard(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if name.len() < first.len() + last.len() || !name.starts_with(first) || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Writes `seeds` into `dir`, which then holds exactly those files.
pub fn write_seeds(dir: &Path, seeds: &[Seed]) -> Result<()> {
    if dir.exists() {
        fs::remove_dir_all(dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for s in seeds {
        fs::copy(&s.source, dir.join(&s.name)).with_context(|| {
            format!("cannot copy {} into {}", s.source.display(), dir.display())
        })?;
    }
    Ok(())
}

/// What libFuzzer said about one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Inputs executed.
    pub runs: Option<u64>,
    /// Coverage: edges (`cov:`) and features (`ft:`) of the last status line.
    pub cov: Option<u64>,
    pub ft: Option<u64>,
    /// Inputs in the corpus (`corp:` of the last status line).
    pub corpus: Option<u64>,
    pub exec_per_sec: Option<u64>,
    /// Inputs added during the run (`stat::new_units_added`).
    pub new_units: Option<u64>,
    /// Whether the last status line is `DONE` (the time ran out).
    pub done: bool,
    /// Crash, hang or out-of-memory inputs written.
    pub artifacts: Vec<String>,
    /// The first line that says what went wrong, if anything did.
    pub failure: Option<String>,
}

fn number_after(line: &str, key: &str) -> Option<u64> {
    let at = line.find(key)? + key.len();
    let digits: String = line[at..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Reads libFuzzer's output (stderr, with cargo's lines mixed in).
pub fn parse_output(text: &str) -> Stats {
    let mut s = Stats::default();
    let mut status_runs = None;
    for line in text.lines() {
        let line = line.trim_end();
        if let Some(rest) = line.strip_prefix('#') {
            let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let after = &rest[n.len()..];
            if let (Ok(n), true) = (n.parse::<u64>(), after.starts_with(char::is_whitespace)) {
                status_runs = Some(n);
                s.done = after.trim_start().starts_with("DONE");
                if let Some(v) = number_after(after, "cov:") {
                    s.cov = Some(v);
                }
                if let Some(v) = number_after(after, "ft:") {
                    s.ft = Some(v);
                }
                if let Some(v) = number_after(after, "corp:") {
                    s.corpus = Some(v);
                }
                if let Some(v) = number_after(after, "exec/s:") {
                    s.exec_per_sec = Some(v);
                }
            }
        } else if let Some(v) = number_after(line, "stat::number_of_executed_units:") {
            s.runs = Some(v);
        } else if let Some(v) = number_after(line, "stat::average_exec_per_sec:") {
            s.exec_per_sec = Some(v);
        } else if let Some(v) = number_after(line, "stat::new_units_added:") {
            s.new_units = Some(v);
        } else if let Some(at) = line.find("Test unit written to ") {
            s.artifacts
                .push(line[at + "Test unit written to ".len()..].trim().to_owned());
        } else if s.failure.is_none()
            && (line.contains("ERROR: libFuzzer:")
                || line.contains("ERROR: AddressSanitizer:")
                || line.contains("ERROR: LeakSanitizer:")
                || line.contains("panicked at"))
        {
            s.failure = Some(
                line.trim_start_matches(|c: char| c == '=' || c.is_ascii_digit())
                    .trim()
                    .to_owned(),
            );
        }
    }
    if s.runs.is_none() {
        s.runs = status_runs;
    }
    s
}

/// The outcome of one target's run.
#[derive(Debug)]
pub struct Outcome {
    pub target: Target,
    pub seeds: usize,
    /// Wall time the run took (a `--runs` limit may end it early).
    pub seconds: u64,
    pub stats: Stats,
    pub log: PathBuf,
    /// Set when cargo-fuzz failed without libFuzzer reporting a crash
    /// (a build error, a bad argument).
    pub error: Option<String>,
}

impl Outcome {
    fn crashes(&self) -> usize {
        self.stats.artifacts.len()
    }
}

fn check_tools() -> Result<()> {
    let ok = |args: &[&str]| {
        Command::new("cargo")
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    if !ok(&["+nightly", "--version"]) {
        bail!("no nightly toolchain: {INSTALL_HELP}");
    }
    if !ok(&["+nightly", "fuzz", "--version"]) {
        bail!("cargo-fuzz is not installed: {INSTALL_HELP}");
    }
    Ok(())
}

fn work_dir(root: &Path, kind: &str, t: &Target) -> PathBuf {
    root.join("target").join(kind).join(&t.folder).join(&t.bin)
}

fn run_target(
    root: &Path,
    t: &Target,
    seconds: u64,
    runs: Option<u64>,
    max_len: usize,
    sanitizer: Sanitizer,
) -> Result<Outcome> {
    let seeds = seeds(t)?;
    let seed_dir = work_dir(root, "fuzz-seeds", t);
    write_seeds(&seed_dir, &seeds)?;
    let corpus = work_dir(root, "fuzz-corpus", t);
    let artifacts = work_dir(root, "fuzz-artifacts", t);
    let logs = root.join("target").join("fuzz-logs");
    for d in [&corpus, &artifacts, &logs] {
        fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    let log = logs.join(format!("{}-{}.log", t.folder, t.bin));
    let out = fs::File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
    let err = out.try_clone()?;
    let mut prefix = artifacts.display().to_string();
    prefix.push('/');
    eprintln!(
        "fuzz {}: {} seed(s), {seconds} s (log {})",
        t.id(),
        seeds.len(),
        log.display()
    );
    let started = std::time::Instant::now();
    let status = Command::new("cargo")
        .current_dir(t.fuzz_dir.parent().unwrap_or(&t.fuzz_dir))
        .arg("+nightly")
        .arg("fuzz")
        .arg("run")
        .arg("--sanitizer")
        .arg(sanitizer.flag())
        .arg("--fuzz-dir")
        .arg(&t.fuzz_dir)
        .arg("--target-dir")
        .arg(root.join("target").join("fuzz-build"))
        .arg(&t.bin)
        .arg(&corpus)
        .arg(&seed_dir)
        .arg("--")
        .arg(format!("-max_total_time={seconds}"))
        .args(runs.map(|n| format!("-runs={n}")))
        .arg(format!("-max_len={max_len}"))
        .arg(format!("-timeout={INPUT_TIMEOUT_S}"))
        .arg("-print_final_stats=1")
        .arg(format!("-artifact_prefix={prefix}"))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .context("cannot run cargo +nightly fuzz")?;
    // Wall time of the whole `cargo fuzz run`, its build included.
    let elapsed_s = started.elapsed().as_secs();
    let text =
        fs::read_to_string(&log).with_context(|| format!("cannot read {}", log.display()))?;
    let stats = parse_output(&text);
    let error = (!status.success() && stats.artifacts.is_empty()).then(|| {
        let tail: Vec<&str> = text.lines().rev().take(5).collect();
        format!(
            "cargo fuzz run exited with {status}: {}",
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        )
    });
    Ok(Outcome {
        target: t.clone(),
        seeds: seeds.len(),
        seconds: elapsed_s,
        stats,
        log,
        error,
    })
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "?".to_owned(), |v| v.to_string())
}

/// The summary table of `outcomes`.
pub fn table(outcomes: &[Outcome]) -> String {
    let mut b = Builder::default();
    b.push_record([
        "target", "seconds", "seeds", "runs", "exec/s", "cov", "ft", "corpus", "new", "crashes",
    ]);
    for o in outcomes {
        b.push_record([
            o.target.id(),
            o.seconds.to_string(),
            o.seeds.to_string(),
            opt(o.stats.runs),
            opt(o.stats.exec_per_sec),
            opt(o.stats.cov),
            opt(o.stats.ft),
            opt(o.stats.corpus),
            opt(o.stats.new_units),
            o.crashes().to_string(),
        ]);
    }
    let mut t = b.build();
    t.with(Style::markdown());
    t.to_string()
}

/// Selects targets by `--only`; all of them without it.
fn select(all: Vec<Target>, only: &[String]) -> Result<Vec<Target>> {
    if only.is_empty() {
        return Ok(all);
    }
    for sel in only {
        if !all.iter().any(|t| t.matches(sel)) {
            bail!(
                "no fuzz target `{sel}`; targets: {}",
                all.iter().map(Target::id).collect::<Vec<_>>().join(", ")
            );
        }
    }
    Ok(all
        .into_iter()
        .filter(|t| only.iter().any(|s| t.matches(s)))
        .collect())
}

/// `cargo xtask fuzz`.
pub fn run(root: &Path, args: FuzzArgs) -> Result<()> {
    let targets = select(discover(root)?, &args.only)?;
    if args.seeds_only {
        for t in &targets {
            let seeds = seeds(t)?;
            let dir = work_dir(root, "fuzz-seeds", t);
            write_seeds(&dir, &seeds)?;
            println!(
                "{:<28} {:>4} seed(s) in {}",
                t.id(),
                seeds.len(),
                dir.display()
            );
        }
        return Ok(());
    }
    check_tools()?;
    let seconds = match (args.minutes, args.seconds) {
        (_, Some(s)) => s,
        (Some(m), None) => m * 60,
        (None, None) => 60,
    };
    if seconds == 0 {
        bail!("a run needs at least one second per target");
    }
    let mut outcomes = Vec::new();
    for t in &targets {
        let o = run_target(root, t, seconds, args.runs, args.max_len, args.sanitizer)?;
        println!("{}\n", table(std::slice::from_ref(&o)));
        outcomes.push(o);
    }
    if outcomes.len() > 1 {
        println!("{}", table(&outcomes));
    }
    let mut problems = Vec::new();
    for o in &outcomes {
        if !o.stats.artifacts.is_empty() {
            problems.push(format!(
                "{} crashed ({}): {} (log {})",
                o.target.id(),
                o.stats.failure.as_deref().unwrap_or("see the log"),
                o.stats.artifacts.join(", "),
                o.log.display()
            ));
        } else if let Some(e) = &o.error {
            problems.push(format!(
                "{} did not run: {e} (log {})",
                o.target.id(),
                o.log.display()
            ));
        }
    }
    if !problems.is_empty() {
        bail!(
            "{}\nreproduce a crash with `cargo +nightly fuzz run --fuzz-dir <dir> <target> <artifact>`",
            problems.join("\n")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::basics::host::repo_root as root;

    #[test]
    fn targets_come_from_the_fuzz_manifests() {
        let ids: Vec<String> = discover(&root()).unwrap().iter().map(Target::id).collect();
        for id in [
            "hessian2/decode",
            "javaser/decode",
            "jsonb/decode",
            "kryo/decode",
            "jrmp/response",
            "ice-protocol/decode",
            "client/ice_reply",
            "client/dubbo_response",
            "client/bolt_response",
        ] {
            assert!(ids.contains(&id.to_owned()), "{id} not among {ids:?}");
        }
    }

    #[test]
    fn every_target_has_golden_seeds_and_no_stale_entry() {
        let targets = discover(&root()).unwrap();
        for t in &targets {
            let s = seeds(t).unwrap_or_else(|e| panic!("{}: {e:#}", t.id()));
            assert!(!s.is_empty(), "{} has no seed", t.id());
        }
        for dir in fuzz_dirs(&root()).unwrap() {
            for name in seed_manifest(&dir).unwrap().targets.keys() {
                assert!(
                    targets.iter().any(|t| t.fuzz_dir == dir && &t.bin == name),
                    "{}/seeds.toml names `{name}`, which is no [[bin]] of its Cargo.toml",
                    dir.display()
                );
            }
        }
    }

    #[test]
    fn seed_folders_are_the_golden_vectors_byte_for_byte() {
        let tmp = tempfile::tempdir().unwrap();
        for t in discover(&root()).unwrap() {
            let seeds = seeds(&t).unwrap();
            let dir = tmp.path().join(&t.folder).join(&t.bin);
            // Written twice: the second write leaves no file of the first
            // that the seeds do not name.
            write_seeds(&dir, &seeds).unwrap();
            fs::write(dir.join("stale.bin"), b"not a golden vector").unwrap();
            write_seeds(&dir, &seeds).unwrap();
            let mut names: Vec<String> = fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            let mut expected: Vec<String> = seeds.iter().map(|s| s.name.clone()).collect();
            expected.sort();
            assert_eq!(names, expected, "{}", t.id());
            for s in &seeds {
                let golden = fs::read(&s.source).unwrap();
                assert_eq!(
                    fs::read(dir.join(&s.name)).unwrap(),
                    golden,
                    "{}: {}",
                    t.id(),
                    s.name
                );
                // A golden vector of the repository, not a file elsewhere.
                assert!(s.source.canonicalize().unwrap().starts_with(root()));
            }
        }
    }

    #[test]
    fn seeds_skip_repeated_bytes_and_name_by_path_below_the_pattern() {
        let tmp = tempfile::tempdir().unwrap();
        let fuzz = tmp.path().join("fuzz");
        let vectors = tmp.path().join("golden").join("vectors");
        fs::create_dir_all(vectors.join("a")).unwrap();
        fs::create_dir_all(vectors.join("b")).unwrap();
        fs::create_dir_all(&fuzz).unwrap();
        fs::write(vectors.join("a").join("x.bin"), b"1").unwrap();
        fs::write(vectors.join("b").join("x.bin"), b"1").unwrap();
        fs::write(vectors.join("b").join("y.bin"), b"2").unwrap();
        fs::write(vectors.join("b").join("y.txt"), b"3").unwrap();
        fs::write(
            fuzz.join("seeds.toml"),
            "[targets]\ndecode = [\"../golden/vectors/*/*.bin\"]\nempty = [\"../golden/none/*.bin\"]\n",
        )
        .unwrap();
        let t = |bin: &str| Target {
            folder: "demo".into(),
            fuzz_dir: fuzz.clone(),
            bin: bin.into(),
        };
        let names: Vec<String> = seeds(&t("decode"))
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["a__x.bin", "b__y.bin"]);
        let e = seeds(&t("empty")).unwrap_err().to_string();
        assert!(e.contains("matches no file"), "{e}");
        let e = seeds(&t("other")).unwrap_err().to_string();
        assert!(e.contains("no seed patterns"), "{e}");
    }

    #[test]
    fn wildcards_match_within_a_segment() {
        assert!(wildcard("*.bin", "a.bin"));
        assert!(wildcard("*-s2c.bin", "jdk-order-c0-s2c.bin"));
        assert!(!wildcard("*-s2c.bin", "jdk-order-c0-c2s.bin"));
        assert!(wildcard("*.reply.bin", "hello.reply.bin"));
        assert!(!wildcard("*.reply.bin", "hello.call.bin"));
        assert!(wildcard("a*b*c", "abc"));
        assert!(wildcard("a*b*c", "axxbyyc"));
        assert!(!wildcard("a*b*c", "acb"));
        assert!(!wildcard("ab*ba", "aba"));
        assert!(wildcard("*", ""));
        assert!(wildcard("name", "name"));
        assert!(!wildcard("name", "names"));
    }

    #[test]
    fn selection_by_id_folder_or_bin() {
        let all = discover(&root()).unwrap();
        let ids = |sel: &[&str]| -> Vec<String> {
            let sel: Vec<String> = sel.iter().map(|s| s.to_string()).collect();
            select(all.clone(), &sel)
                .unwrap()
                .iter()
                .map(Target::id)
                .collect()
        };
        assert_eq!(ids(&["javaser/decode"]), ["javaser/decode"]);
        assert!(ids(&["decode"]).iter().all(|id| id.ends_with("/decode")));
        assert!(ids(&["decode"]).len() >= 4);
        assert!(ids(&["client"]).iter().all(|id| id.starts_with("client/")));
        assert_eq!(ids(&[]).len(), all.len());
        assert!(select(all.clone(), &["nope".into()]).is_err());
    }

    const DONE: &str = "\
   Compiling javaser-fuzz v0.0.0 (/r/crates/javaser/fuzz)
    Finished `release` profile [optimized + debuginfo] target(s) in 5.31s
INFO: Seed: 1234
INFO: Loaded 1 modules   (5210 inline 8-bit counters): 5210 [0x1, 0x2),
INFO:       36 files found in /r/target/fuzz-seeds/javaser/decode
#2\tINITED cov: 12 ft: 13 corp: 1/1b exec/s: 0 rss: 30Mb
#37\tINITED cov: 402 ft: 900 corp: 30/3100b exec/s: 0 rss: 31Mb
#1048576\tpulse  cov: 611 ft: 2301 corp: 410/40Kb lim: 8192 exec/s: 349525 rss: 400Mb
#12500001\tDONE   cov: 644 ft: 2472 corp: 452/44Kb lim: 8192 exec/s: 208333 rss: 420Mb
Done 12500001 runs in 61 second(s)
stat::number_of_executed_units: 12500003
stat::average_exec_per_sec:     204918
stat::new_units_added:          431
stat::slowest_unit_time_sec:    0
stat::peak_rss_mb:              420
";

    #[test]
    fn a_finished_run_reads_as_its_final_stats() {
        let s = parse_output(DONE);
        assert_eq!(s.runs, Some(12_500_003));
        assert_eq!((s.cov, s.ft, s.corpus), (Some(644), Some(2472), Some(452)));
        assert_eq!(s.exec_per_sec, Some(204_918));
        assert_eq!(s.new_units, Some(431));
        assert!(s.done);
        assert!(s.artifacts.is_empty() && s.failure.is_none());
    }

    #[test]
    fn a_crash_reads_as_its_artifact_and_reason() {
        let text = "\
#5000\tNEW    cov: 300 ft: 700 corp: 90/9Kb lim: 4096 exec/s: 5000 rss: 60Mb L: 20/400 MS: 1 ChangeBit-
thread '<unnamed>' panicked at fuzz_targets/decode.rs:40:21:
the normal form is not stable
==4242== ERROR: libFuzzer: deadly signal
MS: 1 ChangeBit-; base unit: 0123
artifact_prefix='/r/target/fuzz-artifacts/javaser/decode/'; Test unit written to /r/target/fuzz-artifacts/javaser/decode/crash-abcdef
Base64: rO0ABQ==
stat::number_of_executed_units: 5001
";
        let s = parse_output(text);
        assert_eq!(s.runs, Some(5001));
        assert_eq!((s.cov, s.corpus), (Some(300), Some(90)));
        assert!(!s.done);
        assert_eq!(
            s.artifacts,
            ["/r/target/fuzz-artifacts/javaser/decode/crash-abcdef"]
        );
        assert_eq!(
            s.failure.as_deref(),
            Some("thread '<unnamed>' panicked at fuzz_targets/decode.rs:40:21:")
        );
    }

    #[test]
    fn runs_fall_back_to_the_last_status_line() {
        let s = parse_output("#77\tpulse  cov: 5 ft: 6 corp: 3/3b exec/s: 1 rss: 1Mb\n");
        assert_eq!(
            (s.runs, s.cov, s.ft, s.corpus),
            (Some(77), Some(5), Some(6), Some(3))
        );
        assert_eq!(
            parse_output("error: no such command: `fuzz`\n"),
            Stats::default()
        );
    }
}
