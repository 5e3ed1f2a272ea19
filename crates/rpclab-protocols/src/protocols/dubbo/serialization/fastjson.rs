//! fastjson 1 text JSON, as Dubbo 2.6's `FastJsonObjectOutput` /
//! `FastJsonObjectInput` write and read it (serialization id 6): every
//! `ObjectOutput` call is one JSON text (fastjson's `JSONSerializer`, no
//! class names) followed by a line break (`PrintWriter.println`), and every
//! read is `JSON.parseObject(readLine(), type)`. Dubbo 3 dropped it for
//! fastjson2 JSONB ([`fastjson2`](super::fastjson2)).
//!
//! The text is plain JSON, so serde_json reads it. The client writes it the
//! way fastjson does (an `Order`'s properties sorted by name, numbers in
//! Java's shortest form), with every non-ASCII character escaped as
//! `\uXXXX`: the provider's `OutputStreamWriter`/`InputStreamReader` use
//! the JVM's default charset, which on Java 17 in a container may not be
//! UTF-8, and escaped text reads the same under any ASCII-compatible one.

use super::{stateless_serialization, ObjectInput, ObjectOutput, Serialization};
use crate::java_contract::{exception_text, Method, Thrown};
use crate::protocol::CallError;
use rpclab_model::contract::{self, Value};
use serde::Deserialize;
use std::fmt::Write as _;

/// Dubbo's serialization id of fastjson.
pub const ID: u8 = 6;

/// The fastjson (1, text JSON) serialization.
#[derive(Debug, Default)]
pub struct Fastjson;

impl Serialization for Fastjson {
    stateless_serialization!(names: ["fastjson"], id: ID);

    fn output<'a>(&'a self, out: &'a mut Vec<u8>) -> Output<'a> {
        Output(out)
    }

    fn input<'a>(&'a self, body: &'a [u8]) -> Result<Input<'a>, CallError> {
        Ok(Input(body))
    }
}

pub struct Output<'a>(&'a mut Vec<u8>);

/// A JSON string: `"` and `\` escaped, control characters as fastjson
/// escapes them, everything outside ASCII as `\uXXXX` (UTF-16 units).
fn write_string(out: &mut Vec<u8>, s: &str) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    let mut plain = 0;
    let bytes = s.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' {
            continue;
        }
        out.extend_from_slice(&bytes[plain..i]);
        plain = i + 1;
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b if b < 0x80 => {
                let _ = write!(Hex(out), "\\u{:04x}", b);
            }
            _ => {
                // the start of a multi-byte character: escape the whole
                // character; its continuation bytes are skipped below
                if b & 0xc0 != 0x80 {
                    let c = s[i..].chars().next().expect("a char starts here");
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        let _ = write!(Hex(out), "\\u{:04x}", u);
                    }
                }
            }
        }
    }
    out.extend_from_slice(&bytes[plain..]);
    out.push(b'"');
}

/// `fmt::Write` into a byte vector.
struct Hex<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Hex<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// A `double` as Java's `Double.toString` would make it readable back:
/// Rust's shortest round-trip form is the same number.
fn write_double(out: &mut Vec<u8>, d: f64) {
    if d.is_finite() {
        let _ = write!(Hex(out), "{d:?}");
    } else {
        // fastjson writes NaN and infinities as null
        out.extend_from_slice(b"null");
    }
}

/// An `rpclab.contract.Order` as fastjson 1 serializes a JavaBean: its
/// properties sorted by name, no class name.
fn write_order(out: &mut Vec<u8>, o: &contract::Order) {
    out.extend_from_slice(b"{\"amount\":");
    write_double(out, o.amount);
    out.extend_from_slice(b",\"name\":");
    write_string(out, &o.name);
    let _ = write!(
        Hex(out),
        ",\"orderDate\":{},\"orderId\":{}",
        o.order_date,
        o.order_id
    );
    out.extend_from_slice(b",\"orderNum\":");
    write_string(out, &o.order_num);
    let _ = write!(Hex(out), ",\"orderStatus\":{}", o.order_status);
    out.extend_from_slice(b",\"phone\":");
    write_string(out, &o.phone);
    let _ = write!(Hex(out), ",\"ticketType\":{}}}", o.ticket_type);
}

impl ObjectOutput for Output<'_> {
    fn write_utf(&mut self, s: &str) -> Result<(), CallError> {
        write_string(self.0, s);
        self.0.push(b'\n');
        Ok(())
    }

    fn write_argument(&mut self, argument: &Value) -> Result<(), CallError> {
        match argument {
            Value::Order(o) => write_order(self.0, o),
            Value::Orders(orders) => {
                self.0.push(b'[');
                for (i, o) in orders.iter().enumerate() {
                    if i > 0 {
                        self.0.push(b',');
                    }
                    write_order(self.0, o);
                }
                self.0.push(b']');
            }
            Value::Str(s) => write_string(self.0, s),
            Value::Unit => self.0.extend_from_slice(b"null"),
        }
        self.0.push(b'\n');
        Ok(())
    }

    fn write_null(&mut self) -> Result<(), CallError> {
        self.0.extend_from_slice(b"null\n");
        Ok(())
    }

    fn write_attachments(&mut self, attachments: &[(&str, &str)]) -> Result<(), CallError> {
        self.0.push(b'{');
        for (i, (k, v)) in attachments.iter().enumerate() {
            if i > 0 {
                self.0.push(b',');
            }
            write_string(self.0, k);
            self.0.push(b':');
            write_string(self.0, v);
        }
        self.0.extend_from_slice(b"}\n");
        Ok(())
    }

    fn finish(self) -> Result<(), CallError> {
        Ok(())
    }
}

pub struct Input<'a>(&'a [u8]);

fn malformed(what: impl std::fmt::Display) -> CallError {
    CallError::Protocol(format!("malformed fastjson response body: {what}"))
}

impl<'a> Input<'a> {
    /// `BufferedReader.readLine`: up to `\n`, `\r` or `\r\n`.
    fn line(&mut self) -> Result<&'a str, CallError> {
        if self.0.is_empty() {
            return Err(malformed("the body ended before the next value's line"));
        }
        let end = self
            .0
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .unwrap_or(self.0.len());
        let line = &self.0[..end];
        let mut rest = &self.0[end..];
        if rest.starts_with(b"\r\n") {
            rest = &rest[2..];
        } else if !rest.is_empty() {
            rest = &rest[1..];
        }
        self.0 = rest;
        std::str::from_utf8(line).map_err(|e| malformed(format!("a line that is not UTF-8 ({e})")))
    }

    fn parse<T: Deserialize<'a>>(&mut self, what: &str) -> Result<T, CallError> {
        let line = self.line()?;
        serde_json::from_str(line).map_err(|e| malformed(format!("{what}: {e}")))
    }
}

/// The JSON of an `rpclab.contract.Order` (missing properties keep Java's
/// default, as `JSON.parseObject(json, Order.class)` leaves them).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OrderJson {
    #[serde(default)]
    order_id: i64,
    #[serde(default)]
    phone: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    order_num: Option<String>,
    #[serde(default)]
    order_date: i32,
    #[serde(default)]
    ticket_type: i32,
    #[serde(default)]
    amount: f64,
    #[serde(default)]
    order_status: i32,
}

impl From<OrderJson> for contract::Order {
    fn from(o: OrderJson) -> Self {
        contract::Order {
            order_id: o.order_id,
            phone: o.phone.unwrap_or_default(),
            name: o.name.unwrap_or_default(),
            order_num: o.order_num.unwrap_or_default(),
            order_date: o.order_date,
            ticket_type: o.ticket_type,
            amount: o.amount,
            order_status: o.order_status,
        }
    }
}

impl ObjectInput for Input<'_> {
    fn read_response_type(&mut self) -> Result<i32, CallError> {
        self.parse("the response type")
    }

    fn read_value(&mut self, method: Method) -> Result<Value, CallError> {
        Ok(match method {
            Method::Empty => match self.parse::<serde_json::Value>("the return value")? {
                serde_json::Value::Null => Value::Unit,
                _ => {
                    return Err(CallError::WrongResponse(
                        "`empty` returned a value".to_owned(),
                    ))
                }
            },
            Method::EchoString | Method::Hello => match self.parse::<Option<String>>("a String")? {
                Some(s) => Value::Str(s),
                None => Value::Unit,
            },
            Method::EchoOrder => match self.parse::<Option<OrderJson>>("an Order")? {
                Some(o) => Value::Order(o.into()),
                None => Value::Unit,
            },
            Method::EchoOrders => match self.parse::<Option<Vec<OrderJson>>>("a List<Order>")? {
                Some(list) => Value::Orders(list.into_iter().map(Into::into).collect()),
                None => Value::Unit,
            },
        })
    }

    /// fastjson writes a Throwable as a bean: its `message` (and
    /// `localizedMessage`, `stackTrace`, ...), with `@type` only when the
    /// provider asks for class names; the cause chain as `cause`.
    fn read_exception(&mut self) -> CallError {
        let v = match self.parse::<serde_json::Value>("an exception") {
            Ok(v) => v,
            Err(e) => {
                return CallError::Server(format!(
                    "the server threw an exception this client cannot decode: {e}"
                ))
            }
        };
        CallError::Server(exception_text(
            &v,
            |v| {
                let obj = v.as_object()?;
                Some(Thrown {
                    class: obj
                        .get("@type")
                        .and_then(|t| t.as_str())
                        .unwrap_or("(class not sent)"),
                    message: obj.get("message").and_then(|m| m.as_str()).map(Into::into),
                    cause: obj.get("cause"),
                })
            },
            |v| v.to_string(),
        ))
    }

    fn skip_object(&mut self) -> Result<(), CallError> {
        self.parse::<serde::de::IgnoredAny>("the attachments")
            .map(drop)
    }

    fn read_utf(&mut self) -> Result<Option<String>, CallError> {
        self.parse("a String")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(arg: &Value) -> String {
        let mut out = Vec::new();
        {
            let mut o = Fastjson.output(&mut out);
            o.write_argument(arg).unwrap();
            o.finish().unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    /// The line fastjson 1.2.70's `JSONSerializer` (configured as
    /// `FastJsonObjectOutput` configures it) writes for this Order, then
    /// `println`: copied from the Java library's output, for this ASCII
    /// Order (the client only escapes non-ASCII differently).
    #[test]
    fn order_is_written_as_fastjson_writes_it() {
        let o = crate::protocols::dubbo::serialization::typical_order();
        assert_eq!(
            written(&Value::Order(o)),
            "{\"amount\":99.5,\"name\":\"rpclab\",\"orderDate\":20261129,\"orderId\":1234567890123,\
             \"orderNum\":\"ORD-2026-0001\",\"orderStatus\":1,\"phone\":\"13800138000\",\"ticketType\":2}\n"
        );
    }

    #[test]
    fn strings_are_escaped_to_ascii_and_read_back() {
        let s = "q\"b\\s\n\t\u{1}caf\u{e9} \u{4e16}\u{1f680}";
        let line = written(&Value::Str(s.into()));
        assert!(line.is_ascii(), "{line}");
        assert_eq!(
            line,
            "\"q\\\"b\\\\s\\n\\t\\u0001caf\\u00e9 \\u4e16\\ud83d\\ude80\"\n"
        );
        let mut input = Fastjson.input(line.as_bytes()).unwrap();
        assert_eq!(
            input.read_value(Method::EchoString).unwrap(),
            Value::Str(s.into())
        );
    }

    #[test]
    fn every_argument_round_trips() {
        let args = [
            (Method::EchoOrder, Value::Order(contract::Order::sample(3))),
            (
                Method::EchoOrders,
                Value::Orders((0..20).map(contract::Order::sample).collect()),
            ),
            (Method::EchoOrders, Value::Orders(vec![])),
            (Method::EchoString, Value::Str("x".repeat(1 << 20))),
        ];
        for (method, arg) in args {
            let line = written(&arg);
            let mut input = Fastjson.input(line.as_bytes()).unwrap();
            assert_eq!(input.read_value(method).unwrap(), arg);
        }
    }

    #[test]
    fn a_response_body_reads_to_its_end() {
        // what Dubbo 2.6 writes for a value with attachments, in fastjson
        let body = b"4\n\"hello aa\"\n{\"dubbo\":\"2.0.2\"}\n";
        let mut input = Fastjson.input(body).unwrap();
        assert_eq!(input.read_response_type().unwrap(), 4);
        assert_eq!(
            input.read_value(Method::Hello).unwrap(),
            Value::Str("hello aa".into())
        );
        input.skip_object().unwrap();
        assert!(input.skip_object().is_err());
    }

    #[test]
    fn exceptions_say_class_and_message() {
        let body = b"{\"@type\":\"java.lang.IllegalStateException\",\"localizedMessage\":\"boom\",\"message\":\"boom\",\"stackTrace\":[]}\n";
        let e = Fastjson.input(body).unwrap().read_exception();
        assert!(
            matches!(&e, CallError::Server(m) if m == "exception java.lang.IllegalStateException: boom"),
            "{e:?}"
        );
    }
}
