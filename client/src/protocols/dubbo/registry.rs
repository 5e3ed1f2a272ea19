//! Provider discovery in ZooKeeper, as a Dubbo consumer does it with
//! interface-level registration: the children of
//! `/dubbo/<interface>/providers` are the providers' URLs, URL-encoded
//! (`java.net.URLEncoder`), e.g.
//! `dubbo://127.0.0.1:20880/rpclab.contract.BenchService?dubbo=2.0.2&serialization=hessian2&...`.

use crate::protocol::CallError;
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::sync::OnceCell;

/// How long one discovery (connect, list, close) may take.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// A ZooKeeper registry and the providers it listed, looked up once per
/// protocol instance (the first `connect`) and then shared by every
/// connection. A failed or empty lookup is not cached: the next connect
/// tries again.
#[derive(Debug)]
pub struct Registry {
    /// As given, for messages: `zookeeper://127.0.0.1:2181`.
    url: String,
    /// The ensemble for the ZooKeeper client: `host:port[,host:port...]`.
    ensemble: String,
    providers: OnceCell<Vec<Provider>>,
}

/// One registered provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provider {
    pub protocol: String,
    pub host: String,
    pub port: u16,
    pub path: String,
    pub params: BTreeMap<String, String>,
}

impl Provider {
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
    pub fn parse(url: &str) -> Result<Provider, String> {
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
        Ok(Provider {
            protocol: protocol.to_owned(),
            host: host.to_owned(),
            port,
            path: path.to_owned(),
            params,
        })
    }
}

impl Registry {
    /// Parses the `registry` option: `zookeeper://host:port[,host:port...]`
    /// (a trailing path or `?backup=host:port,...` is accepted as Dubbo
    /// writes it).
    pub fn parse(url: &str) -> Result<Registry, CallError> {
        let bad = |why: &str| {
            CallError::Config(format!(
                "option `registry` of protocol `dubbo`: {why} (expected e.g. \
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
        let mut hosts: Vec<&str> = vec![location.trim_end_matches('/')];
        for (k, v) in query.split('&').filter_map(|kv| kv.split_once('=')) {
            if k == "backup" {
                hosts.extend(v.split(',').filter(|h| !h.is_empty()));
            }
        }
        for host in &hosts {
            match host.rsplit_once(':') {
                Some((h, p)) if !h.is_empty() && p.parse::<u16>().is_ok() => {}
                _ => return Err(bad(&format!("`{host}` is not host:port"))),
            }
        }
        Ok(Registry {
            url: url.to_owned(),
            ensemble: hosts.join(","),
            providers: OnceCell::new(),
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The address of the provider to connect to for `target`: the one
    /// listening on the target's port when `target` names one (the lab's
    /// server under test), else the first one listed.
    pub async fn resolve(&self, target: &str, service: &str) -> Result<Provider, CallError> {
        let providers = self
            .providers
            .get_or_try_init(|| self.discover(service))
            .await?;
        pick(providers, target).cloned()
    }

    /// Lists the dubbo providers of `service`; none is an error.
    async fn discover(&self, service: &str) -> Result<Vec<Provider>, CallError> {
        let path = format!("/dubbo/{service}/providers");
        let lookup = async {
            let client = zookeeper_client::Client::connector()
                .with_connection_timeout(Duration::from_secs(3))
                .with_session_timeout(Duration::from_secs(6))
                .connect(&self.ensemble)
                .await
                .map_err(|e| format!("cannot connect: {e}"))?;
            client
                .list_children(&path)
                .await
                .map_err(|e| format!("cannot list {path}: {e}"))
        };
        let children = tokio::time::timeout(DISCOVERY_TIMEOUT, lookup)
            .await
            .map_err(|_| format!("no answer within {} s", DISCOVERY_TIMEOUT.as_secs()))
            .and_then(|r| r)
            .map_err(|e| CallError::Connect(format!("registry {}: {e}", self.url)))?;
        let mut providers = Vec::new();
        let mut skipped = Vec::new();
        for child in &children {
            let url = url_decode(child);
            match Provider::parse(&url) {
                Ok(p) if p.protocol == "dubbo" => providers.push(p),
                Ok(p) => skipped.push(format!("{url} (protocol {})", p.protocol)),
                Err(e) => skipped.push(e),
            }
        }
        if providers.is_empty() {
            return Err(CallError::Connect(format!(
                "registry {}: no dubbo provider under {path}{}",
                self.url,
                if skipped.is_empty() {
                    String::new()
                } else {
                    format!(" (skipped: {})", skipped.join("; "))
                }
            )));
        }
        Ok(providers)
    }
}

/// The provider on `target`'s port, or the first one for an empty target.
pub fn pick<'a>(providers: &'a [Provider], target: &str) -> Result<&'a Provider, CallError> {
    let list = || {
        providers
            .iter()
            .map(Provider::address)
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
        let p = Provider::parse(&url).unwrap();
        assert_eq!(p.protocol, "dubbo");
        assert_eq!(p.address(), "127.0.0.1:20881");
        assert_eq!(p.path, "rpclab.contract.BenchService");
        assert_eq!(p.params["serialization"], "hessian2");
        assert_eq!(
            p.params["methods"],
            "echoOrders,hello,echoOrder,echoString,empty"
        );
        let v6 = Provider::parse("dubbo://[::1]:20880/x").unwrap();
        assert_eq!(v6.address(), "[::1]:20880");
        for bad in [
            "127.0.0.1:20880",
            "dubbo://127.0.0.1/x",
            "dubbo://h:99999/x",
            "dubbo://:1/x",
        ] {
            assert!(Provider::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn url_decoding() {
        assert_eq!(url_decode("a%2Fb+c%3d%"), "a/b c=%");
        assert_eq!(url_decode("%E4%B8%AD%zz"), "中%zz");
    }

    #[test]
    fn picks_by_target_port() {
        let providers: Vec<Provider> = [
            "dubbo://127.0.0.1:20880/s?serialization=hessian2",
            "dubbo://127.0.0.1:20881/s?serialization=hessian2",
        ]
        .iter()
        .map(|u| Provider::parse(u).unwrap())
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
        let r = Registry::parse("zookeeper://127.0.0.1:2181").unwrap();
        assert_eq!(r.ensemble, "127.0.0.1:2181");
        let r = Registry::parse("zookeeper://127.0.0.1:2181/?backup=127.0.0.1:2182,127.0.0.1:2183")
            .unwrap();
        assert_eq!(r.ensemble, "127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183");
        for bad in [
            "127.0.0.1:2181",
            "nacos://127.0.0.1:8848",
            "zookeeper://127.0.0.1",
            "zookeeper://",
        ] {
            assert!(
                matches!(Registry::parse(bad), Err(CallError::Config(_))),
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
        let r = Registry::parse(&format!("zookeeper://127.0.0.1:{port}")).unwrap();
        let result = r.resolve("127.0.0.1:20880", "x.Y").await;
        assert!(matches!(result, Err(CallError::Connect(_))), "{result:?}");
    }
}
