//! The start both benches share: the lab, the engine and its host, and
//! the cores split between the server under test and the load client.

use crate::basics::host;
use crate::definitions::lab::Lab;
use crate::engine::docker::Engine;
use anyhow::Result;
use rpclab_model::manifest::HostInfo;
use std::path::Path;

/// What both benches start from: the lab, the engine and its host, and the
/// cores split between the server and the client as `--server-cpus` and
/// `--client-cpus` ask (the lab's split where they are not given).
pub(super) struct Setup {
    pub(super) lab: Lab,
    pub(super) engine: Engine,
    pub(super) host: HostInfo,
    pub(super) server_cpus: String,
    pub(super) client_cpus: String,
}

pub(super) async fn set_up(
    lab: &Path,
    server_cpus: Option<&str>,
    client_cpus: Option<&str>,
) -> Result<Setup> {
    let lab = Lab::load(lab)?;
    let engine = Engine::connect().await?;
    let host = host::host_info(&engine.version);
    let split = crate::basics::cpus::split(
        &crate::basics::cpus::Request {
            server: server_cpus.unwrap_or(&lab.def.cpus.server),
            registry: "auto",
            client: client_cpus.unwrap_or(&lab.def.cpus.client),
            allow_shared: false,
        },
        &crate::basics::cpus::online(),
    )?;
    Ok(Setup {
        lab,
        engine,
        host,
        server_cpus: split.server,
        client_cpus: split.client,
    })
}
