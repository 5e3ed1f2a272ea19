//! The service contract as the Java frameworks see it, written once for
//! every protocol that carries Java objects.
//!
//! Dubbo, Hessian over HTTP, SOFA-RPC, Motan and RMI all call
//! `rpclab.contract.BenchService` (`contract/java/`) by its Java method
//! name and parameter descriptor, and carry `rpclab.contract.Order` as a
//! Java object. This module holds those names ([`SERVICE`],
//! [`ORDER_CLASS`], [`ORDER_FIELDS`]; the methods' names and descriptors
//! are the model's [`Method`]) and the contract's values in the two
//! Java object formats several protocols share: Hessian 2.0 ([`hessian`])
//! and Java Object Serialization ([`serialization`]). A protocol's own
//! framing (headers, envelopes, invocations) stays in its module.

/// The service interface's fully qualified name (Dubbo's path and
/// interface, SOFA's and Motan's service name).
pub const SERVICE: &str = "rpclab.contract.BenchService";

/// The Java class of the contract's POJO.
pub const ORDER_CLASS: &str = "rpclab.contract.Order";

/// The POJO's fields, in declaration order (readers match them by name).
pub const ORDER_FIELDS: [&str; 8] = [
    "orderId",
    "phone",
    "name",
    "orderNum",
    "orderDate",
    "ticketType",
    "amount",
    "orderStatus",
];

/// The methods of `rpclab.contract.BenchService`: the contract's one
/// table of names and Java signatures (`rpclab_model::contract::Method`).
pub use rpclab_model::contract::Method;

use std::borrow::Cow;

/// One thrown `Throwable` as a serialization reads it, for
/// [`exception_text`].
pub struct Thrown<'v, T> {
    /// Its class name, as the serialization writes it.
    pub class: &'v str,
    /// Its `detailMessage`, if it has one.
    pub message: Option<Cow<'v, str>>,
    /// Its `cause`: the next link of the chain, if it is a throwable.
    pub cause: Option<&'v T>,
}

/// A thrown exception as text: `exception <class>: <detailMessage>`, with
/// its causes' (`; caused by ...`, at most 8 links: frameworks often wrap
/// the interesting one). `thrown` reads one throwable among a
/// serialization's values; a value that is none is shown as `shown` writes
/// it, in at most 200 bytes.
pub fn exception_text<'v, T>(
    value: &'v T,
    thrown: impl Fn(&'v T) -> Option<Thrown<'v, T>>,
    shown: impl FnOnce(&'v T) -> String,
) -> String {
    let mut text = String::from("exception ");
    let mut next = thrown(value);
    let mut depth = 0;
    while let Some(link) = next {
        if depth > 0 {
            text.push_str("; caused by ");
        }
        text.push_str(link.class);
        match link.message {
            Some(m) => {
                text.push_str(": ");
                text.push_str(&m);
            }
            None => text.push_str(" (no message)"),
        }
        depth += 1;
        next = link.cause.filter(|_| depth < 8).and_then(&thrown);
    }
    if depth == 0 {
        let shown = shown(value);
        let mut end = shown.len().min(200);
        while !shown.is_char_boundary(end) {
            end -= 1;
        }
        text.push_str(&shown[..end]);
    }
    text
}

/// The contract's values in Hessian 2.0, as Java's Hessian libraries write
/// and read them (Caucho's, and the hessian-lite forks Dubbo ships).
pub mod hessian {
    use super::{Method, Thrown, ORDER_CLASS, ORDER_FIELDS};
    use crate::protocol::CallError;
    use hessian2::bytes::BufMut;
    use hessian2::{DecodeError, Decoder, EncodeError, Encoder, Value as HValue};
    use rpclab_model::contract::{self, Value};

    /// The order in which hessian-lite's `JavaSerializer` (Dubbo, Motan's
    /// fork) writes `Order`'s fields: declaration order reversed. Caucho's
    /// own serializer uses declaration order ([`ORDER_FIELDS`]). Readers
    /// match fields by name, so either works; writing the library's own
    /// order makes the client's bytes identical to a Java client's.
    pub const HESSIAN_LITE_FIELDS: [&str; 8] = {
        let f = ORDER_FIELDS;
        [f[7], f[6], f[5], f[4], f[3], f[2], f[1], f[0]]
    };

    /// An `rpclab.contract.Order`, its fields in the order `fields` names
    /// them ([`ORDER_FIELDS`] or [`HESSIAN_LITE_FIELDS`]).
    pub fn write_order<B: BufMut>(
        enc: &mut Encoder<B>,
        order: &contract::Order,
        fields: &[&str; 8],
    ) -> Result<(), EncodeError> {
        enc.begin_object(ORDER_CLASS, fields)?;
        for field in fields {
            match *field {
                "orderId" => enc.write_long(order.order_id),
                "phone" => enc.write_string(&order.phone),
                "name" => enc.write_string(&order.name),
                "orderNum" => enc.write_string(&order.order_num),
                "orderDate" => enc.write_int(order.order_date),
                "ticketType" => enc.write_int(order.ticket_type),
                "amount" => enc.write_double(order.amount),
                "orderStatus" => enc.write_int(order.order_status),
                other => unreachable!("Order has no field {other}"),
            }
        }
        Ok(())
    }

    /// An argument: a `String`, an `Order`, or a `java.util.ArrayList` of
    /// orders (Java's own form: an untyped fixed-length list); `null` for
    /// [`Value::Unit`].
    pub fn write_argument<B: BufMut>(
        enc: &mut Encoder<B>,
        argument: &Value,
        fields: &[&str; 8],
    ) -> Result<(), EncodeError> {
        match argument {
            Value::Order(order) => write_order(enc, order, fields),
            Value::Orders(orders) => {
                enc.begin_list(orders.len(), None)?;
                for order in orders {
                    write_order(enc, order, fields)?;
                }
                Ok(())
            }
            Value::Str(s) => {
                enc.write_string(s);
                Ok(())
            }
            Value::Unit => {
                enc.write_null();
                Ok(())
            }
        }
    }

    pub fn malformed(e: DecodeError) -> CallError {
        CallError::Protocol(format!("malformed response body: {e}"))
    }

    /// `method`'s return value; `null` reads as [`Value::Unit`], which
    /// [`Method::returned`] then accepts only for a `void` method.
    pub fn read_value(dec: &mut Decoder<'_>, method: Method) -> Result<Value, CallError> {
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

    /// A list of orders in any list form: untyped (Caucho, Dubbo 3's
    /// hessian-lite) or typed `java.util.ArrayList` (com.alibaba
    /// hessian-lite), fixed or variable length.
    pub fn read_orders(dec: &mut Decoder<'_>) -> Result<Vec<contract::Order>, CallError> {
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

    /// An `rpclab.contract.Order`, fields matched by name (any order;
    /// unknown fields skipped; a missing one keeps Java's default).
    pub fn read_order(dec: &mut Decoder<'_>) -> Result<contract::Order, CallError> {
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

    /// A `String` field; `null` reads as empty (verification then reports
    /// the difference).
    fn read_field_string(dec: &mut Decoder<'_>, out: &mut String) -> Result<(), DecodeError> {
        if dec.try_read_null()? {
            out.clear();
            Ok(())
        } else {
            dec.read_string_into(out)
        }
    }

    /// About the bytes `value` takes in Hessian (an argument's share of a
    /// request's first capacity, so that encoding does not reallocate).
    pub fn value_capacity(value: &Value) -> usize {
        match value {
            Value::Order(_) => 256,
            Value::Orders(orders) => 160 + orders.len() * 64,
            // ASCII: one byte per char, plus 3 per 32 Ki-char chunk.
            Value::Str(s) => s.len() + s.len() / 8192 + 8,
            Value::Unit => 0,
        }
    }

    /// A thrown `Throwable` as text ([`exception_text`](super::exception_text)).
    pub fn exception_text(value: &HValue) -> String {
        super::exception_text(
            value,
            |v| match v {
                HValue::Object(obj) => Some(Thrown {
                    class: obj.class_name(),
                    message: match obj.get("detailMessage") {
                        Some(HValue::String(m)) => Some(m.into()),
                        _ => None,
                    },
                    // A Throwable without a cause has `cause = this`: a reference.
                    cause: obj.get("cause"),
                }),
                _ => None,
            },
            |v| format!("{v:?}"),
        )
    }
}

/// The contract's values in Java Object Serialization (the `javaser`
/// crate), as Dubbo's java serializations and RMI marshal them.
pub mod serialization {
    use super::ORDER_CLASS;
    use javaser::{ClassDesc, FieldDesc, SC_SERIALIZABLE};
    use std::sync::OnceLock;

    /// `Order`'s `serialVersionUID` (contract/java/rpclab/contract/Order.java).
    pub const ORDER_SUID: i64 = 1;

    /// `rpclab.contract.Order`'s class descriptor, built once (`ClassDesc`
    /// sorts the fields as Java does).
    pub fn order_desc() -> &'static ClassDesc {
        static DESC: OnceLock<ClassDesc> = OnceLock::new();
        DESC.get_or_init(|| {
            ClassDesc::new(
                ORDER_CLASS,
                ORDER_SUID,
                SC_SERIALIZABLE,
                vec![
                    FieldDesc::prim(b'J', "orderId"),
                    FieldDesc::object("phone", "Ljava/lang/String;"),
                    FieldDesc::object("name", "Ljava/lang/String;"),
                    FieldDesc::object("orderNum", "Ljava/lang/String;"),
                    FieldDesc::prim(b'I', "orderDate"),
                    FieldDesc::prim(b'I', "ticketType"),
                    FieldDesc::prim(b'D', "amount"),
                    FieldDesc::prim(b'I', "orderStatus"),
                ],
            )
        })
    }
}
