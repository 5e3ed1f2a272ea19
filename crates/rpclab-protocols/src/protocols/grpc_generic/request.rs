//! A message from the user's JSON: checked field by field against its
//! descriptor (so that a wrong field or a wrong type is named by its path
//! before any load starts), made a [`DynamicMessage`] by prost-reflect's
//! JSON mapping, and encoded once into a [`Template`] whose per-call part
//! is only what changes.
//!
//! # Template values
//!
//! ghz's template values and functions ([`crate::template`]:
//! `{{.RequestNumber}}`, `{{.UUID}}`, `{{randomString 8}}`, ...) may stand
//!
//! * inside a `string` field, anywhere in the string, as often as wanted
//!   (`"order-{{.RequestNumber}}-{{randomString 4}}"`);
//! * as the whole value of an integer field (`"id": "{{.RequestNumber}}"`,
//!   `"{{randomInt 1 100}}"`, `"{{.TimestampUnixMilli}}"`), 32-bit fields
//!   taking the value modulo 2³²;
//!
//! in messages at any depth and in elements of repeated string or message
//! fields, but not in map fields nor in packed repeated numbers. The
//! method's own values (`{{.MethodName}}`, ...) are written in when the
//! JSON is parsed, so a message with only those is still fixed. An action
//! ghz does not have is an error that names it.
//!
//! # Encoding once
//!
//! Without a template value, the message is encoded once and every call
//! sends the same bytes. With one, the encoded message is kept as
//! [`Piece`]s: the bytes of the fields that never change, and for each
//! template value its field's key and its parsed text; a nested message
//! that holds one is a piece of its own, since its length changes with the
//! values. A call writes the pieces with its values ([`CallValues`]), one
//! allocation for its body.

use crate::error_text::listed;
use crate::error_text::shorten;
use crate::protocols::grpc::MAX_MESSAGE_SIZE;
use crate::template::{self, CallValues, Needs, Text};
use bytes::{BufMut, Bytes, BytesMut};
use prost::Message as _;
use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, ReflectMessage, Value,
};
use serde_json::Value as Json;

/// ghz's template value for the call's number.
pub const REQUEST_NUMBER: &str = "{{.RequestNumber}}";

/// One step of a path into a message: a field, or an element of a list.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Field(u32),
    Index(usize),
}

/// What a template value becomes.
#[derive(Clone, Debug, PartialEq)]
enum Slot {
    /// A string field's text, rendered per call.
    Text(Text),
    /// An integer field's value (`value`, with its `slot` for its random
    /// draws), encoded as the field's integer kind.
    Number {
        number: Number,
        value: template::Value,
        slot: u32,
    },
}

/// The integer encodings a template value may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Number {
    Int32,
    Int64,
    Uint32,
    Uint64,
    Sint32,
    Sint64,
    Fixed32,
    Fixed64,
}

impl Number {
    fn of(kind: &Kind) -> Option<Number> {
        Some(match kind {
            Kind::Int32 => Number::Int32,
            Kind::Int64 => Number::Int64,
            Kind::Uint32 => Number::Uint32,
            Kind::Uint64 => Number::Uint64,
            Kind::Sint32 => Number::Sint32,
            Kind::Sint64 => Number::Sint64,
            Kind::Fixed32 | Kind::Sfixed32 => Number::Fixed32,
            Kind::Fixed64 | Kind::Sfixed64 => Number::Fixed64,
            _ => return None,
        })
    }

    /// The protobuf wire type of this encoding.
    fn wire_type(self) -> u32 {
        match self {
            Number::Fixed32 => 5,
            Number::Fixed64 => 1,
            _ => 0,
        }
    }

    fn len(self, n: u64) -> usize {
        match self {
            Number::Fixed32 => 4,
            Number::Fixed64 => 8,
            _ => varint_len(self.varint(n)),
        }
    }

    fn varint(self, n: u64) -> u64 {
        match self {
            // Negative 32-bit values are sign-extended to ten bytes.
            Number::Int32 => n as u32 as i32 as i64 as u64,
            Number::Uint32 => u64::from(n as u32),
            Number::Sint32 => {
                let v = n as u32 as i32;
                u64::from(((v << 1) ^ (v >> 31)) as u32)
            }
            Number::Sint64 => {
                let v = n as i64;
                ((v << 1) ^ (v >> 63)) as u64
            }
            _ => n,
        }
    }

    fn write(self, n: u64, out: &mut BytesMut) {
        match self {
            Number::Fixed32 => out.put_u32_le(n as u32),
            Number::Fixed64 => out.put_u64_le(n),
            _ => put_varint(out, self.varint(n)),
        }
    }
}

/// A message from JSON, checked against its descriptor, with where its
/// template values are.
pub struct Parsed {
    pub message: DynamicMessage,
    slots: Vec<(Vec<Step>, Slot)>,
}

/// Builds `desc` from `json`; `what` names it in errors ("--data",
/// "--expect"), `method` gives the method's template values. A field the
/// message does not have, a value of the wrong type or an unknown template
/// action is an error naming its path (`items[1].sku`).
pub fn parse(
    desc: &MessageDescriptor,
    json: &Json,
    what: &str,
    method: &template::Method,
) -> Result<Parsed, String> {
    let mut json = json.clone();
    let mut walk = Walk {
        steps: Vec::new(),
        slots: Vec::new(),
        method,
    };
    walk.message(desc, &mut json, "")
        .map_err(|e| format!("{what}: {e}"))?;
    let message = DynamicMessage::deserialize(desc.clone(), json)
        .map_err(|e| format!("{what} is no {}: {e}", desc.full_name()))?;
    // In the message's order (field numbers), whatever the JSON's was.
    walk.slots.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Parsed {
        message,
        slots: walk.slots,
    })
}

/// The JSON checker: the path it is at, and the template values found.
struct Walk<'m> {
    steps: Vec<Step>,
    slots: Vec<(Vec<Step>, Slot)>,
    method: &'m template::Method,
}

/// A JSON value's type, for errors (also the generic Dubbo call's).
pub(crate) fn json_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// A JSON value, cut to 40 characters, for errors (also the generic Dubbo
/// call's).
pub(crate) fn shown(v: &Json) -> String {
    shorten(v.to_string(), 40)
}

/// The well-known types have JSON forms of their own (a timestamp is a
/// string); prost-reflect checks those.
fn well_known(desc: &MessageDescriptor) -> bool {
    desc.full_name().starts_with("google.protobuf.")
}

impl Walk<'_> {
    fn message(
        &mut self,
        desc: &MessageDescriptor,
        json: &mut Json,
        path: &str,
    ) -> Result<(), String> {
        if well_known(desc) {
            return Ok(());
        }
        let Json::Object(fields) = json else {
            return Err(format!(
                "{}: an object ({}) expected, got {} `{}`",
                if path.is_empty() { "the message" } else { path },
                desc.full_name(),
                json_type(json),
                shown(json)
            ));
        };
        for (key, value) in fields.iter_mut() {
            let here = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            let Some(field) = desc
                .get_field_by_json_name(key)
                .or_else(|| desc.get_field_by_name(key))
            else {
                return Err(format!(
                    "{here}: {} has no field `{key}` (its fields: {})",
                    desc.full_name(),
                    listed(desc.fields().map(|f| f.name().to_owned()))
                ));
            };
            self.steps.push(Step::Field(field.number()));
            let checked = self.field(&field, value, &here);
            self.steps.pop();
            checked?;
        }
        Ok(())
    }

    fn field(
        &mut self,
        field: &FieldDescriptor,
        json: &mut Json,
        path: &str,
    ) -> Result<(), String> {
        if json.is_null() {
            return Ok(());
        }
        if field.is_map() {
            let Json::Object(entries) = json else {
                return Err(mismatch(path, "an object (a map)", json));
            };
            let value_field = match field.kind() {
                Kind::Message(entry) => entry.map_entry_value_field(),
                _ => return Ok(()),
            };
            let before = self.slots.len();
            for (key, value) in entries.iter_mut() {
                self.single(
                    &value_field.kind(),
                    value,
                    &format!("{path}[\"{key}\"]"),
                    false,
                )?;
            }
            if self.slots.len() > before {
                return Err(format!(
                    "{path}: a template value that changes per call is not supported in a map field"
                ));
            }
            return Ok(());
        }
        if field.is_list() {
            let Json::Array(items) = json else {
                return Err(mismatch(path, "an array (a repeated field)", json));
            };
            let numbers_packed = field.is_packed();
            for (i, item) in items.iter_mut().enumerate() {
                self.steps.push(Step::Index(i));
                let checked =
                    self.single(&field.kind(), item, &format!("{path}[{i}]"), numbers_packed);
                self.steps.pop();
                checked?;
            }
            return Ok(());
        }
        self.single(&field.kind(), json, path, false)
    }

    /// One value of `kind` (a singular field, or an element of a list or a
    /// map); `packed`: an element of a packed list, which cannot hold a
    /// template value.
    fn single(
        &mut self,
        kind: &Kind,
        json: &mut Json,
        path: &str,
        packed: bool,
    ) -> Result<(), String> {
        match kind {
            Kind::Message(desc) => self.message(desc, json, path),
            Kind::String => match json {
                Json::String(s) => {
                    if !s.contains("{{") {
                        return Ok(());
                    }
                    let text = Text::parse(s, self.method).map_err(|e| format!("{path}: {e}"))?;
                    match text.fixed() {
                        Some(fixed) => *s = fixed.to_owned(),
                        None => {
                            s.clear();
                            self.slots.push((self.steps.clone(), Slot::Text(text)));
                        }
                    }
                    Ok(())
                }
                other => Err(mismatch(path, "a string", other)),
            },
            Kind::Bytes => match json {
                Json::String(_) => Ok(()),
                other => Err(mismatch(path, "a base64 string (bytes)", other)),
            },
            Kind::Bool => match json {
                Json::Bool(_) => Ok(()),
                other => Err(mismatch(path, "true or false", other)),
            },
            Kind::Double | Kind::Float => match json {
                Json::Number(_) => Ok(()),
                Json::String(s)
                    if s.parse::<f64>().is_ok()
                        || ["NaN", "Infinity", "-Infinity"].contains(&s.as_str()) =>
                {
                    Ok(())
                }
                other => Err(mismatch(path, "a number", other)),
            },
            Kind::Enum(desc) => match json {
                Json::Number(n) if n.is_i64() => Ok(()),
                Json::String(s) if desc.get_value_by_name(s).is_some() => Ok(()),
                other => {
                    let names: Vec<String> = desc.values().map(|v| v.name().to_owned()).collect();
                    Err(mismatch(
                        path,
                        &format!("one of {} ({})", names.join(", "), desc.full_name()),
                        other,
                    ))
                }
            },
            integer => {
                let number = Number::of(integer).expect("every other kind is an integer");
                if let Some(s) = json.as_str().filter(|s| s.contains("{{")) {
                    let text = Text::parse(s, self.method).map_err(|e| format!("{path}: {e}"))?;
                    if let Some(fixed) = text.fixed() {
                        *json = Json::String(fixed.to_owned());
                        return match fixed.parse::<i128>() {
                            Ok(_) => Ok(()),
                            Err(_) => Err(mismatch(path, "an integer", json)),
                        };
                    }
                    let sole = text.sole_value().filter(|(value, _)| {
                        value
                            .integer(&CallValues::new(0, 0, Needs::NONE), 0)
                            .is_some()
                    });
                    let Some((value, slot)) = sole else {
                        return Err(format!(
                            "{path}: an integer field's value is one integer action alone \
                             ({REQUEST_NUMBER}, {{{{.WorkerID}}}}, {{{{.TimestampUnix}}}}, \
                             {{{{randomInt MIN MAX}}}}, ...), not `{s}`"
                        ));
                    };
                    if packed {
                        return Err(format!(
                            "{path}: a template value is not supported in a repeated number field"
                        ));
                    }
                    *json = Json::from(0);
                    self.slots.push((
                        self.steps.clone(),
                        Slot::Number {
                            number,
                            value,
                            slot,
                        },
                    ));
                    return Ok(());
                }
                match json {
                    Json::Number(n) if n.is_i64() || n.is_u64() => Ok(()),
                    Json::String(s) if s.parse::<i128>().is_ok() => Ok(()),
                    other => Err(mismatch(
                        path,
                        &format!("an integer or \"{REQUEST_NUMBER}\""),
                        other,
                    )),
                }
            }
        }
    }
}

fn mismatch(path: &str, expected: &str, got: &Json) -> String {
    format!(
        "{path}: {expected} expected, got {} `{}`",
        json_type(got),
        shown(got)
    )
}

/// A message encoded once, with the places where the call's number goes.
#[derive(Debug)]
pub struct Template {
    /// The message with no template value: the whole length-prefixed body.
    fixed: Option<Bytes>,
    pieces: Vec<Piece>,
    templates: Vec<String>,
    /// What a call must take (its time, a UUID) before it is written.
    needs: Needs,
}

/// A part of an encoded message (see the module documentation).
#[derive(Debug, PartialEq)]
enum Piece {
    /// Encoded fields that never change.
    Fixed(Bytes),
    /// A string field: its key, then the text rendered.
    Text { key: Vec<u8>, text: Text },
    /// An integer field: its key, then the value.
    Number {
        key: Vec<u8>,
        number: Number,
        value: template::Value,
        slot: u32,
    },
    /// A nested message that holds a template value: its key, its length,
    /// its pieces.
    Message { key: Vec<u8>, pieces: Vec<Piece> },
}

impl Template {
    pub fn new(parsed: &Parsed) -> Result<Template, String> {
        let templates = parsed
            .slots
            .iter()
            .map(|(_, slot)| match slot {
                Slot::Text(text) => text.written(),
                Slot::Number { value, .. } => value.written(),
            })
            .collect();
        let needs = parsed
            .slots
            .iter()
            .fold(Needs::NONE, |n, (_, slot)| match slot {
                Slot::Text(text) => n.union(text.needs()),
                Slot::Number { value, .. } => n.union(value.needs()),
            });
        let template = if parsed.slots.is_empty() {
            let message = parsed.message.encode_to_vec();
            Template {
                fixed: Some(prefixed(&message)),
                pieces: vec![Piece::Fixed(Bytes::from(message))],
                templates,
                needs,
            }
        } else {
            let slots: Vec<(&[Step], &Slot)> = parsed
                .slots
                .iter()
                .map(|(path, slot)| (path.as_slice(), slot))
                .collect();
            Template {
                fixed: None,
                pieces: pieces(&parsed.message, &slots),
                templates,
                needs,
            }
        };
        // The largest number a run may reach has 20 digits (a random
        // string's length is its own; N ≤ 0 draws at most 16).
        let largest = template.message_len(&CallValues::fixed(
            u64::MAX,
            u64::MAX,
            0,
            i128::from(i64::MAX),
            0,
        ));
        if largest > MAX_MESSAGE_SIZE {
            return Err(format!(
                "a message of {largest} bytes: more than the {MAX_MESSAGE_SIZE} rpclab sends"
            ));
        }
        Ok(template)
    }

    /// The template values in the message, as written.
    pub fn templates(&self) -> &[String] {
        &self.templates
    }

    /// Whether calls differ (the message holds a template value).
    pub fn numbered(&self) -> bool {
        self.fixed.is_none()
    }

    /// What a call must take before its message is written.
    pub fn needs(&self) -> Needs {
        self.needs
    }

    /// The template values, in the order they are written.
    pub fn values(&self) -> Vec<template::Value> {
        fn walk(pieces: &[Piece], out: &mut Vec<template::Value>) {
            for piece in pieces {
                match piece {
                    Piece::Fixed(_) => {}
                    Piece::Text { text, .. } => out.extend(text.values()),
                    Piece::Number { value, .. } => out.push(*value),
                    Piece::Message { pieces, .. } => walk(pieces, out),
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.pieces, &mut out);
        out
    }

    /// The length-prefixed gRPC body of the call with values `call`.
    pub fn body(&self, call: &CallValues) -> Bytes {
        if let Some(fixed) = &self.fixed {
            return fixed.clone();
        }
        let len = self.message_len(call);
        let mut out = BytesMut::with_capacity(5 + len);
        out.put_u8(0);
        out.put_u32(len as u32);
        write_pieces(&self.pieces, call, &mut out);
        out.freeze()
    }

    /// The encoded message of the call with values `call` (without the
    /// gRPC prefix).
    pub fn message(&self, call: &CallValues) -> Bytes {
        match &self.fixed {
            Some(fixed) => fixed.slice(5..),
            None => self.body(call).slice(5..),
        }
    }

    fn message_len(&self, call: &CallValues) -> usize {
        pieces_len(&self.pieces, call)
    }
}

fn prefixed(message: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(5 + message.len());
    out.put_u8(0);
    out.put_u32(message.len() as u32);
    out.put_slice(message);
    out.freeze()
}

/// The pieces of `message`, where `slots` (paths relative to it) are.
fn pieces(message: &DynamicMessage, slots: &[(&[Step], &Slot)]) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut fixed = BytesMut::new();
    let mut fields: Vec<FieldDescriptor> = message.descriptor().fields().collect();
    fields.sort_by_key(FieldDescriptor::number);
    for field in fields {
        let here: Vec<(&[Step], &Slot)> = slots
            .iter()
            .filter(|(path, _)| path.first() == Some(&Step::Field(field.number())))
            .map(|(path, slot)| (&path[1..], *slot))
            .collect();
        // A field that holds a template value is a piece even when the
        // value it was parsed with is its default (`""`, `0`), which is not
        // set.
        if here.is_empty() && !message.has_field(&field) {
            continue;
        }
        let value = message.get_field(&field);
        if here.is_empty() {
            fixed.put_slice(&encode_field(
                message.descriptor(),
                &field,
                value.into_owned(),
            ));
            continue;
        }
        match value.as_ref() {
            Value::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    let sub: Vec<(&[Step], &Slot)> = here
                        .iter()
                        .filter(|(path, _)| path.first() == Some(&Step::Index(i)))
                        .map(|(path, slot)| (&path[1..], *slot))
                        .collect();
                    if sub.is_empty() {
                        fixed.put_slice(&encode_field(
                            message.descriptor(),
                            &field,
                            Value::List(vec![item.clone()]),
                        ));
                    } else {
                        flush(&mut fixed, &mut out);
                        out.push(slot_piece(&field, item, &sub));
                    }
                }
            }
            single => {
                flush(&mut fixed, &mut out);
                out.push(slot_piece(&field, single, &here));
            }
        }
    }
    flush(&mut fixed, &mut out);
    out
}

/// Ends the fixed bytes gathered so far as a piece.
fn flush(fixed: &mut BytesMut, out: &mut Vec<Piece>) {
    if !fixed.is_empty() {
        out.push(Piece::Fixed(fixed.split().freeze()));
    }
}

/// The piece of one value of `field` that holds a template value: the
/// value itself (an empty path) or a nested message.
fn slot_piece(field: &FieldDescriptor, value: &Value, slots: &[(&[Step], &Slot)]) -> Piece {
    if let Some((_, slot)) = slots.iter().find(|(path, _)| path.is_empty()) {
        return match slot {
            Slot::Text(text) => Piece::Text {
                key: key(field.number(), 2),
                text: text.clone(),
            },
            Slot::Number {
                number,
                value,
                slot,
            } => Piece::Number {
                key: key(field.number(), number.wire_type()),
                number: *number,
                value: *value,
                slot: *slot,
            },
        };
    }
    let Value::Message(nested) = value else {
        unreachable!("a path goes on only into a message")
    };
    Piece::Message {
        key: key(field.number(), 2),
        pieces: pieces(nested, slots),
    }
}

/// One field of a message of type `desc`, encoded alone.
fn encode_field(desc: MessageDescriptor, field: &FieldDescriptor, value: Value) -> Vec<u8> {
    let mut one = DynamicMessage::new(desc);
    one.set_field(field, value);
    one.encode_to_vec()
}

fn key(number: u32, wire_type: u32) -> Vec<u8> {
    let mut out = BytesMut::new();
    put_varint(&mut out, u64::from((number << 3) | wire_type));
    out.to_vec()
}

fn put_varint(out: &mut BytesMut, mut v: u64) {
    while v >= 0x80 {
        out.put_u8((v as u8) | 0x80);
        v >>= 7;
    }
    out.put_u8(v as u8);
}

fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

fn pieces_len(pieces: &[Piece], call: &CallValues) -> usize {
    pieces
        .iter()
        .map(|piece| match piece {
            Piece::Fixed(bytes) => bytes.len(),
            Piece::Text { key, text } => {
                let len = text.len(call);
                key.len() + varint_len(len as u64) + len
            }
            Piece::Number {
                key,
                number,
                value,
                slot,
            } => key.len() + number.len(integer(*value, *slot, call)),
            Piece::Message { key, pieces } => {
                let len = pieces_len(pieces, call);
                key.len() + varint_len(len as u64) + len
            }
        })
        .sum()
}

/// An integer value's bits as a protobuf integer field takes them.
fn integer(value: template::Value, slot: u32, call: &CallValues) -> u64 {
    value
        .integer(call, slot)
        .expect("only integer values are in a Number piece") as u64
}

fn write_pieces(pieces: &[Piece], call: &CallValues, out: &mut BytesMut) {
    for piece in pieces {
        match piece {
            Piece::Fixed(bytes) => out.put_slice(bytes),
            Piece::Text { key, text } => {
                out.put_slice(key);
                put_varint(out, text.len(call) as u64);
                text.write(call, out);
            }
            Piece::Number {
                key,
                number,
                value,
                slot,
            } => {
                out.put_slice(key);
                number.write(integer(*value, *slot, call), out);
            }
            Piece::Message { key, pieces } => {
                out.put_slice(key);
                put_varint(out, pieces_len(pieces, call) as u64);
                write_pieces(pieces, call, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::grpc_generic::test_pool::shop;
    use serde_json::json;

    fn at(n: u64) -> CallValues {
        CallValues::new(n, 0, Needs::NONE)
    }

    fn reserve() -> MessageDescriptor {
        shop()
            .get_message_by_name("shop.v1.ReserveRequest")
            .unwrap()
    }

    fn error(json: Json) -> String {
        match parse(&reserve(), &json, "--data", &template::Method::default()) {
            Err(e) => e,
            Ok(_) => panic!("{json} was accepted"),
        }
    }

    /// What prost-reflect makes of `json` with the number written in.
    fn reference(json: &Json, n: u64) -> DynamicMessage {
        let text = json.to_string().replace(REQUEST_NUMBER, &n.to_string());
        // An integer field's template is a string, and so its number: the
        // JSON mapping takes strings for every integer type.
        let json: Json = serde_json::from_str(&text).unwrap();
        DynamicMessage::deserialize(reserve(), json).unwrap()
    }

    #[test]
    fn a_template_encodes_what_the_json_with_the_number_in_it_encodes() {
        let data = json!({
            "requestId": "req-{{.RequestNumber}}",
            "sequence": "{{.RequestNumber}}",
            "customer": {"note": "{{.RequestNumber}}"},
            "items": [
                {"sku": "sku-1", "quantity": 2},
                {"sku": "sku-{{.RequestNumber}}", "quantity": 3, "price": {"currency": "EUR", "units": 12}},
            ],
            "tags": ["a", "t{{.RequestNumber}}"],
            "express": true,
        });
        let parsed = parse(&reserve(), &data, "--data", &template::Method::default()).unwrap();
        let template = Template::new(&parsed).unwrap();
        assert!(template.numbered());
        assert_eq!(template.templates().len(), 5);
        assert_eq!(
            template.templates(),
            [
                "req-{{.RequestNumber}}",
                "{{.RequestNumber}}",
                "{{.RequestNumber}}",
                "sku-{{.RequestNumber}}",
                "t{{.RequestNumber}}"
            ]
        );
        for n in [0, 7, 9, 10, 99, 127, 128, 99_999, 1 << 31, u64::MAX >> 1] {
            let body = template.body(&at(n));
            assert_eq!(body[0], 0);
            assert_eq!(
                u32::from_be_bytes(body[1..5].try_into().unwrap()) as usize,
                body.len() - 5
            );
            let got = DynamicMessage::decode(reserve(), &body[5..]).unwrap();
            assert_eq!(got, reference(&data, n), "call {n}");
            assert_eq!(template.message(&at(n)), body.slice(5..));
        }
    }

    #[test]
    fn a_template_in_an_otherwise_empty_message_is_kept() {
        let data =
            json!({"sequence": "{{.RequestNumber}}", "customer": {"name": "{{.RequestNumber}}"}});
        let template = Template::new(
            &parse(&reserve(), &data, "--data", &template::Method::default()).unwrap(),
        )
        .unwrap();
        for n in [0, 1, 300] {
            let got = DynamicMessage::decode(reserve(), template.message(&at(n))).unwrap();
            assert_eq!(got, reference(&data, n), "call {n}");
        }
    }

    #[test]
    fn a_message_without_template_is_encoded_once() {
        let data = json!({"requestId": "r", "items": [{"sku": "a", "quantity": 1}]});
        let template = Template::new(
            &parse(&reserve(), &data, "--data", &template::Method::default()).unwrap(),
        )
        .unwrap();
        assert!(!template.numbered());
        assert_eq!(template.body(&at(0)), template.body(&at(5)));
        assert_eq!(
            DynamicMessage::decode(reserve(), template.message(&at(3))).unwrap(),
            reference(&data, 0)
        );
    }

    #[test]
    fn unknown_fields_and_wrong_types_are_named_by_their_path() {
        assert_eq!(
            error(json!({"items": [{"sku": "a"}, {"skuu": "b"}]})),
            "--data: items[1].skuu: shop.v1.Item has no field `skuu` (its fields: sku, quantity, price)"
        );
        assert_eq!(
            error(json!({"items": [{"quantity": "many"}]})),
            "--data: items[0].quantity: an integer or \"{{.RequestNumber}}\" expected, got a string `\"many\"`"
        );
        assert_eq!(
            error(json!({"customer": {"tier": "PLATINUM"}})),
            "--data: customer.tier: one of TIER_UNSPECIFIED, SILVER, GOLD (shop.v1.Tier) expected, got a string `\"PLATINUM\"`"
        );
        assert_eq!(
            error(json!({"items": {"sku": "a"}})),
            "--data: items: an array (a repeated field) expected, got an object `{\"sku\":\"a\"}`"
        );
        assert_eq!(
            error(json!([1, 2])),
            "--data: the message: an object (shop.v1.ReserveRequest) expected, got an array `[1,2]`"
        );
        assert!(
            error(json!({"express": "yes"})).starts_with("--data: express: true or false expected")
        );
        assert!(
            error(json!({"attributes": {"k": "{{.RequestNumber}}"}}))
                .contains("not supported in a map field"),
            "{}",
            error(json!({"attributes": {"k": "{{.RequestNumber}}"}}))
        );
        assert!(error(json!({"slots": ["{{.RequestNumber}}"]}))
            .contains("not supported in a repeated number field"));
        // Proto names are accepted beside JSON names.
        assert!(parse(
            &reserve(),
            &json!({"request_id": "x"}),
            "--data",
            &template::Method::default()
        )
        .is_ok());
    }

    #[test]
    fn varints_are_measured_as_written() {
        for v in [
            0u64,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut out = BytesMut::new();
            put_varint(&mut out, v);
            assert_eq!(out.len(), varint_len(v), "{v}");
        }
    }
}
