//! HTTP/2 frames (RFC 9113 §4 and §6) as the gRPC client writes and reads
//! them: the frame header, the few frames the client sends (its preface,
//! HEADERS and DATA of a call, acknowledgements, window updates, resets),
//! and the request's header block.
//!
//! The request's header block is encoded once per prepared call (RFC 7541):
//! `:method POST` and `:scheme http` indexed from the static table, every
//! other field a literal *without indexing* (with the static table's name
//! where it has one). Such a block never touches the server's dynamic
//! table, so the same bytes are valid on every stream of every connection
//! and only the frame header's stream id differs from call to call.

use std::ops::Range;

/// Largest message encoded or decoded, each way: the contract's largest
/// payload is a 1 MiB string, and gRPC's default limit (4 MiB decoding in
/// tonic) leaves little margin for frameworks that pad or wrap.
pub const MAX_MESSAGE_SIZE: usize = 16 * 1024 * 1024;

/// The client connection preface (RFC 9113 §3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Length of a frame header.
pub const HEAD_LEN: usize = 9;

pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const PRIORITY: u8 = 0x2;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PUSH_PROMISE: u8 = 0x5;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;
pub const PADDED: u8 = 0x8;
pub const PRIORITY_FLAG: u8 = 0x20;

/// SETTINGS identifiers (RFC 9113 §6.5.2).
pub const SETTINGS_ENABLE_PUSH: u16 = 0x2;
pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
pub const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;

/// Error codes (RFC 9113 §7) the client sends.
pub const PROTOCOL_ERROR: u32 = 0x1;
pub const CANCEL: u32 = 0x8;

/// A flow-control window's initial size and largest size.
pub const DEFAULT_WINDOW: u32 = 65_535;
pub const MAX_WINDOW: u32 = (1 << 31) - 1;
/// The smallest and largest SETTINGS_MAX_FRAME_SIZE.
pub const DEFAULT_MAX_FRAME: usize = 16_384;
pub const MAX_FRAME_LIMIT: usize = (1 << 24) - 1;
/// Highest client stream id.
pub const MAX_STREAM_ID: u32 = (1 << 31) - 1;

/// The largest frame the client accepts (its SETTINGS_MAX_FRAME_SIZE): the
/// largest allowed, so that a reply of the contract's 1 MiB payload comes
/// in one DATA frame and is handed on without being copied together.
pub const RECV_MAX_FRAME: usize = MAX_FRAME_LIMIT;

/// A frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub len: usize,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

impl Head {
    /// The header at the start of `b` (at least [`HEAD_LEN`] bytes).
    pub fn parse(b: &[u8]) -> Head {
        Head {
            len: (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]),
            kind: b[3],
            flags: b[4],
            // The reserved bit is ignored on receipt.
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & MAX_STREAM_ID,
        }
    }
}

/// Appends a frame header.
pub fn put_head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    debug_assert!(len <= MAX_FRAME_LIMIT);
    out.extend_from_slice(&(len as u32).to_be_bytes()[1..]);
    out.push(kind);
    out.push(flags);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// Appends a whole frame.
pub fn put_frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    put_head(out, payload.len(), kind, flags, stream);
    out.extend_from_slice(payload);
}

pub fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_frame(out, WINDOW_UPDATE, 0, stream, &increment.to_be_bytes());
}

pub fn put_rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    put_frame(out, RST_STREAM, 0, stream, &code.to_be_bytes());
}

pub fn put_goaway(out: &mut Vec<u8>, last_stream: u32, code: u32) {
    let mut payload = [0; 8];
    payload[..4].copy_from_slice(&last_stream.to_be_bytes());
    payload[4..].copy_from_slice(&code.to_be_bytes());
    put_frame(out, GOAWAY, 0, 0, &payload);
}

/// The receive window the client gives the connection, and how much DATA
/// it lets arrive before giving it back.
pub const CONNECTION_WINDOW: u32 = MAX_WINDOW;
pub const WINDOW_REFILL: u64 = 1 << 30;

/// The client's preface: the magic, its SETTINGS (no push, the largest
/// stream window, the largest frames) and a WINDOW_UPDATE raising the
/// connection's receive window to [`CONNECTION_WINDOW`]. With a stream
/// window larger than any reply the client accepts, it never needs to
/// give a stream's window back, only the connection's.
pub fn preface() -> Vec<u8> {
    let mut out = PREFACE.to_vec();
    let mut settings = Vec::new();
    for (id, value) in [
        (SETTINGS_ENABLE_PUSH, 0),
        (SETTINGS_INITIAL_WINDOW_SIZE, MAX_WINDOW),
        (SETTINGS_MAX_FRAME_SIZE, RECV_MAX_FRAME as u32),
    ] {
        settings.extend_from_slice(&id.to_be_bytes());
        settings.extend_from_slice(&value.to_be_bytes());
    }
    put_frame(&mut out, SETTINGS, 0, 0, &settings);
    put_window_update(&mut out, 0, CONNECTION_WINDOW - DEFAULT_WINDOW);
    out
}

/// The part of a HEADERS or DATA payload that is not padding (nor, for
/// HEADERS with the PRIORITY flag, the priority fields).
pub fn unpadded(kind: u8, flags: u8, payload: &[u8]) -> Result<Range<usize>, String> {
    let (mut start, mut end) = (0, payload.len());
    if flags & PADDED != 0 {
        let Some(&pad) = payload.first() else {
            return Err("a padded frame without its pad length".into());
        };
        start = 1;
        end = end
            .checked_sub(usize::from(pad))
            .ok_or_else(|| format!("padding of {pad} bytes in a frame of {}", payload.len()))?;
    }
    if kind == HEADERS && flags & PRIORITY_FLAG != 0 {
        start += 5;
    }
    if start > end {
        return Err(format!(
            "padding and priority longer than a frame of {} bytes",
            payload.len()
        ));
    }
    Ok(start..end)
}

/// HPACK integer with an `prefix_bits`-bit prefix (RFC 7541 §5.1).
pub(crate) fn put_integer(out: &mut Vec<u8>, prefix_bits: u8, first: u8, mut v: usize) {
    let max = (1usize << prefix_bits) - 1;
    if v < max {
        out.push(first | v as u8);
        return;
    }
    out.push(first | max as u8);
    v -= max;
    while v >= 128 {
        out.push((v % 128 + 128) as u8);
        v /= 128;
    }
    out.push(v as u8);
}

/// HPACK literal field without indexing: the static table's name `index`,
/// or (index 0) the name as a literal; the value as a literal. Strings are
/// not Huffman-coded.
pub fn put_literal(out: &mut Vec<u8>, index: usize, name: &str, value: &str) {
    put_integer(out, 4, 0, index);
    if index == 0 {
        put_integer(out, 7, 0, name.len());
        out.extend_from_slice(name.as_bytes());
    }
    put_integer(out, 7, 0, value.len());
    out.extend_from_slice(value.as_bytes());
}

/// The header block of a gRPC request to `path` on `authority` (see the
/// module documentation).
pub fn request_headers(path: &str, authority: &str, user_agent: &str) -> Vec<u8> {
    request_headers_over(path, authority, user_agent, false)
}

/// [`request_headers`], with `:scheme https` when the connection is TLS.
pub fn request_headers_over(path: &str, authority: &str, user_agent: &str, tls: bool) -> Vec<u8> {
    let mut b = Vec::with_capacity(64 + path.len() + authority.len());
    b.push(0x80 | 3); // :method POST
                      // :scheme https (static index 7) or http (6).
    b.push(0x80 | if tls { 7 } else { 6 });
    put_literal(&mut b, 4, ":path", path);
    put_literal(&mut b, 1, ":authority", authority);
    put_literal(&mut b, 31, "content-type", "application/grpc");
    put_literal(&mut b, 0, "te", "trailers");
    put_literal(&mut b, 58, "user-agent", user_agent);
    b
}

/// A call's stream reset by the server (RST_STREAM with `code`), as both
/// engines report it.
pub fn reset_by_server(target: &str, code: u32) -> crate::protocol::CallError {
    crate::protocol::CallError::Io(std::io::Error::new(
        std::io::ErrorKind::ConnectionReset,
        format!(
            "{target}: stream reset (RST_STREAM) by the server: {}",
            error_name(code)
        ),
    ))
}

/// A call's connection closed by the server's GOAWAY (`code`, and its debug
/// data when it sent any), as both engines report it.
pub fn closed_by_server(target: &str, code: u32, debug: &str) -> crate::protocol::CallError {
    let debug = if debug.is_empty() {
        String::new()
    } else {
        format!(" ({debug})")
    };
    crate::protocol::CallError::Io(std::io::Error::new(
        std::io::ErrorKind::ConnectionAborted,
        format!(
            "{target}: connection closed (GOAWAY) by the server: {}{debug}",
            error_name(code)
        ),
    ))
}

/// The name of an HTTP/2 error code (RFC 9113 §7).
pub fn error_name(code: u32) -> String {
    let name = match code {
        0x0 => "NO_ERROR",
        0x1 => "PROTOCOL_ERROR",
        0x2 => "INTERNAL_ERROR",
        0x3 => "FLOW_CONTROL_ERROR",
        0x4 => "SETTINGS_TIMEOUT",
        0x5 => "STREAM_CLOSED",
        0x6 => "FRAME_SIZE_ERROR",
        0x7 => "REFUSED_STREAM",
        0x8 => "CANCEL",
        0x9 => "COMPRESSION_ERROR",
        0xa => "CONNECT_ERROR",
        0xb => "ENHANCE_YOUR_CALM",
        0xc => "INADEQUATE_SECURITY",
        0xd => "HTTP_1_1_REQUIRED",
        _ => return format!("error code {code:#x}"),
    };
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_headers_round_trip_and_ignore_the_reserved_bit() {
        let mut out = Vec::new();
        put_head(&mut out, 70_000, HEADERS, END_HEADERS | END_STREAM, 7);
        assert_eq!(out.len(), HEAD_LEN);
        let head = Head::parse(&out);
        assert_eq!(
            head,
            Head {
                len: 70_000,
                kind: HEADERS,
                flags: END_HEADERS | END_STREAM,
                stream: 7
            }
        );
        out[5] |= 0x80;
        assert_eq!(Head::parse(&out).stream, 7);
    }

    #[test]
    fn padding_and_priority_are_stripped() {
        assert_eq!(unpadded(DATA, 0, b"abc").unwrap(), 0..3);
        assert_eq!(unpadded(DATA, PADDED, b"\x02abcxx").unwrap(), 1..4);
        assert_eq!(unpadded(DATA, PADDED, b"\x00").unwrap(), 1..1);
        let headers = b"\x01\0\0\0\x03\x10blockp";
        assert_eq!(
            unpadded(HEADERS, PADDED | PRIORITY_FLAG, headers).unwrap(),
            6..11
        );
        // PRIORITY means nothing on DATA.
        assert_eq!(unpadded(DATA, PRIORITY_FLAG, b"ab").unwrap(), 0..2);
        for (kind, flags, bad) in [
            (DATA, PADDED, &b""[..]),
            (DATA, PADDED, b"\x03ab"),
            (HEADERS, PRIORITY_FLAG, b"\0\0\0"),
            (HEADERS, PADDED | PRIORITY_FLAG, b"\x01\0\0\0\x03\x10"),
        ] {
            assert!(unpadded(kind, flags, bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn hpack_integers_follow_rfc_7541_c1() {
        let mut out = Vec::new();
        put_integer(&mut out, 5, 0, 10);
        assert_eq!(out, [10]);
        out.clear();
        put_integer(&mut out, 5, 0, 1337);
        assert_eq!(out, [31, 154, 10]);
        out.clear();
        put_integer(&mut out, 8, 0, 42);
        assert_eq!(out, [42]);
    }

    #[test]
    fn the_request_block_decodes_to_the_grpc_request_and_never_indexes() {
        let block = request_headers("/rpclab.Bench/Hello", "127.0.0.1:1", "rpclab-client/0");
        let mut decoder = loona_hpack::Decoder::new();
        for _ in 0..2 {
            let fields = decoder.decode(&block).unwrap();
            let fields: Vec<(&[u8], &[u8])> =
                fields.iter().map(|(n, v)| (&n[..], &v[..])).collect();
            assert_eq!(
                fields,
                [
                    (&b":method"[..], &b"POST"[..]),
                    (b":scheme", b"http"),
                    (b":path", b"/rpclab.Bench/Hello"),
                    (b":authority", b"127.0.0.1:1"),
                    (b"content-type", b"application/grpc"),
                    (b"te", b"trailers"),
                    (b"user-agent", b"rpclab-client/0"),
                ]
            );
        }
        // No field was added to the dynamic table: index 62 is still empty.
        assert!(decoder.decode(&[0x80 | 62]).is_err());
    }

    #[test]
    fn the_preface_starts_with_the_magic_and_settings() {
        let p = preface();
        assert!(p.starts_with(PREFACE));
        let settings = Head::parse(&p[PREFACE.len()..]);
        assert_eq!(
            (settings.kind, settings.stream, settings.len),
            (SETTINGS, 0, 18)
        );
        let update = Head::parse(&p[PREFACE.len() + HEAD_LEN + 18..]);
        assert_eq!((update.kind, update.len), (WINDOW_UPDATE, 4));
        assert_eq!(error_name(7), "REFUSED_STREAM");
        assert_eq!(error_name(0x42), "error code 0x42");
    }
}
