//! SOFA-RPC's `bolt` protocol (sofa-bolt `RpcProtocol` v1) with hessian2,
//! against `rpclab.contract.BenchService` (`contract/java/`), as exported
//! by the SOFA-RPC providers of `servers/sofa-rpc`.
//!
//! # Options
//!
//! * `registry`: e.g. `zookeeper://127.0.0.1:2181`. When set, the provider's
//!   address is discovered in ZooKeeper: the URL-decoded children of
//!   `/sofa-rpc/rpclab.contract.BenchService/providers` (SOFA-RPC's
//!   `ZookeeperRegistry` layout; a child whose data is the single byte 0 is
//!   a provider registered offline and is skipped). The provider whose port
//!   is the target's port is used, or the first one for an empty target;
//!   the lookup is done once per protocol instance (at the first `connect`)
//!   and shared by all its connections. Without it, `connect` dials the
//!   target.
//! * `heartbeat_s`: seconds of write silence after which a connection sends
//!   a bolt heartbeat (default 15, bolt's `bolt.tcp.heartbeat.interval`;
//!   0 disables). The provider closes connections idle for 90 s.
//! * `timeout_ms`: the timeout written in each request (default 3000,
//!   SOFA-RPC's consumer default). The provider discards, unanswered, a
//!   request that waited longer than this in its queue; this client has no
//!   timer of its own (the runner's call timeout applies).
//!
//! # Wire format
//!
//! See [`codec`] (frames, header map, SofaRequest/SofaResponse) and
//! [`hessian`] (SOFA-RPC 5's Hessian is the 2.0 *draft*, which the
//! final-spec `hessian2` crate does not speak).
//!
//! # Connections
//!
//! Multiplexed, as bolt's own client: see [`mux`](crate::mux) (one TCP
//! connection, many requests in flight matched by request id, a coalescing
//! writer, a reader that only frames, replies decoded on the callers'
//! tasks). What is bolt's, in [`BoltFraming`]: request ids are 32-bit and
//! start at 1, as bolt's `IDGenerator`; the server's heartbeat requests
//! are answered at once with a `HeartbeatAckCommand`, acks of ours are
//! skipped, as are other requests from the server (not part of the
//! contract); after `heartbeat_s` of write silence the connection sends a
//! heartbeat request.
//!
//! # Per-call work
//!
//! One request buffer, sized up front from the argument; the reply is
//! decoded straight into the contract value. The rest is the mux's.

pub mod codec;
pub use hessian2_draft as hessian;

use self::codec::Header;
use crate::discovery::{connect_provider, url_decode, Providers, ServiceUrl, ZooKeeper};
use crate::java_contract::Method;
use crate::mux::{Framing, Inbound, Mux, Split};
use crate::protocol::{
    check_options, heartbeat_option, CallError, Connection, Protocol, WireCounter,
};
use bytes::Bytes;
use rpclab_model::contract::{Call, Value};
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// bolt's default heartbeat interval (`bolt.tcp.heartbeat.interval`).
pub const DEFAULT_HEARTBEAT_S: u64 = 15;
/// SOFA-RPC's default consumer timeout (`consumer.invoke.timeout`).
pub const DEFAULT_TIMEOUT_MS: i32 = 3000;
/// Where SOFA-RPC's ZooKeeper registry lists the contract's providers.
pub const PROVIDERS_PATH: &str = "/sofa-rpc/rpclab.contract.BenchService/providers";

/// The bolt protocol, with its options.
#[derive(Debug)]
pub struct Bolt {
    heartbeat: Option<Duration>,
    timeout_ms: i32,
    providers: Option<Providers>,
}

impl Bolt {
    pub fn heartbeat(&self) -> Option<Duration> {
        self.heartbeat
    }

    pub fn timeout_ms(&self) -> i32 {
        self.timeout_ms
    }

    pub fn registry(&self) -> Option<&str> {
        self.providers.as_ref().map(|p| p.registry().url())
    }
}

/// The providers of the contract registered in ZooKeeper, online ones only.
pub async fn lookup(zk: &ZooKeeper) -> Result<Vec<ServiceUrl>, CallError> {
    let children = zk.children_with_data(PROVIDERS_PATH).await?;
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    for (name, data) in children {
        let url = url_decode(&name);
        if data.as_slice() == [0] {
            skipped.push(format!("{url} (offline)"));
            continue;
        }
        match ServiceUrl::parse(&url) {
            Ok(p) if p.protocol == "bolt" => found.push(p),
            Ok(p) => skipped.push(format!("{url} (protocol {})", p.protocol)),
            Err(e) => skipped.push(format!("{url} ({e})")),
        }
    }
    if found.is_empty() {
        return Err(CallError::Connect(format!(
            "registry {}: no online bolt provider under {PROVIDERS_PATH}{}; is the SOFA-RPC \
             provider up and registered?",
            zk.url(),
            if skipped.is_empty() {
                String::new()
            } else {
                format!(" (found: {})", skipped.join(", "))
            }
        )));
    }
    Ok(found)
}

impl Protocol for Bolt {
    type Conn = BoltConnection;
    type Exchange = crate::protocol::NoExchange;

    const NAME: &'static str = "bolt";

    const CONNECTION_MODEL: &'static str = crate::mux::CONNECTION_MODEL;

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        check_options(
            Self::NAME,
            options,
            &["registry", "heartbeat_s", "timeout_ms"],
        )?;
        let heartbeat = heartbeat_option(Self::NAME, options, Some(DEFAULT_HEARTBEAT_S))?;
        let timeout_ms = match options.get("timeout_ms") {
            None => DEFAULT_TIMEOUT_MS,
            Some(s) => match s.parse::<i32>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(CallError::Config(format!(
                        "option `timeout_ms` of protocol `bolt` must be a positive number of \
                         milliseconds (at most {}), not `{s}`",
                        i32::MAX
                    )))
                }
            },
        };
        let providers = Providers::from_options(Self::NAME, options)?;
        Ok(Bolt {
            heartbeat,
            timeout_ms,
            providers,
        })
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<BoltConnection, CallError> {
        let lookup = |zk: ZooKeeper| async move { lookup(&zk).await };
        let accept = |provider: &ServiceUrl| match provider.params.get("serialization") {
            Some(s) if s != "hessian2" => Err(CallError::Config(format!(
                "the provider at {} registered serialization `{s}`; this client \
                 speaks only hessian2",
                provider.address()
            ))),
            _ => Ok(()),
        };
        let (read, write) =
            connect_provider(self.providers.as_ref(), target, counter, lookup, accept).await?;
        Ok(BoltConnection::start(
            read,
            write,
            self.heartbeat,
            self.timeout_ms,
        ))
    }
}

/// One bolt connection, shared by many callers (see [`mux`](crate::mux)).
#[derive(Debug)]
pub struct BoltConnection {
    mux: Mux<BoltFraming>,
    timeout_ms: i32,
}

impl BoltConnection {
    /// Runs the connection's tasks over a stream's two halves.
    pub fn start<R, W>(
        read: R,
        write: W,
        heartbeat: Option<Duration>,
        timeout_ms: i32,
    ) -> BoltConnection
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        BoltConnection {
            mux: Mux::start(read, write, heartbeat, BoltFraming),
            timeout_ms,
        }
    }

    /// Whether the connection has failed or been closed by the server.
    pub fn is_closed(&self) -> bool {
        self.mux.is_closed()
    }
}

impl Connection for BoltConnection {
    async fn call(&self, call: &Call) -> Result<Value, CallError> {
        let method = Method::of(call)?;
        let frame = self
            .mux
            .call(|id| {
                let mut request = Vec::with_capacity(codec::request_capacity(&call.argument));
                codec::encode_request(
                    &mut request,
                    id as u32,
                    self.timeout_ms,
                    method,
                    &call.argument,
                )?;
                Ok(request)
            })
            .await?;
        codec::decode_response(&frame.header, &frame.bytes, method)
    }
}

/// A response for a caller: its header and the whole frame.
#[derive(Debug)]
pub struct Frame {
    pub header: Header,
    pub bytes: Bytes,
}

/// bolt's frames, for the [`mux`](crate::mux): the fixed header gives the
/// lengths of class, header and content; replies by request id; the
/// server's heartbeat requests acked at once.
#[derive(Debug)]
pub struct BoltFraming;

impl Framing for BoltFraming {
    const NAME: &'static str = "bolt";
    // bolt's IDGenerator starts at 1 (and wraps as a Java int).
    const FIRST_ID: u64 = 1;
    const MAX_ID: u64 = u32::MAX as u64;
    type Head = Header;
    type Reply = Frame;

    fn split(&self, buf: &[u8]) -> Result<Split<Header>, CallError> {
        // Lengths are checked against MAX_BODY.
        Ok(match Header::decode(buf)? {
            Some(head) if buf.len() >= head.total() => {
                let len = head.total();
                Split::Whole { head, len }
            }
            Some(head) => Split::Partial {
                len: Some(head.total()),
            },
            None => Split::Partial { len: None },
        })
    }

    fn route(&self, header: Header, frame: Bytes) -> Result<Inbound<Frame>, CallError> {
        if header.is_request() {
            return Ok(
                if header.is_heartbeat() && header.kind == codec::TYPE_REQUEST {
                    Inbound::Answer(Bytes::copy_from_slice(&codec::heartbeat_ack(header.id)))
                } else {
                    // Other requests from the server: not part of this contract.
                    Inbound::Skip
                },
            );
        }
        if header.is_heartbeat() {
            // The ack of our heartbeat: nothing waits for it.
            return Ok(Inbound::Skip);
        }
        Ok(Inbound::Reply {
            id: header.id.into(),
            reply: Frame {
                header,
                bytes: frame,
            },
        })
    }

    fn heartbeat(&self, id: impl FnOnce() -> u64) -> Result<Bytes, CallError> {
        Ok(Bytes::copy_from_slice(&codec::heartbeat_request(
            id() as u32
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mux::{check_split, route_all};

    #[test]
    fn malformed_headers_are_errors_and_short_frames_partial() {
        let hello = include_bytes!("bolt/golden/vectors/5.13/hello.response.bin");
        let mut bad_proto = codec::heartbeat_ack(1).to_vec();
        bad_proto[0] = 2;
        let mut huge = codec::heartbeat_ack(1).to_vec();
        huge[16..20].copy_from_slice(&u32::MAX.to_be_bytes());
        check_split(
            &BoltFraming,
            hello,
            codec::RESPONSE_HEADER_LEN,
            &[&bad_proto, &huge],
        );
    }

    #[test]
    fn answers_heartbeats_and_routes_responses_by_id() {
        let hello = include_bytes!("bolt/golden/vectors/5.13/hello.response.bin");
        let (h, _) = codec::frame(hello).unwrap().unwrap();
        let mut stream = codec::heartbeat_request(77).to_vec();
        stream.extend_from_slice(&codec::heartbeat_ack(5)); // ours: skipped
        stream.extend_from_slice(hello);
        let (routes, rest) = route_all(&BoltFraming, &stream).unwrap();
        assert_eq!(rest, None);
        match &routes[..] {
            [Inbound::Answer(answer), Inbound::Skip, Inbound::Reply { id, reply }] => {
                assert_eq!(&answer[..], &codec::heartbeat_ack(77)[..]);
                assert_eq!(*id, u64::from(h.id));
                assert_eq!(
                    codec::decode_response(&reply.header, &reply.bytes, Method::Hello).unwrap(),
                    Value::Str("hello aa".into())
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_heartbeat_is_a_heartbeat_request() {
        let beat = BoltFraming.heartbeat(|| 42).unwrap();
        assert_eq!(&beat[..], &codec::heartbeat_request(42)[..]);
    }
}
