//! The reader: everything `ObjectInputStream` accepts (but `TC_EXCEPTION`
//! and version-1 externalizable data), as [`Value`]s, including dynamic
//! proxy class descriptors (RMI stubs are proxies).

use std::sync::Arc;

use crate::error::DecodeError;
use crate::mutf8;
use crate::tc::*;
use crate::value::{Array, ClassData, ClassDesc, Content, Enum, FieldDesc, Object, Value};

/// Default nesting limit of a [`Decoder`].
pub const DEFAULT_MAX_DEPTH: usize = 128;

#[derive(Debug, Clone)]
enum Handle {
    Pending,
    Desc(Arc<ClassDesc>),
    Str(String),
    Other,
}

/// `DataInput`'s primitive reads: big-endian, from block data.
macro_rules! read_big_endian {
    ($($(#[$doc:meta])* $name:ident -> $ty:ty;)*) => {$(
        $(#[$doc])*
        pub fn $name(&mut self) -> Result<$ty, DecodeError> {
            Ok(<$ty>::from_be_bytes(self.block()?))
        }
    )*};
}

/// Reads a Java serialization stream from a byte slice.
///
/// Top level content is read with [`read_content`](Self::read_content) (block
/// data or objects), [`read_object`](Self::read_object) (`readObject`) or the
/// primitive readers (`readInt`, `readUTF`, ...), which read through block
/// data chunks as `ObjectInputStream` does.
#[derive(Debug)]
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    handles: Vec<Handle>,
    block_left: usize,
    depth: usize,
    max_depth: usize,
}

impl<'a> Decoder<'a> {
    /// Checks the stream header and positions after it.
    pub fn new(buf: &'a [u8]) -> Result<Self, DecodeError> {
        let mut d = Decoder {
            buf,
            pos: 0,
            handles: Vec::new(),
            block_left: 0,
            depth: 0,
            max_depth: DEFAULT_MAX_DEPTH,
        };
        let magic = d.u16()?;
        let version = d.u16()?;
        if magic != STREAM_MAGIC || version != STREAM_VERSION {
            return Err(DecodeError::BadHeader { offset: 0 });
        }
        Ok(d)
    }

    /// Sets the nesting limit.
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// Current offset in the input.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Whether all input (including block data) has been read.
    pub fn is_at_end(&self) -> bool {
        self.pos >= self.buf.len() && self.block_left == 0
    }

    /// The string a handle stands for, if it is a string handle.
    pub fn handle_string(&self, handle: u32) -> Option<&str> {
        match self
            .handles
            .get(handle.wrapping_sub(BASE_WIRE_HANDLE) as usize)
        {
            Some(Handle::Str(s)) => Some(s),
            _ => None,
        }
    }

    fn eof(&self) -> DecodeError {
        DecodeError::UnexpectedEof {
            offset: self.buf.len(),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| self.eof())?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_be_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn peek(&self) -> Result<u8, DecodeError> {
        self.buf.get(self.pos).copied().ok_or_else(|| self.eof())
    }

    fn utf_bytes(&mut self, len: usize) -> Result<String, DecodeError> {
        let at = self.pos;
        let b = self.take(len)?;
        mutf8::decode(b).ok_or(DecodeError::InvalidUtf8 { offset: at })
    }

    fn raw_utf(&mut self) -> Result<String, DecodeError> {
        let n = self.u16()? as usize;
        self.utf_bytes(n)
    }

    fn new_handle(&mut self, h: Handle) -> u32 {
        self.handles.push(h);
        BASE_WIRE_HANDLE + (self.handles.len() as u32 - 1)
    }

    fn set_handle(&mut self, handle: u32, h: Handle) {
        if let Some(slot) = self.handles.get_mut((handle - BASE_WIRE_HANDLE) as usize) {
            *slot = h;
        }
    }

    fn lookup(&self, handle: u32, at: usize) -> Result<&Handle, DecodeError> {
        match self
            .handles
            .get(handle.wrapping_sub(BASE_WIRE_HANDLE) as usize)
        {
            Some(Handle::Pending) | None => Err(DecodeError::InvalidHandle { handle, offset: at }),
            Some(h) => Ok(h),
        }
    }

    // ---- block data -------------------------------------------------

    fn block_bytes(&mut self, n: usize, out: &mut [u8]) -> Result<(), DecodeError> {
        let mut done = 0;
        while done < n {
            if self.block_left == 0 {
                self.next_block()?;
            }
            let k = (n - done).min(self.block_left);
            let s = self.take(k)?;
            out[done..done + k].copy_from_slice(s);
            done += k;
            self.block_left -= k;
        }
        Ok(())
    }

    fn next_block(&mut self) -> Result<(), DecodeError> {
        loop {
            let at = self.pos;
            match self.peek()? {
                TC_RESET => {
                    self.pos += 1;
                    self.handles.clear();
                }
                TC_BLOCKDATA => {
                    self.pos += 1;
                    self.block_left = self.u8()? as usize;
                    return Ok(());
                }
                TC_BLOCKDATALONG => {
                    self.pos += 1;
                    let n = self.i32()?;
                    if n < 0 || n as usize > self.buf.len() - self.pos {
                        return Err(DecodeError::InvalidLength {
                            length: n.into(),
                            offset: at + 1,
                        });
                    }
                    self.block_left = n as usize;
                    return Ok(());
                }
                _ => return Err(DecodeError::NotBlockData { offset: at }),
            }
        }
    }

    fn block<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut b = [0u8; N];
        self.block_bytes(N, &mut b)?;
        Ok(b)
    }

    /// `readBoolean`.
    pub fn read_boolean(&mut self) -> Result<bool, DecodeError> {
        Ok(self.block::<1>()?[0] != 0)
    }
    read_big_endian! {
        /// `readByte`.
        read_byte -> i8;
        /// `readChar`.
        read_char -> u16;
        /// `readShort`.
        read_short -> i16;
        /// `readInt`.
        read_int -> i32;
        /// `readLong`.
        read_long -> i64;
        /// `readFloat`.
        read_float -> f32;
        /// `readDouble`.
        read_double -> f64;
    }
    /// `readFully` of `n` bytes.
    pub fn read_bytes(&mut self, n: usize) -> Result<Vec<u8>, DecodeError> {
        if n > self.buf.len() - self.pos {
            return Err(DecodeError::InvalidLength {
                length: n as i64,
                offset: self.pos,
            });
        }
        let mut v = vec![0; n];
        self.block_bytes(n, &mut v)?;
        Ok(v)
    }
    /// `readUTF`.
    pub fn read_utf(&mut self) -> Result<String, DecodeError> {
        let n = u16::from_be_bytes(self.block()?) as usize;
        let at = self.pos;
        let b = self.read_bytes(n)?;
        mutf8::decode(&b).ok_or(DecodeError::InvalidUtf8 { offset: at })
    }

    // ---- content ----------------------------------------------------

    /// The next piece of top-level content: a block-data chunk (the rest of
    /// a chunk, if primitives were read from it) or an object. `None` at the
    /// end of input. `TC_RESET` is handled transparently.
    pub fn read_content(&mut self) -> Result<Option<Content>, DecodeError> {
        if self.block_left > 0 {
            let n = self.block_left;
            self.block_left = 0;
            return Ok(Some(Content::BlockData(self.take(n)?.to_vec())));
        }
        loop {
            if self.pos >= self.buf.len() {
                return Ok(None);
            }
            match self.peek()? {
                TC_RESET => {
                    self.pos += 1;
                    self.handles.clear();
                }
                TC_BLOCKDATA | TC_BLOCKDATALONG => {
                    self.next_block()?;
                    let n = self.block_left;
                    self.block_left = 0;
                    return Ok(Some(Content::BlockData(self.take(n)?.to_vec())));
                }
                _ => return self.read_value().map(|v| Some(Content::Value(v))),
            }
        }
    }

    /// `readObject`: the next object (null, string, object, array, enum,
    /// class or a reference), skipping `TC_RESET`.
    pub fn read_object(&mut self) -> Result<Value, DecodeError> {
        if self.block_left > 0 {
            return Err(DecodeError::UnexpectedTag {
                tag: TC_BLOCKDATA,
                offset: self.pos,
                expected: "an object (unread block data remains)",
            });
        }
        while self.peek()? == TC_RESET {
            self.pos += 1;
            self.handles.clear();
        }
        self.read_value()
    }

    /// Reads every top-level content item to the end of input.
    pub fn read_all(&mut self) -> Result<Vec<Content>, DecodeError> {
        let mut v = Vec::new();
        while let Some(c) = self.read_content()? {
            v.push(c);
        }
        Ok(v)
    }

    /// Runs `read` one level deeper, at the current offset: every read
    /// that can recurse (values, class descriptors) goes through here, so
    /// that hostile nesting fails with `TooDeep` instead of overflowing
    /// the stack.
    fn nested<T>(
        &mut self,
        read: impl FnOnce(&mut Self, usize) -> Result<T, DecodeError>,
    ) -> Result<T, DecodeError> {
        let at = self.pos;
        if self.depth >= self.max_depth {
            return Err(DecodeError::TooDeep {
                limit: self.max_depth,
                offset: at,
            });
        }
        self.depth += 1;
        let r = read(self, at);
        self.depth -= 1;
        r
    }

    fn read_value(&mut self) -> Result<Value, DecodeError> {
        self.nested(Self::read_value_inner)
    }

    fn read_value_inner(&mut self, at: usize) -> Result<Value, DecodeError> {
        let tag = self.u8()?;
        match tag {
            TC_NULL => Ok(Value::Null),
            TC_REFERENCE => {
                let h = self.i32()? as u32;
                self.lookup(h, at)?;
                Ok(Value::Reference(h))
            }
            TC_STRING | TC_LONGSTRING => Ok(Value::String(self.string_body(tag)?)),
            TC_CLASSDESC | TC_PROXYCLASSDESC => {
                // A bare class descriptor is not an object, but readObject
                // in Java accepts it (it returns the ObjectStreamClass).
                self.pos = at;
                let d = self.class_desc()?.ok_or(DecodeError::UnexpectedTag {
                    tag,
                    offset: at,
                    expected: "a class descriptor",
                })?;
                Ok(Value::Class(d))
            }
            TC_CLASS => {
                let d = self.required_desc(at)?;
                self.new_handle(Handle::Other);
                Ok(Value::Class(d))
            }
            TC_OBJECT => self.object(at),
            TC_ARRAY => self.array(at),
            TC_ENUM => {
                let desc = self.required_desc(at)?;
                let handle = self.new_handle(Handle::Other);
                let constant = match self.read_value()? {
                    v @ Value::String(_) => v,
                    Value::Reference(h) if self.handle_string(h).is_some() => Value::Reference(h),
                    _ => {
                        return Err(DecodeError::InvalidDescriptor {
                            offset: at,
                            what: "enum constant name is not a string",
                        })
                    }
                };
                Ok(Value::Enum(Box::new(Enum {
                    desc,
                    handle,
                    constant,
                })))
            }
            TC_EXCEPTION => Err(DecodeError::Unsupported {
                offset: at,
                what: "TC_EXCEPTION",
            }),
            _ => Err(DecodeError::UnexpectedTag {
                tag,
                offset: at,
                expected: "an object",
            }),
        }
    }

    fn string_body(&mut self, tag: u8) -> Result<String, DecodeError> {
        let at = self.pos;
        let n = if tag == TC_STRING {
            self.u16()? as u64
        } else {
            let n = self.i64()?;
            if n < 0 {
                return Err(DecodeError::InvalidLength {
                    length: n,
                    offset: at,
                });
            }
            n as u64
        };
        if n > (self.buf.len() - self.pos) as u64 {
            return Err(DecodeError::InvalidLength {
                length: n as i64,
                offset: at,
            });
        }
        let s = self.utf_bytes(n as usize)?;
        self.new_handle(Handle::Str(s.clone()));
        Ok(s)
    }

    fn required_desc(&mut self, at: usize) -> Result<Arc<ClassDesc>, DecodeError> {
        self.class_desc()?.ok_or(DecodeError::InvalidDescriptor {
            offset: at,
            what: "null class descriptor",
        })
    }

    /// classDesc: TC_CLASSDESC, TC_PROXYCLASSDESC, TC_NULL or TC_REFERENCE.
    fn class_desc(&mut self) -> Result<Option<Arc<ClassDesc>>, DecodeError> {
        self.nested(Self::class_desc_inner)
    }

    fn class_desc_inner(&mut self, at: usize) -> Result<Option<Arc<ClassDesc>>, DecodeError> {
        match self.u8()? {
            TC_NULL => Ok(None),
            TC_REFERENCE => {
                let h = self.i32()? as u32;
                match self.lookup(h, at)? {
                    Handle::Desc(d) => Ok(Some(d.clone())),
                    _ => Err(DecodeError::InvalidHandle {
                        handle: h,
                        offset: at,
                    }),
                }
            }
            TC_CLASSDESC => {
                let name = self.raw_utf()?;
                let suid = self.i64()?;
                let handle = self.new_handle(Handle::Pending);
                let flags = self.u8()?;
                let count = self.u16()? as usize;
                let mut fields = Vec::with_capacity(count.min((self.buf.len() - self.pos) / 3));
                for _ in 0..count {
                    let fat = self.pos;
                    let type_code = self.u8()?;
                    let fname = self.raw_utf()?;
                    let class_name = match type_code {
                        b'B' | b'C' | b'D' | b'F' | b'I' | b'J' | b'S' | b'Z' => None,
                        b'L' | b'[' => Some(self.type_string()?),
                        _ => {
                            return Err(DecodeError::InvalidDescriptor {
                                offset: fat,
                                what: "bad field type code",
                            })
                        }
                    };
                    fields.push(FieldDesc {
                        type_code,
                        name: fname,
                        class_name,
                    });
                }
                let annotations = self.annotations()?;
                let super_desc = self.class_desc()?;
                let d = Arc::new(ClassDesc {
                    name,
                    suid,
                    flags,
                    fields,
                    annotations,
                    super_desc,
                    proxy_interfaces: None,
                });
                self.set_handle(handle, Handle::Desc(d.clone()));
                Ok(Some(d))
            }
            TC_PROXYCLASSDESC => {
                // proxyClassDescInfo: count, interface names (writeUTF),
                // annotations, then the superclass descriptor.
                let handle = self.new_handle(Handle::Pending);
                let count_at = self.pos;
                let count = self.i32()?;
                // Each name takes at least its 2-byte length.
                if count < 0 || count as usize > (self.buf.len() - self.pos) / 2 {
                    return Err(DecodeError::InvalidLength {
                        length: count.into(),
                        offset: count_at,
                    });
                }
                let mut interfaces = Vec::with_capacity(count as usize);
                for _ in 0..count {
                    interfaces.push(self.raw_utf()?);
                }
                let annotations = self.annotations()?;
                let super_desc = self.class_desc()?;
                let d = Arc::new(ClassDesc {
                    name: String::new(),
                    suid: 0,
                    flags: SC_SERIALIZABLE,
                    fields: Vec::new(),
                    annotations,
                    super_desc,
                    proxy_interfaces: Some(interfaces),
                });
                self.set_handle(handle, Handle::Desc(d.clone()));
                Ok(Some(d))
            }
            tag => Err(DecodeError::UnexpectedTag {
                tag,
                offset: at,
                expected: "a class descriptor",
            }),
        }
    }

    fn type_string(&mut self) -> Result<String, DecodeError> {
        let at = self.pos;
        match self.u8()? {
            t @ (TC_STRING | TC_LONGSTRING) => self.string_body(t),
            TC_REFERENCE => {
                let h = self.i32()? as u32;
                self.handle_string(h)
                    .map(str::to_owned)
                    .ok_or(DecodeError::InvalidHandle {
                        handle: h,
                        offset: at,
                    })
            }
            tag => Err(DecodeError::UnexpectedTag {
                tag,
                offset: at,
                expected: "a field type string",
            }),
        }
    }

    /// Block data and objects up to and including TC_ENDBLOCKDATA.
    fn annotations(&mut self) -> Result<Vec<Content>, DecodeError> {
        let mut v = Vec::new();
        loop {
            match self.peek()? {
                TC_ENDBLOCKDATA => {
                    self.pos += 1;
                    return Ok(v);
                }
                TC_BLOCKDATA | TC_BLOCKDATALONG => {
                    self.next_block()?;
                    let n = std::mem::take(&mut self.block_left);
                    v.push(Content::BlockData(self.take(n)?.to_vec()));
                }
                TC_RESET => {
                    self.pos += 1;
                    self.handles.clear();
                }
                _ => v.push(Content::Value(self.read_value()?)),
            }
        }
    }

    fn field_value(&mut self, type_code: u8) -> Result<Value, DecodeError> {
        Ok(match type_code {
            b'B' => Value::Byte(self.u8()? as i8),
            b'C' => Value::Char(self.u16()?),
            b'D' => Value::Double(f64::from_bits(self.i64()? as u64)),
            b'F' => Value::Float(f32::from_bits(self.i32()? as u32)),
            b'I' => Value::Int(self.i32()?),
            b'J' => Value::Long(self.i64()?),
            b'S' => Value::Short(self.u16()? as i16),
            b'Z' => Value::Boolean(self.u8()? != 0),
            _ => self.read_value()?,
        })
    }

    fn object(&mut self, at: usize) -> Result<Value, DecodeError> {
        let desc = self.required_desc(at)?;
        let handle = self.new_handle(Handle::Other);
        let hier = desc.hierarchy();
        let mut class_data = Vec::with_capacity(hier.len());
        for d in &hier {
            let mut data = ClassData::default();
            if d.flags & SC_EXTERNALIZABLE != 0 {
                if d.flags & SC_BLOCK_DATA == 0 {
                    return Err(DecodeError::Unsupported {
                        offset: self.pos,
                        what: "externalizable data written with protocol version 1",
                    });
                }
                data.annotations = self.annotations()?;
            } else {
                data.values.reserve(d.fields.len());
                for f in &d.fields {
                    let v = self.field_value(f.type_code)?;
                    data.values.push(v);
                }
                if d.flags & SC_WRITE_METHOD != 0 {
                    data.annotations = self.annotations()?;
                }
            }
            class_data.push(data);
        }
        drop(hier);
        Ok(Value::Object(Box::new(Object {
            desc,
            handle,
            class_data,
        })))
    }

    fn array(&mut self, at: usize) -> Result<Value, DecodeError> {
        let desc = self.required_desc(at)?;
        let handle = self.new_handle(Handle::Other);
        let len_at = self.pos;
        let n = self.i32()?;
        let b = desc.name.as_bytes();
        if b.len() < 2 || b[0] != b'[' {
            return Err(DecodeError::InvalidDescriptor {
                offset: at,
                what: "array class name must start with '['",
            });
        }
        let elem = b[1];
        let size = match elem {
            b'B' | b'Z' => 1,
            b'C' | b'S' => 2,
            b'I' | b'F' => 4,
            b'J' | b'D' => 8,
            b'L' | b'[' => 1,
            _ => {
                return Err(DecodeError::InvalidDescriptor {
                    offset: at,
                    what: "bad array element type",
                })
            }
        };
        if n < 0 || (n as usize).saturating_mul(size) > self.buf.len() - self.pos {
            return Err(DecodeError::InvalidLength {
                length: n.into(),
                offset: len_at,
            });
        }
        let mut elements = Vec::with_capacity(n as usize);
        for _ in 0..n {
            elements.push(self.field_value(elem)?);
        }
        Ok(Value::Array(Box::new(Array {
            desc,
            handle,
            elements,
        })))
    }
}
