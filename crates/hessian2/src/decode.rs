//! Reading Hessian 2.0.
//!
//! The [`Decoder`] reads from a byte slice (a whole message: every RPC
//! protocol that carries Hessian frames its body with a length first). It
//! accepts every encoding the specification allows for each type, not just
//! the ones Java's writer picks, because other writers (Go, Python, .NET,
//! older Java versions) pick differently.
//!
//! # Robustness
//!
//! Input is untrusted. The decoder never panics on malformed input, never
//! preallocates more than the rest of the input could fill (a list that
//! claims 2³¹ elements in a 10-byte message is rejected, not allocated),
//! bounds nesting depth ([`DecodeOptions::max_depth`]) so a deep message
//! cannot overflow the stack, and bounds the work of resolving shared
//! references ([`DecodeOptions::max_ref_expansion`]) so a small message whose
//! references fan out exponentially cannot make it loop for ages.
//!
//! # References
//!
//! The n-th list, map or object of a stream (counted in the order they start)
//! can be referred to later by `Q n`. The decoder remembers where each one
//! started and ended in the input; a reference to a finished value is
//! resolved by reading that value's bytes again (a *replay*), which yields a
//! fresh copy for [`Value`] reads and lets typed reads ([`FromHessian`](crate::FromHessian))
//! resolve references without requiring `Clone` or keeping decoded values
//! around. References to a value that is still open (cycles) cannot be
//! copied into a tree: [`Decoder::read_value`] keeps them as [`Value::Ref`],
//! typed reads report [`DecodeError::CyclicReference`]. With
//! [`RefMode::Keep`], `read_value` keeps every reference as a `Ref`.
//!
//! # Containers in typed code
//!
//! Lists, maps and objects are read as a `begin_*` call, the elements (each
//! with any read method), [`Decoder::has_next`] to tell when they run out, and
//! [`Decoder::end`]. The decoder tracks how many elements of a fixed-length
//! list or an object are left, so `end` skips whatever the caller did not
//! read (unknown fields, say).

use std::borrow::Cow;
use std::sync::Arc;

use crate::error::DecodeError;
use crate::tag;
use crate::utf::{self, Cesu8Decoder, ChunkError};
use crate::value::{ClassDef, List, Map, Object, Value};

type Result<T> = std::result::Result<T, DecodeError>;

/// The `index`-th entry of a stream's table (its class definitions or its
/// type names), or the error `unknown` makes of the index.
fn entry<T: Clone>(table: &[T], index: i32, unknown: impl FnOnce(i64) -> DecodeError) -> Result<T> {
    usize::try_from(index)
        .ok()
        .and_then(|i| table.get(i))
        .cloned()
        .ok_or_else(|| unknown(index.into()))
}

/// The compact forms of an int or a long, by how many bytes follow the
/// tag: the form's tags and the tag that stands for zero in it.
type CompactForms = [(std::ops::RangeInclusive<u8>, u8); 3];

const INT_FORMS: CompactForms = [
    (0x80..=0xbf, tag::INT_ZERO),
    (0xc0..=0xcf, tag::INT_BYTE_ZERO),
    (0xd0..=0xd7, tag::INT_SHORT_ZERO),
];

const LONG_FORMS: CompactForms = [
    (0xd8..=0xef, tag::LONG_ZERO),
    (0xf0..=0xff, tag::LONG_BYTE_ZERO),
    (0x38..=0x3f, tag::LONG_SHORT_ZERO),
];

/// What [`Decoder::read_value`] does with value references.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RefMode {
    /// Replace each reference to a finished list, map or object by a copy of
    /// it; keep references that form cycles as [`Value::Ref`]. The result
    /// looks like what a Java reader sees, minus the sharing.
    #[default]
    Resolve,
    /// Keep every reference as [`Value::Ref`]: exact, cheap, and re-encodes to
    /// the same bytes.
    Keep,
}

/// Limits and modes of a [`Decoder`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DecodeOptions {
    /// How [`Decoder::read_value`] treats references. Default: [`RefMode::Resolve`].
    pub refs: RefMode,
    /// Deepest nesting of lists, maps and objects. Default: 256.
    pub max_depth: usize,
    /// Most input bytes that resolving references may re-read, in total, per
    /// decoder. Default: 4 MiB.
    ///
    /// Re-reading is what turns a reference into a copy, so this bounds both
    /// time and memory: a [`Value`] read produces at most one node (about 60
    /// bytes) per byte re-read, a string or binary about one byte per byte.
    /// Raise it for messages that legitimately share large values many
    /// times; use [`RefMode::Keep`] to avoid copies altogether.
    pub max_ref_expansion: usize,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            refs: RefMode::Resolve,
            max_depth: 256,
            max_ref_expansion: 4 << 20,
        }
    }
}

impl DecodeOptions {
    /// Sets [`refs`](Self::refs).
    pub fn refs(mut self, mode: RefMode) -> Self {
        self.refs = mode;
        self
    }

    /// Sets [`max_depth`](Self::max_depth).
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Sets [`max_ref_expansion`](Self::max_ref_expansion).
    pub fn max_ref_expansion(mut self, bytes: usize) -> Self {
        self.max_ref_expansion = bytes;
        self
    }
}

/// The kind of the next value, from its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// `null`.
    Null,
    /// A boolean.
    Bool,
    /// A 32-bit int.
    Int,
    /// A 64-bit long.
    Long,
    /// A double.
    Double,
    /// A date.
    Date,
    /// A string.
    String,
    /// A binary.
    Binary,
    /// A list.
    List,
    /// A map.
    Map,
    /// An object instance.
    Object,
    /// A reference to an earlier list, map or object.
    Ref,
}

impl ValueKind {
    /// The kind of value a byte starts, or `None` for a byte that starts no
    /// value (a class definition `C`, the end marker `Z`, a reserved code).
    pub fn of(tag: u8) -> Option<ValueKind> {
        Some(match tag {
            0x00..=0x1f | 0x30..=0x33 | b'R' | b'S' => ValueKind::String,
            0x20..=0x2f | 0x34..=0x37 | b'A' | b'B' => ValueKind::Binary,
            0x38..=0x3f | tag::LONG_INT | b'L' | 0xd8..=0xff => ValueKind::Long,
            0x80..=0xd7 | b'I' => ValueKind::Int,
            b'D' | 0x5b..=0x5f => ValueKind::Double,
            tag::DATE | tag::DATE_MINUTE => ValueKind::Date,
            b'N' => ValueKind::Null,
            b'T' | b'F' => ValueKind::Bool,
            0x55..=0x58 | 0x70..=0x7f => ValueKind::List,
            b'M' | b'H' => ValueKind::Map,
            b'O' | 0x60..=0x6f => ValueKind::Object,
            tag::REF => ValueKind::Ref,
            _ => return None,
        })
    }
}

/// A list's header, from [`Decoder::begin_list`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListHeader {
    /// The type name, if sent.
    pub ty: Option<Arc<str>>,
    /// The length for fixed-length lists, `None` for variable-length ones.
    pub len: Option<usize>,
    /// The list's index for references.
    pub ref_index: u32,
}

/// A map's header, from [`Decoder::begin_map`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapHeader {
    /// The type name, if sent.
    pub ty: Option<Arc<str>>,
    /// The map's index for references.
    pub ref_index: u32,
}

/// An object's header, from [`Decoder::begin_object`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectHeader {
    /// The class definition: its fields are what follows, in order.
    pub class: Arc<ClassDef>,
    /// The object's index for references.
    pub ref_index: u32,
}

/// Where a referenceable value lies in the input.
#[derive(Clone, Copy)]
struct Slot {
    start: usize,
    /// `OPEN` until the value is finished.
    end: usize,
}

const OPEN: usize = usize::MAX;

/// Most elements preallocated for a list on the word of its header; longer
/// lists grow as their elements actually arrive.
pub(crate) const MAX_PREALLOC: usize = 4096;

/// Where to continue once a replayed value is finished.
#[derive(Clone, Copy)]
struct Return {
    pos: usize,
    replay: Option<u32>,
}

struct Frame {
    index: u32,
    /// Elements left in a fixed-length list or an object; `None` for
    /// `Z`-terminated lists and maps.
    remaining: Option<usize>,
    ret: Option<Return>,
}

enum Opened {
    List(ListHeader),
    Map(MapHeader),
    Object(ObjectHeader),
}

/// A Hessian 2.0 reader over a byte slice, with its per-stream tables.
///
/// One decoder corresponds to one Java `Hessian2Input`: class definitions,
/// type names and references carry over from one value to the next, so read
/// all values of a message (a Dubbo request body, say) with one decoder.
///
/// ```
/// use hessian2::{Decoder, Value};
/// let mut dec = Decoder::new(b"\x05hello\x7a\x91\xe2");
/// assert_eq!(dec.read_string().unwrap(), "hello");
/// assert_eq!(dec.read_value().unwrap(), Value::list([Value::Int(1), Value::Long(2)]));
/// assert!(dec.is_empty());
/// ```
pub struct Decoder<'a> {
    input: &'a [u8],
    pos: usize,
    opts: DecodeOptions,
    classes: Vec<Arc<ClassDef>>,
    types: Vec<Arc<str>>,
    refs: Vec<Slot>,
    frames: Vec<Frame>,
    /// While replaying: the reference index the next container gets.
    replay: Option<u32>,
    expanded: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder with default options.
    pub fn new(input: &'a [u8]) -> Self {
        Decoder::with_options(input, DecodeOptions::default())
    }

    /// A decoder with the given options.
    pub fn with_options(input: &'a [u8], opts: DecodeOptions) -> Self {
        Decoder {
            input,
            pos: 0,
            opts,
            classes: Vec::new(),
            types: Vec::new(),
            refs: Vec::new(),
            frames: Vec::new(),
            replay: None,
            expanded: 0,
        }
    }

    /// The options.
    pub fn options(&self) -> &DecodeOptions {
        &self.opts
    }

    /// Offset of the next byte to read.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The bytes not read yet.
    pub fn remaining(&self) -> &'a [u8] {
        self.input.get(self.pos..).unwrap_or_default()
    }

    /// Whether all input has been read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.input.len()
    }

    /// The class definitions read so far, by index.
    pub fn classes(&self) -> &[Arc<ClassDef>] {
        &self.classes
    }

    /// Forgets references (Java's `Hessian2Input.resetReferences()`).
    pub fn reset_references(&mut self) {
        self.refs.clear();
    }

    /// Forgets references, class definitions and type names: what follows is
    /// read as a new stream.
    pub fn reset(&mut self) {
        self.refs.clear();
        self.classes.clear();
        self.types.clear();
    }

    /// The kind of the next value, without consuming it (class definitions in
    /// front of it are read). Fails at the end of input and on a byte that
    /// starts no value, such as the `Z` that ends a list or map.
    pub fn peek_kind(&mut self) -> Result<ValueKind> {
        let t = self.next_tag()?;
        ValueKind::of(t).ok_or(DecodeError::UnexpectedTag {
            tag: t,
            offset: self.pos,
            expected: "a value",
        })
    }

    // ---- scalars -----------------------------------------------------------

    /// Reads `null`.
    pub fn read_null(&mut self) -> Result<()> {
        self.enter_item()?;
        match self.next_tag()? {
            b'N' => {
                self.pos += 1;
                Ok(())
            }
            t => Err(self.unexpected(t, "null")),
        }
    }

    /// Reads `null` if that comes next and returns true; otherwise reads
    /// nothing and returns false. For optional values.
    pub fn try_read_null(&mut self) -> Result<bool> {
        if self.next_tag()? == b'N' {
            self.enter_item()?;
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Reads a boolean.
    pub fn read_bool(&mut self) -> Result<bool> {
        self.enter_item()?;
        let v = match self.next_tag()? {
            b'T' => true,
            b'F' => false,
            t => return Err(self.unexpected(t, "a boolean")),
        };
        self.pos += 1;
        Ok(v)
    }

    /// Reads an int in any of its forms, or a long that fits in 32 bits.
    pub fn read_i32(&mut self) -> Result<i32> {
        self.enter_item()?;
        let t = self.next_tag()?;
        let at = self.pos;
        match ValueKind::of(t) {
            Some(ValueKind::Int) => self.int_form(),
            Some(ValueKind::Long) => {
                let v = self.long_form()?;
                i32::try_from(v).map_err(|_| DecodeError::OutOfRange {
                    value: v,
                    target: "i32",
                    offset: at,
                })
            }
            _ => Err(self.unexpected(t, "an int")),
        }
    }

    /// Reads a long or an int in any of their forms.
    pub fn read_i64(&mut self) -> Result<i64> {
        self.enter_item()?;
        self.integer("a long")
    }

    /// Reads a double in any of its forms, or an int or long as a double.
    pub fn read_f64(&mut self) -> Result<f64> {
        self.enter_item()?;
        if ValueKind::of(self.next_tag()?) == Some(ValueKind::Double) {
            return self.double_form();
        }
        self.integer("a double").map(|v| v as f64)
    }

    /// An int or a long in any of their forms, as a long; else the error
    /// that `expected` was.
    fn integer(&mut self, expected: &'static str) -> Result<i64> {
        let t = self.next_tag()?;
        match ValueKind::of(t) {
            Some(ValueKind::Int) => self.int_form().map(i64::from),
            Some(ValueKind::Long) => self.long_form(),
            _ => Err(self.unexpected(t, expected)),
        }
    }

    /// Reads a date as milliseconds since the epoch.
    pub fn read_date(&mut self) -> Result<i64> {
        self.enter_item()?;
        let t = self.next_tag()?;
        match ValueKind::of(t) {
            Some(ValueKind::Date) => self.date_form(),
            _ => Err(self.unexpected(t, "a date")),
        }
    }

    /// Reads a string.
    pub fn read_string(&mut self) -> Result<String> {
        let mut s = String::new();
        self.read_string_into(&mut s)?;
        Ok(s)
    }

    /// Reads a string into `out` (cleared first), reusing its allocation.
    pub fn read_string_into(&mut self, out: &mut String) -> Result<()> {
        self.enter_item()?;
        out.clear();
        self.string_form(out)
    }

    /// Reads a string, or `None` for `null`.
    pub fn read_opt_string(&mut self) -> Result<Option<String>> {
        if self.try_read_null()? {
            Ok(None)
        } else {
            self.read_string().map(Some)
        }
    }

    /// Whether the next value is the string `want` as
    /// [`Encoder::write_string`](crate::Encoder::write_string) (and Java)
    /// writes it, found by comparing bytes where they lie, no string made:
    /// then it is read, as [`read_str`](Self::read_str) would read it
    /// (`true`); else nothing is read (`false`). Only for a `want` that is
    /// ASCII (the same bytes in CESU-8) and one chunk long; false for any
    /// other.
    pub fn read_written_str(&mut self, want: &str) -> bool {
        let n = want.len();
        if !want.is_ascii() || n > crate::encode::STRING_CHUNK_UNITS {
            return false;
        }
        let (header, h) = tag::STRING_CHUNKS.final_header(n);
        let rest = self.remaining();
        let found = rest.get(..h) == Some(&header[..h])
            && rest.get(h..h + n) == Some(want.as_bytes())
            && self.enter_item().is_ok();
        if found {
            self.pos += h + n;
        }
        found
    }

    /// Reads a string, borrowing it from the input when it is one chunk of
    /// plain UTF-8 (no supplementary characters), which is the common case.
    pub fn read_str(&mut self) -> Result<Cow<'a, str>> {
        self.enter_item()?;
        let t = self.next_tag()?;
        let start = self.pos;
        let units = match t {
            0x00..=0x1f => Some((usize::from(t), 1)),
            0x30..=0x33 => Some((
                (usize::from(t - 0x30) << 8) | usize::from(self.peek_at(1)?),
                2,
            )),
            b'S' => Some((usize::from(self.be_u16_at(1)?), 3)),
            _ => None,
        };
        if let Some((units, header)) = units {
            let body = self.input.get(start + header..).unwrap_or_default();
            if let Ok(n) = utf::skip_units(body, units)
                && let Ok(s) = std::str::from_utf8(&body[..n])
            {
                self.pos = start + header + n;
                return Ok(Cow::Borrowed(s));
            }
        }
        let mut s = String::new();
        self.string_form(&mut s)?;
        Ok(Cow::Owned(s))
    }

    /// Reads a binary.
    pub fn read_binary(&mut self) -> Result<Vec<u8>> {
        self.enter_item()?;
        let mut out = Vec::new();
        self.binary_form(&mut out)?;
        Ok(out)
    }

    /// Reads a binary, borrowing it from the input when it is one chunk.
    pub fn read_bytes(&mut self) -> Result<Cow<'a, [u8]>> {
        self.enter_item()?;
        let t = self.next_tag()?;
        let start = self.pos;
        let single = match t {
            0x20..=0x2f => Some((usize::from(t - 0x20), 1)),
            0x34..=0x37 => Some((
                (usize::from(t - 0x34) << 8) | usize::from(self.peek_at(1)?),
                2,
            )),
            b'B' => Some((usize::from(self.be_u16_at(1)?), 3)),
            _ => None,
        };
        if let Some((len, header)) = single {
            self.pos = start + header;
            return Ok(Cow::Borrowed(self.take(len)?));
        }
        let mut out = Vec::new();
        self.binary_form(&mut out)?;
        Ok(Cow::Owned(out))
    }

    // ---- containers --------------------------------------------------------

    /// Starts reading a list (any of the six list forms). A reference to an
    /// earlier list is followed transparently. Read the elements while
    /// [`has_next`](Self::has_next), then call [`end`](Self::end).
    pub fn begin_list(&mut self) -> Result<ListHeader> {
        match self.begin_typed(ValueKind::List, "a list")? {
            Opened::List(h) => Ok(h),
            _ => Err(DecodeError::Misuse("internal: list expected")),
        }
    }

    /// Starts reading a map (typed or untyped). Read key and value while
    /// [`has_next`](Self::has_next), then call [`end`](Self::end).
    pub fn begin_map(&mut self) -> Result<MapHeader> {
        match self.begin_typed(ValueKind::Map, "a map")? {
            Opened::Map(h) => Ok(h),
            _ => Err(DecodeError::Misuse("internal: map expected")),
        }
    }

    /// Starts reading an object instance; class definitions in front of it
    /// are read along the way. Read one value per field of
    /// [`ObjectHeader::class`] (or fewer), then call [`end`](Self::end).
    pub fn begin_object(&mut self) -> Result<ObjectHeader> {
        match self.begin_typed(ValueKind::Object, "an object")? {
            Opened::Object(h) => Ok(h),
            _ => Err(DecodeError::Misuse("internal: object expected")),
        }
    }

    /// Whether the innermost open list, map or object has another element.
    pub fn has_next(&mut self) -> Result<bool> {
        match self.frames.last() {
            None => Err(DecodeError::Misuse(
                "has_next() with no open list, map or object",
            )),
            Some(Frame {
                remaining: Some(n), ..
            }) => Ok(*n > 0),
            Some(_) => Ok(self.next_tag()? != tag::END),
        }
    }

    /// Finishes the innermost open list, map or object, skipping elements
    /// the caller did not read.
    pub fn end(&mut self) -> Result<()> {
        if self.frames.is_empty() {
            return Err(DecodeError::Misuse(
                "end() with no open list, map or object",
            ));
        }
        while self.has_next()? {
            self.skip_value()?;
        }
        let Some(frame) = self.frames.pop() else {
            return Err(DecodeError::Misuse(
                "end() with no open list, map or object",
            ));
        };
        if frame.remaining.is_none() {
            // has_next() saw the end marker
            self.pos += 1;
        }
        if let Some(slot) = self.refs.get_mut(frame.index as usize)
            && slot.end == OPEN
        {
            slot.end = self.pos;
        }
        if let Some(ret) = frame.ret {
            self.pos = ret.pos;
            self.replay = ret.replay;
        }
        Ok(())
    }

    // ---- whole values ------------------------------------------------------

    /// Reads any value as a [`Value`] tree. References follow
    /// [`DecodeOptions::refs`].
    pub fn read_value(&mut self) -> Result<Value> {
        self.enter_item()?;
        let t = self.next_tag()?;
        match ValueKind::of(t) {
            Some(ValueKind::Null) => {
                self.pos += 1;
                Ok(Value::Null)
            }
            Some(ValueKind::Bool) => {
                self.pos += 1;
                Ok(Value::Bool(t == b'T'))
            }
            Some(ValueKind::Int) => self.int_form().map(Value::Int),
            Some(ValueKind::Long) => self.long_form().map(Value::Long),
            Some(ValueKind::Double) => self.double_form().map(Value::Double),
            Some(ValueKind::Date) => self.date_form().map(Value::Date),
            Some(ValueKind::String) => {
                let mut s = String::new();
                self.string_form(&mut s)?;
                Ok(Value::String(s))
            }
            Some(ValueKind::Binary) => {
                let mut b = Vec::new();
                self.binary_form(&mut b)?;
                Ok(Value::Binary(b))
            }
            Some(ValueKind::Ref) => {
                let (index, at) = self.ref_form()?;
                if self.opts.refs == RefMode::Keep || self.is_open(index) {
                    return Ok(Value::Ref(index));
                }
                let ret = self.start_replay(index, at)?;
                let t = self.peek()?;
                self.container_value(t, Some(ret))
            }
            Some(ValueKind::List | ValueKind::Map | ValueKind::Object) => {
                self.container_value(t, None)
            }
            None => Err(self.unexpected(t, "a value")),
        }
    }

    /// Reads a list as a [`List`] (elements as by [`read_value`](Self::read_value)).
    pub fn read_list(&mut self) -> Result<List> {
        match self.read_container(ValueKind::List, "a list")? {
            Value::List(l) => Ok(l),
            _ => Err(DecodeError::custom(
                "a reference to something other than a list",
            )),
        }
    }

    /// Reads a map as a [`Map`].
    pub fn read_map(&mut self) -> Result<Map> {
        match self.read_container(ValueKind::Map, "a map")? {
            Value::Map(m) => Ok(m),
            _ => Err(DecodeError::custom(
                "a reference to something other than a map",
            )),
        }
    }

    /// Reads an object instance as an [`Object`].
    pub fn read_object(&mut self) -> Result<Object> {
        match self.read_container(ValueKind::Object, "an object")? {
            Value::Object(o) => Ok(o),
            _ => Err(DecodeError::custom(
                "a reference to something other than an object",
            )),
        }
    }

    fn read_container(&mut self, kind: ValueKind, expected: &'static str) -> Result<Value> {
        let t = self.next_tag()?;
        let k = ValueKind::of(t);
        if k != Some(kind) && k != Some(ValueKind::Ref) {
            return Err(self.unexpected(t, expected));
        }
        let at = self.pos;
        match self.read_value()? {
            Value::Ref(index) => Err(DecodeError::CyclicReference { index, offset: at }),
            v => Ok(v),
        }
    }

    /// Reads and discards one value, keeping the stream's tables up to date
    /// (class definitions, type names and reference numbering).
    pub fn skip_value(&mut self) -> Result<()> {
        self.enter_item()?;
        let t = self.next_tag()?;
        match ValueKind::of(t) {
            Some(ValueKind::Null | ValueKind::Bool) => {
                self.pos += 1;
                Ok(())
            }
            Some(ValueKind::Int) => self.int_form().map(drop),
            Some(ValueKind::Long) => self.long_form().map(drop),
            Some(ValueKind::Double) => self.double_form().map(drop),
            Some(ValueKind::Date) => self.date_form().map(drop),
            Some(ValueKind::String) => self.skip_string(),
            Some(ValueKind::Binary) => self.skip_binary(),
            Some(ValueKind::Ref) => self.ref_form().map(drop),
            Some(ValueKind::List | ValueKind::Map | ValueKind::Object) => {
                self.open(t, None)?;
                while self.has_next()? {
                    self.skip_value()?;
                }
                self.end()
            }
            None => Err(self.unexpected(t, "a value")),
        }
    }

    // ---- internals: bytes --------------------------------------------------

    fn eof(&self) -> DecodeError {
        DecodeError::UnexpectedEof {
            offset: self.input.len(),
        }
    }

    /// [`unexpected`](Self::unexpected) for the tag just read, which is
    /// left unread.
    fn unread_unexpected(&mut self, tag: u8, expected: &'static str) -> DecodeError {
        self.pos -= 1;
        self.unexpected(tag, expected)
    }

    fn unexpected(&self, tag: u8, expected: &'static str) -> DecodeError {
        DecodeError::UnexpectedTag {
            tag,
            offset: self.pos,
            expected,
        }
    }

    fn peek(&self) -> Result<u8> {
        self.input.get(self.pos).copied().ok_or_else(|| self.eof())
    }

    fn peek_at(&self, ahead: usize) -> Result<u8> {
        self.input
            .get(self.pos + ahead)
            .copied()
            .ok_or_else(|| self.eof())
    }

    fn be_u16_at(&self, ahead: usize) -> Result<u16> {
        Ok(u16::from_be_bytes([
            self.peek_at(ahead)?,
            self.peek_at(ahead + 1)?,
        ]))
    }

    fn byte(&mut self) -> Result<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let input = self.input;
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= input.len())
            .ok_or_else(|| self.eof())?;
        let s = &input[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// A safe initial capacity for `len` elements: never more than the rest
    /// of the input could hold (one byte per element at least), nor more than
    /// [`MAX_PREALLOC`].
    pub(crate) fn prealloc(&self, len: Option<usize>) -> usize {
        len.unwrap_or(0).min(self.remaining_len()).min(MAX_PREALLOC)
    }

    fn remaining_len(&self) -> usize {
        self.input.len().saturating_sub(self.pos)
    }

    /// The next tag, after reading any class definitions in front of it.
    fn next_tag(&mut self) -> Result<u8> {
        loop {
            let t = self.peek()?;
            if t != tag::CLASS_DEF {
                return Ok(t);
            }
            self.class_def()?;
        }
    }

    /// Counts one element against the innermost fixed-length container.
    fn enter_item(&mut self) -> Result<()> {
        if let Some(Frame {
            remaining: Some(n), ..
        }) = self.frames.last_mut()
        {
            if *n == 0 {
                return Err(DecodeError::Misuse(
                    "read past the last element of a fixed-length list or object",
                ));
            }
            *n -= 1;
        }
        Ok(())
    }

    // ---- internals: scalar forms (the tag is known to match) ---------------

    fn int_form(&mut self) -> Result<i32> {
        let t = self.byte()?;
        if let Some(v) = self.compact_form(t, &INT_FORMS)? {
            return Ok(v as i32);
        }
        match t {
            b'I' => Ok(i32::from_be_bytes(self.array()?)),
            _ => Err(self.unread_unexpected(t, "an int")),
        }
    }

    fn long_form(&mut self) -> Result<i64> {
        let t = self.byte()?;
        if let Some(v) = self.compact_form(t, &LONG_FORMS)? {
            return Ok(v);
        }
        match t {
            tag::LONG_INT => Ok(i64::from(i32::from_be_bytes(self.array()?))),
            b'L' => Ok(i64::from_be_bytes(self.array()?)),
            _ => Err(self.unread_unexpected(t, "a long")),
        }
    }

    /// The value of the compact form of an int or a long that the tag `t`
    /// starts, or None when it starts none: `forms[n]` are the tags of the
    /// form followed by `n` more bytes, and the tag that stands for zero in
    /// it; the tag holds the high bits, the bytes the low ones, big-endian.
    #[inline]
    fn compact_form(&mut self, t: u8, forms: &CompactForms) -> Result<Option<i64>> {
        let [(one, one_zero), (two, two_zero), (three, three_zero)] = forms;
        Ok(Some(if one.contains(&t) {
            i64::from(t) - i64::from(*one_zero)
        } else if two.contains(&t) {
            ((i64::from(t) - i64::from(*two_zero)) << 8) | i64::from(self.byte()?)
        } else if three.contains(&t) {
            let [b1, b0] = self.array()?;
            ((i64::from(t) - i64::from(*three_zero)) << 16)
                | i64::from(u16::from_be_bytes([b1, b0]))
        } else {
            return Ok(None);
        }))
    }

    fn double_form(&mut self) -> Result<f64> {
        let t = self.byte()?;
        Ok(match t {
            tag::DOUBLE_ZERO => 0.0,
            tag::DOUBLE_ONE => 1.0,
            tag::DOUBLE_BYTE => f64::from(self.byte()? as i8),
            tag::DOUBLE_SHORT => f64::from(i16::from_be_bytes(self.array()?)),
            tag::DOUBLE_MILL => 0.001 * f64::from(i32::from_be_bytes(self.array()?)),
            b'D' => f64::from_bits(u64::from_be_bytes(self.array()?)),
            _ => return Err(self.unread_unexpected(t, "a double")),
        })
    }

    fn date_form(&mut self) -> Result<i64> {
        let t = self.byte()?;
        match t {
            tag::DATE => Ok(i64::from_be_bytes(self.array()?)),
            tag::DATE_MINUTE => Ok(i64::from(i32::from_be_bytes(self.array()?)) * 60_000),
            _ => Err(self.unread_unexpected(t, "a date")),
        }
    }

    /// A string's or a binary's chunk header: (length, is_final).
    #[inline]
    fn chunk_header(&mut self, forms: &tag::ChunkForms) -> Result<(usize, bool)> {
        let t = self.byte()?;
        let (direct, direct_max) = forms.direct;
        let (short, short_max) = forms.short;
        let (final_tag, chunk_tag) = forms.chunks;
        if t.wrapping_sub(direct) as usize <= direct_max {
            Ok((usize::from(t - direct), true))
        } else if t.wrapping_sub(short) as usize <= short_max >> 8 {
            Ok((
                (usize::from(t - short) << 8) | usize::from(self.byte()?),
                true,
            ))
        } else if t == final_tag || t == chunk_tag {
            Ok((
                usize::from(u16::from_be_bytes(self.array()?)),
                t == final_tag,
            ))
        } else {
            Err(self.unread_unexpected(t, forms.what))
        }
    }

    fn string_form(&mut self, out: &mut String) -> Result<()> {
        let mut dec = Cesu8Decoder::default();
        loop {
            let (units, last) = self.chunk_header(&tag::STRING_CHUNKS)?;
            out.reserve(units.min(self.remaining_len()));
            let start = self.pos;
            let body = self.input.get(start..).unwrap_or_default();
            match dec.chunk(body, units, out) {
                Ok(n) => self.pos = start + n,
                Err(ChunkError::Eof) => return Err(self.eof()),
                Err(ChunkError::Invalid(at)) => {
                    return Err(DecodeError::InvalidUtf8 { offset: start + at })
                }
            }
            if last {
                dec.finish(out);
                return Ok(());
            }
        }
    }

    fn skip_string(&mut self) -> Result<()> {
        loop {
            let (units, last) = self.chunk_header(&tag::STRING_CHUNKS)?;
            let start = self.pos;
            let body = self.input.get(start..).unwrap_or_default();
            match utf::skip_units(body, units) {
                Ok(n) => self.pos = start + n,
                Err(ChunkError::Eof) => return Err(self.eof()),
                Err(ChunkError::Invalid(at)) => {
                    return Err(DecodeError::InvalidUtf8 { offset: start + at })
                }
            }
            if last {
                return Ok(());
            }
        }
    }

    fn binary_form(&mut self, out: &mut Vec<u8>) -> Result<()> {
        loop {
            let (len, last) = self.chunk_header(&tag::BINARY_CHUNKS)?;
            out.extend_from_slice(self.take(len)?);
            if last {
                return Ok(());
            }
        }
    }

    fn skip_binary(&mut self) -> Result<()> {
        loop {
            let (len, last) = self.chunk_header(&tag::BINARY_CHUNKS)?;
            self.take(len)?;
            if last {
                return Ok(());
            }
        }
    }

    /// Reads `Q n`, checks n, returns it with the offset of the `Q`.
    fn ref_form(&mut self) -> Result<(u32, usize)> {
        let at = self.pos;
        self.pos += 1;
        let n = self.int_form()?;
        match u32::try_from(n) {
            Ok(i) if (i as usize) < self.refs.len() => Ok((i, at)),
            _ => Err(DecodeError::InvalidReference {
                index: n.into(),
                count: self.refs.len(),
                offset: at,
            }),
        }
    }

    /// A count or length that must be non-negative and, since every element
    /// takes at least one byte, no larger than the rest of the input.
    fn length(&mut self) -> Result<usize> {
        let at = self.pos;
        let n = self.int_form()?;
        match usize::try_from(n) {
            Ok(len) if len <= self.remaining_len() => Ok(len),
            _ => Err(DecodeError::InvalidLength {
                length: n.into(),
                offset: at,
            }),
        }
    }

    fn plain_string(&mut self) -> Result<String> {
        let mut s = String::new();
        self.string_form(&mut s)?;
        Ok(s)
    }

    /// `C name field-count field-name*`
    fn class_def(&mut self) -> Result<()> {
        self.pos += 1;
        let name = self.plain_string()?;
        let n = self.length()?;
        let mut fields = Vec::with_capacity(n.min(MAX_PREALLOC));
        for _ in 0..n {
            fields.push(self.plain_string()?);
        }
        // A replay re-reads definitions that were registered the first time.
        if self.replay.is_none() {
            self.classes.push(Arc::new(ClassDef { name, fields }));
        }
        Ok(())
    }

    /// A list or map type: a string (registered) or an int index.
    fn type_name(&mut self) -> Result<Arc<str>> {
        let t = self.peek()?;
        match ValueKind::of(t) {
            Some(ValueKind::String) => {
                let s: Arc<str> = self.plain_string()?.into();
                if self.replay.is_none() {
                    self.types.push(s.clone());
                }
                Ok(s)
            }
            Some(ValueKind::Int) => {
                let at = self.pos;
                let i = self.int_form()?;
                entry(&self.types, i, |index| DecodeError::UnknownType {
                    index,
                    offset: at,
                })
            }
            _ => Err(self.unexpected(t, "a type name or type reference")),
        }
    }

    // ---- internals: containers ---------------------------------------------

    fn is_open(&self, index: u32) -> bool {
        self.frames.iter().any(|f| f.index == index)
    }

    /// Moves to the start of finished value `index` to read it again.
    fn start_replay(&mut self, index: u32, at: usize) -> Result<Return> {
        let slot = self.refs[index as usize];
        if slot.end == OPEN {
            return Err(DecodeError::CyclicReference { index, offset: at });
        }
        self.expanded = self.expanded.saturating_add(slot.end - slot.start);
        if self.expanded > self.opts.max_ref_expansion {
            return Err(DecodeError::RefExpansionLimit {
                limit: self.opts.max_ref_expansion,
            });
        }
        let ret = Return {
            pos: self.pos,
            replay: self.replay,
        };
        self.pos = slot.start;
        self.replay = Some(index);
        Ok(ret)
    }

    /// Shared by `begin_list`/`begin_map`/`begin_object`: counts the element,
    /// follows a reference, checks the kind, opens the container.
    fn begin_typed(&mut self, kind: ValueKind, expected: &'static str) -> Result<Opened> {
        self.enter_item()?;
        let mut t = self.next_tag()?;
        let mut ret = None;
        if t == tag::REF {
            let (index, at) = self.ref_form()?;
            if self.is_open(index) {
                return Err(DecodeError::CyclicReference { index, offset: at });
            }
            ret = Some(self.start_replay(index, at)?);
            t = self.peek()?;
        }
        if ValueKind::of(t) != Some(kind) {
            return Err(self.unexpected(t, expected));
        }
        self.open(t, ret)
    }

    /// Reads a container's header at the current position (whose tag is
    /// known to be a list, map or object tag), assigns its reference index
    /// and pushes its frame.
    fn open(&mut self, t: u8, ret: Option<Return>) -> Result<Opened> {
        let start = self.pos;
        if self.frames.len() >= self.opts.max_depth {
            return Err(DecodeError::DepthLimit {
                limit: self.opts.max_depth,
                offset: start,
            });
        }
        self.pos += 1;
        let (opened_without_index, remaining) = match t {
            tag::LIST_VARIABLE => (Opened::List(list(Some(self.type_name()?), None)), None),
            tag::LIST_FIXED => {
                let ty = self.type_name()?;
                let len = self.length()?;
                (Opened::List(list(Some(ty), Some(len))), Some(len))
            }
            tag::LIST_VARIABLE_UNTYPED => (Opened::List(list(None, None)), None),
            tag::LIST_FIXED_UNTYPED => {
                let len = self.length()?;
                (Opened::List(list(None, Some(len))), Some(len))
            }
            0x70..=0x77 => {
                let len = usize::from(t - 0x70);
                let ty = self.type_name()?;
                (Opened::List(list(Some(ty), Some(len))), Some(len))
            }
            0x78..=0x7f => {
                let len = usize::from(t - 0x78);
                (Opened::List(list(None, Some(len))), Some(len))
            }
            b'M' => {
                let ty = Some(self.type_name()?);
                (Opened::Map(MapHeader { ty, ref_index: 0 }), None)
            }
            b'H' => (
                Opened::Map(MapHeader {
                    ty: None,
                    ref_index: 0,
                }),
                None,
            ),
            b'O' | 0x60..=0x6f => {
                let at = self.pos;
                let index = if t == b'O' {
                    self.int_form()?
                } else {
                    i32::from(t - 0x60)
                };
                let class = entry(&self.classes, index, |index| DecodeError::UnknownClass {
                    index,
                    offset: at,
                })?;
                let n = class.fields.len();
                (
                    Opened::Object(ObjectHeader {
                        class,
                        ref_index: 0,
                    }),
                    Some(n),
                )
            }
            _ => {
                self.pos = start;
                return Err(self.unexpected(t, "a list, map or object"));
            }
        };
        let index = match self.replay {
            Some(next) => {
                // A replay meets the same containers, in the same order, as
                // the first read of these bytes did.
                match self.refs.get(next as usize) {
                    Some(slot) if slot.start == start => {}
                    _ => {
                        return Err(DecodeError::Misuse(
                            "internal: reference replay out of step",
                        ))
                    }
                }
                self.replay = Some(next + 1);
                next
            }
            None => {
                let i = u32::try_from(self.refs.len())
                    .map_err(|_| DecodeError::Misuse("more than 2^32 references"))?;
                self.refs.push(Slot { start, end: OPEN });
                i
            }
        };
        self.frames.push(Frame {
            index,
            remaining,
            ret,
        });
        Ok(match opened_without_index {
            Opened::List(h) => Opened::List(ListHeader {
                ref_index: index,
                ..h
            }),
            Opened::Map(h) => Opened::Map(MapHeader {
                ref_index: index,
                ..h
            }),
            Opened::Object(h) => Opened::Object(ObjectHeader {
                ref_index: index,
                ..h
            }),
        })
    }

    fn container_value(&mut self, t: u8, ret: Option<Return>) -> Result<Value> {
        match self.open(t, ret)? {
            Opened::List(h) => {
                let mut items = Vec::with_capacity(self.prealloc(h.len));
                while self.has_next()? {
                    items.push(self.read_value()?);
                }
                self.end()?;
                Ok(Value::List(List {
                    ty: h.ty.map(|t| t.to_string()),
                    items,
                }))
            }
            Opened::Map(h) => {
                let mut entries = Vec::new();
                while self.has_next()? {
                    let k = self.read_value()?;
                    let v = self.read_value()?;
                    entries.push((k, v));
                }
                self.end()?;
                Ok(Value::Map(Map {
                    ty: h.ty.map(|t| t.to_string()),
                    entries,
                }))
            }
            Opened::Object(h) => {
                let mut values = Vec::with_capacity(self.prealloc(Some(h.class.fields.len())));
                while self.has_next()? {
                    values.push(self.read_value()?);
                }
                self.end()?;
                Ok(Value::Object(Object {
                    class: h.class,
                    values,
                }))
            }
        }
    }
}

fn list(ty: Option<Arc<str>>, len: Option<usize>) -> ListHeader {
    ListHeader {
        ty,
        len,
        ref_index: 0,
    }
}

impl std::fmt::Debug for Decoder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("pos", &self.pos)
            .field("len", &self.input.len())
            .field("classes", &self.classes.len())
            .field("types", &self.types.len())
            .field("refs", &self.refs.len())
            .field("depth", &self.frames.len())
            .finish_non_exhaustive()
    }
}
