//! Dubbo's serializations: how the values of a request or response body
//! are put on the wire.
//!
//! Dubbo writes every body through one `ObjectOutput` (and reads it through
//! one `ObjectInput`) of the channel's serialization, in the same order
//! whatever the serialization: five strings with `writeUTF`, the arguments
//! with `writeObject`, the attachments; a response type byte, the value or
//! the exception, the attachments. [`codec`](super::codec) writes that
//! order once, against the two traits here; each serialization implements
//! them in its own module, mirroring Dubbo's class of the same name:
//!
//! * [`hessian2`]: Hessian 2.0 (`Hessian2ObjectOutput`), Dubbo's default
//!   until 3.2;
//! * [`java`]: Java Object Serialization (`JavaObjectOutput`, which frames
//!   strings and objects with a length or a null flag, and
//!   `NativeJavaObjectOutput`, which does not), with the `javaser` crate;
//! * [`kryo`]: Kryo (`KryoObjectOutput`) in its two wire dialects, Kryo 4
//!   (Dubbo 2.6) and Kryo 5 (Dubbo 3's extension), chosen by the `kryo`
//!   option, with the `kryo` crate;
//! * [`fastjson2`]: fastjson2 JSONB (`FastJson2ObjectOutput`), the default
//!   of Dubbo 3.3, with the `fastjson2-jsonb` crate;
//! * [`fastjson`]: fastjson 1 text JSON (`FastJsonObjectOutput`, Dubbo 2.6);
//! * [`dubbo`]: Dubbo 2.5's own serialization (`GenericObjectOutput`, the
//!   URL's `serialization=dubbo`), with the `dubbo-serialization` crate.
//!
//! Adding a serialization: a module implementing [`Serialization`], a `pub
//! mod` line and one line in the `formats!` invocation below. Each is
//! checked against bytes written by Dubbo's own `ObjectOutput` (the codec
//! crates' golden vectors, and `tests/dubbo_golden.rs` for whole frames).
//!
//! The serialization is chosen once per protocol instance (the
//! `serialization` option). [`Format`] dispatches with one `match` per
//! body, so the codecs stay monomorphic and the hot path has no dynamic
//! dispatch.

pub mod dubbo;
pub mod fastjson;
pub mod fastjson2;
pub mod hessian2;
pub mod java;
pub mod kryo;

use super::codec::{Header, Method};
use crate::protocol::CallError;
use rpclab_model::contract::Value;
use std::collections::BTreeMap;

/// One of Dubbo's serializations.
pub trait Serialization: Sized + Send + Sync + 'static {
    /// The `serialization` option values this implementation answers to
    /// (one type may serve close variants, e.g. `java` and `nativejava`).
    const NAMES: &'static [&'static str];

    /// Options of the dubbo protocol that only this serialization reads.
    const OPTIONS: &'static [&'static str] = &[];

    type Output<'a>: ObjectOutput;
    type Input<'a>: ObjectInput;

    /// Builds the serialization called `name` (one of [`Self::NAMES`]).
    fn new(name: &str, options: &BTreeMap<String, String>) -> Result<Self, CallError>;

    /// Dubbo's id of this serialization (the low 5 bits of the header's
    /// flag byte).
    fn id(&self) -> u8;

    /// Starts writing a body at the end of `out`.
    fn output<'a>(&'a self, out: &'a mut Vec<u8>) -> Self::Output<'a>;

    /// Starts reading a body.
    fn input<'a>(&'a self, body: &'a [u8]) -> Result<Self::Input<'a>, CallError>;
}

/// Dubbo's `ObjectOutput`, for the values the contract puts in a body.
pub trait ObjectOutput {
    /// `writeUTF`: a request's protocol strings (version, path, method,
    /// parameter descriptor).
    fn write_utf(&mut self, s: &str) -> Result<(), CallError>;

    /// `writeObject` of an argument: a `String`, an `rpclab.contract.Order`
    /// or an `ArrayList` of them. Never called with [`Value::Unit`].
    fn write_argument(&mut self, argument: &Value) -> Result<(), CallError>;

    /// `writeObject(null)`: the data of a heartbeat.
    fn write_null(&mut self) -> Result<(), CallError>;

    /// `writeAttachments` / `writeObject` of a `HashMap<String, String>`.
    fn write_attachments(&mut self, attachments: &[(&str, &str)]) -> Result<(), CallError>;

    /// Flushes what is buffered into the output vector.
    fn finish(self) -> Result<(), CallError>;
}

/// Dubbo's `ObjectInput`, for the values a response body holds.
pub trait ObjectInput {
    /// `readByte`: the response type (`RESPONSE_VALUE`, ...).
    fn read_response_type(&mut self) -> Result<i32, CallError>;

    /// `readObject` of `method`'s return value. A `null` (or a void
    /// method's absent value) is [`Value::Unit`]: [`codec`](super::codec)
    /// decides whether the method may return it.
    fn read_value(&mut self, method: Method) -> Result<Value, CallError>;

    /// `readThrowable`: the exception a provider threw, as a server error
    /// with its class and message (and its causes'), or the reason it
    /// could not be read.
    fn read_exception(&mut self) -> CallError;

    /// Reads and drops the next object (the response's attachments, which
    /// the client does not use but which must be well-formed).
    fn skip_object(&mut self) -> Result<(), CallError>;

    /// `readUTF`: the error message of a response whose status is not OK
    /// (`None` for a null message).
    fn read_utf(&mut self) -> Result<Option<String>, CallError>;
}

/// Declares [`Format`], the serializations the client speaks, from
/// `Variant => path::Type` lines.
macro_rules! formats {
    ($($variant:ident => $ty:ty),+ $(,)?) => {
        /// A serialization chosen at run time.
        #[derive(Debug)]
        pub enum Format {
            $($variant($ty),)+
        }

        impl Format {
            /// Every `serialization` option value the client speaks.
            pub fn names() -> Vec<&'static str> {
                let mut names = Vec::new();
                $(names.extend_from_slice(<$ty as Serialization>::NAMES);)+
                names
            }

            /// Options of the serializations, for the protocol's check.
            pub fn options() -> Vec<&'static str> {
                let mut options = Vec::new();
                $(options.extend_from_slice(<$ty as Serialization>::OPTIONS);)+
                options
            }

            /// The serialization called `name`, or `None` if the client
            /// does not speak it.
            pub fn new(
                name: &str,
                options: &BTreeMap<String, String>,
            ) -> Option<Result<Format, CallError>> {
                $(
                    if <$ty as Serialization>::NAMES.contains(&name) {
                        return Some(<$ty as Serialization>::new(name, options).map(Format::$variant));
                    }
                )+
                None
            }

            /// Dubbo's id of the serialization.
            pub fn id(&self) -> u8 {
                match self {
                    $(Format::$variant(s) => s.id(),)+
                }
            }

            /// See [`codec::encode_request`](super::codec::encode_request).
            pub fn encode_request(
                &self,
                out: &mut Vec<u8>,
                id: u64,
                method: Method,
                argument: &Value,
            ) -> Result<(), CallError> {
                match self {
                    $(Format::$variant(s) => super::codec::encode_request(s, out, id, method, argument),)+
                }
            }

            /// See [`codec::decode_response`](super::codec::decode_response).
            pub fn decode_response(
                &self,
                header: &Header,
                body: &[u8],
                method: Method,
            ) -> Result<Value, CallError> {
                match self {
                    $(Format::$variant(s) => super::codec::decode_response(s, header, body, method),)+
                }
            }

            /// See [`codec::heartbeat_request`](super::codec::heartbeat_request).
            pub fn heartbeat_request(&self, id: u64) -> Result<Vec<u8>, CallError> {
                match self {
                    $(Format::$variant(s) => super::codec::heartbeat_request(s, id),)+
                }
            }

            /// See [`codec::heartbeat_response`](super::codec::heartbeat_response).
            pub fn heartbeat_response(&self, id: u64) -> Result<Vec<u8>, CallError> {
                match self {
                    $(Format::$variant(s) => super::codec::heartbeat_response(s, id),)+
                }
            }
        }
    };
}

formats! {
    Hessian2 => hessian2::Hessian2,
    Java => java::Java,
    Fastjson2 => fastjson2::Fastjson2,
    Fastjson => fastjson::Fastjson,
    Kryo => kryo::Kryo,
    Dubbo => dubbo::DubboSerialization,
}
