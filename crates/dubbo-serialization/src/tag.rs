//! The tag bytes of `GenericDataFlags`.

/// A varint of 1 to 8 bytes is `VARINT + (n - 1)`.
pub const VARINT: u8 = 0;
/// 8 little-endian bytes follow.
pub const VARINT64: u8 = 7;
/// The constant -15; the constants -15..=31 follow consecutively.
pub const VARINT_NF: u8 = 10;
/// The constant 0.
pub const VARINT_0: u8 = 25;
/// The constant 1 (also `true`).
pub const VARINT_1: u8 = 26;
/// The constant -1 (a null `Boolean`).
pub const VARINT_N1: u8 = 24;
/// The constant 31, the last one.
pub const VARINT_1F: u8 = 56;
/// A bean: its field count and its fields.
pub const OBJECT: u8 = 0x80;
/// A back-reference: an unsigned varint index.
pub const OBJECT_REF: u8 = 0x81;
/// Java serialization bytes (a `Throwable`): length and bytes.
pub const OBJECT_STREAM: u8 = 0x82;
/// A string or byte array: length and bytes.
pub const OBJECT_BYTES: u8 = 0x83;
/// A boxed primitive: the primitive follows.
pub const OBJECT_VALUE: u8 = 0x84;
/// A collection: count and elements.
pub const OBJECT_VALUES: u8 = 0x85;
/// A map: count and key/value pairs.
pub const OBJECT_MAP: u8 = 0x86;
/// A class descriptor as a string follows.
pub const OBJECT_DESC: u8 = 0x8a;
/// A class descriptor as an index into Builder's table follows.
pub const OBJECT_DESC_ID: u8 = 0x8b;
/// `null`.
pub const OBJECT_NULL: u8 = 0x94;
/// An empty string or byte array, or a `new Object()`.
pub const OBJECT_DUMMY: u8 = 0x95;
