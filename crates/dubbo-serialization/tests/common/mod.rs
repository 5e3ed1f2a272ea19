//! The golden cases on the Rust side: the same names and values as
//! golden/java's rpclab.golden.Cases, a Rust writer for each, and a check
//! that what the reader got is the case.

#![allow(dead_code)]

use dubbo_serialization::Field;
use dubbo_serialization::{class_descriptor, Reader, Value, Writer};
use java_interop::Golden;
pub use java_interop::{Order, ORDER_CLASS};

pub fn golden() -> Golden {
    Golden::of(env!("CARGO_MANIFEST_DIR"))
}

/// `Cases.sample(i)`: the i-th order of the lists.
pub fn sample(i: i32) -> Order {
    Order {
        order_id: 1_000_000_000_000 + i64::from(i),
        phone: Some(format!("1380013{i:04}")),
        name: Some(format!("name-{i}")),
        order_num: Some(format!("ORD-{i}")),
        order_date: 20150101 + i,
        ticket_type: i % 3,
        amount: 99.5 + f64::from(i),
        order_status: i % 5,
    }
}

/// The Order as Dubbo's Builder writes and reads it.
pub trait BuilderOrder: Sized {
    /// The fields as Builder writes them: sorted by name.
    fn write_fields(&self, w: &mut Writer);

    /// The order a bean of the reader is, if it is one.
    fn from_value(v: &Value) -> Option<Self>;
}

impl BuilderOrder for Order {
    fn write_fields(&self, w: &mut Writer) {
        w.write_double(self.amount);
        w.write_utf(self.name.as_deref());
        w.write_int(self.order_date);
        w.write_long(self.order_id);
        w.write_utf(self.order_num.as_deref());
        w.write_int(self.order_status);
        w.write_utf(self.phone.as_deref());
        w.write_int(self.ticket_type);
    }

    fn from_value(v: &Value) -> Option<Self> {
        let Value::Bean { class, fields } = v else {
            return None;
        };
        if class.as_deref() != Some(class_descriptor(ORDER_CLASS).as_str()) || fields.len() != 8 {
            return None;
        }
        let s = |f: &Field| f.as_str().map(|s| s.map(str::to_owned));
        let i = |f: &Field| f.as_i64().and_then(|v| i32::try_from(v).ok());
        Some(Order {
            amount: fields[0].as_f64()?,
            name: s(&fields[1])?,
            order_date: i(&fields[2])?,
            order_id: fields[3].as_i64()?,
            order_num: s(&fields[4])?,
            order_status: i(&fields[5])?,
            phone: s(&fields[6])?,
            ticket_type: i(&fields[7])?,
        })
    }
}

/// Writes `writeObject` of orders (or nulls) in an ArrayList, with Dubbo's
/// back-references to equal orders; `seen` carries the stream's beans.
pub fn write_order_object(w: &mut Writer, o: &Order, seen: &mut Vec<Order>) {
    let desc = class_descriptor(ORDER_CLASS);
    if let Some(index) = seen.iter().position(|s| s.java_equals(o)) {
        w.write_ref(&desc, index as u32);
        return;
    }
    seen.push(o.clone());
    w.begin_bean(&desc, 8);
    o.write_fields(w);
}

/// One GenericObjectOutput call.
#[derive(Debug, Clone)]
pub enum Step {
    Utf(Option<String>),
    Byte(i8),
    Int(i32),
    Long(i64),
    Double(f64),
    Bool(bool),
    Null,
    Str(String),
    Obj(Order),
    Orders(Vec<Option<Order>>),
    Map(Vec<(String, String)>),
    BoxedInt(i32),
    BoxedLong(i64),
    BoxedDouble(f64),
    BoxedBool(bool),
    /// class descriptor and message; Rust re-writes the golden stream
    Throwable(&'static str, &'static str),
}

fn utf(s: &str) -> Step {
    Step::Utf(Some(s.to_owned()))
}

fn path_map() -> Step {
    Step::Map(vec![("path".into(), "rpclab.contract.BenchService".into())])
}

pub fn cases() -> Vec<(&'static str, Vec<Step>)> {
    use Step::*;
    let samples = |r: std::ops::Range<i32>| r.map(|i| Some(sample(i))).collect::<Vec<_>>();
    vec![
        ("utf_null", vec![Utf(None)]),
        ("utf_empty", vec![utf("")]),
        ("utf_ascii", vec![utf("hello")]),
        (
            "utf_unicode",
            vec![utf("caf\u{e9} \u{4f60}\u{597d} \u{1f680} \u{ff}")],
        ),
        ("utf_control", vec![utf("tab\tnl\nnul\u{0}del\u{7f}")]),
        (
            "utf_127_128",
            vec![utf(&"a".repeat(127)), utf(&"b".repeat(128))],
        ),
        ("utf_1k", vec![utf(&"0123456789abcdef".repeat(64))]),
        ("utf_100k", vec![utf(&"x".repeat(100 * 1024))]),
        ("utf_1m", vec![utf(&"y".repeat(1024 * 1024))]),
        (
            "bytes",
            [0, 31, 32, -1, 127, -128].into_iter().map(Byte).collect(),
        ),
        (
            "ints",
            [
                0,
                -15,
                31,
                32,
                -16,
                127,
                128,
                -129,
                65535,
                -65536,
                i32::MAX,
                i32::MIN,
            ]
            .into_iter()
            .map(Int)
            .collect(),
        ),
        (
            "longs",
            [
                0,
                -1,
                1 << 31,
                -(1 << 31) - 1,
                1 << 40,
                -(1 << 47),
                1 << 55,
                i64::MAX,
                i64::MIN,
                1234567890123,
            ]
            .into_iter()
            .map(Long)
            .collect(),
        ),
        (
            "doubles",
            [
                0.0,
                -0.0,
                99.5,
                1.0,
                -2.5,
                f64::MAX,
                f64::from_bits(1),
                f64::NAN,
                f64::INFINITY,
            ]
            .into_iter()
            .map(Double)
            .collect(),
        ),
        ("bools", vec![Bool(true), Bool(false)]),
        ("object_null", vec![Null]),
        ("object_string", vec![Str("hello".into())]),
        ("object_string_empty", vec![Str(String::new())]),
        (
            "object_string_unicode",
            vec![Str("\u{6570}\u{636e} \u{2014} \u{1f680}".into())],
        ),
        ("order", vec![Obj(Order::typical())]),
        (
            "order_nulls",
            vec![Obj(Order {
                order_id: -7,
                order_date: -1,
                ticket_type: 0,
                amount: -0.5,
                order_status: 40,
                ..Order::default()
            })],
        ),
        ("order_empty_strings", vec![Obj(Order::empty_strings())]),
        (
            "order_unicode",
            vec![Obj(Order {
                order_id: i64::MIN,
                phone: Some("\u{260e} 138".into()),
                name: Some("\u{674e}\u{56db}".into()),
                order_num: Some("\u{1f4e6}-1".into()),
                order_date: i32::MAX,
                ticket_type: i32::MIN,
                amount: f64::MAX,
                order_status: 31,
            })],
        ),
        ("orders_empty", vec![Orders(vec![])]),
        ("orders_two", vec![Orders(samples(0..2))]),
        (
            "orders_with_null",
            vec![Orders(vec![Some(sample(2)), None, Some(sample(3))])],
        ),
        (
            "orders_repeated",
            vec![Orders(vec![
                Some(sample(5)),
                Some(sample(5)),
                Some(sample(6)),
                Some(sample(5)),
            ])],
        ),
        ("orders_100", vec![Orders(samples(0..100))]),
        ("map_empty", vec![Map(vec![])]),
        ("map_one", vec![path_map()]),
        (
            "boxed",
            vec![
                BoxedInt(42),
                BoxedLong(-3_000_000_000),
                BoxedDouble(2.25),
                BoxedBool(true),
                BoxedBool(false),
            ],
        ),
        (
            "request_echo_order",
            vec![
                utf("2.0.0"),
                utf("rpclab.contract.BenchService"),
                utf("0.0.0"),
                utf("echoOrder"),
                utf("Lrpclab/contract/Order;"),
                Obj(Order::typical()),
                path_map(),
            ],
        ),
        (
            "request_echo_orders",
            vec![
                utf("2.0.0"),
                utf("rpclab.contract.BenchService"),
                utf("0.0.0"),
                utf("echoOrders"),
                utf("Ljava/util/List;"),
                Orders(samples(0..3)),
                path_map(),
            ],
        ),
        (
            "request_empty",
            vec![
                utf("2.0.0"),
                utf("rpclab.contract.BenchService"),
                utf("0.0.0"),
                utf("empty"),
                utf(""),
                path_map(),
            ],
        ),
        ("response_order", vec![Byte(1), Obj(Order::typical())]),
        ("response_string", vec![Byte(1), Str("hello rpclab".into())]),
        ("response_orders", vec![Byte(1), Orders(samples(7..9))]),
        ("response_null", vec![Byte(2)]),
        (
            "response_exception",
            vec![
                Byte(0),
                Throwable("Ljava/lang/IllegalStateException;", "boom"),
            ],
        ),
    ]
}

pub fn case_names() -> Vec<&'static str> {
    cases().into_iter().map(|(n, _)| n).collect()
}

pub fn steps(name: &str) -> Vec<Step> {
    cases()
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no case {name}"))
        .1
}

/// The throwable's compacted-serialization stream, taken from the golden
/// vector (the crate does not write Java serialization).
fn golden_stream(name: &str) -> Vec<u8> {
    let bytes = golden().vector(name);
    let mut r = Reader::new(&bytes);
    r.read_byte().unwrap();
    match r.read_object().unwrap() {
        Value::Throwable { stream, .. } => stream,
        other => panic!("{name}: not a throwable: {other:?}"),
    }
}

/// The case written with the crate's Writer, as the client writes it.
pub fn rust_write(name: &str) -> Vec<u8> {
    let mut w = Writer::new();
    let mut seen = Vec::new();
    for step in steps(name) {
        match step {
            Step::Utf(s) => w.write_utf(s.as_deref()),
            Step::Byte(v) => w.write_byte(v),
            Step::Int(v) => w.write_int(v),
            Step::Long(v) => w.write_long(v),
            Step::Double(v) => w.write_double(v),
            Step::Bool(v) => w.write_bool(v),
            Step::Null => w.write_null(),
            Step::Str(s) => w.write_string_object(Some(&s)),
            Step::Obj(o) => write_order_object(&mut w, &o, &mut seen),
            Step::Orders(list) => {
                w.begin_array_list(list.len() as u32);
                for o in &list {
                    match o {
                        Some(o) => write_order_object(&mut w, o, &mut seen),
                        None => w.write_null(),
                    }
                }
            }
            Step::Map(entries) => {
                let pairs: Vec<(&str, &str)> = entries
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                w.write_string_map(&pairs);
            }
            Step::BoxedInt(v) => w.write_boxed_int(v),
            Step::BoxedLong(v) => w.write_boxed_long(v),
            Step::BoxedDouble(v) => w.write_boxed_double(v),
            Step::BoxedBool(v) => w.write_boxed_bool(v),
            Step::Throwable(desc, _) => w.write_throwable(desc, &golden_stream(name)),
        }
    }
    w.into_inner()
}

/// Reads `bytes` step by step as Dubbo reads the case; panics with the
/// step on a difference, and requires every byte to be read.
pub fn check_read(name: &str, bytes: &[u8]) {
    let mut r = Reader::new(bytes);
    for (k, step) in steps(name).into_iter().enumerate() {
        let at = format!("{name} step {k} ({step:?})");
        match step {
            Step::Utf(s) => assert_eq!(r.read_utf().unwrap(), s, "{at}"),
            Step::Byte(v) => assert_eq!(r.read_byte().unwrap(), v, "{at}"),
            Step::Int(v) => assert_eq!(r.read_int().unwrap(), v, "{at}"),
            Step::Long(v) => assert_eq!(r.read_long().unwrap(), v, "{at}"),
            Step::Double(v) => assert_eq!(r.read_double().unwrap().to_bits(), v.to_bits(), "{at}"),
            Step::Bool(v) => assert_eq!(r.read_bool().unwrap(), v, "{at}"),
            Step::Null => assert_eq!(r.read_object().unwrap(), Value::Null, "{at}"),
            Step::Str(s) => assert_eq!(r.read_object().unwrap(), Value::String(s), "{at}"),
            Step::Obj(o) => assert_eq!(
                Order::from_value(&r.read_object().unwrap()),
                Some(o),
                "{at}"
            ),
            Step::Orders(list) => {
                let Value::List(items) = r.read_object().unwrap() else {
                    panic!("{at}: not a list")
                };
                let got: Vec<Option<Order>> = items
                    .iter()
                    .map(|v| {
                        if *v == Value::Null {
                            None
                        } else {
                            Some(Order::from_value(v).expect("an order"))
                        }
                    })
                    .collect();
                assert_eq!(got, list, "{at}");
            }
            Step::Map(entries) => {
                let Value::Map(got) = r.read_object().unwrap() else {
                    panic!("{at}: not a map")
                };
                let got: Vec<(String, String)> = got
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.as_str().unwrap().to_owned(),
                            v.as_str().unwrap().to_owned(),
                        )
                    })
                    .collect();
                assert_eq!(got, entries, "{at}");
            }
            Step::BoxedInt(v) => assert!(
                matches!(r.read_object().unwrap(), Value::Int { value, class } if value == i64::from(v) && class == "Ljava/lang/Integer;"),
                "{at}"
            ),
            Step::BoxedLong(v) => assert!(
                matches!(r.read_object().unwrap(), Value::Int { value, class } if value == v && class == "Ljava/lang/Long;"),
                "{at}"
            ),
            Step::BoxedDouble(v) => assert!(
                matches!(r.read_object().unwrap(), Value::Float { value, .. } if value == v),
                "{at}"
            ),
            Step::BoxedBool(v) => assert_eq!(r.read_object().unwrap(), Value::Bool(v), "{at}"),
            Step::Throwable(desc, message) => match r.read_object().unwrap() {
                Value::Throwable { class, stream } => {
                    assert_eq!(class, desc, "{at}");
                    // the message is in the stream as a Java modified-UTF-8 string
                    assert!(
                        stream
                            .windows(message.len())
                            .any(|w| w == message.as_bytes()),
                        "{at}"
                    );
                }
                other => panic!("{at}: {other:?}"),
            },
        }
    }
    assert!(
        r.is_at_end(),
        "{name}: {} bytes left over",
        bytes.len() - r.position()
    );
}
