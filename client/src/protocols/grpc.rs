//! gRPC (HTTP/2 + protobuf) directly on the `h2` crate, against service
//! `rpclab.Bench` of `contract/bench.proto`.
//!
//! The messages are generated at build time by `build.rs` (prost through
//! tonic-prost-build, with a vendored protoc); the calls are made here, on
//! `h2`, without tonic's client stack (its `Channel`'s tower `Buffer` hop,
//! hyper's task per request, an encode buffer per call): what a gRPC client
//! must do per call and nothing else.
//!
//! # Connections
//!
//! One [`GrpcConnection`] is one HTTP/2 connection to a single endpoint,
//! opened through [`connect_tcp`] and wrapped in a [`CountingStream`] so
//! every byte of it (HTTP/2 framing, headers, gRPC length prefixes,
//! protobuf) is counted. Its `h2` connection task is spawned on the
//! runtime; many tasks share the connection and their calls are
//! multiplexed on it as HTTP/2 streams. Should the connection end (the
//! server closed it, GOAWAY, an I/O error), the next call opens a new one
//! (one caller reconnects, the others wait for it; still one connection at
//! a time), as tonic's channel did.
//!
//! # Per-call work
//!
//! A call's request is prepared once ([`Prepared`]: its URI, the header
//! map and the length-prefixed protobuf body, encoded once) and reused
//! while the calls are the same (a cell makes one call over and over: one
//! comparison of the argument per call). Each call then costs a clone of
//! the URI and header map (reference counts and the map's two small
//! allocations: `h2` takes an owned `http::Request`), a `Bytes` clone of the
//! body, and what `h2` does for a stream.
//!
//! # Verification
//!
//! Every reply is checked: `:status` 200, a `content-type` of
//! `application/grpc`, exactly one uncompressed length-prefixed message,
//! and `grpc-status` 0 in the trailers. The message is compared byte for
//! byte with a **reference reply**: the first reply of the prepared call
//! that was decoded in full and found equal to the call's expected value.
//! Equal bytes decode to an equal value (protobuf decoding is a function of
//! the bytes), so such a reply is handed to the runner as a clone of the
//! reference's decoded value; any other reply is decoded in full. Either
//! way the runner compares the value with the expected one, as for every
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
//! a truncated or compressed message, an undecodable one) is
//! [`CallError::Protocol`].

use crate::net::{connect_tcp, CountingStream};
use crate::protocol::{check_options, CallError, Connection, Protocol, WireCounter};
use bytes::{Bytes, BytesMut};
use h2::client::SendRequest;
use h2::RecvStream;
use http::header::{CONTENT_TYPE, TE, USER_AGENT};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, Uri};
use prost::Message as _;
use rpclab_model::contract::{self, Call, MismatchedArgument, Operation, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Code generated from `contract/bench.proto`: the messages.
#[allow(clippy::all, missing_docs)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/grpc-client/rpclab.rs"));
}

/// Largest message encoded or decoded, each way: the contract's largest
/// payload is a 1 MiB string, and gRPC's default limit (4 MiB decoding in
/// tonic) leaves little margin for frameworks that pad or wrap.
pub const MAX_MESSAGE_SIZE: usize = 16 * 1024 * 1024;

/// The HTTP/2 receive windows the client advertises, per stream and for
/// the connection: hyper's defaults, which the tonic client used before, so
/// a 1 MiB reply is not held back by flow control.
const STREAM_WINDOW: u32 = 2 * 1024 * 1024;
const CONNECTION_WINDOW: u32 = 5 * 1024 * 1024;

/// The gRPC length prefix: a compressed flag and a 4-byte big-endian length.
const PREFIX: usize = 5;

/// The gRPC protocol. It has no options yet.
#[derive(Debug, Clone, Copy, Default)]
pub struct Grpc;

impl Protocol for Grpc {
    type Conn = GrpcConnection;

    const NAME: &'static str = "grpc";

    const CONNECTION_MODEL: &'static str = "HTTP/2, calls multiplexed on each connection";

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        check_options(Self::NAME, options, &[])?;
        Ok(Grpc)
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<GrpcConnection, CallError> {
        let authority = http::uri::Authority::try_from(target)
            .ok()
            .filter(|a| a.port_u16().is_some() && !target.contains(['/', '@']))
            .ok_or_else(|| {
                CallError::Connect(format!("invalid target `{target}`: not host:port"))
            })?;
        let session = Session::open(target, counter.clone()).await?;
        Ok(GrpcConnection {
            target: target.to_owned(),
            authority,
            counter,
            session: Mutex::new(session),
            reconnecting: tokio::sync::Mutex::new(()),
            prepared: OnceLock::new(),
        })
    }
}

/// One HTTP/2 connection to a gRPC server, shared by many tasks.
#[derive(Debug)]
pub struct GrpcConnection {
    target: String,
    authority: http::uri::Authority,
    counter: WireCounter,
    /// The open connection (replaced when it ended).
    session: Mutex<Session>,
    /// Held by the one caller that reopens an ended connection.
    reconnecting: tokio::sync::Mutex<()>,
    /// The first call's request, kept for the calls that are the same.
    prepared: OnceLock<Prepared>,
}

/// An open `h2` connection: a handle to open streams on it, and whether its
/// connection task has ended.
#[derive(Debug, Clone)]
struct Session {
    send: SendRequest<Bytes>,
    ended: Arc<AtomicBool>,
}

impl Session {
    async fn open(target: &str, counter: WireCounter) -> Result<Session, CallError> {
        let tcp = connect_tcp(target).await?;
        let (send, connection) = h2::client::Builder::new()
            .initial_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .enable_push(false)
            .handshake::<_, Bytes>(CountingStream::new(tcp, counter))
            .await
            .map_err(|e| CallError::Connect(format!("{target}: HTTP/2 handshake: {e}")))?;
        let ended = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&ended);
        tokio::spawn(async move {
            // Its error, if any, is also every pending stream's: the calls
            // report it.
            let _ = connection.await;
            flag.store(true, Ordering::Release);
        });
        Ok(Session { send, ended })
    }

    fn is_open(&self) -> bool {
        !self.ended.load(Ordering::Acquire)
    }
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
    operation: Operation,
    argument: Value,
    uri: Uri,
    headers: HeaderMap,
    /// The length-prefixed request message.
    body: Bytes,
    reply: ReplyType,
    /// A reply message that decoded to the call's expected value, and that
    /// value.
    reference: OnceLock<(Bytes, Value)>,
}

impl Prepared {
    fn new(call: &Call, authority: &http::uri::Authority) -> Result<Prepared, CallError> {
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
        let uri = Uri::builder()
            .scheme("http")
            .authority(authority.clone())
            .path_and_query(format!("/rpclab.Bench/{method}"))
            .build()
            .map_err(|e| CallError::Config(format!("gRPC request URI: {e}")))?;
        let mut headers = HeaderMap::with_capacity(3);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
        headers.insert(TE, HeaderValue::from_static("trailers"));
        headers.insert(
            USER_AGENT,
            HeaderValue::from_static(concat!("rpclab-client/", env!("CARGO_PKG_VERSION"))),
        );
        Ok(Prepared {
            operation: call.operation,
            argument: call.argument.clone(),
            uri,
            headers,
            body: body.freeze(),
            reply,
            reference: OnceLock::new(),
        })
    }

    fn is_for(&self, call: &Call) -> bool {
        self.operation == call.operation && self.argument == call.argument
    }

    /// The request head to send (`h2` takes it by value).
    fn request(&self) -> Request<()> {
        let mut request = Request::new(());
        *request.method_mut() = Method::POST;
        *request.uri_mut() = self.uri.clone();
        *request.headers_mut() = self.headers.clone();
        request
    }

    /// The reply message as a contract value, checked against the reference
    /// reply first; the first reply equal to `expected` becomes the
    /// reference.
    fn value_of(&self, message: Bytes, expected: &Value) -> Result<Value, CallError> {
        if let Some((reference, value)) = self.reference.get() {
            if *reference == message {
                return Ok(value.clone());
            }
        }
        let value = decode(self.reply, &message)?;
        if self.reference.get().is_none() && value == *expected {
            let _ = self.reference.set((message, value.clone()));
        }
        Ok(value)
    }
}

impl GrpcConnection {
    /// The open connection, reopened first if it ended.
    async fn session(&self) -> Result<Session, CallError> {
        let session = self.lock_session().clone();
        if session.is_open() {
            return Ok(session);
        }
        let _reconnecting = self.reconnecting.lock().await;
        let session = self.lock_session().clone();
        if session.is_open() {
            // Another caller reopened it while this one waited.
            return Ok(session);
        }
        let fresh = Session::open(&self.target, self.counter.clone()).await?;
        *self.lock_session() = fresh.clone();
        Ok(fresh)
    }

    fn lock_session(&self) -> std::sync::MutexGuard<'_, Session> {
        // A panic cannot leave a `Session` half-written: it is replaced whole.
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Classifies an `h2` error of a call (see the module documentation).
    fn h2_error(&self, doing: &str, e: h2::Error) -> CallError {
        let target = &self.target;
        if e.is_io() {
            let kind = e.get_io().map_or(std::io::ErrorKind::Other, |io| io.kind());
            return CallError::Io(std::io::Error::new(
                kind,
                format!("{target}: {doing}: {e}"),
            ));
        }
        if e.is_go_away() || e.is_reset() {
            let what = if e.is_go_away() {
                "connection closed (GOAWAY)"
            } else {
                "stream reset (RST_STREAM)"
            };
            let by = if e.is_remote() {
                "by the server"
            } else {
                "locally"
            };
            let reason = e.reason().map_or(String::new(), |r| format!(": {r:?}"));
            return CallError::Io(std::io::Error::other(format!(
                "{target}: {doing}: {what} {by}{reason}"
            )));
        }
        CallError::Protocol(format!("{target}: {doing}: HTTP/2: {e}"))
    }

    /// Reads a whole reply: checks its head, gathers its one message and
    /// checks its status.
    async fn read_reply(&self, response: Response<RecvStream>) -> Result<Bytes, CallError> {
        let (head, mut body) = response.into_parts();
        if head.status != StatusCode::OK {
            // A proxy or a broken server; a gRPC status, if any, says more.
            grpc_status(&head.headers)?;
            return Err(CallError::Protocol(format!(
                "{}: HTTP status {}, not 200",
                self.target, head.status
            )));
        }
        let content_type = head.headers.get(CONTENT_TYPE).map(HeaderValue::as_bytes);
        let grpc = content_type.is_some_and(|t| {
            t.strip_prefix(b"application/grpc")
                .is_some_and(|rest| rest.is_empty() || rest[0] == b'+' || rest[0] == b';')
        });
        if !grpc {
            return Err(CallError::Protocol(format!(
                "{}: reply content-type {:?}, not application/grpc",
                self.target,
                content_type.map(String::from_utf8_lossy)
            )));
        }
        if body.is_end_stream() {
            // Trailers-Only: the status is in the head.
            grpc_status(&head.headers)?;
            return Err(CallError::Protocol(format!(
                "{}: a reply with grpc-status 0 and no message",
                self.target
            )));
        }
        let mut message = Gather::default();
        while let Some(chunk) = body.data().await {
            let chunk = chunk.map_err(|e| self.h2_error("reading the reply", e))?;
            let _ = body.flow_control().release_capacity(chunk.len());
            message.push(chunk).map_err(|e| {
                CallError::Protocol(format!("{}: {e}", self.target))
            })?;
        }
        match body
            .trailers()
            .await
            .map_err(|e| self.h2_error("reading the trailers", e))?
        {
            Some(trailers) => grpc_status(&trailers)?,
            None => {
                return Err(CallError::Protocol(format!(
                    "{}: a reply without trailers (no grpc-status)",
                    self.target
                )))
            }
        }
        unframe(message.into_bytes())
            .map_err(|e| CallError::Protocol(format!("{}: {e}", self.target)))
    }
}

impl Connection for GrpcConnection {
    async fn call(&self, call: &Call) -> Result<Value, CallError> {
        let mut built = None;
        let prepared: &Prepared = match self.prepared.get() {
            Some(p) if p.is_for(call) => p,
            Some(_) => built.insert(Prepared::new(call, &self.authority)?),
            None => {
                let p = Prepared::new(call, &self.authority)?;
                let _ = self.prepared.set(p);
                match self.prepared.get() {
                    Some(p) if p.is_for(call) => p,
                    _ => built.insert(Prepared::new(call, &self.authority)?),
                }
            }
        };
        let Session { mut send, .. } = self.session().await?;
        let (response, mut stream) = send
            .send_request(prepared.request(), false)
            .map_err(|e| self.h2_error("sending the request", e))?;
        drop(send);
        stream
            .send_data(prepared.body.clone(), true)
            .map_err(|e| self.h2_error("sending the request", e))?;
        let response = response
            .await
            .map_err(|e| self.h2_error("waiting for the reply", e))?;
        let message = self.read_reply(response).await?;
        prepared.value_of(message, &call.expected)
    }
}

/// A reply's DATA, gathered: the first chunk as it came (most replies are
/// one), later ones appended to a copy.
#[derive(Default)]
struct Gather {
    first: Option<Bytes>,
    more: Option<BytesMut>,
}

impl Gather {
    fn len(&self) -> usize {
        match (&self.first, &self.more) {
            (_, Some(more)) => more.len(),
            (Some(first), None) => first.len(),
            (None, None) => 0,
        }
    }

    fn push(&mut self, chunk: Bytes) -> Result<(), String> {
        if self.len() + chunk.len() > PREFIX + MAX_MESSAGE_SIZE {
            return Err(format!(
                "a reply of more than {MAX_MESSAGE_SIZE} bytes of message"
            ));
        }
        let Some(first) = &self.first else {
            self.first = Some(chunk);
            return Ok(());
        };
        match &mut self.more {
            Some(more) => more.extend_from_slice(&chunk),
            None => {
                // The prefix, when complete, says how much is coming.
                let total = first
                    .get(1..PREFIX)
                    .map_or(0, |l| PREFIX + u32::from_be_bytes(l.try_into().unwrap()) as usize);
                let capacity = total
                    .clamp(first.len() + chunk.len(), PREFIX + MAX_MESSAGE_SIZE);
                let mut more = BytesMut::with_capacity(capacity);
                more.extend_from_slice(first);
                more.extend_from_slice(&chunk);
                self.more = Some(more);
            }
        }
        Ok(())
    }

    fn into_bytes(self) -> Bytes {
        match (self.first, self.more) {
            (_, Some(more)) => more.freeze(),
            (Some(first), None) => first,
            (None, None) => Bytes::new(),
        }
    }
}

/// The one message of a unary reply's DATA: an uncompressed length prefix
/// and exactly that many bytes.
fn unframe(data: Bytes) -> Result<Bytes, String> {
    if data.len() < PREFIX {
        return Err(format!(
            "a reply of {} bytes: no complete gRPC message",
            data.len()
        ));
    }
    if data[0] != 0 {
        return Err(format!(
            "a reply message with compressed flag {}, but no compression was asked for",
            data[0]
        ));
    }
    let length = u32::from_be_bytes(data[1..PREFIX].try_into().unwrap()) as usize;
    if length > MAX_MESSAGE_SIZE {
        return Err(format!(
            "a reply message of {length} bytes: more than {MAX_MESSAGE_SIZE}"
        ));
    }
    match (data.len() - PREFIX).cmp(&length) {
        std::cmp::Ordering::Equal => Ok(data.slice(PREFIX..)),
        std::cmp::Ordering::Less => Err(format!(
            "a reply message of {length} bytes cut off after {}",
            data.len() - PREFIX
        )),
        std::cmp::Ordering::Greater => Err(format!(
            "{} bytes after the reply message of {length} bytes (a unary call has one)",
            data.len() - PREFIX - length
        )),
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

/// `Ok` for `grpc-status` 0; the server's status as an error otherwise (or
/// a protocol error if there is none, or it is not a number).
fn grpc_status(headers: &HeaderMap) -> Result<(), CallError> {
    let Some(status) = headers.get("grpc-status") else {
        return Err(CallError::Protocol("a reply without grpc-status".into()));
    };
    let code = std::str::from_utf8(status.as_bytes())
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
        .ok_or_else(|| {
            CallError::Protocol(format!(
                "grpc-status {:?} is not a number",
                String::from_utf8_lossy(status.as_bytes())
            ))
        })?;
    if code == 0 {
        return Ok(());
    }
    let message = headers
        .get("grpc-message")
        .map(|m| percent_decode(m.as_bytes()))
        .unwrap_or_default();
    Err(CallError::Server(format!("{}: {message}", code_name(code))))
}

/// `grpc-message` as sent: percent-encoded UTF-8 (invalid sequences are
/// kept as they are, invalid UTF-8 replaced).
fn percent_decode(text: &[u8]) -> String {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'%' && i + 2 < text.len() {
            if let (Some(h), Some(l)) = (hex(text[i + 1]), hex(text[i + 2])) {
                out.push((h << 4) | l);
                i += 3;
                continue;
            }
        }
        out.push(text[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The canonical name of a gRPC status code, as in the gRPC specification
/// and grpc-java (`UNAVAILABLE`); a code outside the specification is
/// `UNKNOWN`, as gRPC libraries read it.
fn code_name(code: u32) -> &'static str {
    match code {
        0 => "OK",
        1 => "CANCELLED",
        2 => "UNKNOWN",
        3 => "INVALID_ARGUMENT",
        4 => "DEADLINE_EXCEEDED",
        5 => "NOT_FOUND",
        6 => "ALREADY_EXISTS",
        7 => "PERMISSION_DENIED",
        8 => "RESOURCE_EXHAUSTED",
        9 => "FAILED_PRECONDITION",
        10 => "ABORTED",
        11 => "OUT_OF_RANGE",
        12 => "UNIMPLEMENTED",
        13 => "INTERNAL",
        14 => "UNAVAILABLE",
        15 => "DATA_LOSS",
        16 => "UNAUTHENTICATED",
        _ => "UNKNOWN",
    }
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

    fn trailers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    http::HeaderName::from_static(k),
                    HeaderValue::from_static(v),
                )
            })
            .collect()
    }

    #[test]
    fn server_statuses_keep_code_and_message() {
        assert!(grpc_status(&trailers(&[("grpc-status", "0")])).is_ok());
        let err = grpc_status(&trailers(&[
            ("grpc-status", "5"),
            ("grpc-message", "no%20such%20thing%3A%20%E2%9C%93%2"),
        ]))
        .unwrap_err();
        assert!(
            matches!(&err, CallError::Server(m) if m == "NOT_FOUND: no such thing: ✓%2"),
            "{err:?}"
        );
        let err = grpc_status(&trailers(&[("grpc-status", "99")])).unwrap_err();
        assert!(matches!(&err, CallError::Server(m) if m == "UNKNOWN: "), "{err:?}");
        for bad in [trailers(&[]), trailers(&[("grpc-status", "x")])] {
            let err = grpc_status(&bad).unwrap_err();
            assert!(matches!(err, CallError::Protocol(_)), "{err:?}");
        }
    }

    #[test]
    fn a_unary_reply_is_exactly_one_uncompressed_message() {
        let framed = |flag: u8, len: u32, body: &[u8]| {
            let mut v = vec![flag];
            v.extend_from_slice(&len.to_be_bytes());
            v.extend_from_slice(body);
            Bytes::from(v)
        };
        assert_eq!(&unframe(framed(0, 3, b"abc")).unwrap()[..], b"abc");
        assert_eq!(&unframe(framed(0, 0, b"")).unwrap()[..], b"");
        for bad in [
            Bytes::from_static(b"\0\0\0"),
            framed(1, 3, b"abc"),
            framed(0, 4, b"abc"),
            framed(0, 2, b"abc"),
            framed(0, u32::MAX, b""),
        ] {
            assert!(unframe(bad.clone()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn gathered_chunks_are_the_reply_in_order() {
        let mut g = Gather::default();
        g.push(Bytes::from_static(b"\0\0\0")).unwrap();
        g.push(Bytes::from_static(b"\0\x04ab")).unwrap();
        g.push(Bytes::from_static(b"cd")).unwrap();
        assert_eq!(&unframe(g.into_bytes()).unwrap()[..], b"abcd");
        let mut one = Gather::default();
        let chunk = Bytes::from_static(b"\0\0\0\0\x01z");
        one.push(chunk.clone()).unwrap();
        assert_eq!(one.into_bytes().as_ptr(), chunk.as_ptr(), "one chunk: no copy");
    }

    #[test]
    fn only_a_reply_equal_to_the_expected_value_becomes_the_reference() {
        let call = Operation::Hello.call();
        let authority = http::uri::Authority::from_static("127.0.0.1:1");
        let prepared = Prepared::new(&call, &authority).unwrap();
        assert_eq!(prepared.uri.to_string(), "http://127.0.0.1:1/rpclab.Bench/Hello");
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
        // A wrong reply is decoded, handed on as it is, and never kept.
        let got = prepared.value_of(wrong.clone(), &call.expected).unwrap();
        assert_eq!(got, Value::Str("hello someone else".into()));
        assert!(prepared.reference.get().is_none());
        assert_eq!(prepared.value_of(right.clone(), &call.expected).unwrap(), call.expected);
        assert_eq!(prepared.reference.get().unwrap().0, right);
        // Still decoded in full after a reference exists.
        let got = prepared.value_of(wrong, &call.expected).unwrap();
        assert_eq!(got, Value::Str("hello someone else".into()));
        assert_eq!(prepared.value_of(right, &call.expected).unwrap(), call.expected);
        let junk = Bytes::from_static(b"\xff\xff");
        assert!(matches!(
            prepared.value_of(junk, &call.expected),
            Err(CallError::Protocol(_))
        ));
    }

    #[test]
    fn requests_are_length_prefixed_once() {
        let call = Operation::OrderEcho.call();
        let authority = http::uri::Authority::from_static("localhost:50051");
        let p = Prepared::new(&call, &authority).unwrap();
        let Value::Order(order) = &call.argument else {
            panic!("order-echo takes an order")
        };
        let message = to_pb(order).encode_to_vec();
        assert_eq!(p.body[0], 0);
        assert_eq!(&p.body[1..5], &(message.len() as u32).to_be_bytes());
        assert_eq!(&p.body[5..], &message[..]);
        let r = p.request();
        assert_eq!(r.method(), Method::POST);
        assert_eq!(r.uri().path(), "/rpclab.Bench/EchoOrder");
        assert_eq!(r.headers()[CONTENT_TYPE], "application/grpc");
        assert_eq!(r.headers()[TE], "trailers");
        let mut mismatched = call.clone();
        mismatched.argument = Value::Unit;
        assert!(matches!(
            Prepared::new(&mismatched, &authority),
            Err(CallError::Config(_))
        ));
    }

    #[test]
    fn options_are_rejected() {
        let mut options = BTreeMap::new();
        assert!(Grpc::new(&options).is_ok());
        options.insert("compression".to_string(), "gzip".to_string());
        assert!(matches!(Grpc::new(&options), Err(CallError::Config(_))));
    }

    #[tokio::test]
    async fn refused_connection_is_a_connect_error() {
        // Bind then drop a listener to get a local port nobody listens on.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let result = Grpc
            .connect(&addr.to_string(), WireCounter::default())
            .await;
        assert!(matches!(result, Err(CallError::Connect(_))), "{result:?}");
        let result = Grpc.connect("no port", WireCounter::default()).await;
        assert!(matches!(result, Err(CallError::Connect(_))), "{result:?}");
    }
}
