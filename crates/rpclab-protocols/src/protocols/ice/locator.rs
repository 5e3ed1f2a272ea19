//! Resolving an indirect proxy (`bench @ BenchAdapter`) through an Ice
//! locator, as Ice's own runtime does for IceGrid deployments: one
//! `::Ice::Locator::findAdapterById` call to the locator (IceGrid's
//! registry, `IceGrid/Locator`), whose reply is the adapter's direct proxy;
//! its endpoints are cached for the protocol instance's life (Ice's
//! default `Ice.Default.LocatorCacheTimeout=-1`: cached until a connection
//! to them fails, and the lab's connections live for a whole cell).
//!
//! The locator is reached over its own short-lived Ice connection (wait for
//! validate-connection, one request, one reply, close-connection), so the
//! cost of location is paid once per client program, before any timed call,
//! exactly where Ice pays it.

use super::codec::{self, Identity, TcpEndpoint, HEADER_LEN, REPLY};
use crate::net::connect_tcp;
use crate::protocol::CallError;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A locator proxy: `IceGrid/Locator:tcp -h 127.0.0.1 -p 4061`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocatorProxy {
    pub identity: Identity,
    pub endpoint: TcpEndpoint,
}

impl LocatorProxy {
    /// Parses Ice's stringified form `identity:tcp -h HOST -p PORT [-t MS]`
    /// (one TCP endpoint; the lab's locators have one).
    pub fn parse(s: &str) -> Result<LocatorProxy, CallError> {
        let bad = |why: &str| {
            CallError::Config(format!(
                "locator `{s}`: {why}; expected e.g. `IceGrid/Locator:tcp -h 127.0.0.1 -p 4061`"
            ))
        };
        let (identity, endpoint) = s.split_once(':').ok_or_else(|| bad("no endpoint"))?;
        let identity = Identity::parse(identity.trim());
        if identity.name.is_empty() {
            return Err(bad("empty identity"));
        }
        let mut words = endpoint.split_whitespace();
        if words.next() != Some("tcp") {
            return Err(bad("only a tcp endpoint is supported"));
        }
        let (mut host, mut port) = (None, None);
        while let Some(flag) = words.next() {
            let value = words.next().ok_or_else(|| bad("a flag without a value"))?;
            match flag {
                "-h" => host = Some(value.to_owned()),
                "-p" => port = Some(value.parse::<u16>().map_err(|_| bad("bad port"))?),
                "-t" => {}
                _ => return Err(bad("unknown endpoint flag")),
            }
        }
        Ok(LocatorProxy {
            identity,
            endpoint: TcpEndpoint {
                host: host.ok_or_else(|| bad("no -h"))?,
                port: port.ok_or_else(|| bad("no -p"))?,
            },
        })
    }

    /// Asks the locator for `adapter_id`'s endpoints (TCP only).
    pub async fn find_adapter(
        &self,
        adapter_id: &str,
        timeout: Duration,
    ) -> Result<Vec<TcpEndpoint>, CallError> {
        tokio::time::timeout(timeout, self.find_adapter_now(adapter_id))
            .await
            .map_err(|_| {
                CallError::Connect(format!(
                    "the locator {} did not answer findAdapterById(\"{adapter_id}\") within {timeout:?}",
                    self.endpoint
                ))
            })?
    }

    async fn find_adapter_now(&self, adapter_id: &str) -> Result<Vec<TcpEndpoint>, CallError> {
        let address = format!("{}:{}", self.endpoint.host, self.endpoint.port);
        let mut stream = connect_tcp(&address).await?;
        let mut header = [0u8; HEADER_LEN];
        stream.read_exact(&mut header).await?;
        let h = codec::Header::decode(&header)?;
        if h.message_type != codec::VALIDATE_CONNECTION {
            return Err(CallError::Protocol(format!(
                "the locator at {address} did not start with validate-connection (type {})",
                h.message_type
            )));
        }
        let mut request = Vec::with_capacity(64 + adapter_id.len());
        codec::encode_find_adapter_by_id(&mut request, 1, &self.identity, adapter_id);
        stream.write_all(&request).await?;
        let reply = loop {
            stream.read_exact(&mut header).await?;
            let h = codec::Header::decode(&header)?;
            let mut body = vec![0u8; h.size - HEADER_LEN];
            stream.read_exact(&mut body).await?;
            match h.message_type {
                REPLY => break body,
                codec::VALIDATE_CONNECTION => continue, // a heartbeat
                other => {
                    return Err(CallError::Protocol(format!(
                        "the locator sent message type {other} instead of a reply"
                    )))
                }
            }
        };
        // Graceful close, as Ice does: say so, then let the peer hang up.
        let _ = stream.write_all(&codec::close_connection()).await;
        let mut r = codec::Reader::new(&reply);
        let id = r.read_i32()?;
        if id != 1 {
            return Err(CallError::Protocol(format!(
                "the locator answered request {id}, not 1"
            )));
        }
        let proxy = codec::decode_find_adapter_reply(&reply[4..])?.ok_or_else(|| {
            CallError::Server(format!(
                "the locator returned a null proxy for adapter `{adapter_id}`: \
                 it is not active (is the IceGrid server activated?)"
            ))
        })?;
        if proxy.endpoints.is_empty() {
            return Err(CallError::Server(format!(
                "the locator's proxy for adapter `{adapter_id}` has no TCP endpoint \
                 (adapter id `{}`, other transports {:?}); this client speaks TCP only",
                proxy.adapter_id, proxy.other_endpoints
            )));
        }
        Ok(proxy.endpoints)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_locator_proxies() {
        let l = LocatorProxy::parse("IceGrid/Locator:tcp -h 127.0.0.1 -p 4061 -t 60000").unwrap();
        assert_eq!(l.identity.category, "IceGrid");
        assert_eq!(l.identity.name, "Locator");
        assert_eq!(l.endpoint.port, 4061);
        for bad in [
            "IceGrid/Locator",
            "IceGrid/Locator:udp -h x -p 1",
            "IceGrid/Locator:tcp -h 127.0.0.1",
            "IceGrid/Locator:tcp -h 127.0.0.1 -p 70000",
            ":tcp -h 127.0.0.1 -p 1",
        ] {
            assert!(LocatorProxy::parse(bad).is_err(), "{bad}");
        }
    }
}
