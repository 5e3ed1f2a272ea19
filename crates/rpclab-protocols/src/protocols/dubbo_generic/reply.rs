//! The generic invocation's reply: decoded from hessian2 as it comes (the
//! provider's `GenericFilter` has generalized the method's result with
//! `PojoUtils.generalize`: a POJO is a `HashMap` of its properties with
//! its class name under `"class"`, an enum its name, a collection a list,
//! a date a date), compared with the expected JSON field by field, the
//! first difference named by its path (`lines[1].reserved`).
//!
//! # The comparison
//!
//! * An object equals a map (or a hessian2 object) when every key of the
//!   expected object has an equal entry and the reply has no other entry,
//!   with two allowances: a `null` equals a missing entry, and the reply's
//!   `"class"` is compared only when the expected object names one.
//! * Numbers are compared by value, whatever their Java type (`int`,
//!   `long`, `double`).
//! * A string holding `{{.RequestNumber}}` is compared with the call's
//!   number in it; `"{{.RequestNumber}}"` alone also equals that number as
//!   a Java integer.

use crate::java_contract::hessian::{exception_text, malformed};
use crate::protocol::CallError;
use crate::protocols::dubbo::codec::{
    status_error, Header, OK, RESPONSE_NULL_VALUE, RESPONSE_NULL_VALUE_WITH_ATTACHMENTS,
    RESPONSE_VALUE, RESPONSE_VALUE_WITH_ATTACHMENTS, RESPONSE_WITH_EXCEPTION,
    RESPONSE_WITH_EXCEPTION_WITH_ATTACHMENTS,
};
use crate::protocols::dubbo::serialization::hessian2::ID as HESSIAN2;
use crate::protocols::grpc_generic::request::REQUEST_NUMBER;
use hessian2::{Decoder, Value as HValue};
use serde_json::Value as Json;

/// The value a reply carries (`null` for a void method or a null result),
/// or the failure it reports: a status other than OK (the first line of
/// its message: Dubbo sends the whole stack trace) or an exception thrown
/// by the method.
pub fn decode(header: &Header, body: &[u8]) -> Result<HValue, CallError> {
    if header.serialization() != HESSIAN2 {
        return Err(CallError::Protocol(format!(
            "response serialized with id {}, the request used hessian2 ({HESSIAN2})",
            header.serialization()
        )));
    }
    let mut dec = Decoder::new(body);
    if header.status != OK {
        let message = match dec.read_opt_string() {
            Ok(Some(m)) => m.lines().next().unwrap_or_default().trim().to_owned(),
            Ok(None) => "(no message)".to_owned(),
            Err(e) => format!("(undecodable message: {e})"),
        };
        return Err(status_error(header.status, &message));
    }
    let kind = dec.read_i32().map_err(malformed)?;
    let (value, attachments) = match kind {
        RESPONSE_VALUE => (dec.read_value().map_err(malformed)?, false),
        RESPONSE_VALUE_WITH_ATTACHMENTS => (dec.read_value().map_err(malformed)?, true),
        RESPONSE_NULL_VALUE => (HValue::Null, false),
        RESPONSE_NULL_VALUE_WITH_ATTACHMENTS => (HValue::Null, true),
        RESPONSE_WITH_EXCEPTION | RESPONSE_WITH_EXCEPTION_WITH_ATTACHMENTS => {
            return Err(match dec.read_value() {
                Ok(thrown) => CallError::Server(exception_text(&thrown)),
                Err(e) => CallError::Server(format!(
                    "the provider threw an exception this client cannot decode: {e}"
                )),
            });
        }
        other => {
            return Err(CallError::Protocol(format!(
                "unknown response type {other} (expected 0 to 5)"
            )))
        }
    };
    if attachments {
        dec.skip_value().map_err(malformed)?;
    }
    if !dec.is_empty() {
        return Err(CallError::Protocol(format!(
            "{} bytes after the reply's end",
            dec.remaining().len()
        )));
    }
    Ok(value)
}

/// The first difference between the expected reply and `got` for call
/// `n`, as `path: expected X, got Y` (without a path for the value
/// itself); `None` when they are equal.
pub fn first_difference(expected: &Json, got: &HValue, n: u64) -> Option<String> {
    value(expected, got, n, "")
}

fn at(path: &str, what: String) -> Option<String> {
    Some(if path.is_empty() {
        what
    } else {
        format!("{path}: {what}")
    })
}

fn value(expected: &Json, got: &HValue, n: u64, path: &str) -> Option<String> {
    let differ = || {
        at(
            path,
            format!("expected {}, got {}", shown_json(expected, n), shown(got)),
        )
    };
    match (expected, got) {
        (Json::Null, HValue::Null) => None,
        (Json::Bool(e), HValue::Bool(g)) if e == g => None,
        (Json::Number(e), HValue::Int(_) | HValue::Long(_) | HValue::Double(_)) => {
            let equal = match (e.as_i64(), got) {
                (Some(e), HValue::Int(g)) => e == i64::from(*g),
                (Some(e), HValue::Long(g)) => e == *g,
                (_, g) => e.as_f64() == g.as_f64(),
            };
            if equal {
                None
            } else {
                differ()
            }
        }
        (Json::String(e), HValue::String(g)) => {
            let equal = if e.contains(REQUEST_NUMBER) {
                *g == e.replace(REQUEST_NUMBER, &n.to_string())
            } else {
                e == g
            };
            if equal {
                None
            } else {
                differ()
            }
        }
        (Json::String(e), HValue::Int(_) | HValue::Long(_)) if e == REQUEST_NUMBER => {
            if got.as_i64() == Some(n as i64) {
                None
            } else {
                differ()
            }
        }
        (Json::Array(e), HValue::List(g)) => {
            if e.len() != g.items.len() {
                return at(
                    path,
                    format!("expected {} elements, got {}", e.len(), g.items.len()),
                );
            }
            e.iter()
                .zip(&g.items)
                .enumerate()
                .find_map(|(i, (e, g))| value(e, g, n, &format!("{path}[{i}]")))
        }
        (Json::Object(e), HValue::Map(_) | HValue::Object(_)) => {
            let entries = entries(got);
            let here = |key: &str| {
                if path.is_empty() {
                    key.to_owned()
                } else {
                    format!("{path}.{key}")
                }
            };
            for (key, expected) in e {
                let found = entries.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
                let difference = match found {
                    Some(got) => value(expected, got, n, &here(key)),
                    None if expected.is_null() => None,
                    None => at(
                        &here(key),
                        format!("expected {}, got no entry", shown_json(expected, n)),
                    ),
                };
                if difference.is_some() {
                    return difference;
                }
            }
            entries
                .iter()
                .find(|(k, v)| k != "class" && !v.is_null() && !e.contains_key(k))
                .and_then(|(k, v)| at(&here(k), format!("expected no entry, got {}", shown(v))))
        }
        _ => differ(),
    }
}

/// A map's or an object's entries by their keys' text (an object's class
/// as `"class"`, as `PojoUtils.generalize` names it).
fn entries(v: &HValue) -> Vec<(String, &HValue)> {
    match v {
        HValue::Map(map) => map.entries.iter().map(|(k, v)| (key_text(k), v)).collect(),
        HValue::Object(object) => object.iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        _ => Vec::new(),
    }
}

fn key_text(key: &HValue) -> String {
    match key {
        HValue::String(s) => s.clone(),
        other => to_json(other).to_string(),
    }
}

/// An expected value as an error shows it, with the call's number in.
fn shown_json(v: &Json, n: u64) -> String {
    match v {
        Json::String(s) => quoted(&s.replace(REQUEST_NUMBER, &n.to_string())),
        Json::Array(items) => format!("{} elements", items.len()),
        Json::Object(fields) => format!("an object of {} entries", fields.len()),
        other => other.to_string(),
    }
}

/// A reply's value as an error shows it: strings quoted and cut to 60
/// characters, containers by their size.
fn shown(v: &HValue) -> String {
    match v {
        HValue::Null => "null".to_owned(),
        HValue::Bool(b) => b.to_string(),
        HValue::Int(i) => i.to_string(),
        HValue::Long(l) => l.to_string(),
        HValue::Double(d) => d.to_string(),
        HValue::Date(ms) => format!("a date ({ms} ms)"),
        HValue::String(s) => quoted(s),
        HValue::Binary(b) => format!("{} bytes", b.len()),
        HValue::List(l) => format!("{} elements", l.items.len()),
        HValue::Map(m) => format!("a map of {} entries", m.entries.len()),
        HValue::Object(o) => format!("a {}", o.class_name()),
        HValue::Ref(_) => "a reference to an enclosing value".to_owned(),
    }
}

fn quoted(s: &str) -> String {
    let cut: String = s.chars().take(60).collect();
    if cut.len() < s.len() {
        format!("{cut:?}…")
    } else {
        format!("{s:?}")
    }
}

/// A reply's value as JSON, for callers that want to see it: maps and
/// objects as objects (an object's class under `"class"`), lists as arrays,
/// dates as their milliseconds, binaries as arrays of bytes.
pub fn to_json(v: &HValue) -> Json {
    match v {
        HValue::Null | HValue::Ref(_) => Json::Null,
        HValue::Bool(b) => Json::Bool(*b),
        HValue::Int(i) => Json::from(*i),
        HValue::Long(l) | HValue::Date(l) => Json::from(*l),
        HValue::Double(d) => serde_json::Number::from_f64(*d).map_or(Json::Null, Json::Number),
        HValue::String(s) => Json::String(s.clone()),
        HValue::Binary(b) => Json::from(b.clone()),
        HValue::List(l) => Json::Array(l.items.iter().map(to_json).collect()),
        HValue::Map(_) => Json::Object(
            entries(v)
                .into_iter()
                .map(|(k, v)| (k, to_json(v)))
                .collect(),
        ),
        HValue::Object(o) => {
            let mut fields: serde_json::Map<String, Json> =
                o.iter().map(|(k, v)| (k.to_owned(), to_json(v))).collect();
            fields.insert("class".to_owned(), Json::String(o.class_name().to_owned()));
            Json::Object(fields)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::dubbo::codec::{SERVICE_ERROR, SERVICE_NOT_FOUND};
    use hessian2::{Encoder, Object};
    use proptest::prelude::*;
    use serde_json::json;

    fn s(text: &str) -> HValue {
        HValue::String(text.to_owned())
    }

    /// A generalized `Reservation`, as a Dubbo 3.3 provider sends it.
    fn reservation(reserved: i32) -> HValue {
        HValue::map([
            (s("class"), s("com.example.shop.Reservation")),
            (s("requestId"), s("req-7")),
            (s("sku"), s("apple")),
            (s("reserved"), HValue::Int(reserved)),
            (s("total"), HValue::Long(12)),
            (s("price"), HValue::Double(2.5)),
            (s("note"), HValue::Null),
            (
                s("lines"),
                HValue::list([HValue::map([
                    (s("sku"), s("a")),
                    (s("reserved"), HValue::Int(1)),
                ])]),
            ),
        ])
    }

    fn expected() -> Json {
        json!({
            "requestId": "req-{{.RequestNumber}}", "sku": "apple", "reserved": 3,
            "total": 12, "price": 2.5, "lines": [{"sku": "a", "reserved": 1}],
        })
    }

    #[test]
    fn equal_replies_and_the_first_difference_by_path() {
        assert_eq!(first_difference(&expected(), &reservation(3), 7), None);
        // A class named is compared; a null equals no entry.
        let mut named = expected();
        named["class"] = json!("com.example.shop.Reservation");
        named["missing"] = Json::Null;
        assert_eq!(first_difference(&named, &reservation(3), 7), None);
        named["class"] = json!("com.example.Other");
        assert_eq!(
            first_difference(&named, &reservation(3), 7).unwrap(),
            "class: expected \"com.example.Other\", got \"com.example.shop.Reservation\""
        );
        assert_eq!(
            first_difference(&expected(), &reservation(4), 7).unwrap(),
            "reserved: expected 3, got 4"
        );
        assert_eq!(
            first_difference(&expected(), &reservation(3), 8).unwrap(),
            "requestId: expected \"req-8\", got \"req-7\""
        );
        let mut fewer = expected();
        fewer.as_object_mut().unwrap().remove("price");
        assert_eq!(
            first_difference(&fewer, &reservation(3), 7).unwrap(),
            "price: expected no entry, got 2.5"
        );
        let mut more = expected();
        more["lines"][0]["skew"] = json!("b");
        assert_eq!(
            first_difference(&more, &reservation(3), 7).unwrap(),
            "lines[0].skew: expected \"b\", got no entry"
        );
        more["lines"] = json!([]);
        assert_eq!(
            first_difference(&more, &reservation(3), 7).unwrap(),
            "lines: expected 0 elements, got 1"
        );
        assert_eq!(
            first_difference(&json!(5), &s("5"), 0).unwrap(),
            "expected 5, got \"5\""
        );
        assert_eq!(first_difference(&json!(5.0), &HValue::Int(5), 0), None);
        assert_eq!(
            first_difference(&json!("{{.RequestNumber}}"), &HValue::Long(9), 9),
            None
        );
        assert_eq!(
            first_difference(&json!([1, 2]), &HValue::Null, 0).unwrap(),
            "expected 2 elements, got null"
        );
        // A hessian2 object (a class the provider did not generalize).
        let object = HValue::Object(Object::new("java.math.BigDecimal", [("value", s("1.50"))]));
        assert_eq!(
            first_difference(&json!({"value": "1.50"}), &object, 0),
            None
        );
        assert_eq!(
            to_json(&object),
            json!({"class": "java.math.BigDecimal", "value": "1.50"})
        );
    }

    fn body(write: impl FnOnce(&mut Encoder<&mut Vec<u8>>)) -> Vec<u8> {
        let mut out = Vec::new();
        write(&mut Encoder::new(&mut out));
        out
    }

    fn header(status: u8, len: usize) -> Header {
        Header {
            flag: HESSIAN2,
            status,
            id: 1,
            len,
        }
    }

    #[test]
    fn replies_decode_to_their_value_or_their_failure() {
        let ok = body(|e| {
            e.write_int(RESPONSE_VALUE_WITH_ATTACHMENTS);
            e.write_value(&reservation(3)).unwrap();
            e.write_value(&HValue::map([(s("dubbo"), s("2.0.2"))]))
                .unwrap();
        });
        let value = decode(&header(OK, ok.len()), &ok).unwrap();
        assert_eq!(value, reservation(3));
        assert_eq!(to_json(&value)["lines"][0]["reserved"], json!(1));
        let null = body(|e| e.write_int(RESPONSE_NULL_VALUE));
        assert_eq!(decode(&header(OK, 1), &null).unwrap(), HValue::Null);
        // Dubbo's error message is a stack trace: its first line is kept.
        let failed = body(|e| {
            e.write_string(
                "org.apache.dubbo.rpc.RpcException: No such method cancel in class interface a.B\n\tat x.y(Z.java:1)\n",
            )
        });
        match decode(&header(SERVICE_ERROR, failed.len()), &failed) {
            Err(CallError::Server(m)) => assert_eq!(
                m,
                "SERVICE_ERROR (70): org.apache.dubbo.rpc.RpcException: No such method cancel in class interface a.B"
            ),
            other => panic!("{other:?}"),
        }
        let missing = body(|e| e.write_string("Not found exported service: a.B:0.0.0"));
        assert!(matches!(
            decode(&header(SERVICE_NOT_FOUND, missing.len()), &missing),
            Err(CallError::Server(m)) if m.ends_with("Not found exported service: a.B:0.0.0")
        ));
        let thrown = body(|e| {
            e.write_int(RESPONSE_WITH_EXCEPTION);
            e.write_value(&HValue::Object(Object::new(
                "java.lang.IllegalArgumentException",
                [
                    ("detailMessage", s("no such sku")),
                    ("cause", HValue::Ref(0)),
                ],
            )))
            .unwrap();
        });
        assert!(matches!(
            decode(&header(OK, thrown.len()), &thrown),
            Err(CallError::Server(m)) if m == "exception java.lang.IllegalArgumentException: no such sku"
        ));
        let mut other = header(OK, ok.len());
        other.flag = 8;
        assert!(matches!(decode(&other, &ok), Err(CallError::Protocol(_))));
        assert!(matches!(
            decode(&header(OK, ok.len() - 1), &ok[..ok.len() - 1]),
            Err(CallError::Protocol(_))
        ));
    }

    proptest! {
        /// Arbitrary bytes never panic the decoder.
        #[test]
        fn arbitrary_bytes_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..256),
            status in prop_oneof![Just(OK), any::<u8>()],
        ) {
            if let Ok(v) = decode(&header(status, bytes.len()), &bytes) {
                let _ = first_difference(&expected(), &v, 1);
                let _ = to_json(&v);
            }
        }
    }
}
