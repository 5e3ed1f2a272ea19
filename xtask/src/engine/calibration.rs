//! The host calibration of a run: `rpclab-client calibrate` in the client
//! image, once pinned to the server's CPUs (on the server's engine) and once
//! to the client's (on the client's), before
//! any server starts (see `client/src/calibrate.rs` for the workloads).
//!
//! The figures go into `manifest.toml`; `lab compare` reads them to warn
//! when two snapshots come from hosts of different speed and to normalise.

use crate::basics::role::Role;
use crate::basics::run_id::RunId;
use crate::engine::containers::{ContainerRole, ContainerSpec, Containers};
use crate::engine::images;
use anyhow::{bail, Context, Result};
use rpclab_model::result::{Calibration, CalibrationFigures};

/// Seconds each workload runs on each CPU set.
const SECONDS: f64 = 1.0;

/// Measures the server's CPU set on the server's engine and the client's
/// on the client's (the same engine in a one-machine lab), one after the
/// other (never both at once: each would disturb the other); then, when
/// both sets are on `one_machine`, the ping-pong from the client's set to
/// the server's.
pub async fn measure(
    server_engine: &impl Containers,
    client_engine: &impl Containers,
    run_id: &RunId,
    server_cpus: &str,
    client_cpus: &str,
    one_machine: bool,
) -> Result<Calibration> {
    Ok(Calibration {
        server: one(
            server_engine,
            run_id,
            server_cpus,
            Role::Server.as_str(),
            None,
        )
        .await?,
        client: one(
            client_engine,
            run_id,
            client_cpus,
            Role::Client.as_str(),
            None,
        )
        .await?,
        across: if one_machine && server_cpus != client_cpus {
            Some(
                one(
                    client_engine,
                    run_id,
                    client_cpus,
                    "across",
                    Some(server_cpus),
                )
                .await?,
            )
        } else {
            None
        },
    })
}

/// One calibration container: on `cpus`, or, with `echo_cpus`, on both
/// sets with the ping on `cpus` and the echo on `echo_cpus`.
async fn one(
    engine: &impl Containers,
    run_id: &RunId,
    cpus: &str,
    role: &str,
    echo_cpus: Option<&str>,
) -> Result<CalibrationFigures> {
    let both = echo_cpus.map(|e| format!("{cpus},{e}"));
    let mut cmd = vec![
        "calibrate".into(),
        "--seconds".into(),
        SECONDS.to_string(),
        "--cpus".into(),
        cpus.to_owned(),
    ];
    if let Some(e) = echo_cpus {
        cmd.extend(["--echo-cpus".into(), e.to_owned()]);
    }
    let cpuset = both.as_deref().unwrap_or(cpus);
    let (code, log) = engine
        .run_to_end(
            ContainerSpec {
                name: format!(
                    "rpclab-calibrate-{run_id}-{role}-{}",
                    cpus.replace(',', "_")
                ),
                image: images::CLIENT,
                role: ContainerRole::Calibration,
                run_id,
                env: Vec::new(),
                entrypoint: None,
                cmd: Some(cmd),
                cpuset,
                binds: Vec::new(),
                // The client image, confined as the client is.
                confinement: &crate::basics::confine::client(),
                network: &crate::engine::containers::Network::Host,
            },
            20,
        )
        .await?;
    if code != 0 {
        bail!("the host calibration on CPUs {cpus} failed:\n{log}");
    }
    let line = log
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .with_context(|| {
            format!("the host calibration on CPUs {cpus} printed no figures:\n{log}")
        })?;
    serde_json::from_str(line.trim())
        .with_context(|| format!("the host calibration printed `{line}`, not its figures"))
}
