//! Finds where one Thrift message ends, without decoding it.
//!
//! The binary and compact protocols carry no message length, so on the
//! buffered framing the client can only know that a reply is complete by
//! walking its structure. [`scan`] does that over the bytes received so
//! far, skipping string bodies by their length prefix (so it costs one step
//! per field, not per byte, and allocates nothing), and says either how long
//! the message is or that more bytes are needed.
//!
//! It also guards the decoder: the `thrift` crate allocates a string's or a
//! list's claimed size before reading it, so a corrupt or hostile length
//! could make it allocate gigabytes. A message is decoded only after
//! [`scan`] has checked that every length in it fits inside the message,
//! which itself is at most the caller's limit. Only the types that the
//! crate and this scanner read the same way are accepted.

use std::ops::Range;

/// Which Thrift protocol encodes the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Binary,
    Compact,
}

/// Thrift message types (`ONEWAY`, 4, never answers a call).
#[cfg(test)]
pub const CALL: u8 = 1;
pub const REPLY: u8 = 2;
pub const EXCEPTION: u8 = 3;

/// The envelope of a complete message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Message type ([`REPLY`], [`EXCEPTION`], ...).
    pub kind: u8,
    pub seqid: i32,
    /// Where the method name is, in the scanned bytes.
    pub name: Range<usize>,
    /// Where the body (the argument, result or exception struct) starts.
    pub body: usize,
    /// Length of the whole message.
    pub len: usize,
}

/// What [`scan`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Scan {
    Complete(Message),
    /// The bytes end inside the message, which is at least this long.
    Incomplete {
        at_least: usize,
    },
}

/// Structure nesting allowed in a message (the `thrift` crate's skip limit).
const MAX_DEPTH: usize = 64;

/// Scans the message at the start of `buf`. A message that is malformed, or
/// whose lengths claim more than `limit` bytes in all, is an error (its
/// description).
///
/// `known_body` is a body (result struct) already scanned whole, such as
/// the call's reference reply: when the bytes after the envelope start with
/// it, the message ends where it ends, and the body is not walked again.
/// That is exact, not a guess: the walk reads nothing but these bytes, so
/// over the same bytes it takes the same steps and stops at the same place.
pub fn scan(
    buf: &[u8],
    encoding: Encoding,
    limit: usize,
    known_body: Option<&[u8]>,
) -> Result<Scan, String> {
    let mut cursor = Cursor {
        buf,
        pos: 0,
        limit,
        known_body,
    };
    let result = match encoding {
        Encoding::Binary => cursor.binary_message(),
        Encoding::Compact => cursor.compact_message(),
    };
    match result {
        Ok(message) => Ok(Scan::Complete(message)),
        Err(Stop::Short(at_least)) => Ok(Scan::Incomplete { at_least }),
        Err(Stop::Invalid(why)) => Err(why),
    }
}

enum Stop {
    /// The message needs at least this many bytes in all.
    Short(usize),
    Invalid(String),
}

type Step<T> = Result<T, Stop>;

fn invalid<T>(why: impl Into<String>) -> Step<T> {
    Err(Stop::Invalid(why.into()))
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    limit: usize,
    known_body: Option<&'a [u8]>,
}

impl Cursor<'_> {
    /// Moves past the body if it is the known one (see [`scan`]).
    fn skip_known_body(&mut self) -> bool {
        let Some(known) = self.known_body else {
            return false;
        };
        let end = self.pos + known.len();
        if end > self.limit || !self.buf[self.pos..].starts_with(known) {
            return false;
        }
        self.pos = end;
        true
    }

    /// Moves past `n` bytes; `n` may be a length read from the wire.
    fn skip(&mut self, n: u64) -> Step<Range<usize>> {
        let end = (self.pos as u64).saturating_add(n);
        if end > self.limit as u64 {
            return invalid(format!(
                "message claims at least {end} bytes, more than the limit of {}",
                self.limit
            ));
        }
        let end = end as usize;
        if end > self.buf.len() {
            return Err(Stop::Short(end));
        }
        let range = self.pos..end;
        self.pos = end;
        Ok(range)
    }

    fn bytes<const N: usize>(&mut self) -> Step<[u8; N]> {
        let range = self.skip(N as u64)?;
        Ok(self.buf[range].try_into().expect("N bytes"))
    }

    fn u8(&mut self) -> Step<u8> {
        Ok(self.bytes::<1>()?[0])
    }

    fn i32_be(&mut self) -> Step<i32> {
        Ok(i32::from_be_bytes(self.bytes::<4>()?))
    }

    /// An unsigned LEB128 varint of at most 10 bytes (compact protocol).
    fn varint(&mut self) -> Step<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let b = self.u8()?;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        invalid("varint longer than 10 bytes")
    }

    /// Checks that `count` elements of at least `min_size` bytes each can
    /// fit in the limit, so a huge count on a short buffer is refused now
    /// rather than waited for.
    fn check_count(&self, count: u64, min_size: u64) -> Step<()> {
        let need = (self.pos as u64).saturating_add(count.saturating_mul(min_size));
        if need > self.limit as u64 {
            return invalid(format!(
                "a collection of {count} elements needs at least {need} bytes, more than the limit of {}",
                self.limit
            ));
        }
        Ok(())
    }

    // ---- binary protocol -------------------------------------------------

    fn binary_message(&mut self) -> Step<Message> {
        let first = self.i32_be()?;
        let (kind, name, seqid);
        if first < 0 {
            // Strict: 0x8001 version, a byte unused, the type.
            let word = first as u32;
            if word & 0xffff_0000 != 0x8001_0000 {
                return invalid(format!("bad binary protocol version {word:#010x}"));
            }
            kind = (word & 0xff) as u8;
            name = self.binary_string()?;
            seqid = self.i32_be()?;
        } else {
            // Old (non-strict): the name's length comes first.
            name = self.skip(first as u64)?;
            kind = self.u8()?;
            seqid = self.i32_be()?;
        }
        self.message_body(Encoding::Binary, kind, seqid, name)
    }

    fn binary_string(&mut self) -> Step<Range<usize>> {
        let len = self.i32_be()?;
        if len < 0 {
            return invalid(format!("negative string length {len}"));
        }
        self.skip(len as u64)
    }

    fn binary_count(&mut self, min_size: u64) -> Step<u64> {
        let count = self.i32_be()?;
        if count < 0 {
            return invalid(format!("negative collection size {count}"));
        }
        self.check_count(count as u64, min_size)?;
        Ok(count as u64)
    }

    fn binary_value(&mut self, ttype: u8, depth: usize) -> Step<()> {
        if depth >= MAX_DEPTH {
            return invalid("structures nested too deep");
        }
        match ttype {
            2 | 3 => {
                self.skip(1)?;
            }
            6 => {
                self.skip(2)?;
            }
            8 => {
                self.skip(4)?;
            }
            4 | 10 => {
                self.skip(8)?;
            }
            11 => {
                self.binary_string()?;
            }
            12 => loop {
                let field_type = self.u8()?;
                if field_type == 0 {
                    break;
                }
                self.skip(2)?; // field id
                self.binary_value(field_type, depth + 1)?;
            },
            13 => {
                let key = binary_type(self.u8()?)?;
                let value = binary_type(self.u8()?)?;
                let count = self.binary_count(binary_min_size(key) + binary_min_size(value))?;
                self.elements(Encoding::Binary, count, key, Some(value), depth)?;
            }
            14 | 15 => {
                let element = binary_type(self.u8()?)?;
                let count = self.binary_count(binary_min_size(element))?;
                self.elements(Encoding::Binary, count, element, None, depth)?;
            }
            other => return invalid(format!("unsupported binary protocol type {other}")),
        }
        Ok(())
    }

    // ---- compact protocol ------------------------------------------------

    fn compact_message(&mut self) -> Step<Message> {
        let id = self.u8()?;
        if id != 0x82 {
            return invalid(format!("bad compact protocol id {id:#04x}"));
        }
        let version_and_type = self.u8()?;
        if version_and_type & 0x1f != 1 {
            return invalid(format!(
                "unsupported compact protocol version {}",
                version_and_type & 0x1f
            ));
        }
        let kind = version_and_type >> 5;
        // The sequence number is written as an unsigned varint of its bits.
        let seqid = self.varint()? as u32 as i32;
        let name_len = self.varint()?;
        let name = self.skip(name_len)?;
        self.message_body(Encoding::Compact, kind, seqid, name)
    }

    /// A value of compact type `ctype` (in a collection or after a field
    /// header; booleans of fields live in the header and never get here).
    fn compact_value(&mut self, ctype: u8, depth: usize) -> Step<()> {
        if depth >= MAX_DEPTH {
            return invalid("structures nested too deep");
        }
        match ctype {
            1..=3 => {
                self.skip(1)?;
            }
            4..=6 => {
                self.varint()?;
            }
            7 => {
                self.skip(8)?;
            }
            8 => {
                let len = self.varint()?;
                self.skip(len)?;
            }
            9 | 10 => {
                let header = self.u8()?;
                let element = compact_type(header & 0x0f)?;
                let count = match header >> 4 {
                    15 => self.varint()?,
                    short => u64::from(short),
                };
                self.check_count(count, compact_min_size(element))?;
                self.elements(Encoding::Compact, count, element, None, depth)?;
            }
            11 => {
                let count = self.varint()?;
                if count > 0 {
                    let types = self.u8()?;
                    let key = compact_type(types >> 4)?;
                    let value = compact_type(types & 0x0f)?;
                    self.check_count(count, compact_min_size(key) + compact_min_size(value))?;
                    self.elements(Encoding::Compact, count, key, Some(value), depth)?;
                }
            }
            12 => loop {
                let header = self.u8()?;
                if header == 0 {
                    break;
                }
                if header >> 4 == 0 {
                    self.varint()?; // field id, zigzag i16
                }
                match header & 0x0f {
                    1 | 2 => {} // boolean field: the value is the type
                    field_type => self.compact_value(compact_type(field_type)?, depth + 1)?,
                }
            },
            other => return invalid(format!("unsupported compact protocol type {other}")),
        }
        Ok(())
    }

    // ---- both protocols ------------------------------------------------

    /// The message whose header ends here: its body (a struct) skipped,
    /// at once when its shape is known.
    fn message_body(
        &mut self,
        encoding: Encoding,
        kind: u8,
        seqid: i32,
        name: Range<usize>,
    ) -> Step<Message> {
        let body = self.pos;
        if !self.skip_known_body() {
            self.value(encoding, 12, 0)?;
        }
        Ok(Message {
            kind,
            seqid,
            name,
            body,
            len: self.pos,
        })
    }

    /// A value of type `t` in `wire`'s encoding of types.
    fn value(&mut self, encoding: Encoding, t: u8, depth: usize) -> Step<()> {
        match encoding {
            Encoding::Binary => self.binary_value(t, depth),
            Encoding::Compact => self.compact_value(t, depth),
        }
    }

    /// `count` elements of type `first` (with `second`, map entries): all
    /// skipped at once when every one has a fixed size, else each scanned.
    fn elements(
        &mut self,
        encoding: Encoding,
        count: u64,
        first: u8,
        second: Option<u8>,
        depth: usize,
    ) -> Step<()> {
        let fixed = match encoding {
            Encoding::Binary => binary_fixed_size,
            Encoding::Compact => compact_fixed_size,
        };
        match (fixed(first), second.map(fixed)) {
            (Some(a), None) => {
                self.skip(count * a)?;
            }
            (Some(a), Some(Some(b))) => {
                self.skip(count * (a + b))?;
            }
            _ => {
                for _ in 0..count {
                    self.value(encoding, first, depth + 1)?;
                    if let Some(second) = second {
                        self.value(encoding, second, depth + 1)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Checks a binary-protocol element type (no stop, no void).
fn binary_type(t: u8) -> Step<u8> {
    match t {
        2 | 3 | 4 | 6 | 8 | 10 | 11 | 12 | 13 | 14 | 15 => Ok(t),
        other => invalid(format!("unsupported binary protocol element type {other}")),
    }
}

fn binary_fixed_size(t: u8) -> Option<u64> {
    match t {
        2 | 3 => Some(1),
        6 => Some(2),
        8 => Some(4),
        4 | 10 => Some(8),
        _ => None,
    }
}

fn binary_min_size(t: u8) -> u64 {
    match t {
        11 => 4,      // length
        12 => 1,      // stop
        13 => 6,      // types and size
        14 | 15 => 5, // type and size
        fixed => binary_fixed_size(fixed).unwrap_or(1),
    }
}

/// Checks a compact-protocol element type of a collection.
fn compact_type(t: u8) -> Step<u8> {
    match t {
        1..=12 => Ok(t),
        other => invalid(format!("unsupported compact protocol element type {other}")),
    }
}

fn compact_fixed_size(t: u8) -> Option<u64> {
    match t {
        1..=3 => Some(1),
        7 => Some(8),
        _ => None,
    }
}

fn compact_min_size(t: u8) -> u64 {
    compact_fixed_size(t).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: usize = 1 << 20;

    /// A strict binary REPLY of `echoString` whose result is `s`.
    fn binary_string_reply(s: &str) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(&0x8001_0002u32.to_be_bytes());
        m.extend_from_slice(&10i32.to_be_bytes());
        m.extend_from_slice(b"echoString");
        m.extend_from_slice(&7i32.to_be_bytes());
        m.push(11); // field 0: string
        m.extend_from_slice(&0i16.to_be_bytes());
        m.extend_from_slice(&(s.len() as i32).to_be_bytes());
        m.extend_from_slice(s.as_bytes());
        m.push(0);
        m
    }

    #[test]
    fn finds_the_end_and_asks_for_more_when_short() {
        let m = binary_string_reply("hello aa");
        let full = scan(&m, Encoding::Binary, LIMIT, None).unwrap();
        assert_eq!(
            full,
            Scan::Complete(Message {
                kind: REPLY,
                seqid: 7,
                name: 8..18,
                body: 22,
                len: m.len(),
            })
        );
        for cut in 0..m.len() {
            match scan(&m[..cut], Encoding::Binary, LIMIT, None).unwrap() {
                Scan::Incomplete { at_least } => assert!(at_least > cut && at_least <= m.len()),
                other => panic!("cut at {cut}: {other:?}"),
            }
        }
        // Bytes after the message are not part of it.
        let mut two = m.clone();
        two.extend_from_slice(&m);
        assert!(
            matches!(scan(&two, Encoding::Binary, LIMIT, None), Ok(Scan::Complete(msg)) if msg.len == m.len())
        );
    }

    #[test]
    fn refuses_lengths_beyond_the_limit_without_waiting() {
        let mut m = binary_string_reply("");
        let at = 22 + 3; // the string length, after the field header
        m[at..at + 4].copy_from_slice(&i32::MAX.to_be_bytes());
        assert!(scan(&m, Encoding::Binary, LIMIT, None).is_err());
        m[at..at + 4].copy_from_slice(&(-1i32).to_be_bytes());
        assert!(scan(&m, Encoding::Binary, LIMIT, None).is_err());
    }

    #[test]
    fn refuses_huge_collections_and_deep_nesting() {
        // compact: reply header, then field 0 list<struct> of 2^31 elements
        let mut m = vec![0x82, 0x41, 0x01, 0x01, b'x'];
        m.extend_from_slice(&[0x09, 0x00]); // list field, explicit id 0
        m.extend_from_slice(&[0xfc, 0xff, 0xff, 0xff, 0xff, 0x07]); // struct elements, size 2^31-1
        assert!(scan(&m, Encoding::Compact, LIMIT, None).is_err());

        let mut deep = vec![0x82, 0x41, 0x01, 0x01, b'x'];
        for _ in 0..100 {
            deep.extend_from_slice(&[0x1c]); // struct field, delta 1
        }
        assert!(scan(&deep, Encoding::Compact, usize::MAX, None).is_err());
    }

    #[test]
    fn compact_varints_and_bool_fields() {
        // reply, seqid 300 (varint ac 02), name "hello", struct with a
        // bool field (type in header), a string field 0 and an i64 field.
        let mut m = vec![0x82, 0x41, 0xac, 0x02, 5];
        m.extend_from_slice(b"hello");
        m.push(0x11); // bool true, delta 1
        m.extend_from_slice(&[0x08, 0x00, 0x02, b'h', b'i']); // string, explicit id 0
        m.extend_from_slice(&[0x16, 0x96, 0x01]); // i64, delta 1
        m.push(0);
        match scan(&m, Encoding::Compact, LIMIT, None).unwrap() {
            Scan::Complete(msg) => {
                assert_eq!(msg.kind, REPLY);
                assert_eq!(msg.seqid, 300);
                assert_eq!(&m[msg.name], b"hello");
                assert_eq!(msg.len, m.len());
            }
            other => panic!("{other:?}"),
        }
    }

    /// The compact reply of `compact_varints_and_bool_fields`.
    fn compact_reply() -> Vec<u8> {
        let mut m = vec![0x82, 0x41, 0xac, 0x02, 5];
        m.extend_from_slice(b"hello");
        m.extend_from_slice(&[0x11, 0x08, 0x00, 0x02, b'h', b'i', 0x16, 0x96, 0x01, 0]);
        m
    }

    #[test]
    fn a_known_body_ends_the_message_where_the_walk_ends_it() {
        for (m, encoding, body) in [
            (binary_string_reply("hello aa"), Encoding::Binary, 22),
            (compact_reply(), Encoding::Compact, 10),
        ] {
            let known = &m[body..];
            let walked = scan(&m, encoding, LIMIT, None).unwrap();
            assert_eq!(scan(&m, encoding, LIMIT, Some(known)).unwrap(), walked);
            // Cut short: incomplete either way.
            for cut in 0..m.len() {
                assert!(matches!(
                    scan(&m[..cut], encoding, LIMIT, Some(known)).unwrap(),
                    Scan::Incomplete { .. }
                ));
            }
            // Followed by more bytes: the same message.
            let mut two = m.clone();
            two.extend_from_slice(&m);
            assert_eq!(scan(&two, encoding, LIMIT, Some(known)).unwrap(), walked);
            // Beyond the limit: walked, and refused as the walk refuses it.
            assert_eq!(
                scan(&m, encoding, m.len() - 1, Some(known)),
                scan(&m, encoding, m.len() - 1, None)
            );
        }
    }

    proptest::proptest! {
        /// Whatever the bytes, a known body changes nothing but the work:
        /// the scan with it says what the walk says.
        #[test]
        fn a_known_body_gives_the_walks_answer_on_any_bytes(
            flips in proptest::collection::vec((0usize..64, proptest::num::u8::ANY), 0..4),
            cut in 0usize..64,
            binary in proptest::bool::ANY,
        ) {
            let (encoding, m, body) = if binary {
                (Encoding::Binary, binary_string_reply("hello aa"), 22)
            } else {
                (Encoding::Compact, compact_reply(), 10)
            };
            let known = m[body..].to_vec();
            let mut bytes = m.clone();
            for (at, b) in flips {
                let at = at % bytes.len();
                bytes[at] = b;
            }
            bytes.truncate(cut.max(1).min(bytes.len()));
            proptest::prop_assert_eq!(
                scan(&bytes, encoding, LIMIT, Some(&known)),
                scan(&bytes, encoding, LIMIT, None)
            );
        }
    }
}
