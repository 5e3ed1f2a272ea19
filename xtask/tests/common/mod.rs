//! What the end-to-end tests share: the repository they run in and the
//! `xtask` binary they drive, started there as a reader would.

#![allow(dead_code)]

pub mod dockerd;
pub mod lab;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root (xtask's parent folder).
pub fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// `cargo xtask <args>`, from the repository's root.
pub fn xtask_command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtask"));
    cmd.args(args).current_dir(repo_root());
    cmd
}

/// How many lab runs share the machine's engine at once: checks (scratch
/// profiles) may run side by side ([`engine_share`]), each in a network of
/// its own; two keep a 2-core machine busy without starving either.
const SLOTS: usize = 2;

/// Where every test process takes an engine: one file per slot of each
/// engine (`default` for the machine's own), so that the lab tests of every
/// test binary (run one after the other or at the same time) and of every
/// process share them.
pub fn engine_lock_path(engine: &str, slot: usize) -> PathBuf {
    std::env::temp_dir().join(format!("rpclab-engine-{engine}-{slot}.lock"))
}

/// An engine, or a slot of it, held for as long as this lives (exclusive
/// locks on [`engine_lock_path`] files, released when dropped or when the
/// process ends, however it ends).
///
/// When dropped it writes one line to the process's stderr, past
/// libtest's capture: which test held which engine, how long it waited for
/// it and how long it held it. Where a suite's time goes is then read from
/// the lab lane's log (`target/xtask-test/xtask-test-lab.log`), test by test; nothing
/// is asserted of those times.
pub struct EngineLock {
    _files: Vec<std::fs::File>,
    engine: String,
    /// `all` (the whole engine) or the slot's number.
    held: String,
    waited: std::time::Duration,
    taken: std::time::Instant,
}

impl Drop for EngineLock {
    fn drop(&mut self) {
        use std::io::Write;
        let test = std::thread::current()
            .name()
            .unwrap_or("a test")
            .to_string();
        let _ = writeln!(
            std::io::stderr(),
            "engine {} ({}): {test} waited {:.0} s for it, held it {:.0} s",
            self.engine,
            self.held,
            self.waited.as_secs_f64(),
            self.taken.elapsed().as_secs_f64()
        );
    }
}

/// A slot of the machine's engine, for a test whose runs are checks
/// (scratch profiles, which the lab lets run beside each other:
/// `Sharing::WithChecks` in xtask/src/basics/owner.rs) in networks of
/// their own (or on the host's network, on ports no other test uses), and
/// which looks only at its own run's containers ([`containers_of_run`]).
/// Waits while every slot is held, or a test waits to take the engine
/// whole ([`engine_lock_of`]). A test that must be alone on an engine
/// (a run killed and resumed, whose leftovers another run's clean-up
/// would remove) has an engine of its own instead.
///
/// It lets [`engine_share_first`] go first: the first half of the
/// every-server check, the longest, and the others (the second half among
/// them) queue on the other slot.
pub fn engine_share() -> EngineLock {
    // Tests start at once: the first taker takes its slot within this.
    std::thread::sleep(std::time::Duration::from_secs(2));
    share_of_default()
}

/// [`engine_share`] at once, for the longest check.
pub fn engine_share_first() -> EngineLock {
    share_of_default()
}

fn share_of_default() -> EngineLock {
    let asked = std::time::Instant::now();
    let waiting = open_file(&engine_waiting_path("default"));
    let files: Vec<std::fs::File> = (0..SLOTS).map(|slot| open_lock("default", slot)).collect();
    loop {
        // Nobody waits for the whole engine (the file is not held shared).
        if waiting.try_lock().is_ok() {
            let _ = waiting.unlock();
            if let Some(slot) = files.iter().position(|f| f.try_lock().is_ok()) {
                let file = files.into_iter().nth(slot).unwrap();
                return EngineLock {
                    _files: vec![file],
                    engine: "default".into(),
                    held: format!("slot {slot}"),
                    waited: asked.elapsed(),
                    taken: std::time::Instant::now(),
                };
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// A test's own engine whole (`c` and `d`: the private `dockerd`s of the
/// resume tests). Runs on different engines go on side by side: they
/// share the machine's CPUs, which the tests never time, and nothing else.
///
/// It says it waits (a shared lock on the engine's waiting file, which
/// holds back new slot takers), then takes every slot when all are free
/// at once: it never holds one slot idle while it waits for another.
pub fn engine_lock_of(engine: &str) -> EngineLock {
    let asked = std::time::Instant::now();
    let waiting = open_file(&engine_waiting_path(engine));
    waiting
        .lock_shared()
        .unwrap_or_else(|e| panic!("cannot lock {}: {e}", engine_waiting_path(engine).display()));
    let files: Vec<std::fs::File> = (0..SLOTS).map(|slot| open_lock(engine, slot)).collect();
    loop {
        let taken: Vec<bool> = files.iter().map(|f| f.try_lock().is_ok()).collect();
        if taken.iter().all(|t| *t) {
            break;
        }
        for (file, taken) in files.iter().zip(taken) {
            if taken {
                let _ = file.unlock();
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    drop(waiting);
    EngineLock {
        _files: files,
        engine: engine.to_string(),
        held: "all".into(),
        waited: asked.elapsed(),
        taken: std::time::Instant::now(),
    }
}

/// The file a taker of the whole engine holds (shared) while it waits.
fn engine_waiting_path(engine: &str) -> PathBuf {
    std::env::temp_dir().join(format!("rpclab-engine-{engine}-waiting.lock"))
}

fn open_lock(engine: &str, slot: usize) -> std::fs::File {
    open_file(&engine_lock_path(engine, slot))
}

/// A lock file, opened anew: a lock on a fresh open file description, so
/// that threads of one process exclude each other just as processes do.
fn open_file(path: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("cannot open the engine lock {}: {e}", path.display()))
}

/// The run id a snapshot's manifest names, once the manifest is written
/// (the first snapshot folder in `results`).
pub fn run_id_in(results: &Path) -> Option<String> {
    let snap = std::fs::read_dir(results)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.is_dir())?;
    let text = std::fs::read_to_string(snap.join("manifest.toml")).ok()?;
    let manifest: toml::Value = toml::from_str(&text).ok()?;
    manifest.get("run_id")?.as_str().map(str::to_owned)
}

/// The names of the containers, running or not, that run `run_id` has on
/// the machine's engine (its `io.rpclab.run` label): what a run beside
/// others checks it left nothing of, where `lab clean` would remove the
/// others' containers too.
pub fn containers_of_run(run_id: &str) -> Vec<String> {
    use bollard::query_parameters::ListContainersOptionsBuilder;
    with_docker(async |docker| {
        let filters = std::collections::HashMap::from([(
            "label".to_owned(),
            vec![format!("io.rpclab.run={run_id}")],
        )]);
        let opts = ListContainersOptionsBuilder::default()
            .all(true)
            .filters(&filters)
            .build();
        docker
            .list_containers(Some(opts))
            .await
            .expect("the engine lists containers")
            .into_iter()
            .filter_map(|c| {
                c.names?
                    .first()
                    .map(|n| n.trim_start_matches('/').to_owned())
            })
            .collect()
    })
}

/// `f` with a client of the machine's Docker engine (its API version
/// agreed), on a runtime of its own, to its end: what a test that is not
/// async asks the engine with.
pub fn with_docker<T>(f: impl AsyncFnOnce(bollard::Docker) -> T) -> T {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let docker = bollard::Docker::connect_with_local_defaults()
            .expect("a Docker engine")
            .negotiate_version()
            .await
            .expect("a Docker engine answers");
        f(docker).await
    })
}

/// The run whose snapshot is in `results` left no container behind.
pub fn assert_run_left_nothing(results: &Path) {
    let run = run_id_in(results).expect("the snapshot's manifest names its run");
    let left = containers_of_run(&run);
    assert!(left.is_empty(), "run {run} left containers: {left:?}");
}

/// `cargo xtask <args>` to its end.
pub fn xtask(args: &[&str]) -> Output {
    xtask_command(args).output().expect("xtask runs")
}

/// `cargo xtask lab build <args>`, which must succeed: the images a test's
/// run needs, built (or found) before the test takes an engine.
pub fn lab_build(args: &[&str]) {
    let build = xtask(&[&["lab", "build"], args].concat());
    assert!(
        build.status.success(),
        "lab build failed:\n{}",
        text(&build)
    );
}

/// What a command printed, both streams.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The one snapshot folder under `results`.
pub fn only_snapshot(results: &Path) -> PathBuf {
    let dirs: Vec<_> = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        dirs.len(),
        1,
        "expected one snapshot in {}",
        results.display()
    );
    dirs.into_iter().next().unwrap()
}
