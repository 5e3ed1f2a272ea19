//! The Kryo wire format as Apache Dubbo's `kryo` serialization puts it on
//! the wire, writer and reader, byte-compatible with both of Dubbo's kryo
//! lines: Dubbo 2.6 on Kryo 4.0.1 ([`Dialect::DUBBO_2_6`]) and
//! dubbo-serialization-kryo 3.2 on Kryo 5.4 ([`Dialect::DUBBO_3`]).
//!
//! Dubbo's `KryoObjectOutput` maps its `ObjectOutput` calls onto one Kryo
//! `Output`: `writeUTF` is [`Encoder::write_string`], `writeByte` one
//! byte, `writeInt`/`writeLong`/`writeDouble` fixed width,
//! `writeObject` is `kryo.writeClassAndObject` ([`Encoder::write_value`],
//! or the typed pieces: [`Encoder::write_string_object`],
//! [`Encoder::begin_object`] + fields, [`Encoder::begin_array_list`],
//! [`Encoder::write_string_map`]). The reading side mirrors it
//! ([`Decoder`]).
//!
//! What the two Kryo lines put differently on the wire, for the same calls:
//!
//! | | Kryo 4 (Dubbo 2.6) | Kryo 5 (Dubbo 3) |
//! | --- | --- | --- |
//! | fixed-width `int`/`long`/`double`/... | big-endian | little-endian |
//! | ASCII string short form | 2..=63 chars | 2..=32 chars |
//! | `HashMap` / `ArrayList` registration id | 33 / 34 | 32 / 33 |
//! | collection header | count, every element with its class | count + 1 with a "same class" flag; that class once |
//! | map header | count | count + 1 |
//! | `Throwable` | FieldSerializer | Java serialization (JavaSerializer) |
//!
//! The same in both: varints (zig-zag for `int`/`long` fields), UTF-16
//! units as 1-3 bytes in the long string form, classes as id + 2 or by name
//! (once per object graph), reference markers before every non-wrapper
//! object (references are on in both Dubbo lines), FieldSerializer fields
//! sorted by name, the class-name and reference tables reset after every
//! top-level object.
//!
//! Unregistered classes (such as a service's POJOs) are written by name and
//! their fields without tags, so reading them needs their field layout: a
//! [`Schema`].
//!
//! ```
//! use kryo::{Decoder, Dialect, Encoder, FieldType, Schema, Schemas, Value};
//!
//! let schemas = Schemas::new().with(Schema::new(
//!     "demo.Point",
//!     [("x", FieldType::Int), ("y", FieldType::Int), ("label", FieldType::String)],
//! ));
//! let point = Value::Object(Box::new(kryo::Object {
//!     class: "demo.Point".into(),
//!     fields: vec![
//!         ("label".into(), Value::string("origin")),
//!         ("x".into(), Value::Int(0)),
//!         ("y".into(), Value::Int(-1)),
//!     ],
//! }));
//! for dialect in [Dialect::DUBBO_2_6, Dialect::DUBBO_3] {
//!     let mut e = Encoder::new(dialect);
//!     e.write_value(&point, &schemas).unwrap();
//!     let bytes = e.finish();
//!     let back = Decoder::new(&bytes, dialect).read_value(&schemas).unwrap();
//!     assert_eq!(back, point);
//! }
//! ```
#![forbid(unsafe_code)]

mod decode;
mod dialect;
mod encode;
mod error;
mod exception;
pub mod java;
mod value;

pub use decode::{ClassRef, Collection, Decoder, Elements, Ref, DEFAULT_MAX_DEPTH, MAX_ALL_NULL};
pub use dialect::{ids, Dialect, Version};
pub use encode::{Class, Encoder, ListMode};
pub use error::{DecodeError, EncodeError};
pub use value::{FieldType, JavaException, Object, Schema, Schemas, Value};
