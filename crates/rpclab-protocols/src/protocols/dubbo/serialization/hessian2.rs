//! Hessian 2.0, as Dubbo's `Hessian2ObjectOutput` / `Hessian2ObjectInput`
//! write and read it (serialization id 2): every value, `writeUTF` and
//! `writeByte` included, is a Hessian value of one stream, so class
//! definitions are shared across a body's values.

use super::{stateless_serialization, ObjectInput, ObjectOutput, Serialization};
use crate::java_contract::hessian::{self as contract_hessian, malformed, HESSIAN_LITE_FIELDS};
use crate::java_contract::Method;
use crate::protocol::CallError;
use hessian2::{Decoder, EncodeError, Encoder};
use rpclab_model::contract::Value;

/// Dubbo's serialization id of hessian2.
pub const ID: u8 = 2;

/// The attachments Dubbo's providers (3.3 and 2.6) write after a value:
/// `{"dubbo": "2.0.2"}`, a `HashMap` as an untyped map.
pub const PROVIDER_ATTACHMENTS: &[u8] = b"H\x05dubbo\x052.0.2Z";

/// The hessian2 serialization.
#[derive(Debug, Default)]
pub struct Hessian2;

impl Serialization for Hessian2 {
    stateless_serialization!(names: ["hessian2"], id: ID);

    const STRINGS_IN_PLACE: bool = true;

    fn output<'a>(&'a self, out: &'a mut Vec<u8>) -> Output<'a> {
        Output(Encoder::new(out))
    }

    fn input<'a>(&'a self, body: &'a [u8]) -> Result<Input<'a>, CallError> {
        Ok(Input(Decoder::new(body)))
    }
}

pub struct Output<'a>(Encoder<&'a mut Vec<u8>>);

fn encoding(e: EncodeError) -> CallError {
    CallError::Protocol(format!("encoding the request: {e}"))
}

impl ObjectOutput for Output<'_> {
    fn write_utf(&mut self, s: &str) -> Result<(), CallError> {
        self.0.write_string(s);
        Ok(())
    }

    /// hessian-lite's forms: `Order`'s fields in its reversed order, an
    /// `ArrayList` as an untyped fixed-length list.
    fn write_argument(&mut self, argument: &Value) -> Result<(), CallError> {
        contract_hessian::write_argument(&mut self.0, argument, &HESSIAN_LITE_FIELDS)
            .map_err(encoding)
    }

    fn write_null(&mut self) -> Result<(), CallError> {
        self.0.write_null();
        Ok(())
    }

    /// An untyped map, as `Hessian2ObjectOutput.writeObject` of a `HashMap`.
    fn write_attachments(&mut self, attachments: &[(&str, &str)]) -> Result<(), CallError> {
        self.0.begin_map(None).map_err(encoding)?;
        for (key, value) in attachments {
            self.0.write_string(key);
            self.0.write_string(value);
        }
        self.0.end_map();
        Ok(())
    }

    fn finish(self) -> Result<(), CallError> {
        Ok(())
    }
}

pub struct Input<'a>(Decoder<'a>);

impl ObjectInput for Input<'_> {
    /// `Hessian2ObjectOutput.writeByte` writes an int.
    fn read_response_type(&mut self) -> Result<i32, CallError> {
        self.0.read_i32().map_err(malformed)
    }

    fn read_value(&mut self, method: Method) -> Result<Value, CallError> {
        contract_hessian::read_value(&mut self.0, method)
    }

    fn read_exception(&mut self) -> CallError {
        match self.0.read_value() {
            Ok(value) => CallError::Server(contract_hessian::exception_text(&value)),
            Err(e) => CallError::Server(format!(
                "the server threw an exception this client cannot decode: {e}"
            )),
        }
    }

    fn skip_object(&mut self) -> Result<(), CallError> {
        self.0.skip_value().map_err(malformed)
    }

    fn read_utf(&mut self) -> Result<Option<String>, CallError> {
        self.0.read_opt_string().map_err(malformed)
    }

    /// An ASCII `want` compared with the bytes where it lies, as Java
    /// writes it ([`Decoder::read_written_str`]), else read
    /// ([`Decoder::read_str`]: borrowed where it is one chunk) and
    /// compared. `None` for a `want` that is not ASCII.
    fn is_string(&mut self, want: &str) -> Option<bool> {
        if !want.is_ascii() {
            return None;
        }
        Some(self.0.read_written_str(want) || matches!(self.0.read_str(), Ok(got) if got == want))
    }

    fn at_provider_attachments(&self) -> bool {
        self.0.remaining() == PROVIDER_ATTACHMENTS
    }
}
