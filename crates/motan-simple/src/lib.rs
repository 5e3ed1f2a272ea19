//! Motan's "simple" serialization (`SimpleSerialization`, number 6): a
//! one-byte type tag, then the value. Pure functions over byte slices.
//!
//! ```text
//! 0 null | 1 string: i32 len, UTF-8 | 2 map<string,string>: i32 len, (string string)*
//! 3 byte[]: i32 len, bytes | 4 string[]: i32 len, string* | 5 bool: 1 byte
//! 6 byte | 7 i16 (big-endian) | 8 i32: zigzag varint | 9 i64: zigzag varint
//! 10 f32 | 11 f64 (big-endian) | 20 map: i32 len, (value value)* | 21 array: i32 len, value*
//! ```
//!
//! Lengths are big-endian Java `int`s; the container lengths count bytes,
//! not elements. Strings inside containers are a length and bytes without a
//! tag. Java writes an `int` through `putVarint(long)` after zigzag encoding
//! it as an `int`, so a zigzag value at or above 2^31 is sign-extended to a
//! 10-byte varint; [`put_i32`] does the same so that the bytes are Java's.
//!
//! The contract needs only strings and null (`hello`, `echoString`, `empty`);
//! the type has no POJOs, so `echoOrder`/`echoOrders` cannot be carried. The
//! decoder reads every type (as [`SimpleValue`]), so that a reply of another
//! type is reported as what it is, and the tests' provider can read requests.
#![forbid(unsafe_code)]

use std::fmt;

pub const NULL: u8 = 0;
pub const STRING: u8 = 1;
pub const STRING_MAP: u8 = 2;
pub const BYTE_ARRAY: u8 = 3;
pub const STRING_ARRAY: u8 = 4;
pub const BOOL: u8 = 5;
pub const BYTE: u8 = 6;
pub const INT16: u8 = 7;
pub const INT32: u8 = 8;
pub const INT64: u8 = 9;
pub const FLOAT32: u8 = 10;
pub const FLOAT64: u8 = 11;
pub const MAP: u8 = 20;
pub const ARRAY: u8 = 21;

/// Containers nest at most this deep when decoding (Java has no limit but
/// its stack; a hostile input must not exhaust ours).
const MAX_DEPTH: usize = 64;

/// A decoded simple-serialization value.
#[derive(Clone, Debug, PartialEq)]
pub enum SimpleValue {
    Null,
    String(String),
    StringMap(Vec<(String, String)>),
    Bytes(Vec<u8>),
    StringArray(Vec<String>),
    Bool(bool),
    Byte(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
    Map(Vec<(SimpleValue, SimpleValue)>),
    Array(Vec<SimpleValue>),
}

impl SimpleValue {
    /// The Java type Motan would have decoded, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            SimpleValue::Null => "null",
            SimpleValue::String(_) => "String",
            SimpleValue::StringMap(_) => "Map<String,String>",
            SimpleValue::Bytes(_) => "byte[]",
            SimpleValue::StringArray(_) => "String[]",
            SimpleValue::Bool(_) => "boolean",
            SimpleValue::Byte(_) => "byte",
            SimpleValue::I16(_) => "short",
            SimpleValue::I32(_) => "int",
            SimpleValue::I64(_) => "long",
            SimpleValue::F32(_) => "float",
            SimpleValue::F64(_) => "double",
            SimpleValue::Map(_) => "Map",
            SimpleValue::Array(_) => "Object[]",
        }
    }
}

/// Why bytes are not a simple-serialization value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleError(pub String);

impl fmt::Display for SimpleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SimpleError {}

fn err<T>(msg: impl Into<String>) -> Result<T, SimpleError> {
    Err(SimpleError(msg.into()))
}

// ---- encoding ------------------------------------------------------------------

pub fn put_null(out: &mut Vec<u8>) {
    out.push(NULL);
}

/// A tagged string.
pub fn put_string(out: &mut Vec<u8>, s: &str) {
    out.push(STRING);
    put_raw_string(out, s);
}

fn put_raw_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v & !0x7f != 0 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A tagged `int`, with Java's sign extension of large zigzag values.
pub fn put_i32(out: &mut Vec<u8>, v: i32) {
    out.push(INT32);
    let zigzag = (v << 1) ^ (v >> 31);
    put_varint(out, zigzag as i64 as u64);
}

/// A tagged `long`.
pub fn put_i64(out: &mut Vec<u8>, v: i64) {
    out.push(INT64);
    put_varint(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// Any value, as Java's `SimpleSerialization.serialize` writes it.
pub fn put_value(out: &mut Vec<u8>, v: &SimpleValue) {
    match v {
        SimpleValue::Null => put_null(out),
        SimpleValue::String(s) => put_string(out, s),
        SimpleValue::StringMap(entries) => container(out, STRING_MAP, |out| {
            for (k, v) in entries {
                put_raw_string(out, k);
                put_raw_string(out, v);
            }
        }),
        SimpleValue::Bytes(b) => {
            out.push(BYTE_ARRAY);
            out.extend_from_slice(&(b.len() as u32).to_be_bytes());
            out.extend_from_slice(b);
        }
        SimpleValue::StringArray(items) => container(out, STRING_ARRAY, |out| {
            for s in items {
                put_raw_string(out, s);
            }
        }),
        SimpleValue::Bool(b) => out.extend_from_slice(&[BOOL, u8::from(*b)]),
        SimpleValue::Byte(b) => out.extend_from_slice(&[BYTE, *b as u8]),
        SimpleValue::I16(n) => {
            out.push(INT16);
            out.extend_from_slice(&n.to_be_bytes());
        }
        SimpleValue::I32(n) => put_i32(out, *n),
        SimpleValue::I64(n) => put_i64(out, *n),
        SimpleValue::F32(n) => {
            out.push(FLOAT32);
            out.extend_from_slice(&n.to_be_bytes());
        }
        SimpleValue::F64(n) => {
            out.push(FLOAT64);
            out.extend_from_slice(&n.to_be_bytes());
        }
        SimpleValue::Map(entries) => container(out, MAP, |out| {
            for (k, v) in entries {
                put_value(out, k);
                put_value(out, v);
            }
        }),
        SimpleValue::Array(items) => container(out, ARRAY, |out| {
            for v in items {
                put_value(out, v);
            }
        }),
    }
}

/// A tag, a byte length filled in afterwards, and the content.
fn container(out: &mut Vec<u8>, tag: u8, content: impl FnOnce(&mut Vec<u8>)) {
    out.push(tag);
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    content(out);
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

// ---- decoding ------------------------------------------------------------------

/// A reader over a simple-serialization stream (one or more values, as
/// `serializeMulti` writes arguments).
pub struct SimpleReader<'a> {
    input: &'a [u8],
    pos: usize,
}

impl<'a> SimpleReader<'a> {
    pub fn new(input: &'a [u8]) -> Self {
        SimpleReader { input, pos: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.input.len()
    }

    pub fn remaining(&self) -> usize {
        self.input.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], SimpleError> {
        match self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.input.len())
        {
            Some(end) => {
                let s = &self.input[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => err(format!(
                "truncated: {n} bytes wanted at offset {}, {} left",
                self.pos,
                self.remaining()
            )),
        }
    }

    fn byte(&mut self) -> Result<u8, SimpleError> {
        Ok(self.take(1)?[0])
    }

    /// A Java `int` length, checked against what is left (as Java's
    /// `getAndCheckSize` does), so nothing is allocated for a lie.
    fn size(&mut self) -> Result<usize, SimpleError> {
        let n = i32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes"));
        if n < 0 || n as usize > self.remaining() {
            return err(format!(
                "length {n} at offset {} is outside 0..={}",
                self.pos - 4,
                self.remaining()
            ));
        }
        Ok(n as usize)
    }

    fn raw_string(&mut self) -> Result<String, SimpleError> {
        let n = self.size()?;
        let bytes = self.take(n)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| SimpleError("a string is not UTF-8".into()))
    }

    fn varint(&mut self) -> Result<u64, SimpleError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        err("varint longer than 10 bytes")
    }

    /// Reads a tagged string, or `None` for a tagged null; any other type is
    /// an error naming it.
    pub fn read_opt_string(&mut self) -> Result<Option<String>, SimpleError> {
        match self.input.get(self.pos) {
            Some(&NULL) => {
                self.pos += 1;
                Ok(None)
            }
            Some(&STRING) => {
                self.pos += 1;
                self.raw_string().map(Some)
            }
            Some(_) => {
                let v = self.read_value()?;
                err(format!("expected a String, got a {}", v.type_name()))
            }
            None => err("expected a value, got the end of the body"),
        }
    }

    /// Reads any value.
    pub fn read_value(&mut self) -> Result<SimpleValue, SimpleError> {
        self.value(0)
    }

    fn value(&mut self, depth: usize) -> Result<SimpleValue, SimpleError> {
        if depth > MAX_DEPTH {
            return err(format!("containers nested deeper than {MAX_DEPTH}"));
        }
        let tag = self.byte()?;
        Ok(match tag {
            NULL => SimpleValue::Null,
            STRING => SimpleValue::String(self.raw_string()?),
            BYTE_ARRAY => {
                let n = self.size()?;
                SimpleValue::Bytes(self.take(n)?.to_vec())
            }
            STRING_MAP => SimpleValue::StringMap(self.entries(Self::raw_string)?),
            STRING_ARRAY => SimpleValue::StringArray(self.items(Self::raw_string)?),
            BOOL => SimpleValue::Bool(self.byte()? == 1),
            BYTE => SimpleValue::Byte(self.byte()? as i8),
            INT16 => SimpleValue::I16(i16::from_be_bytes(
                self.take(2)?.try_into().expect("2 bytes"),
            )),
            INT32 => {
                // Java: decodeZigZag32((int) getVarint()).
                let n = self.varint()? as u32;
                SimpleValue::I32(((n >> 1) as i32) ^ -((n & 1) as i32))
            }
            INT64 => {
                let n = self.varint()?;
                SimpleValue::I64(((n >> 1) as i64) ^ -((n & 1) as i64))
            }
            FLOAT32 => SimpleValue::F32(f32::from_be_bytes(
                self.take(4)?.try_into().expect("4 bytes"),
            )),
            FLOAT64 => SimpleValue::F64(f64::from_be_bytes(
                self.take(8)?.try_into().expect("8 bytes"),
            )),
            MAP => SimpleValue::Map(self.entries(|r| r.value(depth + 1))?),
            ARRAY => SimpleValue::Array(self.items(|r| r.value(depth + 1))?),
            other => return err(format!("unknown type tag {other}")),
        })
    }

    /// Reads items with `item` until the container's byte length is used
    /// up; an item running past it is an error (Java's size check).
    /// The items of a container, each read by `item`.
    fn items<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<T, SimpleError>,
    ) -> Result<Vec<T>, SimpleError> {
        let mut items = Vec::new();
        self.within(|r| {
            items.push(item(r)?);
            Ok(())
        })?;
        Ok(items)
    }

    /// The key/value entries of a map, each key and value read by `item`.
    fn entries<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<T, SimpleError>,
    ) -> Result<Vec<(T, T)>, SimpleError> {
        self.items(|r| Ok((item(r)?, item(r)?)))
    }

    fn within(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<(), SimpleError>,
    ) -> Result<(), SimpleError> {
        let n = self.size()?;
        let end = self.pos + n;
        while self.pos < end {
            item(self)?;
        }
        if self.pos != end {
            return err(format!(
                "container content ran {} bytes past its length {n}",
                self.pos - end
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn java_forms() {
        let mut out = Vec::new();
        put_string(&mut out, "aa");
        assert_eq!(out, [1, 0, 0, 0, 2, b'a', b'a']);
        out.clear();
        put_i32(&mut out, -1);
        assert_eq!(out, [8, 1]);
        out.clear();
        // zigzag(2^30) = 2^31: a negative Java int, sign-extended to 10 bytes.
        put_i32(&mut out, 1 << 30);
        assert_eq!(out.len(), 11);
        assert_eq!(
            SimpleReader::new(&out).read_value().unwrap(),
            SimpleValue::I32(1 << 30)
        );
        out.clear();
        put_value(
            &mut out,
            &SimpleValue::StringMap(vec![("k".into(), "v".into())]),
        );
        assert_eq!(out, [2, 0, 0, 0, 10, 0, 0, 0, 1, b'k', 0, 0, 0, 1, b'v']);
    }

    #[test]
    fn malformed_input_is_an_error() {
        for bad in [
            &[][..],
            &[1, 0, 0, 0, 5, b'a'],
            &[1, 0xff, 0xff, 0xff, 0xff],
            &[21, 0, 0, 0, 2, 1, 0],
            &[
                8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            ],
            &[99],
            &[1, 0, 0, 0, 1, 0xff],
        ] {
            assert!(SimpleReader::new(bad).read_value().is_err(), "{bad:?}");
        }
        // Deep nesting stops at the limit.
        let mut deep = Vec::new();
        for _ in 0..200 {
            deep.extend_from_slice(&[ARRAY, 0, 0, 0, 0]);
        }
        assert!(SimpleReader::new(&deep).read_value().is_ok()); // empty arrays do not nest
        let mut nested = vec![NULL];
        for _ in 0..100 {
            let mut outer = vec![ARRAY];
            outer.extend_from_slice(&(nested.len() as u32).to_be_bytes());
            outer.extend_from_slice(&nested);
            nested = outer;
        }
        assert!(SimpleReader::new(&nested).read_value().is_err());
        assert_eq!(
            SimpleReader::new(&[3, 0, 0, 0, 0]).read_opt_string(),
            Err(SimpleError("expected a String, got a byte[]".into()))
        );
    }

    fn value() -> impl Strategy<Value = SimpleValue> {
        let leaf = prop_oneof![
            Just(SimpleValue::Null),
            ".{0,20}".prop_map(SimpleValue::String),
            proptest::collection::vec(any::<u8>(), 0..20).prop_map(SimpleValue::Bytes),
            proptest::collection::vec(".{0,8}", 0..4).prop_map(SimpleValue::StringArray),
            proptest::collection::vec((".{0,8}", ".{0,8}"), 0..4).prop_map(SimpleValue::StringMap),
            any::<bool>().prop_map(SimpleValue::Bool),
            any::<i8>().prop_map(SimpleValue::Byte),
            any::<i16>().prop_map(SimpleValue::I16),
            any::<i32>().prop_map(SimpleValue::I32),
            any::<i64>().prop_map(SimpleValue::I64),
            any::<f64>()
                .prop_filter("NaN", |f| !f.is_nan())
                .prop_map(SimpleValue::F64),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(SimpleValue::Array),
                proptest::collection::vec((inner.clone(), inner), 0..3).prop_map(SimpleValue::Map),
            ]
        })
    }

    proptest! {
        #[test]
        fn round_trips(v in value()) {
            let mut out = Vec::new();
            put_value(&mut out, &v);
            let mut r = SimpleReader::new(&out);
            prop_assert_eq!(r.read_value().unwrap(), v);
            prop_assert!(r.is_empty());
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let mut r = SimpleReader::new(&bytes);
            while !r.is_empty() {
                if r.read_value().is_err() { break; }
            }
        }
    }
}
