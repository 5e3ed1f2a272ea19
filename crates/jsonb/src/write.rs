//! The writer: JSONB bytes as fastjson2's `JSONWriterJSONB` writes them.

use crate::bc;
use crate::error::EncodeError;

/// FNV-1a 64-bit, the hash fastjson2 keys its symbol table with
/// (`com.alibaba.fastjson2.util.Fnv.hashCode64`); here only to find a name
/// already written without keeping a copy of it.
fn fnv64(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for c in s.encode_utf16() {
        h ^= u64::from(c);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Number of symbols kept inline before the table spills to the heap; a
/// contract POJO uses about ten (its type name and fields).
const INLINE_SYMBOLS: usize = 16;

/// Writes JSONB values into a byte buffer.
///
/// Field and type names go through the document's symbol table, as with
/// fastjson2's `WriteNameAsSymbol` / `WriteClassName`: the first use writes
/// the name and assigns the next index, later uses write only the index.
/// One `JSONB.toBytes` call is one document; call
/// [`reset_symbols`](Self::reset_symbols) between documents that share the
/// buffer (the [`dubbo`](crate::dubbo) helpers do).
///
/// The choices between encodings (fixed vs. length-prefixed strings, Latin-1
/// vs. UTF-8 vs. UTF-16LE, the integer and double forms) are fastjson2
/// 2.0.56's on a little-endian JVM, so the output is byte for byte what Java
/// writes.
///
/// ```
/// let mut w = fastjson2_jsonb::Writer::new();
/// w.write_type_name("demo.Point");
/// w.start_object();
/// w.write_field_name("x");
/// w.write_i32(7);
/// w.end_object();
/// assert_eq!(w.as_bytes()[0], fastjson2_jsonb::bc::TYPED_ANY);
/// ```
#[derive(Debug, Default)]
pub struct Writer {
    buf: Vec<u8>,
    inline: [u64; INLINE_SYMBOLS],
    spilled: Vec<u64>,
    symbols: usize,
}

impl Writer {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// A writer that appends to `buf` (its content is kept).
    pub fn with_buffer(buf: Vec<u8>) -> Self {
        Self {
            buf,
            ..Self::default()
        }
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The buffer, for framing around the JSONB bytes.
    pub fn buffer_mut(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// The bytes written.
    pub fn into_inner(self) -> Vec<u8> {
        self.buf
    }

    /// Starts a new document: forgets every symbol (the buffer is kept).
    pub fn reset_symbols(&mut self) {
        self.symbols = 0;
        self.spilled.clear();
    }

    /// Index of `name` in the symbol table, or adds it and returns `Err(new index)`.
    fn symbol(&mut self, name: &str) -> Result<usize, usize> {
        let h = fnv64(name);
        let inline = self.symbols.min(INLINE_SYMBOLS);
        if let Some(i) = self.inline[..inline].iter().position(|&x| x == h) {
            return Ok(i);
        }
        if let Some(i) = self.spilled.iter().position(|&x| x == h) {
            return Ok(INLINE_SYMBOLS + i);
        }
        let i = self.symbols;
        if i < INLINE_SYMBOLS {
            self.inline[i] = h;
        } else {
            self.spilled.push(h);
        }
        self.symbols += 1;
        Err(i)
    }

    /// `null`.
    pub fn write_null(&mut self) {
        self.buf.push(bc::NULL);
    }

    /// A `boolean`.
    pub fn write_bool(&mut self, v: bool) {
        self.buf.push(if v { bc::TRUE } else { bc::FALSE });
    }

    /// A `java.lang.Byte` (what Dubbo's `writeByte` puts on the wire).
    pub fn write_i8(&mut self, v: i8) {
        self.buf.extend_from_slice(&[bc::INT8, v as u8]);
    }

    /// A `java.lang.Short`.
    pub fn write_i16(&mut self, v: i16) {
        self.buf.push(bc::INT16);
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// An `int`, in the shortest of the four int32 forms.
    pub fn write_i32(&mut self, v: i32) {
        let forms = [0, bc::INT32_BYTE_ZERO, bc::INT32_SHORT_ZERO];
        if !self.write_compact(i64::from(v), -16..=47, forms) {
            self.buf.push(bc::INT32);
            self.buf.extend_from_slice(&v.to_be_bytes());
        }
    }

    /// A `long`, in the shortest of the five int64 forms.
    pub fn write_i64(&mut self, v: i64) {
        let forms = [
            bc::INT64_NUM_MIN + 8,
            bc::INT64_BYTE_ZERO,
            bc::INT64_SHORT_ZERO,
        ];
        if self.write_compact(v, -8..=15, forms) {
            return;
        }
        if let Ok(i) = i32::try_from(v) {
            self.buf.push(bc::INT64_INT);
            self.buf.extend_from_slice(&i.to_be_bytes());
        } else {
            self.buf.push(bc::INT64);
            self.buf.extend_from_slice(&v.to_be_bytes());
        }
    }

    /// Writes `v` in the one-, two- or three-byte form that holds it
    /// (`false` if none does): ints and longs write these alike, each with
    /// its own range of the one-byte form and `zeros`, the tag that stands
    /// for zero in each form. The two- and three-byte forms hold
    /// -2048..=2047 and -262144..=262143.
    #[inline]
    fn write_compact(
        &mut self,
        v: i64,
        one_byte: std::ops::RangeInclusive<i64>,
        zeros: [u8; 3],
    ) -> bool {
        let (zero, len) = if one_byte.contains(&v) {
            (zeros[0], 1)
        } else if (-2048..=2047).contains(&v) {
            (zeros[1], 2)
        } else if (-262_144..=262_143).contains(&v) {
            (zeros[2], 3)
        } else {
            return false;
        };
        // The tag holds the high bits, the low bytes follow big-endian.
        let tag = (i64::from(zero) + (v >> (8 * (len - 1)))) as u8;
        match len {
            1 => self.buf.push(tag),
            2 => self.buf.extend_from_slice(&[tag, v as u8]),
            _ => self.buf.extend_from_slice(&[tag, (v >> 8) as u8, v as u8]),
        }
        true
    }

    /// A `float`: integral values in -262144..=262143 as an int32, others
    /// as their IEEE bits (Java's `intValue == value` test: `-0.0` is `0`).
    pub fn write_f32(&mut self, v: f32) {
        let i = v as i32;
        if i as f32 == v && (-262_144..=262_143).contains(&i) {
            self.buf.push(bc::FLOAT_INT);
            self.write_i32(i);
        } else {
            // Float.floatToIntBits: one canonical NaN
            let bits = if v.is_nan() { f32::NAN } else { v }.to_bits();
            self.buf.push(bc::FLOAT);
            self.buf.extend_from_slice(&bits.to_be_bytes());
        }
    }

    /// A `double`: 0 and 1 in the type byte, integral values in int range
    /// as an int64, others as their IEEE bits. Like fastjson2, `-0.0` is
    /// written as `0.0`.
    pub fn write_f64(&mut self, v: f64) {
        if v == 0.0 {
            self.buf.push(bc::DOUBLE_NUM_0);
        } else if v == 1.0 {
            self.buf.push(bc::DOUBLE_NUM_1);
        } else if v >= i32::MIN as f64 && v <= i32::MAX as f64 && (v as i64) as f64 == v {
            self.buf.push(bc::DOUBLE_LONG);
            self.write_i64(v as i64);
        } else {
            // Double.doubleToLongBits: one canonical NaN
            let bits = if v.is_nan() { f64::NAN } else { v }.to_bits();
            self.buf.push(bc::DOUBLE);
            self.buf.extend_from_slice(&bits.to_be_bytes());
        }
    }

    /// A `char` (one UTF-16 code unit).
    pub fn write_char(&mut self, v: u16) {
        self.buf.push(bc::CHAR);
        self.write_i32(i32::from(v));
    }

    /// A `byte[]`.
    pub fn write_binary(&mut self, v: &[u8]) -> Result<(), EncodeError> {
        let n = len32(v.len())?;
        self.buf.push(bc::BINARY);
        self.write_i32(n);
        self.buf.extend_from_slice(v);
        Ok(())
    }

    /// A string, in the encoding fastjson2 picks for it on Java 9+: Latin-1
    /// bytes (`STR_ASCII`, length in the type byte up to 47) when every
    /// character is at most U+00FF; otherwise UTF-8 or UTF-16LE by
    /// fastjson2's rule (UTF-16 when at least a third of the first 64 code
    /// units are not ASCII-like, or when UTF-8 would be longer).
    pub fn write_str(&mut self, s: &str) -> Result<(), EncodeError> {
        if s.is_ascii() {
            self.latin1_header(s.len())?;
            self.buf.extend_from_slice(s.as_bytes());
            return Ok(());
        }
        if s.chars().all(|c| (c as u32) <= 0xff) {
            let n = s.chars().count();
            self.latin1_header(n)?;
            self.buf.extend(s.chars().map(|c| c as u8));
            return Ok(());
        }
        // Java holds this string as UTF-16 (coder UTF16): tryWriteStringUTF16.
        let units = s.encode_utf16().count();
        let check = units.min(64);
        let ascii_like = s
            .encode_utf16()
            .take(check)
            .filter(|&u| u & 0xff == 0 || u >> 8 == 0)
            .count();
        let mut utf16 = ascii_like == 0 || check / ascii_like >= 3;
        if !utf16 && s.len() > units * 2 {
            utf16 = true;
        }
        if utf16 {
            let n = len32(units * 2)?;
            self.buf.push(bc::STR_UTF16LE);
            self.write_i32(n);
            self.buf.reserve(units * 2);
            for u in s.encode_utf16() {
                self.buf.extend_from_slice(&u.to_le_bytes());
            }
        } else {
            let n = len32(s.len())?;
            self.buf.push(bc::STR_UTF8);
            self.write_i32(n);
            self.buf.extend_from_slice(s.as_bytes());
        }
        Ok(())
    }

    fn latin1_header(&mut self, n: usize) -> Result<(), EncodeError> {
        self.length_header(
            n,
            (bc::STR_ASCII_FIX_0, bc::STR_ASCII_FIX_LEN),
            bc::STR_ASCII,
        )
    }

    /// A length `n` in the type byte (`fix_0 + n`) while it is at most
    /// `fix_max`, else after `tag` as an int32.
    fn length_header(
        &mut self,
        n: usize,
        (fix_0, fix_max): (u8, usize),
        tag: u8,
    ) -> Result<(), EncodeError> {
        if n <= fix_max {
            self.buf.push(fix_0 + n as u8);
        } else {
            let n = len32(n)?;
            self.buf.push(tag);
            self.write_i32(n);
        }
        Ok(())
    }

    /// An optional string: `None` is `null`.
    pub fn write_opt_str(&mut self, s: Option<&str>) -> Result<(), EncodeError> {
        match s {
            Some(s) => self.write_str(s),
            None => {
                self.write_null();
                Ok(())
            }
        }
    }

    /// Starts an array of `len` items (`ArrayList`, `Object[]`, ... : the
    /// items follow, there is no end marker).
    pub fn start_array(&mut self, len: usize) -> Result<(), EncodeError> {
        self.length_header(len, (bc::ARRAY_FIX_0, bc::ARRAY_FIX_LEN), bc::ARRAY)
    }

    /// Starts an object (a bean or a map); end it with [`end_object`](Self::end_object).
    pub fn start_object(&mut self) {
        self.buf.push(bc::OBJECT);
    }

    /// Ends an object.
    pub fn end_object(&mut self) {
        self.buf.push(bc::OBJECT_END);
    }

    /// A bean's field name as a symbol (`WriteNameAsSymbol`): the name and
    /// its new index the first time, the index afterwards.
    pub fn write_field_name(&mut self, name: &str) -> Result<(), EncodeError> {
        self.buf.push(bc::SYMBOL);
        self.symbol_body(name)
    }

    /// A map key: a plain string (fastjson2 does not make map keys symbols).
    pub fn write_map_key(&mut self, key: &str) -> Result<(), EncodeError> {
        self.write_str(key)
    }

    /// The class name before a value (`WriteClassName`): `TYPED_ANY`, then
    /// the name and its new symbol index the first time, the index afterwards.
    pub fn write_type_name(&mut self, name: &str) {
        self.buf.push(bc::TYPED_ANY);
        // a class name is far below 2 GiB; write_str cannot fail here
        let _ = self.symbol_body(name);
    }

    fn symbol_body(&mut self, name: &str) -> Result<(), EncodeError> {
        match self.symbol(name) {
            Ok(i) => self.write_i32(i as i32),
            Err(i) => {
                self.write_str(name)?;
                self.write_i32(i as i32);
            }
        }
        Ok(())
    }

    /// A reference to a value written before (`ReferenceDetection`), by its
    /// JSONPath from the document root, such as `$[0]`.
    pub fn write_reference(&mut self, path: &str) -> Result<(), EncodeError> {
        self.buf.push(bc::REFERENCE);
        self.write_str(path)
    }
}

fn len32(n: usize) -> Result<i32, EncodeError> {
    i32::try_from(n).map_err(|_| EncodeError::TooLong(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_fastjson2() {
        // Fnv.hashCode64("") is the FNV offset basis
        assert_eq!(fnv64(""), 0xcbf2_9ce4_8422_2325);
    }

    #[test]
    fn symbols_spill_past_the_inline_table() {
        let mut w = Writer::new();
        for i in 0..40 {
            assert_eq!(w.symbol(&format!("f{i}")), Err(i));
        }
        for i in 0..40 {
            assert_eq!(w.symbol(&format!("f{i}")), Ok(i));
        }
        w.reset_symbols();
        assert_eq!(w.symbol("f39"), Err(0));
    }
}
