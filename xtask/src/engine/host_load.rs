//! What the host did beside the lab over a cell's window: CPU used on the
//! server's and the client's CPU sets by anything but the cell's own
//! containers, and time the hypervisor stole from them ([`HostLoad`]).
//!
//! A build on the client's cores or a noisy neighbour of a cloud VM makes a
//! slow window that looks exactly like a slow server; read, it is seen
//! rather than guessed. `/proc/stat`'s per-CPU lines are read on the same
//! schedule as the containers' counters ([`cost::Sampler`]) and placed on
//! the client's window the same way ([`cost::delta_over`]); the lab's own
//! CPU (the server, its registry where it shares the server's set, the idle
//! servers of an interleaved run, the client) is then subtracted.
//!
//! `/proc/stat` is this machine's: the figures are taken only when the
//! server and the client run on this kernel (their engines are local and
//! the server's cgroup is visible here), else the cell has none.

use crate::basics::cpus::CpuSet;
use crate::engine::cost;
use anyhow::Result;
use rpclab_model::aggregate::median;
use rpclab_model::manifest::HostLoadSummary;
use rpclab_model::result::{Cell, HostLoad, Softirq, SoftirqSides};
use std::collections::BTreeMap;

/// Cores of CPU on either set, beyond the lab's own, above which a window
/// is host-busy ([`host_busy`]).
///
/// The lab is not alone on its sets even on a quiet machine: the
/// orchestrator itself (unpinned: its samplers read `/proc/stat` and two or
/// three cgroups every 100 ms, it follows the client's log), dockerd and
/// containerd-shim answering it, the kernel's timers and RCU work. On the
/// lab's 2-core VM at a quiet moment (Docker's daemon up, both CPUs idle for
/// the 3 s before), a throwaway reader of `/proc/stat` every 100 ms (in
/// Python, so a heavier sampler than the orchestrator's) saw 0.002 and
/// 0.008 core on its two CPUs over 30 s, 0.02 at most in any 1 s window, and
/// no steal. A tenth of a core is five times that worst second, room for
/// the orchestrator's own work during a cell, and still small beside what it
/// would do to a result: on a one-core server set it is a 10 % slowdown, the
/// size of the differences the lab is asked to tell apart.
pub const THRESHOLD_CORES: f64 = 0.10;

/// Cores' worth of stolen time (both sets together) from which a window is
/// host-busy: a hypervisor taking 5 % of a core has neighbours at work, and
/// unlike other processes steal is never the lab's own, so the bar is
/// lower. The quiet VM above stole nothing (0.001 core over 20 s while the
/// machine was busy).
pub const STEAL_CORES: f64 = 0.05;

/// Whether something beside the lab used the server's or the client's CPU
/// set ([`HostLoad::threshold_cores`], [`THRESHOLD_CORES`] when the load
/// records none), or the hypervisor stole [`STEAL_CORES`] or more, over the
/// window: the cell is then flagged [`rpclab_model::result::CellFlag::HostBusy`].
pub fn host_busy(load: &HostLoad) -> bool {
    let threshold = if load.threshold_cores > 0.0 {
        load.threshold_cores
    } else {
        THRESHOLD_CORES
    };
    load.other_server_cores > threshold
        || load.other_client_cores > threshold
        || load.steal_cores >= STEAL_CORES
}

/// Clock ticks of one CPU's `/proc/stat` line, or of a set of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ticks {
    /// user + nice + system + irq + softirq. Guest time is already inside
    /// user (and guest_nice inside nice), so it is not added again; idle
    /// and iowait are not busy.
    pub busy: u64,
    /// irq + softirq, also inside `busy`: on loopback the lab's own traffic
    /// is processed there, and a kernel built with
    /// `CONFIG_IRQ_TIME_ACCOUNTING` does not charge it to the container.
    pub irq: u64,
    /// Time the hypervisor ran something else while this CPU wanted to run.
    pub steal: u64,
    /// softirq alone, also inside `irq`.
    pub softirq: u64,
}

impl std::ops::AddAssign for Ticks {
    fn add_assign(&mut self, o: Ticks) {
        self.busy += o.busy;
        self.irq += o.irq;
        self.steal += o.steal;
        self.softirq += o.softirq;
    }
}

/// The per-CPU lines of `/proc/stat` (`cpuN user nice system idle iowait
/// irq softirq steal guest guest_nice`; older kernels stop earlier, missing
/// fields count 0). The all-CPU line `cpu` is left out.
pub fn parse_stat(text: &str) -> BTreeMap<usize, Ticks> {
    let mut cpus = BTreeMap::new();
    for line in text.lines() {
        let mut fields = line.split_ascii_whitespace();
        let Some(n) = fields
            .next()
            .and_then(|f| f.strip_prefix("cpu"))
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        let v: Vec<u64> = fields.map(|f| f.parse().unwrap_or(0)).collect();
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        let (user, nice, system, irq, softirq, steal) = (at(0), at(1), at(2), at(5), at(6), at(7));
        cpus.insert(
            n,
            Ticks {
                busy: user + nice + system + irq + softirq,
                irq: irq + softirq,
                steal,
                softirq,
            },
        );
    }
    cpus
}

/// The sum over `set`'s CPUs; None when one of them has no line (offline).
pub fn over_set(cpus: &BTreeMap<usize, Ticks>, set: &CpuSet) -> Option<Ticks> {
    let mut sum = Ticks::default();
    for cpu in set.iter() {
        sum += *cpus.get(&cpu)?;
    }
    Some(sum)
}

/// The server's and the client's CPU sets as the host sampler sees them.
#[derive(Clone, Debug, PartialEq)]
pub struct Sets {
    server: CpuSet,
    client: CpuSet,
    /// Server and client share CPUs (`--allow-shared-cpus`): both sets are
    /// then their union, and what is left on it is reported for both.
    shared: bool,
    /// The registry's set overlaps the server's: its CPU is subtracted
    /// there. On a core of its own it is on neither set and not counted.
    registry_on_server: bool,
}

impl Sets {
    /// From cpuset strings (`0`, `1`, `0-1`, as the run's split has them).
    pub fn parse(server: &str, registry: &str, client: &str) -> Result<Sets> {
        let (server, registry, client) = (
            CpuSet::parse(server)?,
            CpuSet::parse(registry)?,
            CpuSet::parse(client)?,
        );
        let shared = server.overlaps(&client);
        let server = if shared {
            server.union(&client)
        } else {
            server
        };
        Ok(Sets {
            registry_on_server: registry.overlaps(&server),
            client: if shared { server.clone() } else { client },
            server,
            shared,
        })
    }
}

/// One reading of `/proc/stat`, summed over each set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostSample {
    /// Wall clock, seconds since the Unix epoch (as [`cost::Sample::at`]).
    pub at: f64,
    pub server: Ticks,
    pub client: Ticks,
    /// NET_RX softirqs and ksoftirqd's ticks per set, where readable.
    pub softirq: Option<[NetRx; 2]>,
}

/// A set's NET_RX softirq count and its ksoftirqd threads' CPU ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NetRx {
    pub raised: u64,
    pub ksoftirqd_ticks: u64,
}

/// The NET_RX row of `/proc/softirqs`, per CPU.
pub fn parse_net_rx(text: &str) -> Option<Vec<u64>> {
    let row = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("NET_RX:"))?;
    Some(
        row.split_ascii_whitespace()
            .map(|v| v.parse().unwrap_or(0))
            .collect(),
    )
}

/// utime + stime of a `/proc/<pid>/stat` line (fields 14 and 15; the
/// command, in parentheses, may hold spaces, so fields count from its end).
pub fn parse_task_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_ascii_whitespace().collect();
    // After the command: state is field 3, utime 14, stime 15.
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// The pid of each CPU's `ksoftirqd/N` kernel thread.
fn ksoftirqd_pids() -> BTreeMap<usize, u32> {
    let mut out = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if let Some(cpu) = comm.trim().strip_prefix("ksoftirqd/") {
            if let Ok(cpu) = cpu.parse() {
                out.insert(cpu, pid);
            }
        }
    }
    out
}

/// NET_RX and ksoftirqd over a set's CPUs; None when a CPU has neither.
fn net_rx_over(set: &CpuSet, raised: &[u64], pids: &BTreeMap<usize, u32>) -> Option<NetRx> {
    let mut sum = NetRx::default();
    for cpu in set.iter() {
        sum.raised += raised.get(cpu)?;
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", pids.get(&cpu)?)).ok()?;
        sum.ksoftirqd_ticks += parse_task_ticks(&stat)?;
    }
    Some(sum)
}

/// Reads `/proc/stat` (and `/proc/softirqs`, ksoftirqd's ticks) now; None
/// when `/proc/stat` cannot be read or lacks a CPU.
pub fn read_sample(sets: &Sets, pids: &BTreeMap<usize, u32>) -> Option<HostSample> {
    let at = cost::unix_now();
    let cpus = parse_stat(&std::fs::read_to_string("/proc/stat").ok()?);
    let softirq = std::fs::read_to_string("/proc/softirqs")
        .ok()
        .and_then(|t| parse_net_rx(&t))
        .and_then(|raised| {
            Some([
                net_rx_over(&sets.server, &raised, pids)?,
                net_rx_over(&sets.client, &raised, pids)?,
            ])
        });
    Some(HostSample {
        at,
        server: over_set(&cpus, &sets.server)?,
        client: over_set(&cpus, &sets.client)?,
        softirq,
    })
}

/// Samples `/proc/stat` for `sets` every [`cost::SAMPLE_EVERY`] until
/// finished.
pub fn start(sets: Sets) -> cost::Sampler<HostSample> {
    let pids = ksoftirqd_pids();
    cost::Sampler::every(move || std::future::ready(read_sample(&sets, &pids)))
}

/// Seconds per clock tick of `/proc/stat` (`sysconf(_SC_CLK_TCK)`, 100 on
/// every Linux the lab has met).
pub fn tick_s() -> f64 {
    // SAFETY: sysconf reads a constant of the C library.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    1.0 / if hz > 0 { hz as f64 } else { 100.0 }
}

/// The lab's own CPU over the window, in cores (a [`cost::over_window`]'s
/// `cpu_cores_busy`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Own {
    pub server: f64,
    /// The registry's, whether or not it is on the server's set
    /// ([`Sets`] knows).
    pub registry: f64,
    /// Every idle server's, summed.
    pub idle_servers: f64,
    pub client: f64,
}

/// The host's load over `window` (wall clock, seconds, already on the
/// samples' clock) given the lab's own CPU; None when the samples do not
/// cover the window. Differences are clamped at 0: the containers'
/// counters and `/proc/stat`'s ticks are read a few microseconds apart and
/// tick-granular, so a quiet window can come out slightly negative.
pub fn load_over(
    samples: &[HostSample],
    window: [f64; 2],
    sets: &Sets,
    own: Own,
    tick_s: f64,
) -> Option<HostLoad> {
    let wall = window[1] - window[0];
    if wall <= 0.0 {
        return None;
    }
    let cores = |read: fn(&HostSample) -> u64| {
        cost::delta_over(samples, window, |s| (s.at, read(s) as f64)).map(|t| t * tick_s / wall)
    };
    let registry = if sets.registry_on_server {
        own.registry
    } else {
        0.0
    };
    let server_busy = cores(|s| s.server.busy)?;
    let lab_on_server = own.server + registry + own.idle_servers;
    // Interrupt time is never counted as another's: a kernel with
    // CONFIG_IRQ_TIME_ACCOUNTING charges the loopback's softirq work of a
    // busy cell to no container, and it would read as a disturbance. On a
    // tick-accounting kernel (the containers' time includes it) this
    // undercounts the others by that share: a missed disturbance of a few
    // hundredths of a core, rather than a flagged quiet window.
    let server_irq = cores(|s| s.server.irq)?;
    let (other_server, other_client, steal, irq) = if sets.shared {
        let other = (server_busy - server_irq - lab_on_server - own.client).max(0.0);
        let steal = cores(|s| s.server.steal)?;
        (other, other, steal, server_irq)
    } else {
        let client_irq = cores(|s| s.client.irq)?;
        (
            (server_busy - server_irq - lab_on_server).max(0.0),
            (cores(|s| s.client.busy)? - client_irq - own.client).max(0.0),
            cores(|s| s.server.steal)? + cores(|s| s.client.steal)?,
            server_irq + client_irq,
        )
    };
    let side = |i: usize, ticks: fn(&HostSample) -> u64| -> Option<Softirq> {
        let each = |read: &dyn Fn(&NetRx) -> u64| {
            if samples.iter().any(|s| s.softirq.is_none()) {
                return None;
            }
            cost::delta_over(samples, window, |s| {
                (s.at, s.softirq.map_or(0, |n| read(&n[i])) as f64)
            })
        };
        Some(Softirq {
            softirq_cores: cores(ticks)?,
            net_rx_per_s: each(&|n| n.raised)? / wall,
            ksoftirqd_cores: each(&|n| n.ksoftirqd_ticks)? * tick_s / wall,
        })
    };
    let softirq = (|| {
        Some(SoftirqSides {
            server: side(0, |s| s.server.softirq)?,
            client: side(1, |s| s.client.softirq)?,
        })
    })();
    Some(HostLoad {
        other_server_cores: other_server,
        other_client_cores: other_client,
        steal_cores: steal,
        idle_servers_cores: own.idle_servers,
        irq_cores: irq,
        threshold_cores: THRESHOLD_CORES,
        softirq,
    })
}

/// The run's host load for the manifest, over every cell that has one;
/// None when none has (a remote engine, an older snapshot).
pub fn summarise(cells: &[Cell]) -> Option<HostLoadSummary> {
    let loads: Vec<&HostLoad> = cells.iter().filter_map(|c| c.host_load.as_ref()).collect();
    if loads.is_empty() {
        return None;
    }
    let of = |f: fn(&HostLoad) -> f64| -> (f64, f64) {
        let v: Vec<f64> = loads.iter().map(|l| f(l)).collect();
        (median(&v), v.iter().copied().fold(0.0, f64::max))
    };
    let (other_server_median, other_server_max) = of(|l| l.other_server_cores);
    let (other_client_median, other_client_max) = of(|l| l.other_client_cores);
    let (steal_median, steal_max) = of(|l| l.steal_cores);
    Some(HostLoadSummary {
        windows: loads.len(),
        busy_windows: loads.iter().filter(|l| host_busy(l)).count(),
        other_server_cores_median: other_server_median,
        other_server_cores_max: other_server_max,
        other_client_cores_median: other_client_median,
        other_client_cores_max: other_client_max,
        steal_cores_median: steal_median,
        steal_cores_max: steal_max,
        threshold_cores: THRESHOLD_CORES,
        steal_threshold_cores: STEAL_CORES,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Two CPUs, with steal, guest and every field; then an older kernel's
    // shorter line.
    const STAT: &str = "\
cpu  74159 0 15552 51257 488 0 245 195 0 0
cpu0 34875 3 7451 28393 87 10 26 100 500 0
cpu1 39284 0 8100 22863 400 0 218 94 0 0
cpu2 10 0 5 100 0 1 2
intr 1040432 0 0 0
ctxt 123
";

    #[test]
    fn proc_stat_lines_parse_per_cpu() {
        let cpus = parse_stat(STAT);
        assert_eq!(cpus.len(), 3, "the all-CPU line is left out");
        assert_eq!(
            cpus[&0],
            Ticks {
                // guest (500) is inside user already
                busy: 34875 + 3 + 7451 + 10 + 26,
                irq: 36,
                steal: 100,
                softirq: 26,
            }
        );
        assert_eq!(cpus[&1].steal, 94);
        assert_eq!(
            cpus[&2],
            Ticks {
                busy: 18,
                irq: 3,
                steal: 0,
                softirq: 2,
            }
        );
    }

    #[test]
    fn a_cpuset_selects_its_lines() {
        let cpus = parse_stat(STAT);
        let both = over_set(&cpus, &CpuSet::parse("0-1").unwrap()).unwrap();
        assert_eq!(both.steal, 194);
        assert_eq!(both.busy, cpus[&0].busy + cpus[&1].busy);
        assert_eq!(
            over_set(&cpus, &CpuSet::parse("1").unwrap()),
            Some(cpus[&1])
        );
        // A CPU without a line (offline) gives nothing rather than less.
        assert_eq!(over_set(&cpus, &CpuSet::parse("1,5").unwrap()), None);
    }

    #[test]
    fn sets_know_the_registry_and_a_shared_cpu() {
        let s = Sets::parse("0", "0", "1").unwrap();
        assert!(s.registry_on_server && !s.shared);
        let s = Sets::parse("0", "1", "2-3").unwrap();
        assert!(!s.registry_on_server);
        let s = Sets::parse("0", "0", "0-1").unwrap();
        assert!(s.shared);
        assert_eq!(s.server, s.client);
        assert_eq!(s.server.to_string(), "0-1");
        assert!(Sets::parse("x", "0", "1").is_err());
    }

    /// The lab's own CPU (cores) of the server, the registry, the idle
    /// servers and the client, in that order.
    fn own(server: f64, registry: f64, idle_servers: f64, client: f64) -> Own {
        Own {
            server,
            registry,
            idle_servers,
            client,
        }
    }

    /// Samples every 100 ms from t = 100 s, each set busy at a constant
    /// rate (cores), ticks of 10 ms.
    fn samples(server: f64, client: f64, steal: f64) -> Vec<HostSample> {
        (0..=20)
            .map(|i| {
                let t = i as f64 * 0.1;
                let ticks = |cores: f64| (cores * t * 100.0).round() as u64;
                HostSample {
                    at: 100.0 + t,
                    server: Ticks {
                        busy: ticks(server),
                        irq: ticks(server / 4.0),
                        steal: ticks(steal),
                        softirq: ticks(server / 8.0),
                    },
                    client: Ticks {
                        busy: ticks(client),
                        ..Ticks::default()
                    },
                    // 1000 NET_RX a second on the server's CPU, its
                    // ksoftirqd a tenth of a core; none on the client's.
                    softirq: Some([
                        NetRx {
                            raised: (1000.0 * t).round() as u64,
                            ksoftirqd_ticks: ticks(0.1),
                        },
                        NetRx::default(),
                    ]),
                }
            })
            .collect()
    }

    fn near(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn softirq_work_and_ksoftirqd_are_placed_on_the_window_per_set() {
        let sets = Sets::parse("0", "0", "1").unwrap();
        let own = Own::default();
        let l = load_over(&samples(0.8, 0.5, 0.0), [100.5, 101.5], &sets, own, 0.01).unwrap();
        let irq = l.softirq.unwrap();
        assert!(near(irq.server.softirq_cores, 0.1), "{irq:?}");
        assert!(near(irq.server.net_rx_per_s, 1000.0), "{irq:?}");
        assert!(near(irq.server.ksoftirqd_cores, 0.1), "{irq:?}");
        assert_eq!(irq.client, Softirq::default());
        // A sample without the softirq files: none, the rest still there.
        let mut s = samples(0.8, 0.5, 0.0);
        s[12].softirq = None;
        let l = load_over(&s, [100.5, 101.5], &sets, own, 0.01).unwrap();
        assert!(l.softirq.is_none());
    }

    #[test]
    fn the_net_rx_row_and_a_task_s_ticks_parse() {
        let softirqs = "                    CPU0       CPU1\n      NET_TX:          5          0\n      NET_RX:    4409282    2714606\n";
        assert_eq!(parse_net_rx(softirqs), Some(vec![4_409_282, 2_714_606]));
        assert_eq!(parse_net_rx("nothing"), None);
        // The command holds a space and parentheses; utime 3, stime 29.
        let stat = "14 (ksoftirqd/0 (x)) S 2 0 0 0 -1 69238848 0 0 0 0 3 29 0 0 20 0 1 0 3 0 0";
        assert_eq!(parse_task_ticks(stat), Some(32));
    }

    #[test]
    fn the_window_is_placed_between_samples_and_the_lab_subtracted() {
        let sets = Sets::parse("0", "0", "1").unwrap();
        let own = own(0.4, 0.05, 0.1, 0.7);
        // Edges between samples: 100.25 .. 101.75. Interrupt time (a
        // quarter of the server set's, in these samples) is nobody's.
        let l = load_over(&samples(0.8, 0.9, 0.2), [100.25, 101.75], &sets, own, 0.01).unwrap();
        assert!(
            near(l.other_server_cores, 0.8 - 0.2 - 0.4 - 0.05 - 0.1),
            "{l:?}"
        );
        assert!(near(l.other_client_cores, 0.9 - 0.7), "{l:?}");
        assert!(near(l.steal_cores, 0.2), "{l:?}");
        assert!(near(l.irq_cores, 0.2), "{l:?}");
        assert!(near(l.idle_servers_cores, 0.1));
        assert_eq!(l.threshold_cores, THRESHOLD_CORES);
        // A registry on a core of its own is on neither set.
        let apart = Sets::parse("0", "2", "1").unwrap();
        let l = load_over(&samples(0.8, 0.9, 0.0), [100.25, 101.75], &apart, own, 0.01).unwrap();
        assert!(near(l.other_server_cores, 0.8 - 0.2 - 0.4 - 0.1), "{l:?}");
        // Outside the samples: nothing.
        assert!(load_over(&samples(0.8, 0.9, 0.0), [99.0, 101.0], &sets, own, 0.01).is_none());
        assert!(load_over(&samples(0.8, 0.9, 0.0), [101.0, 101.0], &sets, own, 0.01).is_none());
    }

    /// What the lab used beyond the ticks clamps at zero, and shared sets
    /// subtract everything from their union.
    #[test]
    fn the_lab_s_own_cpu_comes_off_its_sets_and_clamps_at_zero() {
        // The client's set; the lab's own CPU; the server and client sets'
        // ticks (samples() puts a shared union's in `server`); what is left
        // to others on the server's and the client's set.
        for (client_set, own, (server, client), others) in [
            ("1", own(0.95, 0.0, 0.0, 1.0), (0.9, 0.9), (0.0, 0.0)),
            ("0-1", own(0.5, 0.1, 0.0, 0.8), (2.0, 2.0), (0.1, 0.1)),
        ] {
            let sets = Sets::parse("0", "0", client_set).unwrap();
            let ticks = samples(server, client, 0.0);
            let l = load_over(&ticks, [100.0, 102.0], &sets, own, 0.01).unwrap();
            assert!(
                near(l.other_server_cores, others.0) && near(l.other_client_cores, others.1),
                "{client_set}: {l:?}"
            );
        }
    }

    fn load(server: f64, client: f64, steal: f64) -> HostLoad {
        HostLoad {
            other_server_cores: server,
            other_client_cores: client,
            steal_cores: steal,
            threshold_cores: THRESHOLD_CORES,
            ..HostLoad::default()
        }
    }

    #[test]
    fn the_threshold_is_a_tenth_of_a_core_on_either_set_or_steal() {
        assert!(!host_busy(&load(0.0, 0.0, 0.0)));
        assert!(!host_busy(&load(0.10, 0.10, 0.04)));
        assert!(host_busy(&load(0.11, 0.0, 0.0)));
        assert!(host_busy(&load(0.0, 0.11, 0.0)));
        assert!(host_busy(&load(0.0, 0.0, 0.05)));
        // A load recorded with its own threshold is judged by it; one
        // without (0) by today's.
        let strict = HostLoad {
            threshold_cores: 0.02,
            ..load(0.03, 0.0, 0.0)
        };
        assert!(host_busy(&strict));
        let unrecorded = HostLoad {
            threshold_cores: 0.0,
            ..load(0.03, 0.0, 0.0)
        };
        assert!(!host_busy(&unrecorded));
    }

    #[test]
    fn the_run_summary_takes_medians_maxima_and_counts_busy_windows() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results.json"),
        )
        .unwrap();
        let results: rpclab_model::result::Results = serde_json::from_str(&text).unwrap();
        let cell = |l: Option<HostLoad>| Cell {
            host_load: l,
            ..results.cells[0].clone()
        };
        assert_eq!(summarise(&[cell(None)]), None);
        let s = summarise(&[
            cell(Some(load(0.01, 0.02, 0.0))),
            cell(None),
            cell(Some(load(0.03, 0.30, 0.0))),
            cell(Some(load(0.02, 0.04, 0.06))),
        ])
        .unwrap();
        assert_eq!((s.windows, s.busy_windows), (3, 2));
        assert!(near(s.other_server_cores_median, 0.02) && near(s.other_server_cores_max, 0.03));
        assert!(near(s.other_client_cores_median, 0.04) && near(s.other_client_cores_max, 0.30));
        assert!(near(s.steal_cores_median, 0.0) && near(s.steal_cores_max, 0.06));
    }
}
