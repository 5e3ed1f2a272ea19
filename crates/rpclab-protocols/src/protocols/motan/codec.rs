//! The motan2 wire format (`MotanV2Codec`): a 13-byte header, a meta map of
//! strings, and a body in the negotiated serialization (hessian2 or
//! "simple"). Pure functions over byte slices, no I/O.
//!
//! ```text
//! 0        2       3                  4                5               13
//! | 0xF1F1 | flags | version<<3|status | serial<<3 | request id (8) |
//! | meta length (i32) | meta: "key\nvalue\nkey\nvalue" | body length (i32) | body |
//! flags: 0x10 heartbeat, 0x08 gzip, 0x04 one-way, 0x02 proxy, 0x01 response
//! ```
//!
//! A request's meta names the service (`M_p`), method (`M_m`), parameter
//! description (`M_md`, Java class names joined by `,`, `void` for none),
//! group (`M_g`), version (`M_v`) and caller (`M_s`); its body is the
//! arguments written one after the other in one stream (Hessian class
//! definitions shared), empty for a method without parameters. A response
//! has status 0 and a body holding the return value (`null` for `void`), or
//! status 1 and the exception in the meta entry `M_e`, a JSON object
//! `{"errcode":..,"errmsg":..,"errtype":..}`, with no body. `M_pt` is the
//! provider's processing time in ms.

use crate::java_contract::hessian as contract_hessian;
use crate::protocol::CallError;
use hessian2::{DecodeError, Decoder, Encoder};
use motan_simple::{self as simple, SimpleReader};
use rpclab_model::contract::Value;
use std::ops::Range;

pub const MAGIC: [u8; 2] = [0xf1, 0xf1];
pub const HEADER_LEN: usize = 13;
pub const FLAG_HEARTBEAT: u8 = 0x10;
pub const FLAG_GZIP: u8 = 0x08;
pub const FLAG_ONEWAY: u8 = 0x04;
pub const FLAG_PROXY: u8 = 0x02;
pub const FLAG_RESPONSE: u8 = 0x01;
/// The protocol version motan2 writes (motan1 is 0).
pub const VERSION: u8 = 1;
pub const STATUS_NORMAL: u8 = 0;
pub const STATUS_EXCEPTION: u8 = 1;

/// Largest meta map accepted (a provider's is tens of bytes).
pub const MAX_META: usize = 1024 * 1024;
/// Largest body accepted either way. Motan's own limit (`maxContentLength`)
/// defaults to 10 MB and the rpclab providers raise it to 16 MiB; the
/// contract's largest body is a 1 MiB string. Larger is a corrupt or hostile
/// frame, refused before anything is allocated for it.
pub const MAX_BODY: usize = 64 * 1024 * 1024;

pub use crate::java_contract::{Method, ORDER_CLASS, ORDER_FIELDS, SERVICE};

// Meta keys (`MotanConstants.M2_*`).
pub const M_PATH: &str = "M_p";
pub const M_METHOD: &str = "M_m";
pub const M_METHOD_DESC: &str = "M_md";
pub const M_GROUP: &str = "M_g";
pub const M_VERSION: &str = "M_v";
pub const M_SOURCE: &str = "M_s";
pub const M_ERROR: &str = "M_e";
pub const M_PROCESS_TIME: &str = "M_pt";

/// Every serialization number motan2 defines (`MotanV2Header`), and the
/// two this client speaks.
pub const MOTAN_SERIALIZATIONS: &[(&str, u8)] = &[
    ("hessian2", 0),
    ("grpc-pb", 1),
    ("json", 2),
    ("msgpack", 3),
    ("hprose", 4),
    ("pb", 5),
    ("simple", 6),
    ("grpc-pb-json", 7),
    ("breeze", 8),
];

/// The body serializations implemented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Serialization {
    Hessian2,
    Simple,
}

impl Serialization {
    pub fn name(self) -> &'static str {
        match self {
            Serialization::Hessian2 => "hessian2",
            Serialization::Simple => "simple",
        }
    }

    /// The number in the header.
    pub fn id(self) -> u8 {
        match self {
            Serialization::Hessian2 => 0,
            Serialization::Simple => 6,
        }
    }

    pub fn from_name(name: &str) -> Option<Serialization> {
        match name {
            "hessian2" => Some(Serialization::Hessian2),
            "simple" => Some(Serialization::Simple),
            _ => None,
        }
    }
}

/// The 13-byte header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub flags: u8,
    pub version: u8,
    pub status: u8,
    pub serialization: u8,
    pub id: u64,
}

impl Header {
    /// A two-way request.
    pub fn request(serialization: Serialization, id: u64) -> Header {
        Header {
            flags: 0,
            version: VERSION,
            status: STATUS_NORMAL,
            serialization: serialization.id(),
            id,
        }
    }

    pub fn is_heartbeat(&self) -> bool {
        self.flags & FLAG_HEARTBEAT != 0
    }

    pub fn is_response(&self) -> bool {
        self.flags & FLAG_RESPONSE != 0
    }

    pub fn is_gzip(&self) -> bool {
        self.flags & FLAG_GZIP != 0
    }

    pub fn is_oneway(&self) -> bool {
        self.flags & FLAG_ONEWAY != 0
    }

    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[..2].copy_from_slice(&MAGIC);
        out[2] = self.flags;
        out[3] = (self.version << 3) | (self.status & 0x07);
        out[4] = self.serialization << 3;
        out[5..13].copy_from_slice(&self.id.to_be_bytes());
        out
    }

    /// Reads a header from the first 13 bytes of `bytes`.
    pub fn decode(bytes: &[u8]) -> Result<Header, CallError> {
        let Some(h) = bytes.get(..HEADER_LEN) else {
            return Err(CallError::Protocol(format!(
                "short motan2 header: {} of {HEADER_LEN} bytes",
                bytes.len()
            )));
        };
        if h[..2] != MAGIC {
            return Err(CallError::Protocol(format!(
                "bad magic 0x{:02x}{:02x} (expected 0xf1f1): not a motan2 stream, or out of step",
                h[0], h[1]
            )));
        }
        let version = h[3] >> 3;
        if version != VERSION {
            return Err(CallError::Protocol(format!(
                "motan protocol version {version} (motan2 is {VERSION})"
            )));
        }
        Ok(Header {
            flags: h[2],
            version,
            status: h[3] & 0x07,
            serialization: h[4] >> 3,
            id: u64::from_be_bytes(h[5..13].try_into().expect("8 bytes")),
        })
    }
}

/// Where the parts of a whole frame are in the buffer it was found in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub meta: Range<usize>,
    pub body: Range<usize>,
}

impl Layout {
    pub fn total(&self) -> usize {
        self.body.end
    }
}

fn length(buf: &[u8], at: usize, what: &str, max: usize) -> Result<Option<usize>, CallError> {
    let Some(b) = buf.get(at..at + 4) else {
        return Ok(None);
    };
    let n = i32::from_be_bytes(b.try_into().expect("4 bytes"));
    if n < 0 || n as usize > max {
        return Err(CallError::Protocol(format!(
            "{what} length {n} is outside 0..={max}"
        )));
    }
    Ok(Some(n as usize))
}

/// Where the next whole frame ends in `buf`: `Ok(None)` while more bytes
/// are needed, an error for a malformed header or length.
pub fn frame(buf: &[u8]) -> Result<Option<(Header, Layout)>, CallError> {
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let header = Header::decode(buf)?;
    let Some(meta_len) = length(buf, HEADER_LEN, "meta", MAX_META)? else {
        return Ok(None);
    };
    let meta = HEADER_LEN + 4..HEADER_LEN + 4 + meta_len;
    let Some(body_len) = length(buf, meta.end, "body", MAX_BODY)? else {
        return Ok(None);
    };
    let body = meta.end + 4..meta.end + 4 + body_len;
    Ok((buf.len() >= body.end).then_some((header, Layout { meta, body })))
}

/// How many bytes the frame under way in `buf` needs in all, once its
/// lengths are in (`None` before that). Lets the reader reserve once.
pub fn frame_len_hint(buf: &[u8]) -> Result<Option<usize>, CallError> {
    if buf.len() < HEADER_LEN + 4 {
        return Ok(None);
    }
    let meta_len = length(buf, HEADER_LEN, "meta", MAX_META)?.expect("4 bytes present");
    let at = HEADER_LEN + 4 + meta_len;
    Ok(length(buf, at, "body", MAX_BODY)?.map(|body| at + 4 + body))
}

/// The meta map as pairs, in wire order: `key\nvalue\n...` without a final
/// newline. A trailing key without a value is dropped, as Java does.
pub fn parse_meta(meta: &[u8]) -> Result<Vec<(&str, &str)>, CallError> {
    if meta.is_empty() {
        return Ok(Vec::new());
    }
    let text = std::str::from_utf8(meta)
        .map_err(|_| CallError::Protocol("the meta map is not UTF-8".into()))?;
    let mut parts = text.split('\n');
    let mut out = Vec::new();
    while let (Some(k), Some(v)) = (parts.next(), parts.next()) {
        out.push((k, v));
    }
    Ok(out)
}

/// A heartbeat (request or response `id`): header, empty meta, empty body.
pub fn heartbeat(id: u64, response: bool) -> [u8; HEADER_LEN + 8] {
    let mut out = [0u8; HEADER_LEN + 8];
    let header = Header {
        flags: FLAG_HEARTBEAT | if response { FLAG_RESPONSE } else { 0 },
        version: VERSION,
        status: STATUS_NORMAL,
        // Java's MotanV2Header default.
        serialization: 1,
        id,
    };
    out[..HEADER_LEN].copy_from_slice(&header.encode());
    out
}

/// Motan's parameter description of `method` (`ReflectUtil.getMethodParamDesc`):
/// the parameters' class names joined by `,`, `void` for none. The
/// provider finds the method by name and description.
pub fn method_desc(method: Method) -> &'static str {
    match method {
        Method::EchoOrder => "rpclab.contract.Order",
        Method::EchoOrders => "java.util.List",
        Method::EchoString | Method::Hello => "java.lang.String",
        Method::Empty => "void",
    }
}

/// Whether `serialization` can carry `method`'s argument and result.
pub fn fits(method: Method, serialization: Serialization) -> bool {
    serialization == Serialization::Hessian2
        || !matches!(method, Method::EchoOrder | Method::EchoOrders)
}

/// What every request of a protocol instance says besides its method and
/// argument, encoded once: the meta map of each method.
#[derive(Clone, Debug)]
pub struct RequestTemplate {
    serialization: Serialization,
    metas: [Vec<u8>; 5],
}

impl RequestTemplate {
    /// `group` and `version` select the provider's service key; `source`
    /// names the caller (Motan's `application`).
    pub fn new(
        serialization: Serialization,
        group: &str,
        version: &str,
        source: &str,
    ) -> Result<RequestTemplate, CallError> {
        for (what, v) in [("group", group), ("version", version), ("source", source)] {
            if v.contains('\n') {
                return Err(CallError::Config(format!(
                    "motan2 {what} `{v:?}` contains a newline, which the meta map cannot carry"
                )));
            }
        }
        let metas = Method::ALL.map(|m| {
            let pairs = [
                (M_PATH, SERVICE),
                (M_METHOD, m.name()),
                (M_METHOD_DESC, method_desc(m)),
                (M_GROUP, group),
                (M_VERSION, version),
                (M_SOURCE, source),
            ];
            let mut meta = Vec::new();
            for (k, v) in pairs {
                meta.extend_from_slice(k.as_bytes());
                meta.push(b'\n');
                meta.extend_from_slice(v.as_bytes());
                meta.push(b'\n');
            }
            meta.pop(); // no newline after the last value
            meta
        });
        Ok(RequestTemplate {
            serialization,
            metas,
        })
    }

    pub fn serialization(&self) -> Serialization {
        self.serialization
    }

    /// A good first capacity for a request carrying `argument`, so that
    /// encoding it does not reallocate.
    pub fn capacity(&self, method: Method, argument: &Value) -> usize {
        HEADER_LEN
            + 8
            + self.metas[method.index()].len()
            + 16
            + crate::java_contract::hessian::value_capacity(argument)
    }

    /// Encodes request `id` calling `method` with `argument` into `out`
    /// (cleared first).
    pub fn encode(
        &self,
        out: &mut Vec<u8>,
        id: u64,
        method: Method,
        argument: &Value,
    ) -> Result<(), CallError> {
        if !fits(method, self.serialization) {
            return Err(unsupported(method, self.serialization));
        }
        out.clear();
        out.extend_from_slice(&Header::request(self.serialization, id).encode());
        let meta = &self.metas[method.index()];
        out.extend_from_slice(&(meta.len() as u32).to_be_bytes());
        out.extend_from_slice(meta);
        let body_at = out.len();
        out.extend_from_slice(&[0; 4]);
        match self.serialization {
            Serialization::Hessian2 => {
                // No parameters: no body (Java's proxy passes null
                // arguments). Motan's Hessian writes `Order`'s fields in
                // declaration order.
                if !matches!(argument, Value::Unit) {
                    let mut enc = Encoder::new(&mut *out);
                    contract_hessian::write_argument(&mut enc, argument, &ORDER_FIELDS)
                        .map_err(|e| CallError::Protocol(format!("encoding the request: {e}")))?;
                }
            }
            Serialization::Simple => match argument {
                Value::Str(s) => simple::put_string(out, s),
                Value::Unit => {}
                _ => return Err(unsupported(method, self.serialization)),
            },
        }
        let body_len = out.len() - body_at - 4;
        if body_len > MAX_BODY {
            return Err(CallError::Protocol(format!(
                "request body of {body_len} bytes is over the {MAX_BODY}-byte limit"
            )));
        }
        out[body_at..body_at + 4].copy_from_slice(&(body_len as u32).to_be_bytes());
        Ok(())
    }
}

/// Writes request id `id` into `request`, a request
/// [`RequestTemplate::encode`] wrote with another id: then what it writes
/// for `id` (the id is the only part of a request that changes from call
/// to call).
pub fn restamp_request(request: &mut [u8], id: u64) -> bool {
    match request.get_mut(5..HEADER_LEN) {
        Some(at) => {
            at.copy_from_slice(&id.to_be_bytes());
            true
        }
        None => false,
    }
}

/// The error for an operation `serialization` cannot carry.
pub fn unsupported(method: Method, serialization: Serialization) -> CallError {
    CallError::Config(format!(
        "motan2 serialization `{}` cannot carry `{}`: Motan's SimpleSerialization has no \
         POJOs (only null, String, numbers, byte[], String[], maps and arrays); use \
         serialization `hessian2` for the Order operations",
        serialization.name(),
        method.name()
    ))
}

// ---- responses ---------------------------------------------------------------

/// Decodes the response to a call of `method` sent with `serialization`:
/// its header, meta and body.
pub fn decode_response(
    header: &Header,
    meta: &[u8],
    body: &[u8],
    method: Method,
    serialization: Serialization,
) -> Result<Value, CallError> {
    if !header.is_response() {
        return Err(CallError::Protocol(
            "a request frame where a response was due".into(),
        ));
    }
    if header.status != STATUS_NORMAL {
        return Err(exception(header.status, meta));
    }
    if header.is_gzip() {
        return Err(CallError::Protocol(
            "the provider gzip-compressed the response body (its URL sets mingzSize); this \
             client does not decompress: export the service without mingzSize"
                .into(),
        ));
    }
    if body.is_empty() {
        // Java writes no body only for an exception; a null is one byte.
        return Err(CallError::Protocol(format!(
            "a normal response to `{}` without a body",
            method.name()
        )));
    }
    if header.serialization != serialization.id() {
        return Err(CallError::Protocol(format!(
            "response serialized with number {}, the request used {} ({})",
            header.serialization,
            serialization.name(),
            serialization.id()
        )));
    }
    match serialization {
        Serialization::Hessian2 => decode_hessian2(body, method),
        Serialization::Simple => decode_simple(body, method),
    }
}

/// Whether the response to a call of `method` with `header` and `body` is
/// without a doubt `expected`, read without making a value: a hessian2
/// string compared where it lies (what [`decode_response`] would decode to
/// `expected`). False for anything else, which is then decoded.
pub fn is_expected(
    header: &Header,
    body: &[u8],
    method: Method,
    serialization: Serialization,
    expected: &Value,
) -> bool {
    let Value::Str(want) = expected else {
        return false;
    };
    if !matches!(method, Method::EchoString | Method::Hello)
        || serialization != Serialization::Hessian2
        || !header.is_response()
        || header.status != STATUS_NORMAL
        || header.is_gzip()
        || header.serialization != serialization.id()
    {
        return false;
    }
    let mut dec = Decoder::new(body);
    matches!(dec.read_str(), Ok(got) if got == want.as_str()) && dec.is_empty()
}

/// Status 1: the exception Motan put in `M_e`, as a server error.
fn exception(status: u8, meta: &[u8]) -> CallError {
    let error = parse_meta(meta).ok().and_then(|m| {
        m.iter()
            .find(|(k, _)| *k == M_ERROR)
            .map(|(_, v)| v.to_string())
    });
    if status != STATUS_EXCEPTION {
        return CallError::Protocol(format!(
            "unknown motan2 status {status} (0 normal, 1 exception){}",
            error.map(|e| format!(": {e}")).unwrap_or_default()
        ));
    }
    let Some(error) = error else {
        return CallError::Server("the provider reported an exception without M_e".into());
    };
    // ExceptionUtil.toMessage: {"errcode":503,"errmsg":"...","errtype":1}.
    match serde_json::from_str::<serde_json::Value>(&error) {
        Ok(json) => {
            let kind = match json.get("errtype").and_then(|t| t.as_i64()) {
                Some(0) => "framework",
                Some(1) => "service",
                Some(2) => "business",
                _ => "unknown",
            };
            let code = json
                .get("errcode")
                .and_then(|c| c.as_i64())
                .map(|c| c.to_string())
                .unwrap_or_else(|| "?".into());
            let message = json
                .get("errmsg")
                .and_then(|m| m.as_str())
                .unwrap_or("(no message)");
            CallError::Server(format!(
                "motan {kind} exception (errcode {code}): {message}"
            ))
        }
        Err(_) => CallError::Server(format!("motan exception: {error}")),
    }
}

fn malformed(e: DecodeError) -> CallError {
    CallError::Protocol(format!("malformed hessian2 response body: {e}"))
}

fn returned_null(method: Method) -> Result<Value, CallError> {
    match method {
        Method::Empty => Ok(Value::Unit),
        other => Err(CallError::WrongResponse(format!(
            "`{}` returned null",
            other.name()
        ))),
    }
}

fn decode_hessian2(body: &[u8], method: Method) -> Result<Value, CallError> {
    let mut dec = Decoder::new(body);
    let value = if dec.try_read_null().map_err(malformed)? {
        returned_null(method)?
    } else {
        match method {
            Method::Empty => {
                return Err(CallError::WrongResponse(
                    "`empty` (void) returned a value".to_owned(),
                ))
            }
            Method::EchoString | Method::Hello => Value::Str(dec.read_string().map_err(malformed)?),
            Method::EchoOrder => Value::Order(contract_hessian::read_order(&mut dec)?),
            Method::EchoOrders => Value::Orders(contract_hessian::read_orders(&mut dec)?),
        }
    };
    if !dec.is_empty() {
        return Err(CallError::Protocol(format!(
            "{} bytes after the hessian2 return value",
            dec.remaining().len()
        )));
    }
    Ok(value)
}

fn decode_simple(body: &[u8], method: Method) -> Result<Value, CallError> {
    let mut r = SimpleReader::new(body);
    let value = match method {
        Method::EchoOrder | Method::EchoOrders => {
            return Err(unsupported(method, Serialization::Simple))
        }
        Method::Empty => match r.read_value() {
            Ok(simple::SimpleValue::Null) => Value::Unit,
            Ok(other) => {
                return Err(CallError::WrongResponse(format!(
                    "`empty` (void) returned a {}",
                    other.type_name()
                )))
            }
            Err(e) => return Err(CallError::Protocol(format!("malformed simple body: {e}"))),
        },
        Method::EchoString | Method::Hello => match r.read_opt_string() {
            Ok(Some(s)) => Value::Str(s),
            Ok(None) => returned_null(method)?,
            Err(e) => return Err(CallError::Protocol(format!("malformed simple body: {e}"))),
        },
    };
    if !r.is_empty() {
        return Err(CallError::Protocol(format!(
            "{} bytes after the simple return value",
            r.remaining()
        )));
    }
    Ok(value)
}

/// Decodes a whole response frame (`bytes` holds exactly one): what the
/// connection's reader and caller do together, in one function for tests
/// and fuzzing. Never panics.
pub fn decode_response_frame(
    bytes: &[u8],
    method: Method,
    serialization: Serialization,
) -> Result<Value, CallError> {
    let (header, layout) = frame(bytes)?
        .ok_or_else(|| CallError::Protocol(format!("truncated frame ({} bytes)", bytes.len())))?;
    if layout.total() != bytes.len() {
        return Err(CallError::Protocol(format!(
            "{} bytes after the frame",
            bytes.len() - layout.total()
        )));
    }
    decode_response(
        &header,
        &bytes[layout.meta],
        &bytes[layout.body],
        method,
        serialization,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::decoding;
    use proptest::prelude::*;
    use rpclab_model::contract::{Operation, StringSize};

    fn template(s: Serialization) -> RequestTemplate {
        RequestTemplate::new(s, "rpclab", "1.0", "rpclab-client").unwrap()
    }

    /// A provider's response frame with `body` (status normal).
    fn response(id: u64, s: Serialization, body: &[u8]) -> Vec<u8> {
        let mut out = Header {
            flags: FLAG_RESPONSE,
            version: VERSION,
            status: STATUS_NORMAL,
            serialization: s.id(),
            id,
        }
        .encode()
        .to_vec();
        let meta = b"M_pt\n0";
        out.extend_from_slice(&(meta.len() as u32).to_be_bytes());
        out.extend_from_slice(meta);
        out.extend_from_slice(&(body.len() as u32).to_be_bytes());
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn header_round_trips() {
        let h = Header::request(Serialization::Simple, 0x0102_0304_0506_0708);
        let bytes = h.encode();
        assert_eq!(
            bytes,
            [0xf1, 0xf1, 0x00, 0x08, 0x30, 1, 2, 3, 4, 5, 6, 7, 8]
        );
        assert_eq!(Header::decode(&bytes).unwrap(), h);
        let beat = heartbeat(7, false);
        let h = Header::decode(&beat).unwrap();
        assert!(h.is_heartbeat() && !h.is_response());
        assert_eq!(frame(&beat).unwrap().unwrap().1.total(), beat.len());
    }

    #[test]
    fn requests_carry_the_meta_and_body() {
        let t = template(Serialization::Hessian2);
        let mut out = vec![0xee; 3];
        let call = Operation::Hello.call();
        t.encode(&mut out, 9, Method::Hello, &call.argument)
            .unwrap();
        let (h, layout) = frame(&out).unwrap().unwrap();
        assert_eq!(layout.total(), out.len());
        assert_eq!(h.id, 9);
        assert!(!h.is_response());
        assert_eq!(
            parse_meta(&out[layout.meta.clone()]).unwrap(),
            [
                ("M_p", SERVICE),
                ("M_m", "hello"),
                ("M_md", "java.lang.String"),
                ("M_g", "rpclab"),
                ("M_v", "1.0"),
                ("M_s", "rpclab-client")
            ]
        );
        assert_eq!(&out[layout.body], b"\x02aa");
        // void: no body at all.
        t.encode(&mut out, 10, Method::Empty, &Value::Unit).unwrap();
        let (_, layout) = frame(&out).unwrap().unwrap();
        assert!(layout.body.is_empty());
        // simple cannot carry an Order.
        let call = Operation::OrderEcho.call();
        assert!(matches!(
            template(Serialization::Simple).encode(&mut out, 1, Method::EchoOrder, &call.argument),
            Err(CallError::Config(m)) if m.contains("SimpleSerialization has no POJOs")
        ));
        assert!(RequestTemplate::new(Serialization::Simple, "a\nb", "1.0", "x").is_err());
    }

    /// A reply is the expected string in place exactly when it decodes to
    /// it: not a wrong string, a null, trailing bytes, an exception, a
    /// gzipped or "simple" body, nor another method's reply.
    #[test]
    fn the_expected_string_is_found_in_place() {
        let hello = Value::Str("hello aa".into());
        let h = |s: Serialization| Header {
            flags: FLAG_RESPONSE,
            version: VERSION,
            status: STATUS_NORMAL,
            serialization: s.id(),
            id: 1,
        };
        let header = h(Serialization::Hessian2);
        let yes = |body: &[u8], m| is_expected(&header, body, m, Serialization::Hessian2, &hello);
        assert!(yes(b"\x08hello aa", Method::Hello));
        assert!(yes(b"\x08hello aa", Method::EchoString));
        // In two chunks: not borrowed, still read.
        assert!(yes(b"R\x00\x05helloS\x00\x03 aa", Method::Hello));
        for (body, m) in [
            (&b"\x08hello ab"[..], Method::Hello),
            (b"\x07hello a", Method::Hello),
            (b"\x08hello aaN", Method::Hello),
            (b"N", Method::Hello),
            (b"", Method::Hello),
            (b"\x08hello aa", Method::Empty),
            (b"\x08hello aa", Method::EchoOrder),
        ] {
            assert!(!yes(body, m), "{body:?} {m:?}");
        }
        // The same body under another header, each changed in one way.
        let body = b"\x08hello aa";
        let with = |change: fn(&mut Header)| {
            let mut other = header;
            change(&mut other);
            is_expected(&other, body, Method::Hello, Serialization::Hessian2, &hello)
        };
        assert!(!with(|h| h.status = STATUS_EXCEPTION));
        assert!(!with(|h| h.flags |= FLAG_GZIP));
        assert!(!with(|h| h.flags = 0));
        assert!(!with(|h| h.serialization = Serialization::Simple.id()));
        let simple = h(Serialization::Simple);
        assert!(!is_expected(
            &simple,
            body,
            Method::Hello,
            Serialization::Simple,
            &hello
        ));
        assert!(!is_expected(
            &header,
            body,
            Method::Hello,
            Serialization::Hessian2,
            &Value::Unit
        ));
    }

    #[test]
    fn responses_decode_both_serializations() {
        let reply = response(1, Serialization::Hessian2, b"\x08hello aa");
        assert_eq!(
            decode_response_frame(&reply, Method::Hello, Serialization::Hessian2).unwrap(),
            Value::Str("hello aa".into())
        );
        let reply = response(1, Serialization::Hessian2, b"N");
        assert_eq!(
            decode_response_frame(&reply, Method::Empty, Serialization::Hessian2).unwrap(),
            Value::Unit
        );
        assert!(matches!(
            decode_response_frame(&reply, Method::Hello, Serialization::Hessian2),
            Err(CallError::WrongResponse(_))
        ));
        let reply = response(1, Serialization::Simple, &[0]);
        assert_eq!(
            decode_response_frame(&reply, Method::Empty, Serialization::Simple).unwrap(),
            Value::Unit
        );
        let reply = response(1, Serialization::Simple, &[1, 0, 0, 0, 2, b'h', b'i']);
        assert_eq!(
            decode_response_frame(&reply, Method::EchoString, Serialization::Simple).unwrap(),
            Value::Str("hi".into())
        );
        // The wrong serialization number.
        assert!(matches!(
            decode_response_frame(&reply, Method::EchoString, Serialization::Hessian2),
            Err(CallError::Protocol(m)) if m.contains("number 6")
        ));
    }

    #[test]
    fn exceptions_are_server_errors() {
        let mut reply = Header {
            flags: FLAG_RESPONSE,
            version: VERSION,
            status: STATUS_EXCEPTION,
            serialization: 0,
            id: 3,
        }
        .encode()
        .to_vec();
        let meta = br#"M_pt
1
M_e
{"errcode":503,"errmsg":"Service method not exist: x.y(void)","errtype":1}"#;
        reply.extend_from_slice(&(meta.len() as u32).to_be_bytes());
        reply.extend_from_slice(meta);
        reply.extend_from_slice(&0u32.to_be_bytes());
        match decode_response_frame(&reply, Method::Empty, Serialization::Hessian2) {
            Err(CallError::Server(m)) => assert_eq!(
                m,
                "motan service exception (errcode 503): Service method not exist: x.y(void)"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_frames_are_errors() {
        let good = response(1, Serialization::Hessian2, b"N");
        for n in 0..good.len() {
            assert_eq!(frame(&good[..n]).unwrap(), None, "{n}");
        }
        let mut bad = good.clone();
        bad[0] = 0xda;
        assert!(matches!(frame(&bad), Err(CallError::Protocol(m)) if m.contains("magic")));
        let mut bad = good.clone();
        bad[3] = 0; // motan1 version
        assert!(frame(&bad).is_err());
        let mut bad = good.clone();
        bad[13..17].copy_from_slice(&(-1i32).to_be_bytes());
        assert!(frame(&bad).is_err());
        let mut bad = good.clone();
        let at = good.len() - 5;
        bad[at..at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(frame(&bad).is_err());
        assert!(frame_len_hint(&bad).is_err());
        assert_eq!(frame_len_hint(&good).unwrap(), Some(good.len()));
        // A truncated 1 MiB string.
        let call = Operation::StringEcho(StringSize::M1).call();
        let mut body = Vec::new();
        Encoder::new(&mut body).write_string(match &call.argument {
            Value::Str(s) => s,
            _ => unreachable!(),
        });
        body.truncate(body.len() - 10);
        let reply = response(1, Serialization::Hessian2, &body);
        assert!(matches!(
            decode_response_frame(&reply, Method::EchoString, Serialization::Hessian2),
            Err(CallError::Protocol(_))
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Decoding arbitrary bytes never panics, as a frame or as a body;
        /// a body found to be the expected value in place decodes to it.
        #[test]
        fn arbitrary_bytes_never_panic(
            bytes in decoding::arbitrary_bytes(),
            status in 0u8..3,
        ) {
            for s in [Serialization::Hessian2, Serialization::Simple] {
                for m in Method::ALL {
                    let _ = decode_response_frame(&bytes, m, s);
                    let header = Header { flags: FLAG_RESPONSE, version: VERSION, status, serialization: s.id(), id: 1 };
                    let decoded = decode_response(&header, &bytes, &bytes, m, s);
                    if let Ok(Value::Str(got)) = &decoded {
                        let expected = Value::Str(got.clone());
                        prop_assert!(is_expected(&header, &bytes, m, s, &expected) || s == Serialization::Simple);
                    }
                    for expected in [Value::Str(String::new()), Value::Str("hello aa".into())] {
                        if is_expected(&header, &bytes, m, s, &expected) {
                            prop_assert!(matches!(&decoded, Ok(v) if *v == expected), "{:?}", decoded);
                        }
                    }
                }
            }
        }

    }

    // The inputs are an operation and a request id: 64 cases cover every
    // operation a few times over. Each case encodes and decodes the
    // operation's whole payload (the large ones included), which made
    // 2,000 cases, in a debug build, the suite's longest test (170 s).
    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Encoding then decoding as a provider would echo gives the value back.
        #[test]
        fn echoes_round_trip(op in 0usize..Operation::ALL.len(), id in any::<u64>()) {
            let call = Operation::ALL[op].call();
            let method = Method::of(&call).unwrap();
            let t = template(Serialization::Hessian2);
            let mut req = Vec::new();
            t.encode(&mut req, id, method, &call.argument).unwrap();
            let (h, layout) = frame(&req).unwrap().unwrap();
            prop_assert_eq!(h.id, id);
            // The provider's reply body: the argument echoed (hello: the greeting).
            let body = match method {
                Method::Empty => b"N".to_vec(),
                Method::Hello => {
                    let mut b = Vec::new();
                    Encoder::new(&mut b).write_string("hello aa");
                    b
                }
                _ => req[layout.body].to_vec(),
            };
            let reply = response(id, Serialization::Hessian2, &body);
            let got = decode_response_frame(&reply, method, Serialization::Hessian2).unwrap();
            prop_assert!(got == call.expected);
        }
    }
}
