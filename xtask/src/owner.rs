//! Which orchestrator owns the lab's containers, and whether it still lives.
//!
//! Every container the lab starts carries labels naming the process that
//! started it: host, pid, the process's start time (so a recycled pid is not
//! mistaken for it) and the kernel's boot id (so a reboot is). A new run
//! first looks at the engine: containers of a run whose orchestrator is gone
//! (killed with `kill -9`, a crash, a closed terminal) are removed with one
//! line saying so; a run that is still alive is left alone and the new run
//! refuses to start, because two runs on one engine would share CPUs and
//! ports and measure each other.

use crate::docker::{Engine, LabContainer};
use anyhow::{bail, Result};
use std::collections::BTreeMap;

/// Label: hostname of the orchestrator that started the container.
pub const LABEL_HOST: &str = "io.rpclab.owner.host";
/// Label: its pid.
pub const LABEL_PID: &str = "io.rpclab.owner.pid";
/// Label: its start time, clock ticks after boot (`/proc/<pid>/stat` field 22).
pub const LABEL_STARTED: &str = "io.rpclab.owner.started";
/// Label: the kernel's boot id when it started.
pub const LABEL_BOOT: &str = "io.rpclab.owner.boot";

/// An orchestrator process, as its containers' labels name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub host: String,
    pub pid: u32,
    pub started: u64,
    pub boot: String,
}

/// What can be said of an owner from this host.
#[derive(Debug, PartialEq, Eq)]
pub enum Liveness {
    Alive,
    Gone,
    /// Another host's process: nothing here can tell.
    Unknown,
}

impl Owner {
    /// This process.
    pub fn me() -> Owner {
        let pid = std::process::id();
        Owner {
            host: crate::host::hostname(),
            pid,
            started: process_start(pid).unwrap_or(0),
            boot: boot_id(),
        }
    }

    /// The labels that name this owner on a container.
    pub fn labels(&self) -> [(String, String); 4] {
        [
            (LABEL_HOST.to_owned(), self.host.clone()),
            (LABEL_PID.to_owned(), self.pid.to_string()),
            (LABEL_STARTED.to_owned(), self.started.to_string()),
            (LABEL_BOOT.to_owned(), self.boot.clone()),
        ]
    }

    /// The owner named by a container's labels; None for containers of an
    /// rpclab that did not label its owner.
    pub fn from_labels(labels: &BTreeMap<String, String>) -> Option<Owner> {
        Some(Owner {
            host: labels.get(LABEL_HOST)?.clone(),
            pid: labels.get(LABEL_PID)?.parse().ok()?,
            started: labels.get(LABEL_STARTED)?.parse().ok()?,
            boot: labels.get(LABEL_BOOT)?.clone(),
        })
    }

    /// Whether the process still runs (same host, same boot, same pid with
    /// the same start time).
    pub fn liveness(&self) -> Liveness {
        if self.host != crate::host::hostname() {
            return Liveness::Unknown;
        }
        if self.boot != boot_id() {
            return Liveness::Gone;
        }
        match process_start(self.pid) {
            Some(started) if started == self.started => Liveness::Alive,
            _ => Liveness::Gone,
        }
    }
}

/// The start time of `pid` in clock ticks after boot, if it runs.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: the
    // fields after it start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    // rest starts at field 3 (state); field 22 is the 20th of these.
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// Makes the engine ours for a run: removes what dead runs left, and
/// refuses to go on while another run is alive (or cannot be judged).
pub async fn claim_engine(engine: &Engine) -> Result<()> {
    let me = Owner::me();
    let mut runs: BTreeMap<String, Vec<LabContainer>> = BTreeMap::new();
    for c in engine.lab_containers(None).await? {
        // The legacy builder's intermediate containers inherit the image's
        // labels but belong to no run: an image build, never a measurement.
        if c.run.is_empty() {
            continue;
        }
        runs.entry(c.run.clone()).or_default().push(c);
    }
    for (run, containers) in runs {
        let names = || {
            containers
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(owner) = containers
            .iter()
            .find_map(|c| Owner::from_labels(&c.labels))
        else {
            bail!(
                "the engine has lab containers of run `{run}` ({}) that name no orchestrator (an older rpclab \
                 made them), so this run cannot tell whether that run is still measuring. If it is not, \
                 `cargo xtask lab clean` removes them; then run this command again.",
                names()
            );
        };
        if owner == me {
            continue;
        }
        match owner.liveness() {
            Liveness::Gone => {
                eprintln!(
                    "removing {} container(s) left by run {run}, whose orchestrator (pid {} on {}) is no longer running: {}",
                    containers.len(),
                    owner.pid,
                    owner.host,
                    names()
                );
                for c in &containers {
                    engine.remove(&c.id).await?;
                }
            }
            Liveness::Alive => bail!(
                "another lab run ({run}, pid {}) is using this Docker engine: two runs would share CPUs and \
                 ports and measure each other. Wait until it ends, or stop it (`kill {}`; its containers are \
                 then removed by the next run); `cargo xtask lab ps` lists them.",
                owner.pid,
                owner.pid
            ),
            Liveness::Unknown => bail!(
                "the engine has containers of run {run}, started from host `{}`, which this host cannot check \
                 ({}). If that run is over, `cargo xtask lab clean` removes them.",
                owner.host,
                names()
            ),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_recycled_pid_is_not() {
        let me = Owner::me();
        assert!(me.started > 0);
        assert_eq!(me.liveness(), Liveness::Alive);
        let recycled = Owner {
            started: me.started + 1,
            ..me.clone()
        };
        assert_eq!(recycled.liveness(), Liveness::Gone);
        let rebooted = Owner {
            boot: "another-boot".into(),
            ..me.clone()
        };
        assert_eq!(rebooted.liveness(), Liveness::Gone);
        let elsewhere = Owner {
            host: format!("{}-elsewhere", me.host),
            ..me
        };
        assert_eq!(elsewhere.liveness(), Liveness::Unknown);
    }

    #[test]
    fn labels_round_trip_and_unlabelled_containers_have_no_owner() {
        let me = Owner::me();
        let labels: BTreeMap<String, String> = me.labels().into_iter().collect();
        assert_eq!(Owner::from_labels(&labels), Some(me));
        assert_eq!(Owner::from_labels(&BTreeMap::new()), None);
    }

    #[test]
    fn a_dead_child_is_gone() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let started = process_start(pid);
        child.wait().unwrap();
        let owner = Owner {
            pid,
            started: started.unwrap_or(1),
            ..Owner::me()
        };
        assert_eq!(owner.liveness(), Liveness::Gone);
    }
}
