//! Dubbo 2.5's own serialization, `serialization=dubbo` (id 1): the
//! `GenericObjectOutput` / `GenericObjectInput` of
//! `com.alibaba.dubbo.common.serialize.support.dubbo`, with the
//! `dubbo-serialization` crate. Seed 000's configuration B; Dubbo 2.6
//! dropped it, so only the `dubbo-2.5` provider speaks it.
//!
//! Every `ObjectOutput` call writes its form straight after the previous
//! one (no framing): `writeUTF` a string, `writeObject` a class descriptor
//! and the value. An `rpclab.contract.Order` is a bean: its 8 fields sorted
//! by name (`amount`, `name`, `orderDate`, `orderId`, `orderNum`,
//! `orderStatus`, `phone`, `ticketType`), each in the form of its declared
//! type; a `List<Order>` argument an `ArrayList`. Dubbo writes a bean that
//! `equals` one already written in the same body as a back-reference, and
//! so does the client (two equal orders in one list).

use super::{stateless_serialization, ObjectInput, ObjectOutput, Serialization};
use crate::java_contract::Method;
use crate::protocol::CallError;
use dubbo_serialization::{class_descriptor, DecodeError, Field, Reader, Value as Wire, Writer};
use rpclab_model::contract::{self, Value};
use std::sync::OnceLock;

/// Dubbo's serialization id of its own serialization.
pub const ID: u8 = dubbo_serialization::CONTENT_TYPE_ID;

/// The class of the contract's order.
const ORDER_CLASS: &str = "rpclab.contract.Order";

/// Its descriptor, `Lrpclab/contract/Order;`.
fn order_descriptor() -> &'static str {
    static DESC: OnceLock<String> = OnceLock::new();
    DESC.get_or_init(|| class_descriptor(ORDER_CLASS))
}

/// The field count Builder writes for `rpclab.contract.Order`.
const ORDER_FIELDS: i32 = 8;

/// Dubbo 2.5's `dubbo` serialization.
#[derive(Debug, Default)]
pub struct DubboSerialization;

impl Serialization for DubboSerialization {
    stateless_serialization!(names: ["dubbo"], id: ID);

    fn output<'a>(&'a self, out: &'a mut Vec<u8>) -> Output<'a> {
        Output { out }
    }

    fn input<'a>(&'a self, body: &'a [u8]) -> Result<Input<'a>, CallError> {
        Ok(Input(Reader::new(body)))
    }
}

/// Writes into the body.
pub struct Output<'a> {
    out: &'a mut Vec<u8>,
}

/// `equals` of `rpclab.contract.Order` (`Double.compare` for the amount).
fn java_equals(a: &contract::Order, b: &contract::Order) -> bool {
    a.order_id == b.order_id
        && a.order_date == b.order_date
        && a.ticket_type == b.ticket_type
        && a.amount.to_bits() == b.amount.to_bits()
        && a.order_status == b.order_status
        && a.phone == b.phone
        && a.name == b.name
        && a.order_num == b.order_num
}

/// `writeObject` of an order; `beans` are the orders written so far in this
/// body, by back-reference index.
fn write_order<'a>(w: &mut Writer, o: &'a contract::Order, beans: &mut Vec<&'a contract::Order>) {
    if let Some(index) = beans.iter().position(|b| java_equals(b, o)) {
        w.write_ref(order_descriptor(), index as u32);
        return;
    }
    beans.push(o);
    w.begin_bean(order_descriptor(), ORDER_FIELDS);
    w.write_double(o.amount);
    w.write_utf(Some(&o.name));
    w.write_int(o.order_date);
    w.write_long(o.order_id);
    w.write_utf(Some(&o.order_num));
    w.write_int(o.order_status);
    w.write_utf(Some(&o.phone));
    w.write_int(o.ticket_type);
}

impl Output<'_> {
    /// Appends through a [`Writer`] over the body (moving the vector, not
    /// copying it).
    fn with(&mut self, f: impl FnOnce(&mut Writer)) {
        let mut w = Writer::with_buffer(std::mem::take(self.out));
        f(&mut w);
        *self.out = w.into_inner();
    }
}

impl ObjectOutput for Output<'_> {
    fn write_utf(&mut self, s: &str) -> Result<(), CallError> {
        self.with(|w| w.write_utf(Some(s)));
        Ok(())
    }

    fn write_argument(&mut self, argument: &Value) -> Result<(), CallError> {
        // Back-references only reach within one argument (the contract's
        // methods take one), so the beans need not outlive this call.
        let mut beans = Vec::new();
        self.with(|w| match argument {
            Value::Order(o) => write_order(w, o, &mut beans),
            Value::Orders(orders) => {
                w.begin_array_list(orders.len() as u32);
                for o in orders {
                    write_order(w, o, &mut beans);
                }
            }
            Value::Str(s) => w.write_string_object(Some(s)),
            Value::Unit => w.write_null(),
        });
        Ok(())
    }

    fn write_null(&mut self) -> Result<(), CallError> {
        self.with(Writer::write_null);
        Ok(())
    }

    fn write_attachments(&mut self, attachments: &[(&str, &str)]) -> Result<(), CallError> {
        self.with(|w| w.write_string_map(attachments));
        Ok(())
    }

    fn finish(self) -> Result<(), CallError> {
        Ok(())
    }
}

/// Reads a response body.
pub struct Input<'a>(Reader<'a>);

fn malformed(e: DecodeError) -> CallError {
    CallError::Protocol(format!("malformed dubbo-serialization response body: {e}"))
}

fn wrong(what: impl std::fmt::Display) -> CallError {
    CallError::WrongResponse(what.to_string())
}

/// An `rpclab.contract.Order` bean (a `null` string field reads as "", as
/// the contract has no null strings).
fn order(v: &Wire) -> Result<contract::Order, CallError> {
    let Wire::Bean { class, fields } = v else {
        return Err(wrong(format!("expected an {ORDER_CLASS}, got {v:?}")));
    };
    if class.as_deref().is_some_and(|c| c != order_descriptor()) || fields.len() != 8 {
        return Err(wrong(format!(
            "expected an {ORDER_CLASS} of 8 fields, got class {class:?} with {} fields",
            fields.len()
        )));
    }
    let int = |f: &Field, name: &str| {
        f.as_i64()
            .and_then(|v| i32::try_from(v).ok())
            .ok_or_else(|| wrong(format!("Order.{name} is not an int: {f:?}")))
    };
    let string = |f: &Field, name: &str| {
        f.as_str()
            .map(|s| s.unwrap_or_default().to_owned())
            .ok_or_else(|| wrong(format!("Order.{name} is not a String: {f:?}")))
    };
    Ok(contract::Order {
        amount: fields[0]
            .as_f64()
            .ok_or_else(|| wrong("Order.amount is not a double"))?,
        name: string(&fields[1], "name")?,
        order_date: int(&fields[2], "orderDate")?,
        order_id: fields[3]
            .as_i64()
            .ok_or_else(|| wrong("Order.orderId is not a long"))?,
        order_num: string(&fields[4], "orderNum")?,
        order_status: int(&fields[5], "orderStatus")?,
        phone: string(&fields[6], "phone")?,
        ticket_type: int(&fields[7], "ticketType")?,
    })
}

impl ObjectInput for Input<'_> {
    fn read_response_type(&mut self) -> Result<i32, CallError> {
        self.0.read_byte().map(i32::from).map_err(malformed)
    }

    fn read_value(&mut self, method: Method) -> Result<Value, CallError> {
        let v = self.0.read_object().map_err(malformed)?;
        if v == Wire::Null {
            return Ok(Value::Unit);
        }
        Ok(match method {
            Method::Empty => return Err(wrong(format!("`empty` returned a value: {v:?}"))),
            Method::EchoString | Method::Hello => match v {
                Wire::String(s) => Value::Str(s),
                other => return Err(wrong(format!("expected a String, got {other:?}"))),
            },
            Method::EchoOrder => Value::Order(order(&v)?),
            Method::EchoOrders => match &v {
                Wire::List(items) => {
                    Value::Orders(items.iter().map(order).collect::<Result<_, _>>()?)
                }
                other => return Err(wrong(format!("expected an ArrayList, got {other:?}"))),
            },
        })
    }

    /// A Throwable is its class descriptor and Dubbo's compacted Java
    /// serialization of it (`CompactedObjectOutputStream`, whose class
    /// descriptors are not standard Java serialization): the class is
    /// reported, the stream is not decoded.
    fn read_exception(&mut self) -> CallError {
        match self.0.read_object() {
            Ok(Wire::Throwable { class, stream }) => CallError::Server(format!(
                "exception {class} (its {}-byte compacted Java serialization, with the message, is not decoded)",
                stream.len()
            )),
            Ok(other) => CallError::Server(format!("exception response holding {other:?}")),
            Err(e) => CallError::Server(format!(
                "the server threw an exception this client cannot decode: {e}"
            )),
        }
    }

    fn skip_object(&mut self) -> Result<(), CallError> {
        self.0.read_object().map(drop).map_err(malformed)
    }

    fn read_utf(&mut self) -> Result<Option<String>, CallError> {
        self.0.read_utf().map_err(malformed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(arg: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        let mut o = DubboSerialization.output(&mut out);
        o.write_argument(arg).unwrap();
        o.finish().unwrap();
        out
    }

    fn read_back(method: Method, bytes: &[u8]) -> Value {
        // a response: RESPONSE_VALUE, then the value
        let mut body = vec![26];
        body.extend_from_slice(bytes);
        let mut input = DubboSerialization.input(&body).unwrap();
        assert_eq!(input.read_response_type().unwrap(), 1);
        let v = input.read_value(method).unwrap();
        assert!(input.0.is_at_end());
        v
    }

    #[test]
    fn every_argument_round_trips() {
        let order = contract::Order::sample(3);
        let orders: Vec<contract::Order> = (0..100).map(contract::Order::sample).collect();
        for (method, v) in [
            (Method::EchoOrder, Value::Order(order)),
            (Method::EchoOrders, Value::Orders(orders)),
            (
                Method::EchoString,
                Value::Str("caf\u{e9} \u{1f680} x".repeat(100)),
            ),
            (Method::Hello, Value::Str(String::new())),
        ] {
            assert_eq!(read_back(method, &written(&v)), v);
        }
    }

    #[test]
    fn equal_orders_are_back_references() {
        let a = contract::Order::sample(1);
        let v = Value::Orders(vec![a.clone(), a.clone(), contract::Order::sample(2), a]);
        let bytes = written(&v);
        // ArrayList, 4 elements; the second element: descriptor, REF 0
        let desc = order_descriptor().len();
        let second = bytes
            .windows(desc + 2)
            .filter(|w| &w[..desc] == order_descriptor().as_bytes())
            .nth(1)
            .unwrap();
        assert_eq!(&second[desc..], [0x81, 0x80]);
        assert_eq!(read_back(Method::EchoOrders, &bytes), v);
    }

    #[test]
    fn the_order_is_the_golden_vectors_order() {
        // crates/dubbo-serialization/golden/vectors/order.bin, written by Dubbo 2.5.10
        let golden = include_bytes!("../../../../../dubbo-serialization/golden/vectors/order.bin");
        let o = crate::protocols::dubbo::serialization::typical_order();
        assert_eq!(written(&Value::Order(o)), golden);
    }

    #[test]
    fn exceptions_say_their_class() {
        let golden = include_bytes!(
            "../../../../../dubbo-serialization/golden/vectors/response_exception.bin"
        );
        let mut input = DubboSerialization.input(golden).unwrap();
        assert_eq!(input.read_response_type().unwrap(), 0);
        let e = input.read_exception().to_string();
        assert!(e.contains("Ljava/lang/IllegalStateException;"), "{e}");
    }
}
