//! The dubbo2 wire format: the 16-byte exchange header, and the order of
//! the values in request and response bodies, written once for every
//! [`Serialization`]. Pure functions over byte slices, no I/O.
//!
//! ```text
//! 0      2      3       4                12              16
//! | 0xdabb | flag | status | request id (8) | body length (4) | body ...
//! flag: 0x80 request, 0x40 two-way, 0x20 event, low 5 bits serialization id
//! ```
//!
//! A request body is one stream of the serialization (one `ObjectOutput`
//! in Java): dubbo version, service path, service version, method name,
//! parameter descriptor (each with `writeUTF`), the arguments, the
//! attachments map. A response body with status OK is a response type
//! (`writeByte`), then the value or the exception, then the attachments for
//! the `*_WITH_ATTACHMENTS` types; with any other status it is the server's
//! error message (`writeUTF`).

use super::serialization::{ObjectInput, ObjectOutput, Serialization};
pub use crate::java_contract::{Method, ORDER_CLASS, ORDER_FIELDS, SERVICE};
use crate::protocol::CallError;
use rpclab_model::contract::Value;

pub const MAGIC: [u8; 2] = [0xda, 0xbb];
pub const HEADER_LEN: usize = 16;
pub const FLAG_REQUEST: u8 = 0x80;
pub const FLAG_TWOWAY: u8 = 0x40;
pub const FLAG_EVENT: u8 = 0x20;
pub const SERIALIZATION_MASK: u8 = 0x1f;

/// Largest body accepted (either way). The provider's own limit is 16 MiB
/// (`payload` in the registered URL); the contract's largest body is a
/// 1 MiB string. A larger length is a corrupt or hostile frame, refused
/// before anything is allocated for it.
pub const MAX_BODY: usize = 64 * 1024 * 1024;

/// The `dubbo` protocol version both providers speak (and send back in
/// their registered URL as `dubbo=2.0.2`). From 2.0.2 on, providers answer
/// with the `*_WITH_ATTACHMENTS` response types.
pub const DUBBO_VERSION: &str = "2.0.2";
/// The service version the providers export: none, which Dubbo consumers
/// send as `0.0.0` (and providers treat as none when they build the
/// service key).
pub const SERVICE_VERSION: &str = "0.0.0";
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
pub fn heartbeat_request<S: Serialization>(ser: &S, id: u64) -> Result<Vec<u8>, CallError> {
    event(ser, FLAG_REQUEST | FLAG_TWOWAY | FLAG_EVENT, 0, id)
}

/// The answer to a server's heartbeat request `id`.
pub fn heartbeat_response<S: Serialization>(ser: &S, id: u64) -> Result<Vec<u8>, CallError> {
    event(ser, FLAG_EVENT, OK, id)
}

fn event<S: Serialization>(ser: &S, flag: u8, status: u8, id: u64) -> Result<Vec<u8>, CallError> {
    let mut out = vec![0u8; HEADER_LEN];
    let mut output = ser.output(&mut out);
    output.write_null()?;
    output.finish()?;
    seal(&mut out, flag | ser.id(), status, id)?;
    Ok(out)
}

/// Writes the header in front of the body that follows it in `out`.
fn seal(out: &mut [u8], flag: u8, status: u8, id: u64) -> Result<(), CallError> {
    let len = out.len() - HEADER_LEN;
    if len > MAX_BODY {
        return Err(CallError::Protocol(format!(
            "request body of {len} bytes is over the {MAX_BODY}-byte limit"
        )));
    }
    let header = Header {
        flag,
        status,
        id,
        len,
    };
    out[..HEADER_LEN].copy_from_slice(&header.encode());
    Ok(())
}

/// A good first capacity for a request carrying `argument`, so that
/// encoding it does not reallocate.
pub fn request_capacity(argument: &Value) -> usize {
    const FIXED: usize = 256; // header, strings, attachments
    FIXED + crate::java_contract::hessian::value_capacity(argument)
}

/// What a Java consumer puts in the invocation's attachments: the path,
/// interface and version the provider finds its exporter by.
const ATTACHMENTS: [(&str, &str); 3] = [
    ("path", SERVICE),
    ("interface", SERVICE),
    ("version", SERVICE_VERSION),
];

/// Encodes a two-way request `id` calling `method` with `argument` into
/// `out` (cleared first), header included, as `DubboCodec.encodeRequestData`
/// orders it.
pub fn encode_request<S: Serialization>(
    ser: &S,
    out: &mut Vec<u8>,
    id: u64,
    method: Method,
    argument: &Value,
) -> Result<(), CallError> {
    out.clear();
    out.extend_from_slice(&[0; HEADER_LEN]);
    let mut output = ser.output(out);
    output.write_utf(DUBBO_VERSION)?;
    output.write_utf(SERVICE)?;
    output.write_utf(SERVICE_VERSION)?;
    output.write_utf(method.name())?;
    output.write_utf(method.java_parameters())?;
    if !matches!(argument, Value::Unit) {
        output.write_argument(argument)?;
    }
    output.write_attachments(&ATTACHMENTS)?;
    output.finish()?;
    seal(out, FLAG_REQUEST | FLAG_TWOWAY | ser.id(), 0, id)
}

/// Writes request id `id` into `request`, a request [`encode_request`]
/// wrote with another id: then what it writes for `id` (the id is the
/// only part of a request that changes from call to call, and only its
/// header holds it, whatever the serialization). False, and nothing
/// written, for bytes that are not a dubbo frame.
pub fn restamp_request(request: &mut [u8], id: u64) -> bool {
    if request.get(..2) != Some(&MAGIC[..]) {
        return false;
    }
    match request.get_mut(4..12) {
        Some(at) => {
            at.copy_from_slice(&id.to_be_bytes());
            true
        }
        None => false,
    }
}

// ---- responses ---------------------------------------------------------------

/// Decodes the response to a call of `method`: `header` and its `body`.
pub fn decode_response<S: Serialization>(
    ser: &S,
    header: &Header,
    body: &[u8],
    method: Method,
) -> Result<Value, CallError> {
    if header.serialization() != ser.id() {
        return Err(CallError::Protocol(format!(
            "response serialized with id {}, the request used {}",
            header.serialization(),
            ser.id()
        )));
    }
    if header.status != OK {
        return Err(status_error(header.status, &error_message(ser, body)));
    }
    let mut input = ser.input(body)?;
    let kind = input.read_response_type()?;
    let (value, attachments) = match kind {
        RESPONSE_VALUE => (method.returned(input.read_value(method)?)?, false),
        RESPONSE_VALUE_WITH_ATTACHMENTS => (method.returned(input.read_value(method)?)?, true),
        RESPONSE_NULL_VALUE => (method.returned(Value::Unit)?, false),
        RESPONSE_NULL_VALUE_WITH_ATTACHMENTS => (method.returned(Value::Unit)?, true),
        RESPONSE_WITH_EXCEPTION | RESPONSE_WITH_EXCEPTION_WITH_ATTACHMENTS => {
            return Err(input.read_exception())
        }
        other => {
            return Err(CallError::Protocol(format!(
                "unknown response type {other} (expected 0 to 5)"
            )))
        }
    };
    if attachments {
        // Not used, but read: a reply must be well-formed to its end.
        input.skip_object()?;
    }
    Ok(value)
}

/// Whether the response `header` and `body` to a call of `method` is
/// without a doubt the string `expected`, told where it lies: what
/// [`decode_response`] reads, in the same order (the call's serialization,
/// status OK, a value with or without attachments, the attachments
/// well-formed), with the value compared where it lies
/// ([`ObjectInput::is_string`]) instead of read into a new string, and the
/// attachments found to be the providers' where they lie
/// ([`ObjectInput::at_provider_attachments`]) or else skipped. False
/// for anything else, which is then decoded, and for a serialization that
/// cannot tell.
pub fn is_expected<S: Serialization>(
    ser: &S,
    header: &Header,
    body: &[u8],
    method: Method,
    expected: &Value,
) -> bool {
    let Value::Str(want) = expected else {
        return false;
    };
    if !S::STRINGS_IN_PLACE
        || !matches!(method, Method::EchoString | Method::Hello)
        || header.serialization() != ser.id()
        || header.status != OK
    {
        return false;
    }
    let Ok(mut input) = ser.input(body) else {
        return false;
    };
    let attachments = match input.read_response_type() {
        Ok(RESPONSE_VALUE) => false,
        Ok(RESPONSE_VALUE_WITH_ATTACHMENTS) => true,
        _ => return false,
    };
    input.is_string(want) == Some(true)
        && (!attachments || input.at_provider_attachments() || input.skip_object().is_ok())
}

/// The message of a response with a status other than OK: a string, in
/// the response's serialization.
fn error_message<S: Serialization>(ser: &S, body: &[u8]) -> String {
    match ser.input(body).and_then(|mut input| input.read_utf()) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::dubbo::serialization::hessian2::{Hessian2, ID as HESSIAN2};
    use crate::testing::decoding;
    use hessian2::{Decoder, Encoder, Object, Value as HValue};
    use proptest::prelude::*;
    use rpclab_model::contract::StringSize;
    use rpclab_model::contract::{self, Call, Operation};

    const METHODS: [Method; Method::COUNT] = Method::ALL;

    fn request(call: &Call, id: u64) -> Vec<u8> {
        let mut out = vec![0xee; 5]; // junk, to check that encoding clears
        encode_request(
            &Hessian2,
            &mut out,
            id,
            Method::of(call).unwrap(),
            &call.argument,
        )
        .unwrap();
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
        decode_response(&Hessian2, &header, &bytes[HEADER_LEN..total], method)
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
        let req = heartbeat_request(&Hessian2, 7).unwrap();
        let (h, total) = frame(&req).unwrap().unwrap();
        assert_eq!(total, 17);
        assert!(h.is_request() && h.is_two_way() && h.is_event());
        assert_eq!((h.id, h.len, h.serialization()), (7, 1, HESSIAN2));
        assert_eq!(req[16], b'N');
        let res = heartbeat_response(&Hessian2, 7).unwrap();
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
            assert_eq!(inv.desc, method.java_parameters());
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
        let mut fields = obj.class.fields.to_vec();
        fields.reverse();
        assert_eq!(fields, ORDER_FIELDS);
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
            decode_response(&Hessian2, &header, cut, Method::EchoString),
            Err(CallError::Protocol(_))
        ));
    }

    /// Whether `reply` (a whole frame) is found to be `expected` in place,
    /// which must then be what decoding it gives.
    fn found(reply: &[u8], method: Method, expected: &Value) -> bool {
        let header = Header::decode(reply).unwrap();
        let body = &reply[HEADER_LEN..];
        let yes = is_expected(&Hessian2, &header, body, method, expected);
        if yes {
            let decoded = decode_response(&Hessian2, &header, body, method);
            assert!(
                matches!(&decoded, Ok(v) if v == expected),
                "{reply:?}: {decoded:?}"
            );
        }
        yes
    }

    /// A reply is the expected string in place exactly when it decodes to
    /// it: with or without attachments; not a wrong string, a null, an
    /// exception, another status or serialization, malformed attachments,
    /// nor another method's reply.
    #[test]
    fn the_expected_string_is_found_in_place() {
        let hello = Operation::Hello.call().expected;
        let s = |v: &str| HValue::String(v.into());
        for kind in [RESPONSE_VALUE, RESPONSE_VALUE_WITH_ATTACHMENTS] {
            let good = response(1, kind, Some(&s("hello aa")), false);
            assert!(found(&good, Method::Hello, &hello), "{kind}");
            assert!(found(&good, Method::EchoString, &hello));
            for m in [Method::Empty, Method::EchoOrder, Method::EchoOrders] {
                assert!(!found(&good, m, &hello), "{m:?}");
            }
            assert!(!found(&good, Method::Hello, &Value::Str("hello ab".into())));
            assert!(!found(&good, Method::Hello, &Value::Unit));
            let wrong = response(1, kind, Some(&s("hello ab")), false);
            assert!(!found(&wrong, Method::Hello, &hello));
            let mut status = good.clone();
            status[3] = SERVICE_ERROR;
            assert!(!found(&status, Method::Hello, &hello));
            let mut kryo = good.clone();
            kryo[2] = 8;
            assert!(!found(&kryo, Method::Hello, &hello));
            // Cut: the string, or the attachments.
            let mut cut = good[..good.len() - 1].to_vec();
            let len = cut.len() as u32 - HEADER_LEN as u32;
            cut[12..16].copy_from_slice(&len.to_be_bytes());
            assert!(!found(&cut, Method::Hello, &hello));
        }
        // The string in its chunked or long forms (not how Java writes a
        // short one): still read by read_str where it is one chunk.
        let mut long_form = Vec::new();
        Encoder::new(&mut long_form).write_int(RESPONSE_VALUE);
        long_form.extend_from_slice(b"S\x00\x08hello aa");
        let reply = frame_of(&long_form);
        assert!(found(&reply, Method::Hello, &hello));
        // Other attachments: skipped, so found; malformed ones: not.
        let mut other = Vec::new();
        let mut enc = Encoder::new(&mut other);
        enc.write_int(RESPONSE_VALUE_WITH_ATTACHMENTS);
        enc.write_string("hello aa");
        other.extend_from_slice(b"H\x01a\x01bZ");
        assert!(found(&frame_of(&other), Method::Hello, &hello));
        other.truncate(other.len() - 1);
        assert!(!found(&frame_of(&other), Method::Hello, &hello));
        assert!(decode(&frame_of(&other), Method::Hello).is_err());
        // A null, an exception, a null value: decoded.
        let null = response(1, RESPONSE_NULL_VALUE_WITH_ATTACHMENTS, None, false);
        assert!(!found(&null, Method::Hello, &hello));
        let thrown = throwable(
            "java.lang.IllegalStateException",
            Some("boom"),
            HValue::Ref(0),
        );
        let exception = response(1, RESPONSE_WITH_EXCEPTION, Some(&thrown), false);
        assert!(!found(&exception, Method::Hello, &hello));
        // Not ASCII: decoded.
        let e = Value::Str("é".into());
        let reply = response(1, RESPONSE_VALUE, Some(&s("é")), false);
        assert!(!found(&reply, Method::Hello, &e));
        assert!(matches!(decode(&reply, Method::Hello), Ok(v) if v == e));
    }

    /// The providers' attachments are what hessian2 writes for them, and
    /// a well-formed map.
    #[test]
    fn the_provider_attachments_are_a_map() {
        use crate::protocols::dubbo::serialization::hessian2::PROVIDER_ATTACHMENTS;
        let mut out = Vec::new();
        let mut output = Hessian2.output(&mut out);
        output
            .write_attachments(&[("dubbo", DUBBO_VERSION)])
            .unwrap();
        output.finish().unwrap();
        assert_eq!(out, PROVIDER_ATTACHMENTS);
        let mut input = Hessian2.input(PROVIDER_ATTACHMENTS).unwrap();
        assert!(input.at_provider_attachments());
        input.skip_object().unwrap();
        assert!(!input.at_provider_attachments());
    }

    /// A whole OK response frame around `body`.
    fn frame_of(body: &[u8]) -> Vec<u8> {
        let mut out = Header {
            flag: HESSIAN2,
            status: OK,
            id: 1,
            len: body.len(),
        }
        .encode()
        .to_vec();
        out.extend_from_slice(body);
        out
    }

    proptest! {
        #![proptest_config(decoding::cases())]

        /// Every ASCII string a provider writes is found in place, never
        /// another one.
        #[test]
        fn written_strings_are_found_in_place(s in "[ -~]{0,1200}", attachments in any::<bool>()) {
            let kind = if attachments { RESPONSE_VALUE_WITH_ATTACHMENTS } else { RESPONSE_VALUE };
            let reply = response(1, kind, Some(&HValue::String(s.clone())), false);
            prop_assert!(found(&reply, Method::EchoString, &Value::Str(s.clone())));
            let other = Value::Str(format!("{s}x"));
            prop_assert!(!found(&reply, Method::EchoString, &other));
        }

        /// On arbitrary bodies, and on real replies mutated (header and
        /// body), a reply found in place decodes to the expected value.
        #[test]
        fn found_in_place_means_decoded_to_it(
            bytes in decoding::arbitrary_bytes(),
            flips in decoding::flips(),
            op in proptest::sample::select(crate::testing::small_operations()),
        ) {
            let call = op.call();
            let hello = Operation::Hello.call().expected;
            let mut reply = echo_reply(&request(&call, 1), RESPONSE_VALUE_WITH_ATTACHMENTS, false);
            crate::testing::flip(&mut reply, 2, &flips);
            if let Ok(Some((_, total))) = frame(&reply) {
                for m in METHODS {
                    found(&reply[..total], m, &call.expected);
                    found(&reply[..total], m, &hello);
                }
            }
            let arbitrary = frame_of(&bytes);
            for m in METHODS {
                found(&arbitrary, m, &hello);
                found(&arbitrary, m, &Value::Str(String::new()));
            }
        }

        /// Decoding arbitrary bytes as a response never panics.
        #[test]
        fn decoding_arbitrary_bytes_never_panics(
            bytes in decoding::arbitrary_bytes(),
            status in prop_oneof![Just(OK), any::<u8>()],
        ) {
            // As a whole frame (header from the bytes) ...
            let _ = frame(&bytes);
            // ... and as a body behind a valid header (in every
            // serialization: format.rs's tests).
            let header = Header { flag: HESSIAN2, status, id: 1, len: bytes.len() };
            for method in METHODS {
                let _ = decode_response(&Hessian2, &header, &bytes, method);
            }
        }
    }

    /// Mutating a real reply never panics either.
    #[test]
    fn decoding_mutated_replies_never_panics() {
        let reply = |op: Operation| {
            let call = op.call();
            echo_reply(&request(&call, 1), RESPONSE_VALUE_WITH_ATTACHMENTS, false)
        };
        decoding::mutated_replies_never_panic(reply, HEADER_LEN, |reply| {
            let header = Header::decode(reply).unwrap();
            for method in METHODS {
                let _ = decode_response(&Hessian2, &header, &reply[HEADER_LEN..], method);
            }
        });
    }
}
