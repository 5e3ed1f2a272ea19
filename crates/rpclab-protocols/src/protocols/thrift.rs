//! Apache Thrift, against service `Bench` of `contract/bench.thrift`.
//!
//! # Options
//!
//! * `transport`: `framed` (default; a 4-byte big-endian length before each
//!   message, as `TFramedTransport`) or `buffered` (messages back to back,
//!   as `TBufferedTransport`/`TSocket`);
//! * `protocol`: `binary` (default; strict `TBinaryProtocol`) or `compact`
//!   (`TCompactProtocol`).
//!
//! Both transports work with both protocols.
//!
//! # Codec
//!
//! Messages are encoded and decoded in memory with the `thrift` crate's
//! protocols (`TBinaryOutputProtocol`, `TCompactInputProtocol`, ...); the
//! crate's synchronous transports and sockets are never used: all I/O is
//! async, on a tokio socket. The message bodies are written by hand, field
//! for field as the Thrift compiler's code puts them on the wire: a
//! `CALL` of the method name, an args struct whose only field (id 1) is the
//! argument, a `REPLY` whose result struct holds the return value in field
//! 0 (`success`), or an `EXCEPTION` carrying a `TApplicationException`.
//! The tests check this codec against the compiler's own code
//! (`thrift/generated.rs`, `thrift --gen rs`, used by the tests only).
//!
//! Why not call the generated code on the hot path: it builds owned
//! identifiers (`TFieldIdentifier::new("orderId", ...)` allocates every field
//! name, for every field of every order, on every call) and needs owned
//! arguments, where this codec writes straight from the borrowed contract
//! values with nameless identifiers (the binary and compact protocols never
//! put names of structs or fields on the wire).
//!
//! # Connections
//!
//! One call in flight per connection, as with a blocking Thrift client: a
//! [`ThriftConnection`] is a [`link::Link`] (its socket, its buffers, its
//! prepared call behind a `tokio::sync::Mutex`, a dirty socket replaced on
//! the next call), which the generic Thrift call (`thrift_generic`) runs
//! on too. A reply must carry the method name and sequence id of the
//! request.
//!
//! # Per-call work
//!
//! A call is encoded once per connection: its args struct is kept, and each
//! call writes only the message header (method name, type, sequence id) in
//! front of it, into a buffer the connection reuses. Replies are read into
//! another reused buffer. Before anything is decoded, `scan`
//! (`thrift/scan.rs`) checks the reply's structure: every length in it must
//! fit inside the message, and a message (or frame) may not exceed
//! [`MAX_MESSAGE`], so a corrupt length never makes the crate allocate more
//! than the reply's size. A result struct that starts with the bytes of the
//! call's reference reply ([`crate::reference`]) ends where they end, so
//! `scan` reads only the envelope of such a reply. The reply must carry the
//! request's method name and sequence id; its result struct is then
//! compared with the reference reply and decoded in full only when it
//! differs (the first reply, or a wrong one).

pub mod link;
mod scan;

/// The Thrift compiler's code for the contract: the reference the tests
/// hold the codec to, here and (feature `testing`) in the client's.
#[cfg(any(test, feature = "testing"))]
#[allow(clippy::all, dead_code, missing_docs)]
pub mod generated;

pub use self::link::MAX_MESSAGE;
pub use self::scan::Encoding;

use self::link::Link;
use self::scan::{Scan, EXCEPTION, REPLY};
use crate::exchange::{Exchange, Parsed};
use crate::prepared::{keep_or_replace, ForCall};
use crate::protocol::{check_options, CallError, Protocol, WireCounter};
use crate::reference::{ReferenceExchange, ReferenceReply, Reply};
use rpclab_model::contract::{self, Call, Method, Value};
use std::collections::BTreeMap;
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol,
    TFieldIdentifier, TInputProtocol, TListIdentifier, TMessageIdentifier, TMessageType,
    TOutputProtocol, TStructIdentifier, TType,
};
use thrift::ApplicationErrorKind;
#[cfg(test)]
use {crate::exchange::Received, tokio::io::AsyncRead};

/// How messages are delimited on the socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// `TFramedTransport`: each message preceded by its length.
    Framed,
    /// `TBufferedTransport`: messages back to back.
    Buffered,
}

/// The Thrift protocol, with its framing and encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thrift {
    framing: Framing,
    encoding: Encoding,
}

impl Thrift {
    pub fn framing(&self) -> Framing {
        self.framing
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

impl Default for Thrift {
    fn default() -> Self {
        Thrift {
            framing: Framing::Framed,
            encoding: Encoding::Binary,
        }
    }
}

impl Protocol for Thrift {
    type Conn = ThriftConnection;

    const NAME: &'static str = "thrift";

    const CONNECTION_MODEL: &'static str =
        "one call in flight per connection (blocking Thrift server style)";

    type Exchange = ThriftExchange;

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        check_options(Self::NAME, options, &["transport", "protocol"])?;
        let mut thrift = Thrift::default();
        if let Some(value) = options.get("transport") {
            thrift.framing = match value.as_str() {
                "framed" => Framing::Framed,
                "buffered" => Framing::Buffered,
                other => return Err(bad_option("transport", other, "`framed` or `buffered`")),
            };
        }
        if let Some(value) = options.get("protocol") {
            thrift.encoding = match value.as_str() {
                "binary" => Encoding::Binary,
                "compact" => Encoding::Compact,
                other => return Err(bad_option("protocol", other, "`binary` or `compact`")),
            };
        }
        Ok(thrift)
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<ThriftConnection, CallError> {
        Ok(ThriftConnection {
            link: Link::open(target, counter).await?,
            framing: self.framing,
            encoding: self.encoding,
        })
    }

    /// A Thrift connection is a plain TCP stream of requests and replies.
    fn exchange(&self, call: &Call) -> Result<Option<ThriftExchange>, CallError> {
        ThriftExchange::new(self.framing, self.encoding, call).map(Some)
    }
}

fn bad_option(key: &str, value: &str, accepted: &str) -> CallError {
    CallError::Config(format!(
        "option `{key}` of protocol `thrift` must be {accepted}, not `{value}`"
    ))
}

/// One Thrift connection: one call at a time (see the module documentation).
#[derive(Debug)]
pub struct ThriftConnection {
    link: Link<ThriftExchange>,
    framing: Framing,
    encoding: Encoding,
}

impl ReferenceExchange for ThriftConnection {
    /// One exchange: the call sent, its reply read whole and checked
    /// against the reference reply, or decoded ([`ThriftExchange`]).
    async fn exchange(&self, call: &Call) -> Result<Reply, CallError> {
        self.link
            .exchange(|slot| {
                keep_or_replace(slot, call, || {
                    ThriftExchange::new(self.framing, self.encoding, call)
                })
            })
            .await
    }
}

// The errors of a reply, built out of line (`#[cold]`): the code that
// formats them stays off the path of the replies that are right.

#[cold]
fn wrong_seqid(got: i32, sent: i32) -> CallError {
    CallError::Protocol(format!("reply has sequence id {got}, the call had {sent}"))
}

#[cold]
fn wrong_method(name: &[u8], method: &str) -> CallError {
    CallError::Protocol(format!(
        "reply is for method `{}`, the call was `{method}`",
        String::from_utf8_lossy(name),
    ))
}

#[cold]
fn wrong_kind(kind: u8) -> CallError {
    CallError::Protocol(format!(
        "reply has message type {kind}, expected REPLY (2) or EXCEPTION (3)"
    ))
}

/// A call encoded once, its sequence ids and its reference reply: the
/// call as a sans-IO [`Exchange`], which the async connection and the poll
/// engine both run.
///
/// A CALL message is a header (method name, type, sequence id) and the
/// args struct; only the header changes from call to call, so the args
/// struct is encoded once per connection and call, and each call writes a
/// header of a few bytes before it (the compact protocol's sequence id is
/// a varint, so its header is not patched in place but written again).
#[derive(Debug)]
pub struct ThriftExchange {
    framing: Framing,
    encoding: Encoding,
    method: Method,
    call: Call,
    /// The message identifier of the next request (its sequence id).
    ident: TMessageIdentifier,
    /// The args struct as it follows the message header.
    args: Vec<u8>,
    /// The REPLY's result struct that decoded to the call's expected value.
    reference: ReferenceReply,
}

impl ThriftExchange {
    /// Once per connection and call: out of line.
    #[cold]
    #[inline(never)]
    fn new(framing: Framing, encoding: Encoding, call: &Call) -> Result<ThriftExchange, CallError> {
        let method = Method::of(call)?;
        let ident = TMessageIdentifier::new(method.name(), TMessageType::Call, 0);
        let mut whole = Vec::new();
        encode_message(
            &mut whole,
            Framing::Buffered,
            encoding,
            &ident,
            &call.argument,
        )?;
        let mut header = Vec::new();
        write_header(&mut header, encoding, &ident)?;
        Ok(ThriftExchange {
            framing,
            encoding,
            method,
            call: call.clone(),
            ident,
            args: whole.split_off(header.len()),
            reference: ReferenceReply::default(),
        })
    }

    /// The reply in `input`, if it is whole: its envelope checked against
    /// the request (the stream is out of step otherwise), its result struct
    /// compared with the reference reply, or decoded.
    fn parse(&mut self, input: &[u8]) -> Result<Parsed<Result<Reply, CallError>>, CallError> {
        // A reply like the reference one is not walked again by `scan`.
        let known = self.reference.bytes();
        let (encoding, method) = (self.encoding, self.method);
        let found = reply_in(
            input,
            self.framing,
            encoding,
            known,
            &self.ident,
            method.name(),
        )?;
        Ok(match found {
            Parsed::Incomplete { at_least } => Parsed::Incomplete { at_least },
            Parsed::Complete { consumed, outcome } => Parsed::Complete {
                consumed,
                outcome: outcome.and_then(|body| {
                    self.reference.reply_of(body, &self.call.expected, |b| {
                        decode_reply(b, encoding, method)
                    })
                }),
            },
        })
    }
}

/// The reply to the request of `ident` in `input`, when it is whole: its
/// envelope checked against the request (method name, sequence id; the
/// stream is out of step otherwise, an `Err`), and the result struct of a
/// `REPLY` as its outcome (an `EXCEPTION` message, Thrift's
/// `TApplicationException`, is a server error). `known`: the bytes of a
/// result struct [`scan::scan`] need not walk.
pub(crate) fn reply_in<'a>(
    input: &'a [u8],
    framing: Framing,
    encoding: Encoding,
    known: Option<&[u8]>,
    ident: &TMessageIdentifier,
    method: &str,
) -> Result<Parsed<Result<&'a [u8], CallError>>, CallError> {
    let (at, consumed, message) = match locate(input, framing, encoding, known)? {
        Located::Need(at_least) => return Ok(Parsed::Incomplete { at_least }),
        Located::Found(at, consumed, message) => (at, consumed, message),
    };
    let bytes = &input[at..at + message.len];
    if message.seqid != ident.sequence_number {
        return Err(wrong_seqid(message.seqid, ident.sequence_number));
    }
    let name = &bytes[message.name.clone()];
    if name != method.as_bytes() {
        return Err(wrong_method(name, method));
    }
    let body = &bytes[message.body..];
    let outcome = match message.kind {
        REPLY => Ok(body),
        EXCEPTION => Err(decode_exception(body, encoding)),
        other => Err(wrong_kind(other)),
    };
    Ok(Parsed::Complete { consumed, outcome })
}

impl ForCall for ThriftExchange {
    fn is_for(&self, call: &Call) -> bool {
        self.call.operation == call.operation && self.call.argument == call.argument
    }
}

impl Exchange for ThriftExchange {
    type Outcome = Reply;

    fn request(&mut self, out: &mut Vec<u8>) -> Result<(), CallError> {
        self.ident.sequence_number = self.ident.sequence_number.wrapping_add(1);
        encode_prepared(out, self.framing, self.encoding, &self.ident, &self.args)
    }

    fn reply(&mut self, input: &[u8]) -> Result<Parsed<Result<Reply, CallError>>, CallError> {
        self.parse(input)
    }

    fn verify(&self, reply: Reply) -> Result<(), CallError> {
        reply.verify(&self.call)
    }
}

/// A CALL message's header alone.
fn write_header(
    out: &mut Vec<u8>,
    encoding: Encoding,
    ident: &TMessageIdentifier,
) -> Result<(), CallError> {
    let written = match encoding {
        Encoding::Binary => TBinaryOutputProtocol::new(&mut *out, true).write_message_begin(ident),
        Encoding::Compact => TCompactOutputProtocol::new(&mut *out).write_message_begin(ident),
    };
    written.map_err(|e| CallError::Protocol(format!("encoding the request: {e}")))
}

/// A CALL message of `ident` and the encoded `args` into `out` (cleared
/// first), framed or not: the same bytes as [`encode_message`].
pub(crate) fn encode_prepared(
    out: &mut Vec<u8>,
    framing: Framing,
    encoding: Encoding,
    ident: &TMessageIdentifier,
    args: &[u8],
) -> Result<(), CallError> {
    out.clear();
    if framing == Framing::Framed {
        out.extend_from_slice(&[0; 4]);
    }
    write_header(out, encoding, ident)?;
    out.extend_from_slice(args);
    set_frame_length(out, framing)
}

/// Writes a framed message's length into its first 4 bytes.
fn set_frame_length(out: &mut [u8], framing: Framing) -> Result<(), CallError> {
    if framing == Framing::Framed {
        let len = i32::try_from(out.len() - 4)
            .map_err(|_| CallError::Protocol("request too large for a frame".into()))?;
        out[..4].copy_from_slice(&len.to_be_bytes());
    }
    Ok(())
}

/// Encodes a CALL message into `out` (cleared first), framed or not.
fn encode_message(
    out: &mut Vec<u8>,
    framing: Framing,
    encoding: Encoding,
    ident: &TMessageIdentifier,
    argument: &Value,
) -> Result<(), CallError> {
    out.clear();
    if framing == Framing::Framed {
        out.extend_from_slice(&[0; 4]);
    }
    let encoded = match encoding {
        Encoding::Binary => write_call(
            &mut TBinaryOutputProtocol::new(&mut *out, true),
            ident,
            argument,
        ),
        Encoding::Compact => {
            write_call(&mut TCompactOutputProtocol::new(&mut *out), ident, argument)
        }
    };
    encoded.map_err(|e| CallError::Protocol(format!("encoding the request: {e}")))?;
    set_frame_length(out, framing)
}

// ---- encoding -----------------------------------------------------------

/// Struct names are never on the wire in the binary and compact protocols.
const NO_NAME: TStructIdentifier = TStructIdentifier {
    name: String::new(),
};

/// A field identifier without a name (likewise never on the wire), so that
/// writing a field allocates nothing.
const fn field(field_type: TType, id: i16) -> TFieldIdentifier {
    TFieldIdentifier {
        name: None,
        field_type,
        id: Some(id),
    }
}

/// `<method>_args` of the Thrift compiler: the argument is field 1.
fn write_call<P: TOutputProtocol>(
    p: &mut P,
    ident: &TMessageIdentifier,
    argument: &Value,
) -> thrift::Result<()> {
    p.write_message_begin(ident)?;
    p.write_struct_begin(&NO_NAME)?;
    match argument {
        Value::Order(order) => {
            p.write_field_begin(&field(TType::Struct, 1))?;
            write_order(p, order)?;
            p.write_field_end()?;
        }
        Value::Orders(orders) => {
            p.write_field_begin(&field(TType::List, 1))?;
            write_orders(p, orders)?;
            p.write_field_end()?;
        }
        Value::Str(s) => {
            p.write_field_begin(&field(TType::String, 1))?;
            p.write_string(s)?;
            p.write_field_end()?;
        }
        Value::Unit => {}
    }
    p.write_field_stop()?;
    p.write_struct_end()?;
    p.write_message_end()?;
    p.flush()
}

fn write_orders<P: TOutputProtocol>(p: &mut P, orders: &[contract::Order]) -> thrift::Result<()> {
    let size = i32::try_from(orders.len()).map_err(|_| {
        thrift::Error::Protocol(thrift::ProtocolError::new(
            thrift::ProtocolErrorKind::SizeLimit,
            "too many orders for a Thrift list",
        ))
    })?;
    p.write_list_begin(&TListIdentifier::new(TType::Struct, size))?;
    for order in orders {
        write_order(p, order)?;
    }
    p.write_list_end()
}

/// struct `Order`, all eight fields, with the IDL's field ids.
fn write_order<P: TOutputProtocol>(p: &mut P, order: &contract::Order) -> thrift::Result<()> {
    p.write_struct_begin(&NO_NAME)?;
    p.write_field_begin(&field(TType::I64, 1))?;
    p.write_i64(order.order_id)?;
    p.write_field_end()?;
    p.write_field_begin(&field(TType::String, 2))?;
    p.write_string(&order.phone)?;
    p.write_field_end()?;
    p.write_field_begin(&field(TType::String, 3))?;
    p.write_string(&order.name)?;
    p.write_field_end()?;
    p.write_field_begin(&field(TType::String, 4))?;
    p.write_string(&order.order_num)?;
    p.write_field_end()?;
    p.write_field_begin(&field(TType::I32, 5))?;
    p.write_i32(order.order_date)?;
    p.write_field_end()?;
    p.write_field_begin(&field(TType::I32, 6))?;
    p.write_i32(order.ticket_type)?;
    p.write_field_end()?;
    p.write_field_begin(&field(TType::Double, 7))?;
    p.write_double(order.amount)?;
    p.write_field_end()?;
    p.write_field_begin(&field(TType::I32, 8))?;
    p.write_i32(order.order_status)?;
    p.write_field_end()?;
    p.write_field_stop()?;
    p.write_struct_end()
}

// ---- decoding -----------------------------------------------------------

/// Decodes the result struct of a REPLY (`body`: what follows the message
/// header) into the method's return value.
fn decode_reply(body: &[u8], encoding: Encoding, method: Method) -> Result<Value, CallError> {
    let result = match encoding {
        Encoding::Binary => read_result(&mut TBinaryInputProtocol::new(body, true), method),
        Encoding::Compact => read_result(&mut TCompactInputProtocol::new(body), method),
    };
    match result {
        Ok(Some(value)) => Ok(value),
        Ok(None) => Err(CallError::WrongResponse(format!(
            "the reply to `{}` has no result (field 0 unset: the server returned null)",
            method.name()
        ))),
        Err(e) => Err(CallError::Protocol(format!(
            "decoding the reply to `{}`: {e}",
            method.name()
        ))),
    }
}

/// `<method>_result`: the return value is field 0; a void method's result
/// is empty. Fields the contract does not declare are skipped, as the
/// compiler's code does. `None`: a non-void method without its field 0.
fn read_result<P: TInputProtocol>(p: &mut P, method: Method) -> thrift::Result<Option<Value>> {
    let expected = match method {
        Method::EchoOrder => TType::Struct,
        Method::EchoOrders => TType::List,
        Method::EchoString | Method::Hello => TType::String,
        Method::Empty => TType::Void,
    };
    let mut value = if method == Method::Empty {
        Some(Value::Unit)
    } else {
        None
    };
    p.read_struct_begin()?;
    loop {
        let ident = p.read_field_begin()?;
        if ident.field_type == TType::Stop {
            break;
        }
        if ident.id == Some(0) && ident.field_type == expected {
            value = Some(match method {
                Method::EchoOrder => Value::Order(read_order(p)?),
                Method::EchoOrders => Value::Orders(read_orders(p)?),
                _ => Value::Str(p.read_string()?),
            });
        } else if ident.id == Some(0) {
            return Err(protocol_error(format!(
                "result field 0 is a {}, `{}` returns a {expected}",
                ident.field_type,
                method.name()
            )));
        } else {
            p.skip(ident.field_type)?;
        }
        p.read_field_end()?;
    }
    p.read_struct_end()?;
    Ok(value)
}

fn read_orders<P: TInputProtocol>(p: &mut P) -> thrift::Result<Vec<contract::Order>> {
    let list = p.read_list_begin()?;
    if list.element_type != TType::Struct {
        return Err(protocol_error(format!(
            "list of {} where orders were expected",
            list.element_type
        )));
    }
    // `scan` has checked that the size fits in the reply.
    let mut orders = Vec::with_capacity(list.size.max(0) as usize);
    for _ in 0..list.size {
        orders.push(read_order(p)?);
    }
    p.read_list_end()?;
    Ok(orders)
}

/// struct `Order`. A missing field keeps its type's default, as in the
/// compiler's code; a field of another type than declared is skipped, as
/// Java's generated code does.
fn read_order<P: TInputProtocol>(p: &mut P) -> thrift::Result<contract::Order> {
    let mut order = contract::Order::default();
    p.read_struct_begin()?;
    loop {
        let ident = p.read_field_begin()?;
        match (ident.id, ident.field_type) {
            (_, TType::Stop) => break,
            (Some(1), TType::I64) => order.order_id = p.read_i64()?,
            (Some(2), TType::String) => order.phone = p.read_string()?,
            (Some(3), TType::String) => order.name = p.read_string()?,
            (Some(4), TType::String) => order.order_num = p.read_string()?,
            (Some(5), TType::I32) => order.order_date = p.read_i32()?,
            (Some(6), TType::I32) => order.ticket_type = p.read_i32()?,
            (Some(7), TType::Double) => order.amount = p.read_double()?,
            (Some(8), TType::I32) => order.order_status = p.read_i32()?,
            (_, other) => p.skip(other)?,
        }
        p.read_field_end()?;
    }
    p.read_struct_end()?;
    Ok(order)
}

fn protocol_error(message: String) -> thrift::Error {
    thrift::Error::Protocol(thrift::ProtocolError::new(
        thrift::ProtocolErrorKind::InvalidData,
        message,
    ))
}

/// The `TApplicationException` of an EXCEPTION message, as a server error
/// `"<KIND>: <message>"` with Thrift's constant names (`UNKNOWN_METHOD`,
/// `INTERNAL_ERROR`, ...).
fn decode_exception(body: &[u8], encoding: Encoding) -> CallError {
    let decoded = match encoding {
        Encoding::Binary => thrift::Error::read_application_error_from_in_protocol(
            &mut TBinaryInputProtocol::new(body, true),
        ),
        Encoding::Compact => thrift::Error::read_application_error_from_in_protocol(
            &mut TCompactInputProtocol::new(body),
        ),
    };
    match decoded {
        Ok(e) => CallError::Server(format!("{}: {}", kind_name(e.kind), e.message)),
        Err(e) => CallError::Protocol(format!("decoding an exception reply: {e}")),
    }
}

fn kind_name(kind: ApplicationErrorKind) -> &'static str {
    match kind {
        ApplicationErrorKind::Unknown => "UNKNOWN",
        ApplicationErrorKind::UnknownMethod => "UNKNOWN_METHOD",
        ApplicationErrorKind::InvalidMessageType => "INVALID_MESSAGE_TYPE",
        ApplicationErrorKind::WrongMethodName => "WRONG_METHOD_NAME",
        ApplicationErrorKind::BadSequenceId => "BAD_SEQUENCE_ID",
        ApplicationErrorKind::MissingResult => "MISSING_RESULT",
        ApplicationErrorKind::InternalError => "INTERNAL_ERROR",
        ApplicationErrorKind::ProtocolError => "PROTOCOL_ERROR",
        ApplicationErrorKind::InvalidTransform => "INVALID_TRANSFORM",
        ApplicationErrorKind::InvalidProtocol => "INVALID_PROTOCOL",
        ApplicationErrorKind::UnsupportedClientType => "UNSUPPORTED_CLIENT_TYPE",
        _ => "UNKNOWN",
    }
}

// ---- reading ------------------------------------------------------------

/// Reads until `locate` finds a whole message: where it starts in
/// [`Received::available`], how many bytes it takes, and its envelope.
#[cfg(test)]
async fn read_located<S: AsyncRead + Unpin>(
    input: &mut Received,
    stream: &mut S,
    framing: Framing,
    encoding: Encoding,
    known_body: Option<&[u8]>,
) -> Result<(usize, usize, scan::Message), CallError> {
    loop {
        match locate(input.available(), framing, encoding, known_body)? {
            Located::Found(at, consumed, message) => return Ok((at, consumed, message)),
            Located::Need(at_least) => link::read_more(input, stream, at_least).await?,
        }
    }
}

/// Where the next message is in the bytes received.
enum Located {
    /// Not all of it yet: at least this many bytes in all.
    Need(usize),
    /// Where its message starts, how many bytes it takes (with its frame
    /// header, when framed), and its envelope.
    Found(usize, usize, scan::Message),
}

/// The next message in `input`, framed or not. `known_body`: see
/// [`scan::scan`].
fn locate(
    input: &[u8],
    framing: Framing,
    encoding: Encoding,
    known_body: Option<&[u8]>,
) -> Result<Located, CallError> {
    match framing {
        Framing::Framed => {
            let Some(header) = input.first_chunk::<4>() else {
                return Ok(Located::Need(4));
            };
            let len = i32::from_be_bytes(*header);
            let len = usize::try_from(len)
                .ok()
                .filter(|&len| len <= MAX_MESSAGE)
                .ok_or_else(|| bad_frame_length(len))?;
            let Some(frame) = input.get(4..4 + len) else {
                return Ok(Located::Need(4 + len));
            };
            match scan::scan(frame, encoding, len, known_body) {
                Ok(Scan::Complete(message)) if message.len == len => {
                    Ok(Located::Found(4, 4 + len, message))
                }
                other => Err(bad_frame(len, other)),
            }
        }
        Framing::Buffered => match scan::scan(input, encoding, MAX_MESSAGE, known_body) {
            Ok(Scan::Complete(message)) => Ok(Located::Found(0, message.len, message)),
            Ok(Scan::Incomplete { at_least }) => Ok(Located::Need(at_least)),
            Err(why) => Err(malformed(why)),
        },
    }
}

#[cold]
fn bad_frame_length(len: i32) -> CallError {
    CallError::Protocol(format!(
        "frame length {len} is outside 0..={MAX_MESSAGE} (64 MiB)"
    ))
}

/// A frame whose scan is not one message of the frame's length.
#[cold]
fn bad_frame(len: usize, scanned: Result<Scan, String>) -> CallError {
    match scanned {
        Ok(Scan::Complete(message)) => CallError::Protocol(format!(
            "a frame of {len} bytes holds a message of {} bytes",
            message.len
        )),
        Ok(Scan::Incomplete { .. }) => {
            CallError::Protocol(format!("a frame of {len} bytes ends inside its message"))
        }
        Err(why) => malformed(why),
    }
}

#[cold]
fn malformed(why: String) -> CallError {
    CallError::Protocol(format!("malformed reply: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::thrift::Echo;
    use crate::testing::{assert_refused, options as opts};
    use generated::{BenchSyncHandler, BenchSyncProcessor};
    use rpclab_model::contract::Operation;
    use thrift::server::TProcessor;
    use tokio::io::AsyncWriteExt;

    /// Fails every call with an application error.
    struct Failing;

    impl BenchSyncHandler for Failing {
        fn handle_echo_order(&self, _: generated::Order) -> thrift::Result<generated::Order> {
            Err(failure())
        }
        fn handle_echo_orders(
            &self,
            _: Vec<generated::Order>,
        ) -> thrift::Result<Vec<generated::Order>> {
            Err(failure())
        }
        fn handle_echo_string(&self, _: String) -> thrift::Result<String> {
            Err(failure())
        }
        fn handle_hello(&self, _: String) -> thrift::Result<String> {
            Err(failure())
        }
        fn handle_empty(&self) -> thrift::Result<()> {
            Err(failure())
        }
    }

    fn failure() -> thrift::Error {
        thrift::Error::Application(thrift::ApplicationError::new(
            ApplicationErrorKind::InternalError,
            "boom",
        ))
    }

    const WIRES: [Encoding; 2] = [Encoding::Binary, Encoding::Compact];

    /// Every operation's call on every wire encoding.
    fn wires_and_calls() -> impl Iterator<Item = (Encoding, Operation, Call)> {
        WIRES.into_iter().flat_map(|encoding| {
            Operation::ALL
                .into_iter()
                .map(move |op| (encoding, op, op.call()))
        })
    }

    /// Runs the compiler's processor on an unframed request message and
    /// returns its unframed reply.
    fn process<H: BenchSyncHandler>(handler: H, encoding: Encoding, request: &[u8]) -> Vec<u8> {
        let processor = BenchSyncProcessor::new(handler);
        let mut reply = Vec::new();
        let processed = match encoding {
            Encoding::Binary => processor.process(
                &mut TBinaryInputProtocol::new(request, true),
                &mut TBinaryOutputProtocol::new(&mut reply, true),
            ),
            Encoding::Compact => processor.process(
                &mut TCompactInputProtocol::new(request),
                &mut TCompactOutputProtocol::new(&mut reply),
            ),
        };
        processed.unwrap();
        reply
    }

    fn encode(framing: Framing, encoding: Encoding, call: &Call, seqid: i32) -> Vec<u8> {
        let method = Method::of(call).unwrap();
        let mut ident = TMessageIdentifier::new(method.name(), TMessageType::Call, 0);
        ident.sequence_number = seqid;
        let mut out = vec![0xee; 3]; // junk, to check that encoding clears
        encode_message(&mut out, framing, encoding, &ident, &call.argument).unwrap();
        out
    }

    /// Decodes a reply the way `call` does, after scanning it.
    fn decode(
        encoding: Encoding,
        method: Method,
        reply: &[u8],
    ) -> (scan::Message, Result<Value, CallError>) {
        let message = match scan::scan(reply, encoding, MAX_MESSAGE, None).unwrap() {
            Scan::Complete(message) => message,
            other => panic!("{other:?}"),
        };
        assert_eq!(message.len, reply.len());
        assert_eq!(&reply[message.name.clone()], method.name().as_bytes());
        let body = &reply[message.body..];
        let value = match message.kind {
            REPLY => decode_reply(body, encoding, method),
            EXCEPTION => Err(decode_exception(body, encoding)),
            other => panic!("message type {other}"),
        };
        (message, value)
    }

    /// A call encoded once and sent with a new header each time is the
    /// same bytes as the call encoded whole, whatever the sequence id (the
    /// compact protocol's varint grows with it).
    #[test]
    fn a_prepared_call_is_the_whole_encoding_for_every_sequence_id() {
        for encoding in WIRES {
            for framing in [Framing::Framed, Framing::Buffered] {
                for op in Operation::ALL {
                    let call = op.call();
                    let method = Method::of(&call).unwrap();
                    let prepared = ThriftExchange::new(framing, encoding, &call).unwrap();
                    assert!(prepared.is_for(&call));
                    for seqid in [
                        0,
                        1,
                        63,
                        64,
                        127,
                        128,
                        16_384,
                        70_000,
                        i32::MAX,
                        -1,
                        i32::MIN,
                    ] {
                        let mut ident =
                            TMessageIdentifier::new(method.name(), TMessageType::Call, 0);
                        ident.sequence_number = seqid;
                        let mut out = vec![0xee; 5];
                        encode_prepared(&mut out, framing, encoding, &ident, &prepared.args)
                            .unwrap();
                        assert_eq!(
                            out,
                            encode(framing, encoding, &call, seqid),
                            "{encoding:?} {framing:?} {op} seqid {seqid}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_operation_round_trips_through_the_compilers_code() {
        for (encoding, op, call) in wires_and_calls() {
            let request = encode(Framing::Buffered, encoding, &call, 41);
            // The request is one whole message, as scan sees it.
            match scan::scan(&request, encoding, MAX_MESSAGE, None).unwrap() {
                Scan::Complete(m) => {
                    assert_eq!(m.len, request.len());
                    assert_eq!(m.kind, scan::CALL);
                    assert_eq!(m.seqid, 41);
                }
                other => panic!("{encoding:?} {op}: {other:?}"),
            }
            let reply = process(Echo, encoding, &request);
            let (message, value) = decode(encoding, Method::of(&call).unwrap(), &reply);
            assert_eq!(message.seqid, 41, "{encoding:?} {op}");
            assert_eq!(message.kind, REPLY, "{encoding:?} {op}");
            let value = value.unwrap_or_else(|e| panic!("{encoding:?} {op}: {e}"));
            assert!(value == call.expected, "{encoding:?} {op}: wrong value");
        }
    }

    #[test]
    fn the_compilers_client_writes_the_same_bytes() {
        use generated::{BenchSyncClient, TBenchSyncClient};
        // The generated client writes into `sent`, then fails reading the
        // reply from an empty input: only its request matters here.
        let order = Operation::OrderEcho.call();
        let Value::Order(o) = &order.argument else {
            unreachable!()
        };
        let generated_order = generated::Order::new(
            o.order_id,
            o.phone.clone(),
            o.name.clone(),
            o.order_num.clone(),
            o.order_date,
            o.ticket_type,
            thrift::OrderedFloat::from(o.amount),
            o.order_status,
        );
        for encoding in WIRES {
            let mut sent = Vec::new();
            let empty: &[u8] = &[];
            match encoding {
                Encoding::Binary => {
                    let mut client = BenchSyncClient::new(
                        TBinaryInputProtocol::new(empty, true),
                        TBinaryOutputProtocol::new(&mut sent, true),
                    );
                    assert!(client.echo_order(generated_order.clone()).is_err());
                }
                Encoding::Compact => {
                    let mut client = BenchSyncClient::new(
                        TCompactInputProtocol::new(empty),
                        TCompactOutputProtocol::new(&mut sent),
                    );
                    assert!(client.echo_order(generated_order.clone()).is_err());
                }
            }
            // The generated client numbers its first call 1.
            assert_eq!(
                encode(Framing::Buffered, encoding, &order, 1),
                sent,
                "{encoding:?}"
            );
        }
    }

    #[test]
    fn application_exceptions_are_server_errors() {
        for (encoding, op, call) in wires_and_calls() {
            let reply = process(
                Failing,
                encoding,
                &encode(Framing::Buffered, encoding, &call, 5),
            );
            let (message, value) = decode(encoding, Method::of(&call).unwrap(), &reply);
            assert_eq!(message.kind, EXCEPTION);
            match value {
                Err(CallError::Server(m)) => assert_eq!(m, "INTERNAL_ERROR: boom"),
                other => panic!("{encoding:?} {op}: {other:?}"),
            }
        }
    }

    #[test]
    fn framing_prefixes_the_message_length() {
        for (encoding, _, call) in wires_and_calls() {
            let framed = encode(Framing::Framed, encoding, &call, 9);
            let bare = encode(Framing::Buffered, encoding, &call, 9);
            assert_eq!(&framed[4..], &bare[..]);
            let len = i32::from_be_bytes(framed[..4].try_into().unwrap());
            assert_eq!(len as usize, bare.len());
        }
    }

    #[test]
    fn a_missing_result_is_a_wrong_response() {
        // REPLY to echoString with an empty result struct (strict binary).
        let mut reply = 0x8001_0002u32.to_be_bytes().to_vec();
        reply.extend_from_slice(&10i32.to_be_bytes());
        reply.extend_from_slice(b"echoString");
        reply.extend_from_slice(&1i32.to_be_bytes());
        reply.push(0);
        let (_, value) = decode(Encoding::Binary, Method::EchoString, &reply);
        assert!(
            matches!(value, Err(CallError::WrongResponse(_))),
            "{value:?}"
        );
    }

    #[test]
    fn options() {
        assert_eq!(Thrift::new(&opts(&[])).unwrap(), Thrift::default());
        let t = Thrift::new(&opts(&[("transport", "buffered"), ("protocol", "compact")])).unwrap();
        assert_eq!(
            (t.framing(), t.encoding()),
            (Framing::Buffered, Encoding::Compact)
        );
        assert_refused::<Thrift>(&[
            &[("transport", "http")],
            &[("protocol", "json")],
            &[("multiplexed", "true")],
        ]);
    }

    #[tokio::test]
    async fn reads_frames_and_refuses_oversized_ones() {
        let reply = process(
            Echo,
            Encoding::Binary,
            &encode(
                Framing::Buffered,
                Encoding::Binary,
                &Operation::Hello.call(),
                3,
            ),
        );
        let mut framed = (reply.len() as i32).to_be_bytes().to_vec();
        framed.extend_from_slice(&reply);
        // Two replies back to back, delivered a few bytes at a time.
        let (_, _, known) =
            read_back_to_back(&framed, 5, Framing::Framed, Encoding::Binary, |located| {
                assert_eq!((located.at, located.consumed), (4, framed.len()));
                assert_eq!(located.message.len, reply.len());
            })
            .await;

        let mut too_big = ((MAX_MESSAGE + 1) as i32).to_be_bytes().to_vec();
        too_big.extend_from_slice(&[0; 16]);
        let mut input = Received::default();
        let result = read_framed(&mut input, too_big, 1024, None).await;
        assert!(matches!(result, Err(CallError::Protocol(_))), "{result:?}");
        assert!(
            input.allocated() < 1 << 20,
            "allocated {} bytes",
            input.allocated()
        );

        let negative = (-5i32).to_be_bytes().to_vec();
        let result = read_framed(&mut Received::default(), negative, 4, None).await;
        assert!(matches!(result, Err(CallError::Protocol(_))), "{result:?}");

        // A frame shorter than its message, with or without its body known.
        for known in [None, Some(&known[..])] {
            let mut short = ((reply.len() - 1) as i32).to_be_bytes().to_vec();
            short.extend_from_slice(&reply[..reply.len() - 1]);
            let result = read_framed(&mut Received::default(), short, 64, known).await;
            assert!(matches!(result, Err(CallError::Protocol(_))), "{result:?}");
        }
    }

    #[tokio::test]
    async fn reads_unframed_messages_piece_by_piece() {
        for encoding in WIRES {
            let call = Operation::StringEcho(contract::StringSize::K100).call();
            let reply = process(
                Echo,
                encoding,
                &encode(Framing::Buffered, encoding, &call, 8),
            );
            let (mut input, mut stream, known) =
                read_back_to_back(&reply, 1000, Framing::Buffered, encoding, |located| {
                    assert_eq!((located.at, located.consumed), (0, reply.len()));
                    let body = located.body;
                    assert!(
                        decode_reply(body, encoding, Method::EchoString).unwrap() == call.expected
                    );
                })
                .await;
            // Then the server hangs up.
            let result = read_located(
                &mut input,
                &mut stream,
                Framing::Buffered,
                encoding,
                Some(&known),
            )
            .await;
            assert!(matches!(result, Err(CallError::Io(_))), "{result:?}");
        }
    }

    /// What [`read_back_to_back`] located, each time.
    struct Located<'a> {
        at: usize,
        consumed: usize,
        message: scan::Message,
        body: &'a [u8],
    }

    /// Two copies of `message` back to back, received `chunk` bytes per
    /// read, each read as `framing` and `encoding` say: the second time
    /// with the first's body known, which must locate the same. `check`
    /// sees each; the input and the stream are returned for what comes
    /// next, with the body read.
    async fn read_back_to_back(
        message: &[u8],
        chunk: usize,
        framing: Framing,
        encoding: Encoding,
        mut check: impl FnMut(Located<'_>),
    ) -> (Received, impl AsyncRead + Unpin, Vec<u8>) {
        let mut input = Received::default();
        let mut stream = tokio_test_reader([message, message].concat(), chunk);
        let mut known: Option<Vec<u8>> = None;
        for _ in 0..2 {
            let (at, consumed, message) =
                read_located(&mut input, &mut stream, framing, encoding, known.as_deref())
                    .await
                    .unwrap();
            let body = input.available()[at + message.body..at + message.len].to_vec();
            check(Located {
                at,
                consumed,
                message,
                body: &body,
            });
            known = Some(body);
            input.consume(consumed);
        }
        (input, stream, known.unwrap())
    }

    /// A framed binary message read into `input` from `bytes`, received
    /// `chunk` bytes per read.
    async fn read_framed(
        input: &mut Received,
        bytes: Vec<u8>,
        chunk: usize,
        known_body: Option<&[u8]>,
    ) -> Result<(usize, usize, scan::Message), CallError> {
        let mut stream = tokio_test_reader(bytes, chunk);
        read_located(
            input,
            &mut stream,
            Framing::Framed,
            Encoding::Binary,
            known_body,
        )
        .await
    }

    /// A reader that hands out `bytes` at most `chunk` bytes per read.
    fn tokio_test_reader(bytes: Vec<u8>, chunk: usize) -> impl AsyncRead + Unpin {
        let (mut tx, rx) = tokio::io::duplex(chunk);
        tokio::spawn(async move {
            let _ = tx.write_all(&bytes).await;
        });
        rx
    }

    /// The server's reply to the exchange's last request, framed or not.
    fn reply_to(exchange: &mut ThriftExchange, framing: Framing, encoding: Encoding) -> Vec<u8> {
        let mut request = Vec::new();
        exchange.request(&mut request).unwrap();
        let unframed = match framing {
            Framing::Framed => &request[4..],
            Framing::Buffered => &request[..],
        };
        let reply = process(Echo, encoding, unframed);
        match framing {
            Framing::Framed => {
                let mut framed = (reply.len() as i32).to_be_bytes().to_vec();
                framed.extend_from_slice(&reply);
                framed
            }
            Framing::Buffered => reply,
        }
    }

    /// The exchange, as both engines run it: a reply cut anywhere asks for
    /// more, the whole reply is verified and consumed, on every framing
    /// and protocol, for the first reply (decoded, then the reference) and
    /// the later ones (compared with it).
    #[test]
    fn the_exchange_waits_for_a_whole_reply_and_verifies_it() {
        for encoding in WIRES {
            for framing in [Framing::Framed, Framing::Buffered] {
                for op in [Operation::Hello, Operation::OrderEcho, Operation::Empty] {
                    let call = op.call();
                    let mut exchange = ThriftExchange::new(framing, encoding, &call).unwrap();
                    for _ in 0..3 {
                        let reply = reply_to(&mut exchange, framing, encoding);
                        for cut in 0..reply.len() {
                            match exchange.reply(&reply[..cut]).unwrap() {
                                Parsed::Incomplete { at_least } => assert!(at_least > cut),
                                other => {
                                    panic!("{encoding:?} {framing:?} {op} cut {cut}: {other:?}")
                                }
                            }
                        }
                        let mut more = reply.clone();
                        more.extend_from_slice(b"next");
                        match exchange.reply(&more).unwrap() {
                            Parsed::Complete {
                                consumed,
                                outcome: Ok(verified),
                            } => {
                                assert_eq!(consumed, reply.len());
                                exchange.verify(verified).unwrap();
                            }
                            other => panic!("{encoding:?} {framing:?} {op}: {other:?}"),
                        }
                    }
                    assert!(exchange.reference.bytes().is_some());
                }
            }
        }
    }

    /// A reply to an earlier request (its sequence id) puts the stream out
    /// of step; a wrong value is a failed call that leaves it in step.
    #[test]
    fn the_exchange_refuses_a_stale_reply_and_fails_a_wrong_one() {
        let call = Operation::Hello.call();
        for encoding in WIRES {
            let mut exchange = ThriftExchange::new(Framing::Framed, encoding, &call).unwrap();
            let stale = reply_to(&mut exchange, Framing::Framed, encoding);
            let _ = reply_to(&mut exchange, Framing::Framed, encoding);
            assert!(matches!(
                exchange.reply(&stale),
                Err(CallError::Protocol(_))
            ));

            let mut other = call.clone();
            other.argument = Value::Str("someone else".into());
            let mut wrong = ThriftExchange::new(Framing::Framed, encoding, &other).unwrap();
            let reply = reply_to(&mut wrong, Framing::Framed, encoding);
            exchange.ident.sequence_number = wrong.ident.sequence_number;
            match exchange.reply(&reply).unwrap() {
                Parsed::Complete { consumed, outcome } => {
                    assert_eq!(consumed, reply.len());
                    let verdict = outcome.and_then(|o| exchange.verify(o));
                    assert!(
                        matches!(verdict, Err(CallError::WrongResponse(_))),
                        "{encoding:?}: {verdict:?}"
                    );
                }
                other => panic!("{encoding:?}: {other:?}"),
            }
        }
    }

    proptest::proptest! {
        /// Any bytes, and a real reply with bytes changed, through the
        /// exchange of every framing and protocol: no panic, never more
        /// consumed than received, and more asked for only beyond what is
        /// there.
        #[test]
        fn the_exchange_takes_any_bytes(
            junk in proptest::collection::vec(proptest::num::u8::ANY, 0..256),
            flips in proptest::collection::vec((0usize..512, proptest::num::u8::ANY), 0..4),
            framed in proptest::bool::ANY,
            binary in proptest::bool::ANY,
        ) {
            let framing = if framed { Framing::Framed } else { Framing::Buffered };
            let encoding = if binary { Encoding::Binary } else { Encoding::Compact };
            let call = Operation::OrderEcho.call();
            let mut exchange = ThriftExchange::new(framing, encoding, &call).unwrap();
            let mut reply = reply_to(&mut exchange, framing, encoding);
            crate::testing::flip(&mut reply, 0, &flips);
            for input in [&junk[..], &reply[..]] {
                match exchange.reply(input) {
                    Ok(Parsed::Incomplete { at_least }) => proptest::prop_assert!(at_least > input.len()),
                    Ok(Parsed::Complete { consumed, .. }) => proptest::prop_assert!(consumed <= input.len()),
                    Err(_) => {}
                }
            }
        }
    }
}
