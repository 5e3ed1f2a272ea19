//! A reply compared with the expected one, field by field: the first field
//! that differs, by its path (`lines[1].reserved`), with both values.
//!
//! Fields are compared as proto3 reads them: a field that is not set has
//! its default value, so a reply that leaves out `total_quantity: 0` equals
//! an expectation that writes it. Unknown fields are not compared.

use crate::expect::first_element_difference;
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MapKey, ReflectMessage, Value};
use std::collections::BTreeSet;

/// The first difference between `expected` and `got`, as
/// `path: expected X, got Y`; `None` when they are equal.
pub fn first_difference(expected: &DynamicMessage, got: &DynamicMessage) -> Option<String> {
    message(expected, got, "")
}

fn message(expected: &DynamicMessage, got: &DynamicMessage, path: &str) -> Option<String> {
    let mut fields: Vec<FieldDescriptor> = expected.descriptor().fields().collect();
    fields.sort_by_key(FieldDescriptor::number);
    fields.into_iter().find_map(|field| {
        let here = if path.is_empty() {
            field.name().to_owned()
        } else {
            format!("{path}.{}", field.name())
        };
        value(
            &field.kind(),
            &expected.get_field(&field),
            &got.get_field(&field),
            &here,
        )
    })
}

fn value(kind: &Kind, expected: &Value, got: &Value, path: &str) -> Option<String> {
    match (expected, got) {
        (Value::Message(e), Value::Message(g)) => message(e, g, path),
        (Value::List(e), Value::List(g)) => {
            first_element_difference(e, g, path, |e, g, path| value(kind, e, g, path))
        }
        (Value::Map(e), Value::Map(g)) => {
            let keys: BTreeSet<&MapKey> = e.keys().chain(g.keys()).collect();
            let entry_kind = match kind {
                Kind::Message(entry) => entry.map_entry_value_field().kind(),
                other => other.clone(),
            };
            keys.into_iter().find_map(|key| {
                let here = format!("{path}[{}]", map_key(key));
                match (e.get(key), g.get(key)) {
                    (Some(e), Some(g)) => value(&entry_kind, e, g, &here),
                    (Some(e), None) => Some(format!(
                        "{here}: expected {}, got no entry",
                        shown(&entry_kind, e)
                    )),
                    (None, Some(g)) => Some(format!(
                        "{here}: expected no entry, got {}",
                        shown(&entry_kind, g)
                    )),
                    (None, None) => None,
                }
            })
        }
        (Value::F64(e), Value::F64(g)) if e.is_nan() && g.is_nan() => None,
        (Value::F32(e), Value::F32(g)) if e.is_nan() && g.is_nan() => None,
        (e, g) if e == g => None,
        (e, g) => Some(format!(
            "{path}: expected {}, got {}",
            shown(kind, e),
            shown(kind, g)
        )),
    }
}

fn map_key(key: &MapKey) -> String {
    match key {
        MapKey::String(s) => format!("{s:?}"),
        MapKey::Bool(b) => b.to_string(),
        MapKey::I32(n) => n.to_string(),
        MapKey::I64(n) => n.to_string(),
        MapKey::U32(n) => n.to_string(),
        MapKey::U64(n) => n.to_string(),
    }
}

/// A value as an error shows it: strings quoted and cut to 60 characters,
/// enums by name.
fn shown(kind: &Kind, v: &Value) -> String {
    match v {
        Value::String(s) => {
            let cut: String = s.chars().take(60).collect();
            if cut.len() < s.len() {
                format!("{cut:?}…")
            } else {
                format!("{s:?}")
            }
        }
        Value::EnumNumber(n) => match kind {
            Kind::Enum(e) => e
                .get_value(*n)
                .map_or_else(|| n.to_string(), |v| v.name().to_owned()),
            _ => n.to_string(),
        },
        Value::Bytes(b) => format!("{} bytes", b.len()),
        Value::Bool(b) => b.to_string(),
        Value::I32(n) => n.to_string(),
        Value::I64(n) => n.to_string(),
        Value::U32(n) => n.to_string(),
        Value::U64(n) => n.to_string(),
        Value::F32(n) => n.to_string(),
        Value::F64(n) => n.to_string(),
        Value::Message(m) => format!("a {}", m.descriptor().full_name()),
        Value::List(l) => format!("{} elements", l.len()),
        Value::Map(m) => format!("{} entries", m.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::grpc_generic::test_pool::shop;
    use serde_json::json;

    fn reservation(json: serde_json::Value) -> DynamicMessage {
        let desc = shop().get_message_by_name("shop.v1.Reservation").unwrap();
        DynamicMessage::deserialize(desc, json).unwrap()
    }

    #[test]
    fn the_first_differing_field_is_named_with_both_values() {
        let expected = reservation(json!({
            "requestId": "r-1", "status": "RESERVED",
            "lines": [{"sku": "a", "reserved": 2}, {"sku": "b", "reserved": 3}],
            "total": {"currency": "EUR", "units": 0},
        }));
        assert_eq!(first_difference(&expected, &expected.clone()), None);
        // Defaults equal absent fields.
        let same = reservation(json!({
            "requestId": "r-1", "status": "RESERVED",
            "lines": [{"sku": "a", "reserved": 2}, {"sku": "b", "reserved": 3}],
            "total": {"currency": "EUR"},
        }));
        assert_eq!(first_difference(&expected, &same), None);
        for (got, says) in [
            (
                json!({
                    "requestId": "r-1", "status": "PARTIAL",
                    "lines": [{"sku": "a", "reserved": 2}, {"sku": "b", "reserved": 1}],
                }),
                "status: expected RESERVED, got PARTIAL",
            ),
            (
                json!({
                    "requestId": "r-1", "status": "RESERVED",
                    "lines": [{"sku": "a", "reserved": 2}, {"sku": "b", "reserved": 1}],
                }),
                "lines[1].reserved: expected 3, got 1",
            ),
            (
                json!({"requestId": "r-1", "status": "RESERVED", "lines": []}),
                "lines: expected 2 elements, got 0",
            ),
            (
                json!({"requestId": "r-2"}),
                "request_id: expected \"r-1\", got \"r-2\"",
            ),
        ] {
            let got = reservation(got);
            assert_eq!(first_difference(&expected, &got).as_deref(), Some(says));
        }
    }
}
