//! Dubbo's `fastjson2` serialization (id 23, content type `text/jsonb`):
//! the framing of Dubbo 3.x's `FastJson2ObjectOutput` / `FastJson2ObjectInput`.
//!
//! Every `ObjectOutput` call (`writeUTF`, `writeByte`, `writeObject`,
//! `writeAttachments`, `writeThrowable`) is one `JSONB.toBytes` document —
//! its own symbol table — behind a 4-byte big-endian length. Dubbo writes
//! with `WriteClassName`, `FieldBased`, `ReferenceDetection`, `WriteNulls`,
//! `NotWriteDefaultValue`, `NotWriteHashMapArrayListClassName` and
//! `WriteNameAsSymbol` (plus `ErrorOnNoneSerializable` when
//! `check.serializable` is on, which changes no bytes). For a POJO that
//! means: the class name first, then its fields sorted by name, fields with
//! Java's default value left out (`0`, `null`, `false`; a `double` `0.0` is
//! still written), field names as symbols. `ArrayList` and `HashMap` carry
//! no class name. Dubbo reads with an allow-list (`serialize.allowlist`):
//! a class name the provider does not trust is refused.

use std::borrow::Cow;

use crate::{DecodeError, EncodeError, Reader, Value, Writer};

/// Dubbo's serialization id for fastjson2 (`FASTJSON2_SERIALIZATION_ID`).
pub const SERIALIZATION_ID: u8 = 23;

/// Dubbo's content type for it.
pub const CONTENT_TYPE: &str = "text/jsonb";

/// Writes Dubbo `ObjectOutput` calls as length-prefixed JSONB documents.
///
/// ```
/// use fastjson2_jsonb::dubbo::{ObjectInput, ObjectOutput};
/// let mut out = ObjectOutput::new();
/// out.write_utf("2.0.2").unwrap();
/// out.write_byte(4).unwrap();
/// let bytes = out.into_inner();
/// assert_eq!(&bytes[..5], &[0, 0, 0, 6, 0x4e]);
///
/// let mut input = ObjectInput::new(&bytes);
/// assert_eq!(input.read_utf().unwrap(), "2.0.2");
/// assert_eq!(input.read_byte().unwrap(), 4);
/// assert!(input.is_at_end());
/// ```
#[derive(Debug, Default)]
pub struct ObjectOutput {
    w: Writer,
}

impl ObjectOutput {
    /// An empty output.
    pub fn new() -> Self {
        Self::default()
    }

    /// An output that appends to `buf` (a Dubbo frame under construction).
    pub fn with_buffer(buf: Vec<u8>) -> Self {
        Self {
            w: Writer::with_buffer(buf),
        }
    }

    /// The bytes written.
    pub fn into_inner(self) -> Vec<u8> {
        self.w.into_inner()
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        self.w.as_bytes()
    }

    /// The buffer (to hand it back to its owner with `std::mem::take`).
    pub fn buffer_mut(&mut self) -> &mut Vec<u8> {
        self.w.buffer_mut()
    }

    /// One `writeObject`: `f` writes exactly one JSONB value, which gets a
    /// fresh symbol table and its length in front.
    pub fn write_object<F>(&mut self, f: F) -> Result<(), EncodeError>
    where
        F: FnOnce(&mut Writer) -> Result<(), EncodeError>,
    {
        self.w.reset_symbols();
        let start = self.w.as_bytes().len();
        self.w.buffer_mut().extend_from_slice(&[0; 4]);
        let res = f(&mut self.w);
        let buf = self.w.buffer_mut();
        if let Err(e) = res {
            buf.truncate(start);
            return Err(e);
        }
        let len = buf.len() - start - 4;
        let Ok(len32) = i32::try_from(len) else {
            buf.truncate(start);
            return Err(EncodeError::TooLong(len));
        };
        buf[start..start + 4].copy_from_slice(&len32.to_be_bytes());
        Ok(())
    }

    /// `writeUTF` (a `String` object).
    pub fn write_utf(&mut self, s: &str) -> Result<(), EncodeError> {
        self.write_object(|w| w.write_str(s))
    }

    /// `writeByte` (a `java.lang.Byte` object).
    pub fn write_byte(&mut self, b: i8) -> Result<(), EncodeError> {
        self.write_object(|w| {
            w.write_i8(b);
            Ok(())
        })
    }

    /// `writeObject` of a value tree.
    pub fn write_value(&mut self, v: &Value) -> Result<(), EncodeError> {
        self.write_object(|w| w.write_value(v))
    }

    /// `writeAttachments` of a `HashMap<String, String>`, entries in the
    /// given order (Java writes them in its hash order; any order reads).
    pub fn write_string_map<'k, I>(&mut self, entries: I) -> Result<(), EncodeError>
    where
        I: IntoIterator<Item = (&'k str, &'k str)>,
    {
        self.write_object(|w| {
            w.start_object();
            for (k, v) in entries {
                w.write_map_key(k)?;
                w.write_str(v)?;
            }
            w.end_object();
            Ok(())
        })
    }
}

/// Reads Dubbo `ObjectInput` calls from length-prefixed JSONB documents.
#[derive(Debug, Clone)]
pub struct ObjectInput<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> ObjectInput<'a> {
    /// An input over a Dubbo message body.
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Offset of the next object's length.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Whether every object has been read.
    pub fn is_at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// The bytes not read yet.
    pub fn remaining(&self) -> &'a [u8] {
        &self.buf[self.pos.min(self.buf.len())..]
    }

    /// The next object's JSONB bytes (its length checked against the input).
    pub fn next_document(&mut self) -> Result<&'a [u8], DecodeError> {
        let at = self.pos;
        let head = self.buf.get(at..at + 4).ok_or(DecodeError::UnexpectedEof {
            offset: self.buf.len(),
        })?;
        let len = i32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        let start = at + 4;
        if len < 0 || len as usize > self.buf.len() - start {
            return Err(DecodeError::InvalidLength {
                length: len as i64,
                offset: at,
            });
        }
        self.pos = start + len as usize;
        Ok(&self.buf[start..self.pos])
    }

    /// A reader over the next object.
    pub fn next_object(&mut self) -> Result<Reader<'a>, DecodeError> {
        self.next_document().map(Reader::new)
    }

    /// `readUTF`: the next object, which must be a whole string.
    pub fn read_utf(&mut self) -> Result<Cow<'a, str>, DecodeError> {
        let mut r = self.next_object()?;
        let s = r.read_str()?;
        r.finish()?;
        Ok(s)
    }

    /// `readByte`: the next object, which must be a whole integer in byte range.
    pub fn read_byte(&mut self) -> Result<i8, DecodeError> {
        let mut r = self.next_object()?;
        let b = r.read_i8()?;
        r.finish()?;
        Ok(b)
    }

    /// `readObject`: the next object as a value tree.
    pub fn read_value(&mut self) -> Result<Value, DecodeError> {
        let mut r = self.next_object()?;
        let v = r.read_value()?;
        r.finish()?;
        Ok(v)
    }
}

/// What a `Throwable` written by `writeThrowable` says: its class name as
/// fastjson2 wrote it (`java.lang.` exceptions by their simple name, such
/// as `IllegalStateException`) and its message (`detailMessage`), found in
/// a value tree read with [`ObjectInput::read_value`].
pub fn throwable_summary(v: &Value) -> Option<(String, Option<String>)> {
    let class = v.type_name()?.to_owned();
    let message = v
        .get("detailMessage")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Some((class, message))
}
