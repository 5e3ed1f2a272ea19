//! `cargo xtask`: rpclab's orchestrator. Its layers are its folders, and
//! each imports only the folders below it (docs/architecture.md, "xtask's
//! layers"; a test reads the folders and fails on an import cycle or an
//! import upwards):
//!
//! * [`cli`]: the commands beyond this file's parsing: `lab reproduce`,
//!   `lab capacity` and what `lab run` and `lab reproduce` do once the
//!   run returns;
//! * [`tools`]: the developer's commands (`scaffold`, `fuzz`, `readme`);
//! * [`bench`]: `bench client` and `bench peers`, the client against its
//!   peers and a raw-socket floor;
//! * [`engine`]: a run on Docker, over its API only, from images to cells;
//! * [`store`]: what a run leaves in its results folder, data only;
//! * [`definitions`]: `compose/` lab definitions, `servers/*/server.toml`,
//!   the seeds and host files;
//! * [`basics`]: the host, CPU sets, confinement, ownership, progress.

mod basics;
mod bench;
mod cli;
mod definitions;
mod engine;
mod store;
mod tools;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};

use basics::{cpus, host, owner};
use cli::{capacity, kube, outcome, reproduce, target};
use definitions::{hosts, lab, manifest, overrides, seeds};
use engine::{docker, prebuild, run};
use store::snapshot;
use tools::{fuzz, readme, scaffold, test};

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "rpclab: a reproducible benchmark lab for RPC frameworks"
)]
struct Cli {
    #[command(subcommand)]
    command: Top,
}

#[derive(Subcommand)]
enum Top {
    /// Run, list and clean the lab.
    Lab {
        #[command(subcommand)]
        command: Box<LabCommand>,
    },
    /// Measure the lab's own instruments (`bench client`: the load client's ceiling).
    Bench {
        #[command(subcommand)]
        command: bench::BenchCommand,
    },
    /// Regenerate the READMEs' generated blocks: README.md's server list
    /// (from the manifests) and claims table (from the reproduction
    /// snapshots under results/), compose/seeds/README.md's time budget
    /// (from the seed definitions). `--check`: fail when one is stale.
    Readme {
        /// Fail, naming the block, when a generated block is stale
        /// instead of rewriting it.
        #[arg(long)]
        check: bool,
    },
    /// Run every fuzz target in turn (nightly, cargo-fuzz) from its golden seeds.
    Fuzz(fuzz::FuzzArgs),
    /// The tests `cargo test --workspace` runs, in two lanes side by side:
    /// the lab's end-to-end tests beside the rest (the README's test
    /// command; `-- ARGS` go to every test binary).
    Test(test::TestArgs),
    /// Scaffold: `new server NAME (--like EXISTING | --protocol P)`.
    New {
        #[command(subcommand)]
        what: scaffold::NewCommand,
    },
}

#[derive(Subcommand)]
enum LabCommand {
    /// Build every image a run of the lab definition needs (base chain, JDK,
    /// registry, each runnable server variant, the profile's load client),
    /// without running anything; a later run builds nothing.
    Build {
        #[command(flatten)]
        servers: ServerSelection,
        /// Folder of extra CA certificates (*.crt) to trust in image builds.
        #[arg(long)]
        ca_certs: Option<PathBuf>,
        /// Show build output.
        #[arg(long, short)]
        verbose: bool,
        /// Build on each role's engine what it runs.
        #[command(flatten)]
        hosts: hosts::HostArgs,
    },
    /// Build images, run every selected server and scenario, write a snapshot
    /// under results/ (target/rpclab-results for a scratch profile such as smoke).
    Run {
        #[command(flatten)]
        servers: ServerSelection,
        #[command(flatten)]
        run: RunFlags,
        #[command(flatten)]
        quick: QuickFlags,
        /// Which engine runs the containers: docker, or kubernetes (the
        /// cluster of KUBECONFIG or ~/.kube/config, with `cargo xtask-kube`;
        /// see docs/kubernetes.md).
        #[arg(long, value_enum, default_value = "docker")]
        engine: kube::EngineChoice,
        /// With --engine kubernetes: push the run's images to this registry
        /// (host[:port][/path]) and have the cluster pull them from there,
        /// instead of loading them into this machine's node.
        #[arg(long, value_name = "REGISTRY")]
        image_registry: Option<String>,
    },
    /// Measure a service the lab did not start, running at --target, as
    /// `lab run` measures its own servers: the lab's scenarios calling
    /// your method (`--call`), at the profile's levels, windows and
    /// repetitions, into a snapshot that `lab report`, `lab compare` and
    /// the exports take. Nothing of the service is built, started, pinned,
    /// confined or costed (the manifest says so); the client runs in its
    /// container on the host's network, pinned to the client's CPUs.
    Bench {
        #[command(flatten)]
        target: Box<target::TargetArgs>,
        /// Lab definition (TOML): its scenarios and profiles.
        #[arg(long, default_value = "compose/lab.toml")]
        lab: PathBuf,
        /// Profile from the lab definition: smoke, standard.
        #[arg(long)]
        profile: Option<String>,
        #[command(flatten)]
        run: RunFlags,
        #[command(flatten)]
        quick: QuickFlags,
    },
    /// Search the highest open-loop rate at which a latency percentile
    /// stays under a bound with no errors and every reply verified, on
    /// one server variant (`lab capacity thrift-java --slo 5ms`): doubling
    /// or halving, then bisecting; writes a snapshot with every step and a
    /// latency-vs-rate chart. Exits with code 99 when no rate holds.
    Capacity(Box<capacity::CapacityArgs>),
    /// List servers, variants, scenarios and profiles.
    List {
        /// Lab definition (TOML) whose scenarios and profiles to list.
        #[arg(long, default_value = "compose/lab.toml")]
        lab: PathBuf,
        /// A server folder from outside the repository, or a folder of
        /// them, relative to the current folder (as `lab run`'s).
        #[arg(long = "servers-dir", value_name = "PATH")]
        servers_dir: Vec<PathBuf>,
    },
    /// Run a source post's seed definition (compose/seeds/<id>.toml) and
    /// compare every published figure and claim with the measurement.
    Reproduce {
        /// Seed ids (`cargo xtask lab list` shows them).
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        seeds: Vec<String>,
        /// Every seed, one after the other.
        #[arg(long)]
        all: bool,
        /// Profile: the seed file's own (`reproduce`: each post's load
        /// shape in interleaved rounds, about 2 hours for all five; seed
        /// 000's `seed`) or the base lab's (smoke-rounds, smoke, standard,
        /// seed: the default, the published call counts).
        #[arg(long)]
        profile: Option<String>,
        #[command(flatten)]
        run: RunFlags,
    },
    /// Re-render a snapshot's summary.md, charts and HTML page from its
    /// results.json and manifest.toml alone (what `lab run` writes, through
    /// the same code).
    Report {
        /// The snapshot folder (results/<...>).
        snapshot: PathBuf,
        /// Show every scenario as JMeter's summary report.
        #[arg(long)]
        jmeter: bool,
        /// Write summary.md, charts/ and report.html here instead of into
        /// the snapshot; with --format, the file to write the export to.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Export each cell's throughput (with its interval) and p99 for a
        /// continuous-benchmarking tool instead of rendering: bmf (bencher),
        /// github-action-benchmark (customBiggerIsBetter, calls/s),
        /// github-action-benchmark-latency (customSmallerIsBetter, p99 in
        /// ms), csv, json; to standard output unless --out is given.
        #[arg(long, conflicts_with_all = ["jmeter", "redecide"])]
        format: Option<rpclab_report::export::Format>,
        /// Decide a reproduction's claims again under its seed's plan as it
        /// stands today, and write them into results.json (in --out when
        /// given, else in the snapshot) as a labelled re-analysis beside
        /// the run's own verdicts, never in their place. Without it a
        /// snapshot's stored verdicts are rendered as they are, and one
        /// without verdicts (older) is decided for the rendering only.
        #[arg(long)]
        redecide: bool,
    },
    /// Compare two snapshots cell by cell, flagging changes beyond their noise.
    Compare {
        /// The earlier snapshot folder.
        a: PathBuf,
        /// The later snapshot folder.
        b: PathBuf,
        /// Exit with code 3 when a regression is found (for CI): a cell
        /// slower beyond its noise (two lab runs), or a decided claim
        /// verdict that flipped (two reproductions of one post). Any
        /// other error exits with 1.
        #[arg(long)]
        fail_on_regression: bool,
        /// Divide b's throughput by the hosts' calibration ratio (b / a).
        #[arg(long)]
        normalize: bool,
    },
    /// Regenerate the snapshot index, <results-dir>/README.md.
    Index {
        /// The folder of snapshots whose README.md to write.
        #[arg(long, default_value = "results")]
        results_dir: PathBuf,
        /// Fail if the index is stale instead of rewriting it.
        #[arg(long)]
        check: bool,
    },
    /// List the lab's containers still present, with their run.
    Ps {
        /// Whose containers: docker's, or the lab's Pods on kubernetes.
        #[arg(long, value_enum, default_value = "docker")]
        engine: kube::EngineChoice,
    },
    /// Remove every container the lab created but a live run's on this
    /// machine, which it names (and with --images, the lab's images).
    Clean {
        /// Remove the lab's images too (the next run rebuilds them).
        #[arg(long)]
        images: bool,
        /// Whose containers: docker's, or on kubernetes every lab
        /// namespace (with its Pods).
        #[arg(long, value_enum, default_value = "docker")]
        engine: kube::EngineChoice,
    },
    /// Check the Kubernetes engine end to end on the cluster of KUBECONFIG
    /// (or ~/.kube/config): its checks, an echo server Pod on an exclusive
    /// core with a verified call in it, the host calibration as Pods, files
    /// in and out of a Pod, every Pod's node, QoS, cpuset and image digest,
    /// and the namespace deleted; prints one JSON line. The image must be
    /// on the node (tools/k8s/load-image) or pullable.
    KubeCheck {
        /// The client image (rpclab-echo, rpclab-client, sh, tar).
        #[arg(long, default_value = "rpclab/client:latest")]
        image: String,
        /// Start ZooKeeper (rpclab/zookeeper:3.9, on the node) as a run's
        /// registry, with the run's registry code, and wait until it serves.
        #[arg(long)]
        with_registry: bool,
        /// Push every image the check uses from the Docker engine to this
        /// registry (host[:port][/path], e.g. 127.0.0.1:5000 of
        /// tools/k8s/registry), and have its Pods pull them from there
        /// (imagePullPolicy IfNotPresent) instead of finding them on the node.
        #[arg(long, value_name = "REGISTRY")]
        image_registry: Option<String>,
    },
}

/// What `lab build` and `lab run` both take to choose the servers: the lab
/// definition, `--only`, folders from outside the repository, and the
/// profile. One struct, so that a build prepares exactly what the same
/// flags would run.
#[derive(clap::Args)]
struct ServerSelection {
    /// Lab definition (TOML).
    #[arg(long, default_value = "compose/lab.toml")]
    lab: PathBuf,
    /// Servers, by folder name or framework (e.g. `grpc-java,thrift`).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// A server folder from outside the repository (server.toml and
    /// Dockerfile, read as the lab's own in servers/), or a folder of
    /// them, relative to the current folder; repeatable. Its servers
    /// run beside the lab's: select them with --only.
    #[arg(long = "servers-dir", value_name = "PATH")]
    servers_dir: Vec<PathBuf>,
    /// Profile from the lab definition: smoke, standard, seed (it also
    /// decides the client's build).
    #[arg(long)]
    profile: Option<String>,
}

impl ServerSelection {
    /// `--servers-dir`'s folders, relative to where xtask was invoked.
    fn servers_dirs(&self, invoked_from: &Path) -> Vec<PathBuf> {
        self.servers_dir
            .iter()
            .map(|d| invoked_from.join(d))
            .collect()
    }
}

/// What `lab run` and `lab reproduce` both take: where each role runs, what
/// the builds trust, where the snapshot goes.
#[derive(clap::Args)]
struct RunFlags {
    #[command(flatten)]
    cpus: cpus::CpuArgs,
    #[command(flatten)]
    hosts: hosts::HostArgs,
    /// Folder of extra CA certificates (*.crt) to trust in image builds.
    #[arg(long)]
    ca_certs: Option<PathBuf>,
    /// Where snapshots go [default: results, or target/rpclab-results
    /// for a scratch profile such as smoke, so a check never edits the
    /// committed results/ and its index].
    #[arg(long)]
    results_dir: Option<PathBuf>,
    /// Show build output and every line of each client's log.
    #[arg(long, short)]
    verbose: bool,
    /// Seconds to wait for a server's ports to be freed by another run.
    #[arg(long, default_value_t = 0)]
    wait_for_ports: u64,
    /// Whose network the run's containers use: `private` (default on one
    /// host: a namespace of the run's own, no host process can reach the
    /// servers) or `host` (the host's 127.0.0.1; the only mode across hosts).
    #[arg(long, value_name = "private|host")]
    network: Option<engine::netns::NetworkChoice>,
    /// Seed of the rounds' random order (profiles with `rounds`), to
    /// replay a run's order [default: drawn from the clock; recorded
    /// in manifest.toml either way].
    #[arg(long)]
    rounds_seed: Option<u64>,
    /// Continue this incomplete snapshot: measure only the cells it
    /// lacks, into it. Refused if the definition, profile, servers,
    /// images or host differ from its manifest's.
    #[arg(long, value_name = "SNAPSHOT", conflicts_with = "results_dir")]
    resume: Option<PathBuf>,
    /// How long to wait for a Docker engine that stops answering mid-run
    /// (`90s`, `5m`) [default: 60s]. Back in time, the interrupted server
    /// starts again and the run goes on from its interrupted cell; not
    /// back, the run stops, its snapshot resumable, with the `--resume`
    /// command as its last line and exit code 75.
    #[arg(long, value_parser = overrides::parse_duration)]
    engine_wait: Option<f64>,
}

impl RunFlags {
    /// `--engine-wait`, or its default.
    fn engine_wait(&self) -> std::time::Duration {
        self.engine_wait
            .map(std::time::Duration::from_secs_f64)
            .unwrap_or(engine::outage::DEFAULT_WAIT)
    }
}

/// What `lab run` alone takes: changes to the profile without editing
/// TOML (recorded in `manifest.toml`'s lab definition as run), a choice of
/// variants, and thresholds that fail the run.
#[derive(clap::Args)]
struct QuickFlags {
    /// Measure each cell for this long (`10s`, `500ms`, `2m`), instead of
    /// the profile's `measure_s` or published call counts.
    #[arg(long, value_parser = overrides::parse_duration)]
    duration: Option<f64>,
    /// Repetitions of each cell (a profile with rounds: rounds).
    #[arg(long)]
    repetitions: Option<u32>,
    /// Concurrency levels of every closed-loop scenario (`1,8,32`);
    /// open-loop scenarios keep their rates.
    #[arg(long, value_delimiter = ',')]
    levels: Vec<u32>,
    /// Run only these variants: `server/variant` (`grpc-java/1.83`) or a
    /// variant's name; repeatable or comma-separated.
    #[arg(long, value_delimiter = ',')]
    variant: Vec<String>,
    /// A limit every cell (each repetition) must hold, as k6's thresholds:
    /// `p99<2ms`, `p50<=500us`, `errors<0.1%`, `errors==0`,
    /// `throughput>5000`; repeatable. A breach is printed in one line and
    /// the command exits with code 99.
    #[arg(long)]
    threshold: Vec<rpclab_model::threshold::Threshold>,
}

fn main() {
    let cli = Cli::parse();
    let root = host::repo_root();
    // Where the command was given: `--servers-dir` is a folder outside the
    // repository, relative to it (the other paths are the repository's,
    // relative to its root, where the command then runs).
    let invoked_from = std::env::current_dir().unwrap_or_else(|_| root.clone());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runtime.block_on(async {
            std::env::set_current_dir(&root)
                .with_context(|| format!("cannot enter {}", root.display()))?;
            match cli.command {
                Top::Lab { command } => lab_command(&root, &invoked_from, *command).await,
                Top::Bench { command } => bench::run(&root, command).await,
                Top::Readme { check } => readme::run(&root, check),
                Top::Fuzz(args) => fuzz::run(&root, args),
                Top::Test(args) => test::run(&root, args),
                Top::New { what } => scaffold::run(&root, what),
            }
        })
    }));
    drop(runtime);
    let result = match outcome {
        Ok(result) => result,
        // A run's scope removed its containers while the panic unwound
        // (crate::engine::scope).
        Err(_) => std::process::exit(101),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        let regression = e
            .downcast_ref::<rpclab_report::compare::RegressionFound>()
            .is_some();
        let breached = e
            .downcast_ref::<rpclab_model::threshold::Breached>()
            .is_some()
            || e.downcast_ref::<capacity::NoRateHolds>().is_some();
        let resumable = e.downcast_ref::<outcome::Resumable>().is_some();
        std::process::exit(if regression {
            rpclab_report::compare::REGRESSION_EXIT_CODE
        } else if breached {
            rpclab_model::threshold::BREACH_EXIT_CODE
        } else if resumable {
            outcome::RESUMABLE_EXIT_CODE
        } else {
            1
        });
    }
}

async fn lab_command(root: &Path, invoked_from: &Path, command: LabCommand) -> Result<()> {
    match command {
        LabCommand::Build {
            servers,
            ca_certs,
            verbose,
            hosts,
        } => {
            let options = prebuild::BuildOptions {
                servers_dirs: servers.servers_dirs(invoked_from),
                lab: servers.lab,
                only: servers.only,
                profile: servers.profile,
                ca_certificates: ca_certs,
                verbose,
                hosts,
            };
            prebuild::build(root, options).await
        }
        LabCommand::Run {
            servers,
            run,
            quick,
            engine,
            image_registry,
        } => {
            let kubernetes = engine == kube::EngineChoice::Kubernetes;
            if kubernetes {
                kube::available("--engine kubernetes")?;
            } else if image_registry.is_some() {
                anyhow::bail!("--image-registry is where a cluster pulls the run's images from: give it with --engine kubernetes");
            }
            let servers_dirs = servers.servers_dirs(invoked_from);
            let ServerSelection {
                lab, only, profile, ..
            } = servers;
            let selection = (lab, only, servers_dirs, profile);
            lab_run(root, selection, run, quick, (kubernetes, image_registry)).await
        }
        LabCommand::Reproduce {
            seeds,
            all,
            profile,
            run,
        } => {
            let ids = if all { seeds::list(root)? } else { seeds };
            lab_reproduce(root, ids, profile, run).await
        }
        LabCommand::Compare {
            a,
            b,
            fail_on_regression,
            normalize,
        } => compare(&a, &b, fail_on_regression, normalize),
        LabCommand::Index { results_dir, check } => {
            let path = rpclab_report::index::write(&results_dir, check)?;
            println!(
                "{} {}",
                path.display(),
                if check { "is up to date" } else { "written" }
            );
            Ok(())
        }
        LabCommand::Capacity(args) => capacity::capacity(root, invoked_from, *args).await,
        LabCommand::Bench {
            target,
            lab,
            profile,
            run,
            quick,
        } => {
            let (folder, name) = target::write_folder(root, invoked_from, &target)?;
            lab_run(
                root,
                (lab, vec![name], vec![folder], profile),
                run,
                quick,
                (false, None),
            )
            .await
        }
        LabCommand::List { lab, servers_dir } => {
            let outside: Vec<PathBuf> = servers_dir.iter().map(|d| invoked_from.join(d)).collect();
            list(root, &lab, &outside)
        }
        LabCommand::Report {
            snapshot,
            out,
            format: Some(format),
            ..
        } => export(&snapshot, format, out),
        LabCommand::Report {
            snapshot,
            jmeter,
            out,
            redecide,
            format: None,
        } => rerender(root, &snapshot, jmeter, out, redecide),
        LabCommand::Ps { engine } => match engine {
            kube::EngineChoice::Docker => ps().await,
            kube::EngineChoice::Kubernetes => kube::ps().await,
        },
        LabCommand::Clean { images, engine } => clean_on(engine, images).await,
        LabCommand::KubeCheck {
            image,
            with_registry,
            image_registry,
        } => kube::check(&image, with_registry, image_registry.as_deref()).await,
    }
}

/// `lab clean` on the engine asked: a Docker engine's run containers (and
/// with `images` the lab's images), or a cluster's lab namespaces.
async fn clean_on(engine: kube::EngineChoice, images: bool) -> Result<()> {
    match engine {
        kube::EngineChoice::Docker => clean(images).await,
        kube::EngineChoice::Kubernetes if images => anyhow::bail!(
            "--images removes the Docker engine's images: run it without --engine kubernetes"
        ),
        kube::EngineChoice::Kubernetes => kube::clean().await,
    }
}

/// `lab run`: the run, then what a finished run writes and prints.
async fn lab_run(
    root: &Path,
    (lab, only, servers_dirs, profile): (PathBuf, Vec<String>, Vec<PathBuf>, Option<String>),
    flags: RunFlags,
    quick: QuickFlags,
    (kubernetes, image_registry): (bool, Option<String>),
) -> Result<()> {
    let engine_wait = flags.engine_wait();
    let run = run::run(
        root,
        run::RunOptions {
            lab,
            only,
            servers_dirs,
            profile,
            cpus: flags.cpus,
            ca_certificates: flags.ca_certs,
            results_dir: flags.results_dir,
            verbose: flags.verbose,
            variants: Vec::new(),
            port_wait_s: flags.wait_for_ports,
            network: flags.network,
            hosts: flags.hosts,
            rounds_seed: flags.rounds_seed,
            plan: None,
            resume: flags.resume,
            variant_names: quick.variant,
            overrides: overrides::Overrides {
                measure_s: quick.duration,
                repetitions: quick.repetitions,
                levels: quick.levels,
            },
            thresholds: quick.threshold,
            engine_wait,
            capacity: None,
            kubernetes,
            image_registry,
        },
    )
    .await?;
    outcome::publish(&run)?;
    if let Some(stopped) = outcome::resumable(&run, &command_line()) {
        return Err(stopped);
    }
    let check = run.results.thresholds.clone();
    run.into_result()?;
    outcome::thresholds(check.as_ref())
}

/// `lab reproduce`: each seed's stand-ins, one seed after the other.
async fn lab_reproduce(
    root: &Path,
    ids: Vec<String>,
    profile: Option<String>,
    flags: RunFlags,
) -> Result<()> {
    let options = reproduce::ReproduceOptions {
        engine_wait: flags.engine_wait(),
        command: command_line(),
        profile,
        cpus: flags.cpus,
        ca_certificates: flags.ca_certs,
        results_dir: flags.results_dir,
        verbose: flags.verbose,
        port_wait_s: flags.wait_for_ports,
        network: flags.network,
        hosts: flags.hosts,
        rounds_seed: flags.rounds_seed,
        resume: flags.resume,
    };
    reproduce::reproduce(root, ids, options).await
}

/// This process's command line, without the program: what a run's
/// `--resume` line repeats.
fn command_line() -> Vec<String> {
    std::env::args().skip(1).collect()
}

/// `lab compare`: two snapshots side by side; with `fail_on_regression`,
/// a regression is the command's error.
fn compare(a: &Path, b: &Path, fail_on_regression: bool, normalize: bool) -> Result<()> {
    let report = rpclab_report::compare::compare_dirs(a, b, normalize)?;
    println!("a: {}\nb: {}\n{}", a.display(), b.display(), report.text);
    match report.regression() {
        Some(what) if fail_on_regression => Err(rpclab_report::compare::RegressionFound(format!(
            "{what} from {} to {}",
            a.display(),
            b.display()
        ))
        .into()),
        _ => Ok(()),
    }
}

/// The seed `id`'s plan as recorded today (for a re-analysis).
fn seed_plan_today(root: &Path, id: &str) -> Result<rpclab_model::plan::RecordedPlan> {
    crate::definitions::seeds::Seed::load(root, id)?.recorded_plan()
}

/// `lab report`: a snapshot rendered again from its files, its claims
/// decided again first with `redecide`.
fn rerender(
    root: &Path,
    snapshot: &Path,
    jmeter: bool,
    out: Option<PathBuf>,
    redecide: bool,
) -> Result<()> {
    let mut results = rpclab_report::snapshot::read_snapshot(snapshot)?;
    let out = out.unwrap_or_else(|| snapshot.to_owned());
    if redecide {
        if let Some(mut r) = results.reproduction.take() {
            let plan = seed_plan_today(root, &r.seed)?;
            let rules = rpclab_report::verdicts::Rules::of(&plan.plan, Some(plan.label(&r.seed)));
            let verdicts = rpclab_report::verdicts::decide(&results, &r, &rules).verdicts;
            // The run's own verdicts stay; a re-analysis under the same
            // plan replaces only its own earlier one.
            r.reanalyses.retain(|a| a.plan.hash != plan.hash);
            eprintln!(
                "decided again under plan {} (beside the run's own verdicts{})",
                plan.label(&r.seed),
                r.plan
                    .as_ref()
                    .map(|p| format!(", plan {}", p.label(&r.seed)))
                    .unwrap_or_default()
            );
            r.reanalyses.push(rpclab_model::result::Reanalysis {
                plan,
                by: host::decider(root),
                verdicts,
            });
            results.reproduction = Some(r);
            std::fs::create_dir_all(&out)?;
            snapshot::write_results(&out, &results)?;
            eprintln!("decided again: {}", out.join("results.json").display());
        }
    }
    let layout = jmeter.then_some(rpclab_report::tables::Layout::Jmeter);
    print!("{}", rpclab_report::tables::render(&results, false, layout));
    if let Some(r) = &results.reproduction {
        print!(
            "{}",
            rpclab_report::reproduction::render(
                &rpclab_report::reproduction::compare(&results, r),
                false
            )
        );
    }
    if let Some(search) = &results.capacity {
        print!("{}", rpclab_report::capacity::render(search, false));
    }
    let written = rpclab_report::write_all(
        &out,
        &rpclab_report::snapshot::name_of(snapshot),
        &results,
        &rpclab_report::snapshot::read_manifest(snapshot),
    )?;
    eprintln!(
        "wrote {}, {} and {} chart(s) under {}",
        written.summary.display(),
        written.page.display(),
        written.charts.len(),
        out.join("charts").display()
    );
    Ok(())
}

/// `lab report --format`: the snapshot's figures for a benchmarking tool,
/// to `out` or standard output.
fn export(
    snapshot: &Path,
    format: rpclab_report::export::Format,
    out: Option<PathBuf>,
) -> Result<()> {
    let results = rpclab_report::snapshot::read_snapshot(snapshot)?;
    let text = rpclab_report::export::export(&results, format);
    match out {
        Some(path) => {
            std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
        }
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

/// `lab ps`: the lab's containers, each with its run and whether its
/// orchestrator still lives.
async fn ps() -> Result<()> {
    let engine = docker::Engine::connect().await?;
    let containers = engine.lab_containers(None).await?;
    if containers.is_empty() {
        println!("no lab container");
    }
    for c in containers {
        let owner = match owner::Owner::from_labels(&c.labels) {
            Some(o) => format!(
                "pid {} on {} ({})",
                o.pid,
                o.host,
                match o.liveness() {
                    owner::Liveness::Alive => "running",
                    owner::Liveness::Gone => "gone: the next run removes it",
                    owner::Liveness::Unknown => "another host",
                }
            ),
            None => "no owner label".to_owned(),
        };
        println!(
            "{}  {}  run {}  {owner}",
            &c.id[..12.min(c.id.len())],
            c.name,
            c.run
        );
    }
    Ok(())
}

/// `lab clean`: every lab container but a live run's on this machine
/// (`owner::CleanPlan`), and with `images` every lab image.
async fn clean(images: bool) -> Result<()> {
    let engine = docker::Engine::connect().await?;
    let found = engine.lab_containers(None).await?;
    let plan = owner::CleanPlan::of(found.iter().map(|c| c.seen()));
    for id in &plan.remove {
        engine.remove(id).await?;
    }
    println!("removed {} lab container(s)", plan.remove.len());
    for line in plan.live_lines() {
        println!("{line}");
    }
    if images {
        let n = engine.remove_lab_images().await?;
        println!("removed {n} lab image(s)");
    }
    Ok(())
}

fn list(root: &Path, lab_path: &Path, servers_dirs: &[PathBuf]) -> Result<()> {
    let lab = lab::Lab::load(lab_path)?;
    let mut outside = lab.servers_dirs();
    outside.extend(servers_dirs.iter().cloned());
    let manifests = manifest::load_with(root, &outside)?;
    println!("servers (servers/<name>/server.toml):");
    for m in &manifests {
        println!(
            "  {:<16} framework {:<8} protocol {:<8} port {:<6} registry {:?}",
            m.name, m.framework, m.protocol, m.port, m.registry
        );
        println!("  {:<16} {}", "", m.description);
        if let Some(folder) = &m.outside {
            println!("  {:<16} from {}", "", folder.display());
        }
        if let Some(why) = m.blocked() {
            println!("  {:<16} not runnable yet: {why}", "");
        }
        for v in &m.variants {
            match &v.unavailable {
                None => println!("  {:<16}   variant {:<10} {}", "", v.name, v.version),
                Some(why) => println!(
                    "  {:<16}   variant {:<10} {} — not runnable: {why}",
                    "", v.name, v.version
                ),
            }
        }
    }
    println!(
        "\nlab {} ({}): profile {}",
        lab.def.name,
        lab_path.display(),
        lab.def.profile
    );
    println!("scenarios:");
    for s in &lab.scenarios {
        let load = match (&s.shape, &s.open) {
            (Some(shape), _) => format!("{shape:?} at {:?}", s.concurrency),
            (None, Some(open)) => format!("open loop ({}) at {:?} calls/s", open.arrival, s.rates),
            (None, None) => "?".to_owned(),
        };
        println!(
            "  {:<16} {:<12} {load}: {}",
            s.name,
            s.operation.to_string(),
            s.description
        );
    }
    match seeds::list(root) {
        Ok(ids) if !ids.is_empty() => {
            println!("seeds (compose/seeds/<id>.toml, `lab reproduce <id>`):");
            for id in ids {
                match seeds::Seed::load(root, &id) {
                    Ok(seed) => println!("  {:<24} {}", id, seed.def.title),
                    Err(e) => println!("  {:<24} does not load: {e:#}", id),
                }
            }
        }
        _ => {}
    }
    println!(
        "profiles: {}",
        lab.def
            .profiles
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}
