//! The writer: what `ObjectOutputStream` writes.

use std::collections::HashMap;

use crate::error::EncodeError;
use crate::mutf8;
use crate::tc::*;
use crate::value::{Array, ClassDesc, Content, Object, Value};

/// `DataOutput`'s primitive writes: big-endian, into block data.
macro_rules! write_big_endian {
    ($($(#[$doc:meta])* $name:ident($ty:ty);)*) => {$(
        $(#[$doc])*
        pub fn $name(&mut self, v: $ty) {
            self.prim(&v.to_be_bytes());
        }
    )*};
}

/// Writes a Java serialization stream into a `Vec<u8>`, byte for byte as
/// `java.io.ObjectOutputStream` does.
///
/// Like `ObjectOutputStream`, the encoder starts in block-data mode:
/// primitive writes (`write_int`, `write_utf`, ...) go into
/// `TC_BLOCKDATA` chunks of at most 1024 bytes. Between
/// [`begin_object`](Self::begin_object) and [`end_object`](Self::end_object)
/// the same calls write raw field values, as `defaultWriteObject` does;
/// [`begin_custom_data`](Self::begin_custom_data) switches to block data
/// for what a `writeObject` method writes after its fields.
#[derive(Debug)]
pub struct Encoder {
    out: Vec<u8>,
    block: Vec<u8>,
    block_mode: bool,
    modes: Vec<bool>,
    next_handle: u32,
    /// The descriptors written so far, by class name, with their handles.
    /// A name can come with more than one descriptor (a stream may define
    /// a class twice, differently): only an equal descriptor is shared, or
    /// the objects written with the second would be read with the first.
    classes: HashMap<String, Vec<(ClassDesc, u32)>>,
    type_strings: HashMap<String, u32>,
    null_annotations: bool,
}

impl Default for Encoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Encoder {
    /// A new stream, with its header already written.
    pub fn new() -> Self {
        Self::with_buffer(Vec::new())
    }

    /// A new stream appended to `out`.
    pub fn with_buffer(mut out: Vec<u8>) -> Self {
        out.extend_from_slice(&STREAM_MAGIC.to_be_bytes());
        out.extend_from_slice(&STREAM_VERSION.to_be_bytes());
        Encoder {
            out,
            block: Vec::new(),
            block_mode: true,
            modes: Vec::new(),
            next_handle: BASE_WIRE_HANDLE,
            classes: HashMap::new(),
            type_strings: HashMap::new(),
            null_annotations: false,
        }
    }

    /// Writes `TC_NULL` as the annotation of every class descriptor that
    /// carries none, as Java RMI's `MarshalOutputStream` does: it annotates
    /// each class (and proxy class) with its codebase URL, `null` when there
    /// is none, and its reader (`MarshalInputStream`) reads that object
    /// back, so a stream for an RMI peer must have it.
    pub fn with_null_class_annotations(mut self) -> Self {
        self.null_annotations = true;
        self
    }

    /// Flushes pending block data (like `ObjectOutputStream.flush`) and
    /// returns the stream.
    pub fn finish(mut self) -> Vec<u8> {
        self.flush_block();
        self.out
    }

    fn flush_block(&mut self) {
        if self.block.is_empty() {
            return;
        }
        let n = self.block.len();
        if n <= 0xff {
            self.out.push(TC_BLOCKDATA);
            self.out.push(n as u8);
        } else {
            self.out.push(TC_BLOCKDATALONG);
            self.out.extend_from_slice(&(n as i32).to_be_bytes());
        }
        self.out.append(&mut self.block);
    }

    fn prim(&mut self, bytes: &[u8]) {
        if !self.block_mode {
            self.out.extend_from_slice(bytes);
            return;
        }
        for &b in bytes {
            if self.block.len() >= MAX_BLOCK_SIZE {
                self.flush_block();
            }
            self.block.push(b);
        }
    }

    fn assign(&mut self) -> u32 {
        let h = self.next_handle;
        self.next_handle += 1;
        h
    }

    /// `writeBoolean`.
    pub fn write_boolean(&mut self, v: bool) {
        self.prim(&[v as u8]);
    }
    write_big_endian! {
        /// `writeByte`.
        write_byte(i8);
        /// `writeChar` (one UTF-16 unit).
        write_char(u16);
        /// `writeShort`.
        write_short(i16);
        /// `writeInt`.
        write_int(i32);
        /// `writeLong`.
        write_long(i64);
        /// `writeFloat`.
        write_float(f32);
        /// `writeDouble`.
        write_double(f64);
    }
    /// `write(byte[])`.
    pub fn write_bytes(&mut self, v: &[u8]) {
        self.prim(v);
    }
    /// One block-data chunk holding exactly `data` (the writer otherwise
    /// chunks block data as `ObjectOutputStream` does); for re-encoding
    /// decoded [`Content::BlockData`].
    pub fn write_block_data(&mut self, data: &[u8]) {
        self.flush_block();
        self.block.extend_from_slice(data);
        self.flush_block();
    }

    /// `writeUTF`: a 2-byte length and modified UTF-8.
    pub fn write_utf(&mut self, s: &str) -> Result<(), EncodeError> {
        let len = mutf8::encoded_len(s);
        if len > 0xffff {
            return Err(EncodeError::StringTooLong { len });
        }
        self.prim(&(len as u16).to_be_bytes());
        let b = mutf8::encode(s);
        self.prim(&b);
        Ok(())
    }

    fn raw_utf(&mut self, s: &str) -> Result<(), EncodeError> {
        let len = mutf8::encoded_len(s);
        if len > 0xffff {
            return Err(EncodeError::StringTooLong { len });
        }
        self.out.extend_from_slice(&(len as u16).to_be_bytes());
        mutf8::encode_into(s, &mut self.out);
        Ok(())
    }

    /// `TC_NULL`.
    pub fn write_null(&mut self) {
        self.flush_block();
        self.out.push(TC_NULL);
    }

    /// `TC_REFERENCE` to an earlier handle (absolute, from `0x7e0000`).
    pub fn write_reference(&mut self, handle: u32) {
        self.flush_block();
        self.out.push(TC_REFERENCE);
        self.out.extend_from_slice(&handle.to_be_bytes());
    }

    /// `TC_RESET`: forgets every handle.
    pub fn reset(&mut self) {
        self.flush_block();
        self.out.push(TC_RESET);
        self.next_handle = BASE_WIRE_HANDLE;
        self.classes.clear();
        self.type_strings.clear();
    }

    /// A new string object (`TC_STRING`, or `TC_LONGSTRING` past 65535
    /// bytes); returns its handle.
    pub fn write_string(&mut self, s: &str) -> u32 {
        self.flush_block();
        let len = mutf8::encoded_len(s);
        if len <= 0xffff {
            self.out.push(TC_STRING);
            self.out.extend_from_slice(&(len as u16).to_be_bytes());
        } else {
            self.out.push(TC_LONGSTRING);
            self.out.extend_from_slice(&(len as i64).to_be_bytes());
        }
        mutf8::encode_into(s, &mut self.out);
        self.assign()
    }

    /// A class descriptor (or a reference to an equal one already written),
    /// then its superclass chain.
    pub fn write_class_desc(&mut self, desc: Option<&ClassDesc>) -> Result<(), EncodeError> {
        self.flush_block();
        let Some(d) = desc else {
            self.out.push(TC_NULL);
            return Ok(());
        };
        if let Some(interfaces) = &d.proxy_interfaces {
            // Proxy descriptors are not shared by name (they have none):
            // each one written is a new handle, as for a new proxy class.
            self.out.push(TC_PROXYCLASSDESC);
            self.assign();
            let n = i32::try_from(interfaces.len())
                .map_err(|_| EncodeError::Mismatch("too many proxy interfaces".into()))?;
            self.out.extend_from_slice(&n.to_be_bytes());
            for i in interfaces {
                self.raw_utf(i)?;
            }
            self.write_class_annotations(&d.annotations)?;
            return self.write_class_desc(d.super_desc.as_deref());
        }
        let written = self
            .classes
            .get(&d.name)
            .and_then(|same_name| same_name.iter().find(|(w, _)| w == d));
        if let Some(&(_, h)) = written {
            self.write_reference(h);
            return Ok(());
        }
        self.out.push(TC_CLASSDESC);
        self.raw_utf(&d.name)?;
        self.out.extend_from_slice(&d.suid.to_be_bytes());
        let h = self.assign();
        self.classes
            .entry(d.name.clone())
            .or_default()
            .push((d.clone(), h));
        self.out.push(d.flags);
        if d.fields.len() > 0xffff {
            return Err(EncodeError::Mismatch("more than 65535 fields".into()));
        }
        self.out
            .extend_from_slice(&(d.fields.len() as u16).to_be_bytes());
        for f in &d.fields {
            self.out.push(f.type_code);
            self.raw_utf(&f.name)?;
            if !f.is_primitive() {
                let ts = f.class_name.as_deref().unwrap_or("Ljava/lang/Object;");
                if let Some(&h) = self.type_strings.get(ts) {
                    self.write_reference(h);
                } else {
                    let h = self.write_string(ts);
                    self.type_strings.insert(ts.to_owned(), h);
                }
            }
        }
        self.write_class_annotations(&d.annotations)?;
        self.write_class_desc(d.super_desc.as_deref())
    }

    fn write_class_annotations(&mut self, contents: &[Content]) -> Result<(), EncodeError> {
        if contents.is_empty() && self.null_annotations {
            return self.write_annotations(&[Content::Value(Value::Null)]);
        }
        self.write_annotations(contents)
    }

    fn write_annotations(&mut self, contents: &[Content]) -> Result<(), EncodeError> {
        let saved = std::mem::replace(&mut self.block_mode, true);
        for c in contents {
            match c {
                Content::BlockData(b) => self.write_block_data(b),
                Content::Value(v) => self.write_value(v)?,
            }
        }
        self.flush_block();
        self.out.push(TC_ENDBLOCKDATA);
        self.block_mode = saved;
        Ok(())
    }

    /// A `Class` object (`TC_CLASS`, e.g. an element of a `Class[]`):
    /// its descriptor (or a reference to it); returns its handle.
    pub fn write_class(&mut self, desc: &ClassDesc) -> Result<u32, EncodeError> {
        self.flush_block();
        self.out.push(TC_CLASS);
        self.write_class_desc(Some(desc))?;
        Ok(self.assign())
    }

    /// Starts `TC_OBJECT` of class `desc` and returns its handle. Then write
    /// each class's field values (superclass first, fields in descriptor
    /// order) with the `write_*` calls, `write_string`, `write_null`,
    /// nested objects..., with [`begin_custom_data`](Self::begin_custom_data)
    /// / [`end_custom_data`](Self::end_custom_data) around a `writeObject`
    /// method's extra data; finish with [`end_object`](Self::end_object).
    pub fn begin_object(&mut self, desc: &ClassDesc) -> Result<u32, EncodeError> {
        self.flush_block();
        self.out.push(TC_OBJECT);
        self.write_class_desc(Some(desc))?;
        let h = self.assign();
        self.modes.push(self.block_mode);
        self.block_mode = false;
        Ok(h)
    }

    /// Switches to block data for what `writeObject` writes after
    /// `defaultWriteObject`.
    pub fn begin_custom_data(&mut self) {
        self.block_mode = true;
    }

    /// Ends a `writeObject` method's data with `TC_ENDBLOCKDATA`.
    pub fn end_custom_data(&mut self) -> Result<(), EncodeError> {
        if self.modes.is_empty() {
            return Err(EncodeError::Unbalanced("end_custom_data"));
        }
        self.flush_block();
        self.out.push(TC_ENDBLOCKDATA);
        self.block_mode = false;
        Ok(())
    }

    /// Ends the object started by [`begin_object`](Self::begin_object).
    pub fn end_object(&mut self) -> Result<(), EncodeError> {
        let m = self
            .modes
            .pop()
            .ok_or(EncodeError::Unbalanced("end_object"))?;
        self.flush_block();
        self.block_mode = m;
        Ok(())
    }

    /// `TC_ARRAY` header: descriptor, handle, length. Then write `len`
    /// elements (raw primitives or objects) and call
    /// [`end_object`](Self::end_object).
    pub fn begin_array(&mut self, desc: &ClassDesc, len: usize) -> Result<u32, EncodeError> {
        let len = i32::try_from(len).map_err(|_| EncodeError::Mismatch("array too long".into()))?;
        self.flush_block();
        self.out.push(TC_ARRAY);
        self.write_class_desc(Some(desc))?;
        let h = self.assign();
        self.out.extend_from_slice(&len.to_be_bytes());
        self.modes.push(self.block_mode);
        self.block_mode = false;
        Ok(h)
    }

    /// Writes any [`Value`]. Objects and arrays are written with their
    /// descriptors; the handles stored in them are ignored (the encoder
    /// assigns its own in order, so re-encoding a decoded stream reproduces
    /// its handles).
    pub fn write_value(&mut self, v: &Value) -> Result<(), EncodeError> {
        match v {
            Value::Null => self.write_null(),
            Value::Byte(x) => self.write_byte(*x),
            Value::Char(x) => self.write_char(*x),
            Value::Double(x) => self.write_double(*x),
            Value::Float(x) => self.write_float(*x),
            Value::Int(x) => self.write_int(*x),
            Value::Long(x) => self.write_long(*x),
            Value::Short(x) => self.write_short(*x),
            Value::Boolean(x) => self.write_boolean(*x),
            Value::String(s) => {
                self.write_string(s);
            }
            Value::Reference(h) => self.write_reference(*h),
            Value::Object(o) => self.write_object(o)?,
            Value::Array(a) => self.write_array(a)?,
            Value::Enum(e) => {
                self.flush_block();
                self.out.push(TC_ENUM);
                self.write_class_desc(Some(&e.desc))?;
                self.assign();
                let saved = std::mem::replace(&mut self.block_mode, false);
                let r = self.write_value(&e.constant);
                self.block_mode = saved;
                r?;
            }
            Value::Class(d) => {
                self.flush_block();
                self.out.push(TC_CLASS);
                self.write_class_desc(Some(d))?;
                self.assign();
            }
        }
        Ok(())
    }

    fn write_object(&mut self, o: &Object) -> Result<(), EncodeError> {
        let hier = o.desc.hierarchy();
        if hier.len() != o.class_data.len() {
            return Err(EncodeError::Mismatch(format!(
                "{}: {} classes, {} class data",
                o.desc.name,
                hier.len(),
                o.class_data.len()
            )));
        }
        self.begin_object(&o.desc)?;
        for (d, data) in hier.iter().zip(&o.class_data) {
            if d.flags & SC_EXTERNALIZABLE != 0 {
                self.write_annotations(&data.annotations)?;
                continue;
            }
            if data.values.len() != d.fields.len() {
                return Err(EncodeError::Mismatch(format!("{}: field count", d.name)));
            }
            for v in &data.values {
                self.write_value(v)?;
            }
            if d.has_write_method() {
                self.write_annotations(&data.annotations)?;
            }
        }
        self.end_object()
    }

    fn write_array(&mut self, a: &Array) -> Result<(), EncodeError> {
        self.begin_array(&a.desc, a.elements.len())?;
        for e in &a.elements {
            self.write_value(e)?;
        }
        self.end_object()
    }
}
