//! fastjson2 JSONB, as Dubbo 3.x's `FastJson2ObjectOutput` /
//! `FastJson2ObjectInput` write and read it (serialization id 23, Dubbo's
//! default since 3.2): every `ObjectOutput` call is its own JSONB document
//! behind a 4-byte length, so nothing (not even the symbol table of class
//! and field names) is shared between a body's values. The
//! [`fastjson2_jsonb`] crate does the format; this module maps the
//! contract's values onto it exactly as Java does, so the provider's
//! STRICT allow-list check sees the class name it expects.

use super::{stateless_serialization, ObjectInput, ObjectOutput, Serialization};
use crate::java_contract::{exception_text, Method, Thrown, ORDER_CLASS};
use crate::protocol::CallError;
use fastjson2_jsonb::dubbo::{ObjectInput as JInput, ObjectOutput as JOutput};
use fastjson2_jsonb::{DecodeError, EncodeError, Reader, Value as JValue, Writer};
use rpclab_model::contract::{self, Value};

/// Dubbo's serialization id of fastjson2.
pub const ID: u8 = fastjson2_jsonb::dubbo::SERIALIZATION_ID;

/// The fastjson2 (JSONB) serialization.
#[derive(Debug, Default)]
pub struct Fastjson2;

impl Serialization for Fastjson2 {
    stateless_serialization!(names: ["fastjson2"], id: ID);

    /// The JSONB output takes the request buffer over (a move, no copy)
    /// and gives it back when dropped.
    fn output<'a>(&'a self, out: &'a mut Vec<u8>) -> Output<'a> {
        let jout = JOutput::with_buffer(std::mem::take(out));
        Output { out, jout }
    }

    fn input<'a>(&'a self, body: &'a [u8]) -> Result<Input<'a>, CallError> {
        Ok(Input(JInput::new(body)))
    }
}

pub struct Output<'a> {
    out: &'a mut Vec<u8>,
    jout: JOutput,
}

impl Drop for Output<'_> {
    fn drop(&mut self) {
        *self.out = std::mem::take(self.jout.buffer_mut());
    }
}

fn encoding(e: EncodeError) -> CallError {
    CallError::Protocol(format!("encoding the request: {e}"))
}

impl ObjectOutput for Output<'_> {
    fn write_utf(&mut self, s: &str) -> Result<(), CallError> {
        self.jout.write_utf(s).map_err(encoding)
    }

    fn write_argument(&mut self, argument: &Value) -> Result<(), CallError> {
        self.jout
            .write_object(|w| match argument {
                Value::Order(order) => write_order(w, order),
                Value::Orders(orders) => {
                    // ArrayList: no class name (NotWriteHashMapArrayListClassName)
                    w.start_array(orders.len())?;
                    for order in orders {
                        write_order(w, order)?;
                    }
                    Ok(())
                }
                Value::Str(s) => w.write_str(s),
                Value::Unit => {
                    w.write_null();
                    Ok(())
                }
            })
            .map_err(encoding)
    }

    fn write_null(&mut self) -> Result<(), CallError> {
        self.jout.write_value(&JValue::Null).map_err(encoding)
    }

    /// A `HashMap`: no class name, keys as plain strings.
    fn write_attachments(&mut self, attachments: &[(&str, &str)]) -> Result<(), CallError> {
        self.jout
            .write_string_map(attachments.iter().copied())
            .map_err(encoding)
    }

    fn finish(self) -> Result<(), CallError> {
        Ok(())
    }
}

/// An `rpclab.contract.Order` as Dubbo's writer features make it: class
/// name, fields sorted by name (`FieldBased`), names as symbols, and
/// `NotWriteDefaultValue`: a zero `int`/`long` is left out, the `double`
/// always written, and the contract's strings are never null, so always
/// written.
pub fn write_order(w: &mut Writer, order: &contract::Order) -> Result<(), EncodeError> {
    w.write_type_name(ORDER_CLASS);
    w.start_object();
    w.write_field_name("amount")?;
    w.write_f64(order.amount);
    w.write_field_name("name")?;
    w.write_str(&order.name)?;
    write_int_field(w, "orderDate", order.order_date)?;
    if order.order_id != 0 {
        w.write_field_name("orderId")?;
        w.write_i64(order.order_id);
    }
    w.write_field_name("orderNum")?;
    w.write_str(&order.order_num)?;
    write_int_field(w, "orderStatus", order.order_status)?;
    w.write_field_name("phone")?;
    w.write_str(&order.phone)?;
    write_int_field(w, "ticketType", order.ticket_type)?;
    w.end_object();
    Ok(())
}

/// An `int` field of the Order under `NotWriteDefaultValue`: left out
/// when zero.
fn write_int_field(w: &mut Writer, name: &str, value: i32) -> Result<(), EncodeError> {
    if value != 0 {
        w.write_field_name(name)?;
        w.write_i32(value);
    }
    Ok(())
}

pub struct Input<'a>(JInput<'a>);

fn malformed(e: DecodeError) -> CallError {
    CallError::Protocol(format!("malformed fastjson2 response body: {e}"))
}

impl ObjectInput for Input<'_> {
    /// `writeByte` writes a `java.lang.Byte` object.
    fn read_response_type(&mut self) -> Result<i32, CallError> {
        self.0.read_byte().map(i32::from).map_err(malformed)
    }

    fn read_value(&mut self, method: Method) -> Result<Value, CallError> {
        let mut r = self.0.next_object().map_err(malformed)?;
        if r.read_null() {
            r.finish().map_err(malformed)?;
            return Ok(Value::Unit);
        }
        let value = match method {
            Method::Empty => {
                return Err(CallError::WrongResponse(
                    "`empty` returned a value".to_owned(),
                ))
            }
            Method::EchoString | Method::Hello => {
                Value::Str(r.read_str().map_err(malformed)?.into_owned())
            }
            Method::EchoOrder => Value::Order(read_order(&mut r)?),
            Method::EchoOrders => Value::Orders(read_orders(&mut r)?),
        };
        r.finish().map_err(malformed)?;
        Ok(value)
    }

    fn read_exception(&mut self) -> CallError {
        match self.0.read_value() {
            Ok(value) => exception_error(&value),
            Err(e) => CallError::Server(format!(
                "the server threw an exception this client cannot decode: {e}"
            )),
        }
    }

    /// Reads the whole object (it must be well-formed JSONB) and drops it.
    fn skip_object(&mut self) -> Result<(), CallError> {
        let mut r = self.0.next_object().map_err(malformed)?;
        r.skip_value().map_err(malformed)?;
        r.finish().map_err(malformed)
    }

    fn read_utf(&mut self) -> Result<Option<String>, CallError> {
        let mut r = self.0.next_object().map_err(malformed)?;
        let s = r.read_opt_str().map_err(malformed)?.map(|s| s.into_owned());
        r.finish().map_err(malformed)?;
        Ok(s)
    }
}

/// A `List<Order>`: an array of typed orders. With `ReferenceDetection`
/// Java writes a second occurrence of the same instance as a reference
/// (`$[i]`); a provider's deserialized list has distinct instances, but a
/// reference to an earlier item is honoured anyway.
fn read_orders(r: &mut Reader<'_>) -> Result<Vec<contract::Order>, CallError> {
    let Some(n) = r.start_array().map_err(malformed)? else {
        return Err(CallError::WrongResponse(
            "expected a list of orders, got null".to_owned(),
        ));
    };
    let mut orders = Vec::with_capacity(n);
    for i in 0..n {
        if r.peek() == Some(fastjson2_jsonb::bc::REFERENCE) {
            let JValue::Reference(path) = r.read_value().map_err(malformed)? else {
                unreachable!("a REFERENCE type byte reads as a reference")
            };
            let earlier = path
                .strip_prefix("$[")
                .and_then(|p| p.strip_suffix(']'))
                .and_then(|p| p.parse::<usize>().ok())
                .and_then(|j| orders.get(j).cloned());
            match earlier {
                Some(order) => orders.push(order),
                None => {
                    return Err(CallError::WrongResponse(format!(
                    "order {i} of the list is a reference to {path}, which is not an earlier order"
                )))
                }
            }
        } else if r.read_null() {
            return Err(CallError::WrongResponse(format!(
                "order {i} of the list is null"
            )));
        } else {
            orders.push(read_order(r)?);
        }
    }
    Ok(orders)
}

/// An `rpclab.contract.Order`, fields matched by name (any order; unknown
/// fields skipped; a missing one keeps Java's default, which is how
/// `NotWriteDefaultValue` leaves zeros out).
fn read_order(r: &mut Reader<'_>) -> Result<contract::Order, CallError> {
    if let Some(class) = r.read_type_name().map_err(malformed)? {
        if class != ORDER_CLASS {
            return Err(CallError::WrongResponse(format!(
                "expected an object of class {ORDER_CLASS}, got {class}"
            )));
        }
    }
    r.start_object().map_err(malformed)?;
    let mut order = contract::Order::default();
    while let Some(field) = r.next_field().map_err(malformed)? {
        let read = match field.as_ref() {
            "orderId" => r.read_i64().map(|v| order.order_id = v),
            "phone" => read_field_string(r, &mut order.phone),
            "name" => read_field_string(r, &mut order.name),
            "orderNum" => read_field_string(r, &mut order.order_num),
            "orderDate" => r.read_i32().map(|v| order.order_date = v),
            "ticketType" => r.read_i32().map(|v| order.ticket_type = v),
            "amount" => r.read_f64().map(|v| order.amount = v),
            "orderStatus" => r.read_i32().map(|v| order.order_status = v),
            _ => r.skip_value(),
        };
        read.map_err(malformed)?;
    }
    Ok(order)
}

/// A `String` field; `null` reads as empty (verification then reports the
/// difference).
fn read_field_string(r: &mut Reader<'_>, out: &mut String) -> Result<(), DecodeError> {
    match r.read_opt_str()? {
        Some(s) => *out = s.into_owned(),
        None => out.clear(),
    }
    Ok(())
}

/// A thrown exception as a server error: `<class>: <detailMessage>`, with
/// the causes' (Dubbo often wraps the interesting one). fastjson2 names
/// `java.lang` exceptions by their simple name (`IllegalStateException`).
fn exception_error(value: &JValue) -> CallError {
    CallError::Server(exception_text(
        value,
        |v| match v {
            JValue::Typed(class, _) => Some(Thrown {
                class,
                message: v
                    .get("detailMessage")
                    .and_then(JValue::as_str)
                    .map(Into::into),
                // A Throwable without a cause has `cause = this`, which
                // fastjson2 leaves out or writes as a reference: either
                // ends the chain.
                cause: v.get("cause"),
            }),
            _ => None,
        },
        |v| format!("{v:?}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::java_contract::Method;

    fn order(i: u32) -> contract::Order {
        contract::Order::sample(i)
    }

    /// What Java's Dubbo writes for an Order is what this module writes:
    /// checked against the crate's golden vector of the same Order.
    #[test]
    fn order_bytes_match_the_golden_vector() {
        let golden = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../jsonb/golden/vectors/order_typical.bin"
        ))
        .unwrap();
        let o = crate::protocols::dubbo::serialization::typical_order();
        let mut out = Vec::new();
        {
            let mut o2 = Fastjson2.output(&mut out);
            o2.write_argument(&Value::Order(o.clone())).unwrap();
            o2.finish().unwrap();
        }
        assert_eq!(out, golden);
        let mut input = Fastjson2.input(&golden).unwrap();
        assert_eq!(
            input.read_value(Method::EchoOrder).unwrap(),
            Value::Order(o)
        );
    }

    #[test]
    fn every_argument_round_trips() {
        let args = [
            (Method::EchoOrder, Value::Order(order(3))),
            (
                Method::EchoOrders,
                Value::Orders((0..20).map(order).collect()),
            ),
            (Method::EchoOrders, Value::Orders(vec![])),
            (Method::EchoString, Value::Str("x".repeat(1 << 20))),
            (
                Method::Hello,
                Value::Str("h\u{e9}llo \u{4e16}\u{754c}".into()),
            ),
        ];
        for (method, arg) in args {
            let mut out = vec![9, 9];
            {
                let mut o = Fastjson2.output(&mut out);
                o.write_argument(&arg).unwrap();
                o.write_attachments(&[("path", "p"), ("k", "v")]).unwrap();
                o.finish().unwrap();
            }
            assert_eq!(&out[..2], &[9, 9], "the output appends");
            let mut input = Fastjson2.input(&out[2..]).unwrap();
            assert_eq!(input.read_value(method).unwrap(), arg);
            input.skip_object().unwrap();
        }
    }

    #[test]
    fn exceptions_come_out_with_class_and_message() {
        let golden = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../jsonb/golden/vectors/throwable_plain.bin"
        ))
        .unwrap();
        let mut input = Fastjson2.input(&golden).unwrap();
        assert_eq!(input.read_response_type().unwrap(), 3);
        let e = input.read_exception();
        assert!(
            matches!(&e, CallError::Server(m) if m == "exception IllegalStateException: order 42 not found"),
            "{e:?}"
        );
        input.skip_object().unwrap();
    }

    #[test]
    fn truncated_bodies_are_errors() {
        let mut out = Vec::new();
        {
            let mut o = Fastjson2.output(&mut out);
            o.write_argument(&Value::Orders((0..5).map(order).collect()))
                .unwrap();
        }
        for cut in 0..out.len() {
            let mut input = Fastjson2.input(&out[..cut]).unwrap();
            assert!(
                input.read_value(Method::EchoOrders).is_err(),
                "cut at {cut}"
            );
        }
    }
}
