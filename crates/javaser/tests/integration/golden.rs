//! Golden vectors written by JDK 17's ObjectOutputStream (golden/vectors,
//! regenerate with golden/regenerate.sh): Rust decodes every one, re-encodes
//! the decoded contents byte for byte, and writes every case with its typed
//! API byte-identically to Java.

use crate::common;

use common::{case_names, golden, rust_write};
use javaser::{java, Content, Decoder, Encoder, Value};

fn vector(name: &str) -> Vec<u8> {
    golden().vector(name)
}

fn contents(name: &str) -> Vec<Content> {
    javaser::from_bytes(&vector(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn only_value(name: &str) -> Value {
    let c = contents(name);
    assert_eq!(c.len(), 1, "{name}: {c:?}");
    match c.into_iter().next().unwrap() {
        Content::Value(v) => v,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn there_are_vectors() {
    assert!(case_names().len() >= 30, "{:?}", case_names());
}

#[test]
fn every_vector_decodes_and_reencodes_identically() {
    let mut failures = Vec::new();
    for name in case_names() {
        let bytes = vector(&name);
        let items = match javaser::from_bytes(&bytes) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{name}: decode: {e}"));
                continue;
            }
        };
        let mut enc = Encoder::new();
        for c in &items {
            match c {
                Content::BlockData(b) => enc.write_block_data(b),
                Content::Value(v) => {
                    if let Err(e) = enc.write_value(v) {
                        failures.push(format!("{name}: encode: {e}"));
                    }
                }
            }
        }
        // TC_RESET is consumed by the decoder, so that case differs.
        if name != "reset" && enc.finish() != bytes {
            failures.push(format!("{name}: re-encoding differs"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rust_writes_every_case_like_java() {
    let mut failures = Vec::new();
    for name in case_names() {
        match rust_write(&name) {
            None => failures.push(format!("{name}: no Rust writer")),
            Some(b) if b != vector(&name) => failures.push(format!(
                "{name}: differs\n rust {:02x?}\n java {:02x?}",
                b,
                vector(&name)
            )),
            Some(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn primitives_read_through_block_data() {
    let b = vector("prims");
    let mut d = Decoder::new(&b).unwrap();
    assert!(d.read_boolean().unwrap());
    assert_eq!(d.read_byte().unwrap(), -2);
    assert_eq!(d.read_short().unwrap(), -12345);
    assert_eq!(d.read_char().unwrap(), 0x20ac);
    assert_eq!(d.read_int().unwrap(), -7);
    assert_eq!(d.read_long().unwrap(), 0x0102030405060708);
    assert_eq!(d.read_float().unwrap(), 1.5);
    assert_eq!(d.read_double().unwrap(), -0.25);
    assert_eq!(d.read_utf().unwrap(), "h\u{e9}llo \0 \u{20ac} \u{1F600}");
    assert!(d.is_at_end());

    let b = vector("block_split");
    let mut d = Decoder::new(&b).unwrap();
    for i in 0..500 {
        assert_eq!(d.read_int().unwrap(), i * 31);
    }
    assert!(d.is_at_end());

    let b = vector("mixed");
    let mut d = Decoder::new(&b).unwrap();
    assert_eq!(d.read_int().unwrap(), 1);
    assert_eq!(d.read_object().unwrap(), Value::String("x".into()));
    assert_eq!(d.read_int().unwrap(), 2);
    assert_eq!(d.read_utf().unwrap(), "y");
    assert!(d.is_at_end());
}

#[test]
fn strings_and_references() {
    assert_eq!(
        only_value("string_mutf8"),
        Value::String("a\0\u{e9}\u{20ac}\u{1F600}".into())
    );
    assert_eq!(
        only_value("long_string").as_str().map(str::len),
        Some(70000)
    );
    assert_eq!(
        contents("string_shared"),
        vec![
            Content::Value(Value::String("shared".into())),
            Content::Value(Value::Reference(0x7e0000))
        ]
    );
    assert_eq!(only_value("null"), Value::Null);
}

#[test]
fn boxed_values() {
    assert_eq!(
        java::unboxed(&only_value("integer")),
        Some(&Value::Int(-123456))
    );
    assert_eq!(
        java::unboxed(&only_value("long")),
        Some(&Value::Long(i64::MIN))
    );
    assert_eq!(
        java::unboxed(&only_value("double")),
        Some(&Value::Double(3.25))
    );
    assert_eq!(
        java::unboxed(&only_value("boolean")),
        Some(&Value::Boolean(true))
    );
    let v = only_value("integer");
    let o = v.as_object().unwrap();
    assert_eq!(o.desc.suid, java::INTEGER_SUID);
    assert_eq!(o.desc.super_desc.as_ref().unwrap().name, "java.lang.Number");
    // boxed_value builds the same object.
    let mut enc = Encoder::new();
    enc.write_value(&java::boxed_value(Value::Int(-123456)))
        .unwrap();
    assert_eq!(enc.finish(), vector("integer"));
}

#[test]
fn order_fields() {
    let v = only_value("order");
    let o = v.as_object().unwrap();
    assert_eq!(o.desc.name, "rpclab.contract.Order");
    assert_eq!(o.desc.suid, 1);
    assert_eq!(o.get("orderId"), Some(&Value::Long(1)));
    assert_eq!(o.get("amount"), Some(&Value::Double(100.5)));
    assert_eq!(o.get("orderDate"), Some(&Value::Int(20240131)));
    assert_eq!(o.get("name").and_then(Value::as_str), Some("n\u{e4}me-1"));
    assert_eq!(o.get("phone").and_then(Value::as_str), Some("13800138000"));
    let names: Vec<&str> = o.desc.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "amount",
            "orderDate",
            "orderId",
            "orderStatus",
            "ticketType",
            "name",
            "orderNum",
            "phone"
        ]
    );
    assert_eq!(o.desc.fields, common::order_desc().fields);
}

#[test]
fn collections_keep_write_object_data() {
    let v = only_value("array_list_strings");
    let o = v.as_object().unwrap();
    assert_eq!(o.get("size"), Some(&Value::Int(3)));
    let ann = &o.class_data[0].annotations;
    assert_eq!(ann[0], Content::BlockData(vec![0, 0, 0, 3]));
    assert_eq!(
        ann[1..],
        [
            Content::Value(Value::String("a".into())),
            Content::Value(Value::String("b".into())),
            Content::Value(Value::String("c".into())),
        ]
    );
    let v = only_value("hash_map");
    let o = v.as_object().unwrap();
    assert_eq!(o.get("loadFactor"), Some(&Value::Float(0.75)));
    assert_eq!(o.get("threshold"), Some(&Value::Int(12)));
    assert_eq!(o.class_data[0].annotations.len(), 5);
}

#[test]
fn arrays_and_enums() {
    match only_value("int_array") {
        Value::Array(a) => {
            assert_eq!(a.desc.name, "[I");
            assert_eq!(
                a.elements,
                [Value::Int(1), Value::Int(-2), Value::Int(0x7fffffff)]
            );
        }
        other => panic!("{other:?}"),
    }
    match only_value("string_array") {
        Value::Array(a) => assert_eq!(
            a.elements,
            [
                Value::String("x".into()),
                Value::Null,
                Value::String("y".into())
            ]
        ),
        other => panic!("{other:?}"),
    }
    let c = contents("enum");
    match &c[0] {
        Content::Value(Value::Enum(e)) => {
            assert_eq!(e.desc.name, "rpclab.golden.Cases$Color");
            assert_eq!(e.handle, 0x7e0002);
            assert_eq!(e.constant, Value::String("GREEN".into()));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(c[1], Content::Value(Value::Reference(0x7e0002)));
}

#[derive(Debug, Default, PartialEq)]
struct Order {
    order_id: i64,
    phone: String,
    name: String,
    order_num: String,
    order_date: i32,
    ticket_type: i32,
    amount: f64,
    order_status: i32,
}

javaser::java_object!(Order, "rpclab.contract.Order", 1, {
    order_id: i64 => "orderId",
    phone: String => "phone",
    name: String => "name",
    order_num: String => "orderNum",
    order_date: i32 => "orderDate",
    ticket_type: i32 => "ticketType",
    amount: f64 => "amount",
    order_status: i32 => "orderStatus",
});

fn typed_order(id: i64) -> Order {
    Order {
        order_id: id,
        phone: "13800138000".into(),
        name: format!("n\u{e4}me-{id}"),
        order_num: format!("ORD-{id}"),
        order_date: 20240131,
        ticket_type: 2,
        amount: 99.5 + id as f64,
        order_status: 1,
    }
}

#[test]
fn typed_order_matches_java() {
    let mut enc = Encoder::new();
    enc.write(&typed_order(1)).unwrap();
    assert_eq!(enc.finish(), vector("order"));
    assert_eq!(Order::java_class_desc().fields, common::order_desc().fields);

    let b = vector("orders_two");
    let mut d = Decoder::new(&b).unwrap();
    assert_eq!(d.read::<Order>().unwrap(), typed_order(1));
    // The second order's phone is a TC_REFERENCE to the first one's.
    assert_eq!(d.read::<Order>().unwrap(), typed_order(2));
    assert!(d.is_at_end());

    let b = vector("integer");
    let mut d = Decoder::new(&b).unwrap();
    assert!(matches!(
        d.read::<Order>(),
        Err(javaser::DecodeError::TypeMismatch { offset: 4, .. })
    ));
}

#[test]
fn collection_helpers() {
    let v = only_value("array_list_strings");
    let els = java::array_list_elements(&v).unwrap();
    assert_eq!(
        els.iter().filter_map(|v| v.as_str()).collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
    assert!(java::array_list_elements(&only_value("integer")).is_none());
    let v = only_value("hash_map_13");
    let entries = java::hash_map_entries(&v).unwrap();
    assert_eq!(entries.len(), 13);
    assert_eq!(java::unboxed(entries[0].0), Some(&Value::Int(1000)));
    assert_eq!(entries[12].1.as_str(), Some("v12"));
    let v = only_value("array_list_mixed");
    let els = java::array_list_elements(&v).unwrap();
    assert_eq!(els[0], &Value::Null);
    assert_eq!(java::unboxed(els[1]), Some(&Value::Long(5)));
}

#[test]
fn typed_collections_and_boxes() {
    let mut enc = Encoder::new();
    enc.write(&vec!["a".to_string(), "b".into(), "c".into()])
        .unwrap();
    assert_eq!(enc.finish(), vector("array_list_strings"));
    let mut enc = Encoder::new();
    enc.write(&vec![typed_order(1), typed_order(2)]).unwrap();
    let b = enc.finish();
    let mut d = Decoder::new(&b).unwrap();
    assert_eq!(
        d.read::<Vec<Order>>().unwrap(),
        [typed_order(1), typed_order(2)]
    );

    let b = vector("array_list_integers");
    let mut d = Decoder::new(&b).unwrap();
    assert_eq!(d.read::<Vec<i32>>().unwrap(), [100000, 200000]);
    let b = vector("long");
    assert_eq!(Decoder::new(&b).unwrap().read::<i64>().unwrap(), i64::MIN);
    let b = vector("null");
    assert_eq!(
        Decoder::new(&b).unwrap().read::<Option<String>>().unwrap(),
        None
    );
    let b = vector("integer");
    assert!(Decoder::new(&b).unwrap().read::<i64>().is_err());
}

#[test]
fn superclass_data_and_custom_data() {
    let v = only_value("derived");
    let o = v.as_object().unwrap();
    assert_eq!(o.class_data.len(), 2);
    assert_eq!(o.get("a"), Some(&Value::Int(7)));
    assert_eq!(o.get("b").and_then(Value::as_str), Some("seven"));
    let v = only_value("date");
    let o = v.as_object().unwrap();
    assert_eq!(
        o.class_data[0].annotations,
        [Content::BlockData(1700000000123i64.to_be_bytes().to_vec())]
    );
    match only_value("class_string") {
        Value::Class(d) => assert_eq!(d.name, "java.lang.String"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn dynamic_proxies() {
    // What RMI stubs are: TC_PROXYCLASSDESC (interfaces, annotations,
    // superclass java.lang.reflect.Proxy), then Proxy's field h.
    let v = only_value("proxy");
    let o = v.as_object().expect("an object");
    assert!(o.desc.is_proxy());
    assert_eq!(
        o.desc.proxy_interfaces.as_deref(),
        Some(&["java.lang.Runnable".to_string()][..])
    );
    assert_eq!(
        o.desc.super_desc.as_ref().unwrap().name,
        "java.lang.reflect.Proxy"
    );
    let h = o
        .get("h")
        .and_then(Value::as_object)
        .expect("handler object");
    assert_eq!(h.desc.name, "rpclab.golden.Cases$Handler");
    assert_eq!(h.get("tag").and_then(Value::as_str), Some("p"));
}
