//! The golden cases on the Rust side: the same names and values as
//! golden/java's rpclab.golden.Cases, a Rust writer for each, and a check
//! that what a reader got is the case.

#![allow(dead_code)]

use fastjson2_jsonb::dubbo::{throwable_summary, ObjectInput, ObjectOutput};
use fastjson2_jsonb::{DecodeError, EncodeError, Value, Writer};
use java_interop::Golden;
pub use java_interop::{Order, ORDER_CLASS};

pub fn golden() -> Golden {
    Golden::of(env!("CARGO_MANIFEST_DIR"))
}

/// The Order as Dubbo's fastjson2 writes and reads it.
pub trait JsonbOrder: Sized {
    /// Written as Dubbo's fastjson2 writes it: class name, fields sorted by
    /// name, Java default values left out except the double.
    fn write(&self, w: &mut Writer) -> Result<(), EncodeError>;

    /// From a value tree (as the reader gives it).
    fn from_value(v: &Value) -> Option<Self>;
}

/// An `int` field under Dubbo's `NotWriteDefaultValue`: left out when zero.
fn write_int_field(w: &mut Writer, name: &str, value: i32) -> Result<(), EncodeError> {
    if value != 0 {
        w.write_field_name(name)?;
        w.write_i32(value);
    }
    Ok(())
}

/// A `String` field: left out when null.
fn write_str_field(w: &mut Writer, name: &str, value: Option<&str>) -> Result<(), EncodeError> {
    if let Some(s) = value {
        w.write_field_name(name)?;
        w.write_str(s)?;
    }
    Ok(())
}

impl JsonbOrder for Order {
    fn write(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_type_name(ORDER_CLASS);
        w.start_object();
        w.write_field_name("amount")?;
        w.write_f64(self.amount);
        write_str_field(w, "name", self.name.as_deref())?;
        write_int_field(w, "orderDate", self.order_date)?;
        if self.order_id != 0 {
            w.write_field_name("orderId")?;
            w.write_i64(self.order_id);
        }
        write_str_field(w, "orderNum", self.order_num.as_deref())?;
        write_int_field(w, "orderStatus", self.order_status)?;
        write_str_field(w, "phone", self.phone.as_deref())?;
        write_int_field(w, "ticketType", self.ticket_type)?;
        w.end_object();
        Ok(())
    }

    fn from_value(v: &Value) -> Option<Self> {
        if v.type_name() != Some(ORDER_CLASS) {
            return None;
        }
        let Value::Bean(fields) = v.untyped() else {
            return None;
        };
        let mut o = Order::default();
        for (k, f) in fields {
            match k.as_str() {
                "orderId" => o.order_id = f.as_i64()?,
                "phone" => o.phone = opt_str(f)?,
                "name" => o.name = opt_str(f)?,
                "orderNum" => o.order_num = opt_str(f)?,
                "orderDate" => o.order_date = i32::try_from(f.as_i64()?).ok()?,
                "ticketType" => o.ticket_type = i32::try_from(f.as_i64()?).ok()?,
                "orderStatus" => o.order_status = i32::try_from(f.as_i64()?).ok()?,
                "amount" => {
                    o.amount = match f {
                        Value::Double(d) => *d,
                        other => other.as_i64()? as f64,
                    }
                }
                _ => return None,
            }
        }
        Some(o)
    }
}

fn opt_str(v: &Value) -> Option<Option<String>> {
    match v {
        Value::Null => Some(None),
        Value::String(s) => Some(Some(s.clone())),
        _ => None,
    }
}

/// One Dubbo ObjectOutput call.
#[derive(Debug, Clone)]
pub enum Step {
    Utf(String),
    Byte(i8),
    Int(i32),
    Long(i64),
    Double(f64),
    Bool(bool),
    Null,
    Obj(Order),
    Orders(Vec<Option<Order>>),
    /// Two references to one Order.
    OrdersShared(Order),
    Attachments(Vec<(String, String)>),
    /// class (as fastjson2 names it) and message; the Rust writer re-encodes
    /// the golden value (the client never writes exceptions)
    Throwable(&'static str, Option<&'static str>),
}

fn utf(s: &str) -> Step {
    Step::Utf(s.to_owned())
}

fn att(pairs: &[(&str, &str)]) -> Step {
    Step::Attachments(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

fn twenty() -> Vec<Option<Order>> {
    (0..20)
        .map(|i: i32| {
            Some(Order {
                order_id: 1000 + i as i64,
                phone: Some(format!("1380013{i}")),
                name: Some(format!("name{i}")),
                order_num: Some(format!("ORD-{i}")),
                order_date: 20260000 + i,
                ticket_type: i % 3,
                amount: i as f64 * 1.5,
                order_status: i % 4,
            })
        })
        .collect()
}

pub fn cases() -> Vec<(&'static str, Vec<Step>)> {
    use Step::*;
    type O = crate::common::Order;
    let head = |m: &str, d: &str| {
        vec![
            utf("2.0.2"),
            utf("rpclab.contract.BenchService"),
            utf("0.0.0"),
            utf(m),
            utf(d),
        ]
    };
    let req_att = [
        ("path", "rpclab.contract.BenchService"),
        ("interface", "rpclab.contract.BenchService"),
    ];
    let many: Vec<(String, String)> = (0..40)
        .map(|i| (format!("key{i}"), format!("value {i} \u{e9}")))
        .collect();
    vec![
        ("string_empty", vec![utf("")]),
        ("string_ascii", vec![utf("hello")]),
        ("string_fix_max", vec![utf(&"a".repeat(47))]),
        ("string_fix_over", vec![utf(&"a".repeat(48))]),
        ("string_ascii_1k", vec![utf(&"0123456789abcdef".repeat(64))]),
        ("string_ascii_100k", vec![utf(&"x".repeat(100 * 1024))]),
        ("string_latin1", vec![utf("caf\u{e9} \u{fc}ber \u{ff}")]),
        (
            "string_cjk",
            vec![utf("\u{4f60}\u{597d}\u{ff0c}\u{4e16}\u{754c}")],
        ),
        (
            "string_mixed",
            vec![utf("order \u{2116} 42 \u{2014} \u{e9}t\u{e9}")],
        ),
        ("string_emoji", vec![utf("rocket \u{1f680}!")]),
        (
            "string_cjk_long",
            vec![utf(&"\u{6570}\u{636e}".repeat(600))],
        ),
        ("string_control", vec![utf("tab\tnl\nnul\u{0}del\u{7f}")]),
        ("request_head", head("echoOrder", "Lrpclab/contract/Order;")),
        ("descriptor_empty", vec![utf("")]),
        (
            "byte_values",
            [0, 1, 2, 3, 4, 5, -1, 127, -128]
                .into_iter()
                .map(Byte)
                .collect(),
        ),
        (
            "int_values",
            [
                0,
                1,
                -1,
                -16,
                47,
                48,
                -17,
                -2048,
                2047,
                2048,
                -2049,
                262143,
                -262144,
                262144,
                i32::MAX,
                i32::MIN,
            ]
            .into_iter()
            .map(Int)
            .collect(),
        ),
        (
            "long_values",
            [
                0,
                15,
                -8,
                16,
                -9,
                2047,
                -2048,
                2048,
                262143,
                -262144,
                262144,
                i32::MAX as i64,
                i32::MIN as i64,
                1 + i32::MAX as i64,
                i64::MAX,
                i64::MIN,
            ]
            .into_iter()
            .map(Long)
            .collect(),
        ),
        (
            "double_values",
            [
                0.0,
                1.0,
                -1.0,
                2.0,
                99.5,
                1e300,
                123456789.0,
                1e18,
                f64::MAX,
                f64::from_bits(1),
                f64::NAN,
                f64::INFINITY,
                0.1,
            ]
            .into_iter()
            .map(Double)
            .collect(),
        ),
        ("bool_values", vec![Bool(true), Bool(false)]),
        ("null", vec![Null]),
        ("order_typical", vec![Obj(O::typical())]),
        ("order_default", vec![Obj(O::default())]),
        ("order_empty_strings", vec![Obj(O::empty_strings())]),
        (
            "order_extremes",
            vec![Obj(O {
                order_id: i64::MIN,
                phone: Some("\u{e9}\u{4e16}\u{1f680}".into()),
                name: Some("n".repeat(300)),
                order_num: Some("x".into()),
                order_date: i32::MIN,
                ticket_type: i32::MAX,
                amount: -1.25e-7,
                order_status: -1,
            })],
        ),
        (
            "order_max",
            vec![Obj(O {
                order_id: i64::MAX,
                phone: Some("1".into()),
                name: None,
                order_num: Some("o".into()),
                order_date: 1,
                ticket_type: -1,
                amount: f64::MAX,
                order_status: i32::MIN,
            })],
        ),
        ("orders_empty", vec![Orders(vec![])]),
        ("orders_one", vec![Orders(vec![Some(O::typical())])]),
        ("orders_twenty", vec![Orders(twenty())]),
        (
            "orders_with_null",
            vec![Orders(vec![Some(O::typical()), None, Some(O::default())])],
        ),
        ("orders_shared", vec![OrdersShared(O::typical())]),
        ("attachments_empty", vec![att(&[])]),
        (
            "attachments",
            vec![att(&[
                ("path", "rpclab.contract.BenchService"),
                ("interface", "rpclab.contract.BenchService"),
                ("version", "0.0.0"),
            ])],
        ),
        ("attachments_many", vec![Attachments(many)]),
        ("request_echo_order", {
            let mut v = head("echoOrder", "Lrpclab/contract/Order;");
            v.push(Obj(O::typical()));
            v.push(att(&req_att));
            v
        }),
        ("request_echo_orders", {
            let mut v = head("echoOrders", "Ljava/util/List;");
            v.push(Orders(twenty()));
            v.push(att(&req_att));
            v
        }),
        ("request_empty", {
            let mut v = head("empty", "");
            v.push(att(&req_att));
            v
        }),
        (
            "response_value",
            vec![Byte(4), utf("hello"), att(&[("dubbo", "2.0.2")])],
        ),
        ("response_null", vec![Byte(5), att(&[("dubbo", "2.0.2")])]),
        (
            "response_order",
            vec![Byte(4), Obj(O::typical()), att(&[("dubbo", "2.0.2")])],
        ),
        (
            "throwable_plain",
            vec![
                Byte(3),
                Throwable("IllegalStateException", Some("order 42 not found")),
                att(&[("dubbo", "2.0.2")]),
            ],
        ),
        (
            "throwable_traced",
            vec![Throwable(
                "IllegalArgumentException",
                Some("bad \u{e9} input"),
            )],
        ),
        (
            "throwable_no_message",
            vec![Throwable("IllegalStateException", None)],
        ),
        (
            "throwable_cause",
            vec![Throwable("RuntimeException", Some("wrapped"))],
        ),
    ]
}

pub fn case(name: &str) -> Vec<Step> {
    cases()
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no case {name}"))
        .1
}

pub fn case_names() -> Vec<&'static str> {
    cases().into_iter().map(|(n, _)| n).collect()
}

/// Writes a case with the Rust API (the way the client writes).
pub fn rust_write(name: &str) -> Vec<u8> {
    let golden = golden().vector(name);
    let mut golden_in = ObjectInput::new(&golden);
    let mut out = ObjectOutput::new();
    for step in case(name) {
        // keep the golden cursor in step, for the throwables
        let golden_doc = golden_in.read_value().expect("golden vector decodes");
        match step {
            Step::Utf(s) => out.write_utf(&s),
            Step::Byte(b) => out.write_byte(b),
            Step::Int(i) => out.write_value(&Value::Int(i)),
            Step::Long(l) => out.write_value(&Value::Long(l)),
            Step::Double(d) => out.write_value(&Value::Double(d)),
            Step::Bool(b) => out.write_value(&Value::Bool(b)),
            Step::Null => out.write_value(&Value::Null),
            Step::Obj(o) => out.write_object(|w| o.write(w)),
            Step::Orders(list) => out.write_object(|w| {
                w.start_array(list.len())?;
                for o in &list {
                    match o {
                        Some(o) => o.write(w)?,
                        None => w.write_null(),
                    }
                }
                Ok(())
            }),
            Step::OrdersShared(o) => out.write_object(|w| {
                w.start_array(2)?;
                o.write(w)?;
                w.write_reference("$[0]")
            }),
            Step::Attachments(pairs) => {
                out.write_string_map(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            }
            Step::Throwable(..) => out.write_value(&golden_doc),
        }
        .expect("write");
    }
    out.into_inner()
}

/// Reads a case with the Rust API and checks it; Err says what differs.
pub fn rust_check(name: &str, bytes: &[u8]) -> Result<(), String> {
    let mut input = ObjectInput::new(bytes);
    for (i, step) in case(name).into_iter().enumerate() {
        let err = |m: String| format!("{name} step {i}: {m}");
        let got = match &step {
            Step::Utf(s) => {
                let g = input.read_utf().map_err(|e| err(e.to_string()))?;
                if g != *s {
                    return Err(err(format!(
                        "string of {} chars differs",
                        g.chars().count()
                    )));
                }
                continue;
            }
            Step::Byte(b) => {
                let g = input.read_byte().map_err(|e| err(e.to_string()))?;
                if g != *b {
                    return Err(err(format!("byte {g} != {b}")));
                }
                continue;
            }
            _ => input
                .read_value()
                .map_err(|e: DecodeError| err(e.to_string()))?,
        };
        let ok = match &step {
            Step::Int(v) => got == Value::Int(*v),
            Step::Long(v) => got == Value::Long(*v),
            Step::Double(v) => matches!(got, Value::Double(g) if g.to_bits() == v.to_bits()),
            Step::Bool(v) => got == Value::Bool(*v),
            Step::Null => got == Value::Null,
            Step::Obj(o) => Order::from_value(&got).as_ref() == Some(o),
            Step::Orders(list) => match &got {
                Value::Array(items) => {
                    items.len() == list.len()
                        && items.iter().zip(list).all(|(g, w)| match w {
                            Some(o) => Order::from_value(g).as_ref() == Some(o),
                            None => *g == Value::Null,
                        })
                }
                _ => false,
            },
            Step::OrdersShared(o) => match &got {
                Value::Array(items) => {
                    items.len() == 2
                        && Order::from_value(&items[0]).as_ref() == Some(o)
                        && items[1] == Value::Reference("$[0]".into())
                }
                _ => false,
            },
            Step::Attachments(pairs) => match &got {
                Value::Object(fields) => {
                    let mut g: Vec<(String, String)> = fields
                        .iter()
                        .map(|(k, v)| {
                            (k.clone(), v.as_str().unwrap_or("<not a string>").to_owned())
                        })
                        .collect();
                    let mut w = pairs.clone();
                    g.sort();
                    w.sort();
                    g == w
                }
                _ => false,
            },
            Step::Throwable(class, message) => {
                throwable_summary(&got) == Some((class.to_string(), message.map(str::to_owned)))
            }
            Step::Utf(_) | Step::Byte(_) => unreachable!(),
        };
        if !ok {
            return Err(err(format!("want {step:?}, got {got:?}")));
        }
    }
    if !input.is_at_end() {
        return Err(format!(
            "{name}: {} bytes left over",
            input.remaining().len()
        ));
    }
    Ok(())
}
