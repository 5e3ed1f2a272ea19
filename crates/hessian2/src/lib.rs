//! Hessian 2.0 serialization, byte-compatible with Java's implementations.
//!
//! [Hessian 2.0] is Caucho's compact, self-describing binary format for Java
//! object graphs. It is the default serialization of Apache Dubbo's `dubbo`
//! protocol and is used by Hessian-over-HTTP, Motan2 and SOFA bolt. Talking
//! to those Java services natively means writing exactly what Java's
//! `Hessian2Output` writes and reading everything a `Hessian2Input` accepts:
//! this crate does both, and its tests check it byte for byte against
//! Caucho's `com.caucho:hessian` and Dubbo's `hessian-lite` (see the
//! crate's README for the golden vectors).
//!
//! # Three ways in
//!
//! * **Typed**: [`ToHessian`] / [`FromHessian`] write and read Rust types
//!   directly, with [`hessian_object!`] for structs that stand for Java
//!   classes. No intermediate tree, no allocation beyond the values
//!   themselves: the path for RPC clients.
//! * **Dynamic**: [`Value`] holds anything a stream can carry, for proxies,
//!   tools and tests. [`Encoder::write_value`], [`Decoder::read_value`].
//! * **Streaming**: the [`Encoder`] and [`Decoder`] primitives
//!   (`write_int`, `begin_object`, `read_string`, `has_next`, ...) for
//!   protocol code that frames its own messages.
//!
//! ```
//! use hessian2::{hessian_object, Decoder, Encoder, Value};
//!
//! #[derive(Debug, Default, PartialEq)]
//! struct Order {
//!     order_id: i64,
//!     name: String,
//!     amount: f64,
//! }
//!
//! hessian_object!(Order, "rpclab.Order", {
//!     order_id => "orderId",
//!     name => "name",
//!     amount => "amount",
//! });
//!
//! // Write two orders as one stream: the class definition goes once.
//! let mut enc = Encoder::new(Vec::new());
//! let a = Order { order_id: 1, name: "a".into(), amount: 12.25 };
//! let b = Order { order_id: 2, name: "b".into(), amount: 0.5 };
//! enc.write(&a).unwrap();
//! enc.write(&b).unwrap();
//! let bytes = enc.into_inner();
//!
//! // Read them back typed ...
//! let mut dec = Decoder::new(&bytes);
//! assert_eq!(dec.read::<Order>().unwrap(), a);
//! assert_eq!(dec.read::<Order>().unwrap(), b);
//!
//! // ... or as dynamic values.
//! let mut dec = Decoder::new(&bytes);
//! let first = dec.read_value().unwrap();
//! let obj = first.as_object().unwrap();
//! assert_eq!(obj.class_name(), "rpclab.Order");
//! assert_eq!(obj.get("amount"), Some(&Value::Double(12.25)));
//! ```
//!
//! # Java semantics in brief
//!
//! * Strings are Java strings: lengths count UTF-16 units and supplementary
//!   characters travel as surrogate pairs, each as a 3-byte sequence. The
//!   decoder also accepts standard 4-byte UTF-8 from non-Java writers, and
//!   turns unpaired surrogates (legal in Java, impossible in a Rust `String`)
//!   into U+FFFD.
//! * Lists, maps and objects can be shared or cyclic; see [`value`] for how
//!   references are represented and [`decode`] for how they are resolved.
//! * A stream has state: class definitions, type names and references carry
//!   over from value to value, so one [`Encoder`] / [`Decoder`] corresponds
//!   to one Java `Hessian2Output` / `Hessian2Input`.
//!
//! [Hessian 2.0]: http://hessian.caucho.com/doc/hessian-serialization.html

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod decode;
pub mod encode;
mod error;
mod macros;
pub mod tag;
mod traits;
mod utf;
pub mod value;

pub use bytes;
pub use decode::{DecodeOptions, Decoder, ListHeader, MapHeader, ObjectHeader, RefMode, ValueKind};
pub use encode::Encoder;
pub use error::{DecodeError, EncodeError};
pub use traits::{FromHessian, ToHessian};
pub use value::{ClassDef, List, Map, Object, Value};

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// Encodes one value as a complete Hessian stream.
pub fn to_vec<T: ToHessian + ?Sized>(value: &T) -> Result<Vec<u8>, EncodeError> {
    let mut enc = Encoder::new(Vec::new());
    value.encode(&mut enc)?;
    Ok(enc.into_inner())
}

/// Decodes one value that must span all of `bytes`.
pub fn from_slice<T: FromHessian>(bytes: &[u8]) -> Result<T, DecodeError> {
    let mut dec = Decoder::new(bytes);
    let v = T::decode(&mut dec)?;
    if !dec.is_empty() {
        return Err(DecodeError::TrailingBytes {
            offset: dec.position(),
        });
    }
    Ok(v)
}
