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
//! On the poll engine (one call in flight per connection, a provider at
//! the target, no registry), a connection is a [`BoltExchange`]: the same
//! encoder and decoder ([`BoltCalls`]) and the same framing, request ids
//! counted per connection; a heartbeat request of the server is acked in
//! front of the next request.
//!
//! # Per-call work
//!
//! One request buffer, sized up front from the argument (on the poll
//! engine the request is encoded once and restamped with each call's id);
//! the reply is decoded straight into the contract value, its
//! `SofaResponse` (and `Order`) class definition recognised by one
//! comparison with Java's bytes rather than read into strings. The rest
//! is the mux's.

pub mod codec;
pub use hessian2_draft as hessian;

use self::codec::Header;
use crate::discovery::{connect_provider, url_decode, Listed, Providers, ServiceUrl, ZooKeeper};
use crate::java_contract::Method;
use crate::mux::{Framing, Inbound, Split};
use crate::mux_connection::MuxConnection;
use crate::mux_exchange::{CallCodec, MuxExchange};
use crate::protocol::{check_options, heartbeat_option, CallError, Protocol, WireCounter};
use bytes::Bytes;
use rpclab_model::contract::{Call, Value};
use std::collections::BTreeMap;
use std::time::Duration;

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
    let mut listed = Listed::default();
    for (name, data) in children {
        let url = url_decode(&name);
        if data.as_slice() == [0] {
            listed.skipped.push(format!("{url} (offline)"));
        } else {
            listed.add("bolt", &url, ServiceUrl::parse(&url));
        }
    }
    listed.providers(
        zk.url(),
        "online bolt provider",
        PROVIDERS_PATH,
        "; is the SOFA-RPC provider up and registered?",
    )
}

impl Protocol for Bolt {
    type Conn = BoltConnection;
    type Exchange = BoltExchange;

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
        let calls = BoltCalls {
            timeout_ms: self.timeout_ms,
        };
        Ok(BoltConnection::start(read, write, self.heartbeat, calls))
    }

    /// The calls of a provider at the target: the poll engine dials it, so
    /// a provider found in a registry is called on tasks.
    fn exchange(&self, call: &Call) -> Result<Option<BoltExchange>, CallError> {
        if self.providers.is_some() {
            return Ok(None);
        }
        let calls = BoltCalls {
            timeout_ms: self.timeout_ms,
        };
        Ok(Some(MuxExchange::new(calls, call)))
    }
}

/// A bolt call, one at a time on its own connection (the poll engine's).
pub type BoltExchange = MuxExchange<BoltCalls>;

/// The contract's bolt requests and their responses: what a
/// [`BoltConnection`] and a [`BoltExchange`] both encode and decode.
#[derive(Debug, Clone)]
pub struct BoltCalls {
    /// The request's timeout, as SOFA-RPC's client puts it in the header.
    timeout_ms: i32,
}

impl CallCodec for BoltCalls {
    type Framing = BoltFraming;

    fn framing(&self) -> BoltFraming {
        BoltFraming
    }

    fn request_capacity(&self, call: &Call) -> usize {
        codec::request_capacity(&call.argument)
    }

    fn encode(&self, out: &mut Vec<u8>, id: u64, call: &Call) -> Result<(), CallError> {
        out.clear();
        // Within 1..=u32::MAX (BoltFraming's ids).
        codec::encode_request(
            out,
            id as u32,
            self.timeout_ms,
            Method::of(call)?,
            &call.argument,
        )
    }

    fn restamp(&self, request: &mut [u8], id: u64) -> bool {
        // Within 1..=u32::MAX, as in `encode`.
        codec::restamp_request(request, id as u32)
    }

    fn decode(&self, frame: &Frame, call: &Call) -> Result<Value, CallError> {
        codec::decode_response(&frame.header, &frame.bytes, Method::of(call)?)
    }

    fn is_expected(&self, frame: &Frame, call: &Call) -> bool {
        Method::of(call).is_ok_and(|method| {
            codec::is_expected(&frame.header, &frame.bytes, method, &call.expected)
        })
    }
}

/// One bolt connection, shared by many callers (see [`mux`](crate::mux)).
pub type BoltConnection = MuxConnection<BoltCalls>;

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
    use crate::testing::{
        exchange_of, exchanges_verified, heartbeat_answered_before_the_next_request, with_id_at,
        wrong_replies_fail,
    };
    use rpclab_model::contract::Operation;

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

    /// A golden frame (bolt/golden/vectors/5.13) with its request id
    /// replaced: a reply must carry the id of the request in flight.
    fn with_id(frame: &[u8], id: u64) -> Vec<u8> {
        with_id_at(frame, 5, &(id as u32).to_be_bytes())
    }

    /// The id of a request the exchange wrote.
    fn id_of(request: &[u8]) -> u64 {
        codec::frame(request)
            .unwrap()
            .expect("a whole frame")
            .0
            .id
            .into()
    }

    fn exchange(operation: Operation) -> BoltExchange {
        exchange_of(&Bolt::new(&BTreeMap::new()).unwrap(), operation)
    }

    macro_rules! golden {
        ($name:literal) => {
            include_bytes!(concat!("bolt/golden/vectors/5.13/", $name)).as_slice()
        };
    }

    /// The poll engine's exchange writes Java's requests (its id counted
    /// per connection from 1) and verifies Java's responses, whole or
    /// arriving in pieces.
    #[test]
    fn the_exchange_writes_javas_requests_and_verifies_javas_responses() {
        let cases = [
            (
                Operation::Hello,
                golden!("hello.request.bin"),
                golden!("hello.response.bin"),
            ),
            (
                Operation::OrderEcho,
                golden!("order-echo.request.bin"),
                golden!("order-echo.response.bin"),
            ),
            (
                Operation::OrdersEcho,
                golden!("orders-echo.request.bin"),
                golden!("orders-echo.response.bin"),
            ),
            (
                Operation::Empty,
                golden!("empty.request.bin"),
                golden!("empty.response.bin"),
            ),
        ];
        for (operation, request, response) in cases {
            let server = |id, sent: &[u8]| {
                assert_eq!(id_of(sent), id, "{operation}");
                // SOFA-RPC's consumer sets a timeout of its own.
                let mut java = with_id(request, id);
                java[10..14].copy_from_slice(&sent[10..14]);
                assert_eq!(sent, java, "{operation}: the request");
                with_id(response, id)
            };
            let what = operation.to_string();
            exchanges_verified(
                || exchange(operation),
                &[1, 7, usize::MAX],
                1..=2,
                server,
                &what,
            );
        }
    }

    /// A wrong value, a server's exception and a reply to another request:
    /// a failed call, a failed call, and a stream out of step.
    #[test]
    fn the_exchange_fails_wrong_replies() {
        wrong_replies_fail(
            &mut exchange(Operation::Hello),
            |sent| with_id(golden!("string-1k.response.bin"), id_of(sent)),
            |sent| with_id(golden!("hello-throws.response.bin"), id_of(sent)),
            |sent| with_id(golden!("hello.response.bin"), id_of(sent) - 1),
            "bolt",
        );
    }

    /// The server's heartbeat before a reply is acked in front of the next
    /// request; the ack of ours is skipped.
    #[test]
    fn the_exchange_acks_the_servers_heartbeat_with_its_next_request() {
        let server = |sent: &[u8]| {
            let mut stream = with_id(golden!("heartbeat.request.bin"), 77);
            stream.extend_from_slice(&codec::heartbeat_ack(5));
            stream.extend(with_id(golden!("hello.response.bin"), id_of(sent)));
            stream
        };
        let ack = with_id(golden!("heartbeat.response.bin"), 77);
        heartbeat_answered_before_the_next_request(
            &mut exchange(Operation::Hello),
            server,
            3,
            &ack,
            id_of,
            2,
            "bolt",
        );
    }

    /// A request is encoded once per exchange and restamped with each
    /// call's id, the same bytes as encoded, up to the largest id.
    #[test]
    fn restamped_requests_are_encoded_requests() {
        let calls = BoltCalls {
            timeout_ms: DEFAULT_TIMEOUT_MS,
        };
        crate::testing::restamped_requests_are_encoded_requests(
            &calls,
            &[1, 2, 0x0102_0304, u64::from(u32::MAX)],
        );
    }

    #[test]
    fn a_provider_from_a_registry_runs_on_tasks() {
        let bolt = Bolt::new(&crate::testing::options(&[(
            "registry",
            "zookeeper://127.0.0.1:2181",
        )]))
        .unwrap();
        assert!(bolt.exchange(&Operation::Hello.call()).unwrap().is_none());
    }

    #[test]
    fn the_heartbeat_is_a_heartbeat_request() {
        let beat = BoltFraming.heartbeat(|| 42).unwrap();
        assert_eq!(&beat[..], &codec::heartbeat_request(42)[..]);
    }
}
