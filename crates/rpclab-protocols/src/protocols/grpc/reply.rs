//! Checking a gRPC reply as it arrives: its two header blocks (HPACK,
//! decoded by `loona-hpack`, which keeps the dynamic table the server
//! indexes into and decodes Huffman-coded strings) and its DATA.
//!
//! A block's fields are read as they are decoded, into [`Fields`]: only
//! what the checks need is kept, and nothing is copied unless the reply is
//! a failure (an unexpected content type, a `grpc-message`). A reply is
//! right when its head has `:status` 200 and `content-type`
//! `application/grpc` (or `application/grpc+...`), its DATA is exactly one
//! uncompressed length-prefixed message, and its trailers (or, with no
//! message, its Trailers-Only head) say `grpc-status` 0.

use crate::protocol::CallError;
use bytes::{Bytes, BytesMut};
use loona_hpack::Decoder;

use super::frame::MAX_MESSAGE_SIZE;

/// The gRPC length prefix: a compressed flag and a 4-byte big-endian length.
pub const PREFIX: usize = 5;

/// What a header block said, of what the checks read.
#[derive(Debug, Default)]
pub struct Fields {
    /// `:status`, 0 if it is not a number.
    status: Option<u16>,
    /// Whether `content-type` was gRPC's; its value if it was not.
    grpc_type: Option<Result<(), String>>,
    /// `grpc-status`: the code, or the value if it is not a number.
    grpc_status: Option<Result<u32, String>>,
    grpc_message: Option<Vec<u8>>,
    /// The block's other fields (`name: value; ...`), kept only for a
    /// block that ends the stream ([`Fields::ending`]) and only if there
    /// are any: what a failed call's example shows of the server's
    /// trailers, beside its status.
    others: Option<String>,
    keep_others: bool,
}

/// The most of a reply's other trailers a failure keeps.
const OTHERS_MAX: usize = 512;

impl Fields {
    fn field(&mut self, name: &[u8], value: &[u8]) {
        match name {
            b":status" => {
                // Every right reply's, read without a UTF-8 check and a
                // parse (about 140 instructions a call).
                let status = if value == b"200" {
                    Some(200)
                } else {
                    std::str::from_utf8(value).ok().and_then(|s| s.parse().ok())
                };
                self.status = Some(status.unwrap_or(0));
            }
            b"content-type" => {
                let grpc = value
                    .strip_prefix(b"application/grpc")
                    .is_some_and(|rest| rest.is_empty() || rest[0] == b'+' || rest[0] == b';');
                self.grpc_type = Some(if grpc {
                    Ok(())
                } else {
                    Err(String::from_utf8_lossy(value).into_owned())
                });
            }
            b"grpc-status" => {
                let code = if value == b"0" {
                    Some(0)
                } else {
                    std::str::from_utf8(value).ok().and_then(|s| s.parse().ok())
                };
                self.grpc_status = Some(code.ok_or_else(|| String::from_utf8_lossy(value).into()));
            }
            b"grpc-message" => self.grpc_message = Some(value.to_vec()),
            // What any HTTP server adds to a head (hyper's `date`), or the
            // reply's encodings: nothing of the server's own about the
            // failure, and `date` would make every example unique.
            b"date"
            | b"server"
            | b"content-length"
            | b"grpc-encoding"
            | b"grpc-accept-encoding" => {}
            _ if self.keep_others => {
                let others = self.others.get_or_insert_with(String::new);
                if others.len() < OTHERS_MAX {
                    if !others.is_empty() {
                        others.push_str("; ");
                    }
                    let name = String::from_utf8_lossy(name);
                    others.push_str(&name);
                    others.push_str(": ");
                    let value = String::from_utf8_lossy(value);
                    // A binary value (`-bin`, base64) can be long: its start.
                    let cut = value
                        .char_indices()
                        .nth(80)
                        .map_or(value.len(), |(at, _)| at);
                    others.push_str(&value[..cut]);
                    if cut < value.len() {
                        others.push('…');
                    }
                }
            }
            _ => {}
        }
    }

    /// The fields of a block that ends the stream (trailers, or a
    /// Trailers-Only head), which keep the server's other fields for a
    /// failure's example.
    pub fn ending() -> Fields {
        Fields {
            keep_others: true,
            ..Fields::default()
        }
    }

    /// Whether this is an informational (1xx) head, to be skipped.
    pub fn is_informational(&self) -> bool {
        self.status.is_some_and(|s| (100..200).contains(&s))
    }
}

/// Decodes one whole header block (gathered in `block`, emptied after)
/// into its fields, a block that ends its stream read as trailers. An
/// error breaks the connection: the decoder's table is no longer the
/// server's.
pub fn decode_block(
    decoder: &mut Decoder<'static>,
    block: &mut Vec<u8>,
    end_stream: bool,
) -> Result<Fields, String> {
    let mut fields = if end_stream {
        Fields::ending()
    } else {
        Fields::default()
    };
    let decoded = decoder
        .decode_with_cb(block, |name, value| fields.field(&name, &value))
        .map_err(|e| format!("undecodable header block (HPACK): {e:?}"));
    block.clear();
    decoded.map(|()| fields)
}

/// Checks a reply's head; `end_stream` when it is a Trailers-Only reply.
pub fn check_head(fields: &Fields, end_stream: bool) -> Result<(), CallError> {
    match fields.status {
        Some(200) => {}
        status => {
            // A proxy or a broken server; a gRPC status, if any, says more.
            if matches!(fields.grpc_status, Some(Ok(code)) if code != 0) {
                grpc_status(fields)?;
            }
            return Err(CallError::Protocol(match status {
                None => "a reply without :status".into(),
                Some(s) => format!("HTTP status {s}, not 200"),
            }));
        }
    }
    match &fields.grpc_type {
        Some(Ok(())) => {}
        other => {
            let found = match other {
                Some(Err(t)) => format!("{t:?}"),
                _ => "none".into(),
            };
            return Err(CallError::Protocol(format!(
                "reply content-type {found}, not application/grpc"
            )));
        }
    }
    if end_stream {
        // Trailers-Only: the status is in the head.
        grpc_status(fields)?;
        return Err(CallError::Protocol(
            "a reply with grpc-status 0 and no message".into(),
        ));
    }
    Ok(())
}

/// `Ok` for `grpc-status` 0; the server's status as an error otherwise (or
/// a protocol error if there is none, or it is not a number).
pub fn grpc_status(fields: &Fields) -> Result<(), CallError> {
    let code = match &fields.grpc_status {
        None => return Err(CallError::Protocol("a reply without grpc-status".into())),
        Some(Err(text)) => {
            return Err(CallError::Protocol(format!(
                "grpc-status {text:?} is not a number"
            )))
        }
        Some(Ok(0)) => return Ok(()),
        Some(Ok(code)) => *code,
    };
    let message = fields
        .grpc_message
        .as_deref()
        .map(percent_decode)
        .unwrap_or_default();
    Err(CallError::Server(match &fields.others {
        Some(others) => format!("{}: {message} (trailers: {others})", code_name(code)),
        None => format!("{}: {message}", code_name(code)),
    }))
}

/// [`grpc_status`] of a `grpc-status` and a `grpc-message` as another
/// HTTP/2 client (the streams' [`h2`]) read them.
pub fn grpc_status_of(status: Option<&[u8]>, message: Option<&[u8]>) -> Result<(), CallError> {
    let fields = Fields {
        grpc_status: status.map(|code| {
            std::str::from_utf8(code)
                .ok()
                .and_then(|c| c.parse::<u32>().ok())
                .ok_or_else(|| String::from_utf8_lossy(code).into_owned())
        }),
        grpc_message: message.map(|m| m.to_vec()),
        ..Fields::default()
    };
    grpc_status(&fields)
}

/// A reply's DATA, gathered: the first chunk as it came (most replies are
/// one DATA frame), later ones appended to a copy.
#[derive(Debug, Default)]
pub struct Gather {
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

    pub fn push(&mut self, chunk: Bytes) -> Result<(), String> {
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
                let total = first.get(1..PREFIX).map_or(0, |l| {
                    PREFIX + u32::from_be_bytes(l.try_into().unwrap()) as usize
                });
                let capacity = total.clamp(first.len() + chunk.len(), PREFIX + MAX_MESSAGE_SIZE);
                let mut more = BytesMut::with_capacity(capacity);
                more.extend_from_slice(first);
                more.extend_from_slice(&chunk);
                self.more = Some(more);
            }
        }
        Ok(())
    }

    pub fn into_bytes(self) -> Bytes {
        match (self.first, self.more) {
            (_, Some(more)) => more.freeze(),
            (Some(first), None) => first,
            (None, None) => Bytes::new(),
        }
    }
}

/// The one message of a unary reply's DATA: an uncompressed length prefix
/// and exactly that many bytes.
pub fn unframe(data: Bytes) -> Result<Bytes, String> {
    message_range(&data).map(|r| data.slice(r))
}

/// [`unframe`] of DATA where it lies (the poll engine's exchange).
pub fn unframe_slice(data: &[u8]) -> Result<&[u8], String> {
    message_range(data).map(|r| &data[r])
}

/// Where the one message of a unary reply's DATA is.
fn message_range(data: &[u8]) -> Result<std::ops::Range<usize>, String> {
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
        std::cmp::Ordering::Equal => Ok(PREFIX..data.len()),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(text: &str) -> Vec<u8> {
        let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
        digits
            .chunks(2)
            .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
            .collect()
    }

    fn decode_all(decoder: &mut Decoder<'static>, block: &[u8]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        decoder
            .decode_with_cb(block, |n, v| {
                out.push((
                    String::from_utf8(n.into_owned()).unwrap(),
                    String::from_utf8(v.into_owned()).unwrap(),
                ))
            })
            .unwrap();
        out
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    /// RFC 7541 C.4: requests with Huffman coding, sharing one dynamic
    /// table.
    #[test]
    fn rfc7541_c4_requests_with_huffman() {
        let mut d = Decoder::new();
        let first = pairs(&[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
        ]);
        assert_eq!(
            decode_all(&mut d, &hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff")),
            first
        );
        let mut second = first.clone();
        second.push(("cache-control".into(), "no-cache".into()));
        assert_eq!(
            decode_all(&mut d, &hex("8286 84be 5886 a8eb 1064 9cbf")),
            second
        );
        let third = pairs(&[
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/index.html"),
            (":authority", "www.example.com"),
            ("custom-key", "custom-value"),
        ]);
        assert_eq!(
            decode_all(
                &mut d,
                &hex("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf")
            ),
            third
        );
    }

    /// RFC 7541 C.6: responses with Huffman coding and a 256-byte table,
    /// so that entries are evicted.
    #[test]
    fn rfc7541_c6_responses_with_huffman_and_eviction() {
        let mut d = Decoder::new();
        d.set_max_table_size(256);
        let date1 = "Mon, 21 Oct 2013 20:13:21 GMT";
        let c61 = hex(
            "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 \
             2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
        );
        assert_eq!(
            decode_all(&mut d, &c61),
            pairs(&[
                (":status", "302"),
                ("cache-control", "private"),
                ("date", date1),
                ("location", "https://www.example.com"),
            ])
        );
        assert_eq!(
            decode_all(&mut d, &hex("4883 640e ffc1 c0bf")),
            pairs(&[
                (":status", "307"),
                ("cache-control", "private"),
                ("date", date1),
                ("location", "https://www.example.com"),
            ])
        );
        let c63 = hex(
            "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab \
             77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f \
             9587 3160 65c0 03ed 4ee5 b106 3d50 07",
        );
        assert_eq!(
            decode_all(&mut d, &c63),
            pairs(&[
                (":status", "200"),
                ("cache-control", "private"),
                ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
                ("location", "https://www.example.com"),
                ("content-encoding", "gzip"),
                (
                    "set-cookie",
                    "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
                ),
            ])
        );
        // ":status 307" was evicted: the table holds three entries now.
        assert!(d.decode(&[0x80 | 65]).is_err());
    }

    fn fields(block: &[(&str, &str)]) -> Fields {
        let mut f = Fields::default();
        for (n, v) in block {
            f.field(n.as_bytes(), v.as_bytes());
        }
        f
    }

    #[test]
    fn a_head_needs_status_200_and_the_grpc_content_type() {
        let ok = [(":status", "200"), ("content-type", "application/grpc")];
        assert!(check_head(&fields(&ok), false).is_ok());
        let proto = [
            (":status", "200"),
            ("content-type", "application/grpc+proto"),
        ];
        assert!(check_head(&fields(&proto), false).is_ok());
        for bad in [
            &[(":status", "503"), ("content-type", "application/grpc")][..],
            &[(":status", "200"), ("content-type", "text/html")],
            &[(":status", "200"), ("content-type", "application/grpcx")],
            &[(":status", "200")],
            &[("content-type", "application/grpc")],
        ] {
            let e = check_head(&fields(bad), false).unwrap_err();
            assert!(matches!(e, CallError::Protocol(_)), "{bad:?}: {e:?}");
        }
        // Trailers-Only: a failure status is the server's error; status 0
        // without a message is broken.
        let only = [
            (":status", "200"),
            ("content-type", "application/grpc"),
            ("grpc-status", "14"),
            ("grpc-message", "going%20away"),
        ];
        let e = check_head(&fields(&only), true).unwrap_err();
        assert!(
            matches!(&e, CallError::Server(m) if m == "UNAVAILABLE: going away"),
            "{e:?}"
        );
        let e = check_head(&fields(&only[..2]), true).unwrap_err();
        assert!(matches!(e, CallError::Protocol(_)), "{e:?}");
        let mut zero = fields(&only[..2]);
        zero.field(b"grpc-status", b"0");
        let e = check_head(&zero, true).unwrap_err();
        assert!(
            matches!(&e, CallError::Protocol(m) if m.contains("no message")),
            "{e:?}"
        );
        // A proxy's 502 with a gRPC status says the status.
        let proxy = [(":status", "502"), ("grpc-status", "14")];
        assert!(matches!(
            check_head(&fields(&proxy), true),
            Err(CallError::Server(_))
        ));
        assert!(fields(&[(":status", "100")]).is_informational());
    }

    #[test]
    fn a_failures_trailers_go_into_its_error_and_a_heads_do_not() {
        let block = [
            ("grpc-status", "16"),
            ("grpc-message", "no%20token"),
            ("date", "Mon, 07 Dec 2026 03:54:47 GMT"),
            ("shop-hint", "send -m"),
            ("grpc-status-details-bin", "CBASCG5vIHRva2Vu"),
        ];
        let mut ending = Fields::ending();
        for (n, v) in block {
            ending.field(n.as_bytes(), v.as_bytes());
        }
        let e = grpc_status(&ending).unwrap_err();
        assert!(
            matches!(&e, CallError::Server(m) if m == "UNAUTHENTICATED: no token (trailers: shop-hint: send -m; grpc-status-details-bin: CBASCG5vIHRva2Vu)"),
            "{e:?}"
        );
        let e = grpc_status(&fields(&block)).unwrap_err();
        assert!(
            matches!(&e, CallError::Server(m) if m == "UNAUTHENTICATED: no token"),
            "{e:?}"
        );
        let long = "x".repeat(200);
        let mut ending = Fields::ending();
        for _ in 0..20 {
            ending.field(b"k", long.as_bytes());
        }
        assert!(ending.others.unwrap().len() < OTHERS_MAX + 100);
    }

    #[test]
    fn server_statuses_keep_code_and_message() {
        assert!(grpc_status(&fields(&[("grpc-status", "0")])).is_ok());
        let err = grpc_status(&fields(&[
            ("grpc-status", "5"),
            ("grpc-message", "no%20such%20thing%3A%20%E2%9C%93%2"),
        ]))
        .unwrap_err();
        assert!(
            matches!(&err, CallError::Server(m) if m == "NOT_FOUND: no such thing: ✓%2"),
            "{err:?}"
        );
        let err = grpc_status(&fields(&[("grpc-status", "99")])).unwrap_err();
        assert!(
            matches!(&err, CallError::Server(m) if m == "UNKNOWN: "),
            "{err:?}"
        );
        for bad in [fields(&[]), fields(&[("grpc-status", "x")])] {
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
        assert_eq!(
            one.into_bytes().as_ptr(),
            chunk.as_ptr(),
            "one chunk: no copy"
        );
    }
}
