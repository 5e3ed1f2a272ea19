//! Shared by the golden-vector tests: the manifest format written by
//! golden/java (rpclab.golden.Describe) and the contract's Order.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use hessian2::{hessian_object, ClassDef, Encoder, List, Map, Object, Value};
use java_interop::Golden;
use serde_json::Value as Json;

/// Java implementations that produced vectors, as directory names.
pub const IMPLS: [&str; 3] = ["caucho", "dubbo-lite", "alibaba-lite"];

pub fn golden() -> Golden {
    Golden::of(env!("CARGO_MANIFEST_DIR"))
}

pub struct Manifest {
    pub impl_name: String,
    pub artifact: String,
    pub cases: Vec<Case>,
}

pub struct Case {
    pub name: String,
    pub file: PathBuf,
    pub rust_writes: bool,
    pub java_roundtrip: bool,
    pub values: Vec<Value>,
}

pub fn manifest(impl_name: &str) -> Manifest {
    let dir = golden().vectors().join(impl_name);
    let text = std::fs::read_to_string(dir.join("manifest.json"))
        .unwrap_or_else(|e| panic!("{}: {e} (run golden/regenerate.sh)", dir.display()));
    let json: Json = serde_json::from_str(&text).expect("manifest.json is JSON");
    let cases = json["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().expect("name").to_owned(),
            file: dir.join(c["file"].as_str().expect("file")),
            rust_writes: c["rust_writes"].as_bool().expect("rust_writes"),
            java_roundtrip: c["java_roundtrip"].as_bool().expect("java_roundtrip"),
            values: c["values"]
                .as_array()
                .expect("values")
                .iter()
                .map(to_value)
                .collect(),
        })
        .collect();
    Manifest {
        impl_name: json["impl"].as_str().expect("impl").to_owned(),
        artifact: json["artifact"].as_str().expect("artifact").to_owned(),
        cases,
    }
}

/// The contract's deterministic ASCII text (rpclab_model::contract::ascii_text).
pub fn ascii_text(len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
    (0..len)
        .map(|i| ALPHABET[(i * 31 + i / 64) % ALPHABET.len()] as char)
        .collect()
}

/// The generator's binary pattern: byte i is (i * 7 + 3) mod 256.
pub fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + 3) as u8).collect()
}

fn string(j: &Json) -> String {
    if let Some(s) = j.get("string") {
        return s.as_str().expect("string").to_owned();
    }
    if let Some(g) = j.get("string_gen") {
        if let Some(n) = g.get("ascii_text") {
            return ascii_text(n.as_u64().expect("len") as usize);
        }
        let unit = g["repeat"].as_str().expect("repeat");
        return unit.repeat(g["count"].as_u64().expect("count") as usize);
    }
    if let Some(parts) = j.get("string_concat") {
        return parts
            .as_array()
            .expect("parts")
            .iter()
            .map(string)
            .collect();
    }
    panic!("not a string descriptor: {j}")
}

fn type_name(j: &Json) -> Option<String> {
    match &j["type"] {
        Json::Null => None,
        t => Some(t.as_str().expect("type").to_owned()),
    }
}

/// Manifest value descriptor to Value (references kept as Value::Ref).
pub fn to_value(j: &Json) -> Value {
    match j {
        Json::Null => return Value::Null,
        Json::Bool(b) => return Value::Bool(*b),
        _ => {}
    }
    let obj = j.as_object().expect("descriptor object");
    if let Some(v) = obj.get("int") {
        Value::Int(v.as_i64().expect("int") as i32)
    } else if let Some(v) = obj.get("long") {
        Value::Long(v.as_str().expect("long").parse().expect("long"))
    } else if let Some(v) = obj.get("double") {
        let hex = v.as_str().expect("double").trim_start_matches("0x");
        Value::Double(f64::from_bits(u64::from_str_radix(hex, 16).expect("bits")))
    } else if let Some(v) = obj.get("date") {
        Value::Date(v.as_str().expect("date").parse().expect("date"))
    } else if obj.contains_key("string")
        || obj.contains_key("string_gen")
        || obj.contains_key("string_concat")
    {
        Value::String(string(j))
    } else if let Some(v) = obj.get("binary") {
        let hex = v.as_str().expect("binary");
        Value::Binary(
            (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect(),
        )
    } else if let Some(g) = obj.get("binary_gen") {
        Value::Binary(pattern(g["pattern"].as_u64().expect("pattern") as usize))
    } else if let Some(items) = obj.get("list") {
        Value::List(List {
            ty: type_name(j),
            items: items
                .as_array()
                .expect("items")
                .iter()
                .map(to_value)
                .collect(),
        })
    } else if let Some(entries) = obj.get("map") {
        Value::Map(Map {
            ty: type_name(j),
            entries: entries
                .as_array()
                .expect("entries")
                .iter()
                .map(|e| (to_value(&e[0]), to_value(&e[1])))
                .collect(),
        })
    } else if let Some(class) = obj.get("object") {
        let fields = obj["fields"].as_array().expect("fields");
        Value::Object(Object {
            class: Arc::new(ClassDef {
                name: class.as_str().expect("class").to_owned(),
                fields: fields
                    .iter()
                    .map(|f| f[0].as_str().expect("field").to_owned())
                    .collect(),
            }),
            values: fields.iter().map(|f| to_value(&f[1])).collect(),
        })
    } else if let Some(r) = obj.get("ref") {
        Value::Ref(r.as_u64().expect("ref") as u32)
    } else {
        panic!("unknown descriptor {j}")
    }
}

/// What `RefMode::Resolve` should make of a tree with references: each
/// reference to a finished container replaced by a copy of it, references to
/// enclosing containers (cycles) kept. `table` holds the stream's containers
/// in the order they start, across the values of one stream.
pub fn resolve(v: &Value, table: &mut Vec<Option<Value>>) -> Value {
    match v {
        Value::Ref(k) => match table.get(*k as usize) {
            Some(Some(done)) => done.clone(),
            _ => v.clone(),
        },
        Value::List(l) => referenceable(table, |table| {
            Value::List(List {
                ty: l.ty.clone(),
                items: l.items.iter().map(|i| resolve(i, table)).collect(),
            })
        }),
        Value::Map(m) => referenceable(table, |table| {
            Value::Map(Map {
                ty: m.ty.clone(),
                entries: m
                    .entries
                    .iter()
                    .map(|(k, v)| (resolve(k, table), resolve(v, table)))
                    .collect(),
            })
        }),
        Value::Object(o) => referenceable(table, |table| {
            Value::Object(Object {
                class: o.class.clone(),
                values: o.values.iter().map(|x| resolve(x, table)).collect(),
            })
        }),
        other => other.clone(),
    }
}

/// A list, map or object resolved by `build`: it takes its reference
/// number before its children, as the stream numbers them.
fn referenceable(
    table: &mut Vec<Option<Value>>,
    build: impl FnOnce(&mut Vec<Option<Value>>) -> Value,
) -> Value {
    let idx = table.len();
    table.push(None);
    let out = build(table);
    table[idx] = Some(out.clone());
    out
}

/// The contract's Order (crates/rpclab-model/src/contract.rs), redefined so
/// that this crate does not depend on the lab's model crate.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Order {
    pub order_id: i64,
    pub phone: String,
    pub name: String,
    pub order_num: String,
    pub order_date: i32,
    pub ticket_type: i32,
    pub amount: f64,
    pub order_status: i32,
}

hessian_object!(Order, "rpclab.Order", {
    order_id => "orderId",
    phone => "phone",
    name => "name",
    order_num => "orderNum",
    order_date => "orderDate",
    ticket_type => "ticketType",
    amount => "amount",
    order_status => "orderStatus",
});

impl Order {
    pub fn sample(i: u32) -> Order {
        let i64v = i as i64;
        Order {
            order_id: 10_000_000_000 + i64v,
            phone: format!("138{:08}", (i as u64 * 7919) % 100_000_000),
            name: format!("customer-{i}"),
            order_num: format!("ORD-2015-{i:06}"),
            order_date: 20_150_701 + (i % 28) as i32,
            ticket_type: (i % 4) as i32,
            amount: 100.25 + i as f64 * 0.5,
            order_status: (i % 3) as i32,
        }
    }

    /// Field names in the order hessian-lite's serializer writes them
    /// (declaration order reversed).
    pub const LITE_FIELDS: [&'static str; 8] = [
        "orderStatus",
        "amount",
        "ticketType",
        "orderDate",
        "orderNum",
        "name",
        "phone",
        "orderId",
    ];

    /// Writes the order with hessian-lite's field order.
    pub fn write_lite(&self, enc: &mut Encoder<Vec<u8>>) {
        enc.begin_object("rpclab.Order", &Self::LITE_FIELDS)
            .unwrap();
        enc.write_int(self.order_status);
        enc.write_double(self.amount);
        enc.write_int(self.ticket_type);
        enc.write_int(self.order_date);
        enc.write_string(&self.order_num);
        enc.write_string(&self.name);
        enc.write_string(&self.phone);
        enc.write_long(self.order_id);
    }
}
