//! Which CPUs the server, its registry and the client run on.
//!
//! The split is decided, and checked, before anything starts: a CPU the
//! host does not have would otherwise fail only when the engine refuses the
//! first container, after the snapshot folder exists and the client has
//! been built; and a server sharing cores with the client measures both.
//!
//! `auto` favours the client. On loopback a binary-protocol client costs
//! about as much CPU per call as the server (the kernel's send, wake-up and
//! receive are the same on both sides), so on an even split the fastest
//! servers are reported client-bound: the client gets at least as many
//! cores as the server, and more where the host has them. The registry
//! (ZooKeeper) gets a core of its own where one is left, so its CPU does
//! not count against the server's.

use crate::basics::role::Role;
use anyhow::{bail, Result};
use serde::Serialize;
use std::collections::BTreeSet;

/// A set of CPU numbers, kept sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuSet(BTreeSet<usize>);

impl CpuSet {
    /// Parses cpuset syntax: `0`, `2-3`, `0,4-7`.
    pub fn parse(text: &str) -> Result<CpuSet> {
        let mut set = BTreeSet::new();
        for part in text.split(',').map(str::trim) {
            let bad = || {
                anyhow::anyhow!(
                    "`{text}` is not a CPU set: use numbers and ranges such as `0`, `2-3` or `0,4-7`"
                )
            };
            if part.is_empty() {
                return Err(bad());
            }
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b): (usize, usize) = (
                        a.trim().parse().map_err(|_| bad())?,
                        b.trim().parse().map_err(|_| bad())?,
                    );
                    if b < a {
                        return Err(bad());
                    }
                    set.extend(a..=b);
                }
                None => {
                    set.insert(part.parse().map_err(|_| bad())?);
                }
            }
        }
        Ok(CpuSet(set))
    }

    fn of(cpus: &[usize]) -> CpuSet {
        CpuSet(cpus.iter().copied().collect())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn overlaps(&self, other: &CpuSet) -> bool {
        !self.0.is_disjoint(&other.0)
    }

    /// The CPUs of either set.
    pub fn union(&self, other: &CpuSet) -> CpuSet {
        CpuSet(self.0.union(&other.0).copied().collect())
    }

    /// The CPU numbers, in order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().copied()
    }

    fn missing_from(&self, host: &CpuSet) -> Vec<usize> {
        self.0.difference(&host.0).copied().collect()
    }
}

impl std::fmt::Display for CpuSet {
    /// Cpuset syntax with ranges folded: `0-3,6`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cpus: Vec<usize> = self.0.iter().copied().collect();
        let mut parts = Vec::new();
        let mut i = 0;
        while i < cpus.len() {
            let mut j = i;
            while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
                j += 1;
            }
            parts.push(if j == i {
                cpus[i].to_string()
            } else {
                format!("{}-{}", cpus[i], cpus[j])
            });
            i = j + 1;
        }
        f.write_str(&parts.join(","))
    }
}

/// The CPUs this host has online (`/sys/devices/system/cpu/online`, else
/// as many as the process may use, numbered from 0).
pub fn online() -> CpuSet {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| CpuSet::parse(t.trim()).ok())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            CpuSet((0..n).collect())
        })
}

/// The CPU sets of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Split {
    pub server: String,
    pub registry: String,
    pub client: String,
    /// How many cores the server's and the client's sets hold.
    pub server_cores: usize,
    pub client_cores: usize,
    /// Server (or registry) and client share CPUs.
    pub shared: bool,
    /// Why the split is what it is, for the manifest.
    pub note: String,
}

/// The command line's CPU choices, shared by `lab run` and `lab reproduce`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct CpuArgs {
    /// CPU set for servers (cpuset syntax), overriding the lab definition.
    #[arg(long)]
    pub server_cpus: Option<String>,
    /// CPU set for the registry (ZooKeeper); `auto` gives it a core of its
    /// own where one is left, else it shares the server's.
    #[arg(long)]
    pub registry_cpus: Option<String>,
    /// CPU set for the client (cpuset syntax), overriding the lab definition.
    #[arg(long)]
    pub client_cpus: Option<String>,
    /// Run even when server (or registry) and client CPUs overlap; every
    /// cell is then flagged `shared-cpus`.
    #[arg(long)]
    pub allow_shared_cpus: bool,
}

/// What was asked: cpuset syntax or `auto` for each role.
pub struct Request<'a> {
    pub server: &'a str,
    pub registry: &'a str,
    pub client: &'a str,
    /// Accept server/registry and client on common CPUs (cells are then
    /// flagged `shared-cpus`).
    pub allow_shared: bool,
}

/// The `auto` split of `host`'s CPUs: (server, registry, client).
///
/// * 1 CPU: everything shares it (only with `allow_shared`);
/// * 2: server 1, client 1, the registry shares the server's;
/// * 3: server 1, client 2, the registry shares the server's;
/// * n ≥ 4: server ⌊(n−1)/3⌋, registry 1, client the rest (≥ 2 × server).
pub fn auto_split(host: &CpuSet) -> (CpuSet, CpuSet, CpuSet) {
    let cpus: Vec<usize> = host.0.iter().copied().collect();
    match cpus.len() {
        0 | 1 => {
            let all = CpuSet::of(&cpus);
            (all.clone(), all.clone(), all)
        }
        2 | 3 => {
            let server = CpuSet::of(&cpus[..1]);
            (server.clone(), server, CpuSet::of(&cpus[1..]))
        }
        n => {
            let s = ((n - 1) / 3).max(1);
            (
                CpuSet::of(&cpus[..s]),
                CpuSet::of(&cpus[s..s + 1]),
                CpuSet::of(&cpus[s + 1..]),
            )
        }
    }
}

/// Resolves and checks the request against the host's CPUs.
pub fn split(request: &Request, host: &CpuSet) -> Result<Split> {
    let (auto_server, auto_registry, auto_client) = auto_split(host);
    let resolve = |role: Role, asked: &str, auto: &CpuSet| -> Result<CpuSet> {
        if asked == "auto" {
            return Ok(auto.clone());
        }
        let set = CpuSet::parse(asked).map_err(|e| anyhow::anyhow!("--{role}-cpus: {e}"))?;
        let missing = set.missing_from(host);
        if !missing.is_empty() {
            bail!(
                "--{role}-cpus {asked}: this host has no CPU {} (its online CPUs are {host}).",
                missing
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        Ok(set)
    };
    let server = resolve(Role::Server, request.server, &auto_server)?;
    // A registry left on `auto` follows an explicit server set.
    let registry = if request.registry == "auto" && request.server != "auto" {
        server.clone()
    } else {
        resolve(Role::Registry, request.registry, &auto_registry)?
    };
    let client = resolve(Role::Client, request.client, &auto_client)?;
    let shared = server.overlaps(&client) || registry.overlaps(&client);
    if shared && !request.allow_shared {
        let role = if server.overlaps(&client) {
            format!("server CPUs {server}")
        } else {
            format!("registry CPUs {registry}")
        };
        bail!(
            "the {role} overlap the client CPUs {client}: the client would compete with what it measures. \
             Give disjoint sets (this host's online CPUs are {host}), or pass --allow-shared-cpus to run \
             anyway with every cell flagged `shared-cpus`."
        );
    }
    let note = if shared {
        "server and client share CPUs (--allow-shared-cpus or a one-CPU host): every cell is flagged shared-cpus".to_owned()
    } else if registry == server {
        format!(
            "server (and its registry) on {server}, client on {client}: disjoint sets; the client gets at least as many cores as the server because on loopback it costs about as much CPU per call"
        )
    } else {
        format!(
            "server on {server}, registry on {registry} (its own core, so its CPU does not count against the server), client on {client}: disjoint sets; the client gets at least as many cores as the server because on loopback it costs about as much CPU per call"
        )
    };
    Ok(Split {
        server: server.to_string(),
        registry: registry.to_string(),
        client: client.to_string(),
        server_cores: server.len(),
        client_cores: client.len(),
        shared,
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(n: usize) -> CpuSet {
        CpuSet((0..n).collect())
    }

    fn request<'a>(server: &'a str, client: &'a str) -> Request<'a> {
        Request {
            server,
            registry: "auto",
            client,
            allow_shared: false,
        }
    }

    #[test]
    fn auto_gives_the_client_at_least_the_servers_cores_and_the_registry_its_own_when_left() {
        for n in [2usize, 3, 4, 8, 16] {
            let (server, registry, client) = auto_split(&host(n));
            assert!(!server.is_empty() && !client.is_empty(), "{n} cores");
            assert!(
                client.len() >= server.len(),
                "{n} cores: {server} vs {client}"
            );
            assert!(
                !server.overlaps(&client) && !registry.overlaps(&client),
                "{n}"
            );
            let used = server.len() + client.len();
            if n > used {
                // A core was left: the registry has it alone.
                assert_eq!(registry.len(), 1, "{n}");
                assert!(!registry.overlaps(&server), "{n}");
            } else {
                assert_eq!(registry, server, "{n}");
            }
            if n >= 3 {
                assert!(client.len() > server.len(), "{n}: prefer more client cores");
            }
        }
        let (s, r, c) = auto_split(&host(4));
        assert_eq!(
            (s.to_string(), r.to_string(), c.to_string()),
            ("0".into(), "1".into(), "2-3".into())
        );
        let (s, r, c) = auto_split(&host(16));
        assert_eq!(
            (s.to_string(), r.to_string(), c.to_string()),
            ("0-4".into(), "5".into(), "6-15".into())
        );
    }

    #[test]
    fn two_cores_split_one_each() {
        let s = split(&request("auto", "auto"), &host(2)).unwrap();
        assert_eq!(
            (s.server.as_str(), s.registry.as_str(), s.client.as_str()),
            ("0", "0", "1")
        );
        assert!(!s.shared);
    }

    #[test]
    fn an_overlap_is_an_error_that_names_it_unless_allowed() {
        let err = split(&request("0", "0"), &host(2)).unwrap_err().to_string();
        assert!(
            err.contains("server CPUs 0 overlap the client CPUs 0"),
            "{err}"
        );
        assert!(err.contains("--allow-shared-cpus"), "{err}");
        let mut allowed = request("0", "0");
        allowed.allow_shared = true;
        assert!(split(&allowed, &host(2)).unwrap().shared);
    }

    #[test]
    fn an_unknown_cpu_names_the_hosts_cpus() {
        let err = split(&request("7", "auto"), &host(2))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no CPU 7") && err.contains("online CPUs are 0-1"),
            "{err}"
        );
        let err = split(&request("x", "auto"), &host(2))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a CPU set"), "{err}");
    }

    #[test]
    fn cpu_sets_parse_and_print_folded() {
        assert_eq!(CpuSet::parse("0,4-7,2").unwrap().to_string(), "0,2,4-7");
        assert_eq!(CpuSet::parse("3").unwrap().len(), 1);
        assert!(CpuSet::parse("3-1").is_err());
        assert!(CpuSet::parse("").is_err());
    }
}
