//! The bolt wire format (SOFA-RPC's default protocol, `RpcProtocol` v1 of
//! sofa-bolt) with SOFA-RPC's request and response objects. Pure functions
//! over byte slices, no I/O.
//!
//! ```text
//! request (22-byte header)
//! 0     1     2           4     5                 9     10                14          16          18                22
//! |proto|type | cmdcode   |ver2 | request id (4)  |codec| timeout ms (4)  | classLen  | headerLen | contentLen (4)  | class header content
//! response (20-byte header)
//! |proto|type | cmdcode   |ver2 | request id (4)  |codec| status    | classLen  | headerLen | contentLen (4)  | class header content
//! proto 1 (v1); type 1 request, 0 response, 2 one-way; cmdcode 0 heartbeat, 1 request, 2 response;
//! ver2 1; codec 1 = hessian2
//! ```
//!
//! What SOFA-RPC puts in the three parts (`SofaRpcSerialization`):
//!
//! * class: `com.alipay.sofa.rpc.core.request.SofaRequest` /
//!   `...response.SofaResponse` (bolt picks its deserializer by it);
//! * header: a flat string map (`SimpleMapSerializer`: i32 length + UTF-8
//!   per key and value). A request carries `service` and
//!   `sofa_head_target_service` (the unique name `<interface>:1.0`),
//!   `sofa_head_method_name` and the request props (`protocol`, `type`);
//!   a response `sofa_head_response_error=true` when it carries an error;
//! * content: draft Hessian 2 ([`super::hessian`]): the `SofaRequest`
//!   object (`targetAppName`, `methodName`, `targetServiceUniqueName`,
//!   `requestProps`, `methodArgSigs`) followed by each argument, in one
//!   stream; the `SofaResponse` object (`isError`, `errorMsg`,
//!   `appResponse`, `responseProps`).
//!
//! A response with another status than SUCCESS carries a
//! `com.alipay.remoting.rpc.exception.RpcServerException` (or nothing) as
//! its content; a SUCCESS response can still carry a framework error
//! (`isError`, `errorMsg`) or the service's exception (`appResponse` is a
//! Throwable). All of them become clear errors.

use crate::java_contract::Method;
use crate::protocol::CallError;
use hessian2_draft::{written_string_at, DValue, DraftError, KnownClass, Reader, Writer};
use rpclab_model::contract::{self, Value};
use std::sync::LazyLock;

pub const PROTOCOL_V1: u8 = 1;
pub const TYPE_RESPONSE: u8 = 0;
pub const TYPE_REQUEST: u8 = 1;
pub const TYPE_ONEWAY: u8 = 2;
pub const CMD_HEARTBEAT: u16 = 0;
pub const CMD_REQUEST: u16 = 1;
pub const CMD_RESPONSE: u16 = 2;
pub const VERSION2: u8 = 1;
/// bolt's (and SOFA-RPC's) serializer code of hessian2.
pub const HESSIAN2: u8 = 1;
pub const REQUEST_HEADER_LEN: usize = 22;
pub const RESPONSE_HEADER_LEN: usize = 20;

/// Largest class + header + content accepted. bolt itself has no limit
/// (its lengths are Java `short`/`int`); the contract's largest body is a
/// 1 MiB string. A larger frame is corrupt or hostile and refused before
/// anything is allocated for it.
pub const MAX_BODY: usize = 64 * 1024 * 1024;

pub const REQUEST_CLASS: &str = "com.alipay.sofa.rpc.core.request.SofaRequest";
pub const RESPONSE_CLASS: &str = "com.alipay.sofa.rpc.core.response.SofaResponse";
pub const REQUEST_FIELDS: [&str; 5] = [
    "targetAppName",
    "methodName",
    "targetServiceUniqueName",
    "requestProps",
    "methodArgSigs",
];
/// The service interface.
pub const SERVICE: &str = "rpclab.contract.BenchService";
/// The unique name SOFA-RPC keys its providers by: interface, the default
/// version `1.0`, no uniqueId.
pub const TARGET_SERVICE: &str = "rpclab.contract.BenchService:1.0";
pub const ORDER_CLASS: &str = "rpclab.contract.Order";
pub const ORDER_FIELDS: [&str; 8] = crate::java_contract::ORDER_FIELDS;

/// The `SofaResponse` definition every response starts with (a response is
/// a stream of its own), and `Order`'s: recognised without being read
/// ([`Reader::begin_known_object`]); `SofaResponse`'s fields in the order
/// SOFA-RPC's Hessian writes them.
static RESPONSE_DEF: LazyLock<KnownClass> = LazyLock::new(|| {
    KnownClass::new(
        RESPONSE_CLASS,
        &["isError", "errorMsg", "appResponse", "responseProps"],
    )
});
static ORDER_DEF: LazyLock<KnownClass> =
    LazyLock::new(|| KnownClass::new(ORDER_CLASS, &ORDER_FIELDS));

// Header keys (`RemotingConstants`).
pub const HEAD_SERVICE: &str = "service";
pub const HEAD_TARGET_SERVICE: &str = "sofa_head_target_service";
pub const HEAD_METHOD_NAME: &str = "sofa_head_method_name";
pub const HEAD_RESPONSE_ERROR: &str = "sofa_head_response_error";

// Response statuses (`com.alipay.remoting.ResponseStatus`; note 0x10..).
pub const SUCCESS: u16 = 0x0000;
pub const ERROR: u16 = 0x0001;
pub const SERVER_EXCEPTION: u16 = 0x0002;
pub const UNKNOWN: u16 = 0x0003;
pub const SERVER_THREADPOOL_BUSY: u16 = 0x0004;
pub const ERROR_COMM: u16 = 0x0005;
pub const NO_PROCESSOR: u16 = 0x0006;
pub const TIMEOUT: u16 = 0x0007;
pub const CLIENT_SEND_ERROR: u16 = 0x0008;
pub const CODEC_EXCEPTION: u16 = 0x0009;
pub const CONNECTION_CLOSED: u16 = 0x0010;
pub const SERVER_SERIAL_EXCEPTION: u16 = 0x0011;
pub const SERVER_DESERIAL_EXCEPTION: u16 = 0x0012;

/// The name of a response status.
pub fn status_name(status: u16) -> Option<&'static str> {
    Some(match status {
        SUCCESS => "SUCCESS",
        ERROR => "ERROR",
        SERVER_EXCEPTION => "SERVER_EXCEPTION",
        UNKNOWN => "UNKNOWN",
        SERVER_THREADPOOL_BUSY => "SERVER_THREADPOOL_BUSY",
        ERROR_COMM => "ERROR_COMM",
        NO_PROCESSOR => "NO_PROCESSOR",
        TIMEOUT => "TIMEOUT",
        CLIENT_SEND_ERROR => "CLIENT_SEND_ERROR",
        CODEC_EXCEPTION => "CODEC_EXCEPTION",
        CONNECTION_CLOSED => "CONNECTION_CLOSED",
        SERVER_SERIAL_EXCEPTION => "SERVER_SERIAL_EXCEPTION",
        SERVER_DESERIAL_EXCEPTION => "SERVER_DESERIAL_EXCEPTION",
        _ => return None,
    })
}

/// The fixed part of a frame from the server, either kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: u8,
    pub cmd: u16,
    pub id: u32,
    pub codec: u8,
    /// Responses only (0 for a request).
    pub status: u16,
    pub class_len: usize,
    pub header_len: usize,
    pub content_len: usize,
}

impl Header {
    pub fn is_request(&self) -> bool {
        self.kind != TYPE_RESPONSE
    }

    pub fn is_heartbeat(&self) -> bool {
        self.cmd == CMD_HEARTBEAT
    }

    /// Bytes of the fixed header.
    pub fn fixed_len(&self) -> usize {
        if self.is_request() {
            REQUEST_HEADER_LEN
        } else {
            RESPONSE_HEADER_LEN
        }
    }

    /// Bytes of the whole frame.
    pub fn total(&self) -> usize {
        self.fixed_len() + self.class_len + self.header_len + self.content_len
    }

    /// Reads a fixed header from the start of `buf`: `Ok(None)` while it is
    /// incomplete, an error for an unknown protocol, type or command, or
    /// lengths over [`MAX_BODY`].
    pub fn decode(buf: &[u8]) -> Result<Option<Header>, CallError> {
        let Some(&proto) = buf.first() else {
            return Ok(None);
        };
        if proto != PROTOCOL_V1 {
            return Err(CallError::Protocol(format!(
                "unknown bolt protocol code {proto} (expected 1, RpcProtocol v1): not a bolt \
                 stream, or out of step"
            )));
        }
        let Some(&kind) = buf.get(1) else {
            return Ok(None);
        };
        let fixed = match kind {
            TYPE_RESPONSE => RESPONSE_HEADER_LEN,
            TYPE_REQUEST | TYPE_ONEWAY => REQUEST_HEADER_LEN,
            other => {
                return Err(CallError::Protocol(format!(
                    "unknown bolt command type {other} (0 response, 1 request, 2 one-way)"
                )))
            }
        };
        let Some(h) = buf.get(..fixed) else {
            return Ok(None);
        };
        let u16_at = |i: usize| u16::from_be_bytes([h[i], h[i + 1]]);
        let u32_at = |i: usize| u32::from_be_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        let cmd = u16_at(2);
        if cmd > CMD_RESPONSE {
            return Err(CallError::Protocol(format!(
                "unknown bolt command code {cmd} (0 heartbeat, 1 request, 2 response)"
            )));
        }
        // Request: timeout at 10..14, lengths from 14; response: status at
        // 10..12, lengths from 12.
        let (status, lengths) = if kind == TYPE_RESPONSE {
            (u16_at(10), 12)
        } else {
            (0, 14)
        };
        let class_len = usize::from(u16_at(lengths));
        let header_len = usize::from(u16_at(lengths + 2));
        let content_len = u32_at(lengths + 4) as usize;
        // Java reads the lengths as signed; anything negative or huge is
        // refused, whatever the sum.
        if class_len > 0x7fff || header_len > 0x7fff || content_len > MAX_BODY {
            return Err(CallError::Protocol(format!(
                "bolt frame lengths out of range: class {class_len}, header {header_len}, \
                 content {} (limit {MAX_BODY})",
                content_len as u32 as i32
            )));
        }
        Ok(Some(Header {
            kind,
            cmd,
            id: u32_at(5),
            codec: h[9],
            status,
            class_len,
            header_len,
            content_len,
        }))
    }
}

/// Where the next whole frame ends in `buf`: `Ok(None)` while more bytes
/// are needed, `Ok(Some((header, total)))` once `buf` holds all `total`
/// bytes, an error for a malformed header.
pub fn frame(buf: &[u8]) -> Result<Option<(Header, usize)>, CallError> {
    Ok(Header::decode(buf)?.and_then(|h| {
        let total = h.total();
        (buf.len() >= total).then_some((h, total))
    }))
}

/// The parts of a frame after its fixed header.
pub struct Parts<'a> {
    pub class: &'a [u8],
    pub header: &'a [u8],
    pub content: &'a [u8],
}

/// Splits a whole frame (as [`frame`] found it) into class, header, content.
pub fn parts<'a>(h: &Header, frame: &'a [u8]) -> Parts<'a> {
    let a = h.fixed_len();
    let b = a + h.class_len;
    let c = b + h.header_len;
    Parts {
        class: &frame[a..b],
        header: &frame[b..c],
        content: &frame[c..c + h.content_len],
    }
}

/// A heartbeat request (`RpcHeartbeatTrigger`): a request header with
/// command 0, nothing after it.
pub fn heartbeat_request(id: u32) -> [u8; REQUEST_HEADER_LEN] {
    let mut out = [0u8; REQUEST_HEADER_LEN];
    write_header_start(&mut out, TYPE_REQUEST, CMD_HEARTBEAT, id);
    // bolt sends timeout -1 for a heartbeat (its default).
    out[10..14].copy_from_slice(&(-1i32).to_be_bytes());
    out
}

/// The answer to a heartbeat request `id` (`HeartbeatAckCommand`).
pub fn heartbeat_ack(id: u32) -> [u8; RESPONSE_HEADER_LEN] {
    let mut out = [0u8; RESPONSE_HEADER_LEN];
    write_header_start(&mut out, TYPE_RESPONSE, CMD_HEARTBEAT, id);
    out
}

/// The first 10 bytes of every header the client writes: protocol, type,
/// command code, version, request id and codec (hessian2).
fn write_header_start(h: &mut [u8], kind: u8, command: u16, id: u32) {
    h[0] = PROTOCOL_V1;
    h[1] = kind;
    h[2..4].copy_from_slice(&command.to_be_bytes());
    h[4] = VERSION2;
    h[5..9].copy_from_slice(&id.to_be_bytes());
    h[9] = HESSIAN2;
}

// ---- requests ----------------------------------------------------------------

/// The Java types of a method's parameters, as `methodArgSigs`.
pub fn arg_sigs(method: Method) -> &'static [&'static str] {
    match method {
        Method::EchoOrder => &[ORDER_CLASS],
        Method::EchoOrders => &["java.util.List"],
        Method::EchoString | Method::Hello => &["java.lang.String"],
        Method::Empty => &[],
    }
}

/// A good first capacity for a request carrying `argument`, so that
/// encoding it does not reallocate.
pub fn request_capacity(argument: &Value) -> usize {
    const FIXED: usize = 512; // headers, class, SofaRequest
    FIXED + crate::java_contract::hessian::value_capacity(argument)
}

/// The request props a SOFA-RPC consumer sends (`protocol`, `type`), in
/// the header (flattened) and in the `SofaRequest`.
const REQUEST_PROPS: [(&str, &str); 2] = [("protocol", "bolt"), ("type", "sync")];

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as i32).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// Encodes request `id` calling `method` with `argument` into `out`
/// (cleared first), header included; `timeout_ms` goes in the header (the
/// provider drops a request that waited longer than that in its queue).
pub fn encode_request(
    out: &mut Vec<u8>,
    id: u32,
    timeout_ms: i32,
    method: Method,
    argument: &Value,
) -> Result<(), CallError> {
    out.clear();
    out.extend_from_slice(&[0; REQUEST_HEADER_LEN]);
    out.extend_from_slice(REQUEST_CLASS.as_bytes());
    let header_start = out.len();
    // In the order a Java consumer's HashMap iterates them, so that the
    // request is byte for byte what SOFA-RPC sends (the golden tests check).
    for (k, v) in [
        (HEAD_TARGET_SERVICE, TARGET_SERVICE),
        REQUEST_PROPS[0],
        (HEAD_SERVICE, TARGET_SERVICE),
        (HEAD_METHOD_NAME, method.name()),
        REQUEST_PROPS[1],
    ] {
        put_string(out, k);
        put_string(out, v);
    }
    let content_start = out.len();
    let mut w = Writer::new(out);
    w.object(REQUEST_CLASS, &REQUEST_FIELDS);
    w.null(); // targetAppName: none (the provider registers no app to match)
    w.string(method.name());
    w.string(TARGET_SERVICE);
    w.map();
    for (k, v) in REQUEST_PROPS {
        w.string(k);
        w.string(v);
    }
    w.end();
    let sigs = arg_sigs(method);
    w.list(sigs.len(), Some("[string"));
    for s in sigs {
        w.string(s);
    }
    w.end();
    match argument {
        Value::Order(order) => write_order(&mut w, order),
        Value::Orders(orders) => {
            w.list(orders.len(), None);
            for order in orders {
                write_order(&mut w, order);
            }
            w.end();
        }
        Value::Str(s) => w.string(s),
        Value::Unit => {}
    }
    let content_len = out.len() - content_start;
    if content_len > MAX_BODY {
        return Err(CallError::Protocol(format!(
            "request content of {content_len} bytes is over the {MAX_BODY}-byte limit"
        )));
    }
    let h = &mut out[..REQUEST_HEADER_LEN];
    write_header_start(h, TYPE_REQUEST, CMD_REQUEST, id);
    h[10..14].copy_from_slice(&timeout_ms.to_be_bytes());
    h[14..16].copy_from_slice(&(REQUEST_CLASS.len() as u16).to_be_bytes());
    h[16..18].copy_from_slice(&((content_start - header_start) as u16).to_be_bytes());
    h[18..22].copy_from_slice(&(content_len as u32).to_be_bytes());
    Ok(())
}

/// Writes request id `id` into `request`, a request [`encode_request`]
/// wrote with another id: then what it writes for `id` (the id is the
/// only part of a request that changes from call to call).
pub fn restamp_request(request: &mut [u8], id: u32) -> bool {
    match request.get_mut(5..9) {
        Some(at) => {
            at.copy_from_slice(&id.to_be_bytes());
            true
        }
        None => false,
    }
}

fn write_order(w: &mut Writer<'_>, order: &contract::Order) {
    w.object(ORDER_CLASS, &ORDER_FIELDS);
    w.long(order.order_id);
    w.string(&order.phone);
    w.string(&order.name);
    w.string(&order.order_num);
    w.int(order.order_date);
    w.int(order.ticket_type);
    w.double(order.amount);
    w.int(order.order_status);
}

/// Reads a bolt header map (`SimpleMapSerializer`): pairs of i32-length
/// strings (-1 null, skipped as Java skips them).
pub fn decode_header_map(bytes: &[u8]) -> Result<Vec<(String, String)>, CallError> {
    let mut out = Vec::new();
    let mut rest = bytes;
    let string = |rest: &mut &[u8]| -> Result<Option<String>, CallError> {
        let Some(len) = rest.get(..4) else {
            return Err(CallError::Protocol(format!(
                "bolt header map cut short ({} bytes)",
                bytes.len()
            )));
        };
        let len = i32::from_be_bytes(len.try_into().expect("4 bytes"));
        *rest = &rest[4..];
        if len < 0 {
            return Ok(None);
        }
        let len = len as usize;
        let Some(s) = rest.get(..len) else {
            return Err(CallError::Protocol(format!(
                "bolt header map string of {len} bytes, {} left",
                rest.len()
            )));
        };
        *rest = &rest[len..];
        Ok(Some(String::from_utf8_lossy(s).into_owned()))
    };
    while !rest.is_empty() {
        let k = string(&mut rest)?;
        let v = string(&mut rest)?;
        if let (Some(k), Some(v)) = (k, v) {
            out.push((k, v));
        }
    }
    Ok(out)
}

// ---- responses ---------------------------------------------------------------

fn malformed(e: DraftError) -> CallError {
    CallError::Protocol(format!("malformed bolt response content: {e}"))
}

/// Decodes the response frame to a call of `method` (`frame` is the whole
/// frame, `h` its header as [`frame`] read it).
pub fn decode_response(h: &Header, frame: &[u8], method: Method) -> Result<Value, CallError> {
    let p = parts(h, frame);
    if h.status != SUCCESS {
        return Err(status_error(h.status, &exception_text(&p)));
    }
    if h.codec != HESSIAN2 {
        return Err(CallError::Protocol(format!(
            "response serialized with codec {}, the request used hessian2 ({HESSIAN2})",
            h.codec
        )));
    }
    if p.class != RESPONSE_CLASS.as_bytes() {
        return Err(CallError::Protocol(format!(
            "response class `{}`, expected {RESPONSE_CLASS}",
            String::from_utf8_lossy(p.class)
        )));
    }
    let mut r = Reader::new(p.content);
    let def = r.begin_known_object(&RESPONSE_DEF).map_err(malformed)?;
    if def.name != RESPONSE_CLASS {
        return Err(CallError::Protocol(format!(
            "response content is a {}, expected {RESPONSE_CLASS}",
            def.name
        )));
    }
    let mut is_error = false;
    let mut error_msg: Option<String> = None;
    let mut value: Option<Result<Value, CallError>> = None;
    for field in &def.fields {
        match field.as_str() {
            "isError" => is_error = r.bool().map_err(malformed)?,
            "errorMsg" => error_msg = r.opt_string().map_err(malformed)?,
            "appResponse" => value = Some(read_app_response(&mut r, method)?),
            _ => r.skip().map_err(malformed)?,
        }
    }
    if r.remaining() != 0 {
        return Err(CallError::Protocol(format!(
            "{} bytes after the SofaResponse",
            r.remaining()
        )));
    }
    if is_error {
        return Err(CallError::Server(format!(
            "SOFA-RPC error: {}",
            error_msg.as_deref().unwrap_or("(no message)")
        )));
    }
    match value {
        Some(v) => v,
        None => Err(CallError::Protocol(
            "the SofaResponse has no appResponse field".into(),
        )),
    }
}

/// Whether the response frame `frame` (with header `h`) to a call of
/// `method` is without a doubt the string `expected`, told where it lies:
/// a SUCCESS hessian2 `SofaResponse` written as SOFA-RPC writes one with no
/// error, that string as its `appResponse` and null `responseProps`, which
/// [`decode_response`] decodes to exactly `expected`. False for anything
/// else, which is then decoded.
pub fn is_expected(h: &Header, frame: &[u8], method: Method, expected: &Value) -> bool {
    let Value::Str(want) = expected else {
        return false;
    };
    if !matches!(method, Method::EchoString | Method::Hello)
        || h.is_request()
        || h.status != SUCCESS
        || h.codec != HESSIAN2
        || frame.len() != h.total()
    {
        return false;
    }
    let p = parts(h, frame);
    // The definition, the instance (`o`, class 0), isError false,
    // errorMsg null, then appResponse and responseProps.
    let Some(rest) = p
        .content
        .strip_prefix(RESPONSE_DEF.wire())
        .and_then(|rest| rest.strip_prefix(b"o\x90FN"))
    else {
        return false;
    };
    p.class == RESPONSE_CLASS.as_bytes()
        && written_string_at(rest, want).is_some_and(|n| rest[n..] == *b"N")
}

/// The appResponse: the method's value, or the service's exception (an
/// `Err` inside the `Ok`: the body itself was well-formed).
fn read_app_response(
    r: &mut Reader<'_>,
    method: Method,
) -> Result<Result<Value, CallError>, CallError> {
    if r.try_null().map_err(malformed)? {
        return Ok(match method {
            Method::Empty => Ok(Value::Unit),
            other => Err(CallError::WrongResponse(format!(
                "`{}` returned null",
                other.name()
            ))),
        });
    }
    let at = r.mark();
    let got = match method {
        Method::EchoString | Method::Hello => {
            let mut s = String::new();
            match r.string_into(&mut s) {
                Ok(_) => return Ok(Ok(Value::Str(s))),
                Err(e) => e,
            }
        }
        Method::EchoOrder => match read_order(r) {
            Ok(Some(o)) => return Ok(Ok(Value::Order(o))),
            Ok(None) => DraftError {
                offset: at.position(),
                what: "an object of another class".into(),
            },
            Err(e) => e,
        },
        Method::EchoOrders => match read_orders(r) {
            Ok(orders) => return Ok(Ok(Value::Orders(orders))),
            Err(e) => e,
        },
        Method::Empty => DraftError {
            offset: at.position(),
            what: "a value from a void method".into(),
        },
    };
    // Not the expected kind: re-read the value generically from where it
    // started (class definitions read meanwhile are forgotten, so indices
    // stay Java's). An exception is a server error, anything else a wrong
    // response; a value that cannot be read at all a protocol error.
    r.reset(&at);
    let v = r.value().map_err(|_| malformed(got))?;
    Ok(Err(explain(&v, method)))
}

/// A value that is not what `method` returns: a Throwable as a server
/// error (`exception <class>: <detailMessage>; caused by ...`), anything
/// else as a wrong response.
pub fn explain(v: &DValue, method: Method) -> CallError {
    if let DValue::Object(class, _) = v {
        if v.field("detailMessage").is_some() || v.field("stackTrace").is_some() {
            let mut text = String::from("exception ");
            let mut next = Some(v);
            let mut depth = 0;
            while let Some(obj @ DValue::Object(class, _)) = next {
                if depth > 0 {
                    text.push_str("; caused by ");
                }
                text.push_str(class);
                match obj.field("detailMessage") {
                    Some(DValue::String(m)) => {
                        text.push_str(": ");
                        text.push_str(m);
                    }
                    _ => text.push_str(" (no message)"),
                }
                depth += 1;
                // A Throwable without a cause has `cause = this`: a Ref.
                next = obj.field("cause").filter(|_| depth < 8);
            }
            return CallError::Server(text);
        }
        return CallError::WrongResponse(format!(
            "`{}` returned an object of class {class}",
            method.name()
        ));
    }
    let mut shown = format!("{v:?}");
    shown.truncate(200);
    CallError::WrongResponse(format!("`{}` returned {shown}", method.name()))
}

/// An order, fields matched by name; `Ok(None)` for an object of another
/// class (the reader is then inside it: the caller rewinds).
fn read_order(r: &mut Reader<'_>) -> Result<Option<contract::Order>, DraftError> {
    let def = r.begin_known_object(&ORDER_DEF)?;
    if def.name != ORDER_CLASS {
        return Ok(None);
    }
    let mut order = contract::Order::default();
    for field in &def.fields {
        match field.as_str() {
            "orderId" => order.order_id = r.long()?,
            "phone" => read_field_string(r, &mut order.phone)?,
            "name" => read_field_string(r, &mut order.name)?,
            "orderNum" => read_field_string(r, &mut order.order_num)?,
            "orderDate" => order.order_date = r.int()?,
            "ticketType" => order.ticket_type = r.int()?,
            "amount" => order.amount = r.double()?,
            "orderStatus" => order.order_status = r.int()?,
            _ => r.skip()?,
        }
    }
    Ok(Some(order))
}

fn read_field_string(r: &mut Reader<'_>, out: &mut String) -> Result<(), DraftError> {
    r.string_into(out).map(drop)
}

/// A list of orders (an `ArrayList`: untyped `V n <len>`, or typed).
fn read_orders(r: &mut Reader<'_>) -> Result<Vec<contract::Order>, DraftError> {
    let list = r.begin_list()?;
    // No more than the input could hold (an order takes more than 8 bytes).
    let mut orders = Vec::with_capacity(list.len.unwrap_or(0).min(r.remaining() / 8));
    while r.list_next(&list, orders.len())? {
        let at = r.position();
        match read_order(r)? {
            Some(o) => orders.push(o),
            None => {
                return Err(DraftError {
                    offset: at,
                    what: "a list item that is not an rpclab.contract.Order".into(),
                })
            }
        }
    }
    Ok(orders)
}

/// The error text of a response with a status other than SUCCESS: its
/// RpcServerException's message, if it carries one.
fn exception_text(p: &Parts<'_>) -> String {
    if p.content.is_empty() {
        return "(no content)".into();
    }
    match Reader::new(p.content).value() {
        Ok(v) => match explain(&v, Method::Empty) {
            CallError::Server(m) => m,
            _ => format!("{v:?}").chars().take(200).collect(),
        },
        Err(_) => format!(
            "{} ({} undecodable bytes)",
            String::from_utf8_lossy(p.class),
            p.content.len()
        ),
    }
}

/// A response status other than SUCCESS as an error: a frame the other
/// side could not (de)serialize is a protocol error, everything else the
/// server reporting its own failure.
pub fn status_error(status: u16, message: &str) -> CallError {
    match status_name(status) {
        Some(
            name @ ("CODEC_EXCEPTION" | "SERVER_SERIAL_EXCEPTION" | "SERVER_DESERIAL_EXCEPTION"),
        ) => CallError::Protocol(format!("bolt status {name} (0x{status:04x}): {message}")),
        Some(name) => CallError::Server(format!("bolt status {name} (0x{status:04x}): {message}")),
        None => CallError::Protocol(format!(
            "unknown bolt response status 0x{status:04x}: {message}"
        )),
    }
}

#[cfg(test)]
mod tests {
    //! Golden vectors: `golden/vectors/<release>/*.bin`, recorded on the
    //! wire between a real SOFA-RPC consumer and provider (5.13.2 and 5.5.9)
    //! by `golden/regenerate.sh`.

    use super::*;
    use crate::testing::decoding;
    use crate::testing::flip;
    use proptest::prelude::*;
    use rpclab_model::contract::{ascii_text, Operation, Order, StringSize};

    macro_rules! vector {
        ($name:literal) => {
            include_bytes!(concat!("golden/vectors/5.13/", $name)).as_slice()
        };
    }

    /// (operation, Java's request, Java's response)
    const OPS: [(Operation, &[u8], &[u8]); 5] = [
        (
            Operation::OrderEcho,
            vector!("order-echo.request.bin"),
            vector!("order-echo.response.bin"),
        ),
        (
            Operation::OrdersEcho,
            vector!("orders-echo.request.bin"),
            vector!("orders-echo.response.bin"),
        ),
        (
            Operation::StringEcho(StringSize::K1),
            vector!("string-1k.request.bin"),
            vector!("string-1k.response.bin"),
        ),
        (
            Operation::Hello,
            vector!("hello.request.bin"),
            vector!("hello.response.bin"),
        ),
        (
            Operation::Empty,
            vector!("empty.request.bin"),
            vector!("empty.response.bin"),
        ),
    ];

    const METHODS: [Method; Method::COUNT] = Method::ALL;

    fn whole(bytes: &[u8]) -> Header {
        let (h, total) = frame(bytes).unwrap().expect("a whole frame");
        assert_eq!(total, bytes.len());
        h
    }

    fn decode(bytes: &[u8], method: Method) -> Result<Value, CallError> {
        decode_response(&whole(bytes), bytes, method)
    }

    #[test]
    fn the_payloads_are_the_contracts() {
        // The generator ports Order::sample and ascii_text to Java.
        assert_eq!(
            Operation::OrderEcho.call().argument,
            Value::Order(Order::sample(1))
        );
        assert_eq!(
            Operation::StringEcho(StringSize::K1).call().argument,
            Value::Str(ascii_text(1024))
        );
    }

    #[test]
    fn decodes_every_java_response() {
        for (op, _, response) in OPS {
            let call = op.call();
            let h = whole(response);
            assert_eq!(
                (h.kind, h.cmd, h.status, h.codec),
                (0, CMD_RESPONSE, SUCCESS, HESSIAN2)
            );
            let method = Method::of(&call).unwrap();
            let value = decode(response, method).unwrap_or_else(|e| panic!("{op}: {e}"));
            assert!(value == call.expected, "{op}: {value:?}");
        }
    }

    /// Java's hello and 1 KiB string replies are found to be the expected
    /// strings where they lie; a wrong string, an exception, another
    /// method's reply are not (they are decoded).
    #[test]
    fn javas_string_replies_are_found_in_place() {
        let hello = vector!("hello.response.bin");
        let k1 = vector!("string-1k.response.bin");
        let expected = |op: Operation| op.call().expected;
        let yes = |frame: &[u8], m, op| is_expected(&whole(frame), frame, m, &expected(op));
        assert!(yes(hello, Method::Hello, Operation::Hello));
        let k1_op = Operation::StringEcho(StringSize::K1);
        assert!(yes(k1, Method::EchoString, k1_op));
        assert!(!yes(k1, Method::Hello, Operation::Hello));
        assert!(!yes(hello, Method::EchoString, k1_op));
        assert!(!yes(hello, Method::Empty, Operation::Hello));
        assert!(!yes(
            vector!("hello-throws.response.bin"),
            Method::Hello,
            Operation::Hello
        ));
        assert!(!yes(
            vector!("empty.response.bin"),
            Method::Empty,
            Operation::Empty
        ));
        let mut status = hello.to_vec();
        status[10..12].copy_from_slice(&SERVER_EXCEPTION.to_be_bytes());
        assert!(!yes(&status, Method::Hello, Operation::Hello));
        assert!(!is_expected(
            &whole(hello),
            &hello[..hello.len() - 1],
            Method::Hello,
            &expected(Operation::Hello)
        ));
    }

    /// Java writes the known definitions byte for byte as they are
    /// recognised (SOFA-RPC 5.13 and 5.5), so that no response reads them.
    #[test]
    fn javas_definitions_are_the_known_ones() {
        let contains = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
        let mut orders = 0;
        for (op, _, response) in OPS.iter().chain(&[
            (
                Operation::Hello,
                &[][..],
                include_bytes!("golden/vectors/5.5/hello.response.bin").as_slice(),
            ),
            (
                Operation::OrderEcho,
                &[][..],
                include_bytes!("golden/vectors/5.5/order-echo.response.bin").as_slice(),
            ),
        ]) {
            let content = parts(&whole(response), response).content;
            assert!(content.starts_with(RESPONSE_DEF.wire()), "{op}");
            if matches!(op, Operation::OrderEcho | Operation::OrdersEcho) {
                assert!(contains(content, ORDER_DEF.wire()), "{op}");
                orders += 1;
            }
        }
        assert_eq!(orders, 3);
    }

    #[test]
    fn encodes_every_request_as_java_does() {
        for (op, request, _) in OPS {
            let call = op.call();
            let java = whole(request);
            assert_eq!(
                (java.kind, java.cmd, java.codec),
                (TYPE_REQUEST, CMD_REQUEST, HESSIAN2)
            );
            let timeout = i32::from_be_bytes(request[10..14].try_into().unwrap());
            let mut ours = Vec::with_capacity(request_capacity(&call.argument));
            encode_request(
                &mut ours,
                java.id,
                timeout,
                Method::of(&call).unwrap(),
                &call.argument,
            )
            .unwrap();
            assert!(ours.len() <= request_capacity(&call.argument), "{op}");
            assert_eq!(whole(&ours), java, "{op}: header");
            let (a, b) = (parts(&java, request), parts(&java, &ours));
            assert_eq!(a.class, b.class, "{op}: class");
            assert_eq!(
                decode_header_map(a.header).unwrap(),
                decode_header_map(b.header).unwrap(),
                "{op}: header map"
            );
            assert_eq!(hex(a.content), hex(b.content), "{op}: content");
            assert_eq!(ours, request, "{op}: the whole frame");
        }
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn reads_java_requests_generically() {
        for (op, request, _) in OPS {
            let call = op.call();
            let h = whole(request);
            let p = parts(&h, request);
            let mut r = Reader::new(p.content);
            let req = r.value().unwrap();
            let DValue::Object(class, _) = &req else {
                panic!("{op}: {req:?}")
            };
            assert_eq!(class, REQUEST_CLASS);
            let method = Method::of(&call).unwrap();
            assert_eq!(
                req.field("methodName"),
                Some(&DValue::String(method.name().into()))
            );
            assert_eq!(
                req.field("targetServiceUniqueName"),
                Some(&DValue::String(TARGET_SERVICE.into()))
            );
            let Some(DValue::List(Some(ty), sigs)) = req.field("methodArgSigs") else {
                panic!("{op}: {req:?}")
            };
            assert_eq!(ty, "[string");
            assert_eq!(sigs.len(), arg_sigs(method).len());
            for _ in sigs {
                r.skip().unwrap();
            }
            assert_eq!(r.remaining(), 0, "{op}");
            let map = decode_header_map(p.header).unwrap();
            for (k, v) in [
                (HEAD_SERVICE, TARGET_SERVICE),
                (HEAD_TARGET_SERVICE, TARGET_SERVICE),
                (HEAD_METHOD_NAME, method.name()),
                ("protocol", "bolt"),
                ("type", "sync"),
            ] {
                assert!(map.contains(&(k.to_owned(), v.to_owned())), "{op}: {k}");
            }
        }
    }

    #[test]
    fn heartbeats_are_bolts() {
        assert_eq!(
            heartbeat_request(7).as_slice(),
            vector!("heartbeat.request.bin")
        );
        assert_eq!(
            heartbeat_ack(7).as_slice(),
            vector!("heartbeat.response.bin")
        );
        let h = whole(vector!("heartbeat.request.bin"));
        assert!(h.is_request() && h.is_heartbeat());
        let h = whole(vector!("heartbeat.response.bin"));
        assert!(!h.is_request() && h.is_heartbeat() && h.status == SUCCESS);
    }

    #[test]
    fn the_services_exception_is_a_server_error() {
        match decode(vector!("hello-throws.response.bin"), Method::Hello) {
            Err(CallError::Server(m)) => {
                assert_eq!(
                    m,
                    "exception java.lang.IllegalStateException: no greeting for aa"
                )
            }
            other => panic!("{other:?}"),
        }
        // The same reply read as another method's.
        for m in METHODS {
            assert!(matches!(
                decode(vector!("hello-throws.response.bin"), m),
                Err(CallError::Server(_))
            ));
        }
        let h = whole(vector!("hello-throws.response.bin"));
        let map =
            decode_header_map(parts(&h, vector!("hello-throws.response.bin")).header).unwrap();
        assert_eq!(map, [(HEAD_RESPONSE_ERROR.to_owned(), "true".to_owned())]);
    }

    #[test]
    fn a_framework_error_is_a_server_error() {
        match decode(vector!("hello-no-such-service.response.bin"), Method::Hello) {
            Err(CallError::Server(m)) => assert_eq!(
                m,
                "SOFA-RPC error: RPC-020100010: RPC cannot find service: \
                 [rpclab.contract.BenchService:1.0:missing] "
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bolt_statuses_are_errors() {
        match decode(vector!("server-exception.response.bin"), Method::Hello) {
            Err(CallError::Server(m)) => assert_eq!(
                m,
                "bolt status SERVER_EXCEPTION (0x0002): exception \
                 com.alipay.remoting.rpc.exception.RpcServerException: [Server]OriginErrorMsg: \
                 java.lang.IllegalArgumentException: cannot read the request. \
                 AdditionalErrorMsg: rpclab golden"
            ),
            other => panic!("{other:?}"),
        }
        match decode(vector!("threadpool-busy.response.bin"), Method::Empty) {
            Err(CallError::Server(m)) => {
                assert_eq!(
                    m,
                    "bolt status SERVER_THREADPOOL_BUSY (0x0004): (no content)"
                )
            }
            other => panic!("{other:?}"),
        }
        for status in 1..=0x12u16 {
            let e = status_error(status, "x");
            match status_name(status) {
                None => assert!(matches!(e, CallError::Protocol(m) if m.contains("unknown"))),
                Some(n) if n.contains("SERIAL") || n == "CODEC_EXCEPTION" => {
                    assert!(matches!(e, CallError::Protocol(_)), "{n}")
                }
                Some(n) => assert!(matches!(e, CallError::Server(m) if m.contains(n)), "{n}"),
            }
        }
    }

    #[test]
    fn wrong_values_are_wrong_responses() {
        // Java's hello reply read as echoOrder / echoOrders / empty.
        let hello = vector!("hello.response.bin");
        for m in [Method::EchoOrder, Method::EchoOrders, Method::Empty] {
            assert!(
                matches!(decode(hello, m), Err(CallError::WrongResponse(_))),
                "{m:?}: {:?}",
                decode(hello, m)
            );
        }
        // A void reply read as a String method: null.
        assert!(matches!(
            decode(vector!("empty.response.bin"), Method::Hello),
            Err(CallError::WrongResponse(m)) if m.contains("null")
        ));
        // Java's single order read as a list, and the list as an order.
        assert!(matches!(
            decode(vector!("order-echo.response.bin"), Method::EchoOrders),
            Err(CallError::WrongResponse(_))
        ));
        assert!(matches!(
            decode(vector!("orders-echo.response.bin"), Method::EchoOrder),
            Err(CallError::WrongResponse(_))
        ));
    }

    #[test]
    fn malformed_headers_are_errors() {
        let good = vector!("hello.response.bin");
        for n in 0..RESPONSE_HEADER_LEN {
            assert_eq!(frame(&good[..n]).unwrap(), None, "{n}");
        }
        assert_eq!(frame(&good[..good.len() - 1]).unwrap(), None);
        let mut bad = good.to_vec();
        bad[0] = 2;
        assert!(matches!(frame(&bad), Err(CallError::Protocol(m)) if m.contains("protocol code")));
        let mut bad = good.to_vec();
        bad[1] = 9;
        assert!(matches!(frame(&bad), Err(CallError::Protocol(_))));
        let mut bad = good.to_vec();
        bad[3] = 7;
        assert!(matches!(frame(&bad), Err(CallError::Protocol(_))));
        for len in [u32::MAX, 0x8000_0000, MAX_BODY as u32 + 1] {
            let mut huge = good.to_vec();
            huge[16..20].copy_from_slice(&len.to_be_bytes());
            assert!(matches!(frame(&huge), Err(CallError::Protocol(_))), "{len}");
        }
        let mut neg = good.to_vec();
        neg[12..14].copy_from_slice(&0x8000u16.to_be_bytes());
        assert!(matches!(frame(&neg), Err(CallError::Protocol(_))));
        // Another codec, another class.
        let mut other = good.to_vec();
        other[9] = 2;
        assert!(matches!(
            decode(&other, Method::Hello),
            Err(CallError::Protocol(_))
        ));
        let mut other = good.to_vec();
        other[20] = b'x';
        assert!(matches!(
            decode(&other, Method::Hello),
            Err(CallError::Protocol(_))
        ));
        // Cut content.
        let h = whole(good);
        let mut cut = good[..good.len() - 3].to_vec();
        cut[16..20].copy_from_slice(&((h.content_len - 3) as u32).to_be_bytes());
        assert!(matches!(
            decode(&cut, Method::Hello),
            Err(CallError::Protocol(_))
        ));
    }

    macro_rules! vector_55 {
        ($name:literal) => {
            include_bytes!(concat!("golden/vectors/5.5/", $name)).as_slice()
        };
    }

    /// The seed era's release (sofa-rpc-all 5.5.9, bolt 1.4.6, sofa-hessian
    /// 3.3.6): its replies decode the same; its consumer's requests differ
    /// slightly (a null `sofa_head_target_app` in the header, no `type`)
    /// and still read back.
    #[test]
    fn decodes_the_seed_era_release() {
        let ops: [(Operation, &[u8], &[u8]); 5] = [
            (
                Operation::OrderEcho,
                vector_55!("order-echo.request.bin"),
                vector_55!("order-echo.response.bin"),
            ),
            (
                Operation::OrdersEcho,
                vector_55!("orders-echo.request.bin"),
                vector_55!("orders-echo.response.bin"),
            ),
            (
                Operation::StringEcho(StringSize::K1),
                vector_55!("string-1k.request.bin"),
                vector_55!("string-1k.response.bin"),
            ),
            (
                Operation::Hello,
                vector_55!("hello.request.bin"),
                vector_55!("hello.response.bin"),
            ),
            (
                Operation::Empty,
                vector_55!("empty.request.bin"),
                vector_55!("empty.response.bin"),
            ),
        ];
        for (op, request, response) in ops {
            let call = op.call();
            let method = Method::of(&call).unwrap();
            assert!(decode(response, method).unwrap() == call.expected, "{op}");
            let h = whole(request);
            let p = parts(&h, request);
            let map = decode_header_map(p.header).unwrap();
            assert!(
                map.contains(&(HEAD_METHOD_NAME.into(), method.name().into())),
                "{op}"
            );
            let mut r = Reader::new(p.content);
            let req = r.value().unwrap();
            assert_eq!(
                req.field("methodName"),
                Some(&DValue::String(method.name().into()))
            );
            while r.remaining() > 0 {
                r.skip().unwrap();
            }
        }
        assert_eq!(
            heartbeat_request(7).as_slice(),
            vector_55!("heartbeat.request.bin")
        );
        assert_eq!(
            heartbeat_ack(7).as_slice(),
            vector_55!("heartbeat.response.bin")
        );
        assert!(matches!(
            decode(vector_55!("hello-throws.response.bin"), Method::Hello),
            Err(CallError::Server(m)) if m == "exception java.lang.IllegalStateException: no greeting for aa"
        ));
        assert!(matches!(
            decode(vector_55!("hello-no-such-service.response.bin"), Method::Hello),
            Err(CallError::Server(m)) if m.starts_with("SOFA-RPC error: ") && m.contains("BenchService:1.0:missing")
        ));
        assert!(matches!(
            decode(vector_55!("server-exception.response.bin"), Method::Hello),
            Err(CallError::Server(m)) if m.starts_with("bolt status SERVER_EXCEPTION (0x0002): exception com.alipay.remoting.rpc.exception.RpcServerException") && m.contains("cannot read the request")
        ));
        assert!(matches!(
            decode(vector_55!("threadpool-busy.response.bin"), Method::Hello),
            Err(CallError::Server(m)) if m.contains("SERVER_THREADPOOL_BUSY")
        ));
    }

    /// A SofaResponse frame around `app` (written by `app`), as Java would.
    fn response(id: u32, app: impl FnOnce(&mut Writer<'_>)) -> Vec<u8> {
        let mut content = Vec::new();
        let mut w = Writer::new(&mut content);
        w.object(
            RESPONSE_CLASS,
            &["isError", "errorMsg", "appResponse", "responseProps"],
        );
        w.bool(false);
        w.null();
        app(&mut w);
        w.null();
        let mut out = vec![PROTOCOL_V1, TYPE_RESPONSE, 0, 2, VERSION2];
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&[HESSIAN2, 0, 0]);
        out.extend_from_slice(&(RESPONSE_CLASS.len() as u16).to_be_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&(content.len() as u32).to_be_bytes());
        out.extend_from_slice(RESPONSE_CLASS.as_bytes());
        out.extend_from_slice(&content);
        out
    }

    // 64 cases: each writes and reads up to 120 orders three ways, which
    // made 256 cases half a minute in a debug build.
    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Orders written as a request's argument come back from a
        /// response built the way Java builds it.
        #[test]
        fn orders_round_trip(orders in proptest::collection::vec(decoding::order(), 0..120)) {
            let frame = response(3, |w| {
                w.list(orders.len(), None);
                for o in &orders { write_order(w, o); }
                w.end();
            });
            prop_assert_eq!(decode(&frame, Method::EchoOrders).unwrap(), Value::Orders(orders.clone()));
            if let Some(o) = orders.first() {
                let frame = response(3, |w| write_order(w, o));
                prop_assert_eq!(decode(&frame, Method::EchoOrder).unwrap(), Value::Order(o.clone()));
            }
            // And the request carrying them reads back generically.
            let mut req = Vec::new();
            encode_request(&mut req, 1, 3000, Method::EchoOrders, &Value::Orders(orders.clone())).unwrap();
            let h = whole(&req);
            let mut r = Reader::new(parts(&h, &req).content);
            r.skip().unwrap();
            let DValue::List(None, items) = r.value().unwrap() else { panic!() };
            prop_assert_eq!(items.len(), orders.len());
            prop_assert_eq!(r.remaining(), 0);
        }

        #[test]
        fn strings_round_trip(s in ".{0,2000}") {
            let frame = response(9, |w| w.string(&s));
            prop_assert_eq!(decode(&frame, Method::EchoString).unwrap(), Value::Str(s.clone()));
            // Found where it lies when it is one ASCII chunk, never if not.
            let expected = Value::Str(s.clone());
            prop_assert_eq!(is_expected(&whole(&frame), &frame, Method::EchoString, &expected), s.is_ascii());
            let other = Value::Str(format!("{s}x"));
            prop_assert!(!is_expected(&whole(&frame), &frame, Method::EchoString, &other));
        }

        /// Decoding arbitrary bytes as a response never panics.
        #[test]
        fn decoding_arbitrary_bytes_never_panics(
            bytes in decoding::arbitrary_bytes(),
        ) {
            if let Ok(Some((h, total))) = frame(&bytes) {
                for m in METHODS { let _ = decode_response(&h, &bytes[..total], m); }
            }
            // ... and as content behind a valid header.
            let mut f = response(1, |w| w.null());
            let at = f.len() - 5;
            f.truncate(at);
            f.extend_from_slice(&bytes);
            let len = (f.len() - RESPONSE_HEADER_LEN - RESPONSE_CLASS.len()) as u32;
            f[16..20].copy_from_slice(&len.to_be_bytes());
            for m in METHODS { let _ = decode(&f, m); }
        }

        /// Mutating Java's replies never panics either.
        #[test]
        fn decoding_mutated_replies_never_panics(
            op in 0usize..OPS.len(),
            flips in decoding::flips(),
        ) {
            let mut reply = OPS[op].2.to_vec();
            flip(&mut reply, 0, &flips);
            if let Ok(Some((h, total))) = frame(&reply) {
                for m in METHODS {
                    let decoded = decode_response(&h, &reply[..total], m);
                    // A reply found to be the expected value in place
                    // decodes to it.
                    let expected = OPS[op].0.call().expected;
                    if is_expected(&h, &reply[..total], m, &expected) {
                        prop_assert!(matches!(&decoded, Ok(v) if *v == expected), "{:?}", decoded);
                    }
                }
            }
        }
    }
}
