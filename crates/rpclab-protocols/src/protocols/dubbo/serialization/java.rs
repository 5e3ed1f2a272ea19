//! Java Object Serialization, as Dubbo's `JavaObjectOutput` (`java`, id 3)
//! and `NativeJavaObjectOutput` (`nativejava`, id 7) write it: one
//! `ObjectOutputStream` per body (stream header, then block data and
//! objects), written and read with the `javaser` crate.
//!
//! The two differ only in framing: `java` writes a string as an `int`
//! length (`-1` for null) before `writeUTF`, and an object as a byte (`0`
//! null, `1` present) before `writeObject`; `nativejava` calls
//! `ObjectOutputStream.writeUTF` / `writeObject` directly.
//!
//! The contract's `Order` is written with the class descriptor of
//! `contract/java/rpclab/contract/Order.java` (`serialVersionUID = 1`,
//! fields in Java's descriptor order), built once.

use super::{ObjectInput, ObjectOutput, Serialization};
use crate::java_contract::serialization::order_desc;
use crate::java_contract::{exception_text, Method, Thrown, ORDER_CLASS};
use crate::protocol::CallError;
use javaser::java::{array_list_desc, array_list_elements, hash_map_desc};
use javaser::{ClassDesc, DecodeError, Decoder, EncodeError, Encoder, Value as JValue};
use rpclab_model::contract::{self, Value};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// `JavaObjectOutput`'s id.
pub const JAVA_ID: u8 = 3;
/// `NativeJavaObjectOutput`'s id.
pub const NATIVE_JAVA_ID: u8 = 7;

/// Java Object Serialization, framed as `java` or `nativejava`.
#[derive(Debug)]
pub struct Java {
    /// `java`'s length and null-flag prefixes.
    framed: bool,
}

impl Serialization for Java {
    const NAMES: &'static [&'static str] = &["java", "nativejava"];
    type Output<'a> = Output<'a>;
    type Input<'a> = Input<'a>;

    fn new(name: &str, _: &BTreeMap<String, String>) -> Result<Self, CallError> {
        Ok(Java {
            framed: name == "java",
        })
    }

    fn id(&self) -> u8 {
        if self.framed {
            JAVA_ID
        } else {
            NATIVE_JAVA_ID
        }
    }

    fn output<'a>(&'a self, out: &'a mut Vec<u8>) -> Output<'a> {
        // The encoder owns its buffer: lend it `out`'s and give it back in
        // `finish`, so the body lands behind the header without a copy.
        let enc = Encoder::with_buffer(std::mem::take(out));
        Output {
            out,
            enc,
            framed: self.framed,
        }
    }

    fn input<'a>(&'a self, body: &'a [u8]) -> Result<Input<'a>, CallError> {
        Ok(Input {
            dec: Decoder::new(body).map_err(malformed)?,
            framed: self.framed,
        })
    }
}

fn array_list() -> &'static ClassDesc {
    static DESC: OnceLock<ClassDesc> = OnceLock::new();
    DESC.get_or_init(array_list_desc)
}

fn hash_map() -> &'static ClassDesc {
    static DESC: OnceLock<ClassDesc> = OnceLock::new();
    DESC.get_or_init(hash_map_desc)
}

pub struct Output<'a> {
    out: &'a mut Vec<u8>,
    enc: Encoder,
    framed: bool,
}

fn encoding(e: EncodeError) -> CallError {
    CallError::Protocol(format!("encoding the request: {e}"))
}

impl Output<'_> {
    /// `writeObject`'s presence flag (`java` only).
    fn present(&mut self) {
        if self.framed {
            self.enc.write_byte(1);
        }
    }
}

impl ObjectOutput for Output<'_> {
    fn write_utf(&mut self, s: &str) -> Result<(), CallError> {
        if self.framed {
            // `String.length()`: UTF-16 units.
            self.enc.write_int(s.encode_utf16().count() as i32);
        }
        self.enc.write_utf(s).map_err(encoding)
    }

    fn write_argument(&mut self, argument: &Value) -> Result<(), CallError> {
        if let Value::Unit = argument {
            return self.write_null();
        }
        self.present();
        match argument {
            Value::Str(s) => {
                self.enc.write_string(s);
                Ok(())
            }
            Value::Order(order) => write_order(&mut self.enc, order),
            Value::Orders(orders) => write_orders(&mut self.enc, orders),
            Value::Unit => unreachable!("handled above"),
        }
        .map_err(encoding)
    }

    fn write_null(&mut self) -> Result<(), CallError> {
        if self.framed {
            self.enc.write_byte(0);
        } else {
            self.enc.write_null();
        }
        Ok(())
    }

    fn write_attachments(&mut self, attachments: &[(&str, &str)]) -> Result<(), CallError> {
        self.present();
        write_string_map(&mut self.enc, attachments).map_err(encoding)
    }

    fn finish(self) -> Result<(), CallError> {
        *self.out = self.enc.finish();
        Ok(())
    }
}

/// An `Order` object: fields in descriptor order (primitives by name, then
/// objects by name), as `defaultWriteObject` writes them.
fn write_order(enc: &mut Encoder, order: &contract::Order) -> Result<(), EncodeError> {
    enc.begin_object(order_desc())?;
    for field in &order_desc().fields {
        match field.name.as_str() {
            "orderId" => enc.write_long(order.order_id),
            "orderDate" => enc.write_int(order.order_date),
            "ticketType" => enc.write_int(order.ticket_type),
            "amount" => enc.write_double(order.amount),
            "orderStatus" => enc.write_int(order.order_status),
            "phone" => {
                enc.write_string(&order.phone);
            }
            "name" => {
                enc.write_string(&order.name);
            }
            "orderNum" => {
                enc.write_string(&order.order_num);
            }
            other => unreachable!("Order has no field {other}"),
        }
    }
    enc.end_object()
}

/// An `ArrayList`: its `size` field, then (its `writeObject` data) the
/// capacity as an int and the elements.
fn write_orders(enc: &mut Encoder, orders: &[contract::Order]) -> Result<(), EncodeError> {
    enc.begin_object(array_list())?;
    enc.write_int(orders.len() as i32);
    enc.begin_custom_data();
    enc.write_int(orders.len() as i32);
    for order in orders {
        write_order(enc, order)?;
    }
    enc.end_custom_data()?;
    enc.end_object()
}

/// A `HashMap<String, String>` as Java writes one: `loadFactor` and
/// `threshold` fields, then the bucket count, the size and the entries.
fn write_string_map(enc: &mut Encoder, entries: &[(&str, &str)]) -> Result<(), EncodeError> {
    // What `new HashMap<>()` holds after these puts: capacity 16 (a power
    // of two above size / 0.75), threshold 12.
    let mut buckets = 16usize;
    while entries.len() as f64 > buckets as f64 * 0.75 {
        buckets *= 2;
    }
    enc.begin_object(hash_map())?;
    enc.write_float(0.75);
    enc.write_int((buckets as f64 * 0.75) as i32);
    enc.begin_custom_data();
    enc.write_int(buckets as i32);
    enc.write_int(entries.len() as i32);
    // A value equal to an earlier one is written as a back-reference, as
    // Java does when a consumer puts the same `String` instance twice
    // (`path` and `interface` both hold the service name).
    let mut written: Vec<(&str, u32)> = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        enc.write_string(k);
        match written.iter().find(|(s, _)| s == v) {
            Some((_, handle)) => enc.write_reference(*handle),
            None => {
                let handle = enc.write_string(v);
                written.push((v, handle));
            }
        }
    }
    enc.end_custom_data()?;
    enc.end_object()
}

pub struct Input<'a> {
    dec: Decoder<'a>,
    framed: bool,
}

fn malformed(e: DecodeError) -> CallError {
    CallError::Protocol(format!("malformed response body: {e}"))
}

impl<'a> Input<'a> {
    /// `readObject`, `None` for null (`java`'s 0 flag or `TC_NULL`).
    fn read_object(&mut self) -> Result<Option<JValue>, CallError> {
        if self.framed && self.dec.read_byte().map_err(malformed)? == 0 {
            return Ok(None);
        }
        match self.dec.read_object().map_err(malformed)? {
            JValue::Null => Ok(None),
            v => Ok(Some(v)),
        }
    }

    /// A string value, or a back-reference to one.
    fn string(&self, v: &JValue) -> Option<String> {
        match v {
            JValue::String(s) => Some(s.clone()),
            JValue::Reference(h) => self.dec.handle_string(*h).map(str::to_owned),
            _ => None,
        }
    }

    fn order(&self, v: &JValue) -> Result<contract::Order, CallError> {
        let JValue::Object(obj) = v else {
            return Err(wrong(format!("expected an {ORDER_CLASS}, got {}", kind(v))));
        };
        if obj.desc.name != ORDER_CLASS {
            return Err(wrong(format!(
                "expected an object of class {ORDER_CLASS}, got {}",
                obj.desc.name
            )));
        }
        let prim = |name: &str| obj.get(name);
        let string = |name: &str| match obj.get(name) {
            None | Some(JValue::Null) => Ok(String::new()),
            Some(v) => self
                .string(v)
                .ok_or_else(|| wrong(format!("field {name} is {}", kind(v)))),
        };
        let mut order = contract::Order::default();
        if let Some(JValue::Long(v)) = prim("orderId") {
            order.order_id = *v;
        }
        if let Some(JValue::Int(v)) = prim("orderDate") {
            order.order_date = *v;
        }
        if let Some(JValue::Int(v)) = prim("ticketType") {
            order.ticket_type = *v;
        }
        if let Some(JValue::Double(v)) = prim("amount") {
            order.amount = *v;
        }
        if let Some(JValue::Int(v)) = prim("orderStatus") {
            order.order_status = *v;
        }
        order.phone = string("phone")?;
        order.name = string("name")?;
        order.order_num = string("orderNum")?;
        Ok(order)
    }
}

fn wrong(message: String) -> CallError {
    CallError::WrongResponse(message)
}

/// What a decoded value is, for messages.
fn kind(v: &JValue) -> String {
    match v {
        JValue::Object(o) => format!("an object of class {}", o.desc.name),
        JValue::Array(a) => format!("an array {}", a.desc.name),
        JValue::String(_) => "a string".to_owned(),
        JValue::Reference(h) => format!("a reference to handle {h:#x}"),
        other => format!("{other:?}"),
    }
}

impl ObjectInput for Input<'_> {
    fn read_response_type(&mut self) -> Result<i32, CallError> {
        self.dec.read_byte().map(i32::from).map_err(malformed)
    }

    fn read_value(&mut self, method: Method) -> Result<Value, CallError> {
        let Some(v) = self.read_object()? else {
            return Ok(Value::Unit);
        };
        match method {
            Method::Empty => Err(wrong("`empty` returned a value".to_owned())),
            Method::EchoString | Method::Hello => self
                .string(&v)
                .map(Value::Str)
                .ok_or_else(|| wrong(format!("expected a string, got {}", kind(&v)))),
            Method::EchoOrder => self.order(&v).map(Value::Order),
            Method::EchoOrders => {
                let items = array_list_elements(&v)
                    .ok_or_else(|| wrong(format!("expected an ArrayList, got {}", kind(&v))))?;
                items
                    .into_iter()
                    .map(|item| self.order(item))
                    .collect::<Result<_, _>>()
                    .map(Value::Orders)
            }
        }
    }

    fn read_exception(&mut self) -> CallError {
        match self.read_object() {
            Ok(Some(v)) => exception_error(&v, self),
            Ok(None) => CallError::Server("exception (null)".to_owned()),
            Err(e) => CallError::Server(format!(
                "the server threw an exception this client cannot decode: {e}"
            )),
        }
    }

    fn skip_object(&mut self) -> Result<(), CallError> {
        self.read_object().map(drop)
    }

    fn read_utf(&mut self) -> Result<Option<String>, CallError> {
        if self.framed && self.dec.read_int().map_err(malformed)? < 0 {
            return Ok(None);
        }
        self.dec.read_utf().map(Some).map_err(malformed)
    }
}

/// A thrown `Throwable` as a server error: `<class>: <detailMessage>`, with
/// its causes'.
fn exception_error(value: &JValue, input: &Input<'_>) -> CallError {
    CallError::Server(exception_text(
        value,
        |v| match v {
            JValue::Object(obj) => Some(Thrown {
                class: &obj.desc.name,
                message: obj
                    .get("detailMessage")
                    .and_then(|m| input.string(m))
                    .map(Into::into),
                // Without a cause, Throwable's `cause` is itself: a
                // reference, which ends the walk.
                cause: obj.get("cause"),
            }),
            _ => None,
        },
        kind,
    ))
}
