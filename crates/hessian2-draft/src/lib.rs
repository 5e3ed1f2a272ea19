//! The Hessian 2.0 *draft* serialization that SOFA-RPC's bolt bodies use.
//!
//! SOFA-RPC 5.x ships `com.alipay.sofa:hessian` 3.x (3.5.5 in 5.13.2, 3.3.6
//! in 5.5.9), a fork of Caucho Hessian 3.1, which implements the 2007 draft
//! of Hessian 2.0, not the final specification that `crates/hessian2`
//! speaks (Dubbo's hessian-lite, Caucho 4.x). Its `Hessian2Input` reads only
//! the draft, so a bolt client must write and read it. The differences that
//! matter:
//!
//! | value | draft (this module) | final (`hessian2`) |
//! | --- | --- | --- |
//! | class definition | `O` int(len) chars int(n) string* | `C` string int(n) string* |
//! | object instance | `o` int(def) | `O` int(def), `0x60..=0x6f` |
//! | list | `V` [`t` u16 chars \| `u` int] [`n` u8 \| `l` i32] value* `z`; `v` int(type) int(len) value* | `V`/`W`/`0x55..=0x58`/`0x70..=0x7f` |
//! | map | `M` [type] (key value)* `z` | `M` type ..., `H` ... `Z` |
//! | double | `0x67` 0.0, `0x68` 1.0, `0x69` i8, `0x6a` i16, `0x6b` f32, `D` | `0x5b..=0x5f`, `D` |
//! | long in int range | `0x77` i32 | `0x59` i32 |
//! | string | `0x00..=0x1f` short, `s`/`S` u16 chunks | also `0x30..=0x33` |
//! | reference | `R` i32, `0x4a` u8, `0x4b` u16 | `0x51` int |
//!
//! Ints (`0x80..=0xd7`, `I`), longs (`0xd8..=0xff`, `0x38..=0x3f`, `L`),
//! booleans, null, dates (`d`) and binaries are as in the final spec.
//! String lengths count UTF-16 units; characters outside the BMP are
//! written as two 3-byte surrogates (CESU-8), as Java's `printString` does.
//!
//! The writer covers what a request needs. The reader reads every value the
//! draft's `Hessian2Input.readObject` reads, with bounded recursion and no
//! allocation larger than the input, so a malformed body is an error, never
//! a panic.
#![forbid(unsafe_code)]

use std::fmt;
use std::sync::Arc;

/// The most nested containers the reader follows (a Throwable with its
/// causes and stack trace needs about 6).
const MAX_DEPTH: usize = 64;

/// Why a draft Hessian body could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DraftError {
    pub offset: usize,
    pub what: String,
}

impl fmt::Display for DraftError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.offset)
    }
}

impl std::error::Error for DraftError {}

// ---- writing ---------------------------------------------------------------

/// Writes draft Hessian into a `Vec<u8>`, remembering class definitions as
/// Java's `Hessian2Output` does within one stream.
pub struct Writer<'a> {
    out: &'a mut Vec<u8>,
    classes: Vec<&'static str>,
}

impl<'a> Writer<'a> {
    pub fn new(out: &'a mut Vec<u8>) -> Writer<'a> {
        Writer {
            out,
            classes: Vec::new(),
        }
    }

    pub fn null(&mut self) {
        self.out.push(b'N');
    }

    pub fn bool(&mut self, v: bool) {
        self.out.push(if v { b'T' } else { b'F' });
    }

    pub fn int(&mut self, v: i32) {
        let o = &mut *self.out;
        if (-0x10..=0x2f).contains(&v) {
            o.push((v + 0x90) as u8);
        } else if (-0x800..=0x7ff).contains(&v) {
            o.extend_from_slice(&[(0xc8 + (v >> 8)) as u8, v as u8]);
        } else if (-0x40000..=0x3ffff).contains(&v) {
            o.extend_from_slice(&[(0xd4 + (v >> 16)) as u8, (v >> 8) as u8, v as u8]);
        } else {
            o.push(b'I');
            o.extend_from_slice(&v.to_be_bytes());
        }
    }

    pub fn long(&mut self, v: i64) {
        let o = &mut *self.out;
        if (-0x08..=0x0f).contains(&v) {
            o.push((v + 0xe0) as u8);
        } else if (-0x800..=0x7ff).contains(&v) {
            o.extend_from_slice(&[(0xf8 + (v >> 8)) as u8, v as u8]);
        } else if (-0x40000..=0x3ffff).contains(&v) {
            o.extend_from_slice(&[(0x3c + (v >> 16)) as u8, (v >> 8) as u8, v as u8]);
        } else if i32::try_from(v).is_ok() {
            o.push(0x77);
            o.extend_from_slice(&(v as i32).to_be_bytes());
        } else {
            o.push(b'L');
            o.extend_from_slice(&v.to_be_bytes());
        }
    }

    pub fn double(&mut self, v: f64) {
        let o = &mut *self.out;
        // Java: `int intValue = (int) value; if (intValue == value) ...`
        // (`as` saturates like Java's cast; NaN becomes 0 and fails the test).
        let i = v as i32;
        if f64::from(i) == v {
            match i {
                0 => return o.push(0x67),
                1 => return o.push(0x68),
                -0x80..=0x7f => return o.extend_from_slice(&[0x69, i as u8]),
                -0x8000..=0x7fff => {
                    return o.extend_from_slice(&[0x6a, (i >> 8) as u8, i as u8]);
                }
                _ => {}
            }
        }
        let f = v as f32;
        if f64::from(f) == v {
            o.push(0x6b);
            o.extend_from_slice(&f.to_bits().to_be_bytes());
        } else {
            o.push(b'D');
            o.extend_from_slice(&v.to_bits().to_be_bytes());
        }
    }

    /// A string: chunks of at most 0x8000 UTF-16 units (`s`), the last one
    /// `S` (or `0x00..=0x1f` when at most 31 units).
    pub fn string(&mut self, s: &str) {
        if s.is_ascii() {
            // Fast path: one unit per byte, chunks are byte slices.
            let mut rest = s.as_bytes();
            while rest.len() > 0x8000 {
                self.out.extend_from_slice(&[b's', 0x80, 0x00]);
                self.out.extend_from_slice(&rest[..0x8000]);
                rest = &rest[0x8000..];
            }
            self.final_chunk_header(rest.len());
            self.out.extend_from_slice(rest);
            return;
        }
        let units: Vec<u16> = s.encode_utf16().collect();
        let mut rest = &units[..];
        while rest.len() > 0x8000 {
            let mut n = 0x8000;
            if (0xd800..=0xdbff).contains(&rest[n - 1]) {
                n -= 1; // a chunk never ends in a high surrogate
            }
            self.out.push(b's');
            self.out.extend_from_slice(&(n as u16).to_be_bytes());
            self.units(&rest[..n]);
            rest = &rest[n..];
        }
        self.final_chunk_header(rest.len());
        self.units(rest);
    }

    fn final_chunk_header(&mut self, units: usize) {
        if units <= 0x1f {
            self.out.push(units as u8);
        } else {
            self.out.push(b'S');
            self.out.extend_from_slice(&(units as u16).to_be_bytes());
        }
    }

    /// UTF-16 units as Java's `printString`: 1, 2 or 3 bytes each.
    fn units(&mut self, units: &[u16]) {
        for &u in units {
            let c = u32::from(u);
            if c < 0x80 {
                self.out.push(c as u8);
            } else if c < 0x800 {
                self.out
                    .extend_from_slice(&[0xc0 | (c >> 6) as u8, 0x80 | (c & 0x3f) as u8]);
            } else {
                self.out.extend_from_slice(&[
                    0xe0 | (c >> 12) as u8,
                    0x80 | ((c >> 6) & 0x3f) as u8,
                    0x80 | (c & 0x3f) as u8,
                ]);
            }
        }
    }

    /// Starts an object of `class` with `fields` (a definition the first
    /// time the class is written in this stream, then `o` and its index);
    /// the caller writes the field values in `fields`' order.
    pub fn object(&mut self, class: &'static str, fields: &[&str]) {
        if let Some(i) = self.classes.iter().position(|c| *c == class) {
            self.out.push(b'o');
            self.int(i as i32);
            return;
        }
        self.definition(class, fields);
        self.out.push(b'o');
        self.int(self.classes.len() as i32);
        self.classes.push(class);
    }

    /// The definition of `class` with `fields` (`O`, the name's length and
    /// characters, the field count and names), as Java writes it.
    fn definition(&mut self, class: &str, fields: &[&str]) {
        self.out.push(b'O');
        self.int(class.len() as i32);
        self.out.extend_from_slice(class.as_bytes());
        self.int(fields.len() as i32);
        for f in fields {
            self.string(f);
        }
    }

    /// Starts a list of `len` values, typed (`[string`, ...) or untyped
    /// (`None`, as Java writes an `ArrayList`); end it with [`Writer::end`].
    /// (Java writes a type seen before in the stream as a `v` list; a bolt
    /// request names each list type once, so this writer always spells it.)
    pub fn list(&mut self, len: usize, ty: Option<&str>) {
        self.out.push(b'V');
        if let Some(ty) = ty {
            self.out.push(b't');
            self.out.extend_from_slice(&(ty.len() as u16).to_be_bytes());
            self.out.extend_from_slice(ty.as_bytes());
        }
        if len < 0x100 {
            self.out.extend_from_slice(&[0x6e, len as u8]);
        } else {
            self.out.push(b'l');
            self.out.extend_from_slice(&(len as u32).to_be_bytes());
        }
    }

    /// Starts an untyped map (a `HashMap`); end it with [`Writer::end`].
    pub fn map(&mut self) {
        self.out.push(b'M');
    }

    /// Ends a list or a map.
    pub fn end(&mut self) {
        self.out.push(b'z');
    }
}

/// The length of the string `want` as [`Writer::string`] (and Java) writes
/// it, if `bytes` start with exactly that (`None` otherwise, and for a
/// string that is not ASCII or longer than one chunk): a string recognised
/// where it lies, without reading it into a new one.
pub fn written_string_at(bytes: &[u8], want: &str) -> Option<usize> {
    let n = want.len();
    if !want.is_ascii() || n > 0x8000 {
        return None;
    }
    let header = if n <= 0x1f { 1 } else { 3 };
    let head = bytes.get(..header)?;
    let head_ok = if n <= 0x1f {
        head[0] == n as u8
    } else {
        head == [b'S', (n >> 8) as u8, n as u8]
    };
    (head_ok && bytes.get(header..header + n)? == want.as_bytes()).then_some(header + n)
}

// ---- reading ---------------------------------------------------------------

/// A value read generically (exceptions, fields this client does not use).
#[derive(Clone, Debug, PartialEq)]
pub enum DValue {
    Null,
    Bool(bool),
    Int(i32),
    Long(i64),
    Double(f64),
    Date(i64),
    String(String),
    Bytes(Vec<u8>),
    List(Option<String>, Vec<DValue>),
    Map(Option<String>, Vec<(DValue, DValue)>),
    Object(String, Vec<(String, DValue)>),
    /// A back reference to the n-th object, list or map of the stream.
    Ref(u32),
    /// A remote reference (`r` type url); never sent by SOFA-RPC.
    Remote(String, String),
}

impl DValue {
    /// An object's field by name.
    pub fn field(&self, name: &str) -> Option<&DValue> {
        match self {
            DValue::Object(_, fields) => fields.iter().find(|(n, _)| n == name).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// A class definition of the stream being read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassDef {
    pub name: String,
    pub fields: Vec<String>,
}

/// A class definition known before reading, with its bytes as a stream
/// carries it (Java writes a definition the same way every time), so that
/// [`Reader::begin_known_object`] recognises it by one comparison instead
/// of reading its name and field names into new strings, every message.
#[derive(Clone, Debug)]
pub struct KnownClass {
    wire: Vec<u8>,
    def: Arc<ClassDef>,
}

impl KnownClass {
    /// The class `name` with `fields`, in the order Java declares them.
    pub fn new(name: &str, fields: &[&str]) -> KnownClass {
        let mut wire = Vec::new();
        Writer::new(&mut wire).definition(name, fields);
        KnownClass {
            wire,
            def: Arc::new(ClassDef {
                name: name.to_owned(),
                fields: fields.iter().map(|f| (*f).to_owned()).collect(),
            }),
        }
    }

    /// The definition's bytes, as a stream carries them.
    pub fn wire(&self) -> &[u8] {
        &self.wire
    }
}

/// What starts a list: its type (if any) and length (`None` until `z`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListStart {
    pub ty: Option<String>,
    pub len: Option<usize>,
    /// A `v` list has no `z` at its end.
    pub terminated: bool,
}

/// A position of a [`Reader`] (see [`Reader::mark`]).
#[derive(Clone, Debug)]
pub struct Mark {
    pos: usize,
    classes: usize,
    types: usize,
    refs: u32,
}

impl Mark {
    pub fn position(&self) -> usize {
        self.pos
    }
}

/// Reads draft Hessian from a byte slice.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Shared, so that starting an object costs a reference count, not a
    /// copy of its field names (and a known class no copy at all).
    classes: Vec<Arc<ClassDef>>,
    types: Vec<String>,
    refs: u32,
    depth: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader {
            buf,
            pos: 0,
            classes: Vec::new(),
            types: Vec::new(),
            refs: 0,
            depth: 0,
        }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    /// Where the reader is, with what it has learnt so far, to come back
    /// to with [`Reader::reset`].
    pub fn mark(&self) -> Mark {
        Mark {
            pos: self.pos,
            classes: self.classes.len(),
            types: self.types.len(),
            refs: self.refs,
        }
    }

    /// Goes back to `mark`, forgetting class definitions, types and
    /// references read since, so that reading again numbers them as Java
    /// does.
    pub fn reset(&mut self, mark: &Mark) {
        self.pos = mark.pos;
        self.classes.truncate(mark.classes);
        self.types.truncate(mark.types);
        self.refs = mark.refs;
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn err<T>(&self, what: impl Into<String>) -> Result<T, DraftError> {
        Err(DraftError {
            offset: self.pos,
            what: what.into(),
        })
    }

    fn byte(&mut self) -> Result<u8, DraftError> {
        match self.buf.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => self.err("unexpected end of the body"),
        }
    }

    fn peek(&self) -> Result<u8, DraftError> {
        match self.buf.get(self.pos) {
            Some(&b) => Ok(b),
            None => self.err("unexpected end of the body"),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DraftError> {
        if self.remaining() < n {
            return self.err(format!("{n} bytes announced, {} left", self.remaining()));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u16(&mut self) -> Result<u16, DraftError> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn i32_raw(&mut self) -> Result<i32, DraftError> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn i64_raw(&mut self) -> Result<i64, DraftError> {
        let b = self.take(8)?;
        Ok(i64::from_be_bytes(b.try_into().expect("8 bytes")))
    }

    /// Whether the next value is `null` (consumed if so).
    pub fn try_null(&mut self) -> Result<bool, DraftError> {
        if self.peek()? == b'N' {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Whether the next byte ends a list or map (`z`, consumed if so).
    pub fn try_end(&mut self) -> Result<bool, DraftError> {
        if self.peek()? == b'z' {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// An int in any of its forms (`readInt`: also from longs, doubles and
    /// booleans as Java converts them).
    pub fn int(&mut self) -> Result<i32, DraftError> {
        let at = self.pos;
        let tag = self.byte()?;
        Ok(match tag {
            0x80..=0xbf => i32::from(tag) - 0x90,
            0xc0..=0xcf => ((i32::from(tag) - 0xc8) << 8) + i32::from(self.byte()?),
            0xd0..=0xd7 => {
                let b = self.take(2)?;
                ((i32::from(tag) - 0xd4) << 16) + 256 * i32::from(b[0]) + i32::from(b[1])
            }
            b'I' | 0x77 => self.i32_raw()?,
            _ => {
                self.pos = at;
                let v = self.long()?;
                v as i32
            }
        })
    }

    /// A long in any of its forms (ints and doubles converted as Java does).
    pub fn long(&mut self) -> Result<i64, DraftError> {
        let at = self.pos;
        let tag = self.byte()?;
        Ok(match tag {
            0x80..=0xd7 | b'I' => {
                self.pos = at;
                i64::from(self.int()?)
            }
            0xd8..=0xef => i64::from(tag) - 0xe0,
            0xf0..=0xff => ((i64::from(tag) - 0xf8) << 8) + i64::from(self.byte()?),
            0x38..=0x3f => {
                let b = self.take(2)?;
                ((i64::from(tag) - 0x3c) << 16) + 256 * i64::from(b[0]) + i64::from(b[1])
            }
            0x77 => i64::from(self.i32_raw()?),
            b'L' => self.i64_raw()?,
            b'T' => 1,
            b'F' | b'N' => 0,
            0x67..=0x6b | b'D' => {
                self.pos = at;
                self.double()? as i64
            }
            other => {
                self.pos = at;
                return self.err(format!("expected a number, found tag 0x{other:02x}"));
            }
        })
    }

    /// A double in any of its forms (ints and longs converted).
    pub fn double(&mut self) -> Result<f64, DraftError> {
        let at = self.pos;
        let tag = self.byte()?;
        Ok(match tag {
            0x67 => 0.0,
            0x68 => 1.0,
            0x69 => f64::from(self.byte()? as i8),
            0x6a => f64::from(self.u16()? as i16),
            0x6b => f64::from(f32::from_bits(self.i32_raw()? as u32)),
            b'D' => f64::from_bits(self.i64_raw()? as u64),
            0x80..=0xd7 | b'I' => {
                self.pos = at;
                f64::from(self.int()?)
            }
            0xd8..=0xff | 0x38..=0x3f | 0x77 | b'L' => {
                self.pos = at;
                self.long()? as f64
            }
            other => {
                self.pos = at;
                return self.err(format!("expected a double, found tag 0x{other:02x}"));
            }
        })
    }

    pub fn bool(&mut self) -> Result<bool, DraftError> {
        match self.byte()? {
            b'T' => Ok(true),
            b'F' => Ok(false),
            other => {
                self.pos -= 1;
                self.err(format!("expected a boolean, found tag 0x{other:02x}"))
            }
        }
    }

    /// A string (or `None` for null), appended to `out` (cleared first).
    pub fn string_into(&mut self, out: &mut String) -> Result<bool, DraftError> {
        out.clear();
        let mut tag = self.byte()?;
        if tag == b'N' {
            return Ok(false);
        }
        loop {
            let (last, units) = match tag {
                0x00..=0x1f => (true, usize::from(tag)),
                b'S' => (true, usize::from(self.u16()?)),
                b's' => (false, usize::from(self.u16()?)),
                other => {
                    self.pos -= 1;
                    return self.err(format!("expected a string, found tag 0x{other:02x}"));
                }
            };
            self.chars(units, out)?;
            if last {
                return Ok(true);
            }
            tag = self.byte()?;
        }
    }

    pub fn opt_string(&mut self) -> Result<Option<String>, DraftError> {
        let mut s = String::new();
        Ok(self.string_into(&mut s)?.then_some(s))
    }

    /// `units` UTF-16 units of (modified, CESU-8) UTF-8.
    fn chars(&mut self, units: usize, out: &mut String) -> Result<(), DraftError> {
        // ASCII fast path: the next `units` bytes, if all ASCII.
        if let Some(bytes) = self.buf.get(self.pos..self.pos + units) {
            if bytes.is_ascii() {
                out.push_str(std::str::from_utf8(bytes).expect("ASCII"));
                self.pos += units;
                return Ok(());
            }
        }
        let mut high: Option<u16> = None;
        for _ in 0..units {
            let b0 = u32::from(self.byte()?);
            let unit = if b0 < 0x80 {
                b0
            } else if b0 & 0xe0 == 0xc0 {
                let b1 = u32::from(self.byte()?);
                ((b0 & 0x1f) << 6) | (b1 & 0x3f)
            } else if b0 & 0xf0 == 0xe0 {
                let b = self.take(2)?;
                ((b0 & 0x0f) << 12) | ((u32::from(b[0]) & 0x3f) << 6) | (u32::from(b[1]) & 0x3f)
            } else {
                self.pos -= 1;
                return self.err(format!("bad UTF-8 lead byte 0x{b0:02x} in a string"));
            } as u16;
            if let Some(h) = high.take() {
                if (0xdc00..=0xdfff).contains(&unit) {
                    let c = 0x10000 + ((u32::from(h) - 0xd800) << 10) + (u32::from(unit) - 0xdc00);
                    out.push(char::from_u32(c).unwrap_or('\u{fffd}'));
                    continue;
                }
                out.push('\u{fffd}');
            }
            if (0xd800..=0xdbff).contains(&unit) {
                high = Some(unit);
            } else {
                out.push(char::from_u32(u32::from(unit)).unwrap_or('\u{fffd}'));
            }
        }
        if high.is_some() {
            out.push('\u{fffd}');
        }
        Ok(())
    }

    fn len_string(&mut self, units: usize) -> Result<String, DraftError> {
        let mut s = String::new();
        self.chars(units, &mut s)?;
        Ok(s)
    }

    /// An optional type (`t` u16 chars, or `0x75`/`T` int reference);
    /// `None` when the next byte is not a type.
    fn opt_type(&mut self) -> Result<Option<String>, DraftError> {
        match self.peek()? {
            b't' => {
                self.pos += 1;
                let n = usize::from(self.u16()?);
                let ty = self.len_string(n)?;
                self.types.push(ty.clone());
                Ok(Some(ty))
            }
            // Java's readType takes `T` as a type reference too.
            0x75 | b'T' => {
                self.pos += 1;
                let i = self.int()?;
                match usize::try_from(i).ok().and_then(|i| self.types.get(i)) {
                    Some(t) => Ok(Some(t.clone())),
                    None => self.err(format!("type reference {i} to an unknown type")),
                }
            }
            _ => Ok(None),
        }
    }

    /// An optional list length (`n` u8, `l` i32).
    fn opt_length(&mut self) -> Result<Option<usize>, DraftError> {
        match self.peek()? {
            0x6e => {
                self.pos += 1;
                Ok(Some(usize::from(self.byte()?)))
            }
            b'l' => {
                self.pos += 1;
                let n = self.i32_raw()?;
                usize::try_from(n)
                    .map(Some)
                    .or_else(|_| self.err(format!("negative list length {n}")))
            }
            _ => Ok(None),
        }
    }

    /// [`Reader::begin_object`] where the object is most likely of class
    /// `known`: a definition byte for byte `known`'s is taken as read, with
    /// no string made (the stream numbers it as if read); anything else is
    /// read as `begin_object` reads it.
    pub fn begin_known_object(&mut self, known: &KnownClass) -> Result<Arc<ClassDef>, DraftError> {
        if self.buf[self.pos..].starts_with(&known.wire) {
            // The definition `class_def` would read, numbered the same.
            self.pos += known.wire.len();
            self.classes.push(Arc::clone(&known.def));
        }
        self.begin_object()
    }

    /// Starts an object: reads a definition if one comes first, then the
    /// instance tag. Returns the class definition (its fields are read
    /// next, in order); an error if the value is not an object.
    pub fn begin_object(&mut self) -> Result<Arc<ClassDef>, DraftError> {
        if self.peek()? == b'O' {
            self.pos += 1;
            self.class_def()?;
        }
        match self.byte()? {
            b'o' => {
                let i = self.int()?;
                let def = usize::try_from(i)
                    .ok()
                    .and_then(|i| self.classes.get(i))
                    .map(Arc::clone);
                match def {
                    Some(def) => {
                        self.refs += 1;
                        Ok(def)
                    }
                    None => self.err(format!("object of unknown class definition {i}")),
                }
            }
            other => {
                self.pos -= 1;
                self.err(format!("expected an object, found tag 0x{other:02x}"))
            }
        }
    }

    fn class_def(&mut self) -> Result<(), DraftError> {
        let n = self.int()?;
        let n = usize::try_from(n).or_else(|_| self.err("negative class name length"))?;
        let name = self.len_string(n)?;
        let count = self.int()?;
        let count = usize::try_from(count).or_else(|_| self.err("negative field count"))?;
        // Each field name takes at least one byte.
        if count > self.remaining() {
            return self.err(format!(
                "{count} fields announced, {} bytes left",
                self.remaining()
            ));
        }
        let mut fields = Vec::with_capacity(count);
        for _ in 0..count {
            match self.opt_string()? {
                Some(f) => fields.push(f),
                None => return self.err("null field name"),
            }
        }
        self.classes.push(Arc::new(ClassDef { name, fields }));
        Ok(())
    }

    /// Starts a list (`V` ... or `v`); read its items until
    /// [`Reader::list_next`] says none is left.
    pub fn begin_list(&mut self) -> Result<ListStart, DraftError> {
        match self.byte()? {
            b'V' => {
                let ty = self.opt_type()?;
                let len = self.opt_length()?;
                self.refs += 1;
                Ok(ListStart {
                    ty,
                    len,
                    terminated: true,
                })
            }
            b'v' => {
                let t = self.int()?;
                let ty = match usize::try_from(t).ok().and_then(|i| self.types.get(i)) {
                    Some(ty) => ty.clone(),
                    None => return self.err(format!("list of unknown type reference {t}")),
                };
                let n = self.int()?;
                let len = usize::try_from(n).or_else(|_| self.err("negative list length"))?;
                self.refs += 1;
                Ok(ListStart {
                    ty: Some(ty),
                    len: Some(len),
                    terminated: false,
                })
            }
            other => {
                self.pos -= 1;
                self.err(format!("expected a list, found tag 0x{other:02x}"))
            }
        }
    }

    /// Whether another item of the list follows (`read` items so far);
    /// consumes the list's end.
    pub fn list_next(&mut self, list: &ListStart, read: usize) -> Result<bool, DraftError> {
        if !list.terminated {
            return Ok(read < list.len.unwrap_or(0));
        }
        if self.try_end()? {
            return Ok(false);
        }
        if let Some(len) = list.len {
            if read >= len {
                return self.err(format!("list of {len} items has more"));
            }
        }
        Ok(true)
    }

    /// Skips one value.
    pub fn skip(&mut self) -> Result<(), DraftError> {
        self.value().map(drop)
    }

    /// Reads one value of any kind.
    pub fn value(&mut self) -> Result<DValue, DraftError> {
        if self.depth >= MAX_DEPTH {
            return self.err(format!("values nested deeper than {MAX_DEPTH}"));
        }
        self.depth += 1;
        let v = self.value_inner();
        self.depth -= 1;
        v
    }

    fn value_inner(&mut self) -> Result<DValue, DraftError> {
        let tag = self.peek()?;
        Ok(match tag {
            b'N' => {
                self.pos += 1;
                DValue::Null
            }
            b'T' | b'F' => DValue::Bool(self.bool()?),
            0x80..=0xd7 | b'I' => DValue::Int(self.int()?),
            0xd8..=0xff | 0x38..=0x3f | 0x77 | b'L' => DValue::Long(self.long()?),
            0x67..=0x6b | b'D' => DValue::Double(self.double()?),
            b'd' => {
                self.pos += 1;
                DValue::Date(self.i64_raw()?)
            }
            0x00..=0x1f | b'S' | b's' => {
                let mut s = String::new();
                self.string_into(&mut s)?;
                DValue::String(s)
            }
            0x20..=0x2f => {
                self.pos += 1;
                DValue::Bytes(self.take(usize::from(tag - 0x20))?.to_vec())
            }
            b'B' | b'b' => {
                let mut bytes = Vec::new();
                loop {
                    let t = self.byte()?;
                    let n = usize::from(self.u16()?);
                    bytes.extend_from_slice(self.take(n)?);
                    match t {
                        b'B' => break,
                        b'b' => {}
                        other => {
                            self.pos -= 3;
                            return self
                                .err(format!("expected a binary chunk, found 0x{other:02x}"));
                        }
                    }
                    if !matches!(self.peek()?, b'B' | b'b') {
                        return self.err("binary chunk not followed by another");
                    }
                }
                DValue::Bytes(bytes)
            }
            b'x' | b'X' => return self.err("XML values are not supported"),
            b'V' | b'v' => {
                let list = self.begin_list()?;
                let mut items = Vec::with_capacity(list.len.unwrap_or(0).min(self.remaining()));
                while self.list_next(&list, items.len())? {
                    items.push(self.value()?);
                }
                DValue::List(list.ty, items)
            }
            b'M' => {
                self.pos += 1;
                let ty = self.opt_type()?;
                self.refs += 1;
                let mut entries = Vec::new();
                while !self.try_end()? {
                    let k = self.value()?;
                    let v = self.value()?;
                    entries.push((k, v));
                }
                DValue::Map(ty, entries)
            }
            b'O' | b'o' => {
                let def = self.begin_object()?;
                let mut fields = Vec::with_capacity(def.fields.len());
                for name in &def.fields {
                    let v = self.value()?;
                    fields.push((name.clone(), v));
                }
                DValue::Object(def.name.clone(), fields)
            }
            b'R' => {
                self.pos += 1;
                DValue::Ref(self.i32_raw()? as u32)
            }
            0x4a => {
                self.pos += 1;
                DValue::Ref(u32::from(self.byte()?))
            }
            0x4b => {
                self.pos += 1;
                DValue::Ref(u32::from(self.u16()?))
            }
            b'r' => {
                self.pos += 1;
                let ty = self.opt_type()?.unwrap_or_default();
                let url = self.opt_string()?.unwrap_or_default();
                DValue::Remote(ty, url)
            }
            other => return self.err(format!("unknown tag 0x{other:02x}")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(f: impl FnOnce(&mut Writer<'_>)) -> Vec<u8> {
        let mut out = Vec::new();
        f(&mut Writer::new(&mut out));
        out
    }

    #[test]
    fn numbers_round_trip_in_every_form() {
        for v in [
            0,
            1,
            -16,
            47,
            48,
            -17,
            -0x800,
            0x7ff,
            0x800,
            -0x40000,
            0x3ffff,
            0x40000,
            i32::MIN,
            i32::MAX,
        ] {
            let b = written(|w| w.int(v));
            assert_eq!(Reader::new(&b).int().unwrap(), v, "{b:02x?}");
            assert_eq!(Reader::new(&b).value().unwrap(), DValue::Int(v));
        }
        for v in [
            0i64,
            -8,
            15,
            16,
            -0x800,
            0x7ff,
            -0x40000,
            0x3ffff,
            0x40000,
            10_000_000_001,
            i64::from(i32::MIN),
            i64::from(i32::MAX),
            i64::MIN,
            i64::MAX,
        ] {
            let b = written(|w| w.long(v));
            assert_eq!(Reader::new(&b).long().unwrap(), v, "{b:02x?}");
            assert_eq!(Reader::new(&b).value().unwrap(), DValue::Long(v));
        }
        // Java's choices: 100.75 is a float, 0.1 needs 8 bytes.
        assert_eq!(
            written(|w| w.double(100.75)),
            [0x6b, 0x42, 0xc9, 0x80, 0x00]
        );
        assert_eq!(written(|w| w.double(0.0)), [0x67]);
        assert_eq!(written(|w| w.double(1.0)), [0x68]);
        assert_eq!(written(|w| w.double(-3.0)), [0x69, 0xfd]);
        assert_eq!(written(|w| w.double(300.0)), [0x6a, 0x01, 0x2c]);
        for v in [
            0.1,
            100.75,
            -1e300,
            f64::MAX,
            f64::MIN_POSITIVE,
            123456789.0,
            3e9,
        ] {
            let b = written(|w| w.double(v));
            assert_eq!(Reader::new(&b).double().unwrap(), v, "{b:02x?}");
        }
    }

    #[test]
    fn strings_chunk_by_utf16_units() {
        for s in [
            String::new(),
            "aa".to_owned(),
            "x".repeat(31),
            "x".repeat(32),
            "y".repeat(0x8000),
            "z".repeat(0x8001 * 2 + 5),
            "héllo wörld €".to_owned(),
            "😀".repeat(0x4001),
        ] {
            let b = written(|w| w.string(&s));
            let mut r = Reader::new(&b);
            assert_eq!(r.opt_string().unwrap().as_deref(), Some(s.as_str()));
            assert_eq!(r.remaining(), 0);
        }
        assert_eq!(written(|w| w.string("aa")), [0x02, b'a', b'a']);
        assert_eq!(&written(|w| w.string(&"a".repeat(32)))[..3], [b'S', 0, 32]);
        // A surrogate pair is two 3-byte units.
        assert_eq!(
            written(|w| w.string("😀")),
            [0x02, 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]
        );
    }

    /// A known class's definition is recognised without being read, and
    /// numbered as a read one: the same definitions and values follow.
    #[test]
    fn a_known_class_reads_as_a_read_one() {
        let known = KnownClass::new("a.B", &["x", "y"]);
        let body = written(|w| {
            w.object("a.B", &["x", "y"]);
            w.int(1);
            w.object("a.C", &["z"]);
            w.string("s");
            w.object("a.B", &["x", "y"]);
            w.int(2);
            w.null();
        });
        let read = |known: Option<&KnownClass>| {
            let mut r = Reader::new(&body);
            let first = match known {
                Some(k) => r.begin_known_object(k).unwrap(),
                None => r.begin_object().unwrap(),
            };
            assert_eq!(r.int().unwrap(), 1);
            assert_eq!(
                r.value().unwrap(),
                DValue::Object("a.C".into(), vec![("z".into(), DValue::String("s".into()))])
            );
            let again = r.value().unwrap();
            assert_eq!(r.remaining(), 0);
            ((*first).clone(), again)
        };
        assert_eq!(read(Some(&known)), read(None));
        assert_eq!(read(None).0, *known.def);
        // Another class, or the known one spelt otherwise: read as usual.
        let other = KnownClass::new("a.B", &["x"]);
        assert_eq!(read(Some(&other)), read(None));
        let mut long_form = body.clone();
        long_form.splice(1..2, [b'I', 0, 0, 0, 3]);
        let mut r = Reader::new(&long_form);
        assert_eq!(*r.begin_known_object(&known).unwrap(), *known.def);
        assert_eq!(r.int().unwrap(), 1);
        // Not an object at all: the same error as begin_object's.
        assert!(Reader::new(b"N").begin_known_object(&known).is_err());
    }

    /// A string is recognised in place exactly where it is written so.
    #[test]
    fn a_written_string_is_recognised_where_it_lies() {
        for s in [
            "",
            "aa",
            &"x".repeat(31),
            &"x".repeat(32),
            &"y".repeat(0x8000),
        ] {
            let mut b = written(|w| w.string(s));
            let len = b.len();
            b.extend_from_slice(b"N");
            assert_eq!(written_string_at(&b, s), Some(len), "{}", s.len());
            assert_eq!(written_string_at(&b[..len - 1], s), None);
            if !s.is_empty() {
                assert_eq!(written_string_at(&b, &s[1..]), None);
                let mut other = b.clone();
                other[len - 1] ^= 1;
                assert_eq!(written_string_at(&other, s), None);
            }
        }
        // Not one ASCII chunk: never recognised (read instead).
        assert_eq!(written_string_at(&written(|w| w.string("é")), "é"), None);
        let long = "z".repeat(0x8001);
        assert_eq!(
            written_string_at(&written(|w| w.string(&long)), &long),
            None
        );
        // The long form of a short string is not how it is written.
        assert_eq!(written_string_at(b"S\x00\x02aa", "aa"), None);
    }

    #[test]
    fn malformed_input_is_an_error() {
        for bad in [
            &b""[..],
            b"S\x00\x05ab",
            b"\x05ab",
            b"Vt\x00\x09[string",
            b"o\x90",
            b"O\xa5rpclab",
            b"l",
            b"\xff",
            b"M\x01a",
            b"Vl\x80\x00\x00\x00z",
            b"v\x90\x91",
            b"u",
            b"\x02\xf0\x9f",
        ] {
            assert!(Reader::new(bad).value().is_err(), "{bad:02x?}");
        }
        // Deep nesting stops at MAX_DEPTH, without overflowing the stack.
        let deep = [b'V'].repeat(100_000);
        assert!(Reader::new(&deep).value().is_err());
    }
}
