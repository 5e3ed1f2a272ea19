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
/// Label: whom the run lets share its engine ([`Sharing::label`]).
pub const LABEL_SHARING: &str = "io.rpclab.sharing";

/// Whether a live run lets another run use its engine beside it.
///
/// A run whose numbers are read is alone on its engine: another run would
/// share its CPUs and measure it. A check whose numbers are not read (a
/// `scratch` profile: `smoke`) only verifies that every call works, so two
/// checks may run side by side, each in its own network namespace, as a
/// test suite runs its end-to-end checks; a check still refuses to start
/// beside a measuring run, and a measuring run beside a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// Refuses, and is refused by, any other live run.
    Alone,
    /// Runs beside other checks.
    WithChecks,
}

impl Sharing {
    /// The value of [`LABEL_SHARING`] on the run's containers.
    pub fn label(self) -> &'static str {
        match self {
            Sharing::Alone => "alone",
            Sharing::WithChecks => "checks",
        }
    }

    /// A run's sharing as its containers' labels say it: a run labelled
    /// before there were checks that share is alone.
    fn of(labels: &BTreeMap<String, String>) -> Sharing {
        match labels.get(LABEL_SHARING).map(String::as_str) {
            Some("checks") => Sharing::WithChecks,
            _ => Sharing::Alone,
        }
    }
}

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
            host: crate::basics::host::hostname(),
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
        if self.host != crate::basics::host::hostname() {
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

/// A lab container as this module needs to see it.
pub struct Seen<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub run: &'a str,
    pub labels: &'a BTreeMap<String, String>,
}

/// The containers of a run whose orchestrator is gone: to remove.
#[derive(Debug, PartialEq, Eq)]
pub struct Stale {
    pub run: String,
    pub owner: Owner,
    pub ids: Vec<String>,
    pub names: Vec<String>,
}

impl Stale {
    /// The one line a run prints before removing them.
    pub fn message(&self) -> String {
        format!(
            "removing {} container(s) left by run {}, whose orchestrator (pid {} on {}) is no longer running: {}",
            self.ids.len(),
            self.run,
            self.owner.pid,
            self.owner.host,
            self.names.join(", ")
        )
    }
}

/// Decides, for a new run that shares as `mine` says, what the engine's lab
/// containers mean: the runs whose orchestrator is gone (to remove), or an
/// error when a run is alive or cannot be judged, since two runs would
/// share CPUs and ports. A live check is left alone when the new run is a
/// check too ([`Sharing::WithChecks`]).
pub fn stale_runs<'a>(
    containers: impl IntoIterator<Item = Seen<'a>>,
    mine: Sharing,
) -> Result<Vec<Stale>> {
    let me = Owner::me();
    let mut runs: BTreeMap<&str, Vec<Seen>> = BTreeMap::new();
    for c in containers {
        runs.entry(c.run).or_default().push(c);
    }
    let mut stale = Vec::new();
    for (run, containers) in runs {
        let names: Vec<String> = containers.iter().map(|c| c.name.to_owned()).collect();
        let Some(owner) = containers.iter().find_map(|c| Owner::from_labels(c.labels)) else {
            bail!(
                "the engine has lab containers of run `{run}` ({}) that name no orchestrator (an older rpclab \
                 made them), so this run cannot tell whether that run is still measuring. If it is not, \
                 `cargo xtask lab clean` removes them; then run this command again.",
                names.join(", ")
            );
        };
        if owner == me {
            continue;
        }
        match owner.liveness() {
            Liveness::Gone => stale.push(Stale {
                run: run.to_owned(),
                owner,
                ids: containers.iter().map(|c| c.id.to_owned()).collect(),
                names,
            }),
            Liveness::Alive
                if mine == Sharing::WithChecks
                    && containers
                        .iter()
                        .all(|c| Sharing::of(c.labels) == Sharing::WithChecks) => {}
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
                names.join(", ")
            ),
        }
    }
    Ok(stale)
}

/// What `lab clean` does with the lab's containers (or a cluster's
/// namespaces), run by run: a run whose orchestrator runs on this machine
/// now is left alone and named (removing its containers would end it
/// mid-measurement, or another user's test with it); everything else goes:
/// a run whose orchestrator is gone, one started from another host (this
/// host cannot tell, and `lab clean` is how a user says it is over), one
/// that names no orchestrator.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CleanPlan {
    /// The ids to remove.
    pub remove: Vec<String>,
    /// The runs left alone, with their live orchestrator.
    pub live: Vec<(String, Owner)>,
}

impl CleanPlan {
    /// `seen`, run by run.
    pub fn of<'a>(seen: impl IntoIterator<Item = Seen<'a>>) -> CleanPlan {
        let mut runs: BTreeMap<&str, Vec<Seen>> = BTreeMap::new();
        for c in seen {
            runs.entry(c.run).or_default().push(c);
        }
        let mut plan = CleanPlan::default();
        for (run, items) in runs {
            let owner = items.iter().find_map(|c| Owner::from_labels(c.labels));
            match owner {
                Some(owner) if owner.liveness() == Liveness::Alive => {
                    plan.live.push((run.to_owned(), owner));
                }
                _ => plan.remove.extend(items.iter().map(|c| c.id.to_owned())),
            }
        }
        plan
    }

    /// One line per run left alone, saying how to end it.
    pub fn live_lines(&self) -> Vec<String> {
        self.live
            .iter()
            .map(|(run, owner)| {
                format!(
                    "left run {run} alone: its orchestrator (pid {}) is running on this machine; \
                     stop it (Ctrl-C in its terminal, or `kill {}`) and it removes its own",
                    owner.pid, owner.pid
                )
            })
            .collect()
    }
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

    fn seen<'a>(run: &'a str, name: &'a str, labels: &'a BTreeMap<String, String>) -> Seen<'a> {
        Seen {
            id: name,
            name,
            run,
            labels,
        }
    }

    #[test]
    fn a_dead_runs_containers_are_stale_and_a_live_or_unlabelled_run_is_refused() {
        let dead = Owner {
            started: Owner::me().started + 1,
            ..Owner::me()
        };
        let dead_labels: BTreeMap<_, _> = dead.labels().into_iter().collect();
        let mine: BTreeMap<_, _> = Owner::me().labels().into_iter().collect();
        let none = BTreeMap::new();
        let stale = stale_runs(
            [
                seen("r1", "rpclab-thrift-java-r1", &dead_labels),
                seen("r1", "rpclab-client-r1-1", &dead_labels),
                seen("me", "rpclab-grpc-me", &mine),
            ],
            Sharing::Alone,
        )
        .unwrap();
        assert_eq!(stale.len(), 1);
        assert_eq!(
            stale[0].ids,
            vec!["rpclab-thrift-java-r1", "rpclab-client-r1-1"]
        );
        assert!(stale[0].message().contains("no longer running"));

        let err = stale_runs([seen("old", "rpclab-x-old", &none)], Sharing::WithChecks)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("name no orchestrator") && err.contains("lab clean"),
            "{err}"
        );

        // A live run that is not this process (its parent, say) is refused.
        let parent = Owner {
            pid: std::os::unix::process::parent_id(),
            started: process_start(std::os::unix::process::parent_id()).unwrap(),
            ..Owner::me()
        };
        let live: BTreeMap<_, _> = parent.labels().into_iter().collect();
        let err = stale_runs([seen("live", "rpclab-y-live", &live)], Sharing::Alone)
            .unwrap_err()
            .to_string();
        assert!(err.contains("another lab run (live"), "{err}");
    }

    fn labels_of(owner: &Owner) -> BTreeMap<String, String> {
        owner.labels().into_iter().collect()
    }

    #[test]
    fn clean_leaves_a_live_run_alone_and_removes_every_other() {
        let mine = labels_of(&Owner::me());
        let gone = labels_of(&Owner {
            pid: u32::MAX - 1,
            ..Owner::me()
        });
        let elsewhere = labels_of(&Owner {
            host: "another-host".into(),
            ..Owner::me()
        });
        let none = BTreeMap::new();
        let plan = CleanPlan::of([
            seen("live", "a", &mine),
            seen("live", "b", &mine),
            seen("dead", "c", &gone),
            seen("away", "d", &elsewhere),
            seen("old", "e", &none),
        ]);
        let mut removed = plan.remove.clone();
        removed.sort();
        assert_eq!(removed, ["c", "d", "e"]);
        assert_eq!(plan.live, [("live".to_owned(), Owner::me())]);
        let lines = plan.live_lines();
        assert_eq!(lines.len(), 1);
        assert!(lines[0].contains("left run live alone"), "{lines:?}");
        assert!(
            lines[0].contains(&format!("kill {}", std::process::id())),
            "{lines:?}"
        );
    }

    #[test]
    fn checks_run_beside_live_checks_and_nothing_else_shares() {
        let parent = Owner {
            pid: std::os::unix::process::parent_id(),
            started: process_start(std::os::unix::process::parent_id()).unwrap(),
            ..Owner::me()
        };
        let labelled = |sharing: Sharing| -> BTreeMap<String, String> {
            let mut l: BTreeMap<_, _> = parent.labels().into_iter().collect();
            l.insert(LABEL_SHARING.into(), sharing.label().into());
            l
        };
        let check = labelled(Sharing::WithChecks);
        let alone = labelled(Sharing::Alone);
        let unlabelled: BTreeMap<_, _> = parent.labels().into_iter().collect();
        // A check beside a live check: nothing to remove, nothing refused.
        let beside = [
            seen("c", "rpclab-net-c", &check),
            seen("c", "rpclab-thrift-c", &check),
        ];
        assert_eq!(stale_runs(beside, Sharing::WithChecks).unwrap(), vec![]);
        // A measuring run beside a live check is refused...
        let check_only = [seen("c", "rpclab-thrift-c", &check)];
        assert!(stale_runs(check_only, Sharing::Alone).is_err());
        // ...and a check beside a measuring run, or a run of an rpclab
        // that did not label its sharing, or a run half labelled.
        for others in [&alone, &unlabelled] {
            let err = stale_runs([seen("m", "rpclab-m", others)], Sharing::WithChecks)
                .unwrap_err()
                .to_string();
            assert!(err.contains("another lab run (m"), "{err}");
        }
        let mixed = [
            seen("x", "rpclab-a-x", &check),
            seen("x", "rpclab-b-x", &alone),
        ];
        assert!(stale_runs(mixed, Sharing::WithChecks).is_err());
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
