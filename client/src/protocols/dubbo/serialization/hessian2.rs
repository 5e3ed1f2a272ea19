//! Hessian 2.0, as Dubbo's `Hessian2ObjectOutput` / `Hessian2ObjectInput`
//! write and read it (serialization id 2): every value, `writeUTF` and
//! `writeByte` included, is a Hessian value of one stream, so class
//! definitions are shared across a body's values.

use super::{ObjectInput, ObjectOutput, Serialization};
use crate::protocol::CallError;
use crate::protocols::dubbo::codec::{Method, ORDER_CLASS, ORDER_FIELDS};
use hessian2::{DecodeError, Decoder, EncodeError, Encoder, Value as HValue};
use rpclab_model::contract::{self, Value};
use std::collections::BTreeMap;

/// Dubbo's serialization id of hessian2.
pub const ID: u8 = 2;

/// The hessian2 serialization.
#[derive(Debug, Default)]
pub struct Hessian2;

impl Serialization for Hessian2 {
    const NAMES: &'static [&'static str] = &["hessian2"];
    type Output<'a> = Output<'a>;
    type Input<'a> = Input<'a>;

    fn new(_: &str, _: &BTreeMap<String, String>) -> Result<Self, CallError> {
        Ok(Hessian2)
    }

    fn id(&self) -> u8 {
        ID
    }

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

    fn write_argument(&mut self, argument: &Value) -> Result<(), CallError> {
        match argument {
            Value::Order(order) => write_order(&mut self.0, order),
            Value::Orders(orders) => write_orders(&mut self.0, orders),
            Value::Str(s) => {
                self.0.write_string(s);
                Ok(())
            }
            Value::Unit => {
                self.0.write_null();
                Ok(())
            }
        }
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

/// The order in which hessian-lite's `JavaSerializer` writes `Order`'s
/// fields: declaration order reversed. Readers match fields by name, so
/// any order works; this one makes the client's bytes identical to a Java
/// consumer's (checked by `tests/dubbo_golden.rs`).
const JAVA_FIELD_ORDER: [&str; 8] = {
    let f = ORDER_FIELDS;
    [f[7], f[6], f[5], f[4], f[3], f[2], f[1], f[0]]
};

/// An `rpclab.contract.Order`, straight from the borrowed contract value.
pub fn write_order(
    enc: &mut Encoder<&mut Vec<u8>>,
    order: &contract::Order,
) -> Result<(), EncodeError> {
    enc.begin_object(ORDER_CLASS, &JAVA_FIELD_ORDER)?;
    enc.write_int(order.order_status);
    enc.write_double(order.amount);
    enc.write_int(order.ticket_type);
    enc.write_int(order.order_date);
    enc.write_string(&order.order_num);
    enc.write_string(&order.name);
    enc.write_string(&order.phone);
    enc.write_long(order.order_id);
    Ok(())
}

/// A `java.util.ArrayList` of orders: Java's own form, an untyped
/// fixed-length list.
fn write_orders(
    enc: &mut Encoder<&mut Vec<u8>>,
    orders: &[contract::Order],
) -> Result<(), EncodeError> {
    enc.begin_list(orders.len(), None)?;
    for order in orders {
        write_order(enc, order)?;
    }
    Ok(())
}

pub struct Input<'a>(Decoder<'a>);

fn malformed(e: DecodeError) -> CallError {
    CallError::Protocol(format!("malformed response body: {e}"))
}

impl ObjectInput for Input<'_> {
    /// `Hessian2ObjectOutput.writeByte` writes an int.
    fn read_response_type(&mut self) -> Result<i32, CallError> {
        self.0.read_i32().map_err(malformed)
    }

    fn read_value(&mut self, method: Method) -> Result<Value, CallError> {
        let dec = &mut self.0;
        if dec.try_read_null().map_err(malformed)? {
            return Ok(Value::Unit);
        }
        match method {
            Method::Empty => Err(CallError::WrongResponse(
                "`empty` returned a value".to_owned(),
            )),
            Method::EchoString | Method::Hello => {
                let mut s = String::new();
                dec.read_string_into(&mut s).map_err(malformed)?;
                Ok(Value::Str(s))
            }
            Method::EchoOrder => read_order(dec).map(Value::Order),
            Method::EchoOrders => read_orders(dec).map(Value::Orders),
        }
    }

    fn read_exception(&mut self) -> CallError {
        match self.0.read_value() {
            Ok(value) => exception_error(&value),
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
}

/// A list of orders: `ArrayList` untyped (Dubbo 3's hessian-lite) or typed
/// `java.util.ArrayList` (com.alibaba hessian-lite), fixed or variable length.
fn read_orders(dec: &mut Decoder<'_>) -> Result<Vec<contract::Order>, CallError> {
    let header = dec.begin_list().map_err(malformed)?;
    // No more than the input could hold (an order takes more than 8 bytes).
    let hint = header.len.unwrap_or(0).min(dec.remaining().len() / 8);
    let mut orders = Vec::with_capacity(hint);
    while dec.has_next().map_err(malformed)? {
        orders.push(read_order(dec)?);
    }
    dec.end().map_err(malformed)?;
    Ok(orders)
}

/// An `rpclab.contract.Order`, fields matched by name (any order; unknown
/// fields skipped; a missing one keeps Java's default).
fn read_order(dec: &mut Decoder<'_>) -> Result<contract::Order, CallError> {
    let header = dec.begin_object().map_err(malformed)?;
    if header.class.name != ORDER_CLASS {
        return Err(CallError::WrongResponse(format!(
            "expected an object of class {ORDER_CLASS}, got {}",
            header.class.name
        )));
    }
    let mut order = contract::Order::default();
    for field in header.class.fields.iter() {
        let read = match field.as_str() {
            "orderId" => dec.read_i64().map(|v| order.order_id = v),
            "phone" => read_field_string(dec, &mut order.phone),
            "name" => read_field_string(dec, &mut order.name),
            "orderNum" => read_field_string(dec, &mut order.order_num),
            "orderDate" => dec.read_i32().map(|v| order.order_date = v),
            "ticketType" => dec.read_i32().map(|v| order.ticket_type = v),
            "amount" => dec.read_f64().map(|v| order.amount = v),
            "orderStatus" => dec.read_i32().map(|v| order.order_status = v),
            _ => dec.skip_value(),
        };
        read.map_err(malformed)?;
    }
    dec.end().map_err(malformed)?;
    Ok(order)
}

/// A `String` field; `null` reads as empty (verification then reports the
/// difference).
fn read_field_string(dec: &mut Decoder<'_>, out: &mut String) -> Result<(), DecodeError> {
    if dec.try_read_null()? {
        out.clear();
        Ok(())
    } else {
        dec.read_string_into(out)
    }
}

/// A thrown exception as a server error: `<class>: <detailMessage>`, with
/// the causes' (Dubbo often wraps the interesting one).
fn exception_error(value: &HValue) -> CallError {
    let mut text = String::from("exception ");
    let mut next = Some(value);
    let mut depth = 0;
    while let Some(HValue::Object(obj)) = next {
        if depth > 0 {
            text.push_str("; caused by ");
        }
        text.push_str(obj.class_name());
        match obj.get("detailMessage") {
            Some(HValue::String(m)) => {
                text.push_str(": ");
                text.push_str(m);
            }
            _ => text.push_str(" (no message)"),
        }
        depth += 1;
        // A Throwable without a cause has `cause = this`: a reference.
        next = obj.get("cause").filter(|_| depth < 8);
    }
    if depth == 0 {
        let mut shown = format!("{value:?}");
        shown.truncate(200);
        text.push_str(&shown);
    }
    CallError::Server(text)
}
