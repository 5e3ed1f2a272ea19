//! The contract's payloads in Java serialization, as RMI marshals them:
//! arguments written by the client, replies decoded straight into contract
//! values.
//!
//! Every class descriptor carries a `TC_NULL` annotation (RMI's
//! `MarshalOutputStream` writes each class's codebase, null for the lab's
//! servers); see [`javaser::Encoder::with_null_class_annotations`].

use crate::protocol::CallError;
use javaser::{ClassDesc, Decoder, Encoder, Value as JValue, SC_SERIALIZABLE};
use jrmp::invocation;
use rpclab_model::contract::{Order, Value};
use std::sync::OnceLock;

pub use crate::java_contract::serialization::{order_desc, ORDER_SUID};
pub use crate::java_contract::ORDER_CLASS;

/// `java.lang.String`'s descriptor (as a `Class` object in Spring's
/// parameter types).
fn string_class_desc() -> &'static ClassDesc {
    static D: OnceLock<ClassDesc> = OnceLock::new();
    D.get_or_init(|| {
        ClassDesc::new(
            "java.lang.String",
            -6_849_794_470_754_667_710,
            SC_SERIALIZABLE,
            vec![],
        )
    })
}

/// `java.util.List`'s (an interface: not serializable, no UID).
fn list_class_desc() -> &'static ClassDesc {
    static D: OnceLock<ClassDesc> = OnceLock::new();
    D.get_or_init(|| invocation::plain_class_desc("java.util.List"))
}

/// The contract's methods: their names and Java signatures (what the
/// method hash is computed from) are the model's table.
pub use rpclab_model::contract::Method;

/// Spring's `parameterTypes` for `method`.
pub fn parameter_types(method: Method) -> &'static [&'static ClassDesc] {
    static ORDER: OnceLock<[&'static ClassDesc; 1]> = OnceLock::new();
    static LIST: OnceLock<[&'static ClassDesc; 1]> = OnceLock::new();
    static STRING: OnceLock<[&'static ClassDesc; 1]> = OnceLock::new();
    match method {
        Method::EchoOrder => ORDER.get_or_init(|| [order_desc()]),
        Method::EchoOrders => LIST.get_or_init(|| [list_class_desc()]),
        Method::EchoString | Method::Hello => STRING.get_or_init(|| [string_class_desc()]),
        Method::Empty => &[],
    }
}

fn write_order(enc: &mut Encoder, o: &Order) -> Result<(), javaser::EncodeError> {
    // Fields in descriptor order: primitives by name, then objects by name.
    enc.begin_object(order_desc())?;
    enc.write_double(o.amount);
    enc.write_int(o.order_date);
    enc.write_long(o.order_id);
    enc.write_int(o.order_status);
    enc.write_int(o.ticket_type);
    enc.write_string(&o.name);
    enc.write_string(&o.order_num);
    enc.write_string(&o.phone);
    enc.end_object()
}

/// Writes the call's argument as `writeObject` does (nothing for `empty`).
pub fn write_argument(enc: &mut Encoder, argument: &Value) -> Result<(), javaser::EncodeError> {
    match argument {
        Value::Order(o) => write_order(enc, o),
        Value::Orders(list) => enc.write_array_list(list.len(), |enc| {
            for o in list {
                write_order(enc, o)?;
            }
            Ok(())
        }),
        Value::Str(s) => {
            enc.write_string(s);
            Ok(())
        }
        Value::Unit => Ok(()),
    }
}

/// A rough upper bound of an argument's serialized size, to size the
/// request buffer once.
pub fn argument_capacity(argument: &Value) -> usize {
    const HEADERS: usize = 1024;
    match argument {
        Value::Order(_) => HEADERS + 256,
        Value::Orders(list) => HEADERS + list.len() * 128,
        Value::Str(s) => HEADERS + s.len(),
        Value::Unit => HEADERS,
    }
}

fn protocol(msg: String) -> CallError {
    CallError::Protocol(msg)
}

fn string_field(o: &javaser::Object, name: &str, dec: &Decoder<'_>) -> Result<String, CallError> {
    match o.get(name) {
        Some(JValue::String(s)) => Ok(s.clone()),
        Some(JValue::Reference(h)) => dec
            .handle_string(*h)
            .map(str::to_owned)
            .ok_or_else(|| protocol(format!("Order.{name} refers to a non-string handle"))),
        Some(JValue::Null) => Err(CallError::WrongResponse(format!("Order.{name} is null"))),
        _ => Err(protocol(format!("Order.{name} missing or not a string"))),
    }
}

fn order_of(v: &JValue, dec: &Decoder<'_>) -> Result<Order, CallError> {
    let o = v
        .as_object()
        .filter(|o| o.desc.name == ORDER_CLASS)
        .ok_or_else(|| protocol(format!("expected an {ORDER_CLASS}, got {}", describe(v))))?;
    let prim = |name: &str| {
        o.get(name)
            .ok_or_else(|| protocol(format!("Order.{name} missing")))
    };
    let int = |name: &str| match prim(name)? {
        JValue::Int(x) => Ok(*x),
        _ => Err(protocol(format!("Order.{name} is not an int"))),
    };
    Ok(Order {
        order_id: match prim("orderId")? {
            JValue::Long(x) => *x,
            _ => return Err(protocol("Order.orderId is not a long".into())),
        },
        phone: string_field(o, "phone", dec)?,
        name: string_field(o, "name", dec)?,
        order_num: string_field(o, "orderNum", dec)?,
        order_date: int("orderDate")?,
        ticket_type: int("ticketType")?,
        amount: match prim("amount")? {
            JValue::Double(x) => *x,
            _ => return Err(protocol("Order.amount is not a double".into())),
        },
        order_status: int("orderStatus")?,
    })
}

fn describe(v: &JValue) -> String {
    match v {
        JValue::Null => "null".into(),
        JValue::String(_) => "a string".into(),
        JValue::Object(o) => format!("an object of {}", o.desc.name),
        JValue::Array(a) => format!("an array {}", a.desc.name),
        other => format!("{other:?}").chars().take(60).collect(),
    }
}

/// Decodes a normal return's value (`None` for a `void` method) into the
/// contract value `method` returns.
pub fn decode_reply(
    method: Method,
    value: Option<JValue>,
    dec: &Decoder<'_>,
) -> Result<Value, CallError> {
    match (method, value) {
        (Method::Empty, None | Some(JValue::Null)) => Ok(Value::Unit),
        (Method::EchoString | Method::Hello, Some(JValue::String(s))) => Ok(Value::Str(s)),
        (Method::EchoString | Method::Hello, Some(JValue::Reference(h))) => dec
            .handle_string(h)
            .map(|s| Value::Str(s.to_owned()))
            .ok_or_else(|| protocol("string reply refers to a non-string handle".into())),
        (Method::EchoOrder, Some(v)) => order_of(&v, dec).map(Value::Order),
        (Method::EchoOrders, Some(v)) => {
            let elements = javaser::java::array_list_elements(&v).ok_or_else(|| {
                protocol(format!(
                    "expected a java.util.ArrayList, got {}",
                    describe(&v)
                ))
            })?;
            elements
                .into_iter()
                .map(|e| order_of(e, dec))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Orders)
        }
        (name, Some(v)) => Err(protocol(format!("{name} returned {}", describe(&v)))),
        (name, None) => Err(protocol(format!("{name} returned nothing"))),
    }
}
