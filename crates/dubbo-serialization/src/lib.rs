//! Dubbo 2.5's own serialization, the one its URLs call `dubbo` (content
//! type id 1, `x-application/dubbo`): `GenericObjectOutput` /
//! `GenericObjectInput` in `com.alibaba.dubbo.common.serialize.support.dubbo`
//! and the `Builder` classes that lay objects out. It left Dubbo in 2.6; the
//! crate is byte-compatible with com.alibaba:dubbo 2.5.3 (the 2.5.x line
//! carried the same code until 2.5.10).
//!
//! # The format
//!
//! Every item starts with a tag byte ([`tag`]). Numbers (`byte`, `short`,
//! `int`, `long`, and `float`/`double` through their raw bits) are varints:
//! -15..=31 as a single constant tag, anything else as a tag saying how many
//! little-endian two's-complement bytes follow (1 to 8, the fewest that
//! sign-extend back). Strings (`writeUTF`) are `BYTES`, the number of UTF-16
//! units as an unsigned varint (7 bits a byte, the **last** byte marked with
//! the high bit), then each unit in one to three bytes (no 4-byte
//! sequences: surrogates are written one by one); `null` is `NULL`, `""` is
//! `DUMMY`. `writeObject` puts a class descriptor first (`DESC` and the JVM
//! descriptor as a string, or `DESC_ID` and an index into Builder's table
//! of 28 well-known classes, [`descriptor`]) and then what that class's
//! Builder writes: a `String` its string, an `ArrayList` `VALUES`, a count
//! and each element with `writeObject`, a `HashMap` `MAP`, a count and each
//! key and value, a boxed number `VALUE` and the number, a JavaBean
//! `OBJECT`, its field count as an int, and its non-static, non-transient
//! fields sorted by name, each written by the Builder of its declared type
//! (so an `int` field is a bare varint and a `String` field a bare string).
//! A bean equal (`equals`) to one already written in the same stream is
//! written as `REF` and its index instead. A `Throwable` is `STREAM`, a
//! length and Dubbo's compacted Java serialization of it.
//!
//! * **Writing**: [`Writer`] writes each of these forms as Dubbo does; a
//!   bean is written field by field by the caller, in Builder's order.
//! * **Reading**: [`Reader`] reads the primitive forms, and
//!   [`Reader::read_object`] reads what `writeObject` wrote into a
//!   [`Value`] tree, resolving references. A bean's fields are read by
//!   their tags, which the format allows for the types the contract uses
//!   (primitives, strings and objects); the classes whose Builder needs the
//!   Java definition (enums, arrays of beans, collection subclasses with
//!   fields) are reported as [`DecodeError::Unsupported`].
//!
//! ```
//! use dubbo_serialization::{descriptor, Reader, Value, Writer};
//!
//! // writeObject("hi") then writeObject(null)
//! let mut w = Writer::new();
//! w.write_string_object(Some("hi"));
//! w.write_null();
//! let bytes = w.into_inner();
//! assert_eq!(bytes, [0x8b, 0x90, 0x83, 0x82, b'h', b'i', 0x94]);
//!
//! let mut r = Reader::new(&bytes);
//! assert_eq!(r.read_object().unwrap(), Value::String("hi".into()));
//! assert_eq!(r.read_object().unwrap(), Value::Null);
//! assert!(r.is_at_end());
//! assert_eq!(descriptor(16), Some("Ljava/lang/String;"));
//! ```
#![forbid(unsafe_code)]

mod error;
mod read;
mod write;

pub use error::DecodeError;
pub use read::{Field, Reader, Value};
pub use write::Writer;

/// Dubbo's id of this serialization (`DubboSerialization.getContentTypeId`).
pub const CONTENT_TYPE_ID: u8 = 1;

/// How deep [`Reader::read_object`] follows nested values.
pub const MAX_DEPTH: usize = 64;

/// The tag bytes of `GenericDataFlags`.
pub mod tag {
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
}

/// Builder's table of well-known class descriptors, in the order of its
/// `addDesc` calls: `OBJECT_DESC_ID n` names `DESCRIPTORS[n]`.
pub const DESCRIPTORS: [&str; 28] = [
    "[Z",
    "[B",
    "[C",
    "[S",
    "[I",
    "[J",
    "[F",
    "[D",
    "Ljava/lang/Boolean;",
    "Ljava/lang/Byte;",
    "Ljava/lang/Character;",
    "Ljava/lang/Short;",
    "Ljava/lang/Integer;",
    "Ljava/lang/Long;",
    "Ljava/lang/Float;",
    "Ljava/lang/Double;",
    "Ljava/lang/String;",
    "[Ljava/lang/String;",
    "Ljava/util/ArrayList;",
    "Ljava/util/HashMap;",
    "Ljava/util/HashSet;",
    "Ljava/util/Date;",
    "Ljava/sql/Date;",
    "Ljava/sql/Time;",
    "Ljava/sql/Timestamp;",
    "Ljava/util/LinkedList;",
    "Ljava/util/LinkedHashMap;",
    "Ljava/util/LinkedHashSet;",
];

/// The index of `java.lang.String` in [`DESCRIPTORS`].
pub const DESC_STRING: u32 = 16;
/// The index of `java.util.ArrayList`.
pub const DESC_ARRAY_LIST: u32 = 18;
/// The index of `java.util.HashMap`.
pub const DESC_HASH_MAP: u32 = 19;

/// The descriptor with table index `id`, if there is one.
pub fn descriptor(id: u32) -> Option<&'static str> {
    DESCRIPTORS.get(id as usize).copied()
}

/// The table index of `desc`, if it is a well-known class.
pub fn descriptor_id(desc: &str) -> Option<u32> {
    DESCRIPTORS
        .iter()
        .position(|d| *d == desc)
        .map(|i| i as u32)
}

/// The JVM descriptor of a class name as `ReflectUtils.getDesc` writes it:
/// `rpclab.contract.Order` is `Lrpclab/contract/Order;`.
pub fn class_descriptor(class_name: &str) -> String {
    format!("L{};", class_name.replace('.', "/"))
}
