//! The reader: `GenericDataInput`, and `GenericObjectInput.readObject`
//! into a [`Value`] tree.

use crate::error::DecodeError;
use crate::format::{descriptor, MAX_DEPTH};
use crate::tag::*;

/// What `writeObject` wrote, as far as the bytes say.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null` (also a `null` `Boolean`).
    Null,
    /// A `new Object()` (`DUMMY`).
    Dummy,
    /// A `Boolean`.
    Bool(bool),
    /// A `Byte`, `Short`, `Integer`, `Long` or a date's milliseconds: the
    /// boxed number (the class says which).
    Int {
        /// The class descriptor.
        class: String,
        /// The number.
        value: i64,
    },
    /// A `Float` or `Double`.
    Float {
        /// The class descriptor.
        class: String,
        /// The number.
        value: f64,
    },
    /// A `Character`.
    Char(u16),
    /// A `String` (also `StringBuilder`/`StringBuffer`).
    String(String),
    /// A `byte[]`.
    Bytes(Vec<u8>),
    /// An `ArrayList` or a `HashSet`: its elements.
    List(Vec<Value>),
    /// A `HashMap`: its entries in stream order.
    Map(Vec<(Value, Value)>),
    /// A bean: its class descriptor (`None` for a bean in a field of its
    /// own class, which has none on the wire) and its fields in Builder's
    /// order (sorted by name).
    Bean {
        /// The class descriptor.
        class: Option<String>,
        /// The fields.
        fields: Vec<Field>,
    },
    /// A `Throwable`: its class and Dubbo's compacted Java serialization
    /// of it, not decoded.
    Throwable {
        /// The class descriptor.
        class: String,
        /// The stream.
        stream: Vec<u8>,
    },
}

/// One field of a bean, read by its tag: a field's declared type is not on
/// the wire, so a primitive is its raw varint (a `double` field its bits),
/// a `String` field a string.
#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    /// A primitive field (`boolean` is 0 or 1; `float`/`double` are bits).
    Varint(i64),
    /// A `String` (or `byte[]` whose bytes decode as one) field.
    Str(Option<String>),
    /// A `byte[]` field whose bytes are not a string.
    Bytes(Vec<u8>),
    /// A field holding an object (`writeObject` or a nested bean).
    Object(Value),
}

impl Field {
    /// A primitive field as a `long`/`int`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Field::Varint(v) => Some(*v),
            _ => None,
        }
    }

    /// A `double` field.
    pub fn as_f64(&self) -> Option<f64> {
        self.as_i64().map(|bits| f64::from_bits(bits as u64))
    }

    /// A `String` field (`Some(None)` for `null`).
    pub fn as_str(&self) -> Option<Option<&str>> {
        match self {
            Field::Str(s) => Some(s.as_deref()),
            Field::Object(Value::Null) => Some(None),
            _ => None,
        }
    }
}

impl Value {
    /// The class descriptor of a bean.
    pub fn class(&self) -> Option<&str> {
        match self {
            Value::Bean { class, .. } => class.as_deref(),
            Value::Int { class, .. }
            | Value::Float { class, .. }
            | Value::Throwable { class, .. } => Some(class),
            _ => None,
        }
    }

    /// A string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

/// Where a back-reference points: a bean being read, or one complete.
#[derive(Debug)]
enum Slot {
    Reading,
    Done(Value),
}

/// Reads the format from a byte slice.
#[derive(Debug)]
pub struct Reader<'a> {
    input: &'a [u8],
    pos: usize,
    refs: Vec<Slot>,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `input`.
    pub fn new(input: &'a [u8]) -> Self {
        Self {
            input,
            pos: 0,
            refs: Vec::new(),
        }
    }

    /// The offset of the next byte.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Whether every byte was read.
    pub fn is_at_end(&self) -> bool {
        self.pos >= self.input.len()
    }

    fn byte(&mut self) -> Result<u8, DecodeError> {
        let b = *self
            .input
            .get(self.pos)
            .ok_or(DecodeError::UnexpectedEof { offset: self.pos })?;
        self.pos += 1;
        Ok(b)
    }

    fn peek(&self) -> Result<u8, DecodeError> {
        self.input
            .get(self.pos)
            .copied()
            .ok_or(DecodeError::UnexpectedEof { offset: self.pos })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|end| *end <= self.input.len())
            .ok_or(DecodeError::InvalidLength {
                length: n as u64,
                offset: self.pos,
            })?;
        let s = &self.input[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn unexpected(&self, tag: u8, expected: &'static str) -> DecodeError {
        DecodeError::UnexpectedTag {
            tag,
            offset: self.pos.saturating_sub(1),
            expected,
        }
    }

    /// A varint of at most `max_len` bytes after its tag (4 for an int, 8
    /// for a long), as `readVarint32`/`readVarint64`.
    fn varint_tagged(&mut self, tag: u8, max_len: usize) -> Result<i64, DecodeError> {
        match tag {
            VARINT_NF..=VARINT_1F => Ok(i64::from(tag) - i64::from(VARINT_0)),
            t if usize::from(t) < max_len => {
                let n = usize::from(t) + 1;
                let bytes = self.take(n)?;
                let mut buf = [0u8; 8];
                buf[..n].copy_from_slice(bytes);
                let shift = 64 - 8 * n as u32;
                Ok((i64::from_le_bytes(buf) << shift) >> shift)
            }
            t => Err(self.unexpected(t, "a varint")),
        }
    }

    /// `readBool`.
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        match self.byte()? {
            VARINT_0 => Ok(false),
            VARINT_1 => Ok(true),
            t => Err(self.unexpected(t, "a boolean (VARINT_0 or VARINT_1)")),
        }
    }

    /// `readByte`: `VARINT8` and a byte, or a constant 0..=31.
    pub fn read_byte(&mut self) -> Result<i8, DecodeError> {
        match self.byte()? {
            VARINT => Ok(self.byte()? as i8),
            t @ VARINT_0..=VARINT_1F => Ok((t - VARINT_0) as i8),
            t => Err(self.unexpected(t, "a byte")),
        }
    }

    /// `readShort` (the low 16 bits of `readVarint32`).
    pub fn read_short(&mut self) -> Result<i16, DecodeError> {
        Ok(self.read_int()? as i16)
    }

    /// `readInt`.
    pub fn read_int(&mut self) -> Result<i32, DecodeError> {
        let t = self.byte()?;
        Ok(self.varint_tagged(t, 4)? as i32)
    }

    /// `readLong`.
    pub fn read_long(&mut self) -> Result<i64, DecodeError> {
        let t = self.byte()?;
        self.varint_tagged(t, 8)
    }

    /// `readFloat`.
    pub fn read_float(&mut self) -> Result<f32, DecodeError> {
        Ok(f32::from_bits(self.read_int()? as u32))
    }

    /// `readDouble`.
    pub fn read_double(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from_bits(self.read_long()? as u64))
    }

    /// `readUInt`: up to five bytes, the last one marked with its high bit
    /// (a fifth byte ends the number whatever its high bit).
    pub fn read_uint(&mut self) -> Result<u32, DecodeError> {
        let mut v: u32 = 0;
        for i in 0..5 {
            let b = self.byte()?;
            v |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 != 0 || i == 4 {
                break;
            }
        }
        Ok(v)
    }

    fn length(&mut self) -> Result<usize, DecodeError> {
        let at = self.pos;
        let n = self.read_uint()? as usize;
        if n > self.input.len() - self.pos {
            return Err(DecodeError::InvalidLength {
                length: n as u64,
                offset: at,
            });
        }
        Ok(n)
    }

    /// The body of a string after its `BYTES` tag: `units` UTF-16 units.
    fn utf_body(&mut self) -> Result<String, DecodeError> {
        let units = self.length()?;
        let mut buf: Vec<u16> = Vec::with_capacity(units);
        for _ in 0..units {
            let at = self.pos;
            let b1 = self.byte()?;
            let unit = if b1 & 0x80 == 0 {
                u16::from(b1)
            } else if b1 & 0xe0 == 0xc0 {
                let b2 = self.byte()?;
                (u16::from(b1 & 0x1f) << 6) | u16::from(b2 & 0x3f)
            } else if b1 & 0xf0 == 0xe0 {
                let b2 = self.byte()?;
                let b3 = self.byte()?;
                (u16::from(b1 & 0x0f) << 12) | (u16::from(b2 & 0x3f) << 6) | u16::from(b3 & 0x3f)
            } else {
                return Err(DecodeError::BadUtf8 {
                    byte: b1,
                    offset: at,
                });
            };
            buf.push(unit);
        }
        // Java strings may hold lone surrogates; Rust's may not.
        Ok(String::from_utf16_lossy(&buf))
    }

    /// `readUTF`.
    pub fn read_utf(&mut self) -> Result<Option<String>, DecodeError> {
        match self.byte()? {
            OBJECT_BYTES => self.utf_body().map(Some),
            OBJECT_NULL => Ok(None),
            OBJECT_DUMMY => Ok(Some(String::new())),
            t => Err(self.unexpected(t, "a string (BYTES, NULL or DUMMY)")),
        }
    }

    /// `readBytes`.
    pub fn read_bytes(&mut self) -> Result<Option<Vec<u8>>, DecodeError> {
        match self.byte()? {
            OBJECT_BYTES => {
                let n = self.length()?;
                Ok(Some(self.take(n)?.to_vec()))
            }
            OBJECT_NULL => Ok(None),
            OBJECT_DUMMY => Ok(Some(Vec::new())),
            t => Err(self.unexpected(t, "bytes (BYTES, NULL or DUMMY)")),
        }
    }

    /// `readObject`: a class descriptor and what its Builder wrote, `NULL`
    /// or `DUMMY`.
    pub fn read_object(&mut self) -> Result<Value, DecodeError> {
        self.object(0)
    }

    fn depth_check(&self, depth: usize) -> Result<(), DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError::TooDeep {
                max: MAX_DEPTH,
                offset: self.pos,
            });
        }
        Ok(())
    }

    fn object(&mut self, depth: usize) -> Result<Value, DecodeError> {
        self.depth_check(depth)?;
        let desc = match self.byte()? {
            OBJECT_NULL => return Ok(Value::Null),
            OBJECT_DUMMY => return Ok(Value::Dummy),
            OBJECT_DESC => {
                let at = self.pos;
                self.read_utf()?.ok_or(DecodeError::Unsupported {
                    what: "a null class descriptor".into(),
                    offset: at,
                })?
            }
            OBJECT_DESC_ID => {
                let at = self.pos;
                let id = self.read_uint()?;
                descriptor(id)
                    .ok_or(DecodeError::UnknownDescriptorId { id, offset: at })?
                    .to_owned()
            }
            t => return Err(self.unexpected(t, "an object (NULL, DUMMY, DESC or DESC_ID)")),
        };
        self.by_class(desc, depth)
    }

    /// What the Builder of class `desc` wrote.
    fn by_class(&mut self, desc: String, depth: usize) -> Result<Value, DecodeError> {
        let at = self.pos;
        match desc.as_str() {
            "Ljava/lang/String;" | "Ljava/lang/StringBuilder;" | "Ljava/lang/StringBuffer;" => {
                Ok(self.read_utf()?.map_or(Value::Null, Value::String))
            }
            "[B" => Ok(self.read_bytes()?.map_or(Value::Null, Value::Bytes)),
            "Ljava/lang/Boolean;" => match self.byte()? {
                VARINT_N1 => Ok(Value::Null),
                VARINT_0 => Ok(Value::Bool(false)),
                VARINT_1 => Ok(Value::Bool(true)),
                t => Err(self.unexpected(t, "a Boolean (VARINT_N1, VARINT_0 or VARINT_1)")),
            },
            "Ljava/lang/Byte;"
            | "Ljava/lang/Short;"
            | "Ljava/lang/Integer;"
            | "Ljava/lang/Long;"
            | "Ljava/lang/Character;"
            | "Ljava/lang/Float;"
            | "Ljava/lang/Double;"
            | "Ljava/util/Date;"
            | "Ljava/sql/Date;"
            | "Ljava/sql/Time;"
            | "Ljava/sql/Timestamp;" => {
                match self.byte()? {
                    OBJECT_NULL => return Ok(Value::Null),
                    OBJECT_VALUE => {}
                    t => return Err(self.unexpected(t, "a boxed value (NULL or VALUE)")),
                }
                Ok(match desc.as_str() {
                    "Ljava/lang/Byte;" => Value::Int {
                        value: i64::from(self.read_byte()?),
                        class: desc,
                    },
                    "Ljava/lang/Character;" => Value::Char(self.read_short()? as u16),
                    "Ljava/lang/Short;" => Value::Int {
                        value: i64::from(self.read_short()?),
                        class: desc,
                    },
                    "Ljava/lang/Integer;" => Value::Int {
                        value: i64::from(self.read_int()?),
                        class: desc,
                    },
                    "Ljava/lang/Float;" => Value::Float {
                        value: f64::from(self.read_float()?),
                        class: desc,
                    },
                    "Ljava/lang/Double;" => Value::Float {
                        value: self.read_double()?,
                        class: desc,
                    },
                    _ => Value::Int {
                        value: self.read_long()?,
                        class: desc,
                    },
                })
            }
            "Ljava/util/ArrayList;" | "Ljava/util/HashSet;" => match self.byte()? {
                OBJECT_NULL => Ok(Value::Null),
                OBJECT_VALUES => {
                    let n = self.length()?;
                    let mut items = Vec::with_capacity(n);
                    for _ in 0..n {
                        items.push(self.object(depth + 1)?);
                    }
                    Ok(Value::List(items))
                }
                t => Err(self.unexpected(t, "a collection (NULL or VALUES)")),
            },
            "Ljava/util/HashMap;" => match self.byte()? {
                OBJECT_NULL => Ok(Value::Null),
                OBJECT_MAP => {
                    let n = self.length()?;
                    let mut entries = Vec::with_capacity(n / 2);
                    for _ in 0..n {
                        let k = self.object(depth + 1)?;
                        let v = self.object(depth + 1)?;
                        entries.push((k, v));
                    }
                    Ok(Value::Map(entries))
                }
                t => Err(self.unexpected(t, "a map (NULL or MAP)")),
            },
            d if d.starts_with('[') => Err(DecodeError::Unsupported {
                what: format!("an array {d}"),
                offset: at,
            }),
            d if d.starts_with("Ljava/util/") => Err(DecodeError::Unsupported {
                what: format!("the collection class {d}"),
                offset: at,
            }),
            _ => match self.peek()? {
                OBJECT_STREAM => {
                    self.pos += 1;
                    let n = self.length()?;
                    Ok(Value::Throwable {
                        class: desc,
                        stream: self.take(n)?.to_vec(),
                    })
                }
                _ => self.bean(Some(desc), depth),
            },
        }
    }

    /// A bean: `OBJECT`, field count, fields; `REF` and an index; or `NULL`.
    fn bean(&mut self, class: Option<String>, depth: usize) -> Result<Value, DecodeError> {
        self.depth_check(depth)?;
        match self.byte()? {
            OBJECT_NULL => Ok(Value::Null),
            OBJECT_REF => {
                let at = self.pos;
                let index = self.read_uint()?;
                match self.refs.get(index as usize) {
                    Some(Slot::Done(v)) => Ok(v.clone()),
                    _ => Err(DecodeError::BadReference { index, offset: at }),
                }
            }
            OBJECT => {
                let slot = self.refs.len();
                self.refs.push(Slot::Reading);
                let at = self.pos;
                let count = self.read_int()?;
                let count = usize::try_from(count)
                    .ok()
                    .filter(|n| *n <= self.input.len() - self.pos)
                    .ok_or(DecodeError::InvalidLength {
                        length: count as u64,
                        offset: at,
                    })?;
                let mut fields = Vec::with_capacity(count);
                for _ in 0..count {
                    fields.push(self.field(depth + 1)?);
                }
                let v = Value::Bean { class, fields };
                self.refs[slot] = Slot::Done(v.clone());
                Ok(v)
            }
            t => Err(self.unexpected(t, "a bean (OBJECT, REF or NULL)")),
        }
    }

    /// One field, by its tag.
    fn field(&mut self, depth: usize) -> Result<Field, DecodeError> {
        match self.peek()? {
            t if t <= VARINT_1F => Ok(Field::Varint(self.read_long()?)),
            OBJECT_BYTES => {
                let start = self.pos;
                match self.read_utf() {
                    Ok(s) => Ok(Field::Str(s)),
                    Err(DecodeError::BadUtf8 { .. }) => {
                        self.pos = start;
                        Ok(Field::Bytes(self.read_bytes()?.unwrap_or_default()))
                    }
                    Err(e) => Err(e),
                }
            }
            OBJECT_NULL => {
                self.pos += 1;
                Ok(Field::Str(None))
            }
            OBJECT_DUMMY => {
                self.pos += 1;
                Ok(Field::Str(Some(String::new())))
            }
            OBJECT | OBJECT_REF => Ok(Field::Object(self.bean(None, depth)?)),
            _ => Ok(Field::Object(self.object(depth)?)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::Writer;

    #[test]
    fn varints_round_trip_at_the_edges() {
        for v in [
            0,
            -15,
            -16,
            31,
            32,
            127,
            128,
            -128,
            -129,
            i64::from(i32::MAX),
            i64::from(i32::MIN),
            i64::MAX,
            i64::MIN,
        ] {
            let mut w = Writer::new();
            w.write_long(v);
            let bytes = w.into_inner();
            assert_eq!(Reader::new(&bytes).read_long().unwrap(), v, "{v}");
        }
    }

    #[test]
    fn an_int_does_not_read_a_long_varint() {
        let mut w = Writer::new();
        w.write_long(1 << 40);
        let bytes = w.into_inner();
        assert!(matches!(
            Reader::new(&bytes).read_int(),
            Err(DecodeError::UnexpectedTag { .. })
        ));
    }

    #[test]
    fn a_reference_to_an_unfinished_bean_is_an_error() {
        // OBJECT, 1 field, which is REF 0 (the bean itself)
        let bytes = [0x8a, 0x83, 0x81, b'X', 0x80, 26, 0x81, 0x80];
        assert!(matches!(
            Reader::new(&bytes).read_object(),
            Err(DecodeError::BadReference { index: 0, .. })
        ));
    }

    #[test]
    fn lengths_beyond_the_input_are_refused() {
        let bytes = [0x83, 0xff, 0xff, 0xff, 0x0f];
        assert!(matches!(
            Reader::new(&bytes).read_utf(),
            Err(DecodeError::InvalidLength { .. })
        ));
    }
}
