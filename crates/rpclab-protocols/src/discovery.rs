//! Service discovery through a ZooKeeper registry, shared by the protocols
//! whose frameworks register there (Dubbo, Motan, SOFA-RPC).
//!
//! Each framework lays out its own tree (`/dubbo/<interface>/providers`,
//! `/motan/<group>/<service>/server`, `/sofa-rpc/<service>/providers`) and
//! encodes its nodes its own way, so the protocol module does the lookup;
//! this module supplies what they share: the registry option and its
//! session ([`ZooKeeper`]), provider URLs ([`ServiceUrl`], [`url_decode`]),
//! the choice of provider for a target ([`pick`]) and a per-protocol cache
//! so that one lookup serves every connection of a cell ([`Providers`]).
//!
//! Discovery happens before the measurement starts (at the first
//! `connect`), so it is written for clarity, not speed.

use crate::net::{connect_tcp, CountingStream};
use crate::protocol::{CallError, WireCounter};
use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::OnceCell;

/// How long one registry operation (connect, then list or read) may take.
const REGISTRY_TIMEOUT: Duration = Duration::from_secs(10);

/// A ZooKeeper registry, from a protocol's `registry` option.
#[derive(Clone, Debug)]
pub struct ZooKeeper {
    /// The protocol whose option this is, for messages.
    protocol: &'static str,
    /// As given, for messages: `zookeeper://127.0.0.1:2181`.
    url: String,
    /// The ensemble for the ZooKeeper client: `host:port[,host:port...]`.
    ensemble: String,
}

impl ZooKeeper {
    /// Parses a `registry` option: `zookeeper://host:port[,host:port...]`
    /// (a trailing path or `?backup=host:port,...` is accepted as Dubbo
    /// writes it).
    pub fn parse(protocol: &'static str, url: &str) -> Result<ZooKeeper, CallError> {
        let bad = |why: &str| {
            CallError::Config(format!(
                "option `registry` of protocol `{protocol}`: {why} (expected e.g. \
                 `zookeeper://127.0.0.1:2181`), not `{url}`"
            ))
        };
        let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("no scheme"))?;
        if scheme != "zookeeper" {
            return Err(bad(&format!(
                "registry `{scheme}` is not supported, only `zookeeper`"
            )));
        }
        let (location, query) = rest.split_once('?').unwrap_or((rest, ""));
        let mut hosts: Vec<&str> = location
            .trim_end_matches('/')
            .split(',')
            .filter(|h| !h.is_empty())
            .collect();
        for (k, v) in query.split('&').filter_map(|kv| kv.split_once('=')) {
            if k == "backup" {
                hosts.extend(v.split(',').filter(|h| !h.is_empty()));
            }
        }
        if hosts.is_empty() {
            return Err(bad("no host:port"));
        }
        for host in &hosts {
            match host.rsplit_once(':') {
                Some((h, p)) if !h.is_empty() && p.parse::<u16>().is_ok() => {}
                _ => return Err(bad(&format!("`{host}` is not host:port"))),
            }
        }
        Ok(ZooKeeper {
            protocol,
            url: url.to_owned(),
            ensemble: hosts.join(","),
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The children of `path` (their names, as ZooKeeper lists them).
    pub async fn children(&self, path: &str) -> Result<Vec<String>, CallError> {
        self.with_session(|client| async move {
            client
                .list_children(path)
                .await
                .map_err(|e| format!("cannot list {path}: {e}"))
        })
        .await
    }

    /// The children of `path` with their node data, for registries that
    /// keep the provider's URL in the node rather than in its name.
    /// A child deleted between the listing and the read is skipped.
    pub async fn children_with_data(
        &self,
        path: &str,
    ) -> Result<Vec<(String, Vec<u8>)>, CallError> {
        self.with_session(|client| async move {
            let names = client
                .list_children(path)
                .await
                .map_err(|e| format!("cannot list {path}: {e}"))?;
            let mut out = Vec::with_capacity(names.len());
            for name in names {
                let child = format!("{}/{name}", path.trim_end_matches('/'));
                match client.get_data(&child).await {
                    Ok((data, _stat)) => out.push((name, data)),
                    Err(zookeeper_client::Error::NoNode) => {}
                    Err(e) => return Err(format!("cannot read {child}: {e}")),
                }
            }
            Ok(out)
        })
        .await
    }

    /// Runs `op` on a fresh session, within [`REGISTRY_TIMEOUT`] in all,
    /// and closes the session.
    async fn with_session<T, F, Fut>(&self, op: F) -> Result<T, CallError>
    where
        F: FnOnce(zookeeper_client::Client) -> Fut,
        Fut: Future<Output = Result<T, String>>,
    {
        let work = async {
            let client = zookeeper_client::Client::connector()
                .with_connection_timeout(Duration::from_secs(3))
                .with_session_timeout(Duration::from_secs(6))
                .connect(&self.ensemble)
                .await
                .map_err(|e| format!("cannot connect: {e}"))?;
            op(client).await
        };
        tokio::time::timeout(REGISTRY_TIMEOUT, work)
            .await
            .map_err(|_| format!("no answer within {} s", REGISTRY_TIMEOUT.as_secs()))
            .and_then(|r| r)
            .map_err(|e| CallError::Connect(format!("registry {}: {e}", self.url)))
    }
}

/// A registry and the providers one lookup found there, shared by every
/// connection of a protocol instance. A failed or empty lookup is not
/// cached: the next connect tries again.
#[derive(Debug)]
pub struct Providers {
    registry: ZooKeeper,
    found: OnceCell<Vec<ServiceUrl>>,
}

impl Providers {
    pub fn new(registry: ZooKeeper) -> Providers {
        Providers {
            registry,
            found: OnceCell::new(),
        }
    }

    /// The providers of the `registry` option (`zookeeper://host:port`),
    /// if a protocol was given one.
    pub fn from_options(
        protocol: &'static str,
        options: &BTreeMap<String, String>,
    ) -> Result<Option<Providers>, CallError> {
        options
            .get("registry")
            .map(|r| ZooKeeper::parse(protocol, r).map(Providers::new))
            .transpose()
    }

    pub fn registry(&self) -> &ZooKeeper {
        &self.registry
    }

    /// The provider to connect to for `target` (see [`pick`]), looking the
    /// providers up with `lookup` (given its own handle on the registry) the
    /// first time. `lookup` returns the
    /// framework's providers of the service; none is an error it reports
    /// itself, saying what it found instead.
    pub async fn resolve<F, Fut>(&self, target: &str, lookup: F) -> Result<ServiceUrl, CallError>
    where
        F: FnOnce(ZooKeeper) -> Fut,
        Fut: Future<Output = Result<Vec<ServiceUrl>, CallError>>,
    {
        let providers = self
            .found
            .get_or_try_init(|| async {
                let found = lookup(self.registry.clone()).await?;
                if found.is_empty() {
                    return Err(CallError::Connect(format!(
                        "registry {}: no {} provider registered",
                        self.registry.url, self.registry.protocol
                    )));
                }
                Ok(found)
            })
            .await?;
        pick(providers, target).cloned()
    }
}

/// A connection's socket halves, each counting its bytes (what
/// [`Mux::start`](crate::mux::Mux::start) takes).
pub type Halves = (
    CountingStream<OwnedReadHalf>,
    CountingStream<OwnedWriteHalf>,
);

/// Opens one connection for `target`, the sequence every registry-based
/// protocol shares: with a registry, the provider `providers` resolves for
/// the target (looked up with `lookup`, see [`Providers::resolve`]), once
/// `accept` has checked what that provider registered (its
/// serialization, say); without one, `target` itself. The socket is split
/// into halves that count their bytes into `counter`.
pub async fn connect_provider<F, Fut>(
    providers: Option<&Providers>,
    target: &str,
    counter: WireCounter,
    lookup: F,
    accept: impl FnOnce(&ServiceUrl) -> Result<(), CallError>,
) -> Result<Halves, CallError>
where
    F: FnOnce(ZooKeeper) -> Fut,
    Fut: Future<Output = Result<Vec<ServiceUrl>, CallError>>,
{
    let address = match providers {
        Some(providers) => {
            let provider = providers.resolve(target, lookup).await?;
            accept(&provider)?;
            provider.address()
        }
        None => target.to_owned(),
    };
    let (read, write) = connect_tcp(&address).await?.into_split();
    Ok((
        CountingStream::new(read, counter.clone()),
        CountingStream::new(write, counter),
    ))
}

/// The providers of one protocol that a registry lists, sorted from its
/// nodes' URLs, and the nodes skipped, each with why: what the dubbo, bolt
/// and motan2 lookups each make of the nodes they read.
#[derive(Debug, Default)]
pub struct Listed {
    pub providers: Vec<ServiceUrl>,
    pub skipped: Vec<String>,
}

impl Listed {
    /// Sorts what a node holds (`label` names it): a provider of
    /// `protocol`, or skipped for its protocol or its error.
    pub fn add(&mut self, protocol: &str, label: &str, url: Result<ServiceUrl, String>) {
        match url {
            Ok(p) if p.protocol == protocol => self.providers.push(p),
            Ok(p) => self
                .skipped
                .push(format!("{label} (protocol {})", p.protocol)),
            Err(e) => self.skipped.push(e),
        }
    }

    /// What was skipped, to end an error: ` (skipped: a; b)`, or nothing.
    pub fn skipped_note(&self) -> String {
        if self.skipped.is_empty() {
            String::new()
        } else {
            format!(" (skipped: {})", self.skipped.join("; "))
        }
    }

    /// The providers; none is a connect error saying that registry
    /// `registry` has no `what` under `path`, what was skipped, and `hint`.
    pub fn providers(
        self,
        registry: &str,
        what: &str,
        path: &str,
        hint: &str,
    ) -> Result<Vec<ServiceUrl>, CallError> {
        if self.providers.is_empty() {
            return Err(CallError::Connect(format!(
                "registry {registry}: no {what} under {path}{}{hint}",
                self.skipped_note()
            )));
        }
        Ok(self.providers)
    }
}

/// A provider URL as registries hold them (`protocol://host:port/path?k=v&...`):
/// Dubbo and SOFA-RPC write this form, Motan a close cousin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceUrl {
    pub protocol: String,
    pub host: String,
    pub port: u16,
    pub path: String,
    pub params: BTreeMap<String, String>,
}

impl ServiceUrl {
    /// `host:port`, to connect to.
    pub fn address(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// Parses a provider URL (already URL-decoded):
    /// `protocol://host:port/path?k=v&...`.
    pub fn parse(url: &str) -> Result<ServiceUrl, String> {
        let (protocol, rest) = url
            .split_once("://")
            .ok_or_else(|| format!("`{url}` has no protocol"))?;
        let (location, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = location.split_once('/').unwrap_or((location, ""));
        let (host, port) = authority
            .rsplit_once(':')
            .ok_or_else(|| format!("`{url}` has no port"))?;
        let port = port
            .parse::<u16>()
            .map_err(|_| format!("`{url}` has an invalid port `{port}`"))?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(format!("`{url}` has no host"));
        }
        let params = query
            .split('&')
            .filter(|kv| !kv.is_empty())
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                (k.to_owned(), v.to_owned())
            })
            .collect();
        Ok(ServiceUrl {
            protocol: protocol.to_owned(),
            host: host.to_owned(),
            port,
            path: path.to_owned(),
            params,
        })
    }
}

/// The provider on `target`'s port, or the first one for an empty target.
pub fn pick<'a>(providers: &'a [ServiceUrl], target: &str) -> Result<&'a ServiceUrl, CallError> {
    let list = || {
        providers
            .iter()
            .map(ServiceUrl::address)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if target.is_empty() {
        return providers
            .first()
            .ok_or_else(|| CallError::Connect("no provider registered".into()));
    }
    let port = target
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse::<u16>().ok())
        .ok_or_else(|| {
            CallError::Config(format!(
                "target `{target}` is not host:port (with a registry, its port selects the provider)"
            ))
        })?;
    providers.iter().find(|p| p.port == port).ok_or_else(|| {
        CallError::Connect(format!(
            "no registered provider listens on port {port} (target {target}); registered: {}",
            list()
        ))
    })
}

/// Decodes `java.net.URLEncoder` output: `%XX` escapes (UTF-8) and `+`
/// for a space. A malformed escape is kept as it is.
pub fn url_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 2.6 provider's node, as ZooKeeper lists it.
    const NODE_26: &str = "dubbo%3A%2F%2F127.0.0.1%3A20881%2Frpclab.contract.BenchService%3Fanyhost%3Dtrue%26application%3Drpclab-dubbo-2.6-provider%26dubbo%3D2.0.2%26interface%3Drpclab.contract.BenchService%26methods%3DechoOrders%2Chello%2CechoOrder%2CechoString%2Cempty%26serialization%3Dhessian2%26side%3Dprovider";

    #[test]
    fn parses_registered_urls() {
        let url = url_decode(NODE_26);
        assert!(url.starts_with("dubbo://127.0.0.1:20881/rpclab.contract.BenchService?"));
        let p = ServiceUrl::parse(&url).unwrap();
        assert_eq!(p.protocol, "dubbo");
        assert_eq!(p.address(), "127.0.0.1:20881");
        assert_eq!(p.path, "rpclab.contract.BenchService");
        assert_eq!(p.params["serialization"], "hessian2");
        assert_eq!(
            p.params["methods"],
            "echoOrders,hello,echoOrder,echoString,empty"
        );
        let v6 = ServiceUrl::parse("dubbo://[::1]:20880/x").unwrap();
        assert_eq!(v6.address(), "[::1]:20880");
        for bad in [
            "127.0.0.1:20880",
            "dubbo://127.0.0.1/x",
            "dubbo://h:99999/x",
            "dubbo://:1/x",
        ] {
            assert!(ServiceUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn url_decoding() {
        assert_eq!(url_decode("a%2Fb+c%3d%"), "a/b c=%");
        assert_eq!(url_decode("%E4%B8%AD%zz"), "中%zz");
    }

    #[test]
    fn picks_by_target_port() {
        let providers: Vec<ServiceUrl> = [
            "dubbo://127.0.0.1:20880/s?serialization=hessian2",
            "dubbo://127.0.0.1:20881/s?serialization=hessian2",
        ]
        .iter()
        .map(|u| ServiceUrl::parse(u).unwrap())
        .collect();
        assert_eq!(pick(&providers, "127.0.0.1:20881").unwrap().port, 20881);
        assert_eq!(pick(&providers, "localhost:20880").unwrap().port, 20880);
        assert_eq!(pick(&providers, "").unwrap().port, 20880);
        assert!(matches!(
            pick(&providers, "127.0.0.1:9"),
            Err(CallError::Connect(m)) if m.contains("127.0.0.1:20880, 127.0.0.1:20881")
        ));
        assert!(matches!(
            pick(&providers, "nonsense"),
            Err(CallError::Config(_))
        ));
    }

    #[test]
    fn registry_option() {
        let r = ZooKeeper::parse("dubbo", "zookeeper://127.0.0.1:2181").unwrap();
        assert_eq!(r.ensemble, "127.0.0.1:2181");
        let r = ZooKeeper::parse(
            "dubbo",
            "zookeeper://127.0.0.1:2181/?backup=127.0.0.1:2182,127.0.0.1:2183",
        )
        .unwrap();
        assert_eq!(r.ensemble, "127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183");
        for bad in [
            "127.0.0.1:2181",
            "nacos://127.0.0.1:8848",
            "zookeeper://127.0.0.1",
            "zookeeper://",
        ] {
            assert!(
                matches!(ZooKeeper::parse("dubbo", bad), Err(CallError::Config(_))),
                "{bad}"
            );
        }
    }

    #[tokio::test]
    async fn an_unreachable_registry_is_a_connect_error() {
        // A port nothing listens on (bound, then released).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let r = ZooKeeper::parse("dubbo", &format!("zookeeper://127.0.0.1:{port}")).unwrap();
        let result = r.children("/dubbo/x.Y/providers").await;
        assert!(matches!(result, Err(CallError::Connect(_))), "{result:?}");
    }
}
