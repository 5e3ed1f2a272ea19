//! The dubbo2 wire format: the 16-byte exchange header, request bodies and
//! response bodies in Hessian 2.0. Pure functions over byte slices, no I/O.
//!
//! ```text
//! 0      2      3       4                12              16
//! | 0xdabb | flag | status | request id (8) | body length (4) | body ...
//! flag: 0x80 request, 0x40 two-way, 0x20 event, low 5 bits serialization id
//! ```
//!
//! A request body is one Hessian stream (one `Hessian2Output` in Java, so
//! class definitions are shared across its values): dubbo version, service
//! path, service version, method name, parameter descriptor, the arguments,
//! the attachments map. A response body with status OK is a response type
//! (an int), then the value or the exception, then the attachments for the
//! `*_WITH_ATTACHMENTS` types; with any other status it is the server's
//! error message (a string).

use crate::protocol::CallError;
use hessian2::{DecodeError, Decoder, Encoder, Value as HValue};
use rpclab_model::contract::{self, Call, Operation, Value};

pub const MAGIC: [u8; 2] = [0xda, 0xbb];
pub const HEADER_LEN: usize = 16;
pub const FLAG_REQUEST: u8 = 0x80;
pub const FLAG_TWOWAY: u8 = 0x40;
pub const FLAG_EVENT: u8 = 0x20;
pub const SERIALIZATION_MASK: u8 = 0x1f;
/// Dubbo's serialization id of hessian2.
pub const HESSIAN2: u8 = 2;

/// Largest body accepted (either way). The provider's own limit is 16 MiB
/// (`payload` in the registered URL); the contract's largest body is a
/// 1 MiB string. A larger length is a corrupt or hostile frame, refused
/// before anything is allocated for it.
pub const MAX_BODY: usize = 64 * 1024 * 1024;

/// The `dubbo` protocol version both providers speak (and send back in
/// their registered URL as `dubbo=2.0.2`). From 2.0.2 on, providers answer
/// with the `*_WITH_ATTACHMENTS` response types.
pub const DUBBO_VERSION: &str = "2.0.2";
/// The service path: the interface's fully qualified name.
pub const SERVICE: &str = "rpclab.contract.BenchService";
/// The service version the providers export: none, which Dubbo consumers
/// send as `0.0.0` (and providers treat as none when they build the
/// service key).
pub const SERVICE_VERSION: &str = "0.0.0";
/// The Java class of the contract's POJO.
pub const ORDER_CLASS: &str = "rpclab.contract.Order";
/// The POJO's fields, in declaration order (Java matches them by name).
pub const ORDER_FIELDS: [&str; 8] = [
    "orderId",
    "phone",
    "name",
    "orderNum",
    "orderDate",
    "ticketType",
    "amount",
    "orderStatus",
];

// Response statuses (`org.apache.dubbo.remoting.exchange.Response`).
pub const OK: u8 = 20;
pub const CLIENT_TIMEOUT: u8 = 30;
pub const SERVER_TIMEOUT: u8 = 31;
pub const BAD_REQUEST: u8 = 40;
pub const BAD_RESPONSE: u8 = 50;
pub const SERVICE_NOT_FOUND: u8 = 60;
pub const SERVICE_ERROR: u8 = 70;
pub const SERVER_ERROR: u8 = 80;
pub const CLIENT_ERROR: u8 = 90;
pub const SERVER_THREADPOOL_EXHAUSTED_ERROR: u8 = 100;

// Response types (`DubboCodec`), the first value of an OK response body.
pub const RESPONSE_WITH_EXCEPTION: i32 = 0;
pub const RESPONSE_VALUE: i32 = 1;
pub const RESPONSE_NULL_VALUE: i32 = 2;
pub const RESPONSE_WITH_EXCEPTION_WITH_ATTACHMENTS: i32 = 3;
pub const RESPONSE_VALUE_WITH_ATTACHMENTS: i32 = 4;
pub const RESPONSE_NULL_VALUE_WITH_ATTACHMENTS: i32 = 5;

/// The 16-byte exchange header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub flag: u8,
    pub status: u8,
    pub id: u64,
    pub len: usize,
}

impl Header {
    pub fn is_request(&self) -> bool {
        self.flag & FLAG_REQUEST != 0
    }

    pub fn is_event(&self) -> bool {
        self.flag & FLAG_EVENT != 0
    }

    pub fn is_two_way(&self) -> bool {
        self.flag & FLAG_TWOWAY != 0
    }

    pub fn serialization(&self) -> u8 {
        self.flag & SERIALIZATION_MASK
    }

    /// The header's bytes. `len` must be at most [`MAX_BODY`].
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[..2].copy_from_slice(&MAGIC);
        out[2] = self.flag;
        out[3] = self.status;
        out[4..12].copy_from_slice(&self.id.to_be_bytes());
        out[12..16].copy_from_slice(&(self.len as u32).to_be_bytes());
        out
    }

    /// Reads a header from the first 16 bytes of `bytes`: fails on fewer
    /// bytes, a wrong magic number or a body length over [`MAX_BODY`]
    /// (a negative Java `int` included).
    pub fn decode(bytes: &[u8]) -> Result<Header, CallError> {
        let Some(h) = bytes.get(..HEADER_LEN) else {
            return Err(CallError::Protocol(format!(
                "short dubbo header: {} of {HEADER_LEN} bytes",
                bytes.len()
            )));
        };
        if h[..2] != MAGIC {
            return Err(CallError::Protocol(format!(
                "bad magic 0x{:02x}{:02x} (expected 0xdabb): not a dubbo stream, or out of step",
                h[0], h[1]
            )));
        }
        let len = u32::from_be_bytes(h[12..16].try_into().expect("4 bytes")) as usize;
        if len > MAX_BODY {
            return Err(CallError::Protocol(format!(
                "body length {} is outside 0..={MAX_BODY} (64 MiB)",
                len as u32 as i32
            )));
        }
        Ok(Header {
            flag: h[2],
            status: h[3],
            id: u64::from_be_bytes(h[4..12].try_into().expect("8 bytes")),
            len,
        })
    }
}

/// Where the next whole frame ends in `buf`: `Ok(None)` while more bytes
/// are needed, `Ok(Some((header, total)))` once `buf` holds `total` bytes
/// of header and body, an error for a malformed header.
pub fn frame(buf: &[u8]) -> Result<Option<(Header, usize)>, CallError> {
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let header = Header::decode(buf)?;
    let total = HEADER_LEN + header.len;
    Ok((buf.len() >= total).then_some((header, total)))
}

/// A heartbeat request (`id` is the connection's next request id): an
/// event, two-way, whose data is `null`.
pub fn heartbeat_request(id: u64) -> [u8; HEADER_LEN + 1] {
    event(FLAG_REQUEST | FLAG_TWOWAY | FLAG_EVENT | HESSIAN2, 0, id)
}

/// The answer to a server's heartbeat request `id`.
pub fn heartbeat_response(id: u64) -> [u8; HEADER_LEN + 1] {
    event(FLAG_EVENT | HESSIAN2, OK, id)
}

fn event(flag: u8, status: u8, id: u64) -> [u8; HEADER_LEN + 1] {
    let mut out = [0u8; HEADER_LEN + 1];
    let header = Header {
        flag,
        status,
        id,
        len: 1,
    };
    out[..HEADER_LEN].copy_from_slice(&header.encode());
    out[HEADER_LEN] = hessian2::tag::NULL;
    out
}

/// The methods of `rpclab.contract.BenchService`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    EchoOrder,
    EchoOrders,
    EchoString,
    Hello,
    Empty,
}

impl Method {
    /// The method a call invokes, if its argument fits it.
    pub fn of(call: &Call) -> Result<Method, CallError> {
        Ok(match (call.operation, &call.argument) {
            (Operation::OrderEcho, Value::Order(_)) => Method::EchoOrder,
            (Operation::OrdersEcho, Value::Orders(_)) => Method::EchoOrders,
            (Operation::StringEcho(_), Value::Str(_)) => Method::EchoString,
            (Operation::Hello, Value::Str(_)) => Method::Hello,
            (Operation::Empty, Value::Unit) => Method::Empty,
            (operation, argument) => {
                return Err(super::super::grpc::mismatched_argument(operation, argument))
            }
        })
    }

    /// The Java method name.
    pub fn name(self) -> &'static str {
        match self {
            Method::EchoOrder => "echoOrder",
            Method::EchoOrders => "echoOrders",
            Method::EchoString => "echoString",
            Method::Hello => "hello",
            Method::Empty => "empty",
        }
    }

    /// The JVM descriptors of the parameters, concatenated.
    pub fn descriptor(self) -> &'static str {
        match self {
            Method::EchoOrder => "Lrpclab/contract/Order;",
            Method::EchoOrders => "Ljava/util/List;",
            Method::EchoString | Method::Hello => "Ljava/lang/String;",
            Method::Empty => "",
        }
    }
}

/// A good first capacity for a request carrying `argument`, so that
/// encoding it does not reallocate.
pub fn request_capacity(argument: &Value) -> usize {
    const FIXED: usize = 256; // header, strings, attachments
    FIXED
        + match argument {
            Value::Order(_) => 256,
            Value::Orders(orders) => 160 + orders.len() * 64,
            // ASCII: one byte per char, plus 3 per 32 Ki-char chunk.
            Value::Str(s) => s.len() + s.len() / 8192 + 8,
            Value::Unit => 0,
        }
}

/// Encodes a two-way request `id` calling `method` with `argument` into
/// `out` (cleared first), header included.
pub fn encode_request(
    out: &mut Vec<u8>,
    id: u64,
    method: Method,
    argument: &Value,
) -> Result<(), CallError> {
    out.clear();
    out.extend_from_slice(&[0; HEADER_LEN]);
    let mut enc = Encoder::new(&mut *out);
    enc.write_string(DUBBO_VERSION);
    enc.write_string(SERVICE);
    enc.write_string(SERVICE_VERSION);
    enc.write_string(method.name());
    enc.write_string(method.descriptor());
    let encoded = match argument {
        Value::Order(order) => write_order(&mut enc, order),
        Value::Orders(orders) => write_orders(&mut enc, orders),
        Value::Str(s) => {
            enc.write_string(s);
            Ok(())
        }
        Value::Unit => Ok(()),
    };
    encoded
        .and_then(|()| write_attachments(&mut enc))
        .map_err(|e| CallError::Protocol(format!("encoding the request: {e}")))?;
    let len = out.len() - HEADER_LEN;
    if len > MAX_BODY {
        return Err(CallError::Protocol(format!(
            "request body of {len} bytes is over the {MAX_BODY}-byte limit"
        )));
    }
    let header = Header {
        flag: FLAG_REQUEST | FLAG_TWOWAY | HESSIAN2,
        status: 0,
        id,
        len,
    };
    out[..HEADER_LEN].copy_from_slice(&header.encode());
    Ok(())
}

/// What a Java consumer puts in the invocation's attachments: the path,
/// interface and version the provider finds its exporter by.
fn write_attachments(enc: &mut Encoder<&mut Vec<u8>>) -> Result<(), hessian2::EncodeError> {
    enc.begin_map(None)?;
    for (key, value) in [
        ("path", SERVICE),
        ("interface", SERVICE),
        ("version", SERVICE_VERSION),
    ] {
        enc.write_string(key);
        enc.write_string(value);
    }
    enc.end_map();
    Ok(())
}

/// An `rpclab.contract.Order`, straight from the borrowed contract value.
pub fn write_order(
    enc: &mut Encoder<&mut Vec<u8>>,
    order: &contract::Order,
) -> Result<(), hessian2::EncodeError> {
    enc.begin_object(ORDER_CLASS, &ORDER_FIELDS)?;
    enc.write_long(order.order_id);
    enc.write_string(&order.phone);
    enc.write_string(&order.name);
    enc.write_string(&order.order_num);
    enc.write_int(order.order_date);
    enc.write_int(order.ticket_type);
    enc.write_double(order.amount);
    enc.write_int(order.order_status);
    Ok(())
}

/// A `java.util.ArrayList` of orders: Java's own form, an untyped
/// fixed-length list.
fn write_orders(
    enc: &mut Encoder<&mut Vec<u8>>,
    orders: &[contract::Order],
) -> Result<(), hessian2::EncodeError> {
    enc.begin_list(orders.len(), None)?;
    for order in orders {
        write_order(enc, order)?;
    }
    Ok(())
}

// ---- responses ---------------------------------------------------------------

/// Decodes the response to a call of `method`: `header` and its `body`.
pub fn decode_response(header: &Header, body: &[u8], method: Method) -> Result<Value, CallError> {
    if header.serialization() != HESSIAN2 {
        return Err(CallError::Protocol(format!(
            "response serialized with id {}, the request used hessian2 ({HESSIAN2})",
            header.serialization()
        )));
    }
    if header.status != OK {
        return Err(status_error(header.status, &error_message(body)));
    }
    let mut dec = Decoder::new(body);
    let kind = dec.read_i32().map_err(malformed)?;
    let (value, attachments) = match kind {
        RESPONSE_VALUE => (read_value(&mut dec, method)?, false),
        RESPONSE_VALUE_WITH_ATTACHMENTS => (read_value(&mut dec, method)?, true),
        RESPONSE_NULL_VALUE => (null_value(method)?, false),
        RESPONSE_NULL_VALUE_WITH_ATTACHMENTS => (null_value(method)?, true),
        RESPONSE_WITH_EXCEPTION | RESPONSE_WITH_EXCEPTION_WITH_ATTACHMENTS => {
            return Err(read_exception(&mut dec))
        }
        other => {
            return Err(CallError::Protocol(format!(
                "unknown response type {other} (expected 0 to 5)"
            )))
        }
    };
    if attachments {
        // Not used, but read: a reply must be well-formed to its end.
        dec.skip_value().map_err(malformed)?;
    }
    Ok(value)
}

/// The message of a response with a status other than OK: a string, in
/// the response's serialization.
fn error_message(body: &[u8]) -> String {
    match Decoder::new(body).read_opt_string() {
        Ok(Some(message)) => message,
        Ok(None) => "(no message)".to_owned(),
        Err(_) => format!(
            "(undecodable message: {:?})",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        ),
    }
}

/// The name of a response status.
pub fn status_name(status: u8) -> Option<&'static str> {
    Some(match status {
        OK => "OK",
        CLIENT_TIMEOUT => "CLIENT_TIMEOUT",
        SERVER_TIMEOUT => "SERVER_TIMEOUT",
        BAD_REQUEST => "BAD_REQUEST",
        BAD_RESPONSE => "BAD_RESPONSE",
        SERVICE_NOT_FOUND => "SERVICE_NOT_FOUND",
        SERVICE_ERROR => "SERVICE_ERROR",
        SERVER_ERROR => "SERVER_ERROR",
        CLIENT_ERROR => "CLIENT_ERROR",
        SERVER_THREADPOOL_EXHAUSTED_ERROR => "SERVER_THREADPOOL_EXHAUSTED_ERROR",
        _ => return None,
    })
}

/// A response status other than OK as an error: a request or response the
/// other side could not (de)serialize is a protocol error, everything else
/// the server reporting its own failure.
pub fn status_error(status: u8, message: &str) -> CallError {
    match status_name(status) {
        Some(name @ ("BAD_REQUEST" | "BAD_RESPONSE")) => {
            CallError::Protocol(format!("{name} ({status}): {message}"))
        }
        Some(name) => CallError::Server(format!("{name} ({status}): {message}")),
        None => CallError::Protocol(format!("unknown response status {status}: {message}")),
    }
}

fn malformed(e: DecodeError) -> CallError {
    CallError::Protocol(format!("malformed response body: {e}"))
}

/// The value of a `void` method or a `null` return.
fn null_value(method: Method) -> Result<Value, CallError> {
    match method {
        Method::Empty => Ok(Value::Unit),
        other => Err(CallError::WrongResponse(format!(
            "`{}` returned null",
            other.name()
        ))),
    }
}

fn read_value(dec: &mut Decoder<'_>, method: Method) -> Result<Value, CallError> {
    match method {
        Method::Empty => {
            // A void method has no value; tolerate an explicit null.
            if dec.try_read_null().map_err(malformed)? {
                Ok(Value::Unit)
            } else {
                Err(CallError::WrongResponse(
                    "`empty` returned a value".to_owned(),
                ))
            }
        }
        Method::EchoString | Method::Hello => match dec.read_opt_string().map_err(malformed)? {
            Some(s) => Ok(Value::Str(s)),
            None => null_value(method),
        },
        Method::EchoOrder => {
            if dec.try_read_null().map_err(malformed)? {
                return null_value(method);
            }
            read_order(dec).map(Value::Order)
        }
        Method::EchoOrders => {
            if dec.try_read_null().map_err(malformed)? {
                return null_value(method);
            }
            read_orders(dec).map(Value::Orders)
        }
    }
}

/// A list of orders: `ArrayList` untyped (Dubbo 3's hessian-lite) or typed
/// `java.util.ArrayList` (com.alibaba hessian-lite), fixed or variable length.
fn read_orders(dec: &mut Decoder<'_>) -> Result<Vec<contract::Order>, CallError> {
    let header = dec.begin_list().map_err(malformed)?;
    // No more than the input could hold (an order takes more than 8 bytes).
    let hint = header.len.unwrap_or(0).min(dec.remaining().len() / 8);
    let mut orders = Vec::with_capacity(hint);
    while dec.has_next().map_err(malformed)? {
        orders.push(read_order(dec)?);
    }
    dec.end().map_err(malformed)?;
    Ok(orders)
}

/// An `rpclab.contract.Order`, fields matched by name (any order; unknown
/// fields skipped; a missing one keeps Java's default).
fn read_order(dec: &mut Decoder<'_>) -> Result<contract::Order, CallError> {
    let header = dec.begin_object().map_err(malformed)?;
    if header.class.name != ORDER_CLASS {
        return Err(CallError::WrongResponse(format!(
            "expected an object of class {ORDER_CLASS}, got {}",
            header.class.name
        )));
    }
    let mut order = contract::Order::default();
    for field in header.class.fields.iter() {
        let read = match field.as_str() {
            "orderId" => dec.read_i64().map(|v| order.order_id = v),
            "phone" => read_field_string(dec, &mut order.phone),
            "name" => read_field_string(dec, &mut order.name),
            "orderNum" => read_field_string(dec, &mut order.order_num),
            "orderDate" => dec.read_i32().map(|v| order.order_date = v),
            "ticketType" => dec.read_i32().map(|v| order.ticket_type = v),
            "amount" => dec.read_f64().map(|v| order.amount = v),
            "orderStatus" => dec.read_i32().map(|v| order.order_status = v),
            _ => dec.skip_value(),
        };
        read.map_err(malformed)?;
    }
    dec.end().map_err(malformed)?;
    Ok(order)
}

/// A `String` field; `null` reads as empty (verification then reports the
/// difference).
fn read_field_string(dec: &mut Decoder<'_>, out: &mut String) -> Result<(), DecodeError> {
    if dec.try_read_null()? {
        out.clear();
        Ok(())
    } else {
        dec.read_string_into(out)
    }
}

/// A thrown exception as a server error: `<class>: <detailMessage>`, with
/// the causes' (Dubbo often wraps the interesting one).
fn read_exception(dec: &mut Decoder<'_>) -> CallError {
    let value = match dec.read_value() {
        Ok(v) => v,
        Err(e) => {
            return CallError::Server(format!(
                "the server threw an exception this client cannot decode: {e}"
            ))
        }
    };
    let mut text = String::from("exception ");
    let mut next = Some(&value);
    let mut depth = 0;
    while let Some(HValue::Object(obj)) = next {
        if depth > 0 {
            text.push_str("; caused by ");
        }
        text.push_str(obj.class_name());
        match obj.get("detailMessage") {
            Some(HValue::String(m)) => {
                text.push_str(": ");
                text.push_str(m);
            }
            _ => text.push_str(" (no message)"),
        }
        depth += 1;
        // A Throwable without a cause has `cause = this`: a reference.
        next = obj.get("cause").filter(|_| depth < 8);
    }
    if depth == 0 {
        let mut shown = format!("{value:?}");
        shown.truncate(200);
        text.push_str(&shown);
    }
    CallError::Server(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hessian2::Object;
    use proptest::prelude::*;
    use rpclab_model::contract::StringSize;

    const METHODS: [Method; 5] = [
        Method::EchoOrder,
        Method::EchoOrders,
        Method::EchoString,
        Method::Hello,
        Method::Empty,
    ];

    fn request(call: &Call, id: u64) -> Vec<u8> {
        let mut out = vec![0xee; 5]; // junk, to check that encoding clears
        encode_request(&mut out, id, Method::of(call).unwrap(), &call.argument).unwrap();
        out
    }

    /// A provider's view of a request: what `DecodeableRpcInvocation` reads.
    struct Invocation {
        version: String,
        path: String,
        service_version: String,
        method: String,
        desc: String,
        args: Vec<HValue>,
        attachments: HValue,
    }

    fn decode_request(bytes: &[u8]) -> (Header, Invocation) {
        let (header, total) = frame(bytes).unwrap().unwrap();
        assert_eq!(total, bytes.len());
        let mut dec = Decoder::new(&bytes[HEADER_LEN..]);
        let version = dec.read_string().unwrap();
        let path = dec.read_string().unwrap();
        let service_version = dec.read_string().unwrap();
        let method = dec.read_string().unwrap();
        let desc = dec.read_string().unwrap();
        let args = if desc.is_empty() {
            vec![]
        } else {
            vec![dec.read_value().unwrap()]
        };
        let attachments = dec.read_value().unwrap();
        assert!(dec.is_empty());
        let inv = Invocation {
            version,
            path,
            service_version,
            method,
            desc,
            args,
            attachments,
        };
        (header, inv)
    }

    /// A provider's response carrying `value` (`None`: a null value).
    fn response(id: u64, kind: i32, value: Option<&HValue>, typed_lists: bool) -> Vec<u8> {
        let mut body = Vec::new();
        let mut enc = Encoder::new(&mut body);
        enc.write_int(kind);
        if let Some(v) = value {
            let v = if typed_lists { typed(v) } else { v.clone() };
            enc.write_value(&v).unwrap();
        }
        if kind >= RESPONSE_WITH_EXCEPTION_WITH_ATTACHMENTS {
            enc.write_value(&HValue::Map(hessian2::Map {
                ty: None,
                entries: vec![(
                    HValue::String("dubbo".into()),
                    HValue::String("2.0.2".into()),
                )],
            }))
            .unwrap();
        }
        let mut out = Header {
            flag: HESSIAN2,
            status: OK,
            id,
            len: body.len(),
        }
        .encode()
        .to_vec();
        out.extend_from_slice(&body);
        out
    }

    /// com.alibaba hessian-lite's way: every list typed `java.util.ArrayList`.
    fn typed(v: &HValue) -> HValue {
        match v {
            HValue::List(l) => HValue::List(hessian2::List {
                ty: Some("java.util.ArrayList".into()),
                items: l.items.clone(),
            }),
            other => other.clone(),
        }
    }

    fn decode(bytes: &[u8], method: Method) -> Result<Value, CallError> {
        let (header, total) = frame(bytes)?.expect("a whole frame");
        decode_response(&header, &bytes[HEADER_LEN..total], method)
    }

    #[test]
    fn header_round_trips() {
        let h = Header {
            flag: FLAG_REQUEST | FLAG_TWOWAY | HESSIAN2,
            status: 0,
            id: 0x0102_0304_0506_0708,
            len: 1234,
        };
        let bytes = h.encode();
        assert_eq!(
            bytes,
            [0xda, 0xbb, 0xc2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0x04, 0xd2]
        );
        assert_eq!(Header::decode(&bytes).unwrap(), h);
        assert!(h.is_request() && h.is_two_way() && !h.is_event());
        assert_eq!(h.serialization(), HESSIAN2);
    }

    #[test]
    fn malformed_headers_are_errors() {
        let good = Header {
            flag: HESSIAN2,
            status: OK,
            id: 1,
            len: 0,
        }
        .encode();
        // Short.
        for n in 0..HEADER_LEN {
            assert!(matches!(
                Header::decode(&good[..n]),
                Err(CallError::Protocol(_))
            ));
            assert_eq!(frame(&good[..n]).unwrap(), None);
        }
        // Bad magic.
        let mut bad = good;
        bad[1] = 0xbc;
        assert!(matches!(frame(&bad), Err(CallError::Protocol(m)) if m.contains("magic")));
        // Huge and negative lengths.
        for len in [MAX_BODY as u32 + 1, u32::MAX, 0x8000_0000] {
            let mut huge = good;
            huge[12..].copy_from_slice(&len.to_be_bytes());
            assert!(matches!(frame(&huge), Err(CallError::Protocol(_))), "{len}");
        }
        // The limit itself is fine, and needs the whole body.
        let mut max = good;
        max[12..].copy_from_slice(&(MAX_BODY as u32).to_be_bytes());
        assert_eq!(frame(&max).unwrap(), None);
    }

    #[test]
    fn heartbeats() {
        let req = heartbeat_request(7);
        let (h, total) = frame(&req).unwrap().unwrap();
        assert_eq!(total, 17);
        assert!(h.is_request() && h.is_two_way() && h.is_event());
        assert_eq!((h.id, h.len, h.serialization()), (7, 1, HESSIAN2));
        assert_eq!(req[16], b'N');
        let res = heartbeat_response(7);
        let (h, _) = frame(&res).unwrap().unwrap();
        assert!(!h.is_request() && h.is_event());
        assert_eq!((h.id, h.status), (7, OK));
    }

    #[test]
    fn requests_carry_what_a_provider_reads() {
        for op in Operation::ALL {
            let call = op.call();
            let bytes = request(&call, 99);
            assert!(bytes.len() <= request_capacity(&call.argument), "{op}");
            let (header, inv) = decode_request(&bytes);
            assert_eq!(header.flag, 0xc2, "{op}");
            assert_eq!((header.id, header.status), (99, 0));
            assert_eq!(inv.version, "2.0.2");
            assert_eq!(inv.path, SERVICE);
            assert_eq!(inv.service_version, "0.0.0");
            let method = Method::of(&call).unwrap();
            assert_eq!(inv.method, method.name());
            assert_eq!(inv.desc, method.descriptor());
            let HValue::Map(att) = &inv.attachments else {
                panic!("{op}: attachments {:?}", inv.attachments)
            };
            assert!(att.ty.is_none());
            let get = |k: &str| {
                att.entries
                    .iter()
                    .find(|(key, _)| key == &HValue::String(k.into()))
                    .map(|(_, v)| v.clone())
            };
            assert_eq!(get("path"), Some(HValue::String(SERVICE.into())));
            assert_eq!(get("interface"), Some(HValue::String(SERVICE.into())));
            assert_eq!(get("version"), Some(HValue::String("0.0.0".into())));
            match (&call.argument, inv.args.as_slice()) {
                (Value::Unit, []) => {}
                (Value::Str(s), [HValue::String(got)]) => assert_eq!(got, s),
                (Value::Order(o), [HValue::Object(obj)]) => check_order(o, obj),
                (Value::Orders(os), [HValue::List(list)]) => {
                    assert!(list.ty.is_none(), "an ArrayList goes untyped");
                    assert_eq!(list.items.len(), os.len());
                    for (o, item) in os.iter().zip(&list.items) {
                        let HValue::Object(obj) = item else { panic!() };
                        check_order(o, obj);
                    }
                }
                (arg, got) => panic!("{op}: sent {arg:?}, read {got:?}"),
            }
        }
    }

    fn check_order(o: &contract::Order, obj: &Object) {
        assert_eq!(obj.class_name(), ORDER_CLASS);
        assert_eq!(obj.class.fields, ORDER_FIELDS);
        assert_eq!(obj.get("orderId"), Some(&HValue::Long(o.order_id)));
        assert_eq!(obj.get("phone"), Some(&HValue::String(o.phone.clone())));
        assert_eq!(obj.get("name"), Some(&HValue::String(o.name.clone())));
        assert_eq!(
            obj.get("orderNum"),
            Some(&HValue::String(o.order_num.clone()))
        );
        assert_eq!(obj.get("orderDate"), Some(&HValue::Int(o.order_date)));
        assert_eq!(obj.get("ticketType"), Some(&HValue::Int(o.ticket_type)));
        assert_eq!(obj.get("amount"), Some(&HValue::Double(o.amount)));
        assert_eq!(obj.get("orderStatus"), Some(&HValue::Int(o.order_status)));
    }

    /// Echoes a request's argument back, as a provider would.
    fn echo_reply(request: &[u8], kind: i32, typed_lists: bool) -> Vec<u8> {
        let (header, inv) = decode_request(request);
        let value = match inv.method.as_str() {
            "hello" => {
                let HValue::String(name) = &inv.args[0] else {
                    panic!()
                };
                Some(HValue::String(format!("hello {name}")))
            }
            "empty" => None,
            _ => Some(inv.args[0].clone()),
        };
        let kind = match (value.is_some(), kind) {
            (false, RESPONSE_VALUE) => RESPONSE_NULL_VALUE,
            (false, RESPONSE_VALUE_WITH_ATTACHMENTS) => RESPONSE_NULL_VALUE_WITH_ATTACHMENTS,
            _ => kind,
        };
        response(header.id, kind, value.as_ref(), typed_lists)
    }

    #[test]
    fn every_operation_round_trips() {
        for op in Operation::ALL {
            let call = op.call();
            let method = Method::of(&call).unwrap();
            for kind in [RESPONSE_VALUE, RESPONSE_VALUE_WITH_ATTACHMENTS] {
                for typed_lists in [false, true] {
                    let reply = echo_reply(&request(&call, 3), kind, typed_lists);
                    let value = decode(&reply, method).unwrap_or_else(|e| panic!("{op}: {e}"));
                    assert!(value == call.expected, "{op} {kind} {typed_lists}");
                }
            }
        }
    }

    #[test]
    fn orders_are_read_by_field_name_in_any_order() {
        let o = contract::Order::sample(5);
        // hessian-lite's reversed order, plus a field this client ignores.
        let obj = Object::new(
            ORDER_CLASS,
            [
                ("orderStatus", HValue::Int(o.order_status)),
                ("amount", HValue::Double(o.amount)),
                ("extra", HValue::list([HValue::Int(1)])),
                ("ticketType", HValue::Int(o.ticket_type)),
                ("orderDate", HValue::Int(o.order_date)),
                ("orderNum", HValue::String(o.order_num.clone())),
                ("name", HValue::String(o.name.clone())),
                ("phone", HValue::String(o.phone.clone())),
                ("orderId", HValue::Long(o.order_id)),
            ],
        );
        let reply = response(1, RESPONSE_VALUE, Some(&HValue::Object(obj)), false);
        assert_eq!(decode(&reply, Method::EchoOrder).unwrap(), Value::Order(o));
        // Another class is a wrong response.
        let other = Object::new("com.example.Order", [("orderId", HValue::Long(1))]);
        let reply = response(1, RESPONSE_VALUE, Some(&HValue::Object(other)), false);
        assert!(matches!(
            decode(&reply, Method::EchoOrder),
            Err(CallError::WrongResponse(_))
        ));
    }

    #[test]
    fn nulls_and_voids() {
        for kind in [RESPONSE_NULL_VALUE, RESPONSE_NULL_VALUE_WITH_ATTACHMENTS] {
            let reply = response(1, kind, None, false);
            assert_eq!(decode(&reply, Method::Empty).unwrap(), Value::Unit);
            for m in [Method::EchoOrder, Method::EchoOrders, Method::Hello] {
                assert!(matches!(
                    decode(&reply, m),
                    Err(CallError::WrongResponse(_))
                ));
            }
        }
        let reply = response(1, RESPONSE_VALUE, Some(&HValue::Null), false);
        assert_eq!(decode(&reply, Method::Empty).unwrap(), Value::Unit);
        assert!(matches!(
            decode(&reply, Method::EchoString),
            Err(CallError::WrongResponse(_))
        ));
        let reply = response(1, RESPONSE_VALUE, Some(&HValue::Int(3)), false);
        assert!(matches!(
            decode(&reply, Method::Empty),
            Err(CallError::WrongResponse(_))
        ));
    }

    fn throwable(class: &str, message: Option<&str>, cause: HValue) -> HValue {
        HValue::Object(Object::new(
            class,
            [
                (
                    "detailMessage",
                    message.map_or(HValue::Null, |m| HValue::String(m.into())),
                ),
                ("cause", cause),
                (
                    "stackTrace",
                    HValue::List(hessian2::List {
                        ty: Some("[java.lang.StackTraceElement".into()),
                        items: vec![],
                    }),
                ),
            ],
        ))
    }

    #[test]
    fn exceptions_are_server_errors_with_class_and_message() {
        // Without a cause (Java: cause = this, a reference to itself).
        let plain = throwable(
            "java.lang.IllegalStateException",
            Some("boom"),
            HValue::Ref(0),
        );
        let wrapped = throwable(
            "org.apache.dubbo.rpc.RpcException",
            None,
            throwable("java.io.IOException", Some("disk"), HValue::Ref(1)),
        );
        for kind in [
            RESPONSE_WITH_EXCEPTION,
            RESPONSE_WITH_EXCEPTION_WITH_ATTACHMENTS,
        ] {
            let reply = response(1, kind, Some(&plain), false);
            match decode(&reply, Method::Hello) {
                Err(CallError::Server(m)) => {
                    assert_eq!(m, "exception java.lang.IllegalStateException: boom")
                }
                other => panic!("{other:?}"),
            }
            let reply = response(1, kind, Some(&wrapped), false);
            match decode(&reply, Method::Hello) {
                Err(CallError::Server(m)) => assert_eq!(
                    m,
                    "exception org.apache.dubbo.rpc.RpcException (no message); \
                     caused by java.io.IOException: disk"
                ),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn every_status_is_mapped() {
        let cases: [(u8, bool); 9] = [
            (CLIENT_TIMEOUT, true),
            (SERVER_TIMEOUT, true),
            (BAD_REQUEST, false),
            (BAD_RESPONSE, false),
            (SERVICE_NOT_FOUND, true),
            (SERVICE_ERROR, true),
            (SERVER_ERROR, true),
            (CLIENT_ERROR, true),
            (SERVER_THREADPOOL_EXHAUSTED_ERROR, true),
        ];
        for (status, server) in cases {
            let body = hessian2::to_vec("it went wrong").unwrap();
            let mut reply = Header {
                flag: HESSIAN2,
                status,
                id: 1,
                len: body.len(),
            }
            .encode()
            .to_vec();
            reply.extend_from_slice(&body);
            let name = status_name(status).unwrap();
            let expected = format!("{name} ({status}): it went wrong");
            match decode(&reply, Method::Hello) {
                Err(CallError::Server(m)) if server => assert_eq!(m, expected),
                Err(CallError::Protocol(m)) if !server => assert_eq!(m, expected),
                other => panic!("{status}: {other:?}"),
            }
        }
        assert!(matches!(
            status_error(77, "x"),
            CallError::Protocol(m) if m == "unknown response status 77: x"
        ));
        // A message that is not a Hessian string still gives an error.
        let mut reply = Header {
            flag: HESSIAN2,
            status: SERVICE_ERROR,
            id: 1,
            len: 3,
        }
        .encode()
        .to_vec();
        reply.extend_from_slice(b"\xff\xfe\xfd");
        assert!(matches!(
            decode(&reply, Method::Hello),
            Err(CallError::Server(_))
        ));
    }

    #[test]
    fn other_serializations_and_response_types_are_refused() {
        let mut reply = response(1, RESPONSE_VALUE, Some(&HValue::String("x".into())), false);
        reply[2] = 8; // kryo
        assert!(matches!(
            decode(&reply, Method::Hello),
            Err(CallError::Protocol(_))
        ));
        let reply = response(1, 9, Some(&HValue::String("x".into())), false);
        assert!(matches!(
            decode(&reply, Method::Hello),
            Err(CallError::Protocol(_))
        ));
        // A truncated 1 MiB string.
        let call = Operation::StringEcho(StringSize::M1).call();
        let reply = echo_reply(&request(&call, 1), RESPONSE_VALUE, false);
        let (header, _) = frame(&reply).unwrap().unwrap();
        let cut = &reply[HEADER_LEN..reply.len() - 10];
        assert!(matches!(
            decode_response(&header, cut, Method::EchoString),
            Err(CallError::Protocol(_))
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Decoding arbitrary bytes as a response never panics.
        #[test]
        fn decoding_arbitrary_bytes_never_panics(
            bytes in proptest::collection::vec(any::<u8>(), 0..512),
            status in prop_oneof![Just(OK), any::<u8>()],
        ) {
            // As a whole frame (header from the bytes) ...
            let _ = frame(&bytes);
            // ... and as a body behind a valid header.
            let header = Header { flag: HESSIAN2, status, id: 1, len: bytes.len() };
            for method in METHODS {
                let _ = decode_response(&header, &bytes, method);
            }
        }

        /// Mutating a real reply never panics either.
        #[test]
        fn decoding_mutated_replies_never_panics(
            op in 0usize..Operation::ALL.len(),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        ) {
            let op = Operation::ALL[op];
            if op == Operation::StringEcho(StringSize::M1) { return Ok(()); }
            let call = op.call();
            let mut reply = echo_reply(&request(&call, 1), RESPONSE_VALUE_WITH_ATTACHMENTS, false);
            for (at, byte) in flips {
                let i = HEADER_LEN + at % (reply.len() - HEADER_LEN);
                reply[i] = byte;
            }
            let header = Header::decode(&reply).unwrap();
            for method in METHODS {
                let _ = decode_response(&header, &reply[HEADER_LEN..], method);
            }
        }
    }
}
