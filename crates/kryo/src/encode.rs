//! The writer: Kryo's `Output` (numbers, varints, strings) and the object
//! graph layer above it (classes, reference markers, FieldSerializer
//! objects, `ArrayList`, `HashMap`), for one [`Dialect`].

use crate::dialect::{ids, Dialect, Version};
use crate::error::EncodeError;
use crate::value::{FieldType, Object, Schemas, Value};

/// How a class is written: by registration id or by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class<'a> {
    /// A registered class: its registration id (written as id + 2).
    Id(u32),
    /// An unregistered class: its Java name (written once per object
    /// graph, then as a name id).
    Name(&'a str),
}

/// How the elements of a collection follow its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListMode {
    /// Every element as `writeClassAndObject`: its class, then its
    /// reference marker and data (Kryo 4 always; Kryo 5 when the elements
    /// are of different classes).
    Tagged,
    /// Kryo 5 when every element has the same class: the class was written
    /// once in the header, each element is its reference marker and data
    /// (`null` as a 0 marker when `has_null`).
    Same {
        /// Whether an element may be null.
        has_null: bool,
    },
}

/// The reference marker that precedes a new (not yet written) object when
/// references are on; 0 is null, `id + 2` a back-reference.
const NOT_NULL: u8 = 1;
const NULL: u8 = 0;

/// Writes a kryo stream into a growable buffer.
///
/// Kryo resets its class-name table and its reference table after every
/// top-level object (`autoReset`); [`Encoder::write_value`] does the same.
/// When writing a graph piece by piece with the lower-level methods, call
/// [`Encoder::reset`] after each top-level object.
///
/// ```
/// use kryo::{Dialect, Encoder, Decoder};
/// let mut e = Encoder::new(Dialect::DUBBO_3);
/// e.write_string(Some("2.0.2"));   // Dubbo's writeUTF
/// e.write_string_object("hello");  // Dubbo's writeObject(String)
/// let bytes = e.finish();
/// let mut d = Decoder::new(&bytes, Dialect::DUBBO_3);
/// assert_eq!(d.read_string().unwrap().as_deref(), Some("2.0.2"));
/// assert_eq!(d.read_string_object().unwrap().as_deref(), Some("hello"));
/// ```
#[derive(Debug, Clone)]
pub struct Encoder {
    buf: Vec<u8>,
    dialect: Dialect,
    /// Class names written in this graph, by name id.
    names: Vec<String>,
    /// Reference ids handed out in this graph.
    next_ref: u32,
    depth: usize,
    /// With [`Encoder::share_strings`]: strings written in this graph and
    /// their reference ids.
    shared: Option<Vec<(String, u32)>>,
}

impl Encoder {
    /// An empty writer for `dialect`.
    pub fn new(dialect: Dialect) -> Encoder {
        Encoder::with_buffer(Vec::new(), dialect)
    }

    /// A writer appending to `buf` (whose bytes are kept), so a caller can
    /// reuse one allocation per connection.
    pub fn with_buffer(buf: Vec<u8>, dialect: Dialect) -> Encoder {
        Encoder {
            buf,
            dialect,
            names: Vec::new(),
            next_ref: 0,
            depth: 0,
            shared: None,
        }
    }

    /// Writes a string equal to one written before in the same graph as a
    /// back-reference to it, as Java does for one `String` instance (such
    /// as a literal) used twice: smaller output, and the bytes of a Java
    /// peer that shares its equal strings. Off by default (every string is
    /// written in full, which any Kryo reads the same way).
    pub fn share_strings(mut self, on: bool) -> Self {
        self.shared = on.then(Vec::new);
        self
    }

    /// The dialect written.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The bytes.
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }

    /// Ends an object graph: forgets class names and references written so
    /// far (Kryo's `reset()`, which it calls after every top-level
    /// `writeClassAndObject`).
    pub fn reset(&mut self) {
        self.names.clear();
        self.next_ref = 0;
        if let Some(s) = &mut self.shared {
            s.clear();
        }
    }

    /// The marker and text of a string object or field: a back-reference
    /// when sharing and seen before, else a new one.
    fn string_body(&mut self, s: &str) {
        if let Some(shared) = &self.shared
            && let Some(&(_, id)) = shared.iter().find(|(t, _)| t == s)
        {
            self.write_back_reference(id);
            return;
        }
        let id = self.write_new_reference();
        if let Some(shared) = &mut self.shared {
            shared.push((s.to_owned(), id));
        }
        self.write_string(Some(s));
    }

    // ---- Output: fixed width, varints, strings ----

    /// One byte (`writeByte`).
    pub fn write_byte(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// A boolean as one byte 0/1 (`writeBoolean`).
    pub fn write_bool(&mut self, v: bool) {
        self.buf.push(v as u8);
    }

    fn fixed<const N: usize>(&mut self, be: [u8; N], le: [u8; N]) {
        match self.dialect.version {
            Version::V4 => self.buf.extend_from_slice(&be),
            Version::V5 => self.buf.extend_from_slice(&le),
        }
    }

    /// A `short`, two bytes (big-endian in Kryo 4, little-endian in 5).
    pub fn write_short(&mut self, v: i16) {
        self.fixed(v.to_be_bytes(), v.to_le_bytes());
    }

    /// A `char` (one UTF-16 unit), two bytes.
    pub fn write_char(&mut self, v: u16) {
        self.fixed(v.to_be_bytes(), v.to_le_bytes());
    }

    /// An `int`, four bytes (`writeInt(int)`; Dubbo's `writeInt`).
    pub fn write_int(&mut self, v: i32) {
        self.fixed(v.to_be_bytes(), v.to_le_bytes());
    }

    /// A `long`, eight bytes.
    pub fn write_long(&mut self, v: i64) {
        self.fixed(v.to_be_bytes(), v.to_le_bytes());
    }

    /// A `float`, four bytes (its IEEE bits as an `int`).
    pub fn write_float(&mut self, v: f32) {
        self.write_int(v.to_bits() as i32);
    }

    /// A `double`, eight bytes (its IEEE bits as a `long`).
    pub fn write_double(&mut self, v: f64) {
        self.write_long(v.to_bits() as i64);
    }

    /// A 1-5 byte varint (`writeVarInt`): 7 bits per byte, low first, high
    /// bit = more. Without `optimize_positive` the value is zig-zag encoded
    /// first so small negatives stay short (what int fields use).
    pub fn write_var_int(&mut self, v: i32, optimize_positive: bool) {
        let mut u = if optimize_positive {
            v as u32
        } else {
            ((v << 1) ^ (v >> 31)) as u32
        };
        while u >= 0x80 {
            self.buf.push((u as u8 & 0x7f) | 0x80);
            u >>= 7;
        }
        self.buf.push(u as u8);
    }

    /// A 1-9 byte varint (`writeVarLong`); the ninth byte carries 8 bits.
    pub fn write_var_long(&mut self, v: i64, optimize_positive: bool) {
        let mut u = if optimize_positive {
            v as u64
        } else {
            ((v << 1) ^ (v >> 63)) as u64
        };
        for _ in 0..8 {
            if u < 0x80 {
                self.buf.push(u as u8);
                return;
            }
            self.buf.push((u as u8 & 0x7f) | 0x80);
            u >>= 7;
        }
        self.buf.push(u as u8);
    }

    /// Kryo 5's `writeVarIntFlag` (and Kryo 4's string length): bit 8 of
    /// the first byte is `flag`, bit 7 "more", 6 value bits; then 7 bits
    /// per byte.
    pub(crate) fn write_var_int_flag(&mut self, flag: bool, v: u32) {
        let first = (v & 0x3f) as u8 | if flag { 0x80 } else { 0 };
        if v >> 6 == 0 {
            self.buf.push(first);
            return;
        }
        self.buf.push(first | 0x40);
        let mut u = v >> 6;
        while u >= 0x80 {
            self.buf.push((u as u8 & 0x7f) | 0x80);
            u >>= 7;
        }
        self.buf.push(u as u8);
    }

    /// A string or null (`Output.writeString`, Dubbo's `writeUTF`).
    ///
    /// Null is `0x80`, empty `0x81`. An all-ASCII string of 2 up to 63
    /// (Kryo 4) or 32 (Kryo 5) chars is its bytes with bit 8 set on the
    /// last. Any other is its UTF-16 length + 1 (a flagged varint), then
    /// every UTF-16 unit as 1 to 3 bytes (UTF-8 shapes; a supplementary
    /// character is two 3-byte surrogates, U+0000 one zero byte).
    pub fn write_string(&mut self, s: Option<&str>) {
        let Some(s) = s else {
            self.buf.push(0x80);
            return;
        };
        if s.is_empty() {
            self.buf.push(0x81);
            return;
        }
        if s.is_ascii() {
            let n = s.len();
            if n > 1 && n <= self.dialect.ascii_max() {
                self.buf.extend_from_slice(s.as_bytes());
                *self.buf.last_mut().expect("n > 1") |= 0x80;
            } else {
                self.write_var_int_flag(true, n as u32 + 1);
                self.buf.extend_from_slice(s.as_bytes());
            }
            return;
        }
        let units = s.encode_utf16().count();
        self.write_var_int_flag(true, units as u32 + 1);
        self.buf.reserve(units * 3);
        for c in s.encode_utf16() {
            let c = c as u32;
            if c <= 0x7f {
                self.buf.push(c as u8);
            } else if c > 0x7ff {
                self.buf.push(0xe0 | (c >> 12 & 0x0f) as u8);
                self.buf.push(0x80 | (c >> 6 & 0x3f) as u8);
                self.buf.push(0x80 | (c & 0x3f) as u8);
            } else {
                self.buf.push(0xc0 | (c >> 6 & 0x1f) as u8);
                self.buf.push(0x80 | (c & 0x3f) as u8);
            }
        }
    }

    /// Dubbo's `writeBytes`: a four-byte length (-1 for null), then the
    /// bytes.
    pub fn write_bytes(&mut self, v: Option<&[u8]>) {
        match v {
            None => self.write_int(-1),
            Some(b) => {
                self.write_int(b.len() as i32);
                self.buf.extend_from_slice(b);
            }
        }
    }

    // ---- the object graph ----

    /// `writeClassAndObject(null)` (and a null non-final field): class 0.
    pub fn write_null(&mut self) {
        self.buf.push(NULL);
    }

    /// A class: its registration id + 2, or 1 and a name id, followed by the
    /// name the first time it appears in this graph.
    pub fn write_class(&mut self, class: Class<'_>) {
        match class {
            Class::Id(id) => self.write_var_int(id as i32 + 2, true),
            Class::Name(name) => {
                self.buf.push(1);
                if let Some(i) = self.names.iter().position(|n| n == name) {
                    self.write_var_int(i as i32, true);
                    return;
                }
                self.write_var_int(self.names.len() as i32, true);
                self.names.push(name.to_owned());
                // Kryo 5 writes an ASCII class name with writeAscii (the
                // short form whatever its length); Kryo 4 with writeString.
                if self.dialect.version == Version::V5 && name.is_ascii() && name.len() > 1 {
                    self.buf.extend_from_slice(name.as_bytes());
                    *self.buf.last_mut().expect("len > 1") |= 0x80;
                } else {
                    self.write_string(Some(name));
                }
            }
        }
    }

    /// The marker of an object written for the first time in this graph;
    /// returns its reference id (for [`Encoder::write_back_reference`]).
    pub fn write_new_reference(&mut self) -> u32 {
        self.buf.push(NOT_NULL);
        self.next_ref += 1;
        self.next_ref - 1
    }

    /// A back-reference to the object with reference id `id` (written
    /// before in this graph) instead of its data.
    pub fn write_back_reference(&mut self, id: u32) {
        self.write_var_int((id + 2) as i32, true);
    }

    /// A null where a reference marker is expected (a null `String` field,
    /// a null element of a same-class collection).
    pub fn write_null_reference(&mut self) {
        self.buf.push(NULL);
    }

    /// `writeClassAndObject(String)`: class `String`, marker, the string.
    pub fn write_string_object(&mut self, s: &str) {
        self.write_class(Class::Id(ids::STRING));
        self.string_body(s);
    }

    /// A `String` field (FieldSerializer, references on): the marker (0 for
    /// null), then the string.
    pub fn write_string_field(&mut self, s: Option<&str>) {
        match s {
            None => self.write_null_reference(),
            Some(s) => self.string_body(s),
        }
    }

    /// An `int` field (zig-zag varint, FieldSerializer's default).
    pub fn write_int_field(&mut self, v: i32) {
        self.write_var_int(v, false);
    }

    /// A `long` field (zig-zag varint).
    pub fn write_long_field(&mut self, v: i64) {
        self.write_var_long(v, false);
    }

    /// Starts a FieldSerializer object of the unregistered class `class`
    /// as `writeClassAndObject` does: its name, a new reference marker.
    /// The fields follow in name order. Returns the reference id.
    pub fn begin_object(&mut self, class: &str) -> u32 {
        self.write_class(Class::Name(class));
        self.write_new_reference()
    }

    /// Starts an `ArrayList` of `len` elements as `writeClassAndObject`
    /// does: class, marker, then the header. `same` is the class shared by
    /// every non-null element, if there is one, and whether any element is
    /// null: Kryo 5 then writes that class once. Returns how each element
    /// must be written ([`Encoder::begin_element`]).
    pub fn begin_array_list(&mut self, len: usize, same: Option<(Class<'_>, bool)>) -> ListMode {
        self.write_class(Class::Id(self.dialect.array_list));
        self.write_new_reference();
        self.collection_header(len, same)
    }

    /// A collection header (after the collection's class and marker).
    pub fn collection_header(&mut self, len: usize, same: Option<(Class<'_>, bool)>) -> ListMode {
        match self.dialect.version {
            Version::V4 => {
                self.write_var_int(len as i32, true);
                ListMode::Tagged
            }
            Version::V5 => {
                if len == 0 {
                    self.buf.push(1);
                    return ListMode::Tagged;
                }
                match same {
                    Some((class, has_null)) => {
                        self.write_var_int_flag(true, len as u32 + 1);
                        self.write_class(class);
                        self.write_bool(has_null);
                        ListMode::Same { has_null }
                    }
                    None => {
                        self.write_var_int_flag(false, len as u32 + 1);
                        ListMode::Tagged
                    }
                }
            }
        }
    }

    /// Starts one element of a list whose elements are FieldSerializer
    /// objects of `class` (or strings, collections: any referenceable
    /// class): the class when `mode` is [`ListMode::Tagged`], then a new
    /// reference marker. Returns the reference id.
    pub fn begin_element(&mut self, mode: ListMode, class: Class<'_>) -> u32 {
        if mode == ListMode::Tagged {
            self.write_class(class);
        }
        self.write_new_reference()
    }

    /// A null element of a list.
    pub fn write_null_element(&mut self, _mode: ListMode) {
        // writeClassAndObject(null) and writeObjectOrNull(null) are both 0.
        self.buf.push(NULL);
    }

    /// Starts a `HashMap` of `len` entries (class, marker, count); the
    /// entries follow as key and value, each `writeClassAndObject`.
    pub fn begin_hash_map(&mut self, len: usize) -> u32 {
        self.write_class(Class::Id(self.dialect.hash_map));
        let id = self.write_new_reference();
        match self.dialect.version {
            Version::V4 => self.write_var_int(len as i32, true),
            Version::V5 => self.write_var_int(len as i32 + 1, true),
        }
        id
    }

    /// `writeClassAndObject` of a `HashMap<String, String>` with these
    /// entries in this order (Dubbo's attachments). Java iterates a
    /// `HashMap` in bucket order; [`crate::java::hash_map_order`] gives it,
    /// for byte-identical output (any order reads back the same map).
    pub fn write_string_map<'s>(
        &mut self,
        entries: impl ExactSizeIterator<Item = (&'s str, &'s str)>,
    ) {
        self.begin_hash_map(entries.len());
        for (k, v) in entries {
            self.write_string_object(k);
            self.write_string_object(v);
        }
    }

    // ---- dynamic values ----

    /// `writeClassAndObject(value)`: a whole object graph, then
    /// [`Encoder::reset`]. Objects need a schema in `schemas`. Every object
    /// is written as new (no back-references).
    pub fn write_value(&mut self, value: &Value, schemas: &Schemas) -> Result<(), EncodeError> {
        self.depth += 1;
        let r = self.write_tagged(value, schemas);
        self.depth -= 1;
        if self.depth == 0 {
            self.reset();
        }
        r
    }

    fn class_of<'v>(&self, v: &'v Value) -> Result<Option<Class<'v>>, EncodeError> {
        Ok(Some(match v {
            Value::Null => return Ok(None),
            Value::Bool(_) => Class::Id(ids::BOOLEAN),
            Value::Byte(_) => Class::Id(ids::BYTE),
            Value::Char(_) => Class::Id(ids::CHAR),
            Value::Short(_) => Class::Id(ids::SHORT),
            Value::Int(_) => Class::Id(ids::INT),
            Value::Long(_) => Class::Id(ids::LONG),
            Value::Float(_) => Class::Id(ids::FLOAT),
            Value::Double(_) => Class::Id(ids::DOUBLE),
            Value::String(_) => Class::Id(ids::STRING),
            Value::List(_) => Class::Id(self.dialect.array_list),
            Value::Map(_) => Class::Id(self.dialect.hash_map),
            Value::Object(o) => Class::Name(&o.class),
            Value::Reference(_) => {
                return Err(EncodeError::Unsupported {
                    what: "a back-reference as a value (write the object itself)".into(),
                })
            }
            Value::Exception(_) => {
                return Err(EncodeError::Unsupported {
                    what: "a Throwable (this crate reads exceptions, it does not write them)"
                        .into(),
                })
            }
        }))
    }

    fn write_tagged(&mut self, v: &Value, schemas: &Schemas) -> Result<(), EncodeError> {
        match self.class_of(v)? {
            None => {
                self.write_null();
                Ok(())
            }
            Some(c) => {
                self.write_class(c);
                self.write_data(v, false, schemas)
            }
        }
    }

    /// The marker (if the class takes one) and the data of a non-null
    /// value whose class is known to the reader.
    fn write_data(
        &mut self,
        v: &Value,
        may_be_null: bool,
        schemas: &Schemas,
    ) -> Result<(), EncodeError> {
        let wrapper = !matches!(
            v,
            Value::String(_) | Value::List(_) | Value::Map(_) | Value::Object(_)
        );
        if let Value::String(s) = v {
            self.string_body(s);
            return Ok(());
        }
        if wrapper {
            if may_be_null {
                self.buf.push(NOT_NULL);
            }
        } else {
            self.write_new_reference();
        }
        match v {
            Value::Bool(b) => self.write_bool(*b),
            Value::Byte(b) => self.write_byte(*b as u8),
            Value::Char(c) => self.write_char(*c),
            Value::Short(s) => self.write_short(*s),
            Value::Int(i) => self.write_var_int(*i, false),
            Value::Long(l) => self.write_var_long(*l, false),
            Value::Float(f) => self.write_float(*f),
            Value::Double(d) => self.write_double(*d),
            Value::List(items) => self.write_list_body(items, schemas)?,
            Value::Map(entries) => {
                match self.dialect.version {
                    Version::V4 => self.write_var_int(entries.len() as i32, true),
                    Version::V5 => self.write_var_int(entries.len() as i32 + 1, true),
                }
                for (k, v) in entries {
                    self.write_nested(k, schemas)?;
                    self.write_nested(v, schemas)?;
                }
            }
            Value::Object(o) => self.write_fields(o, schemas)?,
            Value::Null | Value::String(_) | Value::Reference(_) | Value::Exception(_) => {
                unreachable!("no class, or written above")
            }
        }
        Ok(())
    }

    fn write_nested(&mut self, v: &Value, schemas: &Schemas) -> Result<(), EncodeError> {
        self.depth += 1;
        let r = self.write_tagged(v, schemas);
        self.depth -= 1;
        r
    }

    fn write_list_body(&mut self, items: &[Value], schemas: &Schemas) -> Result<(), EncodeError> {
        // Kryo 5 looks for one class shared by every non-null element.
        let mut same: Option<Class<'_>> = None;
        let mut mixed = false;
        let mut has_null = false;
        for it in items {
            match self.class_of(it)? {
                None => has_null = true,
                Some(c) if same.is_none() => same = Some(c),
                Some(c) => mixed |= same != Some(c),
            }
        }
        if self.dialect.version == Version::V5 && !items.is_empty() && same.is_none() {
            // All null: the flag, the count, then a null class.
            self.write_var_int_flag(true, items.len() as u32 + 1);
            self.write_null();
            return Ok(());
        }
        let header = if mixed {
            None
        } else {
            same.map(|c| (c, has_null))
        };
        // `header` borrows from `items`, not from self.
        let mode = self.collection_header(items.len(), header);
        for it in items {
            match mode {
                ListMode::Tagged => self.write_nested(it, schemas)?,
                ListMode::Same { has_null } => {
                    if matches!(it, Value::Null) {
                        self.write_null_reference();
                    } else {
                        self.depth += 1;
                        let r = self.write_data(it, has_null, schemas);
                        self.depth -= 1;
                        r?;
                    }
                }
            }
        }
        Ok(())
    }

    fn write_fields(&mut self, o: &Object, schemas: &Schemas) -> Result<(), EncodeError> {
        let schema = schemas.get(&o.class).ok_or_else(|| EncodeError::Schema {
            class: o.class.clone(),
            reason: "no schema for this class".into(),
        })?;
        for (name, ty) in &schema.fields {
            let v = o.get(name).ok_or_else(|| EncodeError::Schema {
                class: o.class.clone(),
                reason: format!("field `{name}` is missing"),
            })?;
            let bad = || EncodeError::Schema {
                class: o.class.clone(),
                reason: format!("field `{name}` ({ty:?}) cannot hold {v:?}"),
            };
            match (ty, v) {
                (FieldType::Bool, Value::Bool(b)) => self.write_bool(*b),
                (FieldType::Byte, Value::Byte(b)) => self.write_byte(*b as u8),
                (FieldType::Char, Value::Char(c)) => self.write_char(*c),
                (FieldType::Short, Value::Short(s)) => self.write_short(*s),
                (FieldType::Int, Value::Int(i)) => self.write_int_field(*i),
                (FieldType::Long, Value::Long(l)) => self.write_long_field(*l),
                (FieldType::Float, Value::Float(f)) => self.write_float(*f),
                (FieldType::Double, Value::Double(d)) => self.write_double(*d),
                (FieldType::String, Value::Null) => self.write_null_reference(),
                (FieldType::String, Value::String(s)) => self.write_string_field(Some(s)),
                (FieldType::Object, v) => self.write_nested(v, schemas)?,
                _ => return Err(bad()),
            }
        }
        Ok(())
    }
}
