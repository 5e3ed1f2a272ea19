//! Thrift values of the type table ([`super::idl`]): made from the user's
//! JSON (checked against the IDL, so that a wrong field or type is named by
//! its path before any load starts), rendered back to JSON, and compared
//! (the first difference named by its path).
//!
//! # JSON mapping
//!
//! | IDL | JSON |
//! | --- | --- |
//! | `bool` | `true`, `false` |
//! | `byte`, `i8`, `i16`, `i32`, `i64` | a number, or a string holding one (for i64 beyond 2⁵³) |
//! | `double` | a number, or `"NaN"`, `"Infinity"`, `"-Infinity"` |
//! | `string` | a string |
//! | `binary` | a base64 string (standard alphabet, padded) |
//! | an enum | its value's name, or its number |
//! | `list`, `set` | an array |
//! | `map` | an object; its keys are strings (numbers for integer keys, names for enum keys, `true`/`false`) |
//! | a struct, union or exception | an object by field name (a union: exactly one) |
//!
//! ghz's template values ([`crate::template`]: `{{.RequestNumber}}`,
//! `{{.UUID}}`, `{{randomString 8}}`, ...) may stand anywhere in a string,
//! and an integer one (`{{.RequestNumber}}`, `{{randomInt 1 9}}`, ...) as
//! the whole value of an integer field, at any depth (not in map keys).

use super::idl::{Kind, Requiredness, Schema, Ty};
use crate::error_text::shorten;
use crate::expect::{first_element_difference, length_difference};
use crate::template::{self, CallValues, Text};
use base64::Engine as _;
use serde_json::Value as Json;

/// ghz's template value for the call's number, as grpc-generic takes it.
pub use crate::protocols::grpc_generic::request::REQUEST_NUMBER;

/// A value of a type of the table.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    Double(f64),
    String(String),
    Binary(Vec<u8>),
    /// A list or a set (sets are compared regardless of order).
    List(Vec<Value>),
    Map(Vec<(Value, Value)>),
    /// A struct's fields that are set: (field id, value), in the IDL's
    /// order of fields.
    Struct(Vec<(i16, Value)>),
    /// A string with template values in it.
    Text(Text),
    /// An integer template value as an integer field's value (`slot`:
    /// the action's own, for its random draws).
    Number {
        value: template::Value,
        slot: u32,
    },
}

impl Value {
    /// Whether a template value is somewhere in it.
    pub fn numbered(&self) -> bool {
        match self {
            Value::Text(_) | Value::Number { .. } => true,
            Value::List(items) => items.iter().any(Value::numbered),
            Value::Map(entries) => entries.iter().any(|(k, v)| k.numbered() || v.numbered()),
            Value::Struct(fields) => fields.iter().any(|(_, v)| v.numbered()),
            _ => false,
        }
    }

    /// The template values in it, in order.
    pub fn template_values(&self) -> Vec<template::Value> {
        fn walk(value: &Value, out: &mut Vec<template::Value>) {
            match value {
                Value::Text(text) => out.extend(text.values()),
                Value::Number { value, .. } => out.push(*value),
                Value::List(items) => items.iter().for_each(|v| walk(v, out)),
                Value::Map(entries) => entries.iter().for_each(|(k, v)| {
                    walk(k, out);
                    walk(v, out)
                }),
                Value::Struct(fields) => fields.iter().for_each(|(_, v)| walk(v, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out
    }

    /// The value of the call with values `call`: every template value
    /// replaced, as `ty` has it.
    pub fn with_values(&self, ty: &Ty, schema: &Schema, call: &CallValues) -> Value {
        let n = call;
        match (self, ty) {
            (Value::Text(text), _) => Value::String(text.render(call)),
            (Value::Number { value, slot }, _) => number_as(
                ty,
                value.integer(call, *slot).expect("an integer value") as u64,
            ),
            (Value::List(items), Ty::List(t) | Ty::Set(t)) => {
                Value::List(items.iter().map(|v| v.with_values(t, schema, n)).collect())
            }
            (Value::Map(entries), Ty::Map(k, v)) => Value::Map(
                entries
                    .iter()
                    .map(|(a, b)| (a.with_values(k, schema, n), b.with_values(v, schema, n)))
                    .collect(),
            ),
            (Value::Struct(fields), Ty::Struct(i)) => {
                let def = &schema.structs[*i];
                Value::Struct(
                    fields
                        .iter()
                        .map(|(id, v)| {
                            let ty = &def.fields.iter().find(|f| f.id == *id).expect("a field").ty;
                            (*id, v.with_values(ty, schema, n))
                        })
                        .collect(),
                )
            }
            (other, _) => other.clone(),
        }
    }
}

/// Call number `n` as an integer of type `ty` (wrapping, as the narrower
/// types take it modulo their range).
pub fn number_as(ty: &Ty, n: u64) -> Value {
    match ty {
        Ty::I8 => Value::I8(n as i8),
        Ty::I16 => Value::I16(n as i16),
        Ty::I32 | Ty::Enum(_) => Value::I32(n as i32),
        _ => Value::I64(n as i64),
    }
}

/// A JSON value's type and text, cut to 40 characters, for errors.
fn got(v: &Json) -> String {
    shorten(v.to_string(), 40)
}

/// `path: expected TYPE, got JSON`.
fn mismatch(path: &str, expected: &str, json: &Json) -> String {
    format!("{path}: expected {expected}, got {}", got(json))
}

/// A [`mismatch`] where `ty` wanted JSON of another form (`an array`, `an
/// object`).
fn form_mismatch(path: &str, schema: &Schema, ty: &Ty, form: &str, json: &Json) -> String {
    mismatch(path, &format!("{} ({form})", schema.type_name(ty)), json)
}

/// Builds values of the table from JSON.
pub struct FromJson<'a> {
    pub schema: &'a Schema,
    /// The method's template values (`{{.MethodName}}`, ...).
    pub method: &'a template::Method,
}

impl FromJson<'_> {
    /// A value of type `ty` from `json`, at `path` (for errors).
    pub fn value(&self, ty: &Ty, json: &Json, path: &str) -> Result<Value, String> {
        let schema = self.schema;
        match ty {
            Ty::Bool => match json {
                Json::Bool(b) => Ok(Value::Bool(*b)),
                other => Err(mismatch(path, "bool", other)),
            },
            Ty::I8 | Ty::I16 | Ty::I32 | Ty::I64 => {
                let json = &match self.integer_template(json, path)? {
                    Template::Value(value) => return Ok(value),
                    Template::Fixed(fixed) => fixed,
                    Template::None => json.clone(),
                };
                let n = integer(json).ok_or_else(|| mismatch(path, &schema.type_name(ty), json))?;
                let fits = |v: Option<Value>| {
                    v.ok_or_else(|| format!("{path}: {n} does not fit in {}", schema.type_name(ty)))
                };
                match ty {
                    Ty::I8 => fits(i8::try_from(n).ok().map(Value::I8)),
                    Ty::I16 => fits(i16::try_from(n).ok().map(Value::I16)),
                    Ty::I32 => fits(i32::try_from(n).ok().map(Value::I32)),
                    _ => fits(i64::try_from(n).ok().map(Value::I64)),
                }
            }
            Ty::Double => match json {
                Json::Number(n) => Ok(Value::Double(n.as_f64().unwrap_or(f64::NAN))),
                Json::String(s) => match s.as_str() {
                    "NaN" => Ok(Value::Double(f64::NAN)),
                    "Infinity" => Ok(Value::Double(f64::INFINITY)),
                    "-Infinity" => Ok(Value::Double(f64::NEG_INFINITY)),
                    text => text
                        .parse()
                        .map(Value::Double)
                        .map_err(|_| mismatch(path, "double", json)),
                },
                other => Err(mismatch(path, "double", other)),
            },
            Ty::String => match json {
                Json::String(s) => self.text(s, path),
                other => Err(mismatch(path, "string", other)),
            },
            Ty::Binary => match json {
                Json::String(s) => base64::engine::general_purpose::STANDARD
                    .decode(s)
                    .map(Value::Binary)
                    .map_err(|e| {
                        format!("{path}: expected binary as base64, got {} ({e})", got(json))
                    }),
                other => Err(mismatch(path, "binary (a base64 string)", other)),
            },
            Ty::Enum(i) => {
                let def = &schema.enums[*i];
                let expected = || format!("{} (one of {}, or a number)", def.name, def.names());
                let json = &match self.integer_template(json, path)? {
                    Template::Value(value) => return Ok(value),
                    Template::Fixed(fixed) => fixed,
                    Template::None => json.clone(),
                };
                match json {
                    Json::String(s) => def
                        .number_of(s)
                        .map(Value::I32)
                        .ok_or_else(|| mismatch(path, &expected(), json)),
                    Json::Number(_) => integer(json)
                        .and_then(|n| i32::try_from(n).ok())
                        .map(Value::I32)
                        .ok_or_else(|| mismatch(path, &expected(), json)),
                    other => Err(mismatch(path, &expected(), other)),
                }
            }
            Ty::List(t) | Ty::Set(t) => match json {
                Json::Array(items) => items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.value(t, item, &format!("{path}[{i}]")))
                    .collect::<Result<_, _>>()
                    .map(Value::List),
                other => Err(form_mismatch(path, schema, ty, "an array", other)),
            },
            Ty::Map(k, v) => match json {
                Json::Object(entries) => entries
                    .iter()
                    .map(|(key, value)| {
                        let here = format!("{path}[{key:?}]");
                        let key = self.key(k, key, &here)?;
                        Ok((key, self.value(v, value, &here)?))
                    })
                    .collect::<Result<_, String>>()
                    .map(Value::Map),
                other => Err(form_mismatch(path, schema, ty, "an object", other)),
            },
            Ty::Struct(i) => {
                let def = &schema.structs[*i];
                let Json::Object(members) = json else {
                    return Err(mismatch(path, &format!("{} (an object)", def.name), json));
                };
                let at = |name: &str| {
                    if path.is_empty() {
                        name.to_owned()
                    } else {
                        format!("{path}.{name}")
                    }
                };
                let mut fields = Vec::new();
                for (name, value) in members {
                    let Some(field) = def.field_named(name) else {
                        return Err(format!(
                            "{}: {} has no field `{name}` (its fields: {})",
                            at(name),
                            def.name,
                            def.field_names()
                        ));
                    };
                    if !value.is_null() {
                        fields.push((field.id, self.value(&field.ty, value, &at(name))?));
                    }
                }
                for field in &def.fields {
                    let set = fields.iter().any(|(id, _)| *id == field.id);
                    if field.requiredness == Requiredness::Required && !set {
                        return Err(format!(
                            "{}: required field of {} missing",
                            at(&field.name),
                            def.name
                        ));
                    }
                }
                if def.kind == Kind::Union && fields.len() != 1 {
                    return Err(format!(
                        "{}: union {} takes exactly one of its fields ({}), got {}",
                        if path.is_empty() { "the value" } else { path },
                        def.name,
                        def.field_names(),
                        fields.len()
                    ));
                }
                // In the IDL's order, whatever the JSON's was.
                fields.sort_by_key(|(id, _)| def.fields.iter().position(|f| f.id == *id));
                Ok(Value::Struct(fields))
            }
        }
    }

    /// A map key from its JSON object key.
    fn key(&self, ty: &Ty, key: &str, path: &str) -> Result<Value, String> {
        let json = match ty {
            Ty::String | Ty::Binary => Json::String(key.to_owned()),
            Ty::Enum(_) => match key.parse::<i64>() {
                Ok(n) => Json::from(n),
                Err(_) => Json::String(key.to_owned()),
            },
            Ty::Bool | Ty::I8 | Ty::I16 | Ty::I32 | Ty::I64 | Ty::Double => {
                serde_json::from_str(key).unwrap_or_else(|_| Json::String(key.to_owned()))
            }
            _ => {
                return Err(format!(
                    "{path}: maps with {} keys cannot be written in JSON",
                    self.schema.type_name(ty)
                ))
            }
        };
        let value = self.value(ty, &json, path)?;
        if value.numbered() {
            return Err(format!(
                "{path}: {REQUEST_NUMBER} is not supported in a map key"
            ));
        }
        Ok(value)
    }
}

/// A string, with at most one `{{.RequestNumber}}` in it.
/// What a JSON string holding `{{` is where an integer goes.
enum Template {
    /// An integer template value.
    Value(Value),
    /// Only the method's values: the text they make.
    Fixed(Json),
    /// No template.
    None,
}

impl FromJson<'_> {
    /// A string, with its template values parsed.
    fn text(&self, s: &str, path: &str) -> Result<Value, String> {
        if !s.contains("{{") {
            return Ok(Value::String(s.to_owned()));
        }
        let text = Text::parse(s, self.method).map_err(|e| format!("{path}: {e}"))?;
        Ok(match text.fixed() {
            Some(fixed) => Value::String(fixed.to_owned()),
            None => Value::Text(text),
        })
    }

    /// An integer field's template: one integer action alone.
    fn integer_template(&self, json: &Json, path: &str) -> Result<Template, String> {
        let Some(s) = json.as_str().filter(|s| s.contains("{{")) else {
            return Ok(Template::None);
        };
        let text = Text::parse(s, self.method).map_err(|e| format!("{path}: {e}"))?;
        if let Some(fixed) = text.fixed() {
            return Ok(Template::Fixed(Json::String(fixed.to_owned())));
        }
        let probe = CallValues::new(0, 0, template::Needs::NONE);
        match text.sole_value() {
            Some((value, slot)) if value.integer(&probe, slot).is_some() => {
                Ok(Template::Value(Value::Number { value, slot }))
            }
            _ => Err(format!(
                "{path}: an integer field's value is one integer action alone \
                 ({REQUEST_NUMBER}, {{{{.WorkerID}}}}, {{{{.TimestampUnix}}}}, \
                 {{{{randomInt MIN MAX}}}}, ...), not `{s}`"
            )),
        }
    }
}

/// An integer in JSON: a number without a fraction, or a string of one.
fn integer(json: &Json) -> Option<i128> {
    match json {
        Json::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from)),
        Json::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A value as JSON, in the mapping above (the inverse of [`FromJson`]).
pub fn to_json(schema: &Schema, ty: &Ty, value: &Value) -> Json {
    match (value, ty) {
        (Value::Bool(b), _) => Json::Bool(*b),
        (Value::I8(n), _) => Json::from(*n),
        (Value::I16(n), _) => Json::from(*n),
        (Value::I32(n), Ty::Enum(i)) => match schema.enums[*i].name_of(*n) {
            Some(name) => Json::String(name.to_owned()),
            None => Json::from(*n),
        },
        (Value::I32(n), _) => Json::from(*n),
        (Value::I64(n), _) => Json::from(*n),
        (Value::Double(d), _) => serde_json::Number::from_f64(*d)
            .map(Json::Number)
            .unwrap_or_else(|| Json::String(d.to_string())),
        (Value::String(s), _) => Json::String(s.clone()),
        (Value::Binary(b), _) => Json::String(base64::engine::general_purpose::STANDARD.encode(b)),
        (Value::List(items), Ty::List(t) | Ty::Set(t)) => {
            Json::Array(items.iter().map(|v| to_json(schema, t, v)).collect())
        }
        (Value::Map(entries), Ty::Map(k, v)) => Json::Object(
            entries
                .iter()
                .map(|(key, value)| (key_text(schema, k, key), to_json(schema, v, value)))
                .collect(),
        ),
        (Value::Struct(fields), Ty::Struct(i)) => Json::Object(
            schema.structs[*i]
                .set_fields(fields)
                .map(|(field, v)| (field.name.clone(), to_json(schema, &field.ty, v)))
                .collect(),
        ),
        (Value::Text(text), _) => Json::String(text.written()),
        (Value::Number { value, .. }, _) => Json::String(value.written()),
        // A value decoded against its type always matches it.
        (other, _) => Json::String(format!("{other:?}")),
    }
}

/// A value as JSON text with its struct fields in the IDL's order (a JSON
/// object from serde_json's map would sort them), for errors.
pub fn to_text(schema: &Schema, ty: &Ty, value: &Value) -> String {
    let list =
        |items: Vec<String>, open: char, close: char| format!("{open}{}{close}", items.join(","));
    match (value, ty) {
        (Value::List(items), Ty::List(t) | Ty::Set(t)) => list(
            items.iter().map(|v| to_text(schema, t, v)).collect(),
            '[',
            ']',
        ),
        (Value::Map(entries), Ty::Map(k, v)) => list(
            entries
                .iter()
                .map(|(key, value)| {
                    let key = Json::String(key_text(schema, k, key));
                    format!("{key}:{}", to_text(schema, v, value))
                })
                .collect(),
            '{',
            '}',
        ),
        (Value::Struct(fields), Ty::Struct(i)) => list(
            schema.structs[*i]
                .set_fields(fields)
                .map(|(field, v)| {
                    let name = Json::String(field.name.clone());
                    format!("{name}:{}", to_text(schema, &field.ty, v))
                })
                .collect(),
            '{',
            '}',
        ),
        _ => to_json(schema, ty, value).to_string(),
    }
}

/// A map key as a JSON object's key: a string as it is, any other value
/// as its JSON text.
fn key_text(schema: &Schema, ty: &Ty, key: &Value) -> String {
    match to_json(schema, ty, key) {
        Json::String(s) => s,
        other => other.to_string(),
    }
}

/// The first difference between `expected` and `got`, both of type `ty`,
/// as `path: expected X, got Y`; `None` when they are equal. Sets and maps
/// are compared whatever their order; a field unset on one side only is a
/// difference.
pub fn first_difference(
    schema: &Schema,
    ty: &Ty,
    expected: &Value,
    got: &Value,
    path: &str,
) -> Option<String> {
    match (expected, got, ty) {
        (Value::Double(e), Value::Double(g), _) if e.is_nan() && g.is_nan() => None,
        (Value::List(e), Value::List(g), Ty::List(t)) => {
            first_element_difference(e, g, path, |e, g, path| {
                first_difference(schema, t, e, g, path)
            })
        }
        (Value::List(e), Value::List(g), Ty::Set(t)) => {
            if let Some(lengths) = length_difference(path, e.len(), g.len()) {
                return Some(lengths);
            }
            e.iter().find_map(|want| {
                let found = g
                    .iter()
                    .any(|have| first_difference(schema, t, want, have, path).is_none());
                (!found).then(|| {
                    format!(
                        "{path}: expected an element {}, got none",
                        shown(schema, t, want)
                    )
                })
            })
        }
        (Value::Map(e), Value::Map(g), Ty::Map(k, v)) => {
            if e.len() != g.len() {
                return Some(format!(
                    "{path}: expected {} entries, got {}",
                    e.len(),
                    g.len()
                ));
            }
            e.iter().find_map(|(key, want)| {
                let here = format!("{path}[{}]", shown(schema, k, key));
                match g
                    .iter()
                    .find(|(have, _)| first_difference(schema, k, key, have, "").is_none())
                {
                    Some((_, have)) => first_difference(schema, v, want, have, &here),
                    None => Some(format!("{here}: expected an entry, got none")),
                }
            })
        }
        (Value::Struct(e), Value::Struct(g), Ty::Struct(i)) => {
            let def = &schema.structs[*i];
            def.fields.iter().find_map(|field| {
                let here = if path.is_empty() {
                    field.name.clone()
                } else {
                    format!("{path}.{}", field.name)
                };
                match (field_value(e, field.id), field_value(g, field.id)) {
                    (None, None) => None,
                    (Some(e), Some(g)) => first_difference(schema, &field.ty, e, g, &here),
                    (Some(e), None) => Some(format!(
                        "{here}: expected {}, got no value",
                        shown(schema, &field.ty, e)
                    )),
                    (None, Some(g)) => Some(format!(
                        "{here}: expected no value, got {}",
                        shown(schema, &field.ty, g)
                    )),
                }
            })
        }
        (e, g, _) if e == g => None,
        (e, g, _) => Some(format!(
            "{path}: expected {}, got {}",
            shown(schema, ty, e),
            shown(schema, ty, g)
        )),
    }
}

/// The value of field `id` in a struct's fields, if it is set.
fn field_value(fields: &[(i16, Value)], id: i16) -> Option<&Value> {
    fields.iter().find(|(f, _)| *f == id).map(|(_, v)| v)
}

/// A value as an error shows it: JSON, cut to 60 characters.
fn shown(schema: &Schema, ty: &Ty, v: &Value) -> String {
    shorten(to_text(schema, ty, v), 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn shop() -> Schema {
        let idl = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/thrift-shop/idl/shop.thrift");
        Schema::load(&idl).unwrap()
    }

    fn of(schema: &Schema, name: &str) -> Ty {
        Ty::Struct(schema.structs.iter().position(|s| s.name == name).unwrap())
    }

    /// `json` read as a value of `ty`, outside any method's templates.
    fn from_json(schema: &Schema, ty: &Ty, json: Json) -> Value {
        FromJson {
            schema,
            method: &template::Method::default(),
        }
        .value(ty, &json, "")
        .unwrap()
    }

    #[test]
    fn the_first_difference_is_named_by_its_path_with_both_values() {
        let schema = shop();
        let ty = of(&schema, "Reservation");
        let value = |json: Json| from_json(&schema, &ty, json);
        let expected = value(json!({
            "requestId": "r", "status": "PARTIAL", "customer": "ada",
            "lines": [{"sku": "a", "reserved": 2}, {"sku": "b", "reserved": 3}],
        }));
        let diff = |got: Json| first_difference(&schema, &ty, &expected, &value(got), "");
        assert_eq!(
            diff(json!({"requestId": "r", "status": 2, "customer": "ada",
                        "lines": [{"sku": "a", "reserved": 2}, {"sku": "b", "reserved": 3}]})),
            None
        );
        assert_eq!(
            diff(
                json!({"requestId": "r", "status": "PARTIAL", "customer": "ada",
                        "lines": [{"sku": "a", "reserved": 2}, {"sku": "b", "reserved": 1}]})
            ),
            Some("lines[1].reserved: expected 3, got 1".into())
        );
        assert_eq!(
            diff(json!({"requestId": "r", "status": "RESERVED"})),
            Some(r#"status: expected "PARTIAL", got "RESERVED""#.into())
        );
        assert_eq!(
            diff(json!({"requestId": "r", "status": "PARTIAL", "lines": [{"sku": "a"}]})),
            Some("lines: expected 2 elements, got 1".into())
        );
        assert_eq!(
            diff(
                json!({"requestId": "r", "status": "PARTIAL", "customer": "ada",
                        "lines": [{"sku": "a", "reserved": 2}, {"sku": "b", "reserved": 3}],
                        "noteBytes": 5})
            ),
            Some("noteBytes: expected no value, got 5".into())
        );
        assert_eq!(
            diff(json!({"requestId": "r", "status": "PARTIAL",
                        "lines": [{"sku": "a", "reserved": 2}, {"sku": "b", "reserved": 3}]})),
            Some(r#"customer: expected "ada", got no value"#.into())
        );
    }

    #[test]
    fn sets_and_maps_are_compared_whatever_their_order() {
        let schema = shop();
        let ty = of(&schema, "ReserveRequest");
        let value = |json: Json| from_json(&schema, &ty, json);
        let expected = value(json!({"tags": ["a", "b"], "attributes": {"x": "1", "y": "2"}}));
        let reordered = Value::Struct(vec![
            (
                5,
                Value::List(vec![Value::String("b".into()), Value::String("a".into())]),
            ),
            (
                6,
                Value::Map(vec![
                    (Value::String("y".into()), Value::String("2".into())),
                    (Value::String("x".into()), Value::String("1".into())),
                ]),
            ),
        ]);
        assert_eq!(
            first_difference(&schema, &ty, &expected, &reordered, ""),
            None
        );
        let other = value(json!({"tags": ["a", "c"], "attributes": {"x": "1", "y": "3"}}));
        assert_eq!(
            first_difference(&schema, &ty, &expected, &other, ""),
            Some(r#"tags: expected an element "b", got none"#.into())
        );
        let other = value(json!({"tags": ["b", "a"], "attributes": {"x": "1", "y": "3"}}));
        assert_eq!(
            first_difference(&schema, &ty, &expected, &other, ""),
            Some(r#"attributes["y"]: expected "2", got "3""#.into())
        );
        // JSON back in the IDL's order, binary as base64, enums by name.
        let full = value(json!({"customer": {"tier": 2, "name": "ada"}, "note": "aGk="}));
        assert_eq!(
            to_text(&schema, &ty, &full),
            r#"{"customer":{"name":"ada","tier":"GOLD"},"note":"aGk="}"#
        );
    }
}
