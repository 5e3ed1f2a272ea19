//! Weibo Motan's `motan2` protocol (the 13-byte header, a meta map, a body
//! in hessian2 or Motan's "simple" serialization), against
//! `rpclab.contract.BenchService` (`contract/java/`) as exported by the
//! providers of `servers/motan-1.2` (Motan 1.2.x and 1.1.x).
//!
//! # Options
//!
//! * `serialization`: `hessian2` (default; Motan's number 0) or `simple`
//!   (number 6; strings, numbers, maps and arrays only, so the Order
//!   operations are refused with a configuration error before anything is
//!   sent). Motan's other serializations are refused, named.
//! * `registry`: e.g. `zookeeper://127.0.0.1:2181`. When set, the provider
//!   is discovered as a Motan referer does it with Motan's ZooKeeper
//!   registry: the children of `/motan/<group>/rpclab.contract.BenchService/server`
//!   (named `ip:port`), whose data is the provider URL
//!   (`motan2://127.0.0.1:8002/rpclab.contract.BenchService?group=...&serialization=...`),
//!   Java-serialized by zkclient with registry type `zookeeper` or plain
//!   UTF-8 with type `zk` (both are read). The provider on the target's
//!   port is used, or the first one for an empty target; its registered
//!   `serialization` must be this client's. Looked up once per protocol
//!   instance (the first `connect`) and shared by all its connections.
//!   Without it, `connect` dials the target.
//! * `group` (default `rpclab`) and `version` (default `1.0`, Motan's): the
//!   service key the provider looks the service up by (`M_g`, `M_v`), and
//!   the registry path.
//! * `heartbeat_s`: seconds of write silence after which a connection sends
//!   a motan2 heartbeat (default 0: off, as a Motan client on a healthy
//!   connection; the provider never closes idle connections). Heartbeats
//!   from the provider are always answered.
//!
//! # Connections
//!
//! Multiplexed, as Motan's own netty client with a shared channel: see
//! [`mux`](crate::mux) (one TCP connection, many requests in flight
//! matched by request id, a coalescing writer, a reader that only frames,
//! replies decoded on the callers' tasks). What is Motan's, in
//! [`MotanFraming`]: a frame's length is known once its meta and body
//! lengths are in; request ids start at 1 (Motan's start anywhere; 1 keeps
//! 0 out of the way); the provider's heartbeat requests are answered at
//! once with a heartbeat response, responses to ours are skipped, as are
//! requests from the provider (not part of the contract); with
//! `heartbeat_s`, a heartbeat request after that much write silence.
//!
//! On the poll engine (one call in flight per connection, a provider at
//! the target, no registry), a connection is a [`MotanExchange`]: the same
//! encoder and decoder ([`MotanCalls`]) and the same framing, request ids
//! counted per connection; a heartbeat request of the provider is
//! answered in front of the next request. A call the serialization cannot
//! carry (refused before anything is sent) runs on tasks.
//!
//! # Per-call work
//!
//! One request buffer, sized up front (never regrown; the meta map of
//! each method is encoded once per protocol instance and copied; on the
//! poll engine the whole request is encoded once and restamped with each
//! call's id); the reply is decoded straight into the contract value, or
//! on the poll engine, for a string, compared with the expected one where
//! it lies in the reply, no value made. The rest is the mux's.

pub mod codec;
pub mod registry;
pub use motan_simple as simple;

use self::codec::{Header, Layout, Method, RequestTemplate, Serialization, MOTAN_SERIALIZATIONS};
use crate::discovery::{connect_provider, Providers, ServiceUrl, ZooKeeper};
use crate::mux::{Framing, Inbound, Split};
use crate::mux_connection::MuxConnection;
use crate::mux_exchange::{CallCodec, MuxExchange};
use crate::protocol::{check_options, heartbeat_option, CallError, Protocol, WireCounter};
use bytes::Bytes;
use rpclab_model::contract::{Call, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The group the rpclab providers export in (`MOTAN_GROUP`).
pub const DEFAULT_GROUP: &str = "rpclab";
/// Motan's default service version.
pub const DEFAULT_VERSION: &str = "1.0";
/// What the client calls itself (`M_s`, Motan's `application`).
pub const SOURCE: &str = "rpclab-client";

/// The motan2 protocol, with its options.
#[derive(Debug)]
pub struct Motan {
    template: Arc<RequestTemplate>,
    group: String,
    heartbeat: Option<Duration>,
    providers: Option<Providers>,
}

impl Motan {
    pub fn serialization(&self) -> Serialization {
        self.template.serialization()
    }

    pub fn heartbeat(&self) -> Option<Duration> {
        self.heartbeat
    }

    pub fn group(&self) -> &str {
        &self.group
    }
}

impl Protocol for Motan {
    type Conn = MotanConnection;
    type Exchange = MotanExchange;

    const NAME: &'static str = "motan2";

    const CONNECTION_MODEL: &'static str = crate::mux::CONNECTION_MODEL;

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        check_options(
            Self::NAME,
            options,
            &[
                "serialization",
                "registry",
                "group",
                "version",
                "heartbeat_s",
            ],
        )?;
        let name = options
            .get("serialization")
            .map_or("hessian2", String::as_str);
        let serialization = Serialization::from_name(name).ok_or_else(|| {
            let known: Vec<String> = MOTAN_SERIALIZATIONS
                .iter()
                .map(|(n, id)| format!("{n} ({id})"))
                .collect();
            let what = if MOTAN_SERIALIZATIONS.iter().any(|(n, _)| *n == name) {
                format!("serialization `{name}` exists in Motan but is not implemented here")
            } else {
                format!("serialization `{name}` does not exist in motan2")
            };
            CallError::Config(format!(
                "protocol `motan2`: {what}; motan2's serializations are {}; this client \
                 implements `hessian2` and `simple`",
                known.join(", ")
            ))
        })?;
        let heartbeat = heartbeat_option(Self::NAME, options, None)?;
        let group = options
            .get("group")
            .cloned()
            .unwrap_or_else(|| DEFAULT_GROUP.to_owned());
        let version = options
            .get("version")
            .map_or(DEFAULT_VERSION, String::as_str);
        if group.is_empty() || group.contains('/') {
            return Err(CallError::Config(format!(
                "option `group` of protocol `motan2` must be a non-empty name without `/`, not `{group}`"
            )));
        }
        let template = RequestTemplate::new(serialization, &group, version, SOURCE)?;
        let providers = Providers::from_options(Self::NAME, options)?;
        Ok(Motan {
            template: Arc::new(template),
            group,
            heartbeat,
            providers,
        })
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<MotanConnection, CallError> {
        let group = self.group.clone();
        let lookup = |zk: ZooKeeper| async move { registry::lookup(&zk, &group).await };
        let accept = |provider: &ServiceUrl| {
            let wanted = self.serialization().name();
            let registered = provider
                .params
                .get("serialization")
                .map_or("hessian2", String::as_str);
            if registered == wanted {
                return Ok(());
            }
            Err(CallError::Config(format!(
                "the provider at {} registered serialization `{registered}`; this client \
                 is set to `{wanted}` (option `serialization`), which Motan would \
                 answer in `{registered}` or refuse",
                provider.address()
            )))
        };
        let (read, write) =
            connect_provider(self.providers.as_ref(), target, counter, lookup, accept).await?;
        let calls = MotanCalls {
            template: Arc::clone(&self.template),
        };
        Ok(MotanConnection::start(read, write, self.heartbeat, calls))
    }

    /// The calls of a provider at the target (the poll engine dials it; a
    /// provider found in a registry is called on tasks) that the
    /// serialization can carry (a refused call fails on tasks, as ever).
    fn exchange(&self, call: &Call) -> Result<Option<MotanExchange>, CallError> {
        let calls = MotanCalls {
            template: Arc::clone(&self.template),
        };
        if self.providers.is_some() || calls.refusal(call).is_some() {
            return Ok(None);
        }
        Ok(Some(MuxExchange::new(calls, call)))
    }
}

/// A motan2 call, one at a time on its own connection (the poll engine's).
pub type MotanExchange = MuxExchange<MotanCalls>;

/// The contract's motan2 requests and their replies: what a
/// [`MotanConnection`] and a [`MotanExchange`] both encode and decode.
#[derive(Debug, Clone)]
pub struct MotanCalls {
    template: Arc<RequestTemplate>,
}

impl CallCodec for MotanCalls {
    type Framing = MotanFraming;

    fn framing(&self) -> MotanFraming {
        MotanFraming
    }

    fn request_capacity(&self, call: &Call) -> usize {
        Method::of(call).map_or(0, |m| self.template.capacity(m, &call.argument))
    }

    fn encode(&self, out: &mut Vec<u8>, id: u64, call: &Call) -> Result<(), CallError> {
        self.template
            .encode(out, id, Method::of(call)?, &call.argument)
    }

    fn restamp(&self, request: &mut [u8], id: u64) -> bool {
        codec::restamp_request(request, id)
    }

    fn decode(&self, frame: &Frame, call: &Call) -> Result<Value, CallError> {
        codec::decode_response(
            &frame.header,
            &frame.bytes[frame.layout.meta.clone()],
            &frame.bytes[frame.layout.body.clone()],
            Method::of(call)?,
            self.template.serialization(),
        )
    }

    fn is_expected(&self, frame: &Frame, call: &Call) -> bool {
        Method::of(call).is_ok_and(|method| {
            codec::is_expected(
                &frame.header,
                &frame.bytes[frame.layout.body.clone()],
                method,
                self.template.serialization(),
                &call.expected,
            )
        })
    }

    /// An operation the serialization cannot carry.
    fn refusal(&self, call: &Call) -> Option<CallError> {
        let serialization = self.template.serialization();
        match Method::of(call) {
            Ok(m) if codec::fits(m, serialization) => None,
            Ok(m) => Some(codec::unsupported(m, serialization)),
            Err(e) => Some(e.into()),
        }
    }
}

/// One motan2 connection, shared by many callers (see [`mux`](crate::mux)).
pub type MotanConnection = MuxConnection<MotanCalls>;

/// A response for a caller: its header and the frame's bytes.
#[derive(Debug)]
pub struct Frame {
    pub header: Header,
    pub layout: Layout,
    pub bytes: Bytes,
}

/// motan2's frames, for the [`mux`](crate::mux) (see the module
/// documentation).
#[derive(Debug)]
pub struct MotanFraming;

impl Framing for MotanFraming {
    const NAME: &'static str = "motan2";
    const PEER: &'static str = "provider";
    // Motan's ids start anywhere; 1 keeps 0 out of the way.
    const FIRST_ID: u64 = 1;
    type Head = (Header, Layout);
    type Reply = Frame;

    fn split(&self, buf: &[u8]) -> Result<Split<(Header, Layout)>, CallError> {
        // Lengths are checked against the limits.
        Ok(match codec::frame(buf)? {
            Some((header, layout)) => Split::Whole {
                len: layout.total(),
                head: (header, layout),
            },
            None => Split::Partial {
                len: codec::frame_len_hint(buf)?,
            },
        })
    }

    fn route(
        &self,
        (header, layout): (Header, Layout),
        bytes: Bytes,
    ) -> Result<Inbound<Frame>, CallError> {
        if header.is_heartbeat() {
            return Ok(if header.is_response() {
                // A response to our heartbeat: nothing to do.
                Inbound::Skip
            } else {
                Inbound::Answer(Bytes::copy_from_slice(&codec::heartbeat(header.id, true)))
            });
        }
        if !header.is_response() {
            // The provider calling back: not part of this contract.
            return Ok(Inbound::Skip);
        }
        Ok(Inbound::Reply {
            id: header.id,
            reply: Frame {
                header,
                layout,
                bytes,
            },
        })
    }

    fn heartbeat(&self, id: impl FnOnce() -> u64) -> Result<Bytes, CallError> {
        Ok(Bytes::copy_from_slice(&codec::heartbeat(id(), false)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mux::{check_split, route_all};
    use rpclab_model::contract::Operation;

    use crate::testing::{assert_refused, options as opts, refusal};

    #[test]
    fn options() {
        let m = Motan::new(&opts(&[])).unwrap();
        assert_eq!(m.serialization(), Serialization::Hessian2);
        assert_eq!(m.heartbeat(), None);
        assert_eq!(m.group(), "rpclab");
        let m = Motan::new(&opts(&[
            ("serialization", "simple"),
            ("registry", "zookeeper://127.0.0.1:2181"),
            ("group", "g"),
            ("version", "2.0"),
            ("heartbeat_s", "5"),
        ]))
        .unwrap();
        assert_eq!(m.serialization(), Serialization::Simple);
        assert_eq!(m.heartbeat(), Some(Duration::from_secs(5)));
        let m = refusal::<Motan>(&[("serialization", "breeze")]);
        assert!(
            m.contains("`breeze` exists in Motan but is not implemented"),
            "{m}"
        );
        assert_refused::<Motan>(&[
            &[("serialization", "xml")],
            &[("heartbeat_s", "-1")],
            &[("registry", "consul://127.0.0.1:8500")],
            &[("group", "a/b")],
            &[("version", "1\n0")],
            &[("transport", "framed")],
        ]);
    }

    #[test]
    fn malformed_headers_are_errors_and_short_frames_partial() {
        let good = reply(5, "hello aa");
        let mut bad_magic = good.clone();
        bad_magic[0] = 0xca;
        let mut huge = good.clone();
        huge[13..17].copy_from_slice(&u32::MAX.to_be_bytes());
        // The length is known once the (empty) meta's and the body's are in.
        check_split(
            &MotanFraming,
            &good,
            codec::HEADER_LEN + 8,
            &[&bad_magic, &huge],
        );
    }

    /// A response to request `id` whose body is `s` in hessian2.
    fn reply(id: u64, s: &str) -> Vec<u8> {
        let mut body = Vec::new();
        hessian2::Encoder::new(&mut body).write_string(s);
        let mut reply = Header {
            flags: codec::FLAG_RESPONSE,
            version: codec::VERSION,
            status: codec::STATUS_NORMAL,
            serialization: 0,
            id,
        }
        .encode()
        .to_vec();
        reply.extend_from_slice(&0u32.to_be_bytes());
        reply.extend_from_slice(&(body.len() as u32).to_be_bytes());
        reply.extend_from_slice(&body);
        reply
    }

    #[test]
    fn answers_provider_heartbeats_and_routes_responses() {
        let mut stream = codec::heartbeat(77, false).to_vec();
        stream.extend_from_slice(&reply(5, "hello aa"));
        // A response to our heartbeat.
        stream.extend_from_slice(&codec::heartbeat(9, true));
        let (routes, rest) = route_all(&MotanFraming, &stream).unwrap();
        assert_eq!(rest, None);
        match &routes[..] {
            [Inbound::Answer(answer), Inbound::Reply {
                id: 5,
                reply: frame,
            }, Inbound::Skip] => {
                assert_eq!(&answer[..], &codec::heartbeat(77, true)[..]);
                let value = codec::decode_response(
                    &frame.header,
                    &frame.bytes[frame.layout.meta.clone()],
                    &frame.bytes[frame.layout.body.clone()],
                    Method::Hello,
                    Serialization::Hessian2,
                )
                .unwrap();
                assert_eq!(value, Operation::Hello.call().expected);
            }
            other => panic!("{other:?}"),
        }
    }

    /// A request is encoded once per exchange and restamped with each
    /// call's id, the same bytes as encoded, in both serializations.
    #[test]
    fn restamped_requests_are_encoded_requests() {
        for serialization in [Serialization::Hessian2, Serialization::Simple] {
            let template = RequestTemplate::new(serialization, "rpclab", "1.0", SOURCE).unwrap();
            let calls = MotanCalls {
                template: Arc::new(template),
            };
            crate::testing::restamped_requests_are_encoded_requests(
                &calls,
                &[1, 2, 0x0102_0304_0506_0708, u64::MAX],
            );
        }
    }

    #[tokio::test]
    async fn the_heartbeat_speaks_when_idle() {
        let template = Arc::new(
            RequestTemplate::new(Serialization::Hessian2, "rpclab", "1.0", SOURCE).unwrap(),
        );
        let calls = MotanCalls { template };
        let (conn, _server, beat) = crate::mux::idle_start::<_, 21>(|read, write, beat| {
            MotanConnection::start(read, write, beat, calls)
        })
        .await;
        let h = Header::decode(&beat).unwrap();
        assert!(h.is_heartbeat() && !h.is_response(), "{h:?}");
        drop(conn);
    }
}
