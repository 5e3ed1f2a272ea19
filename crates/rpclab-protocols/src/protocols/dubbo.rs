//! Apache Dubbo's `dubbo` protocol (dubbo2: the 16-byte exchange header over
//! TCP) with hessian2 serialization, against `rpclab.contract.BenchService`
//! (`contract/java/`), as exported by the Dubbo 3.3 and 2.6 providers of
//! `servers/dubbo-*`.
//!
//! # Options
//!
//! * `serialization`: `hessian2` (default; Dubbo's id 2) or another of
//!   [`format::Format::names`] (see [`serialization`]). Dubbo's
//!   serializations this client does not speak are refused with a
//!   configuration error that lists the ones it does. It must be the one
//!   the provider is configured with: with a registry, the provider's
//!   registered `serialization` is checked before connecting.
//! * `registry`: e.g. `zookeeper://127.0.0.1:2181`. When set, the provider's
//!   address is discovered in ZooKeeper (the URL-decoded children of
//!   `/dubbo/rpclab.contract.BenchService/providers`): the provider whose
//!   port is the target's port, or the first one for an empty target. The
//!   lookup is done once per protocol instance (at the first `connect`) and
//!   shared by all its connections. Without it, `connect` dials the target.
//! * `heartbeat_s`: seconds of write silence after which a connection sends
//!   a heartbeat (default 60, Dubbo's; 0 disables).
//!
//! # Wire format
//!
//! See [`codec`] (the frame and the order of values, once for every
//! serialization) and [`serialization`] (the values): requests carry the dubbo version `2.0.2`, the path and
//! interface `rpclab.contract.BenchService`, service version `0.0.0` (both
//! providers export none; Dubbo treats `0.0.0` as none), the method, its JVM
//! parameter descriptor, the argument (an `rpclab.contract.Order` object,
//! an `ArrayList` of them, or a string) and the attachments (path,
//! interface, version). Replies are decoded straight into contract values.
//!
//! # Connections
//!
//! Multiplexed, as Dubbo's own client: see [`mux`](crate::mux) (one TCP
//! connection, many requests in flight matched by request id, a coalescing
//! writer, a reader that only frames, replies decoded on the callers'
//! tasks). What is Dubbo's, in [`DubboFraming`]: request ids are the whole
//! `long` range from 0; the server's heartbeat requests (two-way events)
//! are answered at once with a heartbeat response, answers to ours and
//! other events are skipped, as are requests from the server (callbacks
//! are not part of the contract); every `heartbeat_s` of write silence the
//! connection sends a heartbeat request (so an idle connection says
//! something at least every 2 × `heartbeat_s`, within the provider's idle
//! timeout of 3 × its heartbeat).
//!
//! On the poll engine (one call in flight per connection, a provider at
//! the target, no registry), a connection is a [`DubboExchange`]: the same
//! encoder and decoder ([`DubboCalls`], every serialization) and the same
//! framing, request ids counted per connection; a heartbeat request of
//! the provider is answered in front of the next request.
//!
//! # Per-call work
//!
//! One request buffer, sized up front from the argument (never regrown);
//! the reply's body is decoded straight into the contract value (its
//! strings and list). The rest is the mux's (one oneshot, one map entry,
//! no copy of the reply). On the poll engine the request is encoded once
//! and restamped with each call's id, and in hessian2 a string reply is
//! compared with the expected string where it lies, no value made
//! ([`codec::is_expected`]; any other reply is decoded and compared).

pub mod codec;
pub mod format;
pub mod serialization;

use self::codec::{Header, Method, HEADER_LEN};
use self::format::Format;
use crate::discovery::{connect_provider, url_decode, Listed, Providers, ServiceUrl, ZooKeeper};
use crate::mux::{Framing, Inbound, Split};
use crate::mux_connection::MuxConnection;
use crate::mux_exchange::{CallCodec, MuxExchange};
use crate::protocol::{check_options, heartbeat_option, CallError, Protocol, WireCounter};
use bytes::Bytes;
use rpclab_model::contract::{Call, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// Dubbo's default heartbeat interval.
pub const DEFAULT_HEARTBEAT_S: u64 = 60;

/// Every serialization Dubbo 2.x/3.x ships (or shipped), with its id, for
/// the message that refuses one this client does not speak.
pub const DUBBO_SERIALIZATIONS: &[(&str, u8)] = &[
    ("hessian2", 2),
    ("java", 3),
    ("compactedjava", 4),
    ("fastjson", 6),
    ("nativejava", 7),
    ("kryo", 8),
    ("fst", 9),
    ("protostuff", 12),
    ("avro", 11),
    ("gson", 16),
    ("protobuf-json", 21),
    ("protobuf", 22),
    ("fastjson2", 23),
    ("kryo2", 25),
];

/// The dubbo protocol, with its options.
#[derive(Debug)]
pub struct Dubbo {
    serialization: String,
    format: Arc<Format>,
    heartbeat: Option<Duration>,
    registry: Option<Providers>,
}

impl Dubbo {
    /// The `serialization` option's value.
    pub fn serialization(&self) -> &str {
        &self.serialization
    }

    pub fn heartbeat(&self) -> Option<Duration> {
        self.heartbeat
    }

    pub fn registry(&self) -> Option<&str> {
        self.registry.as_ref().map(|p| p.registry().url())
    }
}

impl Protocol for Dubbo {
    type Conn = DubboConnection;
    type Exchange = DubboExchange;

    const NAME: &'static str = "dubbo";

    const CONNECTION_MODEL: &'static str = crate::mux::CONNECTION_MODEL;

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        let mut known = vec!["serialization", "registry", "heartbeat_s"];
        known.extend(Format::options());
        check_options(Self::NAME, options, &known)?;
        let serialization = options
            .get("serialization")
            .map_or("hessian2", String::as_str)
            .to_owned();
        let format = match Format::new(&serialization, options) {
            Some(format) => format?,
            None => {
                let dubbo_has: Vec<String> = DUBBO_SERIALIZATIONS
                    .iter()
                    .map(|(name, id)| format!("{name} ({id})"))
                    .collect();
                let what = if DUBBO_SERIALIZATIONS
                    .iter()
                    .any(|(n, _)| *n == serialization)
                {
                    format!("serialization `{serialization}` exists in Dubbo but this client does not speak it")
                } else {
                    format!("serialization `{serialization}` does not exist in Dubbo")
                };
                return Err(CallError::Config(format!(
                    "protocol `dubbo`: {what}; Dubbo's serializations are {}; \
                     this client speaks {}",
                    dubbo_has.join(", "),
                    Format::names().join(", ")
                )));
            }
        };
        let heartbeat = heartbeat_option(Self::NAME, options, Some(DEFAULT_HEARTBEAT_S))?;
        let registry = Providers::from_options(Self::NAME, options)?;
        Ok(Dubbo {
            serialization,
            format: Arc::new(format),
            heartbeat,
            registry,
        })
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<DubboConnection, CallError> {
        let accept = |provider: &ServiceUrl| {
            // A provider without the parameter uses Dubbo's default
            // (hessian2 up to 3.2).
            let theirs = provider
                .params
                .get("serialization")
                .map_or("hessian2", String::as_str);
            if theirs == self.serialization {
                return Ok(());
            }
            Err(CallError::Config(format!(
                "the provider at {} registered serialization `{theirs}`; this client \
                 was configured to send `{}`, which the provider would refuse \
                 (set the `serialization` option to `{theirs}`)",
                provider.address(),
                self.serialization
            )))
        };
        let (read, write) =
            connect_provider(self.registry.as_ref(), target, counter, discover, accept).await?;
        Ok(DubboConnection::start(
            read,
            write,
            self.heartbeat,
            DubboCalls::new(Arc::clone(&self.format)),
        ))
    }

    /// The calls of a provider at the target: the poll engine dials it, so
    /// a provider found in a registry is called on tasks.
    fn exchange(&self, call: &Call) -> Result<Option<DubboExchange>, CallError> {
        if self.registry.is_some() {
            return Ok(None);
        }
        let calls = DubboCalls::new(Arc::clone(&self.format));
        Ok(Some(MuxExchange::new(calls, call)))
    }
}

/// A dubbo call, one at a time on its own connection (the poll engine's).
pub type DubboExchange = MuxExchange<DubboCalls>;

/// The contract's dubbo requests and their replies in one serialization:
/// what a [`DubboConnection`] and a [`DubboExchange`] both encode and
/// decode.
#[derive(Debug, Clone)]
pub struct DubboCalls {
    format: Arc<Format>,
}

impl DubboCalls {
    /// The calls in a serialization.
    pub fn new(format: Arc<Format>) -> DubboCalls {
        DubboCalls { format }
    }
}

impl CallCodec for DubboCalls {
    type Framing = DubboFraming;

    fn framing(&self) -> DubboFraming {
        DubboFraming {
            format: Arc::clone(&self.format),
        }
    }

    fn request_capacity(&self, call: &Call) -> usize {
        codec::request_capacity(&call.argument)
    }

    fn encode(&self, out: &mut Vec<u8>, id: u64, call: &Call) -> Result<(), CallError> {
        out.clear();
        self.format
            .encode_request(out, id, Method::of(call)?, &call.argument)
    }

    fn restamp(&self, request: &mut [u8], id: u64) -> bool {
        codec::restamp_request(request, id)
    }

    fn decode(&self, frame: &Frame, call: &Call) -> Result<Value, CallError> {
        self.format
            .decode_response(&frame.header, &frame.body, Method::of(call)?)
    }

    fn is_expected(&self, frame: &Frame, call: &Call) -> bool {
        Method::of(call).is_ok_and(|method| {
            self.format
                .is_expected(&frame.header, &frame.body, method, &call.expected)
        })
    }
}

/// Lists the dubbo providers of the contract's service as a Dubbo consumer
/// does with interface-level registration: the children of
/// `/dubbo/<interface>/providers` are the providers' URLs, URL-encoded
/// (`java.net.URLEncoder`), e.g.
/// `dubbo://127.0.0.1:20880/rpclab.contract.BenchService?dubbo=2.0.2&serialization=hessian2&...`.
/// Providers of other protocols under the same interface are skipped; none
/// left is an error that lists what was skipped.
async fn discover(zk: ZooKeeper) -> Result<Vec<ServiceUrl>, CallError> {
    providers_of(&zk, codec::SERVICE).await
}

/// The dubbo providers of `interface` in the registry (see [`discover`]):
/// the contract's, or any interface a generic call names.
pub async fn providers_of(zk: &ZooKeeper, interface: &str) -> Result<Vec<ServiceUrl>, CallError> {
    let path = format!("/dubbo/{interface}/providers");
    let mut listed = Listed::default();
    for child in zk.children(&path).await? {
        let url = url_decode(&child);
        listed.add("dubbo", &url, ServiceUrl::parse(&url));
    }
    listed.providers(zk.url(), "dubbo provider", &path, "")
}

/// One dubbo connection, shared by many callers (see [`mux`](crate::mux)).
pub type DubboConnection = MuxConnection<DubboCalls>;

/// A response for a caller: its header and body.
#[derive(Debug)]
pub struct Frame {
    pub header: Header,
    pub body: Bytes,
}

/// Dubbo's frames, for the [`mux`](crate::mux): the 16-byte header gives
/// the body's length; replies by request id; the server's heartbeat
/// requests answered at once.
#[derive(Debug)]
pub struct DubboFraming {
    format: Arc<Format>,
}

impl Framing for DubboFraming {
    const NAME: &'static str = "dubbo";
    type Head = Header;
    type Reply = Frame;

    fn split(&self, buf: &[u8]) -> Result<Split<Header>, CallError> {
        Ok(match codec::frame(buf)? {
            Some((head, len)) => Split::Whole { head, len },
            // The header's length is checked against MAX_BODY.
            None if buf.len() >= HEADER_LEN => Split::Partial {
                len: Some(HEADER_LEN + Header::decode(buf)?.len),
            },
            None => Split::Partial { len: None },
        })
    }

    fn route(&self, header: Header, mut frame: Bytes) -> Result<Inbound<Frame>, CallError> {
        if header.is_event() {
            return Ok(if header.is_request() && header.is_two_way() {
                Inbound::Answer(Bytes::from(self.format.heartbeat_response(header.id)?))
            } else {
                // A response to our heartbeat: nothing to do.
                Inbound::Skip
            });
        }
        if header.is_request() {
            // The server calling back: not part of this contract.
            return Ok(Inbound::Skip);
        }
        let body = frame.split_off(HEADER_LEN);
        Ok(Inbound::Reply {
            id: header.id,
            reply: Frame { header, body },
        })
    }

    fn heartbeat(&self, id: impl FnOnce() -> u64) -> Result<Bytes, CallError> {
        self.format.heartbeat_request(id()).map(Bytes::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Protocol;
    use crate::protocols::dubbo::serialization::hessian2::{Hessian2, ID as HESSIAN2};
    use rpclab_model::contract::Operation;

    use crate::testing::{assert_refused, options as opts, refusal};

    #[test]
    fn options() {
        let d = Dubbo::new(&opts(&[])).unwrap();
        assert_eq!(d.heartbeat(), Some(Duration::from_secs(60)));
        assert_eq!(d.registry(), None);
        let d = Dubbo::new(&opts(&[
            ("serialization", "hessian2"),
            ("registry", "zookeeper://127.0.0.1:2181"),
            ("heartbeat_s", "0"),
        ]))
        .unwrap();
        assert_eq!(d.heartbeat(), None);
        assert_eq!(d.registry(), Some("zookeeper://127.0.0.1:2181"));
        let d = Dubbo::new(&opts(&[("serialization", "java")])).unwrap();
        assert_eq!(d.serialization(), "java");
        let m = refusal::<Dubbo>(&[("serialization", "fst")]);
        assert!(
            m.contains("`fst` exists in Dubbo but this client does not speak it"),
            "{m}"
        );
        assert!(m.contains("fastjson2 (23)"), "{m}");
        let m = refusal::<Dubbo>(&[("serialization", "xml")]);
        assert!(m.contains("does not exist"), "{m}");
        assert_refused::<Dubbo>(&[
            &[("heartbeat_s", "-1")],
            &[("heartbeat_s", "soon")],
            &[("registry", "nacos://127.0.0.1:8848")],
            &[("transport", "framed")],
        ]);
    }

    fn framing() -> DubboFraming {
        DubboFraming {
            format: Arc::new(Format::Hessian2(Hessian2)),
        }
    }

    #[test]
    fn malformed_headers_are_errors_and_short_frames_partial() {
        let good = codec::heartbeat_response(&Hessian2, 1).unwrap();
        let mut bad_magic = good.clone();
        bad_magic[0] = 0xca;
        let mut huge = good.clone();
        huge[12..16].copy_from_slice(&u32::MAX.to_be_bytes());
        crate::mux::check_split(&framing(), &good, HEADER_LEN, &[&bad_magic, &huge]);
    }

    #[test]
    fn answers_server_heartbeats_and_routes_responses() {
        let call = Operation::Hello.call();
        // The server's reply to request 5: "hello aa".
        let mut body = Vec::new();
        let mut enc = hessian2::Encoder::new(&mut body);
        enc.write_int(codec::RESPONSE_VALUE);
        enc.write_string("hello aa");
        let mut stream = codec::heartbeat_request(&Hessian2, 77).unwrap();
        stream.extend_from_slice(
            &Header {
                flag: HESSIAN2,
                status: codec::OK,
                id: 5,
                len: body.len(),
            }
            .encode(),
        );
        stream.extend_from_slice(&body);
        // A reply to our heartbeat, and the start of another frame.
        stream.extend_from_slice(&codec::heartbeat_response(&Hessian2, 9).unwrap());
        stream.extend_from_slice(&[0xda, 0xbb]);
        let (routes, rest) = crate::mux::route_all(&framing(), &stream).unwrap();
        assert_eq!(rest, None);
        match &routes[..] {
            [Inbound::Answer(answer), Inbound::Reply { id: 5, reply }, Inbound::Skip] => {
                assert_eq!(
                    &answer[..],
                    &codec::heartbeat_response(&Hessian2, 77).unwrap()[..]
                );
                assert_eq!(
                    codec::decode_response(&Hessian2, &reply.header, &reply.body, Method::Hello)
                        .unwrap(),
                    call.expected
                );
            }
            other => panic!("{other:?}"),
        }
    }

    /// A request is encoded once per exchange and restamped with each
    /// call's id, the same bytes as encoded, in every serialization, up to
    /// the largest id.
    #[test]
    fn restamped_requests_are_encoded_requests() {
        let mut tried = 0;
        for name in Format::names() {
            for kryo in ["4", "5"] {
                let options = opts(&[("kryo", kryo)]);
                let Some(Ok(format)) = Format::new(name, &options) else {
                    continue;
                };
                crate::testing::restamped_requests_are_encoded_requests(
                    &DubboCalls::new(Arc::new(format)),
                    &[0, 1, 2, 0x0102_0304_0506_0708, u64::MAX],
                );
                tried += 1;
            }
        }
        assert!(tried > Format::names().len(), "{tried}");
    }

    #[tokio::test]
    async fn the_heartbeat_is_a_two_way_event_request() {
        // Idle: a heartbeat request comes within two periods.
        let calls = DubboCalls::new(Arc::new(Format::Hessian2(Hessian2)));
        let (conn, _server, header) = crate::mux::idle_start::<_, 17>(|read, write, beat| {
            DubboConnection::start(read, write, beat, calls)
        })
        .await;
        let h = Header::decode(&header).unwrap();
        assert!(h.is_event() && h.is_request() && h.is_two_way(), "{h:?}");
        drop(conn);
    }
}
