//! Dubbo's serializations: how the values of a request or response body
//! are put on the wire.
//!
//! Dubbo writes every body through one `ObjectOutput` (and reads it through
//! one `ObjectInput`) of the channel's serialization, in the same order
//! whatever the serialization: five strings with `writeUTF`, the arguments
//! with `writeObject`, the attachments; a response type byte, the value or
//! the exception, the attachments. The `codec` module writes that
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
//! mod` line here and one line in the `formats!` invocation of the `format`
//! module, which builds the run-time choice over codec and serializations
//! (so this module needs nothing of the codec, which builds on it). Each is
//! checked against bytes written by Dubbo's own `ObjectOutput` (the codec
//! crates' golden vectors, and `client/tests/integration/dubbo_golden.rs` for whole frames).
//!
//! The serialization is chosen once per protocol instance (the
//! `serialization` option). `format::Format` dispatches with one `match`
//! per body, so the codecs stay monomorphic and the hot path has no
//! dynamic dispatch.

pub mod dubbo;
pub mod fastjson;
pub mod fastjson2;
pub mod hessian2;
pub mod java;
pub mod kryo;

use crate::java_contract::Method;
use crate::protocol::CallError;
use rpclab_model::contract::Value;
use std::collections::BTreeMap;

/// The [`Serialization`] items of a serialization that has no options
/// and no state: a unit struct with one id, whose module names its own
/// `Output` and `Input`. Written once here so that each such module keeps
/// only what is its own (how it starts writing and reading a body).
macro_rules! stateless_serialization {
    (names: [$($name:literal),+], id: $id:expr) => {
        const NAMES: &'static [&'static str] = &[$($name),+];
        type Output<'a> = Output<'a>;
        type Input<'a> = Input<'a>;

        fn new(
            _: &str,
            _: &std::collections::BTreeMap<String, String>,
        ) -> Result<Self, crate::protocol::CallError> {
            Ok(Self)
        }

        fn id(&self) -> u8 {
            $id
        }
    };
}
pub(crate) use stateless_serialization;

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

    /// Whether its [`ObjectInput::is_string`] can tell a string where it
    /// lies (else a reply is decoded without trying).
    const STRINGS_IN_PLACE: bool = false;
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
    /// method's absent value) is [`Value::Unit`]: the codec decides
    /// whether the method may return it.
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

    /// Whether the next value is without a doubt the string `want`, read
    /// where it lies without making a `String`: `Some(true)` only where
    /// [`ObjectInput::read_value`] of a string-returning method would read
    /// exactly `want`, leaving the input where it would. `None` where the
    /// serialization cannot tell (see [`Serialization::STRINGS_IN_PLACE`]).
    fn is_string(&mut self, want: &str) -> Option<bool> {
        let _ = want;
        None
    }

    /// Whether what is left of the body is the attachments Dubbo's
    /// providers write (`{"dubbo": "2.0.2"}`, byte for byte as they write
    /// them), compared where they lie, the input not moved: true only
    /// where [`ObjectInput::skip_object`] would skip them well. False
    /// where the serialization cannot tell (they are then skipped).
    fn at_provider_attachments(&self) -> bool {
        false
    }
}

/// `Cases.typical()` of the codec crates' golden projects, the Order of
/// their `order` vectors, which the serializations' tests write again.
#[cfg(test)]
fn typical_order() -> rpclab_model::contract::Order {
    rpclab_model::contract::Order {
        order_id: 1234567890123,
        phone: "13800138000".into(),
        name: "rpclab".into(),
        order_num: "ORD-2026-0001".into(),
        order_date: 20261129,
        ticket_type: 2,
        amount: 99.5,
        order_status: 1,
    }
}
