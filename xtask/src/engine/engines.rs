//! The engines of one run, one per role (server, registry, client), and
//! what the manifest records of each machine they run on.
//!
//! Roles may share an engine (a lab without `[hosts]` runs all three on
//! one), so the run works on [`Engines::distinct`] wherever it acts once
//! per engine: claiming it, building images, cleaning up.
//!
//! The clock of each engine's machine is compared with the orchestrator's
//! at the start of the run, NTP-style: the engine reports its time
//! (`docker info`'s `SystemTime`) and the orchestrator notes its own clock
//! before and after the request; of several requests the fastest gives the
//! offset, give or take half its round trip. The client reports its
//! measurement window in its machine's clock; the server's counters are
//! read by the orchestrator, in its clock; the window is moved by the
//! client machine's offset before the two are put together (see
//! docs/methodology.md, "Time across hosts").

use crate::basics::role::Role;
use crate::basics::run_id::RunId;
use crate::definitions::hosts::Roles;
use crate::engine::containers::Containers;
use crate::engine::docker::{ContainerRole, ContainerSpec, Engine};
use crate::engine::images;
use anyhow::{Context, Result};
use rpclab_model::manifest::{ClockOffset, HostRecord};
use std::time::SystemTime;

/// One engine per role.
pub struct Engines {
    pub server: Engine,
    pub registry: Engine,
    pub client: Engine,
    pub roles: Roles,
}

impl Engines {
    /// Connects to every role's engine (each endpoint once). Roles whose
    /// endpoints differ in spelling only keep their own connections but
    /// share the images pinned on that engine.
    pub async fn connect(roles: &Roles) -> Result<Engines> {
        let certs = roles.tls_cert_path.as_deref();
        let mut engines: Vec<Engine> = Vec::with_capacity(Role::ALL.len());
        for role in Role::ALL {
            let endpoint = roles.endpoint(role);
            let engine = match engines.iter().find(|e| e.endpoint == *endpoint) {
                Some(known) => known.clone(),
                None => {
                    let fresh = Engine::connect_to(endpoint, certs).await?;
                    match engines.iter().find(|e| e.same_engine(&fresh)) {
                        Some(known) => fresh.sharing_pins_of(known),
                        None => fresh,
                    }
                }
            };
            engines.push(engine);
        }
        let [server, registry, client]: [Engine; 3] = engines
            .try_into()
            .unwrap_or_else(|_| unreachable!("one engine per role"));
        Ok(Engines {
            server,
            registry,
            client,
            roles: roles.clone(),
        })
    }

    /// The engine that runs `role`.
    pub fn of(&self, role: Role) -> &Engine {
        match role {
            Role::Server => &self.server,
            Role::Registry => &self.registry,
            Role::Client => &self.client,
        }
    }

    /// Every engine once, each with the roles it runs, server's first.
    pub fn distinct(&self) -> Vec<(&Engine, Vec<Role>)> {
        let mut out: Vec<(&Engine, Vec<Role>)> = Vec::new();
        for role in Role::ALL {
            let engine = self.of(role);
            match out.iter_mut().find(|(e, _)| e.same_engine(engine)) {
                Some((_, roles)) => roles.push(role),
                None => out.push((engine, vec![role])),
            }
        }
        out
    }

    /// Whether the client's machine is another than the orchestrator's,
    /// so that its clock is not the one the server's counters are read in.
    pub fn client_clock_is_foreign(&self) -> bool {
        self.roles.client.machine().is_some()
    }
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Requests of the clock comparison; the fastest one counts.
const CLOCK_ROUNDS: usize = 7;

/// The offset of `engine`'s clock from the orchestrator's.
pub async fn clock_offset(engine: &Engine) -> Result<ClockOffset> {
    let mut best: Option<(f64, f64)> = None;
    for _ in 0..CLOCK_ROUNDS {
        let before = unix_now();
        let info = engine
            .api()
            .info()
            .await
            .with_context(|| format!("cannot read the clock of {}", engine.endpoint))?;
        let after = unix_now();
        let Some(text) = info.system_time else {
            anyhow::bail!("{} does not report its clock", engine.endpoint);
        };
        let remote =
            time::OffsetDateTime::parse(&text, &time::format_description::well_known::Rfc3339)
                .with_context(|| format!("{} reports its clock as `{text}`", engine.endpoint))?;
        let remote = remote.unix_timestamp_nanos() as f64 / 1e9;
        let round_trip = after - before;
        let offset = remote - (before + after) / 2.0;
        if best.is_none_or(|(rt, _)| round_trip < rt) {
            best = Some((round_trip, offset));
        }
    }
    let (round_trip, offset) = best.expect("at least one round");
    Ok(ClockOffset {
        offset_ms: offset * 1e3,
        uncertainty_ms: round_trip / 2.0 * 1e3,
    })
}

/// What the manifest records of `engine`'s machine (its calibration is
/// added by the run once measured).
pub async fn describe(engine: &Engine, roles: &[Role], run_id: &RunId) -> Result<HostRecord> {
    let info = engine
        .api()
        .info()
        .await
        .with_context(|| format!("cannot read what {} runs on", engine.endpoint))?;
    let clock = clock_offset(engine).await?;
    Ok(HostRecord {
        roles: roles.iter().map(|r| r.to_string()).collect(),
        endpoint: engine.endpoint.to_string(),
        engine_id: engine.engine_id.clone(),
        data_root: engine.data_root.clone(),
        hostname: info.name.unwrap_or_default(),
        cpu_model: cpu_model(engine, &engine.identity(), run_id).await?,
        cores: info.ncpu.unwrap_or(0).max(0) as usize,
        memory_gib: (info.mem_total.unwrap_or(0) as f64 / (1u64 << 30) as f64 * 10.0).round()
            / 10.0,
        kernel: info.kernel_version.unwrap_or_default(),
        operating_system: info.operating_system.unwrap_or_default(),
        docker_version: engine.version.clone(),
        clock,
        clock_applied: false,
        calibration: Default::default(),
        images: Default::default(),
    })
}

/// The CPU model of `engine`'s machine (known by `identity`), read in a
/// container of the client image (so it is that machine's
/// `/proc/cpuinfo`, wherever it is: a Pod's, on a cluster).
pub async fn cpu_model(engine: &impl Containers, identity: &str, run_id: &RunId) -> Result<String> {
    let (_, log) = engine
        .run_to_end(
            ContainerSpec {
                name: format!("rpclab-cpuinfo-{run_id}-{}", short(identity)),
                image: images::CLIENT,
                role: ContainerRole::Calibration,
                run_id,
                env: Vec::new(),
                entrypoint: Some(vec!["/bin/sh".into(), "-c".into()]),
                cmd: Some(vec!["grep -m1 '^model name' /proc/cpuinfo || true".into()]),
                cpuset: "0",
                binds: Vec::new(),
                confinement: &crate::basics::confine::client(),
                network: &crate::engine::containers::Network::Host,
            },
            5,
        )
        .await?;
    Ok(log
        .lines()
        .find_map(|l| l.split_once(':').map(|(_, v)| v.trim().to_owned()))
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| "unknown".into()))
}

/// A short hex digest of an engine's identity, for container names.
fn short(identity: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(&Sha256::digest(identity.as_bytes())[..4])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definitions::hosts::Endpoint;

    fn engines(server: &str, registry: &str, client: &str) -> Engines {
        let e =
            |id: &str| Engine::unconnected(id, Endpoint::Unix(format!("/run/{id}.sock").into()));
        Engines {
            server: e(server),
            registry: e(registry),
            client: e(client),
            roles: Roles::single(),
        }
    }

    fn roles_of(e: &Engines) -> Vec<(String, Vec<Role>)> {
        e.distinct()
            .into_iter()
            .map(|(engine, roles)| {
                (
                    engine.data_root.trim_start_matches("/var/lib/").to_owned(),
                    roles,
                )
            })
            .collect()
    }

    #[test]
    fn each_engine_appears_once_with_its_roles_the_servers_first() {
        assert_eq!(
            roles_of(&engines("a", "a", "a")),
            [("a".to_owned(), Role::ALL.to_vec())]
        );
        assert_eq!(
            roles_of(&engines("a", "a", "b")),
            [
                ("a".to_owned(), vec![Role::Server, Role::Registry]),
                ("b".to_owned(), vec![Role::Client])
            ]
        );
        assert_eq!(
            roles_of(&engines("a", "b", "a")),
            [
                ("a".to_owned(), vec![Role::Server, Role::Client]),
                ("b".to_owned(), vec![Role::Registry])
            ]
        );
    }

    #[test]
    fn a_client_on_a_unix_socket_shares_the_orchestrators_clock() {
        let mut e = engines("a", "a", "b");
        e.roles.client = Endpoint::Unix("/run/b.sock".into());
        assert!(!e.client_clock_is_foreign());
        e.roles.client = Endpoint::Ssh {
            user: None,
            host: "load-1".into(),
            port: None,
        };
        assert!(e.client_clock_is_foreign());
    }
}
