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
mod format;
mod read;
pub mod tag;
mod write;

pub use error::DecodeError;
pub use format::{
    class_descriptor, descriptor, descriptor_id, CONTENT_TYPE_ID, DESCRIPTORS, DESC_ARRAY_LIST,
    DESC_HASH_MAP, DESC_STRING, MAX_DEPTH,
};
pub use read::{Field, Reader, Value};
pub use write::Writer;
