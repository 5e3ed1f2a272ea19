//! The run's record: its snapshot (`results.json`, the cells' folders) and
//! its `manifest.toml`.
//!
//! The manifest changes only through the updates below, one per kind of
//! change (the plan's servers, their images, the machines, the ports an
//! interleaved run moved, the end), and each is written at once through
//! the store: a run that stops anywhere leaves a manifest that says how far
//! it got. The one exception is a resumed snapshot, whose manifest stays
//! as the interrupted run left it until its images are known to be those
//! it measured ([`Record::machines`]): a refused resume changes nothing.
//!
//! A failure charged to one server variant is written here too
//! ([`Record::server_failed`]), in the one form `results.json` keeps.

use super::prepare::{Prepared, RunOptions};
use crate::basics::role::Role;
use crate::engine::resume::Interrupted;
use crate::store::snapshot::Snapshot;
use anyhow::{Context, Result};
use rpclab_model::manifest::{
    CpuPinning, HostInfo, HostRecord, RunManifest, ServerRecord, Stopped,
};
use rpclab_model::phases::Phases;
use rpclab_model::result::Calibration;
use rpclab_model::run_error::RunError;
use rpclab_model::threshold::ThresholdCheck;
use std::collections::BTreeMap;
use std::fmt::Display;

/// What only the run's start knows, beside what it prepared.
pub struct Opening<'a> {
    /// The run's id, or the interrupted run's when resuming.
    pub run_id: String,
    /// When the run started, or the interrupted run's start when resuming.
    pub started_utc: String,
    /// Every resume's start, this one's included.
    pub resumed_utc: Vec<String>,
    pub host: HostInfo,
    /// The git revision and the files that differ from it.
    pub git: (String, Vec<String>),
    /// The snapshot this run continues.
    pub resuming: Option<&'a Interrupted>,
    /// What the run's network exposes ([`crate::engine::netns::exposure`]).
    pub network: String,
}

/// The manifest a run starts with: what it was asked, what it prepared,
/// and where it runs; the build, the machines and the end come later.
pub fn opening(prepared: &Prepared<'_>, opts: &RunOptions, o: Opening<'_>) -> Result<RunManifest> {
    let (sha, dirty) = o.git;
    let split = &prepared.split;
    Ok(RunManifest {
        run_id: o.run_id,
        rpclab_version: env!("CARGO_PKG_VERSION").to_owned(),
        git_revision: sha,
        git_dirty: !dirty.is_empty(),
        git_dirty_files: dirty,
        started_utc: o.started_utc,
        resumed_utc: o.resumed_utc,
        profile: prepared.def.profile.clone(),
        client_build: Some(prepared.profile.client_build),
        only: prepared.only.clone(),
        variants: (prepared.variants.iter())
            .map(|(s, v)| format!("{s}/{v}"))
            .collect(),
        thresholds: opts.thresholds.iter().map(ToString::to_string).collect(),
        host: o.host,
        cpus: CpuPinning {
            server: split.server.clone(),
            registry: split.registry.clone(),
            client: split.client.clone(),
            note: split.note.clone(),
        },
        calibration: None,
        hosts: Vec::new(),
        pods: Vec::new(),
        images: BTreeMap::new(),
        servers: Vec::new(),
        host_load: None,
        stopped: None,
        capacity: opts.capacity.clone(),
        // A resumed run keeps its earlier invocations' time until it
        // closes, which adds its own ([`Record::close`]).
        phases: o.resuming.and_then(Interrupted::phases),
        // A resumed run in rounds replays the interrupted run's orders.
        rounds_seed: prepared.profile.rounds.map(|_| {
            o.resuming
                .and_then(Interrupted::rounds_seed)
                .or(opts.rounds_seed)
                .unwrap_or_else(crate::engine::rounds::fresh_seed)
        }),
        plan: opts.plan.clone(),
        network: Some(o.network),
        lab_confinement: BTreeMap::from([
            (
                Role::Registry.to_string(),
                crate::basics::confine::registry(),
            ),
            (Role::Client.to_string(), crate::basics::confine::client()),
        ]),
        lab: toml::Table::try_from(&prepared.def)
            .context("the lab definition does not render as a TOML table")?,
    })
}

/// A moment as the manifest records it (RFC 3339).
pub fn utc(at: time::OffsetDateTime) -> String {
    at.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// What the manifest records of the machines, once the images are built
/// and the host calibrated.
pub struct Machines {
    pub calibration: Calibration,
    pub hosts: Vec<HostRecord>,
    /// The server engine's images, by tag: their ids.
    pub images: BTreeMap<String, String>,
}

/// A run's snapshot and manifest as the run fills them.
pub struct Record {
    pub snapshot: Snapshot,
    manifest: RunManifest,
    /// A resumed snapshot's manifest, not to be rewritten yet.
    held: bool,
    /// The time its earlier invocations recorded, when it resumes a
    /// snapshot ([`RunManifest::phases`] as it opened).
    earlier: Option<Phases>,
}

impl Record {
    /// The record of a run in `snapshot`, starting with `manifest`, which
    /// is written at once unless the run resumes an interrupted snapshot.
    pub fn open(snapshot: Snapshot, manifest: RunManifest, resumed: bool) -> Result<Record> {
        let record = Record {
            snapshot,
            earlier: manifest.phases.clone(),
            manifest,
            held: resumed,
        };
        record.write()?;
        Ok(record)
    }

    pub fn manifest(&self) -> &RunManifest {
        &self.manifest
    }

    /// Every selected server variant, with why it does not run when it
    /// does not ([`crate::engine::plan::Plan::servers`]).
    pub fn planned(&mut self, servers: Vec<ServerRecord>) -> Result<()> {
        self.manifest.servers = servers;
        self.write()
    }

    /// The image each planned server runs, by its index among the
    /// manifest's servers.
    pub fn server_images(&mut self, images: Vec<(usize, String)>) -> Result<()> {
        for (record, image) in images {
            self.manifest.servers[record].image = image;
        }
        self.write()
    }

    /// A server image built after the machines were recorded (a check that
    /// measures while the rest of its images build): the server's record
    /// and the server engine's images.
    pub fn server_image_built(&mut self, record: usize, tag: String, id: String) -> Result<()> {
        self.manifest.servers[record].image = format!("{tag}@{id}");
        self.manifest.images.insert(tag, id);
        self.write()
    }

    /// The machines, their calibration and images. `check` sees the
    /// images first: a resumed run refuses them there when they are not
    /// those its snapshot measured, and its manifest stays untouched.
    pub fn machines(
        &mut self,
        machines: Machines,
        check: impl FnOnce(&BTreeMap<String, String>) -> Result<()>,
    ) -> Result<()> {
        let Machines {
            calibration,
            hosts,
            images,
        } = machines;
        self.manifest.calibration = Some(calibration);
        self.manifest.hosts = hosts;
        self.manifest.images = images;
        check(&self.manifest.images)?;
        self.held = false;
        self.write()
    }

    /// The ports an interleaved run moved servers to, by their index among
    /// the manifest's servers.
    pub fn moved_ports(&mut self, moved: Vec<(usize, u16)>) -> Result<()> {
        for (record, port) in moved {
            self.manifest.servers[record].port = Some(port);
        }
        self.write()
    }

    /// The Pods a run on Kubernetes ran so far, as the cluster recorded
    /// them (a resumed run's earlier ones kept).
    #[cfg(feature = "kubernetes")]
    pub fn pods(&mut self, pods: Vec<rpclab_model::manifest::PodRecord>) -> Result<()> {
        for pod in pods {
            self.manifest
                .pods
                .retain(|p| !(p.namespace == pod.namespace && p.pod == pod.pod));
            self.manifest.pods.push(pod);
        }
        self.write()
    }

    /// A failure of one server variant's work, which costs that variant
    /// its (remaining) cells and not the run: said, and kept in
    /// `results.json` as data (server, variant, why).
    pub fn server_failed(&mut self, server: &str, variant: &str, e: &dyn Display) -> Result<()> {
        crate::say!("error: {e:#}");
        self.snapshot
            .error(RunError::of_variant(server, variant, format!("{e:#}")))
    }

    /// The end of the run, however it ended (`outcome`): its error, the
    /// host's load over every window and where its time went (`spent`, this
    /// invocation's, added to the earlier invocations' of a resumed run),
    /// the manifest written a last time (a resumed one too), every cell
    /// judged by `thresholds`, and the results marked complete or not.
    pub fn close(
        mut self,
        outcome: &Result<()>,
        thresholds: &[rpclab_model::threshold::Threshold],
        spent: Phases,
    ) -> Result<(Snapshot, RunManifest)> {
        if let Err(e) = outcome {
            self.snapshot.error(RunError::of_run(format!("{e:#}")))?;
        }
        self.manifest.host_load = crate::engine::host_load::summarise(&self.snapshot.results.cells);
        if let Some(h) = &self.manifest.host_load {
            if h.busy_windows > 0 {
                eprintln!(
                    "the host was busy beside the lab in {} of {} windows (flagged host-busy): other processes used up to {:.2} core(s) of the server's CPUs, {:.2} of the client's, steal up to {:.2}",
                    h.busy_windows, h.windows, h.other_server_cores_max, h.other_client_cores_max, h.steal_cores_max
                );
            }
        }
        self.manifest.phases = Some(total(self.earlier.as_ref(), spent));
        self.manifest.stopped = outcome.as_ref().err().map(|e| Stopped {
            utc: utc(time::OffsetDateTime::now_utc()),
            why: format!("{e:#}"),
        });
        self.held = false;
        self.write()?;
        if !thresholds.is_empty() {
            self.snapshot.results.thresholds = Some(ThresholdCheck::of_cells(
                thresholds,
                &self.snapshot.results.cells,
            ));
        }
        let complete = outcome.is_ok() && self.snapshot.results.errors.is_empty();
        self.snapshot.finish(complete)?;
        Ok((self.snapshot, self.manifest))
    }

    fn write(&self) -> Result<()> {
        if self.held {
            return Ok(());
        }
        self.snapshot.write_manifest(&self.manifest)
    }
}

/// A run's time by phase: this invocation's (`spent`), added to what its
/// earlier invocations recorded when it resumes a snapshot that has some.
/// An invocation killed before it closed recorded nothing: its time is
/// lost, not guessed.
fn total(earlier: Option<&Phases>, spent: Phases) -> Phases {
    match earlier {
        Some(earlier) => earlier.plus(&spent),
        None => spent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpclab_model::phases::Phase;
    use std::time::Duration;

    fn invocation(build_s: u64, wall_s: u64) -> Phases {
        let mut p = Phases::default();
        p.add(Phase::Build, Duration::from_secs(build_s));
        p.closed(Duration::from_secs(wall_s))
    }

    #[test]
    fn a_resumed_run_adds_its_time_to_the_recorded_and_a_new_one_is_its_own() {
        let first = invocation(60, 100);
        let second = invocation(5, 40);
        let resumed = total(Some(&first), second.clone());
        assert_eq!((resumed.build, resumed.wall), (65.0, 140.0));
        assert_eq!(resumed.other, first.other + second.other);
        assert_eq!(total(None, second.clone()), second);
    }
}
