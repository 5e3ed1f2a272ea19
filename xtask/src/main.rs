//! `cargo xtask`: rpclab's orchestrator.
//!
//! * [`docker`]: the Docker engine, over its API only;
//! * [`images`]: the image chain and content-hash rebuilds;
//! * [`manifest`]: server manifests (`servers/<name>/server.toml`);
//! * [`lab`]: `compose/` lab definitions, scenarios and profiles;
//! * [`run`]: `lab run`, server by server, cell by cell;
//! * [`snapshot`] and [`report`]: what a run leaves in `results/`;
//! * [`bench`]: `bench client`, the load client's own ceiling, with
//!   [`client_container`] (one client cell in its container, shared with `run`).

mod aggregate;
mod bench;
mod client_container;
mod cost;
mod docker;
mod host;
mod images;
mod lab;
mod manifest;
mod progress;
mod readiness;
mod registry;
mod report;
mod run;
mod snapshot;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};

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
        command: LabCommand,
    },
    /// Measure the lab's own instruments (`bench client`: the load client's ceiling).
    Bench {
        #[command(subcommand)]
        command: bench::BenchCommand,
    },
}

#[derive(Subcommand)]
enum LabCommand {
    /// Build images, run every selected server and scenario, write a snapshot under results/.
    Run {
        /// Lab definition (TOML).
        #[arg(long, default_value = "compose/lab.toml")]
        lab: PathBuf,
        /// Servers to run, by folder name or framework (e.g. `grpc-java,thrift`).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Profile from the lab definition: smoke, standard, seed.
        #[arg(long)]
        profile: Option<String>,
        /// CPU set for servers (cpuset syntax), overriding the lab definition.
        #[arg(long)]
        server_cpus: Option<String>,
        /// CPU set for the client (cpuset syntax), overriding the lab definition.
        #[arg(long)]
        client_cpus: Option<String>,
        /// Folder of extra CA certificates (*.crt) to trust in image builds.
        #[arg(long)]
        ca_certs: Option<PathBuf>,
        /// Where snapshots go.
        #[arg(long, default_value = "results")]
        results_dir: PathBuf,
        /// Show build output and the client's whole log.
        #[arg(long, short)]
        verbose: bool,
    },
    /// List servers, variants, scenarios and profiles.
    List {
        #[arg(long, default_value = "compose/lab.toml")]
        lab: PathBuf,
    },
    /// Re-render a snapshot's tables from its results.json alone.
    Report {
        /// The snapshot folder (results/<...>).
        snapshot: PathBuf,
        /// Show every scenario as JMeter's summary report.
        #[arg(long)]
        jmeter: bool,
    },
    /// List the lab's containers still present, with their run.
    Ps,
    /// Remove every container the lab created (and with --images, its images).
    Clean {
        #[arg(long)]
        images: bool,
    },
}

fn repo_root() -> PathBuf {
    // xtask lives in <root>/xtask; cargo sets CARGO_MANIFEST_DIR at build time.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask is inside the repository")
        .to_owned()
}

fn main() {
    let cli = Cli::parse();
    let root = repo_root();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runtime.block_on(async {
            std::env::set_current_dir(&root)
                .with_context(|| format!("cannot enter {}", root.display()))?;
            match cli.command {
                Top::Lab { command } => lab_command(&root, command).await,
                Top::Bench { command } => bench::run(&root, command).await,
            }
        })
    }));
    drop(runtime);
    let result = match outcome {
        Ok(result) => result,
        Err(_) => {
            // The normal paths clean up after themselves; a panic skips
            // them, so remove whatever the run left before exiting.
            docker::remove_run_containers_after_panic();
            std::process::exit(101);
        }
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

async fn lab_command(root: &Path, command: LabCommand) -> Result<()> {
    match command {
        LabCommand::Run {
            lab,
            only,
            profile,
            server_cpus,
            client_cpus,
            ca_certs,
            results_dir,
            verbose,
        } => {
            run::run(
                root,
                run::RunOptions {
                    lab,
                    only,
                    profile,
                    server_cpus,
                    client_cpus,
                    ca_certificates: ca_certs,
                    results_dir,
                    verbose,
                },
            )
            .await?;
            Ok(())
        }
        LabCommand::List { lab } => list(root, &lab),
        LabCommand::Report { snapshot, jmeter } => {
            let results = snapshot::read_results(&snapshot)?;
            let layout = jmeter.then_some(report::Layout::Jmeter);
            print!("{}", report::tables(&results, false, layout));
            Ok(())
        }
        LabCommand::Ps => {
            let engine = docker::Engine::connect().await?;
            let containers = engine.lab_containers(None).await?;
            if containers.is_empty() {
                println!("no lab container");
            }
            for c in containers {
                println!("{}  {}  run {}", &c.id[..12.min(c.id.len())], c.name, c.run);
            }
            Ok(())
        }
        LabCommand::Clean { images } => {
            let engine = docker::Engine::connect().await?;
            let containers = engine.remove_lab_containers(None).await?;
            println!("removed {containers} lab container(s)");
            if images {
                let n = engine.remove_lab_images().await?;
                println!("removed {n} lab image(s)");
            }
            Ok(())
        }
    }
}

fn list(root: &Path, lab_path: &Path) -> Result<()> {
    let manifests = manifest::load_all(root)?;
    println!("servers (servers/<name>/server.toml):");
    for m in &manifests {
        println!(
            "  {:<16} framework {:<8} protocol {:<8} port {:<6} registry {:?}",
            m.name, m.framework, m.protocol, m.port, m.registry
        );
        println!("  {:<16} {}", "", m.description);
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
    let lab = lab::Lab::load(lab_path)?;
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
