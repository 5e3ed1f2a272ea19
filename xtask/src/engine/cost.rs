//! What a cell costs the server: CPU time and peak memory of its container
//! over the client's measurement window.
//!
//! A sampler reads the container's counters every [`SAMPLE_EVERY`] while
//! the cell runs; the client reports its window in wall-clock time (the
//! containers share the host's clock), and the CPU time at each edge is
//! interpolated between the two samples around it. Reading on a schedule
//! rather than when the client's phase lines arrive keeps short windows
//! exact: log lines can reach the orchestrator late, and together.
//!
//! Counters come from the container's cgroup files when the host exposes
//! them (cgroup v1 or v2, cgroupfs or systemd driver): a file read costs
//! microseconds and no CPU on the measured cores. Otherwise (a remote
//! engine, say) they come from the engine's stats API; on a cluster, from
//! the container's own cgroup files read inside it by exec (`cpu.stat`'s
//! `usage_usec` and `memory.peak`, or cgroup v1's `cpuacct.usage` and
//! `memory.max_usage_in_bytes`), once every [`EXEC_EVERY`] readings: an
//! exec is a process started in the server's container, whose CPU counts
//! as the server's, and costs the node tens of milliseconds.

use crate::engine::containers::Containers;
use crate::engine::docker::Engine;
use crate::engine::run_engine::RunEngine;
use anyhow::{Context, Result};
use bollard::query_parameters::StatsOptionsBuilder;
use futures_util::StreamExt;
use rpclab_model::result::Cost;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::Notify;

/// How often a running cell's server counters are read.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(100);

/// A reading of one container's counters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Wall clock, seconds since the Unix epoch.
    pub at: f64,
    pub cpu_ns: u64,
    pub memory_peak: u64,
    /// Context switches of every thread of the container's processes,
    /// when they are visible here.
    pub context_switches: Option<u64>,
    /// CPU time of the JIT compiler threads of its processes, read with
    /// the context switches ([`ThreadCounters`]).
    pub compiler_cpu_ns: Option<u64>,
}

pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Where a container's counters live on this host, if they are visible.
#[derive(Clone, Debug)]
enum Source {
    V1 {
        cpu: PathBuf,
        memory: PathBuf,
        procs: PathBuf,
    },
    V2 {
        dir: PathBuf,
    },
    Api,
    /// Read inside the container, by exec ([`EXEC_SAMPLE`]).
    Exec,
}

/// Every how many of a sampler's ticks a counter read by exec is read.
pub const EXEC_EVERY: u32 = 10;

/// The container's own counters, read inside it: `cpu_ns N` and `memory N`
/// (the peak where the kernel keeps one), cgroup v2 or v1.
const EXEC_SAMPLE: &str = "if [ -r /sys/fs/cgroup/cpu.stat ]; then \
echo cpu_ns $(( $(sed -n 's/^usage_usec //p' /sys/fs/cgroup/cpu.stat) * 1000 )); \
echo memory $(cat /sys/fs/cgroup/memory.peak 2>/dev/null || cat /sys/fs/cgroup/memory.current); \
else echo cpu_ns $(cat /sys/fs/cgroup/cpuacct/cpuacct.usage); \
echo memory $(cat /sys/fs/cgroup/memory/memory.max_usage_in_bytes); fi";

impl Source {
    /// Where the counters of container `id` of `engine` are read.
    fn of(engine: &RunEngine, id: &str) -> Source {
        match engine.docker() {
            Some(_) => Source::find(id),
            None => Source::Exec,
        }
    }

    /// Every how many ticks it is read.
    fn read_every(&self) -> u32 {
        match self {
            Source::Exec => EXEC_EVERY,
            _ => 1,
        }
    }

    fn find(id: &str) -> Source {
        let root = PathBuf::from("/sys/fs/cgroup");
        for group in [
            format!("docker/{id}"),
            format!("system.slice/docker-{id}.scope"),
        ] {
            let cpu = root.join("cpuacct").join(&group).join("cpuacct.usage");
            if cpu.is_file() {
                return Source::V1 {
                    procs: cpu.with_file_name("cgroup.procs"),
                    cpu,
                    memory: root
                        .join("memory")
                        .join(&group)
                        .join("memory.max_usage_in_bytes"),
                };
            }
            let dir = root.join(&group);
            if dir.join("cpu.stat").is_file() {
                return Source::V2 { dir };
            }
        }
        Source::Api
    }

    /// The counters now; with `switches`, the context switches too.
    async fn read(&self, engine: &RunEngine, id: &str, switches: bool) -> Result<Sample> {
        let number =
            |p: PathBuf| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
        match self {
            Source::V1 { cpu, memory, procs } => {
                let threads = switches.then(|| ThreadCounters::of(procs)).flatten();
                Ok(Sample {
                    at: unix_now(),
                    cpu_ns: number(cpu.clone()).context("cannot read cpuacct.usage")?,
                    memory_peak: number(memory.clone()).unwrap_or(0),
                    context_switches: threads.map(|t| t.switches),
                    compiler_cpu_ns: threads.map(|t| t.compiler_cpu_ns),
                })
            }
            Source::V2 { dir } => {
                let stat = std::fs::read_to_string(dir.join("cpu.stat"))
                    .context("cannot read cpu.stat")?;
                let usec: u64 = stat
                    .lines()
                    .find_map(|l| l.strip_prefix("usage_usec ")?.trim().parse().ok())
                    .context("cpu.stat has no usage_usec")?;
                let threads = switches
                    .then(|| ThreadCounters::of(&dir.join("cgroup.procs")))
                    .flatten();
                Ok(Sample {
                    at: unix_now(),
                    cpu_ns: usec * 1000,
                    memory_peak: number(dir.join("memory.peak")).unwrap_or(0),
                    context_switches: threads.map(|t| t.switches),
                    compiler_cpu_ns: threads.map(|t| t.compiler_cpu_ns),
                })
            }
            Source::Api => match engine.docker() {
                Some(docker) => api_sample(docker, id).await,
                None => exec_sample(engine, id).await,
            },
            Source::Exec => exec_sample(engine, id).await,
        }
    }
}

/// The counters of container `id`, read inside it ([`EXEC_SAMPLE`]), at
/// the middle of the exec's round trip.
async fn exec_sample(engine: &impl Containers, id: &str) -> Result<Sample> {
    let before = unix_now();
    let (code, out) = engine.exec(id, &["sh", "-c", EXEC_SAMPLE]).await?;
    let after = unix_now();
    if code != 0 {
        anyhow::bail!("reading the counters inside {id} exited with {code}: {out}");
    }
    let (cpu_ns, memory) = exec_counters(&out)
        .with_context(|| format!("the counters read inside {id} are `{}`", out.trim()))?;
    Ok(Sample {
        at: (before + after) / 2.0,
        cpu_ns,
        memory_peak: memory,
        context_switches: None,
        compiler_cpu_ns: None,
    })
}

/// `cpu_ns N` and `memory N` of [`EXEC_SAMPLE`]'s output.
fn exec_counters(out: &str) -> Option<(u64, u64)> {
    let value = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(key)?.trim().parse::<u64>().ok())
    };
    Some((value("cpu_ns ")?, value("memory ").unwrap_or(0)))
}

async fn api_sample(engine: &Engine, id: &str) -> Result<Sample> {
    let opts = StatsOptionsBuilder::default()
        .stream(false)
        .one_shot(true)
        .build();
    let mut stream = engine.api().stats(id, Some(opts));
    let stats = stream
        .next()
        .await
        .context("the engine returned no stats")?
        .with_context(|| format!("cannot read the stats of container {id}"))?;
    let cpu_ns = stats
        .cpu_stats
        .and_then(|c| c.cpu_usage)
        .and_then(|u| u.total_usage)
        .unwrap_or(0);
    let memory = stats.memory_stats.unwrap_or_default();
    Ok(Sample {
        at: unix_now(),
        cpu_ns,
        memory_peak: memory.max_usage.or(memory.usage).unwrap_or(0),
        context_switches: None,
        compiler_cpu_ns: None,
    })
}

/// What one walk over every thread of a cgroup's processes counts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct ThreadCounters {
    /// Context switches, voluntary and not.
    switches: u64,
    /// CPU time of the JIT compiler threads ([`is_compiler_thread`]).
    compiler_cpu_ns: u64,
}

impl ThreadCounters {
    /// The counters of every thread of the processes listed in a cgroup's
    /// `cgroup.procs`, from their `/proc/<pid>/task/<tid>/status` (and the
    /// compiler threads' `schedstat`). A thread that ended takes its counts
    /// with it, so a window's difference is clamped at 0 like every
    /// counter's; HotSpot stops compiler threads it no longer needs, so a
    /// window can miss the last moments of one that ended in it.
    fn of(procs: &std::path::Path) -> Option<ThreadCounters> {
        let pids = std::fs::read_to_string(procs).ok()?;
        let mut total = ThreadCounters::default();
        for pid in pids.split_ascii_whitespace() {
            let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
                continue;
            };
            for task in tasks.flatten() {
                let Ok(status) = std::fs::read_to_string(task.path().join("status")) else {
                    continue;
                };
                total.switches += switches_in(&status);
                if status
                    .lines()
                    .find_map(|l| l.strip_prefix("Name:"))
                    .is_some_and(|name| is_compiler_thread(name.trim()))
                {
                    total.compiler_cpu_ns += std::fs::read_to_string(task.path().join("schedstat"))
                        .ok()
                        .and_then(|s| s.split_ascii_whitespace().next()?.parse().ok())
                        .unwrap_or(0);
                }
            }
        }
        Some(total)
    }
}

/// `voluntary_ctxt_switches` + `nonvoluntary_ctxt_switches` of a status file.
fn switches_in(status: &str) -> u64 {
    status
        .lines()
        .filter_map(|l| {
            l.strip_prefix("voluntary_ctxt_switches:")
                .or_else(|| l.strip_prefix("nonvoluntary_ctxt_switches:"))
        })
        .filter_map(|v| v.trim().parse::<u64>().ok())
        .sum()
}

/// Whether a thread's name (as the kernel keeps it, 15 bytes at most) is a
/// JIT compiler's: HotSpot's `C1 CompilerThread0` and `C2 CompilerThread0`
/// (JDK 8 to 25), Graal's `JVMCI CompilerThread0`, OpenJ9's
/// `JIT Compilation Thread-0`. Their CPU time says whether a JVM is still
/// compiling its call path: what priming waits out
/// (`prime_jit_quiet_cores`), and what a cell's window should not contain.
fn is_compiler_thread(name: &str) -> bool {
    ["C1 Compiler", "C2 Compiler", "JVMCI", "JIT Compilation"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// Reads something on a schedule ([`SAMPLE_EVERY`]) until stopped: a
/// container's counters ([`Sampler::start`]) or the host's
/// (the host sampler, `host_load`), so that every counter of a cell is read alike and
/// placed on the window alike ([`delta_over`]).
pub struct Sampler<S = Sample> {
    stop: Arc<Notify>,
    /// Notified once the first reading was made (or failed).
    first: Arc<Notify>,
    task: tokio::task::JoinHandle<Vec<S>>,
}

/// Every how many readings a server's sampler also counts its context
/// switches: each count reads every thread's status file (a Dubbo server
/// has 200 threads), work the unpinned orchestrator would otherwise do ten
/// times a second beside the measured cores.
pub const SERVER_SWITCHES_EVERY: u32 = 5;

impl Sampler {
    /// Samples container `id`'s counters on `engine`.
    pub fn start(engine: &RunEngine, id: &str) -> Sampler {
        Sampler::start_counting(engine, id, 0)
    }

    /// As [`Sampler::start`], and the context switches of its threads too,
    /// every `switches_every` readings (never with 0) and on the last.
    pub fn start_counting(engine: &RunEngine, id: &str, switches_every: u32) -> Sampler {
        let (engine, id) = (engine.clone(), id.to_owned());
        let source = Arc::new(Source::of(&engine, &id));
        let read_every = source.read_every();
        let mut n = 0u32;
        Sampler::every_with(move |last| {
            let read = last || n.is_multiple_of(read_every);
            let count = switches_every > 0 && (last || n.is_multiple_of(switches_every));
            n += 1;
            let (source, engine, id) = (Arc::clone(&source), engine.clone(), id.clone());
            async move {
                if !read {
                    return None;
                }
                source.read(&engine, &id, count).await.ok()
            }
        })
    }
}

impl<S: Send + 'static> Sampler<S> {
    /// Calls `read` at once, then every [`SAMPLE_EVERY`], and once more when
    /// stopped; a reading that fails (None) is skipped.
    pub fn every<F, Fut>(mut read: F) -> Sampler<S>
    where
        F: FnMut() -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Option<S>> + Send,
    {
        Sampler::every_with(move |_| read())
    }

    /// As [`Sampler::every`], `read` told whether this is the last reading.
    pub fn every_with<F, Fut>(mut read: F) -> Sampler<S>
    where
        F: FnMut(bool) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Option<S>> + Send,
    {
        let stop = Arc::new(Notify::new());
        let stopped = Arc::clone(&stop);
        let first = Arc::new(Notify::new());
        let first_made = Arc::clone(&first);
        let task = tokio::spawn(async move {
            let mut samples = Vec::new();
            let mut tick = tokio::time::interval(SAMPLE_EVERY);
            let mut first = Some(first_made);
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = stopped.notified() => break,
                }
                samples.extend(read(false).await);
                if let Some(first) = first.take() {
                    first.notify_one();
                }
            }
            samples.extend(read(true).await);
            samples
        });
        Sampler { stop, first, task }
    }

    /// Returns once the first reading was made: a window that opens after
    /// this is covered from its start. (A window that opened before it, on
    /// a busy host where the sampler's task ran late, had no cost at all:
    /// a smoke cell's window opens 0.1 s after its client starts.)
    pub async fn first_reading(&self) {
        self.first.notified().await;
    }

    /// Stops sampling (after one last reading) and returns every sample.
    pub async fn finish(self) -> Vec<S> {
        self.stop.notify_one();
        self.task.await.unwrap_or_default()
    }
}

/// A counter's value at `t`, interpolated between the samples around it
/// (`read` gives a sample's time and the counter): None when `t` is outside
/// the samples.
pub fn counter_at<S>(samples: &[S], t: f64, read: impl Fn(&S) -> (f64, f64)) -> Option<f64> {
    let after = samples.iter().position(|s| read(s).0 >= t)?;
    let (b_at, b) = read(&samples[after]);
    if after == 0 {
        return (b_at == t).then_some(b);
    }
    let (a_at, a) = read(&samples[after - 1]);
    let f = if b_at > a_at {
        (t - a_at) / (b_at - a_at)
    } else {
        1.0
    };
    Some(a + f * (b - a))
}

/// How much a counter grew over `window` (never less than 0), each edge
/// interpolated ([`counter_at`]); None when the samples do not cover it.
pub fn delta_over<S>(
    samples: &[S],
    window: [f64; 2],
    read: impl Fn(&S) -> (f64, f64),
) -> Option<f64> {
    let [start, end] = window;
    Some((counter_at(samples, end, &read)? - counter_at(samples, start, &read)?).max(0.0))
}

/// Whether container `id`'s cgroup counters are visible on this machine:
/// then it runs on this kernel, whose `/proc/stat` counts its CPUs.
pub fn visible_here(id: &str) -> bool {
    !matches!(Source::find(id), Source::Api)
}

/// The cost over `window` (wall clock, seconds), `calls` calls having been
/// made; None when the samples do not cover the window.
pub fn over_window(samples: &[Sample], window: [f64; 2], calls: u64) -> Option<Cost> {
    let cpu_ns = delta_over(samples, window, |s| (s.at, s.cpu_ns as f64))?;
    let wall_ns = ((window[1] - window[0]) * 1e9).max(1.0);
    let peak = samples.iter().map(|s| s.memory_peak).max().unwrap_or(0);
    // Counted on some readings only: placed on the window from those.
    let counted: Vec<(f64, f64)> = samples
        .iter()
        .filter_map(|s| Some((s.at, s.context_switches? as f64)))
        .collect();
    let switches = delta_over(&counted, window, |s| *s);
    let compiler_ns = compiler_cpu_ns_over(samples, window);
    Some(Cost {
        cpu_ms: cpu_ns / 1e6,
        cpu_us_per_call: if calls == 0 {
            0.0
        } else {
            cpu_ns / 1e3 / calls as f64
        },
        cpu_cores_busy: cpu_ns / wall_ns,
        memory_peak_mib: peak as f64 / (1024.0 * 1024.0),
        context_switches_per_call: switches.filter(|_| calls > 0).map(|n| n / calls as f64),
        compiler_cpu_ms: compiler_ns.map(|ns| ns / 1e6),
    })
}

/// The JIT compiler threads' CPU time (ns) over `window`, from the readings
/// that counted it; None where none did (a remote engine's container, or a
/// window between two such readings).
pub fn compiler_cpu_ns_over(samples: &[Sample], window: [f64; 2]) -> Option<f64> {
    let counted: Vec<(f64, f64)> = samples
        .iter()
        .filter_map(|s| Some((s.at, s.compiler_cpu_ns? as f64)))
        .collect();
    delta_over(&counted, window, |s| *s)
}

/// Number of CPUs in a cpuset list such as `0`, `2-3` or `0,4-5`.
pub fn cpuset_len(cpuset: &str) -> usize {
    cpuset
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|part| match part.trim().split_once('-') {
            Some((a, b)) => match (a.parse::<usize>(), b.parse::<usize>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 1,
            },
            None => 1,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_read_inside_a_container_are_its_cpu_and_memory() {
        assert_eq!(
            exec_counters("cpu_ns 1234000\nmemory 5678\n"),
            Some((1_234_000, 5678))
        );
        assert_eq!(exec_counters("cpu_ns 7\nmemory \n"), Some((7, 0)));
        assert_eq!(exec_counters("sh: 1: cannot open\n"), None);
    }

    fn s(at: f64, cpu_ms: u64) -> Sample {
        Sample {
            at,
            cpu_ns: cpu_ms * 1_000_000,
            memory_peak: 100 << 20,
            context_switches: Some(cpu_ms * 2),
            compiler_cpu_ns: None,
        }
    }

    #[test]
    fn the_window_is_placed_between_samples() {
        // 0.5 core busy, sampled every 100 ms; the window falls between samples.
        let samples: Vec<Sample> = (0..=10)
            .map(|i| s(100.0 + i as f64 * 0.1, i * 50))
            .collect();
        let c = over_window(&samples, [100.25, 100.75], 1000).unwrap();
        assert!((c.cpu_ms - 250.0).abs() < 1e-6, "{c:?}");
        assert!((c.cpu_cores_busy - 0.5).abs() < 1e-9);
        assert!((c.cpu_us_per_call - 250.0).abs() < 1e-6);
        assert!((c.memory_peak_mib - 100.0).abs() < 1e-9);
        // Two switches per CPU millisecond: 500 over the window, 0.5 a call.
        assert!((c.context_switches_per_call.unwrap() - 0.5).abs() < 1e-9);
    }

    #[test]
    fn a_status_file_gives_both_kinds_of_switches() {
        let status = "Name:\tjava\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n";
        assert_eq!(switches_in(status), 127);
        assert_eq!(switches_in("Name: x\n"), 0);
    }

    #[test]
    fn every_thread_of_the_listed_processes_is_counted() {
        // A procs file listing this test process, whose threads have all
        // slept at least once (the harness waits on them); a process that
        // is gone counts nothing.
        let dir = tempfile::tempdir().unwrap();
        let procs = dir.path().join("cgroup.procs");
        std::fs::write(&procs, format!("{}\n999999999\n", std::process::id())).unwrap();
        let n = ThreadCounters::of(&procs).unwrap();
        assert!(n.switches > 0, "{n:?}");
        // A Rust test process has no JIT compiler threads.
        assert_eq!(n.compiler_cpu_ns, 0);
        assert_eq!(ThreadCounters::of(&dir.path().join("absent")), None);
    }

    #[test]
    fn compiler_threads_are_known_by_their_kernel_names() {
        // The kernel keeps 15 bytes of a thread's name.
        for name in [
            "C2 CompilerThre",
            "C1 CompilerThre",
            "JVMCI CompilerT",
            "JIT Compilation",
        ] {
            assert!(is_compiler_thread(name), "{name}");
        }
        for name in [
            "java",
            "GC Thread#0",
            "VM Thread",
            "DubboServerHand",
            "Compiler",
        ] {
            assert!(!is_compiler_thread(name), "{name}");
        }
    }

    #[test]
    fn compiler_time_is_placed_on_the_window_from_the_readings_that_counted_it() {
        // Compiler threads busy 0.2 core, counted on every other reading.
        let samples: Vec<Sample> = (0..=10)
            .map(|i| Sample {
                compiler_cpu_ns: (i % 2 == 0).then_some(i * 20_000_000),
                ..s(100.0 + i as f64 * 0.1, i * 50)
            })
            .collect();
        let c = over_window(&samples, [100.2, 100.8], 1000).unwrap();
        assert!((c.compiler_cpu_ms.unwrap() - 120.0).abs() < 1e-6, "{c:?}");
        let uncounted: Vec<Sample> = (0..=10)
            .map(|i| s(100.0 + i as f64 * 0.1, i * 50))
            .collect();
        assert_eq!(
            over_window(&uncounted, [100.2, 100.8], 1000)
                .unwrap()
                .compiler_cpu_ms,
            None
        );
    }

    #[test]
    fn samples_that_do_not_cover_the_window_give_nothing() {
        let samples = vec![s(100.0, 0), s(100.1, 10)];
        assert!(over_window(&samples, [100.05, 100.5], 10).is_none());
        assert!(over_window(&samples, [99.0, 100.05], 10).is_none());
        assert!(over_window(&[], [1.0, 2.0], 10).is_none());
    }

    #[test]
    fn cpuset_sizes() {
        assert_eq!(cpuset_len("0"), 1);
        assert_eq!(cpuset_len("2-3"), 2);
        assert_eq!(cpuset_len("0,4-7"), 5);
    }
}
