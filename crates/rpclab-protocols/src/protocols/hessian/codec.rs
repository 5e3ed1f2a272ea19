//! The Hessian 2.0 RPC envelope (Caucho's "Hessian 2.0 Web Service
//! Protocol"), as `HessianProxy` writes calls and `HessianSkeleton` writes
//! replies. Pure functions over byte slices, no I/O.
//!
//! ```text
//! call   'H' 0x02 0x00  'C' method:string  argc:int  arg*
//! reply  'H' 0x02 0x00  'R' value
//! fault  'H' 0x02 0x00  'F' map{"code", "message", "detail"?}
//! ```
//!
//! Each message is one Hessian stream (one `Hessian2Output`), so class
//! definitions are shared across its values. The method name is the Java
//! method's plain name: Caucho's proxy mangles names (`echoString__1`) only
//! with `overloadEnabled`, which nothing here uses, and the skeleton accepts
//! both. Values use the same Java types as Dubbo's hessian2 bodies:
//! `rpclab.contract.Order` with its fields in declaration order (Caucho's
//! order), an `ArrayList` as an untyped fixed-length list.

pub use crate::java_contract::Method;
use crate::java_contract::{hessian as contract_hessian, ORDER_FIELDS};
use crate::protocol::CallError;
use hessian2::{Decoder, Encoder, Value as HValue};
use rpclab_model::contract::Value;

/// What `HessianProxy` sends as `Content-Type`.
pub const CONTENT_TYPE: &str = "x-application/hessian";

/// The version header of every Hessian 2 call and reply.
pub const VERSION: [u8; 3] = [b'H', 0x02, 0x00];
pub const CALL: u8 = b'C';
pub const REPLY: u8 = b'R';
pub const FAULT: u8 = b'F';

/// A good first capacity for a call carrying `argument`, so that encoding
/// does not reallocate.
pub fn call_capacity(argument: &Value) -> usize {
    const FIXED: usize = 32; // version, 'C', method, argc
    FIXED + crate::java_contract::hessian::value_capacity(argument)
}

/// Encodes a call of `method` with `argument` into `out` (cleared first).
pub fn encode_call(out: &mut Vec<u8>, method: Method, argument: &Value) -> Result<(), CallError> {
    out.clear();
    out.extend_from_slice(&VERSION);
    out.push(CALL);
    let mut enc = Encoder::new(&mut *out);
    enc.write_string(method.name());
    // Caucho's serializer writes `Order`'s fields in declaration order.
    enc.write_int(i32::from(!matches!(argument, Value::Unit)));
    let encoded = match argument {
        Value::Unit => Ok(()),
        argument => contract_hessian::write_argument(&mut enc, argument, &ORDER_FIELDS),
    };
    encoded.map_err(|e| CallError::Protocol(format!("encoding the hessian call: {e}")))
}

/// Decodes the reply to a call of `method`: its value, or the fault as a
/// [`CallError::Server`] naming the fault code and message.
pub fn decode_reply(body: &[u8], method: Method) -> Result<Value, CallError> {
    let rest = body.strip_prefix(&VERSION[..]).ok_or_else(|| {
        let shown = &body[..body.len().min(16)];
        CallError::Protocol(format!(
            "not a Hessian 2 reply (expected 'H' 2 0, got {shown:02x?}); a Hessian 1 server \
             or not a Hessian endpoint at all"
        ))
    })?;
    let (&kind, rest) = rest
        .split_first()
        .ok_or_else(|| CallError::Protocol("empty hessian reply after the version".into()))?;
    let mut dec = Decoder::new(rest);
    match kind {
        REPLY => {
            let value = method.returned(contract_hessian::read_value(&mut dec, method)?)?;
            if !dec.is_empty() {
                return Err(CallError::Protocol(format!(
                    "{} bytes after the hessian reply's value",
                    dec.remaining().len()
                )));
            }
            Ok(value)
        }
        FAULT => Err(read_fault(&mut dec)),
        other => Err(CallError::Protocol(format!(
            "unknown hessian reply kind 0x{other:02x} (expected 'R' or 'F')"
        ))),
    }
}

/// A fault map as a server error: `hessian fault <code>: <message>`, with
/// the detail's exception class when there is one.
fn read_fault(dec: &mut Decoder<'_>) -> CallError {
    let map = match dec.read_value() {
        Ok(HValue::Map(map)) => map,
        Ok(other) => {
            let mut shown = format!("{other:?}");
            shown.truncate(200);
            return CallError::Protocol(format!("hessian fault that is not a map: {shown}"));
        }
        Err(e) => return CallError::Protocol(format!("undecodable hessian fault: {e}")),
    };
    let get = |key: &str| {
        map.entries
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    };
    let code = get("code").and_then(HValue::as_str).unwrap_or("(no code)");
    let message = get("message")
        .and_then(HValue::as_str)
        .unwrap_or("(no message)");
    let mut text = format!("hessian fault {code}: {message}");
    if let Some(HValue::Object(detail)) = get("detail") {
        text.push_str(" (");
        text.push_str(detail.class_name());
        text.push(')');
    }
    CallError::Server(text)
}

/// Decodes `bytes` as a reply to every method: what the fuzz target and the
/// property tests run. Never panics.
pub fn exercise(bytes: &[u8]) {
    for method in Method::ALL {
        let _ = decode_reply(bytes, method);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::decoding;
    use proptest::prelude::*;
    use rpclab_model::contract::{self, Operation, StringSize};

    fn call_bytes(op: Operation) -> Vec<u8> {
        let call = op.call();
        let mut out = vec![0xee; 3];
        encode_call(&mut out, Method::of(&call).unwrap(), &call.argument).unwrap();
        out
    }

    /// A skeleton's view of a call: method name and arguments.
    fn read_call(bytes: &[u8]) -> (String, Vec<HValue>) {
        assert_eq!(&bytes[..4], b"H\x02\x00C");
        let mut dec = Decoder::new(&bytes[4..]);
        let method = dec.read_string().unwrap();
        let argc = dec.read_i32().unwrap();
        let args = (0..argc).map(|_| dec.read_value().unwrap()).collect();
        assert!(dec.is_empty());
        (method, args)
    }

    /// The reply a skeleton would write for `value`.
    fn reply(value: &HValue) -> Vec<u8> {
        let mut out = b"H\x02\x00R".to_vec();
        Encoder::new(&mut out).write_value(value).unwrap();
        out
    }

    fn echo(bytes: &[u8]) -> Vec<u8> {
        let (method, args) = read_call(bytes);
        match method.as_str() {
            "hello" => reply(&HValue::String(format!(
                "hello {}",
                args[0].as_str().unwrap()
            ))),
            "empty" => reply(&HValue::Null),
            _ => reply(&args[0]),
        }
    }

    #[test]
    fn every_operation_round_trips() {
        for op in Operation::ALL {
            let call = op.call();
            let bytes = call_bytes(op);
            assert!(bytes.len() <= call_capacity(&call.argument), "{op}");
            let method = Method::of(&call).unwrap();
            let (name, args) = read_call(&bytes);
            assert_eq!(name, method.name());
            assert_eq!(args.len(), usize::from(call.argument != Value::Unit));
            let value = decode_reply(&echo(&bytes), method).unwrap();
            assert!(value == call.expected, "{op}");
        }
    }

    #[test]
    fn faults_are_server_errors() {
        let mut out = b"H\x02\x00F".to_vec();
        let detail = hessian2::Object::new(
            "java.lang.NoSuchMethodException",
            [("detailMessage", HValue::String("nope".into()))],
        );
        Encoder::new(&mut out)
            .write_value(&HValue::map([
                (
                    HValue::String("code".into()),
                    HValue::String("NoSuchMethodException".into()),
                ),
                (
                    HValue::String("message".into()),
                    HValue::String("no method named: nope".into()),
                ),
                (HValue::String("detail".into()), HValue::Object(detail)),
            ]))
            .unwrap();
        match decode_reply(&out, Method::Hello) {
            Err(CallError::Server(m)) => assert_eq!(
                m,
                "hessian fault NoSuchMethodException: no method named: nope \
                 (java.lang.NoSuchMethodException)"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn wrong_and_malformed_replies() {
        assert!(matches!(
            decode_reply(&reply(&HValue::Null), Method::Hello),
            Err(CallError::WrongResponse(_))
        ));
        assert!(matches!(
            decode_reply(&reply(&HValue::Int(1)), Method::Empty),
            Err(CallError::WrongResponse(_))
        ));
        for bad in [
            &b""[..],
            b"H\x02\x00",
            b"H\x01\x00R\x01",
            b"r\x01\x00N",
            b"H\x02\x00X",
            b"H\x02\x00RNN",
        ] {
            assert!(
                matches!(
                    decode_reply(bad, Method::Empty),
                    Err(CallError::Protocol(_))
                ),
                "{bad:?}"
            );
        }
        let other = hessian2::Object::new("com.example.Order", [("orderId", HValue::Long(1))]);
        assert!(matches!(
            decode_reply(&reply(&HValue::Object(other)), Method::EchoOrder),
            Err(CallError::WrongResponse(_))
        ));
        // A truncated 1 MiB string.
        let r = echo(&call_bytes(Operation::StringEcho(StringSize::M1)));
        assert!(matches!(
            decode_reply(&r[..r.len() - 10], Method::EchoString),
            Err(CallError::Protocol(_))
        ));
    }

    /// Decoding arbitrary bytes as a reply never panics.
    #[test]
    fn decoding_arbitrary_bytes_never_panics() {
        decoding::arbitrary_bytes_never_panic(|bytes| {
            exercise(bytes);
            let mut framed = VERSION.to_vec();
            framed.extend_from_slice(bytes);
            exercise(&framed);
        });
    }

    /// Mutating a real reply never panics either.
    #[test]
    fn decoding_mutated_replies_never_panics() {
        decoding::mutated_replies_never_panic(|op| echo(&call_bytes(op)), 0, exercise);
    }

    proptest! {
        #![proptest_config(decoding::cases())]

        /// Any order survives a call and an echoed reply.
        #[test]
        fn orders_round_trip(i in any::<u32>(), amount in any::<f64>(), phone in ".{0,40}") {
            let mut order = contract::Order::sample(i);
            order.amount = amount;
            order.phone = phone;
            let mut out = Vec::new();
            encode_call(&mut out, Method::EchoOrder, &Value::Order(order.clone())).unwrap();
            match decode_reply(&echo(&out), Method::EchoOrder).unwrap() {
                Value::Order(got) => {
                    prop_assert_eq!(got.order_id, order.order_id);
                    prop_assert_eq!(&got.phone, &order.phone);
                    prop_assert!(got.amount == order.amount || (got.amount.is_nan() && order.amount.is_nan()));
                }
                other => prop_assert!(false, "{:?}", other),
            }
        }
    }
}
