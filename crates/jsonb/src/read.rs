//! The reader: JSONB bytes as fastjson2's `JSONReaderJSONB` reads them.

use std::borrow::Cow;

use crate::bc;
use crate::error::DecodeError;

/// Default limit on nested arrays, objects and typed values.
pub const DEFAULT_MAX_DEPTH: usize = 128;

/// Reads JSONB values from a byte slice, one document (one
/// `JSONB.toBytes` output) per reader: the symbol table of field and type
/// names lives as long as the reader.
///
/// Strings borrow from the input when they can (ASCII and UTF-8 strings),
/// so reading a POJO field by field allocates only for its symbols.
/// Every length is checked against the rest of the input before anything
/// is allocated, and nesting is limited, so malformed input is an error,
/// never a panic or an unbounded allocation.
///
/// ```
/// use fastjson2_jsonb::{Reader, Writer};
/// let mut w = Writer::new();
/// w.write_type_name("demo.Point");
/// w.start_object();
/// w.write_field_name("x");
/// w.write_i32(7);
/// w.end_object();
/// let bytes = w.into_inner();
///
/// let mut r = Reader::new(&bytes);
/// assert_eq!(r.read_type_name().unwrap().as_deref(), Some("demo.Point"));
/// r.start_object().unwrap();
/// assert_eq!(r.next_field().unwrap().as_deref(), Some("x"));
/// assert_eq!(r.read_i32().unwrap(), 7);
/// assert_eq!(r.next_field().unwrap(), None);
/// r.finish().unwrap();
/// ```
#[derive(Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    symbols: Vec<Cow<'a, str>>,
    pub(crate) depth: usize,
    pub(crate) max_depth: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self {
            buf,
            pos: 0,
            symbols: Vec::new(),
            depth: 0,
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }

    /// Sets the nesting limit (default [`DEFAULT_MAX_DEPTH`]).
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// Offset of the next byte.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Whether the whole input has been read.
    pub fn is_at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Ok when the whole input has been read, else [`DecodeError::TrailingBytes`].
    pub fn finish(&self) -> Result<(), DecodeError> {
        if self.is_at_end() {
            Ok(())
        } else {
            Err(DecodeError::TrailingBytes {
                count: self.buf.len() - self.pos,
                offset: self.pos,
            })
        }
    }

    /// The next type byte, not consumed.
    pub fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    /// Whether the next value is `null`; consumes it if so.
    pub fn read_null(&mut self) -> bool {
        if self.peek() == Some(bc::NULL) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(crate) fn byte(&mut self) -> Result<u8, DecodeError> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or(DecodeError::UnexpectedEof { offset: self.pos })?;
        self.pos += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        match end {
            Some(end) => {
                let s = &self.buf[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(DecodeError::UnexpectedEof {
                offset: self.buf.len(),
            }),
        }
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub(crate) fn unexpected(&self, tag: u8, at: usize, expected: &'static str) -> DecodeError {
        DecodeError::UnexpectedType {
            tag,
            found: bc::name(tag),
            offset: at,
            expected,
        }
    }

    /// The int32 body after its first byte `b` (compact or full form).
    fn int32_after(&mut self, b: u8) -> Result<i32, DecodeError> {
        Ok(match b {
            0xf0..=0xff | 0x00..=bc::INT32_NUM_MAX => b as i8 as i32,
            bc::INT32_BYTE_MIN..=bc::INT32_BYTE_MAX => {
                ((b as i32 - bc::INT32_BYTE_ZERO as i32) << 8) + self.byte()? as i32
            }
            bc::INT32_SHORT_MIN..=bc::INT32_SHORT_MAX => {
                let [x, y] = self.array()?;
                ((b as i32 - bc::INT32_SHORT_ZERO as i32) << 16) + ((x as i32) << 8) + y as i32
            }
            bc::INT32 => i32::from_be_bytes(self.array()?),
            _ => return Err(self.unexpected(b, self.pos - 1, "an int32")),
        })
    }

    /// An int32 in any of its forms (lengths, symbol indexes, `int` values).
    pub fn read_int32_raw(&mut self) -> Result<i32, DecodeError> {
        let b = self.byte()?;
        self.int32_after(b)
    }

    /// A length: non-negative and at most the bytes left (`unit` bytes per item).
    fn length(&mut self, unit: usize) -> Result<usize, DecodeError> {
        let at = self.pos;
        let n = self.read_int32_raw()?;
        let left = self.buf.len() - self.pos;
        if n < 0 || (n as usize).saturating_mul(unit) > left {
            return Err(DecodeError::InvalidLength {
                length: n as i64,
                offset: at,
            });
        }
        Ok(n as usize)
    }

    /// Any integer value (byte, short, int, long forms) as an `i64`; `None`
    /// when the next value is not an integer (nothing is consumed then).
    fn integer(&mut self) -> Result<Option<i64>, DecodeError> {
        let Some(b) = self.peek() else {
            return Err(DecodeError::UnexpectedEof { offset: self.pos });
        };
        let v = match b {
            0xf0..=0xff | 0x00..=bc::INT32 => {
                self.pos += 1;
                self.int32_after(b)? as i64
            }
            bc::INT64_NUM_MIN..=bc::INT64_NUM_MAX => {
                self.pos += 1;
                b as i64 - bc::INT64_NUM_MIN as i64 - 8
            }
            bc::INT64_BYTE_MIN..=bc::INT64_BYTE_MAX => {
                self.pos += 1;
                ((b as i64 - bc::INT64_BYTE_ZERO as i64) << 8) + self.byte()? as i64
            }
            bc::INT64_SHORT_MIN..=bc::INT64_SHORT_MAX => {
                self.pos += 1;
                let [x, y] = self.array()?;
                ((b as i64 - bc::INT64_SHORT_ZERO as i64) << 16) + ((x as i64) << 8) + y as i64
            }
            bc::INT64_INT => {
                self.pos += 1;
                i32::from_be_bytes(self.array()?) as i64
            }
            bc::INT64 => {
                self.pos += 1;
                i64::from_be_bytes(self.array()?)
            }
            bc::INT8 => {
                self.pos += 1;
                self.byte()? as i8 as i64
            }
            bc::INT16 => {
                self.pos += 1;
                i16::from_be_bytes(self.array()?) as i64
            }
            _ => return Ok(None),
        };
        Ok(Some(v))
    }

    fn read_integer(&mut self, target: &'static str) -> Result<i64, DecodeError> {
        let at = self.pos;
        match self.integer()? {
            Some(v) => Ok(v),
            None => {
                let b = self.buf[at];
                Err(self.unexpected(b, at, target))
            }
        }
    }

    /// A `long` (any integer form).
    pub fn read_i64(&mut self) -> Result<i64, DecodeError> {
        self.read_integer("a long")
    }

    /// An `int` (any integer form whose value fits).
    pub fn read_i32(&mut self) -> Result<i32, DecodeError> {
        self.read_narrowed("an int", "i32")
    }

    /// A `byte` (any integer form whose value fits; Dubbo's response type byte).
    pub fn read_i8(&mut self) -> Result<i8, DecodeError> {
        self.read_narrowed("a byte", "i8")
    }

    /// An integer in any form, as `T` (the Rust type `target`) if its value
    /// fits: the narrow reads differ only in the type.
    fn read_narrowed<T: TryFrom<i64>>(
        &mut self,
        what: &'static str,
        target: &'static str,
    ) -> Result<T, DecodeError> {
        let at = self.pos;
        let v = self.read_integer(what)?;
        T::try_from(v).map_err(|_| DecodeError::OutOfRange {
            value: v.to_string(),
            target,
            offset: at,
        })
    }

    /// A `double` (any double, float or integer form).
    pub fn read_f64(&mut self) -> Result<f64, DecodeError> {
        let at = self.pos;
        if let Some(v) = self.integer()? {
            return Ok(v as f64);
        }
        let b = self.byte()?;
        Ok(match b {
            bc::DOUBLE_NUM_0 => 0.0,
            bc::DOUBLE_NUM_1 => 1.0,
            bc::DOUBLE_LONG => self.read_i64()? as f64,
            bc::DOUBLE => f64::from_bits(u64::from_be_bytes(self.array()?)),
            bc::FLOAT_INT => self.read_int32_raw()? as f32 as f64,
            bc::FLOAT => f32::from_bits(u32::from_be_bytes(self.array()?)) as f64,
            _ => return Err(self.unexpected(b, at, "a double")),
        })
    }

    /// A `float` (the float forms; doubles and integers are narrowed).
    pub fn read_f32(&mut self) -> Result<f32, DecodeError> {
        match self.peek() {
            Some(bc::FLOAT_INT) => {
                self.pos += 1;
                Ok(self.read_int32_raw()? as f32)
            }
            Some(bc::FLOAT) => {
                self.pos += 1;
                Ok(f32::from_bits(u32::from_be_bytes(self.array()?)))
            }
            _ => Ok(self.read_f64()? as f32),
        }
    }

    /// A `boolean`.
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        let at = self.pos;
        match self.byte()? {
            bc::TRUE => Ok(true),
            bc::FALSE => Ok(false),
            b => Err(self.unexpected(b, at, "a boolean")),
        }
    }

    /// A string (any of its encodings); `null` is an error.
    pub fn read_str(&mut self) -> Result<Cow<'a, str>, DecodeError> {
        let at = self.pos;
        let b = self.byte()?;
        self.string_after(b, at)
    }

    /// A string or `null`.
    pub fn read_opt_str(&mut self) -> Result<Option<Cow<'a, str>>, DecodeError> {
        if self.read_null() {
            Ok(None)
        } else {
            self.read_str().map(Some)
        }
    }

    /// The string body after its type byte `b` (at offset `at`).
    pub(crate) fn string_after(&mut self, b: u8, at: usize) -> Result<Cow<'a, str>, DecodeError> {
        match b {
            bc::STR_ASCII_FIX_0..=bc::STR_ASCII => {
                let n = if b == bc::STR_ASCII {
                    self.length(1)?
                } else {
                    (b - bc::STR_ASCII_FIX_0) as usize
                };
                let bytes = self.take(n)?;
                if bytes.is_ascii() {
                    // ASCII is UTF-8: borrow
                    Ok(Cow::Borrowed(
                        std::str::from_utf8(bytes).expect("ASCII is UTF-8"),
                    ))
                } else {
                    Ok(Cow::Owned(bytes.iter().map(|&c| c as char).collect()))
                }
            }
            bc::STR_UTF8 => {
                let n = self.length(1)?;
                let start = self.pos;
                let bytes = self.take(n)?;
                std::str::from_utf8(bytes).map(Cow::Borrowed).map_err(|_| {
                    DecodeError::InvalidString {
                        encoding: "UTF-8",
                        offset: start,
                    }
                })
            }
            bc::STR_UTF16 | bc::STR_UTF16LE | bc::STR_UTF16BE => {
                let n = self.length(1)?;
                let start = self.pos;
                let mut bytes = self.take(n)?;
                let bad = DecodeError::InvalidString {
                    encoding: "UTF-16",
                    offset: start,
                };
                if n % 2 != 0 {
                    return Err(bad);
                }
                let mut le = b == bc::STR_UTF16LE;
                if b == bc::STR_UTF16 && n >= 2 {
                    // java.nio UTF_16: an optional byte-order mark, big-endian without one
                    match (bytes[0], bytes[1]) {
                        (0xfe, 0xff) => bytes = &bytes[2..],
                        (0xff, 0xfe) => {
                            bytes = &bytes[2..];
                            le = true;
                        }
                        _ => {}
                    }
                }
                let units = bytes.chunks_exact(2).map(|c| {
                    if le {
                        u16::from_le_bytes([c[0], c[1]])
                    } else {
                        u16::from_be_bytes([c[0], c[1]])
                    }
                });
                let mut s = String::with_capacity(bytes.len());
                for c in char::decode_utf16(units) {
                    s.push(c.map_err(|_| bad.clone())?);
                }
                Ok(Cow::Owned(s))
            }
            bc::STR_GB18030 => Err(DecodeError::Unsupported {
                tag: b,
                what: "a GB18030 string",
                offset: at,
            }),
            bc::SYMBOL => {
                // a string written by writeSymbol: a symbol index (or a new symbol)
                self.symbol_body()
            }
            _ => Err(self.unexpected(b, at, "a string")),
        }
    }

    /// After `SYMBOL` or `TYPED_ANY`: a new name (string + index) or an index.
    fn symbol_body(&mut self) -> Result<Cow<'a, str>, DecodeError> {
        let at = self.pos;
        let b = self.byte()?;
        if bc::is_string(b) {
            let name = self.string_after(b, at)?;
            let idx_at = self.pos;
            let idx = self.read_int32_raw()?;
            let defined = self.symbols.len();
            if idx < 0 || idx as usize > defined {
                return Err(DecodeError::InvalidSymbol {
                    index: idx as i64,
                    defined,
                    offset: idx_at,
                });
            }
            if idx as usize == defined {
                if defined == 0 {
                    // one allocation for a POJO's names, not one per doubling
                    self.symbols.reserve(16);
                }
                self.symbols.push(name.clone());
            } else {
                self.symbols[idx as usize] = name.clone();
            }
            Ok(name)
        } else {
            let idx = self.int32_after(b)?;
            self.symbols
                .get(usize::try_from(idx).unwrap_or(usize::MAX))
                .cloned()
                .ok_or(DecodeError::InvalidSymbol {
                    index: idx as i64,
                    defined: self.symbols.len(),
                    offset: at,
                })
        }
    }

    /// The class name before a typed value (`WriteClassName`), if there is
    /// one: `Some(name)` with the name consumed, `None` otherwise.
    pub fn read_type_name(&mut self) -> Result<Option<Cow<'a, str>>, DecodeError> {
        if self.peek() != Some(bc::TYPED_ANY) {
            return Ok(None);
        }
        self.pos += 1;
        self.symbol_body().map(Some)
    }

    /// Starts an object (a bean or a map): then [`next_field`](Self::next_field)
    /// until it says `None`.
    pub fn start_object(&mut self) -> Result<(), DecodeError> {
        let at = self.pos;
        match self.byte()? {
            bc::OBJECT => Ok(()),
            b => Err(self.unexpected(b, at, "an object")),
        }
    }

    /// The next field name (a symbol or a plain string key), or `None` at
    /// the end of the object (consumed). Keys that are not strings are an
    /// error ([`DecodeError::Unsupported`]).
    pub fn next_field(&mut self) -> Result<Option<Cow<'a, str>>, DecodeError> {
        let at = self.pos;
        let b = self.byte()?;
        match b {
            bc::OBJECT_END => Ok(None),
            bc::SYMBOL => self.symbol_body().map(Some),
            b if bc::is_string(b) => self.string_after(b, at).map(Some),
            bc::NULL => Err(DecodeError::Unsupported {
                tag: b,
                what: "a null map key",
                offset: at,
            }),
            _ => Err(DecodeError::Unsupported {
                tag: b,
                what: "a map key that is not a string",
                offset: at,
            }),
        }
    }

    /// Starts an array: its length, or `None` for `null`. The length is
    /// checked against the bytes left (each item takes at least one byte).
    pub fn start_array(&mut self) -> Result<Option<usize>, DecodeError> {
        let at = self.pos;
        match self.byte()? {
            bc::NULL => Ok(None),
            b @ bc::ARRAY_FIX_0..=bc::ARRAY_FIX_MAX => Ok(Some((b - bc::ARRAY_FIX_0) as usize)),
            bc::ARRAY => self.length(1).map(Some),
            b => Err(self.unexpected(b, at, "an array")),
        }
    }

    /// A `byte[]` (`BINARY`).
    pub fn read_binary(&mut self) -> Result<&'a [u8], DecodeError> {
        let at = self.pos;
        match self.byte()? {
            bc::BINARY => {
                let n = self.length(1)?;
                self.take(n)
            }
            b => Err(self.unexpected(b, at, "binary")),
        }
    }

    pub(crate) fn enter(&mut self) -> Result<(), DecodeError> {
        if self.depth >= self.max_depth {
            return Err(DecodeError::TooDeep {
                max: self.max_depth,
                offset: self.pos,
            });
        }
        self.depth += 1;
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Reads the rest of a value's body after its type byte for the date,
    /// time and big-number types: consumed and reported as unsupported.
    pub(crate) fn unsupported(&self, b: u8, at: usize) -> DecodeError {
        let what = match b {
            bc::LOCAL_TIME | bc::LOCAL_DATETIME | bc::LOCAL_DATE | bc::TIMESTAMP_WITH_TIMEZONE => {
                "a java.time value"
            }
            bc::TIMESTAMP_MILLIS
            | bc::TIMESTAMP_SECONDS
            | bc::TIMESTAMP_MINUTES
            | bc::TIMESTAMP => "a timestamp",
            bc::DECIMAL_LONG | bc::DECIMAL => "a BigDecimal",
            bc::BIGINT_LONG | bc::BIGINT => "a BigInteger",
            _ => "this type",
        };
        DecodeError::Unsupported {
            tag: b,
            what,
            offset: at,
        }
    }
}
