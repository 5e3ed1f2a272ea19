//! The Ice protocol 1.0 with the Ice encoding 1.1, as far as a twoway
//! client and IceGrid's locator need it: message headers, requests,
//! replies and their statuses, encapsulations, sizes, strings, sequences,
//! identities and proxies, and `::Ice::Locator::findAdapterById`. What a
//! particular Slice interface's parameters look like is the caller's: it
//! writes them with [`write_size`] and [`write_string`] inside
//! [`encode_request`], and reads them with a [`Reader`].
//!
//! Everything here is a pure function over byte slices, tested against
//! golden bytes recorded from the real Ice for Java runtime (`golden/`,
//! read by the load client's tests, `client/tests/integration/protocols_ice.rs`) and
//! fuzzed (`fuzz/`): a malformed message is an error, never a panic, and
//! no length read from the wire allocates more than the bytes that are
//! actually there.
//!
//! # Layout (all integers little-endian)
//!
//! ```text
//! header   'I' 'c' 'e' 'P' | proto 1.0 | encoding 1.0 | type u8 | compress u8 | size i32 (whole message)
//! request  request-id i32 | identity (name, category) | facet seq<string> | operation | mode u8
//!          | context dict<string,string> | encapsulation (params)
//! reply    request-id i32 | status u8 | status-specific body (see ReplyStatus)
//! encaps   size i32 (including these 6 bytes) | encoding major u8 | minor u8 | data
//! size     < 255: one byte; else 255 then i32
//! string   size | UTF-8 bytes
//! ```
#![forbid(unsafe_code)]

use std::fmt;

/// `IceP`, the first four bytes of every message.
pub const MAGIC: [u8; 4] = *b"IceP";
/// Bytes of a message header.
pub const HEADER_LEN: usize = 14;
/// The largest message this client reads or writes (64 MiB): far above the
/// contract's largest (1 MiB strings), far below memory trouble. A header
/// announcing more is refused before anything is allocated.
pub const MAX_MESSAGE: usize = 64 << 20;

/// Message types of protocol 1.0.
pub const REQUEST: u8 = 0;
pub const BATCH_REQUEST: u8 = 1;
pub const REPLY: u8 = 2;
pub const VALIDATE_CONNECTION: u8 = 3;
pub const CLOSE_CONNECTION: u8 = 4;

/// Operation modes (Slice `normal`, `idempotent`).
pub const MODE_NORMAL: u8 = 0;
pub const MODE_IDEMPOTENT: u8 = 2;
/// `Nonmutating`, the mode `::Ice::Locator` operations are sent with (their
/// Slice carries `["nonmutating"]` metadata, for old locators); Ice
/// dispatches it as idempotent.
pub const MODE_NONMUTATING: u8 = 1;

/// Encoding of every encapsulation this client writes.
pub const ENCODING_1_1: (u8, u8) = (1, 1);

/// A message header, validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub message_type: u8,
    pub compression: u8,
    /// The whole message, header included.
    pub size: usize,
}

impl Header {
    /// The header of a message of `message_type` and `size` bytes (header
    /// included), uncompressed.
    pub fn encode(message_type: u8, size: usize) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[..4].copy_from_slice(&MAGIC);
        h[4] = 1; // protocol 1.0
        h[5] = 0;
        h[6] = 1; // protocol encoding 1.0
        h[7] = 0;
        h[8] = message_type;
        h[9] = 0;
        h[10..14].copy_from_slice(&(size as i32).to_le_bytes());
        h
    }

    /// Validates the first [`HEADER_LEN`] bytes of `buf`.
    pub fn decode(buf: &[u8]) -> Result<Header, Error> {
        let h: &[u8; HEADER_LEN] = buf
            .get(..HEADER_LEN)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| malformed("a message header is 14 bytes"))?;
        if h[..4] != MAGIC {
            return Err(malformed(format!(
                "bad magic {:02x?}: not an Ice peer (is the target an Ice endpoint?)",
                &h[..4]
            )));
        }
        if h[4] != 1 {
            return Err(malformed(format!(
                "unsupported Ice protocol {}.{} (this client speaks 1.0)",
                h[4], h[5]
            )));
        }
        if h[6] != 1 {
            return Err(malformed(format!(
                "unsupported protocol encoding {}.{} (this client speaks 1.0)",
                h[6], h[7]
            )));
        }
        let message_type = h[8];
        if message_type > CLOSE_CONNECTION {
            return Err(malformed(format!("unknown message type {message_type}")));
        }
        let compression = h[9];
        if compression == 2 {
            return Err(malformed(
                "a bzip2-compressed message: this client never asks for compression \
                 (compression status 0), so the peer must not compress",
            ));
        }
        if compression > 2 {
            return Err(malformed(format!("bad compression status {compression}")));
        }
        let size = i32::from_le_bytes([h[10], h[11], h[12], h[13]]);
        if size < HEADER_LEN as i32 {
            return Err(malformed(format!(
                "message size {size} below the header's 14"
            )));
        }
        let size = size as usize;
        if size > MAX_MESSAGE {
            return Err(malformed(format!(
                "message of {size} bytes exceeds this client's limit of {MAX_MESSAGE}"
            )));
        }
        if matches!(message_type, VALIDATE_CONNECTION | CLOSE_CONNECTION) && size != HEADER_LEN {
            return Err(malformed(format!(
                "a validate/close connection message is 14 bytes, not {size}"
            )));
        }
        Ok(Header {
            message_type,
            compression,
            size,
        })
    }
}

/// The header of the next complete message in `buf`, if there is one.
pub fn frame(buf: &[u8]) -> Result<Option<Header>, Error> {
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let header = Header::decode(buf)?;
    Ok((buf.len() >= header.size).then_some(header))
}

/// The 14-byte validate-connection message (also Ice's heartbeat).
pub fn validate_connection() -> [u8; HEADER_LEN] {
    Header::encode(VALIDATE_CONNECTION, HEADER_LEN)
}

/// The 14-byte close-connection message (graceful close).
pub fn close_connection() -> [u8; HEADER_LEN] {
    Header::encode(CLOSE_CONNECTION, HEADER_LEN)
}

/// An Ice object identity.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    pub name: String,
    pub category: String,
}

impl Identity {
    /// Parses Ice's stringified form `category/name` or `name` (no escapes:
    /// identities in the lab are plain words).
    pub fn parse(s: &str) -> Identity {
        match s.split_once('/') {
            Some((category, name)) => Identity {
                name: name.to_owned(),
                category: category.to_owned(),
            },
            None => Identity {
                name: s.to_owned(),
                category: String::new(),
            },
        }
    }
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.category.is_empty() {
            f.write_str(&self.name)
        } else {
            write!(f, "{}/{}", self.category, self.name)
        }
    }
}

// ---------------------------------------------------------------- encoding

/// Appends an Ice size.
pub fn write_size(out: &mut Vec<u8>, n: usize) {
    if n < 255 {
        out.push(n as u8);
    } else {
        out.push(255);
        out.extend_from_slice(&(n as i32).to_le_bytes());
    }
}

pub fn write_string(out: &mut Vec<u8>, s: &str) {
    write_size(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

/// Appends a whole request message (header included): `request_id` (0 is
/// a oneway request; the lab only sends twoway ones), to `identity`'s
/// default facet, `operation` in `mode`, an empty context and the
/// parameters written by `params` into an encoding-1.1 encapsulation.
pub fn encode_request(
    out: &mut Vec<u8>,
    request_id: i32,
    identity: &Identity,
    operation: &str,
    mode: u8,
    params: impl FnOnce(&mut Vec<u8>),
) {
    let start = out.len();
    out.extend_from_slice(&Header::encode(REQUEST, 0));
    out.extend_from_slice(&request_id.to_le_bytes());
    write_string(out, &identity.name);
    write_string(out, &identity.category);
    write_size(out, 0); // facet: none
    write_string(out, operation);
    out.push(mode);
    write_size(out, 0); // context: empty
    let encaps = out.len();
    out.extend_from_slice(&[0, 0, 0, 0, ENCODING_1_1.0, ENCODING_1_1.1]);
    params(out);
    let encaps_size = (out.len() - encaps) as i32;
    out[encaps..encaps + 4].copy_from_slice(&encaps_size.to_le_bytes());
    let size = (out.len() - start) as i32;
    out[start + 10..start + 14].copy_from_slice(&size.to_le_bytes());
}

/// Where a request message's request id lies: the 4 bytes after the
/// header.
pub const REQUEST_ID_AT: std::ops::Range<usize> = HEADER_LEN..HEADER_LEN + 4;

/// Writes `request_id` into `message`, a whole request message
/// [`encode_request`] wrote with another id: then what it writes for
/// `request_id` (the id is the only part of a request that changes from
/// call to call). False, and nothing written, for bytes that are not a
/// request message.
pub fn restamp_request(message: &mut [u8], request_id: i32) -> bool {
    if message.get(8) != Some(&REQUEST) {
        return false;
    }
    match message.get_mut(REQUEST_ID_AT) {
        Some(at) => {
            at.copy_from_slice(&request_id.to_le_bytes());
            true
        }
        None => false,
    }
}

// ---------------------------------------------------------------- decoding

fn malformed(why: impl Into<String>) -> Error {
    Error::Malformed(why.into())
}

/// Why bytes could not be read as what was asked for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The bytes are not a valid message (truncated, a bad header, size,
    /// string or encapsulation, bytes left over).
    #[error("{0}")]
    Malformed(String),
    /// A well-formed reply that reports a failure in the peer: a user
    /// exception, a missing object, facet or operation, an unknown
    /// exception.
    #[error("{0}")]
    Remote(String),
}

/// A cursor over encoded bytes. Every read checks bounds; sequence sizes
/// are checked against the bytes left before anything is allocated.
#[derive(Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if n > self.remaining() {
            return Err(malformed(format!(
                "truncated: {n} bytes wanted at offset {}, {} left",
                self.pos,
                self.remaining()
            )));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn read_u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }

    pub fn read_bool(&mut self) -> Result<bool, Error> {
        match self.read_u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(malformed(format!("bad bool {b}"))),
        }
    }

    pub fn read_i16(&mut self) -> Result<i16, Error> {
        Ok(i16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }

    pub fn read_i32(&mut self) -> Result<i32, Error> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }

    pub fn read_i64(&mut self) -> Result<i64, Error> {
        Ok(i64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }

    pub fn read_f64(&mut self) -> Result<f64, Error> {
        Ok(f64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }

    pub fn read_size(&mut self) -> Result<usize, Error> {
        match self.read_u8()? {
            255 => {
                let n = self.read_i32()?;
                if n < 0 {
                    return Err(malformed(format!("negative size {n}")));
                }
                Ok(n as usize)
            }
            n => Ok(n as usize),
        }
    }

    /// A sequence size whose elements take at least `min_element` bytes
    /// each: a size the remaining bytes cannot hold is an error here, so a
    /// forged size never drives an allocation.
    pub fn read_seq_size(&mut self, min_element: usize) -> Result<usize, Error> {
        let n = self.read_size()?;
        if n.saturating_mul(min_element.max(1)) > self.remaining() {
            return Err(malformed(format!(
                "sequence of {n} elements cannot fit in the {} bytes left",
                self.remaining()
            )));
        }
        Ok(n)
    }

    pub fn read_str(&mut self) -> Result<&'a str, Error> {
        let n = self.read_size()?;
        let bytes = self.take(n)?;
        std::str::from_utf8(bytes).map_err(|e| malformed(format!("string is not UTF-8: {e}")))
    }

    pub fn read_string(&mut self) -> Result<String, Error> {
        self.read_str().map(str::to_owned)
    }

    pub fn read_string_seq(&mut self) -> Result<Vec<String>, Error> {
        let n = self.read_seq_size(1)?;
        (0..n).map(|_| self.read_string()).collect()
    }

    pub fn read_identity(&mut self) -> Result<Identity, Error> {
        Ok(Identity {
            name: self.read_string()?,
            category: self.read_string()?,
        })
    }

    /// Reads an encapsulation's header and returns its data (the bytes
    /// after the 6-byte header), with its encoding.
    pub fn read_encapsulation(&mut self) -> Result<((u8, u8), &'a [u8]), Error> {
        let size = self.read_i32()?;
        if size < 6 {
            return Err(malformed(format!("encapsulation size {size} below 6")));
        }
        let data = self.take(size as usize - 4)?;
        let encoding = (data[0], data[1]);
        if encoding.0 != 1 || encoding.1 > 1 {
            return Err(malformed(format!(
                "unsupported encapsulation encoding {}.{} (this client reads 1.0 and 1.1)",
                encoding.0, encoding.1
            )));
        }
        Ok((encoding, &data[2..]))
    }

    /// Errors unless every byte was read.
    pub fn finish(&self, what: &str) -> Result<(), Error> {
        if self.remaining() == 0 {
            Ok(())
        } else {
            Err(malformed(format!(
                "{} unexpected bytes after {what}",
                self.remaining()
            )))
        }
    }
}

/// The status byte of a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyStatus {
    Ok = 0,
    UserException = 1,
    ObjectNotExist = 2,
    FacetNotExist = 3,
    OperationNotExist = 4,
    UnknownLocalException = 5,
    UnknownUserException = 6,
    UnknownException = 7,
}

impl ReplyStatus {
    pub fn from_u8(b: u8) -> Result<ReplyStatus, Error> {
        Ok(match b {
            0 => ReplyStatus::Ok,
            1 => ReplyStatus::UserException,
            2 => ReplyStatus::ObjectNotExist,
            3 => ReplyStatus::FacetNotExist,
            4 => ReplyStatus::OperationNotExist,
            5 => ReplyStatus::UnknownLocalException,
            6 => ReplyStatus::UnknownUserException,
            7 => ReplyStatus::UnknownException,
            b => return Err(malformed(format!("unknown reply status {b}"))),
        })
    }
}

/// Splits a reply message (header included) into its request id and the
/// rest, for routing by the connection's reader.
pub fn reply_request_id(message: &[u8]) -> Result<i32, Error> {
    let mut r = Reader::new(message.get(HEADER_LEN..).unwrap_or_default());
    r.read_i32()
}

/// Decodes a reply's body (after its request id, i.e. from the status
/// byte) into the parameters of a success, or the reply's failure as a
/// clear error: [`Error::Remote`] for what the server reports (a user
/// exception, a missing object, facet or operation, an unknown exception),
/// [`Error::Malformed`] for bytes that are not a valid reply.
pub fn reply_params<'a>(body: &'a [u8], operation: &str) -> Result<&'a [u8], Error> {
    let mut r = Reader::new(body);
    let status = ReplyStatus::from_u8(r.read_u8()?)?;
    match status {
        ReplyStatus::Ok => {
            let (_, data) = r.read_encapsulation()?;
            r.finish("the reply's encapsulation")?;
            Ok(data)
        }
        ReplyStatus::UserException => {
            let (encoding, data) = r.read_encapsulation()?;
            Err(Error::Remote(format!(
                "`{operation}` raised user exception {}",
                user_exception_type(encoding, data)
                    .unwrap_or_else(|| "(type id not readable)".to_owned())
            )))
        }
        ReplyStatus::ObjectNotExist
        | ReplyStatus::FacetNotExist
        | ReplyStatus::OperationNotExist => {
            let identity = r.read_identity()?;
            let facet = r.read_string_seq()?;
            let op = r.read_string()?;
            r.finish("the reply")?;
            let what = match status {
                ReplyStatus::ObjectNotExist => {
                    "object does not exist (ObjectNotExistException): check the identity"
                }
                ReplyStatus::FacetNotExist => "facet does not exist (FacetNotExistException)",
                _ => {
                    "operation does not exist (OperationNotExistException): \
                     the server's Slice differs from contract/bench.ice"
                }
            };
            Err(Error::Remote(format!(
                "{what}: identity `{identity}`, facet `{}`, operation `{op}`",
                facet.first().map(String::as_str).unwrap_or("")
            )))
        }
        ReplyStatus::UnknownLocalException
        | ReplyStatus::UnknownUserException
        | ReplyStatus::UnknownException => {
            let unknown = r.read_string()?;
            r.finish("the reply")?;
            let kind = match status {
                ReplyStatus::UnknownLocalException => "UnknownLocalException",
                ReplyStatus::UnknownUserException => "UnknownUserException",
                _ => "UnknownException",
            };
            Err(Error::Remote(format!(
                "`{operation}` failed in the server with {kind}: {unknown}"
            )))
        }
    }
}

/// The most-derived type id of a user exception: in encoding 1.1 the
/// first slice's flags byte, then its type id (exception slices always
/// carry the type id as a string); in 1.0 a bool "uses classes", then the
/// type id.
fn user_exception_type(encoding: (u8, u8), data: &[u8]) -> Option<String> {
    let mut r = Reader::new(data);
    if encoding == (1, 0) {
        r.read_bool().ok()?;
    } else {
        r.read_u8().ok()?;
    }
    r.read_string().ok()
}

// ---------------------------------------------------------------- proxies

/// A TCP endpoint of a proxy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpEndpoint {
    pub host: String,
    pub port: u16,
}

impl fmt::Display for TcpEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tcp -h {} -p {}", self.host, self.port)
    }
}

/// A proxy as encoded in encoding 1.1, with what the lab needs of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proxy {
    pub identity: Identity,
    /// TCP endpoints (other transports are skipped).
    pub endpoints: Vec<TcpEndpoint>,
    /// Transports other than TCP that the proxy lists (type ids).
    pub other_endpoints: Vec<i16>,
    /// The adapter id of an indirect proxy (no endpoints).
    pub adapter_id: String,
}

/// Endpoint type of TCP.
pub const TCP_ENDPOINT: i16 = 1;

/// Reads a proxy (`None` for a null proxy).
pub fn read_proxy(r: &mut Reader<'_>) -> Result<Option<Proxy>, Error> {
    let identity = r.read_identity()?;
    if identity.name.is_empty() {
        return Ok(None);
    }
    let _facet = r.read_string_seq()?;
    let _mode = r.read_u8()?;
    let _secure = r.read_bool()?;
    // Encoding 1.1 adds the proxy's protocol and encoding versions.
    let _protocol = (r.read_u8()?, r.read_u8()?);
    let _encoding = (r.read_u8()?, r.read_u8()?);
    let count = r.read_seq_size(2 + 6)?;
    let mut endpoints = Vec::new();
    let mut other_endpoints = Vec::new();
    for _ in 0..count {
        let kind = r.read_i16()?;
        let (_, data) = r.read_encapsulation()?;
        if kind == TCP_ENDPOINT {
            let mut e = Reader::new(data);
            let host = e.read_string()?;
            let port = e.read_i32()?;
            let _timeout = e.read_i32()?;
            let _compress = e.read_bool()?;
            let port = u16::try_from(port)
                .map_err(|_| malformed(format!("TCP endpoint port {port} out of range")))?;
            endpoints.push(TcpEndpoint { host, port });
        } else {
            other_endpoints.push(kind);
        }
    }
    let adapter_id = if count == 0 {
        r.read_string()?
    } else {
        String::new()
    };
    Ok(Some(Proxy {
        identity,
        endpoints,
        other_endpoints,
        adapter_id,
    }))
}

/// Appends `::Ice::Locator::findAdapterById(adapter_id)`, in mode
/// [`MODE_NONMUTATING`] as Ice's own runtime sends it.
pub fn encode_find_adapter_by_id(
    out: &mut Vec<u8>,
    request_id: i32,
    locator: &Identity,
    adapter_id: &str,
) {
    encode_request(
        out,
        request_id,
        locator,
        "findAdapterById",
        MODE_NONMUTATING,
        |o| write_string(o, adapter_id),
    );
}

/// Decodes the reply body of `findAdapterById`: the adapter's proxy, or
/// `None` when the locator knows the adapter but it has no endpoints.
pub fn decode_find_adapter_reply(body: &[u8]) -> Result<Option<Proxy>, Error> {
    let data = reply_params(body, "findAdapterById").map_err(|e| match e {
        Error::Remote(m) if m.contains("AdapterNotFoundException") => Error::Remote(format!(
            "{m}: the locator has no such adapter; is the IceGrid application deployed?"
        )),
        other => other,
    })?;
    let mut r = Reader::new(data);
    let proxy = read_proxy(&mut r)?;
    r.finish("the proxy")?;
    Ok(proxy)
}

// ------------------------------------------------ the server's side (tests)

/// A request as a server reads it (used by the tests' fake servers and by
/// the fuzz target; the load client never reads requests).
#[derive(Debug, PartialEq, Eq)]
pub struct Request<'a> {
    pub id: i32,
    pub identity: Identity,
    pub facet: Vec<String>,
    pub operation: String,
    pub mode: u8,
    pub context: Vec<(String, String)>,
    pub encoding: (u8, u8),
    pub params: &'a [u8],
}

/// Reads a request message (header included).
pub fn decode_request(message: &[u8]) -> Result<Request<'_>, Error> {
    let header = Header::decode(message)?;
    if header.message_type != REQUEST || header.size != message.len() {
        return Err(malformed(format!(
            "not one whole request message (type {}, size {} of {})",
            header.message_type,
            header.size,
            message.len()
        )));
    }
    let mut r = Reader::new(&message[HEADER_LEN..]);
    let id = r.read_i32()?;
    let identity = r.read_identity()?;
    let facet = r.read_string_seq()?;
    let operation = r.read_string()?;
    let mode = r.read_u8()?;
    let n = r.read_seq_size(2)?;
    let mut context = Vec::with_capacity(n);
    for _ in 0..n {
        context.push((r.read_string()?, r.read_string()?));
    }
    let (encoding, params) = r.read_encapsulation()?;
    r.finish("the request")?;
    Ok(Request {
        id,
        identity,
        facet,
        operation,
        mode,
        context,
        encoding,
        params,
    })
}

/// Appends a whole reply message: `status`, then what `body` writes (for
/// [`ReplyStatus::Ok`] and [`ReplyStatus::UserException`], the
/// encapsulation is added around it).
pub fn encode_reply(
    out: &mut Vec<u8>,
    request_id: i32,
    status: ReplyStatus,
    body: impl FnOnce(&mut Vec<u8>),
) {
    let start = out.len();
    out.extend_from_slice(&Header::encode(REPLY, 0));
    out.extend_from_slice(&request_id.to_le_bytes());
    out.push(status as u8);
    if matches!(status, ReplyStatus::Ok | ReplyStatus::UserException) {
        let encaps = out.len();
        out.extend_from_slice(&[0, 0, 0, 0, ENCODING_1_1.0, ENCODING_1_1.1]);
        body(out);
        let size = (out.len() - encaps) as i32;
        out[encaps..encaps + 4].copy_from_slice(&size.to_le_bytes());
    } else {
        body(out);
    }
    let size = (out.len() - start) as i32;
    out[start + 10..start + 14].copy_from_slice(&size.to_le_bytes());
}

/// Every decoding entry point of this crate over arbitrary bytes: each
/// must return, never panic, hang or allocate beyond the input's size.
/// The body of the fuzz target (`fuzz/`).
#[doc(hidden)]
pub fn exercise_decoders(data: &[u8]) {
    let _ = frame(data);
    let _ = decode_request(data);
    let _ = reply_request_id(data);
    let _ = reply_params(data, "op");
    let _ = decode_find_adapter_reply(data);
    let _ = read_proxy(&mut Reader::new(data));
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn sizes() {
        for n in [0usize, 1, 254, 255, 256, 1 << 20] {
            let mut out = Vec::new();
            write_size(&mut out, n);
            assert_eq!(out.len(), if n < 255 { 1 } else { 5 });
            assert_eq!(Reader::new(&out).read_size().unwrap(), n);
        }
        assert!(Reader::new(&[255, 0, 0, 0, 0x80]).read_size().is_err());
    }

    /// A restamped request is the request encoded with that id; other
    /// messages are left alone.
    #[test]
    fn restamped_requests_are_encoded_requests() {
        let encoded = |id| {
            let mut out = Vec::new();
            encode_request(&mut out, id, &Identity::parse("bench"), "hello", 0, |o| {
                write_string(o, "aa")
            });
            out
        };
        let first = encoded(1);
        for id in [1, 2, 0x0102_0304, i32::MAX] {
            let mut request = first.clone();
            assert!(restamp_request(&mut request, id));
            assert_eq!(request, encoded(id), "{id}");
        }
        let mut other = validate_connection();
        assert!(!restamp_request(&mut other, 7));
        assert_eq!(other, validate_connection());
        assert!(!restamp_request(&mut first[..HEADER_LEN + 3].to_vec(), 7));
    }

    #[test]
    fn bad_headers() {
        let mut h = validate_connection();
        assert!(Header::decode(&h).is_ok());
        h[0] = b'X';
        assert!(Header::decode(&h).is_err());
        let mut big = Header::encode(REPLY, 0);
        big[10..14].copy_from_slice(&i32::MAX.to_le_bytes());
        assert!(Header::decode(&big).is_err());
        let mut small = Header::encode(REPLY, 0);
        small[10..14].copy_from_slice(&3i32.to_le_bytes());
        assert!(Header::decode(&small).is_err());
    }
}
