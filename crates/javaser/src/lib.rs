//! The Java Object Serialization stream protocol
//! (`java.io.ObjectOutputStream` / `ObjectInputStream`), writer and reader,
//! byte-compatible with the JDK.
//!
//! Used by Dubbo's `java` / `nativejava` serializations and by Java RMI.
//! The crate's tests check it against streams written by JDK 17 (see the
//! README for the golden vectors).
//!
//! * **Writing**: [`Encoder`] writes what `ObjectOutputStream` writes:
//!   block data for primitives (`write_int`, `write_utf`, ...), strings,
//!   class descriptors (shared by handle), objects with their class data,
//!   arrays, and JDK classes ([`java`]: boxed primitives, `ArrayList`,
//!   `HashMap`, arrays). A known POJO is written directly, without a tree.
//! * **Reading**: [`Decoder`] reads any stream into [`Value`]s (objects
//!   with descriptors and field values, `writeObject` data kept as raw
//!   annotations), plus `readInt`-style primitive reads through block data.
//!
//! ```
//! use javaser::{ClassDesc, Decoder, Encoder, FieldDesc, Value, SC_SERIALIZABLE};
//!
//! // class Point implements Serializable { int x; String label; }
//! let desc = ClassDesc::new(
//!     "demo.Point",
//!     1,
//!     SC_SERIALIZABLE,
//!     vec![FieldDesc::object("label", "Ljava/lang/String;"), FieldDesc::prim(b'I', "x")],
//! );
//! let mut enc = Encoder::new();
//! enc.write_int(7); // out.writeInt(7): block data
//! enc.begin_object(&desc).unwrap(); // out.writeObject(point)
//! enc.write_int(42); // fields in descriptor order: x, then label
//! enc.write_string("p");
//! enc.end_object().unwrap();
//! let bytes = enc.finish();
//!
//! let mut dec = Decoder::new(&bytes).unwrap();
//! assert_eq!(dec.read_int().unwrap(), 7);
//! let v = dec.read_object().unwrap();
//! let point = v.as_object().unwrap();
//! assert_eq!(point.desc.name, "demo.Point");
//! assert_eq!(point.get("x"), Some(&Value::Int(42)));
//! assert_eq!(point.get("label").and_then(Value::as_str), Some("p"));
//! assert!(dec.is_at_end());
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod decode;
mod encode;
mod error;
pub mod java;
mod macros;
pub mod mutf8;
pub mod tc;
mod typed;
mod value;

pub use decode::{Decoder, DEFAULT_MAX_DEPTH};
pub use encode::Encoder;
pub use error::{DecodeError, EncodeError};
pub use tc::{SC_BLOCK_DATA, SC_ENUM, SC_EXTERNALIZABLE, SC_SERIALIZABLE, SC_WRITE_METHOD};
pub use typed::{FromJava, JavaField, ToJava};
pub use value::{Array, ClassData, ClassDesc, Content, Enum, FieldDesc, Object, Value};

/// Decodes a whole stream into its top-level contents.
pub fn from_bytes(bytes: &[u8]) -> Result<Vec<Content>, DecodeError> {
    Decoder::new(bytes)?.read_all()
}

/// The README's example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
