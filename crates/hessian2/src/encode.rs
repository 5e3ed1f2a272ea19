//! Writing Hessian 2.0.
//!
//! The [`Encoder`] makes the same choices as Java's
//! `com.caucho.hessian.io.Hessian2Output` (and its hessian-lite forks), so
//! that a Rust writer produces the bytes a Java writer would for the same
//! value: the shortest int and long forms, the compact double forms Java
//! picks (including the 32-bit "thousandths" form), minute dates when the
//! time is minute-aligned, strings in `R` chunks of 0x8000 UTF-16 units,
//! class definitions sent once and instances referring to them by index, and
//! list and map type names sent once and referred to by index afterwards.
//! The golden-vector tests of this crate check that byte for byte against
//! the Java libraries.
//!
//! The encoder keeps the per-stream tables (class definitions, type names,
//! and the count of referenceable values) and writes straight into a
//! [`BufMut`]; it allocates only the first time it sees a class or a type
//! name.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use bytes::BufMut;

use crate::error::EncodeError;
use crate::tag;
use crate::utf;
use crate::value::{List, Map, Object, Value};

/// Longest string chunk in UTF-16 units, as Java's `Hessian2Output` writes it.
pub const STRING_CHUNK_UNITS: usize = 0x8000;

/// Longest binary chunk this encoder writes.
///
/// Java's `Hessian2Output` cuts binaries where its 8 KiB output buffer fills
/// up, so its chunk sizes depend on everything written before in the same
/// buffer. 8189 bytes (`8192 - 3`) is what it writes for a binary at the
/// start of a fresh buffer, which makes a binary written first in a message
/// byte-identical to Java's (Caucho's and org.apache.dubbo's hessian-lite;
/// com.alibaba's hessian-lite 3.x has a 4 KiB buffer). Every reader accepts
/// any chunking.
pub const BINARY_CHUNK_BYTES: usize = 8192 - 3;

/// FNV-1a: the class and type tables are keyed by a few short names chosen by
/// the program, not by peers, so a fast non-keyed hash is fine.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

type FastMap<V> = HashMap<Box<str>, V, BuildHasherDefault<Fnv>>;

struct ClassEntry {
    index: u32,
    fields: Box<[Box<str>]>,
}

/// A Hessian 2.0 writer with its per-stream tables.
///
/// `B` is any growable [`BufMut`]: `Vec<u8>`, `&mut Vec<u8>`,
/// `bytes::BytesMut`, `&mut BytesMut`. (A fixed `&mut [u8]` panics when full,
/// as `BufMut` does.)
///
/// One encoder corresponds to one Java `Hessian2Output`: class definitions
/// and list/map type names are sent once per encoder and referred to by index
/// afterwards, so a message that is read by one Java `Hessian2Input` (a Dubbo
/// request body, say) must be written with one encoder. Start a new one, or
/// call [`reset`](Self::reset), for each message.
///
/// Lists, maps and objects are written as a begin call, the elements, and
/// (for maps and variable-length lists) an end call; the encoder does not
/// check that the caller writes as many elements as it announced.
///
/// ```
/// use hessian2::Encoder;
/// let mut enc = Encoder::new(Vec::new());
/// enc.write_string("hello");
/// enc.begin_list(2, None).unwrap();
/// enc.write_int(1);
/// enc.write_long(2);
/// assert_eq!(enc.into_inner(), b"\x05hello\x7a\x91\xe2");
/// ```
pub struct Encoder<B: BufMut = Vec<u8>> {
    buf: B,
    classes: FastMap<ClassEntry>,
    types: FastMap<u32>,
    refs: u32,
}

/// The compact forms of an int or a long: each form's range and the tag
/// that stands for zero in it (see [`tag`]).
struct CompactForms {
    direct: std::ops::RangeInclusive<i64>,
    direct_zero: u8,
    byte: std::ops::RangeInclusive<i64>,
    byte_zero: u8,
    short: std::ops::RangeInclusive<i64>,
    short_zero: u8,
}

const INT_FORMS: CompactForms = CompactForms {
    direct: tag::INT_DIRECT_MIN as i64..=tag::INT_DIRECT_MAX as i64,
    direct_zero: tag::INT_ZERO,
    byte: tag::INT_BYTE_MIN as i64..=tag::INT_BYTE_MAX as i64,
    byte_zero: tag::INT_BYTE_ZERO,
    short: tag::INT_SHORT_MIN as i64..=tag::INT_SHORT_MAX as i64,
    short_zero: tag::INT_SHORT_ZERO,
};

const LONG_FORMS: CompactForms = CompactForms {
    direct: tag::LONG_DIRECT_MIN..=tag::LONG_DIRECT_MAX,
    direct_zero: tag::LONG_ZERO,
    byte: tag::LONG_BYTE_MIN..=tag::LONG_BYTE_MAX,
    byte_zero: tag::LONG_BYTE_ZERO,
    short: tag::LONG_SHORT_MIN..=tag::LONG_SHORT_MAX,
    short_zero: tag::LONG_SHORT_ZERO,
};

impl<B: BufMut> Encoder<B> {
    /// An encoder writing into `buf`, with empty tables.
    pub fn new(buf: B) -> Self {
        Encoder {
            buf,
            classes: FastMap::default(),
            types: FastMap::default(),
            refs: 0,
        }
    }

    /// The buffer.
    pub fn get_ref(&self) -> &B {
        &self.buf
    }

    /// The buffer, mutably (for interleaving other framing bytes).
    pub fn get_mut(&mut self) -> &mut B {
        &mut self.buf
    }

    /// Gives back the buffer.
    pub fn into_inner(self) -> B {
        self.buf
    }

    /// Forgets class definitions, type names and references, like Java's
    /// `Hessian2Output.reset()`: the next values start a new stream.
    pub fn reset(&mut self) {
        self.classes.clear();
        self.types.clear();
        self.refs = 0;
    }

    /// Forgets references only (Java's `resetReferences()`), keeping class
    /// definitions and type names.
    pub fn reset_references(&mut self) {
        self.refs = 0;
    }

    /// Number of lists, maps and objects written so far: the index the next
    /// one will get, and the bound for [`write_ref`](Self::write_ref).
    pub fn ref_count(&self) -> u32 {
        self.refs
    }

    /// Writes `null`.
    pub fn write_null(&mut self) {
        self.buf.put_u8(tag::NULL);
    }

    /// Writes a boolean.
    pub fn write_bool(&mut self, v: bool) {
        self.buf.put_u8(if v { tag::TRUE } else { tag::FALSE });
    }

    /// Writes a 32-bit int in its shortest form (1, 2, 3 or 5 bytes).
    pub fn write_int(&mut self, v: i32) {
        if !self.write_compact(i64::from(v), &INT_FORMS) {
            self.buf.put_u8(tag::INT);
            self.buf.put_i32(v);
        }
    }

    /// Writes a 64-bit long in its shortest form (1, 2, 3, 5 or 9 bytes).
    pub fn write_long(&mut self, v: i64) {
        if self.write_compact(v, &LONG_FORMS) {
            return;
        }
        if let Ok(v32) = i32::try_from(v) {
            self.buf.put_u8(tag::LONG_INT);
            self.buf.put_i32(v32);
        } else {
            self.buf.put_u8(tag::LONG);
            self.buf.put_i64(v);
        }
    }

    /// Writes `v` in the one-, two- or three-byte form of `forms` that holds
    /// it (`false` if none does): ints and longs write these alike, each
    /// with its own tags and one-byte range.
    #[inline]
    fn write_compact(&mut self, v: i64, forms: &CompactForms) -> bool {
        if forms.direct.contains(&v) {
            self.buf.put_u8((i64::from(forms.direct_zero) + v) as u8);
        } else if forms.byte.contains(&v) {
            self.buf
                .put_slice(&[(i64::from(forms.byte_zero) + (v >> 8)) as u8, v as u8]);
        } else if forms.short.contains(&v) {
            self.buf.put_slice(&[
                (i64::from(forms.short_zero) + (v >> 16)) as u8,
                (v >> 8) as u8,
                v as u8,
            ]);
        } else {
            return false;
        }
        true
    }

    /// Writes a double in the form Java's `Hessian2Output.writeDouble` picks:
    ///
    /// * an integral value in `i32` range: 0.0 and 1.0 in one byte, then a
    ///   signed byte or short when it fits (so `-0.0` is written as `0.0`);
    /// * otherwise, when `0.001 * (v * 1000.0) as i32 == v` exactly, the
    ///   value in thousandths as a 32-bit int (0x5f), e.g. 12.25 or 100.75;
    /// * otherwise the 64-bit IEEE bits (`D`), which keeps NaN payloads.
    pub fn write_double(&mut self, v: f64) {
        // `as` saturates and maps NaN to 0, exactly like Java's (int) cast.
        let int_value = v as i32;
        if f64::from(int_value) == v {
            match int_value {
                0 => return self.buf.put_u8(tag::DOUBLE_ZERO),
                1 => return self.buf.put_u8(tag::DOUBLE_ONE),
                -0x80..=0x7f => return self.buf.put_slice(&[tag::DOUBLE_BYTE, int_value as u8]),
                -0x8000..=0x7fff => {
                    self.buf.put_u8(tag::DOUBLE_SHORT);
                    return self.buf.put_i16(int_value as i16);
                }
                _ => {}
            }
        }
        let mills = (v * 1000.0) as i32;
        if 0.001 * f64::from(mills) == v {
            self.buf.put_u8(tag::DOUBLE_MILL);
            self.buf.put_i32(mills);
        } else {
            self.buf.put_u8(tag::DOUBLE);
            self.buf.put_u64(v.to_bits());
        }
    }

    /// Writes a `java.util.Date` given as milliseconds since the epoch: 5
    /// bytes of minutes when minute-aligned and in range, else 9 bytes.
    pub fn write_date(&mut self, millis: i64) {
        if millis % 60_000 == 0
            && let Ok(minutes) = i32::try_from(millis / 60_000)
        {
            self.buf.put_u8(tag::DATE_MINUTE);
            self.buf.put_i32(minutes);
            return;
        }
        self.buf.put_u8(tag::DATE);
        self.buf.put_i64(millis);
    }

    /// Writes a string.
    ///
    /// Lengths count UTF-16 units; supplementary characters are written as
    /// two 3-byte surrogates (CESU-8) as Java does. Strings longer than
    /// [`STRING_CHUNK_UNITS`] go out as `R` chunks of that many units (one
    /// less when a surrogate pair would straddle the boundary) followed by a
    /// final chunk in the shortest form.
    pub fn write_string(&mut self, s: &str) {
        let mut rest = s;
        // Each unit is at least one byte: short strings skip the chunk scan.
        if rest.len() > STRING_CHUNK_UNITS {
            loop {
                let (end, units) = utf::split_at_units(rest, STRING_CHUNK_UNITS);
                if end == rest.len() {
                    break;
                }
                self.buf.put_u8(tag::STRING_CHUNK);
                self.buf.put_u16(units as u16);
                utf::put_cesu8(&mut self.buf, &rest[..end]);
                rest = &rest[end..];
            }
        }
        self.write_final_chunk_header(utf::utf16_len(rest), &tag::STRING_CHUNKS);
        utf::put_cesu8(&mut self.buf, rest);
    }

    /// Writes a string, or `null` for `None`.
    pub fn write_opt_string(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.write_string(s),
            None => self.write_null(),
        }
    }

    /// Writes a `byte[]`, in chunks of [`BINARY_CHUNK_BYTES`] when longer,
    /// the final chunk in its shortest form.
    pub fn write_binary(&mut self, mut data: &[u8]) {
        while data.len() > BINARY_CHUNK_BYTES {
            let (chunk, rest) = data.split_at(BINARY_CHUNK_BYTES);
            self.buf.put_u8(tag::BINARY_CHUNK);
            self.buf.put_u16(chunk.len() as u16);
            self.buf.put_slice(chunk);
            data = rest;
        }
        self.write_final_chunk_header(data.len(), &tag::BINARY_CHUNKS);
        self.buf.put_slice(data);
    }

    /// Writes the header of a string's or a binary's final chunk of `len`
    /// units in its shortest form: the length in the tag, in the tag and
    /// one byte, or after the `final_tag` as a u16 (`len` is at most a
    /// chunk's length).
    fn write_final_chunk_header(&mut self, len: usize, forms: &tag::ChunkForms) {
        let (header, n) = forms.final_header(len);
        self.buf.put_slice(&header[..n]);
    }

    /// Writes a reference to the `index`-th list, map or object of this
    /// stream (see [`ref_count`](Self::ref_count)), for shared or cyclic
    /// values.
    pub fn write_ref(&mut self, index: u32) -> Result<(), EncodeError> {
        if index >= self.refs {
            return Err(EncodeError::DanglingReference {
                index,
                count: self.refs,
            });
        }
        self.buf.put_u8(tag::REF);
        self.write_int(index as i32);
        Ok(())
    }

    /// Writes the tag of a list or map: `typed` followed by the type name
    /// when there is one, else `untyped`.
    fn write_container_tag(
        &mut self,
        typed: u8,
        untyped: u8,
        ty: Option<&str>,
    ) -> Result<(), EncodeError> {
        match ty {
            Some(t) => {
                self.buf.put_u8(typed);
                self.write_type(t)
            }
            None => {
                self.buf.put_u8(untyped);
                Ok(())
            }
        }
    }

    /// Starts a fixed-length list of `len` elements, with an optional type
    /// name (`None` for what Java writes for an `ArrayList`; `"[int"`,
    /// `"[string"`, `"[object"` for arrays; a class name for other
    /// collections). Write exactly `len` values next; there is no end marker.
    ///
    /// Returns the list's reference index.
    pub fn begin_list(&mut self, len: usize, ty: Option<&str>) -> Result<u32, EncodeError> {
        let len32 = i32::try_from(len).map_err(|_| EncodeError::TooLong(len))?;
        if len <= tag::LIST_DIRECT_MAX {
            self.write_container_tag(
                tag::LIST_DIRECT + len as u8,
                tag::LIST_DIRECT_UNTYPED + len as u8,
                ty,
            )?;
        } else {
            self.write_container_tag(tag::LIST_FIXED, tag::LIST_FIXED_UNTYPED, ty)?;
            self.write_int(len32);
        }
        Ok(self.next_ref())
    }

    /// Starts a variable-length list, ended by [`end_list`](Self::end_list)
    /// (for streaming when the length is not known up front).
    ///
    /// Returns the list's reference index.
    pub fn begin_variable_list(&mut self, ty: Option<&str>) -> Result<u32, EncodeError> {
        self.write_container_tag(tag::LIST_VARIABLE, tag::LIST_VARIABLE_UNTYPED, ty)?;
        Ok(self.next_ref())
    }

    /// Ends a variable-length list.
    pub fn end_list(&mut self) {
        self.buf.put_u8(tag::END);
    }

    /// Starts a map with an optional type name (`None` for `HashMap`). Write
    /// key, value, key, value, ... then [`end_map`](Self::end_map).
    ///
    /// Returns the map's reference index.
    pub fn begin_map(&mut self, ty: Option<&str>) -> Result<u32, EncodeError> {
        self.write_container_tag(tag::MAP, tag::MAP_UNTYPED, ty)?;
        Ok(self.next_ref())
    }

    /// Ends a map.
    pub fn end_map(&mut self) {
        self.buf.put_u8(tag::END);
    }

    /// Starts an object of Java class `class` whose fields are `fields`, in
    /// the order their values will follow. Write one value per field next;
    /// there is no end marker.
    ///
    /// The first object of a class also writes the class definition; later
    /// ones refer to it by index. Looking a class up allocates nothing.
    /// A class must keep the same field list for the whole stream.
    ///
    /// Returns the object's reference index.
    pub fn begin_object<S: AsRef<str>>(
        &mut self,
        class: &str,
        fields: &[S],
    ) -> Result<u32, EncodeError> {
        let index = match self.classes.get(class) {
            Some(entry) => {
                let same = entry.fields.len() == fields.len()
                    && entry
                        .fields
                        .iter()
                        .zip(fields)
                        .all(|(a, b)| **a == *b.as_ref());
                if !same {
                    return Err(EncodeError::ClassRedefined {
                        class: class.to_owned(),
                    });
                }
                entry.index
            }
            None => {
                if class.is_empty() {
                    return Err(EncodeError::EmptyTypeName);
                }
                let n =
                    i32::try_from(fields.len()).map_err(|_| EncodeError::TooLong(fields.len()))?;
                let index = self.classes.len() as u32;
                self.buf.put_u8(tag::CLASS_DEF);
                self.write_string(class);
                self.write_int(n);
                for f in fields {
                    self.write_string(f.as_ref());
                }
                let entry = ClassEntry {
                    index,
                    fields: fields.iter().map(|f| Box::from(f.as_ref())).collect(),
                };
                self.classes.insert(Box::from(class), entry);
                index
            }
        };
        if index <= tag::OBJECT_DIRECT_MAX {
            self.buf.put_u8(tag::OBJECT_DIRECT + index as u8);
        } else {
            self.buf.put_u8(tag::OBJECT);
            self.write_int(index as i32);
        }
        Ok(self.next_ref())
    }

    /// Writes a [`Value`] tree.
    ///
    /// Lists are written in fixed-length form (as Java writes collections),
    /// [`Value::Ref`] as a reference, which must point to a list, map or
    /// object already written to this stream.
    pub fn write_value(&mut self, v: &Value) -> Result<(), EncodeError> {
        match v {
            Value::Null => self.write_null(),
            Value::Bool(b) => self.write_bool(*b),
            Value::Int(i) => self.write_int(*i),
            Value::Long(l) => self.write_long(*l),
            Value::Double(d) => self.write_double(*d),
            Value::Date(d) => self.write_date(*d),
            Value::String(s) => self.write_string(s),
            Value::Binary(b) => self.write_binary(b),
            Value::List(List { ty, items }) => {
                self.begin_list(items.len(), ty.as_deref())?;
                for item in items {
                    self.write_value(item)?;
                }
            }
            Value::Map(Map { ty, entries }) => {
                self.begin_map(ty.as_deref())?;
                for (k, v) in entries {
                    self.write_value(k)?;
                    self.write_value(v)?;
                }
                self.end_map();
            }
            Value::Object(Object { class, values }) => {
                if values.len() != class.fields.len() {
                    return Err(EncodeError::FieldCount {
                        class: class.name.clone(),
                        fields: class.fields.len(),
                        values: values.len(),
                    });
                }
                self.begin_object(&class.name, &class.fields)?;
                for v in values {
                    self.write_value(v)?;
                }
            }
            Value::Ref(i) => self.write_ref(*i)?,
        }
        Ok(())
    }

    fn next_ref(&mut self) -> u32 {
        let r = self.refs;
        self.refs = self.refs.saturating_add(1);
        r
    }

    /// A list or map type: the name the first time, its index afterwards.
    fn write_type(&mut self, ty: &str) -> Result<(), EncodeError> {
        if ty.is_empty() {
            return Err(EncodeError::EmptyTypeName);
        }
        match self.types.get(ty) {
            Some(&i) => self.write_int(i as i32),
            None => {
                let i = self.types.len() as u32;
                self.types.insert(Box::from(ty), i);
                self.write_string(ty);
            }
        }
        Ok(())
    }
}

impl<B: BufMut + Default> Default for Encoder<B> {
    fn default() -> Self {
        Encoder::new(B::default())
    }
}

impl<B: BufMut> std::fmt::Debug for Encoder<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("classes", &self.classes.len())
            .field("types", &self.types.len())
            .field("refs", &self.refs)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(f: impl FnOnce(&mut Encoder)) -> Vec<u8> {
        let mut e = Encoder::new(Vec::new());
        f(&mut e);
        e.into_inner()
    }

    #[test]
    fn ints_use_the_shortest_form() {
        assert_eq!(bytes(|e| e.write_int(0)), [0x90]);
        assert_eq!(bytes(|e| e.write_int(-16)), [0x80]);
        assert_eq!(bytes(|e| e.write_int(47)), [0xbf]);
        assert_eq!(bytes(|e| e.write_int(48)), [0xc8, 0x30]);
        assert_eq!(bytes(|e| e.write_int(-2048)), [0xc0, 0x00]);
        assert_eq!(bytes(|e| e.write_int(2048)), [0xd4, 0x08, 0x00]);
        assert_eq!(bytes(|e| e.write_int(-262144)), [0xd0, 0x00, 0x00]);
        assert_eq!(
            bytes(|e| e.write_int(262144)),
            [b'I', 0x00, 0x04, 0x00, 0x00]
        );
    }

    #[test]
    fn longs_use_the_shortest_form() {
        assert_eq!(bytes(|e| e.write_long(0)), [0xe0]);
        assert_eq!(bytes(|e| e.write_long(-8)), [0xd8]);
        assert_eq!(bytes(|e| e.write_long(16)), [0xf8, 0x10]);
        assert_eq!(bytes(|e| e.write_long(262143)), [0x3f, 0xff, 0xff]);
        assert_eq!(
            bytes(|e| e.write_long(262144)),
            [0x59, 0x00, 0x04, 0x00, 0x00]
        );
        assert_eq!(
            bytes(|e| e.write_long(1 << 31)),
            [b'L', 0, 0, 0, 0, 0x80, 0, 0, 0]
        );
    }

    #[test]
    fn doubles_follow_java() {
        assert_eq!(bytes(|e| e.write_double(0.0)), [0x5b]);
        assert_eq!(bytes(|e| e.write_double(-0.0)), [0x5b]);
        assert_eq!(bytes(|e| e.write_double(1.0)), [0x5c]);
        assert_eq!(bytes(|e| e.write_double(-128.0)), [0x5d, 0x80]);
        assert_eq!(bytes(|e| e.write_double(32767.0)), [0x5e, 0x7f, 0xff]);
        assert_eq!(
            bytes(|e| e.write_double(12.25)),
            [0x5f, 0x00, 0x00, 0x2f, 0xda]
        );
        assert_eq!(
            bytes(|e| e.write_double(0.1)),
            [0x5f, 0x00, 0x00, 0x00, 0x64]
        );
        assert_eq!(bytes(|e| e.write_double(1.234_567_89))[0], b'D');
    }

    #[test]
    fn dates_prefer_minutes() {
        assert_eq!(bytes(|e| e.write_date(60_000)), [0x4b, 0, 0, 0, 1]);
        assert_eq!(bytes(|e| e.write_date(1)), [0x4a, 0, 0, 0, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn class_definitions_are_sent_once() {
        let out = bytes(|e| {
            e.begin_object("P", &["x"]).unwrap();
            e.write_int(1);
            e.begin_object("P", &["x"]).unwrap();
            e.write_int(2);
            assert!(matches!(
                e.begin_object("P", &["y"]),
                Err(EncodeError::ClassRedefined { .. })
            ));
        });
        assert_eq!(
            out,
            [b'C', 0x01, b'P', 0x91, 0x01, b'x', 0x60, 0x91, 0x60, 0x92]
        );
    }

    #[test]
    fn types_are_sent_once() {
        let out = bytes(|e| {
            e.begin_list(1, Some("[int")).unwrap();
            e.write_int(1);
            e.begin_list(0, Some("[int")).unwrap();
        });
        assert_eq!(out, [0x71, 0x04, b'[', b'i', b'n', b't', 0x91, 0x70, 0x90]);
    }

    #[test]
    fn dangling_references_are_refused() {
        let mut e = Encoder::new(Vec::new());
        assert!(e.write_ref(0).is_err());
        e.begin_map(None).unwrap();
        e.end_map();
        assert!(e.write_ref(0).is_ok());
        assert!(e.write_value(&Value::Ref(1)).is_err());
    }
}
