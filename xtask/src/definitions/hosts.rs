//! Which Docker engine runs each role of a lab run (server, registry,
//! client), and at which address the client reaches the server.
//!
//! A lab definition may carry a `[hosts]` table; `--server-host`,
//! `--registry-host`, `--client-host` and `--server-address` override it
//! key by key. Without either, every role runs on the engine the
//! environment names (`DOCKER_HOST`, else the local socket) and the client
//! calls 127.0.0.1, exactly as a one-engine lab always did.
//!
//! Endpoints are written the way `docker context` and `DOCKER_HOST` write
//! them: `unix:///path/to/docker.sock`, `tcp://host:2376` (TLS with the
//! `ca.pem`, `cert.pem` and `key.pem` of `DOCKER_CERT_PATH` or
//! `[hosts] tls_cert_path`, as the Docker CLI's `--tlsverify`; plain HTTP
//! only with `tcp+http://`, never by accident) and `ssh://[user@]host[:port]`
//! (the system `ssh`, its keys and its `~/.ssh/config`, as `docker -H ssh://`).
//!
//! An endpoint is on the orchestrator's machine when it is a unix socket or
//! tcp/ssh to a loopback name; otherwise its machine is the host it names.
//! When server and client are both on the orchestrator's machine they talk
//! over 127.0.0.1, as today; otherwise the server binds the address the
//! client (and the orchestrator's readiness probe) reaches it at (see
//! docs/multi-host.md for why that must be a private interface).

use crate::basics::role::Role;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The `[hosts]` table of a lab definition. Every key is optional.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Hosts {
    /// The engine of the server role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The engine of the registry (ZooKeeper); absent: the server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
    /// The engine of the load client (and of the client's calibration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The address at which the client reaches the server role's host;
    /// absent: 127.0.0.1 when both are on one machine (required otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_address: Option<String>,
    /// Folder of `ca.pem`, `cert.pem` and `key.pem` for `tcp://` endpoints;
    /// absent: `DOCKER_CERT_PATH`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_cert_path: Option<PathBuf>,
}

/// The same keys on the command line (each overrides its `[hosts]` key).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct HostArgs {
    /// Docker endpoint of the server role (unix:///…, tcp://host:port, ssh://[user@]host).
    #[arg(long)]
    pub server_host: Option<String>,
    /// Docker endpoint of the registry (ZooKeeper) [default: the server's].
    #[arg(long)]
    pub registry_host: Option<String>,
    /// Docker endpoint of the load client.
    #[arg(long)]
    pub client_host: Option<String>,
    /// Address at which the client reaches the server's host [default:
    /// 127.0.0.1 when server and client are on one machine].
    #[arg(long)]
    pub server_address: Option<String>,
}

/// Where a Docker engine answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// What the environment says: `DOCKER_HOST`, else the local socket.
    Default,
    Unix(PathBuf),
    /// `tcp://host:port` with TLS (`tls`) or plain HTTP.
    Tcp {
        host: String,
        port: u16,
        tls: bool,
    },
    /// `ssh://[user@]host[:port]`, through the system's ssh.
    Ssh {
        user: Option<String>,
        host: String,
        port: Option<u16>,
    },
}

impl Endpoint {
    /// Parses an endpoint; `what` names its origin in the error
    /// (`--client-host`, `[hosts] server`).
    pub fn parse(text: &str, what: &str) -> Result<Endpoint> {
        let bad = |why: &str| {
            anyhow::anyhow!(
                "{what} `{text}` is not a Docker endpoint: {why}; give unix:///path/docker.sock, tcp://host:port or ssh://[user@]host[:port]"
            )
        };
        let text = text.trim();
        if text.is_empty() || text == "default" {
            return Ok(Endpoint::Default);
        }
        let (scheme, rest) = text.split_once("://").ok_or_else(|| bad("no scheme"))?;
        match scheme {
            "unix" => {
                if !rest.starts_with('/') {
                    return Err(bad("a unix socket needs an absolute path (unix:///…)"));
                }
                Ok(Endpoint::Unix(PathBuf::from(rest)))
            }
            "tcp" | "https" | "tcp+http" | "http" => {
                let (host, port) = rest
                    .trim_end_matches('/')
                    .rsplit_once(':')
                    .ok_or_else(|| bad("tcp needs host:port"))?;
                let port: u16 = port.parse().map_err(|_| bad("the port is not a number"))?;
                if host.is_empty() || host.contains('/') || host.contains('@') {
                    return Err(bad("tcp needs host:port"));
                }
                Ok(Endpoint::Tcp {
                    host: host.trim_matches(['[', ']']).to_owned(),
                    port,
                    tls: matches!(scheme, "tcp" | "https"),
                })
            }
            "ssh" => {
                let rest = rest.trim_end_matches('/');
                let (user, hostport) = match rest.rsplit_once('@') {
                    Some((u, h)) if !u.is_empty() => (Some(u.to_owned()), h),
                    Some(_) => return Err(bad("an empty ssh user")),
                    None => (None, rest),
                };
                let (host, port) = match hostport.rsplit_once(':') {
                    Some((h, p)) => (
                        h,
                        Some(p.parse().map_err(|_| bad("the ssh port is not a number"))?),
                    ),
                    None => (hostport, None),
                };
                if host.is_empty() || host.contains('/') {
                    return Err(bad("ssh needs a host"));
                }
                Ok(Endpoint::Ssh {
                    user,
                    host: host.to_owned(),
                    port,
                })
            }
            other => Err(bad(&format!("unknown scheme `{other}`"))),
        }
    }

    /// The machine the engine runs on: None for this one.
    pub fn machine(&self) -> Option<String> {
        let remote = |h: &str| !matches!(h, "localhost" | "::1") && !h.starts_with("127.");
        match self {
            // DOCKER_HOST may itself name another machine.
            Endpoint::Default => std::env::var("DOCKER_HOST")
                .ok()
                .and_then(|h| Endpoint::parse(&h, "DOCKER_HOST").ok())
                .filter(|e| *e != Endpoint::Default)
                .and_then(|e| e.machine()),
            Endpoint::Unix(_) => None,
            Endpoint::Tcp { host, .. } | Endpoint::Ssh { host, .. } => {
                remote(host).then(|| host.clone())
            }
        }
    }

    /// Whether two endpoints' engines share one machine (and its loopback).
    pub fn same_machine(&self, other: &Endpoint) -> bool {
        self.machine() == other.machine()
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Default => match std::env::var("DOCKER_HOST") {
                Ok(h) => write!(f, "{h}"),
                Err(_) => write!(f, "unix:///var/run/docker.sock"),
            },
            Endpoint::Unix(p) => write!(f, "unix://{}", p.display()),
            Endpoint::Tcp {
                host,
                port,
                tls: true,
            } => write!(f, "tcp://{host}:{port}"),
            Endpoint::Tcp {
                host,
                port,
                tls: false,
            } => write!(f, "tcp+http://{host}:{port}"),
            Endpoint::Ssh { user, host, port } => {
                write!(f, "ssh://")?;
                if let Some(u) = user {
                    write!(f, "{u}@")?;
                }
                write!(f, "{host}")?;
                if let Some(p) = port {
                    write!(f, ":{p}")?;
                }
                Ok(())
            }
        }
    }
}

/// Every role's engine, and the addresses the run uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Roles {
    pub server: Endpoint,
    pub registry: Endpoint,
    pub client: Endpoint,
    /// Where the client (and the readiness probe) calls the server.
    pub server_address: String,
    /// What the server binds: 127.0.0.1 when server and client are both
    /// on the orchestrator's machine, `server_address` otherwise.
    pub bind: String,
    pub tls_cert_path: Option<PathBuf>,
}

impl Roles {
    /// Everything on one engine, as a lab without `[hosts]` runs.
    #[cfg(test)]
    pub fn single() -> Roles {
        Roles {
            server: Endpoint::Default,
            registry: Endpoint::Default,
            client: Endpoint::Default,
            server_address: LOOPBACK.into(),
            bind: LOOPBACK.into(),
            tls_cert_path: None,
        }
    }

    /// The engine `role` runs on.
    pub fn endpoint(&self, role: Role) -> &Endpoint {
        match role {
            Role::Server => &self.server,
            Role::Registry => &self.registry,
            Role::Client => &self.client,
        }
    }

    /// The flags over the table over the defaults, checked.
    pub fn resolve(table: &Hosts, args: &HostArgs) -> Result<Roles> {
        // A role's flag over its key; each named as the user wrote it.
        let pick = |role: &str, flag: &Option<String>, key: &Option<String>| match (flag, key) {
            (Some(f), _) => Endpoint::parse(f, &format!("--{role}-host")).map(Some),
            (None, Some(k)) => Endpoint::parse(k, &format!("[hosts] {role}")).map(Some),
            (None, None) => Ok(None),
        };
        let server = pick("server", &args.server_host, &table.server)?.unwrap_or(Endpoint::Default);
        let registry = pick("registry", &args.registry_host, &table.registry)?
            .unwrap_or_else(|| server.clone());
        let client = pick("client", &args.client_host, &table.client)?.unwrap_or(Endpoint::Default);
        if !registry.same_machine(&server) {
            bail!(
                "the registry ({registry}) must run on the server's machine ({server}): servers register and find it at 127.0.0.1"
            );
        }
        // The orchestrator probes the server itself, so loopback serves only
        // when server and client are both on the orchestrator's machine.
        let local = server.machine().is_none() && client.machine().is_none();
        let server_address = match args.server_address.as_ref().or(table.server_address.as_ref()) {
            Some(a) if a.trim().is_empty() => bail!("the server address is empty"),
            Some(a) => a.trim().to_owned(),
            None if local => LOOPBACK.to_owned(),
            None => bail!(
                "the server ({server}) or the client ({client}) is on another machine: say at which address the client reaches the server (--server-address or [hosts] server_address)"
            ),
        };
        let loopback = server_address
            .parse::<std::net::IpAddr>()
            .is_ok_and(|a| a.is_loopback())
            || server_address == "localhost";
        if local && !loopback {
            bail!(
                "server ({server}) and client ({client}) are both on this machine: they talk over 127.0.0.1, so the server address `{server_address}` is not used (drop it)"
            );
        }
        if !local && loopback {
            bail!(
                "the server ({server}) or the client ({client}) is on another machine: neither can be reached at the loopback address {server_address}"
            );
        }
        let (server_address, bind) = if local {
            (LOOPBACK.to_owned(), LOOPBACK.to_owned())
        } else {
            (server_address.clone(), server_address)
        };
        Ok(Roles {
            server,
            registry,
            client,
            server_address,
            bind,
            tls_cert_path: table.tls_cert_path.clone(),
        })
    }

    /// Whether server and client are both on the orchestrator's machine
    /// (and talk over its loopback).
    pub fn all_local(&self) -> bool {
        self.server.machine().is_none() && self.client.machine().is_none()
    }

    /// Whether every role runs on the engine the environment names.
    pub fn is_single(&self) -> bool {
        self.server == Endpoint::Default
            && self.registry == Endpoint::Default
            && self.client == Endpoint::Default
    }
}

/// The address roles on one machine use.
pub const LOOPBACK: &str = "127.0.0.1";

#[cfg(test)]
mod tests {
    use super::*;

    fn args(server: Option<&str>, client: Option<&str>, address: Option<&str>) -> HostArgs {
        HostArgs {
            server_host: server.map(str::to_owned),
            registry_host: None,
            client_host: client.map(str::to_owned),
            server_address: address.map(str::to_owned),
        }
    }

    #[test]
    fn endpoints_parse_as_docker_writes_them() {
        let p = |s: &str| Endpoint::parse(s, "--client-host").unwrap();
        assert_eq!(
            p("unix:///run/b.sock"),
            Endpoint::Unix("/run/b.sock".into())
        );
        assert_eq!(
            p("tcp://10.0.0.2:2376"),
            Endpoint::Tcp {
                host: "10.0.0.2".into(),
                port: 2376,
                tls: true
            }
        );
        assert_eq!(
            p("tcp+http://10.0.0.2:2375"),
            Endpoint::Tcp {
                host: "10.0.0.2".into(),
                port: 2375,
                tls: false
            }
        );
        assert_eq!(
            p("ssh://lab@load-1:2222"),
            Endpoint::Ssh {
                user: Some("lab".into()),
                host: "load-1".into(),
                port: Some(2222)
            }
        );
        assert_eq!(
            p("ssh://load-1"),
            Endpoint::Ssh {
                user: None,
                host: "load-1".into(),
                port: None
            }
        );
        assert_eq!(p("default"), Endpoint::Default);
        for text in [
            "unix:///run/b.sock",
            "tcp://10.0.0.2:2376",
            "ssh://lab@load-1:2222",
        ] {
            assert_eq!(p(text).to_string(), text);
        }
    }

    #[test]
    fn a_bad_endpoint_is_one_line_naming_its_origin() {
        for bad in [
            "/run/b.sock",
            "unix://run/b.sock",
            "tcp://10.0.0.2",
            "tcp://10.0.0.2:port",
            "ftp://x:1",
            "ssh://",
            "ssh://@h",
        ] {
            let e = Endpoint::parse(bad, "--client-host")
                .unwrap_err()
                .to_string();
            assert!(!e.contains('\n'), "{e}");
            assert!(
                e.starts_with(&format!("--client-host `{bad}` is not a Docker endpoint")),
                "{e}"
            );
        }
    }

    #[test]
    fn without_hosts_everything_is_one_engine_on_loopback() {
        let roles = Roles::resolve(&Hosts::default(), &HostArgs::default()).unwrap();
        assert_eq!(roles, Roles::single());
        assert!(roles.is_single() && roles.all_local());
    }

    #[test]
    fn a_flag_overrides_its_table_key_and_only_that_key() {
        let table = Hosts {
            server: Some("unix:///run/a.sock".into()),
            client: Some("unix:///run/table-client.sock".into()),
            ..Hosts::default()
        };
        let roles = Roles::resolve(&table, &args(None, Some("unix:///run/b.sock"), None)).unwrap();
        assert_eq!(roles.server, Endpoint::Unix("/run/a.sock".into()));
        assert_eq!(roles.client, Endpoint::Unix("/run/b.sock".into()));
        // The registry follows the server unless told otherwise.
        assert_eq!(roles.registry, roles.server);
        // Two sockets of this machine: one loopback.
        assert_eq!(
            (roles.server_address.as_str(), roles.bind.as_str()),
            (LOOPBACK, LOOPBACK)
        );
        let roles = Roles::resolve(&table, &HostArgs::default()).unwrap();
        assert_eq!(
            roles.client,
            Endpoint::Unix("/run/table-client.sock".into())
        );
    }

    #[test]
    fn a_bad_flag_is_named_even_when_the_table_is_fine() {
        let table = Hosts {
            client: Some("unix:///run/b.sock".into()),
            ..Hosts::default()
        };
        let e = Roles::resolve(&table, &args(None, Some("b.sock"), None)).unwrap_err();
        assert!(e.to_string().starts_with("--client-host `b.sock`"), "{e}");
        let table = Hosts {
            server: Some("tcp://x".into()),
            ..Hosts::default()
        };
        let e = Roles::resolve(&table, &HostArgs::default()).unwrap_err();
        assert!(e.to_string().starts_with("[hosts] server `tcp://x`"), "{e}");
    }

    #[test]
    fn separate_machines_need_a_server_address_and_bind_it() {
        let two = args(Some("ssh://lab@app-1"), Some("ssh://lab@load-1"), None);
        let e = Roles::resolve(&Hosts::default(), &two)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--server-address"), "{e}");
        let e = Roles::resolve(
            &Hosts::default(),
            &args(Some("ssh://app-1"), Some("ssh://load-1"), Some("127.0.0.1")),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("loopback"), "{e}");
        let table = Hosts {
            server_address: Some("10.0.0.1".into()),
            ..Hosts::default()
        };
        let roles = Roles::resolve(&table, &two).unwrap();
        assert_eq!(roles.server_address, "10.0.0.1");
        assert_eq!(roles.bind, "10.0.0.1");
        assert!(!roles.all_local());
        // The flag wins over the table here too.
        let mut flagged = two.clone();
        flagged.server_address = Some("10.0.0.9".into());
        assert_eq!(Roles::resolve(&table, &flagged).unwrap().bind, "10.0.0.9");
    }

    #[test]
    fn on_one_machine_the_server_address_is_loopback() {
        let e = Roles::resolve(
            &Hosts::default(),
            &args(None, Some("unix:///run/b.sock"), Some("10.0.0.1")),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("both on this machine"), "{e}");
        let roles =
            Roles::resolve(&Hosts::default(), &args(None, None, Some("127.0.0.1"))).unwrap();
        assert_eq!(roles.bind, LOOPBACK);
    }

    #[test]
    fn the_registry_stays_on_the_servers_machine() {
        let mut a = args(Some("ssh://app-1"), None, Some("10.0.0.1"));
        a.registry_host = Some("ssh://other".into());
        let e = Roles::resolve(&Hosts::default(), &a)
            .unwrap_err()
            .to_string();
        assert!(e.contains("must run on the server's machine"), "{e}");
        // Another engine of the same machine is fine.
        let mut a = args(None, None, None);
        a.registry_host = Some("unix:///run/b.sock".into());
        assert!(Roles::resolve(&Hosts::default(), &a).is_ok());
    }

    #[test]
    fn every_hosts_key_is_documented_in_multi_host_md() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap();
        let doc = std::fs::read_to_string(root.join("docs/multi-host.md")).unwrap();
        // The keys a deny_unknown_fields table accepts, from serde's error.
        let e = toml::from_str::<Hosts>("no_such_key = 1")
            .unwrap_err()
            .to_string();
        let keys: Vec<&str> = e
            .split("expected one of")
            .nth(1)
            .unwrap_or_else(|| panic!("{e}"))
            .split('`')
            .skip(1)
            .step_by(2)
            .collect();
        assert_eq!(keys.len(), 5, "{keys:?}");
        for key in keys {
            assert!(
                doc.contains(&format!("\n{key} = ")) || doc.contains(&format!("# {key} = ")),
                "[hosts] key `{key}` is not in docs/multi-host.md's example table"
            );
        }
    }

    #[test]
    fn the_hosts_table_parses_and_rejects_unknown_keys() {
        let t: Hosts = toml::from_str(
            "server = \"unix:///run/a.sock\"\nclient = \"ssh://lab@load-1\"\nserver_address = \"10.0.0.1\"\n",
        )
        .unwrap();
        assert_eq!(t.client.as_deref(), Some("ssh://lab@load-1"));
        assert!(toml::from_str::<Hosts>("clinet = \"x\"").is_err());
    }
}
