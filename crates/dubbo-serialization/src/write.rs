//! The writer: `GenericDataOutput` and the parts of `GenericObjectOutput`
//! and the Builders that the forms of the format need.

use crate::format::{descriptor_id, DESC_ARRAY_LIST, DESC_HASH_MAP, DESC_STRING};
use crate::tag::*;

/// Writes the format into a `Vec<u8>`, as Dubbo's `GenericObjectOutput`
/// does (its buffering never changes the bytes).
///
/// Back-references are the caller's: Dubbo writes a bean equal to one
/// already written in the same stream as [`Writer::write_ref`] of its index
/// (beans are numbered from 0 in the order their `OBJECT` was written).
#[derive(Debug, Default, Clone)]
pub struct Writer {
    out: Vec<u8>,
}

/// The fewest little-endian bytes whose sign extension is `v` (1 to 8).
fn signed_len(v: i64) -> usize {
    let mut n = 1;
    while n < 8 {
        let shift = 64 - 8 * n;
        if (v << shift) >> shift == v {
            break;
        }
        n += 1;
    }
    n
}

/// Appends `v` as `writeVarint32`/`writeVarint64` do: a constant tag for
/// -15..=31, else `VARINT + n - 1` and `n` little-endian bytes.
pub(crate) fn put_varint(out: &mut Vec<u8>, v: i64) {
    if (-15..=31).contains(&v) {
        out.push((i64::from(VARINT_0) + v) as u8);
        return;
    }
    let n = signed_len(v);
    out.push(VARINT + (n as u8 - 1));
    out.extend_from_slice(&v.to_le_bytes()[..n]);
}

/// Appends `v` as `writeUInt`: 7 bits a byte, least significant first, the
/// last byte with its high bit set.
pub(crate) fn put_uint(out: &mut Vec<u8>, mut v: u32) {
    loop {
        let low = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(low | 0x80);
            return;
        }
        out.push(low);
    }
}

impl Writer {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// A writer appending to `out`.
    pub fn with_buffer(out: Vec<u8>) -> Self {
        Self { out }
    }

    /// The bytes written.
    pub fn into_inner(self) -> Vec<u8> {
        self.out
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.out
    }

    /// `writeBool`.
    pub fn write_bool(&mut self, v: bool) {
        self.out.push(if v { VARINT_1 } else { VARINT_0 });
    }

    /// `writeByte`: a constant tag for 0..=31, else `VARINT8` and the byte
    /// (so negative bytes are never constants).
    pub fn write_byte(&mut self, v: i8) {
        if (0..=31).contains(&v) {
            self.out.push(VARINT_0 + v as u8);
        } else {
            self.out.push(VARINT);
            self.out.push(v as u8);
        }
    }

    /// `writeShort`.
    pub fn write_short(&mut self, v: i16) {
        put_varint(&mut self.out, i64::from(v));
    }

    /// `writeInt`.
    pub fn write_int(&mut self, v: i32) {
        put_varint(&mut self.out, i64::from(v));
    }

    /// `writeLong`.
    pub fn write_long(&mut self, v: i64) {
        put_varint(&mut self.out, v);
    }

    /// `writeFloat`: the raw bits as an int.
    pub fn write_float(&mut self, v: f32) {
        put_varint(&mut self.out, i64::from(v.to_bits() as i32));
    }

    /// `writeDouble`: the raw bits as a long.
    pub fn write_double(&mut self, v: f64) {
        put_varint(&mut self.out, v.to_bits() as i64);
    }

    /// `writeUInt`.
    pub fn write_uint(&mut self, v: u32) {
        put_uint(&mut self.out, v);
    }

    /// `writeUTF`: `NULL`, `DUMMY` for `""`, else `BYTES`, the number of
    /// UTF-16 units and each unit in one to three bytes.
    pub fn write_utf(&mut self, s: Option<&str>) {
        let Some(s) = s else {
            self.out.push(OBJECT_NULL);
            return;
        };
        if s.is_empty() {
            self.out.push(OBJECT_DUMMY);
            return;
        }
        self.out.push(OBJECT_BYTES);
        let units = s.encode_utf16().count();
        put_uint(&mut self.out, units as u32);
        if s.is_ascii() {
            self.out.extend_from_slice(s.as_bytes());
            return;
        }
        for c in s.encode_utf16() {
            if c < 0x80 {
                self.out.push(c as u8);
            } else if c < 0x800 {
                self.out.push(0xc0 | ((c >> 6) & 0x1f) as u8);
                self.out.push(0x80 | (c & 0x3f) as u8);
            } else {
                self.out.push(0xe0 | ((c >> 12) & 0x0f) as u8);
                self.out.push(0x80 | ((c >> 6) & 0x3f) as u8);
                self.out.push(0x80 | (c & 0x3f) as u8);
            }
        }
    }

    /// `writeBytes`: `NULL`, `DUMMY` for an empty array, else `BYTES`, the
    /// length and the bytes.
    pub fn write_bytes(&mut self, b: Option<&[u8]>) {
        match b {
            None => self.out.push(OBJECT_NULL),
            Some([]) => self.out.push(OBJECT_DUMMY),
            Some(b) => {
                self.out.push(OBJECT_BYTES);
                put_uint(&mut self.out, b.len() as u32);
                self.out.extend_from_slice(b);
            }
        }
    }

    /// `writeObject(null)`.
    pub fn write_null(&mut self) {
        self.out.push(OBJECT_NULL);
    }

    /// The class descriptor `writeObject` puts first: `DESC_ID` and the
    /// index of a well-known class, else `DESC` and the descriptor.
    pub fn write_descriptor(&mut self, desc: &str) {
        match descriptor_id(desc) {
            Some(id) => {
                self.out.push(OBJECT_DESC_ID);
                put_uint(&mut self.out, id);
            }
            None => {
                self.out.push(OBJECT_DESC);
                self.write_utf(Some(desc));
            }
        }
    }

    fn write_descriptor_id(&mut self, id: u32) {
        self.out.push(OBJECT_DESC_ID);
        put_uint(&mut self.out, id);
    }

    /// `writeObject` of a `String` (or `null`).
    pub fn write_string_object(&mut self, s: Option<&str>) {
        match s {
            None => self.write_null(),
            Some(s) => {
                self.write_descriptor_id(DESC_STRING);
                self.write_utf(Some(s));
            }
        }
    }

    /// `writeObject` of an `ArrayList` of `len` elements: the caller then
    /// writes each element with one `writeObject` form.
    pub fn begin_array_list(&mut self, len: u32) {
        self.write_descriptor_id(DESC_ARRAY_LIST);
        self.out.push(OBJECT_VALUES);
        put_uint(&mut self.out, len);
    }

    /// `writeObject` of a `HashMap` of `len` entries: the caller then writes
    /// each key and value with a `writeObject` form, in the map's order.
    pub fn begin_hash_map(&mut self, len: u32) {
        self.write_descriptor_id(DESC_HASH_MAP);
        self.out.push(OBJECT_MAP);
        put_uint(&mut self.out, len);
    }

    /// `writeObject` of a `HashMap<String, String>`, entries in the order given.
    pub fn write_string_map(&mut self, entries: &[(&str, &str)]) {
        self.begin_hash_map(entries.len() as u32);
        for (k, v) in entries {
            self.write_string_object(Some(k));
            self.write_string_object(Some(v));
        }
    }

    /// `writeObject` of a bean of class descriptor `desc`
    /// ([`class_descriptor`](crate::class_descriptor)) with `field_count`
    /// fields: the caller then writes each field in Builder's order (sorted
    /// by name) with the form of its declared type.
    pub fn begin_bean(&mut self, desc: &str, field_count: i32) {
        self.write_descriptor(desc);
        self.begin_bean_body(field_count);
    }

    /// A bean in a field whose declared type is its class (no descriptor):
    /// `OBJECT` and the field count.
    pub fn begin_bean_body(&mut self, field_count: i32) {
        self.out.push(OBJECT);
        self.write_int(field_count);
    }

    /// `writeObject` of a bean equal to the `index`-th bean of the stream.
    pub fn write_ref(&mut self, desc: &str, index: u32) {
        self.write_descriptor(desc);
        self.out.push(OBJECT_REF);
        put_uint(&mut self.out, index);
    }

    /// `writeObject` of a boxed `Integer`.
    pub fn write_boxed_int(&mut self, v: i32) {
        self.write_descriptor_id(12);
        self.out.push(OBJECT_VALUE);
        self.write_int(v);
    }

    /// `writeObject` of a boxed `Long`.
    pub fn write_boxed_long(&mut self, v: i64) {
        self.write_descriptor_id(13);
        self.out.push(OBJECT_VALUE);
        self.write_long(v);
    }

    /// `writeObject` of a boxed `Double`.
    pub fn write_boxed_double(&mut self, v: f64) {
        self.write_descriptor_id(15);
        self.out.push(OBJECT_VALUE);
        self.write_double(v);
    }

    /// `writeObject` of a boxed `Boolean` (no `VALUE` tag: the constant itself).
    pub fn write_boxed_bool(&mut self, v: bool) {
        self.write_descriptor_id(8);
        self.write_bool(v);
    }

    /// `writeObject` of a `Throwable` of class descriptor `desc`: `STREAM`
    /// and `stream`, which must be Dubbo's `CompactedObjectOutputStream`
    /// serialization of it (this crate does not produce one).
    pub fn write_throwable(&mut self, desc: &str, stream: &[u8]) {
        self.write_descriptor(desc);
        self.out.push(OBJECT_STREAM);
        put_uint(&mut self.out, stream.len() as u32);
        self.out.extend_from_slice(stream);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(v: i64) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, v);
        out
    }

    #[test]
    fn varints_are_the_fewest_sign_extending_bytes() {
        assert_eq!(varint(0), [25]);
        assert_eq!(varint(-15), [10]);
        assert_eq!(varint(31), [56]);
        assert_eq!(varint(32), [0, 32]);
        assert_eq!(varint(-16), [0, 0xf0]);
        assert_eq!(varint(127), [0, 127]);
        assert_eq!(varint(128), [1, 0x80, 0]);
        assert_eq!(varint(-129), [1, 0x7f, 0xff]);
        assert_eq!(varint(i64::from(i32::MIN)), [3, 0, 0, 0, 0x80]);
        assert_eq!(
            varint(i64::MAX),
            [7, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]
        );
    }

    #[test]
    fn uints_mark_their_last_byte() {
        let mut out = Vec::new();
        put_uint(&mut out, 0);
        put_uint(&mut out, 127);
        put_uint(&mut out, 128);
        assert_eq!(out, [0x80, 0xff, 0x00, 0x81]);
    }

    #[test]
    fn negative_bytes_are_never_constants() {
        let mut w = Writer::new();
        w.write_byte(-1);
        w.write_byte(31);
        w.write_byte(32);
        assert_eq!(w.into_inner(), [0, 0xff, 56, 0, 32]);
    }
}
