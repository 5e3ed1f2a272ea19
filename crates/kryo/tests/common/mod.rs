//! Shared by golden.rs and java_interop.rs: the golden cases of
//! golden/java's Cases.java, as Rust values, written with the Rust API.

#![allow(dead_code)]

use java_interop::Golden;
pub use java_interop::Order;
use kryo::{Decoder, Dialect, Encoder, FieldType, JavaException, Object, Schema, Schemas, Value};

pub const ORDER: &str = "rpclab.contract.Order";

pub fn golden() -> Golden {
    Golden::of(env!("CARGO_MANIFEST_DIR"))
}

/// The two Kryo lines and their vector folders.
pub fn dialects() -> [(&'static str, Dialect); 2] {
    [("kryo4", Dialect::DUBBO_2_6), ("kryo5", Dialect::DUBBO_3)]
}

pub fn order_schema() -> Schema {
    use FieldType::*;
    Schema::new(
        ORDER,
        [
            ("orderId", Long),
            ("phone", String),
            ("name", String),
            ("orderNum", String),
            ("orderDate", Int),
            ("ticketType", Int),
            ("amount", Double),
            ("orderStatus", Int),
        ],
    )
}

pub fn schemas() -> Schemas {
    Schemas::new().with(order_schema())
}

/// The Order as a Kryo bean: its fields in Kryo's order (sorted by name).
pub fn order_value(order: &Order) -> Value {
    let text = |v: &Option<String>| v.as_deref().map(Value::string).unwrap_or(Value::Null);
    Value::Object(Box::new(Object {
        class: ORDER.into(),
        fields: vec![
            ("amount".into(), Value::Double(order.amount)),
            ("name".into(), text(&order.name)),
            ("orderDate".into(), Value::Int(order.order_date)),
            ("orderId".into(), Value::Long(order.order_id)),
            ("orderNum".into(), text(&order.order_num)),
            ("orderStatus".into(), Value::Int(order.order_status)),
            ("phone".into(), text(&order.phone)),
            ("ticketType".into(), Value::Int(order.ticket_type)),
        ],
    }))
}

/// Cases.order(id).
pub fn order(id: i64) -> Value {
    order_value(&Order {
        order_id: id,
        phone: Some("13800138000".into()),
        name: Some(format!("n\u{e4}me-{id}")),
        order_num: Some(format!("ORD-{id}")),
        order_date: 20240131,
        ticket_type: 2,
        amount: 99.5 + id as f64,
        order_status: 1,
    })
}

/// Cases.ascii(n).
pub fn ascii(n: usize) -> String {
    (0..n)
        .map(|i| (b' ' + 1 + (i % 94) as u8) as char)
        .collect()
}

/// A HashMap<String, String> built by put()s in this order, in Java's
/// iteration order.
pub fn hash_map(puts: &[(&str, &str)]) -> Value {
    let keys: Vec<&str> = puts.iter().map(|(k, _)| *k).collect();
    Value::Map(
        kryo::java::hash_map_order(&keys)
            .into_iter()
            .map(|i| (Value::string(puts[i].0), Value::string(puts[i].1)))
            .collect(),
    )
}

pub fn attachments() -> Value {
    hash_map(&[
        ("path", "rpclab.contract.BenchService"),
        ("interface", "rpclab.contract.BenchService"),
        ("version", "0.0.0"),
        ("timeout", "3000"),
    ])
}

pub fn response_attachments() -> Value {
    hash_map(&[("dubbo", "2.0.2")])
}

fn exc(class: &str, message: Option<&str>, cause: Option<JavaException>) -> JavaException {
    JavaException {
        class: class.into(),
        message: message.map(str::to_owned),
        cause: cause.map(Box::new),
    }
}

/// One step of a case.
#[derive(Debug, Clone)]
pub enum Step {
    Bool(bool),
    Byte(i8),
    Short(i16),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    Bytes(Option<Vec<u8>>),
    Utf(Option<String>),
    Obj(Value),
    /// A Throwable: read only (the crate does not write exceptions).
    Exc(JavaException),
    VarInt(i32, bool),
    VarLong(i64, bool),
}

fn utf(s: &str) -> Step {
    Step::Utf(Some(s.into()))
}

fn request(method: &str, desc: &str, args: Vec<Value>) -> Vec<Step> {
    let mut v = vec![
        utf("2.0.2"),
        utf("rpclab.contract.BenchService"),
        utf("0.0.0"),
        utf(method),
        utf(desc),
    ];
    v.extend(args.into_iter().map(Step::Obj));
    v.push(Step::Obj(attachments()));
    v
}

/// Every case of Cases.java, by name.
pub fn cases() -> Vec<(&'static str, Vec<Step>)> {
    use Step::*;
    let mut lengths = Vec::new();
    for n in [31, 32, 33, 63, 64, 65, 127, 128, 8190, 8191, 8192] {
        lengths.push(Utf(Some(ascii(n))));
    }
    let mut varints = Vec::new();
    for v in [
        0,
        1,
        -1,
        63,
        64,
        127,
        128,
        8191,
        8192,
        16383,
        16384,
        (1 << 21) - 1,
        1 << 21,
        (1 << 28) - 1,
        1 << 28,
        i32::MAX,
        i32::MIN,
    ] {
        varints.push(VarInt(v, true));
        varints.push(VarInt(v, false));
    }
    for v in [
        0,
        1,
        -1,
        127,
        128,
        1i64 << 35,
        (1 << 42) - 1,
        1 << 49,
        (1 << 56) - 1,
        1 << 56,
        i64::MAX,
        i64::MIN,
    ] {
        varints.push(VarLong(v, true));
        varints.push(VarLong(v, false));
    }
    let thirteen: Vec<(String, String)> = (0..13)
        .map(|i| (format!("k{i}"), format!("v{i}")))
        .collect();
    let thirteen: Vec<(&str, &str)> = thirteen
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    vec![
        (
            "prims",
            vec![
                Bool(true),
                Bool(false),
                Byte(-2),
                Short(-12345),
                Int(0x01020304),
                Int(-7),
                Long(0x0102030405060708),
                Float(1.5),
                Double(-0.25),
                Bytes(Some(vec![1, 2, 0xff])),
                Bytes(Some(vec![])),
            ],
        ),
        ("utf_null", vec![Utf(None)]),
        (
            "utf_short",
            vec![utf(""), utf("a"), utf("ab"), utf("hello"), utf("2.0.2")],
        ),
        ("utf_lengths", lengths),
        (
            "utf_unicode",
            vec![
                utf("h\u{e9}llo \0 \u{20ac} \u{1F600}"),
                utf("\u{e9}"),
                utf("\u{4e2d}\u{6587}\u{5b57}\u{7b26}"),
                utf("x\u{7ff}\u{800}\u{ffff}"),
            ],
        ),
        ("utf_70000", vec![Utf(Some(ascii(70000)))]),
        ("utf_1m", vec![Utf(Some(ascii(1048576)))]),
        ("object_null", vec![Obj(Value::Null)]),
        ("object_string", vec![Obj(Value::string("hello aa"))]),
        ("object_string_empty", vec![Obj(Value::string(""))]),
        (
            "object_string_unicode",
            vec![Obj(Value::string("n\u{e4}me \u{1F600}"))],
        ),
        ("object_string_1k", vec![Obj(Value::String(ascii(1024)))]),
        (
            "boxed",
            vec![
                Obj(Value::Int(-123456)),
                Obj(Value::Long(i64::MIN)),
                Obj(Value::Double(3.25)),
                Obj(Value::Bool(true)),
                Obj(Value::Long(7)),
            ],
        ),
        ("order", vec![Obj(order(1))]),
        (
            "order_nulls",
            vec![Obj(order_value(&Order {
                order_id: i64::MAX,
                order_date: i32::MIN,
                ticket_type: -1,
                amount: -0.0,
                order_status: i32::MAX,
                ..Order::default()
            }))],
        ),
        (
            "order_unicode",
            vec![Obj(order_value(&Order {
                order_id: -1,
                phone: Some("\u{260e} 138".into()),
                name: Some("\u{5f20}\u{4e09}".into()),
                order_num: Some(String::new()),
                amount: f64::NAN,
                ..Order::default()
            }))],
        ),
        (
            "orders_two",
            vec![Obj(Value::List(vec![order(1), order(2)]))],
        ),
        ("orders_empty", vec![Obj(Value::List(vec![]))]),
        (
            "orders_100",
            vec![Obj(Value::List((0..100).map(order).collect()))],
        ),
        (
            "orders_with_null",
            vec![Obj(Value::List(vec![order(1), Value::Null]))],
        ),
        (
            "list_mixed",
            vec![Obj(Value::List(vec![
                Value::string("a"),
                Value::Int(1),
                Value::Null,
                Value::string("shared"),
                Value::string("shared"),
            ]))],
        ),
        ("map_empty", vec![Obj(Value::Map(vec![]))]),
        ("map_attachments", vec![Obj(attachments())]),
        ("map_13", vec![Obj(hash_map(&thirteen))]),
        (
            "request_echo_order",
            request("echoOrder", "Lrpclab/contract/Order;", vec![order(1)]),
        ),
        (
            "request_echo_orders",
            request(
                "echoOrders",
                "Ljava/util/List;",
                vec![Value::List(vec![order(1), order(2)])],
            ),
        ),
        ("request_empty", request("empty", "", vec![])),
        (
            "response_order",
            vec![Byte(4), Obj(order(1)), Obj(response_attachments())],
        ),
        (
            "response_string",
            vec![
                Byte(4),
                Obj(Value::string("hello aa")),
                Obj(response_attachments()),
            ],
        ),
        ("response_null", vec![Byte(5), Obj(response_attachments())]),
        (
            "response_exception",
            vec![
                Byte(3),
                Exc(exc("java.lang.RuntimeException", Some("boom"), None)),
                Obj(response_attachments()),
            ],
        ),
        (
            "exception_cause",
            vec![Exc(exc(
                "java.lang.IllegalStateException",
                Some("outer"),
                Some(exc(
                    "java.lang.IllegalArgumentException",
                    Some("inner"),
                    None,
                )),
            ))],
        ),
        (
            "exception_no_message",
            vec![Exc(exc(
                "java.lang.UnsupportedOperationException",
                None,
                None,
            ))],
        ),
        ("raw_varints", varints),
    ]
}

/// The case written with the Rust API (equal strings shared, as Java's
/// literals are), or None if a step cannot be written (exceptions).
pub fn rust_write(steps: &[Step], dialect: Dialect) -> Option<Vec<u8>> {
    rust_write_with(steps, dialect, true)
}

/// The case written with the Rust API, sharing equal strings or not.
pub fn rust_write_with(steps: &[Step], dialect: Dialect, share: bool) -> Option<Vec<u8>> {
    let schemas = schemas();
    let mut e = Encoder::new(dialect).share_strings(share);
    for s in steps {
        match s {
            Step::Bool(v) => e.write_bool(*v),
            Step::Byte(v) => e.write_byte(*v as u8),
            Step::Short(v) => e.write_short(*v),
            Step::Int(v) => e.write_int(*v),
            Step::Long(v) => e.write_long(*v),
            Step::Float(v) => e.write_float(*v),
            Step::Double(v) => e.write_double(*v),
            Step::Bytes(v) => e.write_bytes(v.as_deref()),
            Step::Utf(v) => e.write_string(v.as_deref()),
            Step::Obj(v) => e.write_value(v, &schemas).expect("writable"),
            Step::Exc(_) => return None,
            Step::VarInt(v, p) => e.write_var_int(*v, *p),
            Step::VarLong(v, p) => e.write_var_long(*v, *p),
        }
    }
    Some(e.finish())
}

/// Reads the case's steps from `bytes`, checking each value; the whole
/// input must be consumed.
pub fn check_read(steps: &[Step], bytes: &[u8], dialect: Dialect) -> Result<(), String> {
    let schemas = schemas();
    let mut d = Decoder::new(bytes, dialect);
    for (i, s) in steps.iter().enumerate() {
        let err = |e: kryo::DecodeError| format!("step {i} ({s:?}): {e}");
        let ok = match s {
            Step::Bool(v) => d.read_bool().map_err(err)? == *v,
            Step::Byte(v) => d.read_byte().map_err(err)? as i8 == *v,
            Step::Short(v) => d.read_short().map_err(err)? == *v,
            Step::Int(v) => d.read_int().map_err(err)? == *v,
            Step::Long(v) => d.read_long().map_err(err)? == *v,
            Step::Float(v) => d.read_float().map_err(err)?.to_bits() == v.to_bits(),
            Step::Double(v) => d.read_double().map_err(err)?.to_bits() == v.to_bits(),
            Step::Bytes(v) => d.read_bytes().map_err(err)? == *v,
            Step::Utf(v) => d.read_string().map_err(err)? == *v,
            Step::Obj(v) => {
                let got = d.read_value(&schemas).map_err(err)?;
                if !got.identical(v) {
                    return Err(format!("step {i}: read {got:?}, expected {v:?}"));
                }
                true
            }
            Step::Exc(v) => {
                let got = d.read_exception().map_err(err)?;
                if got != *v {
                    return Err(format!("step {i}: read {got:?}, expected {v:?}"));
                }
                true
            }
            Step::VarInt(v, p) => d.read_var_int(*p).map_err(err)? == *v,
            Step::VarLong(v, p) => d.read_var_long(*p).map_err(err)? == *v,
        };
        if !ok {
            return Err(format!("step {i} ({s:?}): read another value"));
        }
    }
    if !d.is_at_end() {
        return Err(format!("{} bytes left after the last step", d.remaining()));
    }
    Ok(())
}
