//! gRPC (HTTP/2 + protobuf) on the client's own HTTP/2 connection, against
//! service `rpclab.Bench` of `contract/bench.proto`.
//!
//! The messages are generated at build time by `build.rs` (prost through
//! tonic-prost-build, with a vendored protoc); the calls are made on a lean
//! HTTP/2 client of unary calls (its modules `conn`, `writer`, `reader`,
//! `frame` and `reply`), without tonic's client stack nor `h2`: `h2`
//! HPACK-encoded the same request headers on every call, decoded every
//! reply's two header blocks into header maps and kept a general stream
//! store, which was most of what was left above h2load's CPU per call on a
//! shared connection (docs/client-ceiling.md, "The gRPC path after issue
//! 13").
//!
//! # Connections
//!
//! One [`GrpcConnection`] is one HTTP/2 connection at a time to a single
//! endpoint, opened through [`connect_tcp`](crate::net::connect_tcp) with
//! both halves wrapped in a [`CountingStream`](crate::net::CountingStream),
//! so every byte of it (HTTP/2 framing, headers, gRPC length prefixes,
//! protobuf) is counted. With the TLS options ([`crate::tls`]: `tls`,
//! `cacert`, `server_name`, `cert`, `key`; plaintext by default) the TCP stream is counted
//! under rustls, so TLS records are counted as the wire carries them, and
//! requests say `:scheme https`. The same channel carries the generic
//! calls of [`super::grpc_generic`]. Many tasks share the connection and their calls
//! are multiplexed on it as HTTP/2 streams; one writer task writes every
//! call queued at once in one write. Should the connection end (the server
//! closed it, GOAWAY, an I/O error), the next call opens a new one (still
//! one connection at a time), as tonic's channel did.
//!
//! A call whose timeout drops it is cancelled as HTTP/2 says: the writer
//! is told, a call not yet sent is never sent, and a sent one has its
//! stream reset by the connection's reader (RST_STREAM with CANCEL), which
//! frees its place under the server's `MAX_CONCURRENT_STREAMS` at once;
//! what the server still sends on it is ignored (`conn.rs`).
//!
//! # Per-call work
//!
//! A call's request is prepared once (`Prepared`: the HPACK header block
//! and the length-prefixed protobuf body, encoded once) and reused while
//! the calls are the same (a cell makes one call over and over: one
//! comparison of the argument per call). Each call then costs two
//! reference-count increments (block and body), a oneshot channel for its
//! reply, a place in the writer's queue, a 9-byte HEADERS and a 9-byte
//! DATA frame header around the prepared bytes, and an entry in the
//! reader's stream map; the reply message is a slice of the read buffer.
//!
//! # The poll engine
//!
//! A closed loop whose callers each have a plaintext connection of their
//! own with one call in flight runs on the client's poll engine
//! ([`Protocol::exchange_to`], `exchange.rs`): there a call is the
//! prepared HEADERS and DATA written with the next stream id, the reply's
//! frames read where they lie in the connection's buffer, and the same
//! checks; no task, queue, oneshot, lock or stream map. The server's
//! SETTINGS and PINGs are acknowledged in front of the next request. TLS,
//! requests over 16 KiB and streams shared on a connection stay here on
//! tasks.
//!
//! # Verification
//!
//! Every reply is checked: `:status` 200, a `content-type` of
//! `application/grpc`, exactly one uncompressed length-prefixed message,
//! and `grpc-status` 0 in the trailers (module `reply`). The message is compared
//! byte for byte with the prepared call's **reference reply**
//! ([`crate::reference`]): a reply message that was decoded in full and
//! found equal to the call's expected value. Such a reply is verified
//! without being decoded ([`Reply::AsReference`]); any other reply is
//! decoded in full and compared with the expected value, as for every
//! protocol.
//!
//! # Errors
//!
//! A status the server sent (`grpc-status` ≠ 0, in the trailers or a
//! Trailers-Only reply) becomes [`CallError::Server`]`("<CODE>: <message>")`,
//! with the canonical code name (`UNAVAILABLE`, `INTERNAL`, ...) and the
//! percent-decoded `grpc-message`. A connection that cannot be (re)opened is
//! [`CallError::Connect`]; an I/O error, a stream reset (RST_STREAM) or a
//! connection closed (GOAWAY) under a call is [`CallError::Io`]; a reply
//! that breaks HTTP/2 or the gRPC framing (another `:status`, no trailers,
//! a truncated or compressed message, an undecodable one, a malformed
//! frame or header block) is [`CallError::Protocol`].

pub(crate) mod conn;
mod exchange;
/// Also the framing of `rpclab-floor`'s HTTP/2 (the `rpclab-floor` crate).
pub mod frame;
mod reader;
pub(crate) mod reply;
mod shared;
mod writer;

use crate::exchange::{Exchange, Parsed};
use crate::prepared::{CallKey, ForCall, PreparedCall};
use crate::protocol::{check_options, CallError, Protocol, WireCounter};
use crate::reference::{ReferenceExchange, ReferenceReply, Reply};
use crate::tls::{Alpn, Transport};
use bytes::{Bytes, BytesMut};
use conn::Channel;
use exchange::{UnaryExchange, UnaryRequest};
use prost::Message as _;
use reply::PREFIX;
use rpclab_model::contract::{self, Call, MismatchedArgument, Operation, Value};
use std::collections::BTreeMap;

/// Code generated from `contract/bench.proto`: the messages.
#[allow(clippy::all, missing_docs)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/grpc-client/rpclab.rs"));
}

/// Code generated from `contract/bench.proto` for a server: the messages
/// and the `Bench` service trait (tonic), for in-process test servers and
/// the `rpclab-echo` tool.
#[cfg(feature = "grpc-server")]
#[allow(clippy::all, missing_docs)]
pub mod server_pb {
    include!(concat!(env!("OUT_DIR"), "/grpc-server/rpclab.rs"));
}

#[cfg(feature = "grpc-server")]
pub mod echo_server;

pub use frame::MAX_MESSAGE_SIZE;

/// The `user-agent` of every request.
pub(crate) const USER_AGENT: &str = concat!("rpclab-client/", env!("CARGO_PKG_VERSION"));

/// The gRPC protocol. Its options are TLS's ([`crate::tls`]): plaintext
/// by default.
#[derive(Debug, Clone)]
pub struct Grpc {
    transport: Transport,
}

impl Protocol for Grpc {
    type Conn = GrpcConnection;
    type Exchange = GrpcExchange;

    const NAME: &'static str = "grpc";

    const CONNECTION_MODEL: &'static str = "HTTP/2, calls multiplexed on each connection";

    const FILE_OPTIONS: &'static [&'static str] = &["cacert"];

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        check_options(Self::NAME, options, crate::tls::OPTIONS)?;
        Ok(Grpc {
            transport: Transport::from_options(Self::NAME, options, Alpn::H2)?,
        })
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<GrpcConnection, CallError> {
        check_target(target)?;
        Ok(GrpcConnection {
            authority: target.to_owned(),
            tls: self.transport.is_tls(),
            channel: Channel::open(target, counter, self.transport.clone()).await?,
            prepared: PreparedCall::default(),
        })
    }

    fn tls(&self) -> Option<rpclab_model::result::TlsSetting> {
        Some(self.transport.setting())
    }

    /// A plaintext call whose request fits one DATA frame of the smallest
    /// size and window a server may set runs on the poll engine
    /// (`exchange.rs`); TLS and larger requests run on tasks.
    fn exchange_to(&self, call: &Call, target: &str) -> Result<Option<GrpcExchange>, CallError> {
        if self.transport.is_tls() {
            return Ok(None);
        }
        check_target(target)?;
        let prepared = Prepared::new(call, target, false)?;
        let fits = prepared.body.len() <= frame::DEFAULT_MAX_FRAME
            && prepared.body.len() <= frame::DEFAULT_WINDOW as usize;
        Ok(fits.then(|| GrpcExchange(UnaryExchange::new(call, prepared, target))))
    }
}

/// A target the channel can open: `host:port`, nothing else.
pub(crate) fn check_target(target: &str) -> Result<(), CallError> {
    let valid = http::uri::Authority::try_from(target)
        .ok()
        .is_some_and(|a| a.port_u16().is_some() && !target.contains(['/', '@']));
    if valid {
        Ok(())
    } else {
        Err(CallError::Connect(format!(
            "invalid target `{target}`: not host:port"
        )))
    }
}

/// One HTTP/2 connection to a gRPC server, shared by many tasks.
#[derive(Debug)]
pub struct GrpcConnection {
    /// `host:port`, the requests' `:authority`.
    authority: String,
    /// Whether the connection is TLS (the requests' `:scheme`).
    tls: bool,
    channel: Channel,
    /// The first call's request, kept for the calls that are the same.
    prepared: PreparedCall<Prepared>,
}

/// How a reply message is decoded into a contract value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReplyType {
    Order,
    Orders,
    Text,
    Nothing,
}

/// A call's request, built once: which call it is for, what to send, and
/// the reference reply once one was verified.
#[derive(Debug)]
struct Prepared {
    key: CallKey,
    /// The request's HPACK header block (see [`frame::request_headers`]).
    headers: Bytes,
    /// The length-prefixed request message.
    body: Bytes,
    reply: ReplyType,
    /// A reply message that decoded to the call's expected value.
    reference: ReferenceReply,
}

impl Prepared {
    fn new(call: &Call, authority: &str, tls: bool) -> Result<Prepared, CallError> {
        let (method, message, reply) = match (call.operation, &call.argument) {
            (Operation::OrderEcho, Value::Order(order)) => {
                ("EchoOrder", to_pb(order).encode_to_vec(), ReplyType::Order)
            }
            (Operation::OrdersEcho, Value::Orders(orders)) => {
                let list = pb::OrderList {
                    orders: orders.iter().map(to_pb).collect(),
                };
                ("EchoOrders", list.encode_to_vec(), ReplyType::Orders)
            }
            (Operation::StringEcho(_), Value::Str(s)) => {
                let text = pb::Text { value: s.clone() };
                ("EchoString", text.encode_to_vec(), ReplyType::Text)
            }
            (Operation::Hello, Value::Str(name)) => {
                let text = pb::Text {
                    value: name.clone(),
                };
                ("Hello", text.encode_to_vec(), ReplyType::Text)
            }
            (Operation::Empty, Value::Unit) => {
                ("Empty", pb::Nothing {}.encode_to_vec(), ReplyType::Nothing)
            }
            (operation, argument) => {
                return Err(MismatchedArgument::new(operation, argument).into())
            }
        };
        if message.len() > MAX_MESSAGE_SIZE {
            return Err(CallError::Config(format!(
                "{} request of {} bytes: more than {MAX_MESSAGE_SIZE}",
                call.operation,
                message.len()
            )));
        }
        let mut body = BytesMut::with_capacity(PREFIX + message.len());
        body.extend_from_slice(&[0]);
        body.extend_from_slice(&(message.len() as u32).to_be_bytes());
        body.extend_from_slice(&message);
        let path = format!("/rpclab.Bench/{method}");
        let headers = frame::request_headers_over(&path, authority, USER_AGENT, tls);
        if headers.len() > frame::DEFAULT_MAX_FRAME {
            // One HEADERS frame of the smallest size a server may allow.
            return Err(CallError::Config(format!(
                "a request header block of {} bytes: more than {}",
                headers.len(),
                frame::DEFAULT_MAX_FRAME
            )));
        }
        Ok(Prepared {
            key: CallKey::of(call),
            headers: Bytes::from(headers),
            body: body.freeze(),
            reply,
            reference: ReferenceReply::default(),
        })
    }

    /// The reply message (see [`ReferenceReply`]).
    fn reply_of(&self, message: &[u8], expected: &Value) -> Result<Reply, CallError> {
        self.reference
            .reply_of(message, expected, |m| decode(self.reply, m))
    }
}

/// A gRPC call on the poll engine: the unary exchange (`exchange.rs`) of
/// a prepared call.
pub struct GrpcExchange(UnaryExchange<Prepared>);

impl Exchange for GrpcExchange {
    type Outcome = Reply;

    fn request(&mut self, out: &mut Vec<u8>) -> Result<(), CallError> {
        self.0.request(out)
    }

    fn reply(&mut self, input: &[u8]) -> Result<Parsed<Result<Reply, CallError>>, CallError> {
        self.0.reply(input)
    }

    fn verify(&self, outcome: Reply) -> Result<(), CallError> {
        self.0.verify(outcome)
    }

    fn connection_opened(&mut self) {
        self.0.connection_opened();
    }

    fn wants_new_connection(&self) -> bool {
        self.0.wants_new_connection()
    }
}

impl UnaryRequest for Prepared {
    fn header_block(&self) -> &[u8] {
        &self.headers
    }

    fn body(&self) -> &[u8] {
        &self.body
    }

    fn reply_of(&self, message: &[u8], expected: &Value) -> Result<Reply, CallError> {
        Prepared::reply_of(self, message, expected)
    }
}

impl ForCall for Prepared {
    fn is_for(&self, call: &Call) -> bool {
        self.key.is_for(call)
    }
}

impl ReferenceExchange for GrpcConnection {
    /// One exchange: the prepared request sent on a stream of its own, its
    /// reply message checked against the reference reply, or decoded.
    async fn exchange(&self, call: &Call) -> Result<Reply, CallError> {
        let prepared = self
            .prepared
            .get_or_build(call, || Prepared::new(call, &self.authority, self.tls))?;
        let message = self
            .channel
            .call(prepared.headers.clone(), prepared.body.clone())
            .await?;
        prepared.reply_of(&message, &call.expected)
    }
}

/// Decodes a reply message in full; its strings are moved, not copied, into
/// the contract value.
fn decode(reply: ReplyType, message: &[u8]) -> Result<Value, CallError> {
    let decoded = match reply {
        ReplyType::Order => pb::Order::decode(message).map(|o| Value::Order(from_pb(o))),
        ReplyType::Orders => pb::OrderList::decode(message)
            .map(|l| Value::Orders(l.orders.into_iter().map(from_pb).collect())),
        ReplyType::Text => pb::Text::decode(message).map(|t| Value::Str(t.value)),
        ReplyType::Nothing => pb::Nothing::decode(message).map(|_| Value::Unit),
    };
    decoded.map_err(|e| CallError::Protocol(format!("cannot decode the reply message: {e}")))
}

fn to_pb(order: &contract::Order) -> pb::Order {
    pb::Order {
        order_id: order.order_id,
        phone: order.phone.clone(),
        name: order.name.clone(),
        order_num: order.order_num.clone(),
        order_date: order.order_date,
        ticket_type: order.ticket_type,
        amount: order.amount,
        order_status: order.order_status,
    }
}

fn from_pb(order: pb::Order) -> contract::Order {
    contract::Order {
        order_id: order.order_id,
        phone: order.phone,
        name: order.name,
        order_num: order.order_num,
        order_date: order.order_date,
        ticket_type: order.ticket_type,
        amount: order.amount,
        order_status: order.order_status,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_convert_field_for_field() {
        for i in [0, 1, 99] {
            let order = contract::Order::sample(i);
            assert_eq!(from_pb(to_pb(&order)), order);
        }
    }

    /// A prepared request's header fields, decoded.
    fn request_fields(p: &Prepared) -> Vec<(String, String)> {
        let mut decoder = loona_hpack::Decoder::new();
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        decoder
            .decode(&p.headers)
            .unwrap()
            .into_iter()
            .map(|(n, v)| (text(n), text(v)))
            .collect()
    }

    #[test]
    fn only_a_reply_equal_to_the_expected_value_becomes_the_reference() {
        let call = Operation::Hello.call();
        let prepared = Prepared::new(&call, "127.0.0.1:1", false).unwrap();
        let fields = request_fields(&prepared);
        assert!(fields.contains(&(":path".into(), "/rpclab.Bench/Hello".into())));
        assert!(fields.contains(&(":authority".into(), "127.0.0.1:1".into())));
        let Value::Str(expected) = &call.expected else {
            panic!("hello returns a string")
        };
        let wrong = Bytes::from(
            pb::Text {
                value: "hello someone else".into(),
            }
            .encode_to_vec(),
        );
        let right = Bytes::from(
            pb::Text {
                value: expected.clone(),
            }
            .encode_to_vec(),
        );
        let someone_else = Reply::Decoded(Value::Str("hello someone else".into()));
        // A wrong reply is decoded, handed on as it is, and never kept.
        let got = prepared.reply_of(&wrong, &call.expected).unwrap();
        assert_eq!(got, someone_else);
        assert!(prepared.reference.bytes().is_none());
        assert_eq!(
            prepared.reply_of(&right, &call.expected).unwrap(),
            Reply::Decoded(call.expected.clone())
        );
        assert_eq!(prepared.reference.bytes(), Some(&right[..]));
        assert_eq!(
            prepared.reply_of(&right, &call.expected).unwrap(),
            Reply::AsReference
        );
        // Still decoded in full after a reference exists.
        let got = prepared.reply_of(&wrong, &call.expected).unwrap();
        assert_eq!(got, someone_else);
        let junk = Bytes::from_static(b"\xff\xff");
        assert!(matches!(
            prepared.reply_of(&junk, &call.expected),
            Err(CallError::Protocol(_))
        ));
    }

    #[test]
    fn requests_are_length_prefixed_once() {
        let call = Operation::OrderEcho.call();
        let authority = "localhost:50051";
        let p = Prepared::new(&call, authority, false).unwrap();
        let Value::Order(order) = &call.argument else {
            panic!("order-echo takes an order")
        };
        let message = to_pb(order).encode_to_vec();
        assert_eq!(p.body[0], 0);
        assert_eq!(&p.body[1..5], &(message.len() as u32).to_be_bytes());
        assert_eq!(&p.body[5..], &message[..]);
        let fields = request_fields(&p);
        for field in [
            (":method", "POST"),
            (":scheme", "http"),
            (":path", "/rpclab.Bench/EchoOrder"),
            (":authority", authority),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
            ("user-agent", USER_AGENT),
        ] {
            assert!(
                fields.contains(&(field.0.into(), field.1.into())),
                "{field:?}: {fields:?}"
            );
        }
        let mut mismatched = call.clone();
        mismatched.argument = Value::Unit;
        assert!(matches!(
            Prepared::new(&mismatched, authority, false),
            Err(CallError::Config(_))
        ));
    }

    #[test]
    fn options_are_rejected() {
        let mut options = BTreeMap::new();
        assert!(Grpc::new(&options).is_ok());
        options.insert("tls".to_string(), "skip-verify".to_string());
        assert!(Grpc::new(&options).unwrap().transport.is_tls());
        options.insert("compression".to_string(), "gzip".to_string());
        assert!(matches!(Grpc::new(&options), Err(CallError::Config(_))));
    }

    #[tokio::test]
    async fn refused_connection_is_a_connect_error() {
        // Bind then drop a listener to get a local port nobody listens on.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let grpc = Grpc::new(&BTreeMap::new()).unwrap();
        let result = grpc
            .connect(&addr.to_string(), WireCounter::default())
            .await;
        assert!(matches!(result, Err(CallError::Connect(_))), "{result:?}");
        let result = grpc.connect("no port", WireCounter::default()).await;
        assert!(matches!(result, Err(CallError::Connect(_))), "{result:?}");
    }
}
