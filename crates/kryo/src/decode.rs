//! The reader: Kryo's `Input` over a byte slice and the object-graph layer
//! above it, for one [`Dialect`]. Every length is checked against the
//! bytes left before anything is allocated for it, nesting is limited, and
//! malformed input is a [`DecodeError`], never a panic.

use crate::dialect::{ids, Dialect, Version};
use crate::error::DecodeError;
use crate::value::{FieldType, JavaException, Object, Schemas, Value};

/// Default limit of nested objects and collections.
pub const DEFAULT_MAX_DEPTH: usize = 64;

/// How many elements of all-null collections one [`Decoder`] reads in
/// total. Kryo 5 writes such a collection with no bytes per element, so its
/// count is not bounded by the input; this bounds what a few hostile bytes
/// can make the reader allocate.
pub const MAX_ALL_NULL: u64 = 1 << 16;

/// A class as read from the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassRef {
    /// A registered class: its registration id.
    Id(u32),
    /// A class written by name: its name id in this graph
    /// ([`Decoder::class_name`]).
    Name(u32),
}

/// A reference marker as read from the wire (references are on in both
/// Dubbo lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ref {
    /// 0: null.
    Null,
    /// 1: an object read for the first time; its reference id.
    New(u32),
    /// `id + 2`: the object with this reference id, read before.
    Back(u32),
}

/// How the elements of a collection follow its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elements {
    /// Each element is `writeClassAndObject`: class, marker, data.
    Tagged,
    /// Kryo 5: every element has class `class`; each is its marker (for
    /// wrapper classes only when `has_null`) and data.
    Same { class: ClassRef, has_null: bool },
    /// Kryo 5: every element is null (nothing follows).
    AllNull,
}

/// A collection header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Collection {
    /// Number of elements.
    pub len: usize,
    /// How they follow.
    pub elements: Elements,
}

/// What a reference id stands for, so a back-reference can be resolved.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// A string whose encoded form starts at this offset (read again when
    /// referenced: no copy is kept).
    Str(usize),
    /// Any other object.
    Other,
}

/// Reads a kryo stream from a byte slice.
///
/// As with [`crate::Encoder`], the class-name and reference tables belong to
/// one object graph: [`Decoder::read_value`] and [`Decoder::read_exception`]
/// reset them after a top-level object, as Kryo does; when reading piece by
/// piece, call [`Decoder::reset`] after each top-level object.
#[derive(Debug, Clone)]
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    dialect: Dialect,
    names: Vec<String>,
    refs: Vec<Slot>,
    depth: usize,
    max_depth: usize,
    /// All-null elements (which take no input bytes) still allowed.
    null_budget: u64,
}

fn wrapper(class: ClassRef) -> bool {
    matches!(class, ClassRef::Id(id) if id <= ids::DOUBLE && id != ids::STRING)
}

impl<'a> Decoder<'a> {
    /// A reader of `buf` in `dialect`.
    pub fn new(buf: &'a [u8], dialect: Dialect) -> Decoder<'a> {
        Decoder {
            buf,
            pos: 0,
            dialect,
            names: Vec::new(),
            refs: Vec::new(),
            depth: 0,
            max_depth: DEFAULT_MAX_DEPTH,
            null_budget: MAX_ALL_NULL,
        }
    }

    /// With another nesting limit.
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// The dialect read.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Bytes read so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The error for a length `len` of `what`, read at `offset`, that the
    /// rest of the input cannot hold (or that is over the reader's budget).
    fn length_error(&self, offset: usize, what: &'static str, len: u64) -> DecodeError {
        DecodeError::Length {
            offset,
            what,
            len,
            remaining: self.remaining(),
        }
    }

    /// Whether every byte was read.
    pub fn is_at_end(&self) -> bool {
        self.pos == self.buf.len()
    }

    /// Ends an object graph: forgets class names and references (Kryo's
    /// `reset()`).
    pub fn reset(&mut self) {
        self.names.clear();
        self.refs.clear();
    }

    fn eof(&self, what: &'static str) -> DecodeError {
        DecodeError::Eof {
            offset: self.pos,
            what,
        }
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        if self.remaining() < n {
            return Err(self.eof(what));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn fixed<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], DecodeError> {
        let mut a: [u8; N] = self.take(N, what)?.try_into().expect("N bytes");
        if self.dialect.version == Version::V4 {
            a.reverse(); // big-endian on the wire; callers decode little-endian
        }
        Ok(a)
    }

    // ---- Input: fixed width, varints, strings ----

    /// One byte.
    pub fn read_byte(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1, "a byte")?[0])
    }

    /// A boolean (any non-zero byte is true, as in Kryo).
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        Ok(self.read_byte()? != 0)
    }

    /// A two-byte `short`.
    pub fn read_short(&mut self) -> Result<i16, DecodeError> {
        Ok(i16::from_le_bytes(self.fixed("a short")?))
    }

    /// A two-byte `char`.
    pub fn read_char(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.fixed("a char")?))
    }

    /// A four-byte `int`.
    pub fn read_int(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_le_bytes(self.fixed("an int")?))
    }

    /// An eight-byte `long`.
    pub fn read_long(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_le_bytes(self.fixed("a long")?))
    }

    /// A four-byte `float`.
    pub fn read_float(&mut self) -> Result<f32, DecodeError> {
        Ok(f32::from_bits(self.read_int()? as u32))
    }

    /// An eight-byte `double`.
    pub fn read_double(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from_bits(self.read_long()? as u64))
    }

    /// A 1-5 byte varint (the fifth byte's high bits are dropped, as Kryo
    /// does).
    pub fn read_var_int(&mut self, optimize_positive: bool) -> Result<i32, DecodeError> {
        let u = self.var_bits(5, "a varint")? as u32;
        Ok(if optimize_positive {
            u as i32
        } else {
            ((u >> 1) as i32) ^ -((u & 1) as i32)
        })
    }

    /// A 1-9 byte varint; the ninth byte carries 8 bits.
    pub fn read_var_long(&mut self, optimize_positive: bool) -> Result<i64, DecodeError> {
        let u = self.var_bits(9, "a varlong")?;
        Ok(if optimize_positive {
            u as i64
        } else {
            ((u >> 1) as i64) ^ -((u & 1) as i64)
        })
    }

    /// The bits of a varint of at most `max_len` bytes, int and long alike:
    /// 7 bits a byte while its high bit says that more follow, all 8 bits
    /// of a last byte (an int's caller drops what exceeds 32 bits).
    #[inline]
    fn var_bits(&mut self, max_len: u32, what: &'static str) -> Result<u64, DecodeError> {
        let mut u: u64 = 0;
        for i in 0..max_len {
            let b = self.take(1, what)?[0];
            if i == max_len - 1 {
                u |= (b as u64) << (7 * i);
                break;
            }
            u |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                break;
            }
        }
        Ok(u)
    }

    /// A flagged varint (Kryo 5's `readVarIntFlag`, Kryo 4's string
    /// length): the flag (bit 8 of the first byte) and the value.
    pub fn read_var_int_flag(&mut self) -> Result<(bool, u32), DecodeError> {
        let b = self.take(1, "a flagged varint")?[0];
        let flag = b & 0x80 != 0;
        let mut u = (b & 0x3f) as u32;
        if b & 0x40 != 0 {
            for i in 0..4 {
                let b = self.take(1, "a flagged varint")?[0];
                u |= ((b & 0x7f) as u32) << (6 + 7 * i);
                if b & 0x80 == 0 {
                    break;
                }
            }
        }
        Ok((flag, u))
    }

    /// A string or null (`Input.readString`, Dubbo's `readUTF`): either
    /// form [`crate::Encoder::write_string`] describes, whichever Kryo wrote.
    pub fn read_string(&mut self) -> Result<Option<String>, DecodeError> {
        let start = self.pos;
        let first = *self.buf.get(self.pos).ok_or_else(|| self.eof("a string"))?;
        if first & 0x80 == 0 {
            // ASCII: up to and including the byte with bit 8 set.
            let rest = &self.buf[self.pos..];
            let Some(end) = rest.iter().position(|b| b & 0x80 != 0) else {
                self.pos = self.buf.len();
                return Err(DecodeError::Eof {
                    offset: start,
                    what: "an ASCII string (no last byte)",
                });
            };
            let mut s = Vec::with_capacity(end + 1);
            s.extend_from_slice(&rest[..=end]);
            s[end] &= 0x7f;
            self.pos += end + 1;
            // Bytes below 0x80 are valid UTF-8.
            return Ok(Some(String::from_utf8(s).expect("ASCII")));
        }
        let (_, n) = self.read_var_int_flag()?;
        match n {
            0 => return Ok(None),
            1 => return Ok(Some(String::new())),
            _ => {}
        }
        let units = (n - 1) as usize;
        if units > self.remaining() {
            return Err(self.length_error(start, "string", units as u64));
        }
        let rest = &self.buf[self.pos..];
        if rest[..units].is_ascii() {
            let s = String::from_utf8(rest[..units].to_vec()).expect("ASCII");
            self.pos += units;
            return Ok(Some(s));
        }
        let mut u16s = Vec::with_capacity(units);
        for _ in 0..units {
            let b = self.take(1, "a string char")?[0] as u16;
            let c = match b >> 4 {
                0..=7 => b,
                12 | 13 => {
                    let b2 = self.take(1, "a string char")?[0] as u16;
                    (b & 0x1f) << 6 | (b2 & 0x3f)
                }
                14 => {
                    let t = self.take(2, "a string char")?;
                    (b & 0x0f) << 12 | (t[0] as u16 & 0x3f) << 6 | (t[1] as u16 & 0x3f)
                }
                _ => {
                    return Err(DecodeError::BadString {
                        offset: self.pos - 1,
                        reason: "byte is no lead byte of Kryo's 1-3 byte char encoding",
                    })
                }
            };
            u16s.push(c);
        }
        String::from_utf16(&u16s)
            .map(Some)
            .map_err(|_| DecodeError::BadString {
                offset: start,
                reason: "unpaired UTF-16 surrogate (valid in Java, not in a Rust String)",
            })
    }

    /// Dubbo's `readBytes`: a four-byte length (negative for null), then
    /// the bytes.
    pub fn read_bytes(&mut self) -> Result<Option<Vec<u8>>, DecodeError> {
        let at = self.pos;
        let n = self.read_int()?;
        if n < 0 {
            return Ok(None);
        }
        if n as usize > self.remaining() {
            return Err(self.length_error(at, "byte array", n as u64));
        }
        Ok(Some(self.take(n as usize, "bytes")?.to_vec()))
    }

    // ---- the object graph ----

    /// A class, or `None` for null (`readClass`). A name read for the first
    /// time in this graph is remembered.
    pub fn read_class(&mut self) -> Result<Option<ClassRef>, DecodeError> {
        let at = self.pos;
        let id = self.read_var_int(true)? as u32;
        match id {
            0 => Ok(None),
            1 => {
                let name_at = self.pos;
                let nid = self.read_var_int(true)? as u32;
                if (nid as usize) < self.names.len() {
                    return Ok(Some(ClassRef::Name(nid)));
                }
                if nid as usize != self.names.len() {
                    return Err(DecodeError::UnknownNameId {
                        offset: name_at,
                        id: nid,
                    });
                }
                let name = self.read_string()?.ok_or(DecodeError::Unexpected {
                    offset: name_at,
                    found: "a null class name".into(),
                    expected: "a class name",
                })?;
                self.names.push(name);
                Ok(Some(ClassRef::Name(nid)))
            }
            id => {
                let id = id - 2;
                let known = id <= ids::DOUBLE
                    || id == self.dialect.hash_map
                    || id == self.dialect.array_list;
                if known {
                    Ok(Some(ClassRef::Id(id)))
                } else {
                    Err(DecodeError::UnknownClassId {
                        offset: at,
                        id,
                        dialect: self.dialect.name,
                    })
                }
            }
        }
    }

    /// The name of a class read by name in this graph.
    pub fn class_name(&self, class: ClassRef) -> Option<&str> {
        match class {
            ClassRef::Name(i) => self.names.get(i as usize).map(String::as_str),
            ClassRef::Id(_) => None,
        }
    }

    /// A description of a class for messages.
    pub fn describe(&self, class: Option<ClassRef>) -> String {
        match class {
            None => "null".into(),
            Some(ClassRef::Name(i)) => format!(
                "class {}",
                self.class_name(ClassRef::Name(i)).unwrap_or("?")
            ),
            Some(ClassRef::Id(id)) => {
                let n = match id {
                    ids::INT => "Integer",
                    ids::STRING => "String",
                    ids::FLOAT => "Float",
                    ids::BOOLEAN => "Boolean",
                    ids::BYTE => "Byte",
                    ids::CHAR => "Character",
                    ids::SHORT => "Short",
                    ids::LONG => "Long",
                    ids::DOUBLE => "Double",
                    id if id == self.dialect.hash_map => "HashMap",
                    id if id == self.dialect.array_list => "ArrayList",
                    _ => "?",
                };
                format!("class {n} (id {id})")
            }
        }
    }

    /// A reference marker. A new object gets the next reference id.
    pub fn read_ref(&mut self) -> Result<Ref, DecodeError> {
        let at = self.pos;
        let v = self.read_var_int(true)? as u32;
        match v {
            0 => Ok(Ref::Null),
            1 => {
                self.refs.push(Slot::Other);
                Ok(Ref::New(self.refs.len() as u32 - 1))
            }
            v => {
                let id = v - 2;
                if id as usize >= self.refs.len() {
                    return Err(DecodeError::BadReference {
                        offset: at,
                        id,
                        known: self.refs.len(),
                    });
                }
                Ok(Ref::Back(id))
            }
        }
    }

    /// The string behind a reference marker: a new string is read (and
    /// remembered for later back-references), a back-reference is resolved
    /// by reading the earlier string again.
    fn string_after(&mut self, r: Ref) -> Result<Option<String>, DecodeError> {
        match r {
            Ref::Null => Ok(None),
            Ref::New(id) => {
                self.refs[id as usize] = Slot::Str(self.pos);
                self.read_string()
            }
            Ref::Back(id) => match self.refs[id as usize] {
                Slot::Str(at) => {
                    let back = self.pos;
                    self.pos = at;
                    let s = self.read_string();
                    self.pos = back;
                    s
                }
                Slot::Other => Err(DecodeError::Unexpected {
                    offset: self.pos,
                    found: format!("a reference to object {id}, which is not a string"),
                    expected: "a string",
                }),
            },
        }
    }

    /// A `String` field of a FieldSerializer object (marker, then string).
    pub fn read_string_field(&mut self) -> Result<Option<String>, DecodeError> {
        let r = self.read_ref()?;
        self.string_after(r)
    }

    /// `readClassAndObject` where a `String` (or null) is expected.
    pub fn read_string_object(&mut self) -> Result<Option<String>, DecodeError> {
        let at = self.pos;
        match self.read_class()? {
            None => Ok(None),
            Some(ClassRef::Id(ids::STRING)) => self.read_string_field(),
            other => Err(DecodeError::Unexpected {
                offset: at,
                found: self.describe(other),
                expected: "a String",
            }),
        }
    }

    /// An `int` field (zig-zag varint).
    pub fn read_int_field(&mut self) -> Result<i32, DecodeError> {
        self.read_var_int(false)
    }

    /// A `long` field (zig-zag varint).
    pub fn read_long_field(&mut self) -> Result<i64, DecodeError> {
        self.read_var_long(false)
    }

    /// A collection header (after the collection's class and marker);
    /// `None` for a null collection (Kryo 5).
    pub fn read_collection_header(&mut self) -> Result<Option<Collection>, DecodeError> {
        let at = self.pos;
        let (len, elements) = match self.dialect.version {
            Version::V4 => (self.read_var_int(true)? as u32 as u64, Elements::Tagged),
            Version::V5 => {
                let (same, n) = self.read_var_int_flag()?;
                if n == 0 {
                    return Ok(None);
                }
                let len = (n - 1) as u64;
                if len == 0 {
                    return Ok(Some(Collection {
                        len: 0,
                        elements: Elements::Tagged,
                    }));
                }
                if same {
                    match self.read_class()? {
                        None => (len, Elements::AllNull),
                        Some(class) => {
                            let has_null = self.read_bool()?;
                            (len, Elements::Same { class, has_null })
                        }
                    }
                } else {
                    (len, Elements::Tagged)
                }
            }
        };
        // Every element takes at least one byte, except all-null ones.
        if elements != Elements::AllNull && len > self.remaining() as u64 {
            return Err(self.length_error(at, "collection", len));
        }
        if elements == Elements::AllNull {
            if len > self.null_budget {
                return Err(self.length_error(
                    at,
                    "all-null collection (over the reader's budget of null elements)",
                    len,
                ));
            }
            self.null_budget -= len;
        }
        Ok(Some(Collection {
            len: len as usize,
            elements,
        }))
    }

    /// The start of one element of a collection of objects (strings,
    /// collections, FieldSerializer objects): its class and reference
    /// marker, or `None` for a null element. Elements of boxed primitives
    /// carry no reference marker; read those with [`Decoder::read_value`].
    pub fn read_element_start(
        &mut self,
        header: &Collection,
    ) -> Result<Option<(ClassRef, Ref)>, DecodeError> {
        let at = self.pos;
        let class = match header.elements {
            Elements::AllNull => return Ok(None),
            Elements::Tagged => match self.read_class()? {
                None => return Ok(None),
                Some(c) => c,
            },
            Elements::Same { class, .. } => class,
        };
        if wrapper(class) {
            return Err(DecodeError::Unexpected {
                offset: at,
                found: format!("an element of {}", self.describe(Some(class))),
                expected: "an object element",
            });
        }
        match self.read_ref()? {
            Ref::Null => Ok(None),
            r => Ok(Some((class, r))),
        }
    }

    /// A map header (after the map's class and marker): the entry count,
    /// `None` for a null map (Kryo 5).
    pub fn read_map_header(&mut self) -> Result<Option<usize>, DecodeError> {
        let at = self.pos;
        let n = self.read_var_int(true)? as u32 as u64;
        let len = match self.dialect.version {
            Version::V4 => n,
            Version::V5 => {
                if n == 0 {
                    return Ok(None);
                }
                n - 1
            }
        };
        if len.saturating_mul(2) > self.remaining() as u64 {
            return Err(self.length_error(at, "map", len));
        }
        Ok(Some(len as usize))
    }

    // ---- dynamic values ----

    fn enter(&mut self) -> Result<(), DecodeError> {
        if self.depth >= self.max_depth {
            return Err(DecodeError::TooDeep {
                offset: self.pos,
                max: self.max_depth,
            });
        }
        self.depth += 1;
        Ok(())
    }

    /// `readClassAndObject`: one whole object graph (then [`Decoder::reset`]
    /// when it is a top-level one). Objects of classes written by name need
    /// a schema in `schemas`; `java.util.Collections$EmptyList` and
    /// friends are known.
    pub fn read_value(&mut self, schemas: &Schemas) -> Result<Value, DecodeError> {
        self.enter()?;
        let r = self.read_tagged(schemas);
        self.depth -= 1;
        if self.depth == 0 {
            self.reset();
        }
        r
    }

    fn read_tagged(&mut self, schemas: &Schemas) -> Result<Value, DecodeError> {
        match self.read_class()? {
            None => Ok(Value::Null),
            Some(c) => self.read_data(c, false, schemas),
        }
    }

    fn read_nested(&mut self, schemas: &Schemas) -> Result<Value, DecodeError> {
        self.enter()?;
        let r = self.read_tagged(schemas);
        self.depth -= 1;
        r
    }

    /// The marker (if the class takes one) and data of a value of `class`.
    fn read_data(
        &mut self,
        class: ClassRef,
        may_be_null: bool,
        schemas: &Schemas,
    ) -> Result<Value, DecodeError> {
        if wrapper(class) {
            if may_be_null && self.read_byte()? == 0 {
                return Ok(Value::Null);
            }
            let ClassRef::Id(id) = class else {
                unreachable!()
            };
            return Ok(match id {
                ids::INT => Value::Int(self.read_var_int(false)?),
                ids::FLOAT => Value::Float(self.read_float()?),
                ids::BOOLEAN => Value::Bool(self.read_bool()?),
                ids::BYTE => Value::Byte(self.read_byte()? as i8),
                ids::CHAR => Value::Char(self.read_char()?),
                ids::SHORT => Value::Short(self.read_short()?),
                ids::LONG => Value::Long(self.read_var_long(false)?),
                _ => Value::Double(self.read_double()?),
            });
        }
        let r = self.read_ref()?;
        let id = match r {
            Ref::Null => return Ok(Value::Null),
            Ref::Back(id) => {
                return Ok(match self.refs[id as usize] {
                    Slot::Str(_) => Value::String(self.string_after(r)?.unwrap_or_default()),
                    Slot::Other => Value::Reference(id),
                })
            }
            Ref::New(id) => id,
        };
        match class {
            ClassRef::Id(ids::STRING) => Ok(match self.string_after(Ref::New(id))? {
                Some(s) => Value::String(s),
                None => Value::Null,
            }),
            ClassRef::Id(cid) if cid == self.dialect.array_list => {
                let Some(h) = self.read_collection_header()? else {
                    return Ok(Value::Null);
                };
                let mut items = Vec::with_capacity(h.len.min(self.remaining()));
                for _ in 0..h.len {
                    let v = match h.elements {
                        Elements::AllNull => Value::Null,
                        Elements::Tagged => self.read_nested(schemas)?,
                        Elements::Same { class, has_null } => {
                            self.enter()?;
                            let v = self.read_data(class, has_null, schemas);
                            self.depth -= 1;
                            v?
                        }
                    };
                    items.push(v);
                }
                Ok(Value::List(items))
            }
            ClassRef::Id(_) => {
                // read_class admits only the known ids: this is the HashMap.
                let Some(len) = self.read_map_header()? else {
                    return Ok(Value::Null);
                };
                let mut entries = Vec::with_capacity(len.min(self.remaining() / 2));
                for _ in 0..len {
                    let k = self.read_nested(schemas)?;
                    let v = self.read_nested(schemas)?;
                    entries.push((k, v));
                }
                Ok(Value::Map(entries))
            }
            ClassRef::Name(_) => {
                let at = self.pos;
                let name = self.class_name(class).unwrap_or_default().to_owned();
                match name.as_str() {
                    // Kryo's default serializers of the immutable empty
                    // collections write nothing.
                    "java.util.Collections$EmptyList" | "java.util.Collections$EmptySet" => {
                        Ok(Value::List(Vec::new()))
                    }
                    "java.util.Collections$EmptyMap" => Ok(Value::Map(Vec::new())),
                    _ => {
                        let Some(schema) = schemas.get(&name) else {
                            return Err(DecodeError::NoSchema {
                                offset: at,
                                class: name,
                            });
                        };
                        let mut fields = Vec::with_capacity(schema.fields.len());
                        for (fname, ty) in &schema.fields {
                            let v = match ty {
                                FieldType::Bool => Value::Bool(self.read_bool()?),
                                FieldType::Byte => Value::Byte(self.read_byte()? as i8),
                                FieldType::Char => Value::Char(self.read_char()?),
                                FieldType::Short => Value::Short(self.read_short()?),
                                FieldType::Int => Value::Int(self.read_int_field()?),
                                FieldType::Long => Value::Long(self.read_long_field()?),
                                FieldType::Float => Value::Float(self.read_float()?),
                                FieldType::Double => Value::Double(self.read_double()?),
                                FieldType::String => match self.read_string_field()? {
                                    Some(s) => Value::String(s),
                                    None => Value::Null,
                                },
                                FieldType::Object => self.read_nested(schemas)?,
                            };
                            fields.push((fname.to_string(), v));
                        }
                        Ok(Value::Object(Box::new(Object {
                            class: name,
                            fields,
                        })))
                    }
                }
            }
        }
    }

    /// `readClassAndObject` of a `java.lang.Throwable` (Dubbo's
    /// `readThrowable`, the value of an exception response), then
    /// [`Decoder::reset`] when top-level.
    ///
    /// Dubbo's two lines write throwables differently: on Kryo 5,
    /// dubbo-serialization-kryo registers Kryo's `JavaSerializer` for every
    /// `Throwable`, so the data is a Java Object Serialization stream
    /// (read with the `javaser` crate); on Kryo 4 (Dubbo 2.6) they go
    /// through FieldSerializer, whose layout is the JDK 17 one of
    /// `Throwable` (`cause`, `detailMessage`, `stackTrace`,
    /// `suppressedExceptions`) plus the fields of the few exception classes
    /// this crate knows (Dubbo's `RpcException.code`); an exception class
    /// with other fields of its own cannot be read past its class name,
    /// which the error then names.
    pub fn read_exception(&mut self) -> Result<JavaException, DecodeError> {
        self.enter()?;
        let r = self.read_exception_inner();
        self.depth -= 1;
        if self.depth == 0 {
            self.reset();
        }
        r
    }

    fn read_exception_inner(&mut self) -> Result<JavaException, DecodeError> {
        let at = self.pos;
        let class = self.read_class()?;
        let Some(class @ ClassRef::Name(_)) = class else {
            return Err(DecodeError::Unexpected {
                offset: at,
                found: self.describe(class),
                expected: "a Throwable (a class written by name)",
            });
        };
        let name = self.class_name(class).unwrap_or_default().to_owned();
        let id = match self.read_ref()? {
            Ref::New(id) => id,
            other => {
                return Err(DecodeError::Unexpected {
                    offset: at,
                    found: format!("reference marker {other:?} for {name}"),
                    expected: "a new Throwable",
                })
            }
        };
        let r = match self.dialect.version {
            Version::V5 => self.java_serialized_exception(&name),
            Version::V4 => self.field_serialized_exception(name.clone(), id),
        };
        r.map_err(|e| DecodeError::Exception {
            class: name,
            source: Box::new(e),
        })
    }

    fn java_serialized_exception(&mut self, name: &str) -> Result<JavaException, DecodeError> {
        let at = self.pos;
        let java = |source| DecodeError::Java { offset: at, source };
        let mut d = javaser::Decoder::new(&self.buf[self.pos..]).map_err(java)?;
        let v = d.read_object().map_err(java)?;
        self.pos += d.position();
        let e = crate::exception::from_java(&v, &d).ok_or_else(|| DecodeError::Unexpected {
            offset: at,
            found: format!("a Java-serialized {v:?}"),
            expected: "a Java-serialized Throwable",
        })?;
        if e.class != name {
            return Err(DecodeError::Unexpected {
                offset: at,
                found: format!("a Java-serialized {} inside kryo class {name}", e.class),
                expected: "the same class",
            });
        }
        Ok(e)
    }

    fn field_serialized_exception(
        &mut self,
        class: String,
        self_id: u32,
    ) -> Result<JavaException, DecodeError> {
        let mut message = None;
        let mut cause = None;
        for (field, ty) in crate::exception::kryo4_fields(&class) {
            match (field, ty) {
                ("cause", _) => {
                    let at = self.pos;
                    match self.read_class()? {
                        None => {}
                        Some(c @ ClassRef::Name(_)) => match self.read_ref()? {
                            Ref::Back(id) if id == self_id => {}
                            Ref::New(id) => {
                                let n = self.class_name(c).unwrap_or_default().to_owned();
                                self.enter()?;
                                let inner = self.field_serialized_exception(n, id);
                                self.depth -= 1;
                                cause = Some(Box::new(inner?));
                            }
                            Ref::Back(_) | Ref::Null => {
                                return Err(DecodeError::Unsupported {
                                    offset: at,
                                    what: format!("a shared cause of {class}"),
                                })
                            }
                        },
                        other => {
                            return Err(DecodeError::Unexpected {
                                offset: at,
                                found: self.describe(other),
                                expected: "a Throwable cause",
                            })
                        }
                    }
                }
                ("detailMessage", _) => message = self.read_string_field()?,
                ("stackTrace", _) => self.skip_stack_trace()?,
                ("suppressedExceptions", _) => {
                    let at = self.pos;
                    let c = self.read_class()?;
                    match c.and_then(|c| self.class_name(c)) {
                        None if c.is_none() => {}
                        Some("java.util.Collections$EmptyList") => {
                            self.read_ref()?;
                        }
                        _ => {
                            return Err(DecodeError::Unsupported {
                                offset: at,
                                what: format!(
                                    "suppressed exceptions ({}) of {class}",
                                    self.describe(c)
                                ),
                            })
                        }
                    }
                }
                (_, FieldType::Int) => {
                    self.read_int_field()?;
                }
                (f, t) => {
                    return Err(DecodeError::Unsupported {
                        offset: self.pos,
                        what: format!("field {f} ({t:?}) of {class}"),
                    })
                }
            }
        }
        Ok(JavaException {
            class,
            message,
            cause,
        })
    }

    /// A `StackTraceElement[]` field. Its declared type is final (an array
    /// of a final class), so no class is written: the marker, length + 1,
    /// then each element's marker and JDK 17 fields (read and dropped).
    fn skip_stack_trace(&mut self) -> Result<(), DecodeError> {
        let at = self.pos;
        if let Ref::New(_) = self.read_ref()? {
            let n = self.read_var_int(true)? as u32;
            let len = n.saturating_sub(1) as usize;
            if len > self.remaining() {
                return Err(self.length_error(at, "stack trace", len as u64));
            }
            for _ in 0..len {
                if let Ref::New(_) = self.read_ref()? {
                    // classLoaderName, declaringClass, fileName, format (byte),
                    // lineNumber (int), methodName, moduleName, moduleVersion.
                    for _ in 0..3 {
                        self.read_string_field()?;
                    }
                    self.read_byte()?;
                    self.read_int_field()?;
                    for _ in 0..3 {
                        self.read_string_field()?;
                    }
                }
            }
        }
        Ok(())
    }
}
