//! fastjson2's JSONB binary format (`com.alibaba.fastjson2.JSONB`), writer
//! and reader, byte-compatible with fastjson2 2.0.56 (the version Dubbo
//! 3.3.6 ships) on a little-endian JVM.
//!
//! Dubbo 3.2+ uses JSONB as its default `fastjson2` serialization (id 23);
//! the [`dubbo`] module adds Dubbo's framing (a 4-byte length before each
//! object) and documents the writer features Dubbo turns on. The crate's
//! tests check it against bytes written by Dubbo's own
//! `FastJson2ObjectOutput` and read its output back with Dubbo's
//! `FastJson2ObjectInput` (see the README for the golden vectors).
//!
//! * **Writing**: [`Writer`] writes values as fastjson2 does, choosing the
//!   same compact forms (integers in the type byte, Latin-1 / UTF-8 /
//!   UTF-16LE strings, integral doubles as longs), class names and field
//!   names through the per-document symbol table. A known POJO is written
//!   field by field, without a tree.
//! * **Reading**: [`Reader`] reads every form fastjson2 writes for the
//!   scalar, string, array, object, typed and reference types, borrowing
//!   strings from the input where it can, either field by field or into a
//!   [`Value`] tree. Dates, `BigInteger`/`BigDecimal` and GB18030 strings
//!   are reported as [`DecodeError::Unsupported`].
//!
//! ```
//! use fastjson2_jsonb::{Reader, Value, Writer};
//!
//! // what fastjson2 writes for `new Point(7, "p")` with WriteClassName
//! let mut w = Writer::new();
//! w.write_type_name("demo.Point");
//! w.start_object();
//! w.write_field_name("label");
//! w.write_str("p").unwrap();
//! w.write_field_name("x");
//! w.write_i32(7);
//! w.end_object();
//! let bytes = w.into_inner();
//!
//! let v = Reader::new(&bytes).read_value().unwrap();
//! assert_eq!(v.type_name(), Some("demo.Point"));
//! assert_eq!(v.get("x"), Some(&Value::Int(7)));
//! assert_eq!(v.get("label").and_then(Value::as_str), Some("p"));
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod bc;
pub mod dubbo;
mod error;
mod read;
mod value;
mod write;

pub use error::{DecodeError, EncodeError};
pub use read::{Reader, DEFAULT_MAX_DEPTH};
pub use value::Value;
pub use write::Writer;

/// Reads one whole JSONB document into a value tree.
pub fn from_bytes(bytes: &[u8]) -> Result<Value, DecodeError> {
    let mut r = Reader::new(bytes);
    let v = r.read_value()?;
    r.finish()?;
    Ok(v)
}

/// The README's example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// Writes a value tree as one JSONB document.
pub fn to_bytes(v: &Value) -> Result<Vec<u8>, EncodeError> {
    let mut w = Writer::new();
    w.write_value(v)?;
    Ok(w.into_inner())
}
