//! What every part of a run shares ([`RunContext`]), and the run's course:
//! plan, build and calibrate, open the network, then measure in the run's
//! mode: in blocks of repetitions ([`super::blocks`]), in interleaved rounds
//! ([`super::interleaved`]) or as a capacity search ([`super::search`]).

use super::prepare::{Prepared, RunOptions};
use super::record::{Machines, Record};
use crate::basics::host;
use crate::basics::progress::RunBar;
use crate::basics::role::Role;
use crate::basics::run_id::RunId;
use crate::definitions::manifest::{Manifest, Variant};
use crate::engine::containers::Network;
use crate::engine::engines::{self, Engines};
use crate::engine::images::{Builder, PARALLEL_SERVER_BUILDS};
use crate::engine::netns::{self, NetworkChoice};
use crate::engine::outage::Outage;
use crate::engine::plan::{self, Filters, Plan, Planned};
use crate::engine::resume::Interrupted;
use crate::engine::run_engine::{RunEngine, RunEngines};
use anyhow::{bail, Result};
use rpclab_model::manifest::{HostRecord, ServerRecord};
use rpclab_model::phases::{ClientTimes, Phase, Phases};
use rpclab_model::result::Calibration;
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::path::Path;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// What the parts of a run share: its definition as run, its engines and
/// CPU sets, and what it learns once (the progress bar's total, the
/// client's clock offset, the network).
pub struct RunContext<'a> {
    pub root: &'a Path,
    /// What the command line asked.
    pub opts: &'a RunOptions,
    /// The run it prepared: the definition and profile as run, the
    /// servers, scenarios, variants and CPU sets.
    pub prepared: &'a Prepared<'a>,
    /// The server role's engine (`run_engines.server`).
    pub engine: &'a RunEngine,
    /// Each role's engine for its containers: Docker's, or a cluster's.
    pub run_engines: &'a RunEngines,
    /// The Docker engines images are built on (each role's; on a cluster,
    /// this machine's), with the run's roles.
    pub engines: &'a Engines,
    /// Every server manifest the run read (the selected and the others):
    /// an interleaved run moves no server onto another's port.
    pub manifests: &'a [Manifest],
    pub run_id: &'a RunId,
    /// Seed of an interleaved run's order.
    pub rounds_seed: u64,
    /// The snapshot a resumed run continues.
    pub resuming: Option<&'a Interrupted>,
    /// `--network`, checked against the run's machines.
    pub network_choice: NetworkChoice,
    /// What the run does when an engine stops answering.
    pub outage: Outage<'a>,
    /// Cells done out of the run's total, once the total is known.
    pub bar: OnceLock<RunBar>,
    /// Seconds the client's clock is ahead of the orchestrator's, once
    /// measured (0 when the client shares the orchestrator's machine).
    pub client_clock_offset_s: OnceLock<f64>,
    /// The network the run's containers join, once its holder is up
    /// (after the images are built).
    pub network: OnceLock<Network>,
    /// The address of the running registry, where it has one of its own
    /// (a Pod's IP): client options that name a registry on 127.0.0.1
    /// name it there instead ([`RunContext::client_options`]).
    pub registry_address: Mutex<Option<String>>,
    /// Where this invocation's time went so far, by phase: each span the
    /// orchestrator awaits is added once it ends (never on the client's
    /// path: the client is in its own container and process).
    pub phases: Mutex<Phases>,
}

impl RunContext<'_> {
    /// The network the run's servers, registries and clients use.
    pub fn network(&self) -> &Network {
        self.network.get().unwrap_or(&Network::Host)
    }

    /// One cell done, on the bar.
    pub fn cell_done(&self) {
        if let Some(bar) = self.bar.get() {
            bar.cell_done();
        }
    }

    /// Adds `took` to `phase` of this invocation's time.
    pub fn spent(&self, phase: Phase, took: Duration) {
        let mut phases = self.phases.lock().unwrap_or_else(PoisonError::into_inner);
        phases.add(phase, took);
    }

    /// Awaits `work`, its time added to `phase` whether it succeeds or not.
    pub async fn timed<T>(&self, phase: Phase, work: impl Future<Output = T>) -> T {
        let began = Instant::now();
        let done = work.await;
        self.spent(phase, began.elapsed());
        done
    }

    /// Adds a cell whose client ran for `wall` and reported `client`: its
    /// warm-up, window and cool-down, the rest the client's container.
    pub fn cell_took(&self, wall: Duration, client: ClientTimes) {
        let mut phases = self.phases.lock().unwrap_or_else(PoisonError::into_inner);
        phases.add_cell(wall, client);
    }

    /// This invocation's time by phase, closed by its `wall` time (the
    /// rest is `other`).
    pub fn phases_of(&self, wall: Duration) -> Phases {
        let phases = self.phases.lock().unwrap_or_else(PoisonError::into_inner);
        phases.clone().closed(wall)
    }

    /// Plans the run, builds and calibrates, then measures the plan: in
    /// blocks of repetitions, one server variant after the other, in
    /// interleaved rounds, or as a capacity search.
    pub async fn run_all(&self, record: &mut Record) -> Result<()> {
        let selected = &self.prepared.selected[..];
        let plan = plan::plan(
            &self.prepared.scenarios,
            &self.prepared.profile,
            selected,
            &Filters {
                profile: &self.prepared.def.profile,
                variants: &self.prepared.variants,
                all_local: self.engines.roles.all_local(),
            },
        )?;
        // A resumed run measures only what its snapshot lacks (a new
        // snapshot lacks every cell).
        let plan = plan::remaining(plan, &record.snapshot.results.cells);
        let cells = plan.cells();
        let Plan {
            servers,
            runnable,
            levels,
        } = plan;
        record.planned(servers)?;
        let runnable = &runnable;
        // A check may measure while the rest of its images build.
        let first_only = self.measures_while_building();
        // Built again (nothing changed: found by hash) whenever an engine
        // that stopped answering came back.
        let later = self
            .through_outage(record, |record, _| {
                Box::pin(self.build_and_calibrate(selected, runnable, first_only, record))
            })
            .await??;
        let network = self.timed(Phase::Start, self.open_network()).await?;
        let _ = self.network.set(network);
        if runnable.is_empty() {
            bail!(none_can_run(&record.manifest().servers));
        }
        if let Some(asked) = &self.opts.capacity {
            // The search's steps at most, and its hint.
            let most = asked.budget + u32::from(asked.start_rate.is_none());
            let _ = self.bar.set(RunBar::new(most.into()));
            // One variant: its error is the run's.
            return self.run_server(&runnable[0], record).await;
        }
        let _ = self.bar.set(RunBar::new(cells as u64));
        if let Some(policy) = self.prepared.profile.rounds {
            // Started over, from the rounds' first missing cell, whenever
            // an engine that stopped answering came back.
            let levels = &levels;
            return self
                .through_outage(record, |record, _| {
                    Box::pin(self.run_rounds(runnable, levels, policy, record))
                })
                .await?;
        }
        if let Some(later) = later {
            return self.run_while_building(runnable, later, record).await;
        }
        for planned in runnable.iter().filter(|p| !p.cells.is_empty()) {
            self.run_server_through(planned, record).await?;
        }
        Ok(())
    }

    /// The network the run's containers use: the engine's own (a
    /// cluster's Pod network), or the one the run opens on Docker
    /// ([`netns::open`]).
    async fn open_network(&self) -> Result<Network> {
        match (self.engine.own_network(), self.engine.docker()) {
            (Some(network), _) => Ok(network),
            (None, Some(docker)) => {
                netns::open(
                    docker,
                    self.network_choice,
                    self.run_id,
                    &self.prepared.split.client,
                )
                .await
            }
            (None, None) => bail!("the run's engine has no network of its own, and is not Docker"),
        }
    }

    /// Whether the run measures its first server while the others' images
    /// build: a check whose numbers are not read (a `scratch` profile, such
    /// as `smoke`), in blocks, on one engine, not resumed. Builds beside a
    /// measurement share its CPUs, which a run whose numbers are read must
    /// never do; a check of every variant waited for all of its images
    /// first (32 on a cold machine, the longest wait of a cold CI).
    fn measures_while_building(&self) -> bool {
        self.prepared.profile.scratch
            && self.prepared.profile.rounds.is_none()
            && self.opts.capacity.is_none()
            && self.resuming.is_none()
            && self.engines.roles.is_single()
            // A cluster gets its images once they are all built.
            && self.engine.docker().is_some()
    }

    /// Measures `runnable` in blocks, one variant after the other, while
    /// `later`'s images build in plan order ([`PARALLEL_SERVER_BUILDS`] at a
    /// time): each variant waits for its own image (that wait is the run's
    /// build phase), and a variant whose image failed to build is that
    /// variant's error, as a server that fails to start is.
    async fn run_while_building(
        &self,
        runnable: &[Planned<'_>],
        later: Later<'_>,
        record: &mut Record,
    ) -> Result<()> {
        let Later {
            mut builder,
            pending,
        } = later;
        let waits_for: BTreeSet<usize> = pending.iter().copied().collect();
        let (built_tx, mut built_rx) = tokio::sync::mpsc::unbounded_channel();
        let building = async move {
            for chunk in pending.chunks(PARALLEL_SERVER_BUILDS) {
                let wanted: Vec<(&Manifest, &Variant)> = chunk
                    .iter()
                    .map(|&i| (runnable[i].manifest, runnable[i].variant))
                    .collect();
                let outcomes = builder.servers_each(&wanted).await;
                for (&i, outcome) in chunk.iter().zip(outcomes) {
                    if built_tx.send((i, outcome)).is_err() {
                        // The measuring ended (an error): build no more.
                        return;
                    }
                }
            }
        };
        let measuring = async {
            let mut built: BTreeMap<usize, Result<String>> = BTreeMap::new();
            for (i, planned) in runnable.iter().enumerate() {
                if planned.cells.is_empty() {
                    continue;
                }
                if waits_for.contains(&i) {
                    let began = Instant::now();
                    while !built.contains_key(&i) {
                        let Some((j, outcome)) = built_rx.recv().await else {
                            break;
                        };
                        built.insert(j, outcome);
                    }
                    self.spent(Phase::Build, began.elapsed());
                    let (m, v) = (planned.manifest, planned.variant);
                    match built.remove(&i) {
                        Some(Ok(id)) => {
                            record.server_image_built(planned.record, m.image(v), id)?
                        }
                        Some(Err(e)) => {
                            record.server_failed(&m.name, &v.name, &e)?;
                            continue;
                        }
                        None => bail!("the image builds ended without {}'s", m.image(v)),
                    }
                }
                self.run_server_through(planned, record).await?;
            }
            drop(built_rx);
            Ok(())
        };
        let ((), measured) = tokio::join!(building, measuring);
        measured
    }

    /// Builds every image the run needs on each engine (a build error
    /// should not come after an hour of measuring), then calibrates the
    /// host and describes each engine's machine, into the manifest; each
    /// part's time to its phase, failed or not.
    ///
    /// With `first_only`, only the first variant's server image is built
    /// (the base chain, registry and client images all the same): the
    /// rest, and the server engine's builder that builds them, come back.
    async fn build_and_calibrate(
        &self,
        selected: &[&Manifest],
        runnable: &[Planned<'_>],
        first_only: bool,
        record: &mut Record,
    ) -> Result<Option<Later<'_>>> {
        let (builders, pending) = self
            .timed(
                Phase::Build,
                self.build(selected, runnable, first_only, record),
            )
            .await?;
        self.timed(Phase::Build, self.load_into_cluster(runnable))
            .await?;
        self.timed(Phase::Calibration, self.calibrate_hosts(&builders, record))
            .await?;
        if pending.is_empty() {
            return Ok(None);
        }
        let (builder, _) = builders.into_iter().next().expect("the server's engine");
        Ok(Some(Later { builder, pending }))
    }

    /// Builds the images of `selected` on every engine that runs them, and
    /// the static client with its image on each: the builders, each with
    /// its engine's roles, and (with `first_only`) the indexes in
    /// `runnable` of the server images left to build. The server images
    /// built go into the manifest.
    async fn build(
        &self,
        selected: &[&Manifest],
        runnable: &[Planned<'_>],
        first_only: bool,
        record: &mut Record,
    ) -> Result<(Vec<(Builder<'_>, Vec<Role>)>, Vec<usize>)> {
        // The client compiles in the background while the images build.
        let client_build = host::StaticBuild::start(self.root, self.prepared.profile.client_build)?;
        // Every image is built on each engine that runs it (docs/multi-host.md,
        // "Images on each engine"); the server's engine comes first.
        let mut builders = crate::engine::prebuild::chains(
            self.engines,
            self.root,
            &self.prepared.def.build,
            self.opts.verbose,
            selected,
        )
        .await?;
        // A target is no image of the lab's.
        let mut to_build: Vec<usize> = (0..runnable.len())
            .filter(|&i| runnable[i].manifest.target.is_none())
            .collect();
        let pending = if first_only && to_build.len() > 1 {
            to_build.split_off(1)
        } else {
            Vec::new()
        };
        let built: Vec<&Planned<'_>> = to_build.iter().map(|&i| &runnable[i]).collect();
        let wanted: Vec<(&Manifest, &Variant)> =
            built.iter().map(|p| (p.manifest, p.variant)).collect();
        let ids = builders[0].0.servers(&wanted).await?;
        record.server_images(
            built
                .iter()
                .zip(&ids)
                .map(|(p, id)| (p.record, format!("{}@{id}", p.manifest.image(p.variant))))
                .collect(),
        )?;
        let binary = client_build.finish()?;
        // Every engine runs the client image: the client's for the load,
        // the others for their calibration and CPU model.
        for (builder, _) in &mut builders {
            builder.client(&binary).await?;
        }
        Ok((builders, pending))
    }

    /// On a cluster, the images the run's Pods use, built on this
    /// machine's Docker engine: pushed to `--image-registry`, from which the
    /// nodes pull them, or else loaded into this machine's node's runtime
    /// (`tools/k8s/load-image`); on Docker, nothing.
    async fn load_into_cluster(&self, runnable: &[Planned<'_>]) -> Result<()> {
        #[cfg(feature = "kubernetes")]
        if self.engine.cluster().is_some() {
            let mut wanted = vec![crate::engine::images::CLIENT.to_owned()];
            for p in runnable.iter().filter(|p| p.manifest.target.is_none()) {
                wanted.push(p.manifest.image(p.variant));
                if p.manifest.registry != crate::definitions::manifest::Registry::None {
                    wanted.push(crate::engine::images::ZOOKEEPER.to_owned());
                }
            }
            wanted.sort();
            wanted.dedup();
            let Some(registry) = &self.opts.image_registry else {
                return crate::engine::kubernetes::load_images(self.root, &wanted).await;
            };
            use crate::engine::kubernetes::push;
            let registry = push::ImageRegistry::parse(registry)?;
            let docker = crate::engine::docker::Engine::connect().await?;
            let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
            let pushed = push::push_all(&docker, &registry, &wanted).await?;
            if let Some(cluster) = self.engine.cluster() {
                cluster.use_pushed(pushed);
            }
            return Ok(());
        }
        let _ = runnable;
        Ok(())
    }

    /// Calibrates the host and describes each machine of `builders`, into
    /// the manifest (which a resumed run's images must match first).
    async fn calibrate_hosts(
        &self,
        builders: &[(Builder<'_>, Vec<Role>)],
        record: &mut Record,
    ) -> Result<()> {
        let calibration = self.calibrate().await?;
        let mut hosts: Vec<HostRecord> = Vec::new();
        for (builder, roles) in builders {
            hosts.push(self.describe(builder, roles, &calibration).await?);
        }
        let client_clock = hosts
            .iter()
            .find(|h| h.roles.iter().any(|r| r == Role::Client.as_str()))
            .map(|h| h.clock)
            .expect("one host runs the client");
        let foreign = self.engines.client_clock_is_foreign();
        let _ = self.client_clock_offset_s.set(if foreign {
            client_clock.offset_ms / 1e3
        } else {
            0.0
        });
        for h in &mut hosts {
            h.clock_applied = foreign && h.roles.iter().any(|r| r == Role::Client.as_str());
        }
        let machines = Machines {
            calibration,
            hosts,
            images: builders[0].0.built.clone().into_iter().collect(),
        };
        record.machines(machines, |images| match self.resuming {
            Some(interrupted) => interrupted.check_images(images),
            None => Ok(()),
        })
    }

    /// The host calibration: the server's CPUs on its engine, the client's
    /// on its own.
    async fn calibrate(&self) -> Result<Calibration> {
        eprintln!(
            "calibrating the host: CPU and loopback on the server's CPUs ({}) and the client's ({})",
            self.prepared.split.server, self.prepared.split.client
        );
        let calibration = crate::engine::calibration::measure(
            &self.run_engines.server,
            &self.run_engines.client,
            self.run_id,
            &self.prepared.split.server,
            &self.prepared.split.client,
            self.engines.roles.is_single(),
        )
        .await?;
        eprintln!(
            "  server CPUs: {:.0} CPU rounds/s, {:.0} loopback round trips/s; client CPUs: {:.0}, {:.0}",
            calibration.server.cpu_rounds_per_s,
            calibration.server.loopback_round_trips_per_s,
            calibration.client.cpu_rounds_per_s,
            calibration.client.loopback_round_trips_per_s
        );
        Ok(calibration)
    }

    /// What the manifest records of the machine of `builder`'s engine,
    /// which runs `roles`: with the calibration of those roles' CPU sets
    /// and the images it built.
    async fn describe(
        &self,
        builder: &Builder<'_>,
        roles: &[Role],
        calibration: &Calibration,
    ) -> Result<HostRecord> {
        let mut record = match self.engine.docker() {
            Some(_) => engines::describe(builder.engine, roles, self.run_id).await?,
            // One cluster runs every role.
            None => self.engine.describe(roles, self.run_id).await?,
        };
        for (role, figures) in [
            (Role::Server, &calibration.server),
            (Role::Client, &calibration.client),
        ] {
            if roles.contains(&role) {
                record.calibration.insert(role.to_string(), figures.clone());
            }
        }
        record.images = builder.built.clone().into_iter().collect();
        if !self.engines.roles.is_single() {
            eprintln!(
                "  {} ({}): {} cores, {}, clock {:+.3} ms ± {:.3} ms",
                record.endpoint,
                record.roles.join(", "),
                record.cores,
                record.cpu_model,
                record.clock.offset_ms,
                record.clock.uncertainty_ms
            );
        }
        Ok(record)
    }
}

/// Why a run none of whose selected servers can run stops, naming each.
/// The server images a check builds while it measures
/// ([`RunContext::run_while_building`]): the server engine's builder, and
/// the indexes of the variants whose images are still to build, in plan
/// order.
struct Later<'b> {
    builder: Builder<'b>,
    pending: Vec<usize>,
}

fn none_can_run(servers: &[ServerRecord]) -> String {
    let reasons: Vec<String> = servers
        .iter()
        .map(|s| {
            format!(
                "{} {}: {}",
                s.name,
                s.variant,
                s.not_run.as_deref().unwrap_or("?")
            )
        })
        .collect();
    format!(
        "none of the selected servers can run:\n- {}",
        reasons.join("\n- ")
    )
}
