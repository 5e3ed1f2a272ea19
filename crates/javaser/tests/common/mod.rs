//! Shared by golden.rs and java_interop.rs: the golden cases written with
//! the Rust encoder API (mirroring golden/java's Cases.java).

#![allow(dead_code)]

use std::sync::Arc;

use java_interop::Golden;
use javaser::{ClassDesc, Encoder, Enum, FieldDesc, Value, SC_ENUM, SC_SERIALIZABLE};

pub fn golden() -> Golden {
    Golden::of(env!("CARGO_MANIFEST_DIR"))
}

/// Every case name in golden/vectors.
pub fn case_names() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(golden().vectors())
        .expect("golden/vectors")
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|n| n.strip_suffix(".bin").map(str::to_owned))
        .collect();
    v.sort();
    v
}

pub fn order_desc() -> ClassDesc {
    let s = "Ljava/lang/String;";
    ClassDesc::new(
        "rpclab.contract.Order",
        1,
        SC_SERIALIZABLE,
        vec![
            FieldDesc::prim(b'J', "orderId"),
            FieldDesc::object("phone", s),
            FieldDesc::object("name", s),
            FieldDesc::object("orderNum", s),
            FieldDesc::prim(b'I', "orderDate"),
            FieldDesc::prim(b'I', "ticketType"),
            FieldDesc::prim(b'D', "amount"),
            FieldDesc::prim(b'I', "orderStatus"),
        ],
    )
}

/// Cases.order(id) of the Java side. The phone is a Java literal, so one
/// String instance: pass the handle of the phone written before, if any.
/// Returns the phone's handle.
pub fn write_order(enc: &mut Encoder, desc: &ClassDesc, id: i64, phone: Option<u32>) -> u32 {
    enc.begin_object(desc).unwrap();
    // Sorted: amount, orderDate, orderId, orderStatus, ticketType, name, orderNum, phone.
    enc.write_double(99.5 + id as f64);
    enc.write_int(20240131);
    enc.write_long(id);
    enc.write_int(1);
    enc.write_int(2);
    enc.write_string(&format!("n\u{e4}me-{id}"));
    enc.write_string(&format!("ORD-{id}"));
    let h = match phone {
        Some(h) => {
            enc.write_reference(h);
            h
        }
        None => enc.write_string("13800138000"),
    };
    enc.end_object().unwrap();
    h
}

pub fn color_green() -> Value {
    let base = ClassDesc::new("java.lang.Enum", 0, SC_SERIALIZABLE | SC_ENUM, vec![]);
    let desc = ClassDesc::new(
        "rpclab.golden.Cases$Color",
        0,
        SC_SERIALIZABLE | SC_ENUM,
        vec![],
    )
    .with_super(Arc::new(base));
    Value::Enum(Box::new(Enum {
        desc: Arc::new(desc),
        handle: 0,
        constant: Value::String("GREEN".into()),
    }))
}

/// The case written with the Rust API, or None if there is no Rust writer for it.
pub fn rust_write(name: &str) -> Option<Vec<u8>> {
    let mut e = Encoder::new();
    match name {
        "header_only" => {}
        "prim_int" => e.write_int(0x01020304),
        "prims" => {
            e.write_boolean(true);
            e.write_byte(-2);
            e.write_short(-12345);
            e.write_char(0x20ac);
            e.write_int(-7);
            e.write_long(0x0102030405060708);
            e.write_float(1.5);
            e.write_double(-0.25);
            e.write_utf("h\u{e9}llo \0 \u{20ac} \u{1F600}").unwrap();
        }
        "block_long" => (0..75).for_each(|i| e.write_int(i)),
        "block_split" => (0..500).for_each(|i| e.write_int(i * 31)),
        "null" => e.write_null(),
        "string_ascii" => {
            e.write_string("hello");
        }
        "string_empty" => {
            e.write_string("");
        }
        "string_mutf8" => {
            e.write_string("a\0\u{e9}\u{20ac}\u{1F600}");
        }
        "string_shared" => {
            let h = e.write_string("shared");
            e.write_reference(h);
        }
        "long_string" => {
            e.write_string(&"x".repeat(70000));
        }
        "reset" => {
            e.write_string("a");
            e.reset();
            e.write_string("a");
        }
        "mixed" => {
            e.write_int(1);
            e.write_string("x");
            e.write_int(2);
            e.write_utf("y").unwrap();
        }
        "integer" => e.write_integer_object(-123456).unwrap(),
        "long" => e.write_long_object(i64::MIN).unwrap(),
        "double" => e.write_double_object(3.25).unwrap(),
        "boolean" => e.write_boolean_object(true).unwrap(),
        "integers_two" => {
            e.write_integer_object(100000).unwrap();
            e.write_integer_object(200000).unwrap();
        }
        "order" => {
            write_order(&mut e, &order_desc(), 1, None);
        }
        "orders_two" => {
            let d = order_desc();
            let p = write_order(&mut e, &d, 1, None);
            write_order(&mut e, &d, 2, Some(p));
        }
        "array_list_strings" => e
            .write_array_list(3, |e| {
                for s in ["a", "b", "c"] {
                    e.write_string(s);
                }
                Ok(())
            })
            .unwrap(),
        "array_list_integers" => e
            .write_array_list(2, |e| {
                e.write_integer_object(100000)?;
                e.write_integer_object(200000)
            })
            .unwrap(),
        "array_list_empty" => e.write_array_list(0, |_| Ok(())).unwrap(),
        "array_list_orders" => e
            .write_array_list(2, |e| {
                let d = order_desc();
                let p = write_order(e, &d, 1, None);
                write_order(e, &d, 2, Some(p));
                Ok(())
            })
            .unwrap(),
        "hash_map" => e
            .write_hash_map(2, |e| {
                e.write_string("a");
                e.write_integer_object(100000)?;
                e.write_string("b");
                e.write_integer_object(200000)
            })
            .unwrap(),
        "hash_map_13" => e
            .write_hash_map(13, |e| {
                for i in 0..13 {
                    e.write_integer_object(1000 + i)?;
                    e.write_string(&format!("v{i}"));
                }
                Ok(())
            })
            .unwrap(),
        "array_list_mixed" => e
            .write_array_list(4, |e| {
                e.write_null();
                e.write_long_object(5)?;
                e.write_boolean_object(false)?;
                e.write_string("s");
                Ok(())
            })
            .unwrap(),
        "derived" => {
            let base = ClassDesc::new(
                "rpclab.golden.Cases$Base",
                1,
                SC_SERIALIZABLE,
                vec![FieldDesc::prim(b'I', "a")],
            );
            let desc = ClassDesc::new(
                "rpclab.golden.Cases$Derived",
                2,
                SC_SERIALIZABLE,
                vec![FieldDesc::object("b", "Ljava/lang/String;")],
            )
            .with_super(Arc::new(base));
            e.begin_object(&desc).unwrap();
            e.write_int(7);
            e.write_string("seven");
            e.end_object().unwrap();
        }
        "date" => {
            let desc = ClassDesc::new(
                "java.util.Date",
                7523967970034938905,
                SC_SERIALIZABLE | javaser::SC_WRITE_METHOD,
                vec![],
            );
            e.begin_object(&desc).unwrap();
            e.begin_custom_data();
            e.write_long(1700000000123);
            e.end_custom_data().unwrap();
            e.end_object().unwrap();
        }
        "proxy" => {
            let proxy_class = Arc::new(ClassDesc::new(
                "java.lang.reflect.Proxy",
                -2222568056686623797,
                SC_SERIALIZABLE,
                vec![FieldDesc::object(
                    "h",
                    "Ljava/lang/reflect/InvocationHandler;",
                )],
            ));
            let desc = ClassDesc::proxy(vec!["java.lang.Runnable".into()], proxy_class);
            let handler = ClassDesc::new(
                "rpclab.golden.Cases$Handler",
                3,
                SC_SERIALIZABLE,
                vec![FieldDesc::object("tag", "Ljava/lang/String;")],
            );
            e.begin_object(&desc).unwrap();
            e.begin_object(&handler).unwrap();
            e.write_string("p");
            e.end_object().unwrap();
            e.end_object().unwrap();
        }
        "class_string" => {
            let desc = ClassDesc::new(
                "java.lang.String",
                -6849794470754667710,
                SC_SERIALIZABLE,
                vec![],
            );
            e.write_value(&Value::Class(Arc::new(desc))).unwrap();
        }
        "hash_map_empty" => e.write_hash_map(0, |_| Ok(())).unwrap(),
        "int_array" => e.write_int_array(&[1, -2, 0x7fffffff]).unwrap(),
        "byte_array" => e.write_byte_array(&[1, 2, 0xff]).unwrap(),
        "string_array" => e.write_string_array(&[Some("x"), None, Some("y")]).unwrap(),
        "enum" => {
            let d = javaser::java::enum_desc("rpclab.golden.Cases$Color");
            e.write_enum(&d, "GREEN").unwrap();
            e.write_reference(0x7e0000 + 2);
        }
        _ => return None,
    }
    Some(e.finish())
}
