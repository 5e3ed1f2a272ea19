//! The Hessian 2.0 byte codes.
//!
//! Hessian spends most of the 256 first-byte values on compact forms: small
//! ints, longs, strings, binaries, lists and object instances carry their
//! value or length in the tag byte itself. These constants name the first
//! byte of each form and the ranges' bounds, for code that frames or sniffs
//! Hessian payloads (for example a protocol that must tell a null from a
//! value). Names follow Caucho's `Hessian2Constants`.

/// Null (`N`).
pub const NULL: u8 = b'N';
/// Boolean true (`T`).
pub const TRUE: u8 = b'T';
/// Boolean false (`F`).
pub const FALSE: u8 = b'F';

/// 32-bit int (`I` + 4 bytes big-endian).
pub const INT: u8 = b'I';
/// One-byte int: `INT_ZERO + v` for v in `INT_DIRECT_MIN..=INT_DIRECT_MAX` (0x80-0xbf).
pub const INT_ZERO: u8 = 0x90;
/// Smallest one-byte int.
pub const INT_DIRECT_MIN: i32 = -0x10;
/// Largest one-byte int.
pub const INT_DIRECT_MAX: i32 = 0x2f;
/// Two-byte int: `INT_BYTE_ZERO + (v >> 8)`, `v as u8` (0xc0-0xcf).
pub const INT_BYTE_ZERO: u8 = 0xc8;
/// Smallest two-byte int.
pub const INT_BYTE_MIN: i32 = -0x800;
/// Largest two-byte int.
pub const INT_BYTE_MAX: i32 = 0x7ff;
/// Three-byte int: `INT_SHORT_ZERO + (v >> 16)`, then 2 bytes (0xd0-0xd7).
pub const INT_SHORT_ZERO: u8 = 0xd4;
/// Smallest three-byte int.
pub const INT_SHORT_MIN: i32 = -0x40000;
/// Largest three-byte int.
pub const INT_SHORT_MAX: i32 = 0x3ffff;

/// 64-bit long (`L` + 8 bytes).
pub const LONG: u8 = b'L';
/// One-byte long: `LONG_ZERO + v` for v in -8..=15 (0xd8-0xef).
pub const LONG_ZERO: u8 = 0xe0;
/// Smallest one-byte long.
pub const LONG_DIRECT_MIN: i64 = -0x08;
/// Largest one-byte long.
pub const LONG_DIRECT_MAX: i64 = 0x0f;
/// Two-byte long: `LONG_BYTE_ZERO + (v >> 8)`, `v as u8` (0xf0-0xff).
pub const LONG_BYTE_ZERO: u8 = 0xf8;
/// Smallest two-byte long.
pub const LONG_BYTE_MIN: i64 = -0x800;
/// Largest two-byte long.
pub const LONG_BYTE_MAX: i64 = 0x7ff;
/// Three-byte long: `LONG_SHORT_ZERO + (v >> 16)`, then 2 bytes (0x38-0x3f).
pub const LONG_SHORT_ZERO: u8 = 0x3c;
/// Smallest three-byte long.
pub const LONG_SHORT_MIN: i64 = -0x40000;
/// Largest three-byte long.
pub const LONG_SHORT_MAX: i64 = 0x3ffff;
/// Long stored as a 32-bit int (`Y`, 0x59).
pub const LONG_INT: u8 = 0x59;

/// 64-bit IEEE double (`D`).
pub const DOUBLE: u8 = b'D';
/// Double 0.0 (0x5b).
pub const DOUBLE_ZERO: u8 = 0x5b;
/// Double 1.0 (0x5c).
pub const DOUBLE_ONE: u8 = 0x5c;
/// Double holding a signed byte (0x5d).
pub const DOUBLE_BYTE: u8 = 0x5d;
/// Double holding a signed 16-bit int (0x5e).
pub const DOUBLE_SHORT: u8 = 0x5e;
/// Double as a 32-bit int of thousandths: `0.001 * mills` (0x5f). The spec
/// text calls it "double represented as float"; every Java implementation
/// writes and reads the thousandths form.
pub const DOUBLE_MILL: u8 = 0x5f;

/// Date as 64-bit milliseconds since the epoch (0x4a).
pub const DATE: u8 = 0x4a;
/// Date as 32-bit minutes since the epoch (0x4b).
pub const DATE_MINUTE: u8 = 0x4b;

/// Final string chunk (`S` + u16 length in UTF-16 units).
pub const STRING_FINAL: u8 = b'S';
/// Non-final string chunk (`R` + u16 length).
pub const STRING_CHUNK: u8 = b'R';
/// Compact string: `STRING_DIRECT + len` for len 0..=31 (0x00-0x1f).
pub const STRING_DIRECT: u8 = 0x00;
/// Longest compact string.
pub const STRING_DIRECT_MAX: usize = 0x1f;
/// Medium string: `STRING_SHORT + (len >> 8)`, `len as u8` (0x30-0x33).
pub const STRING_SHORT: u8 = 0x30;
/// Longest medium string.
pub const STRING_SHORT_MAX: usize = 0x3ff;

/// Final binary chunk (`B` + u16 length).
pub const BINARY_FINAL: u8 = b'B';
/// Non-final binary chunk (`A` + u16 length).
pub const BINARY_CHUNK: u8 = b'A';
/// Compact binary: `BINARY_DIRECT + len` for len 0..=15 (0x20-0x2f).
pub const BINARY_DIRECT: u8 = 0x20;
/// Longest compact binary.
pub const BINARY_DIRECT_MAX: usize = 0x0f;
/// Medium binary: `BINARY_SHORT + (len >> 8)`, `len as u8` (0x34-0x37).
pub const BINARY_SHORT: u8 = 0x34;
/// Longest medium binary.
pub const BINARY_SHORT_MAX: usize = 0x3ff;

/// Typed variable-length list (0x55), ended by [`END`].
pub const LIST_VARIABLE: u8 = 0x55;
/// Typed fixed-length list (`V`).
pub const LIST_FIXED: u8 = b'V';
/// Untyped variable-length list (0x57), ended by [`END`].
pub const LIST_VARIABLE_UNTYPED: u8 = 0x57;
/// Untyped fixed-length list (`X`, 0x58).
pub const LIST_FIXED_UNTYPED: u8 = 0x58;
/// Typed list with its length in the tag: `LIST_DIRECT + len`, len 0..=7 (0x70-0x77).
pub const LIST_DIRECT: u8 = 0x70;
/// Untyped list with its length in the tag: `LIST_DIRECT_UNTYPED + len` (0x78-0x7f).
pub const LIST_DIRECT_UNTYPED: u8 = 0x78;
/// Longest list with its length in the tag.
pub const LIST_DIRECT_MAX: usize = 0x07;

/// Typed map (`M`), ended by [`END`].
pub const MAP: u8 = b'M';
/// Untyped map (`H`), ended by [`END`].
pub const MAP_UNTYPED: u8 = b'H';
/// End of a variable-length list or of a map (`Z`).
pub const END: u8 = b'Z';

/// Class definition (`C` + name + field count + field names).
pub const CLASS_DEF: u8 = b'C';
/// Object instance (`O` + class definition index as an int).
pub const OBJECT: u8 = b'O';
/// Object instance of class definition `tag - OBJECT_DIRECT` (0x60-0x6f).
pub const OBJECT_DIRECT: u8 = 0x60;
/// Largest class index with a one-byte instance tag.
pub const OBJECT_DIRECT_MAX: u32 = 0x0f;

/// Reference to an earlier list, map or object (`Q`, 0x51, + int).
pub const REF: u8 = 0x51;

/// The header forms of a string's or a binary's chunks, for the encoder
/// and the decoder: `direct`, the tag of length 0 held in the tag and the
/// longest such length; `short`, the first of the four tags that hold a
/// length's high bits before one more byte, and the longest such length;
/// `chunks`, the tags of the final and of a non-final chunk, each followed
/// by a u16 length; `what`, what a reader expected where none of them is.
pub(crate) struct ChunkForms {
    pub(crate) direct: (u8, usize),
    pub(crate) short: (u8, usize),
    pub(crate) chunks: (u8, u8),
    pub(crate) what: &'static str,
}

impl ChunkForms {
    /// The header of a final chunk of `len` units in its shortest form
    /// (the length in the tag, in the tag and one byte, or after the final
    /// chunk's tag as a u16; `len` is at most a chunk's length): its bytes
    /// and how many of them there are.
    pub(crate) fn final_header(&self, len: usize) -> ([u8; 3], usize) {
        let (direct, direct_max) = self.direct;
        let (short, short_max) = self.short;
        if len <= direct_max {
            ([direct + len as u8, 0, 0], 1)
        } else if len <= short_max {
            ([short + (len >> 8) as u8, len as u8, 0], 2)
        } else {
            let [high, low] = (len as u16).to_be_bytes();
            ([self.chunks.0, high, low], 3)
        }
    }
}

pub(crate) const STRING_CHUNKS: ChunkForms = ChunkForms {
    direct: (STRING_DIRECT, STRING_DIRECT_MAX),
    short: (STRING_SHORT, STRING_SHORT_MAX),
    chunks: (STRING_FINAL, STRING_CHUNK),
    what: "a string",
};

pub(crate) const BINARY_CHUNKS: ChunkForms = ChunkForms {
    direct: (BINARY_DIRECT, BINARY_DIRECT_MAX),
    short: (BINARY_SHORT, BINARY_SHORT_MAX),
    chunks: (BINARY_FINAL, BINARY_CHUNK),
    what: "a binary",
};
