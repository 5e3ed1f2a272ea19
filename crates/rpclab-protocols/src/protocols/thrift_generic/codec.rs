//! Values of the type table on the wire, through the `thrift` crate's own
//! protocols (binary, compact): a struct encoded once into [`Encoded`]
//! pieces, and a struct decoded against its type.
//!
//! # Encoding once
//!
//! A Thrift struct has no length in front of it (it ends with a stop
//! byte); only strings, binaries and collections carry a length or a count.
//! So a value whose only per-call parts are template values
//! ([`crate::template`]) is kept as the bytes of everything around each
//! one (written by the crate's protocol) and, for each, what to write
//! there: a string rendered with the call's values, or an integer value.
//! A call writes the pieces with its values (the crate's protocol writing
//! the string or the integer), into a buffer the connection reuses.

use super::idl::{Schema, Ty};
use super::value::Value;
use crate::protocols::thrift::Encoding;
use crate::template::{self, CallValues, Text};
use std::cell::RefCell;
use std::io;
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol,
    TFieldIdentifier, TInputProtocol, TListIdentifier, TMapIdentifier, TOutputProtocol,
    TSetIdentifier, TStructIdentifier, TType,
};

/// A value encoded once (see the module documentation).
#[derive(Debug, Default, PartialEq)]
pub struct Encoded {
    pieces: Vec<Piece>,
}

#[derive(Debug, PartialEq)]
enum Piece {
    Fixed(Vec<u8>),
    /// A string with template values.
    Text(Text),
    /// An integer value as this type (`I8`, `I16`, `I32`, `I64`).
    Number {
        ty: Ty,
        value: template::Value,
        slot: u32,
    },
}

impl Encoded {
    /// The bytes when no template value is in it.
    pub fn fixed(&self) -> Option<&[u8]> {
        match &self.pieces[..] {
            [] => Some(&[]),
            [Piece::Fixed(bytes)] => Some(bytes),
            _ => None,
        }
    }

    /// Appends the value of the call with values `call` to `out`.
    pub fn write(&self, encoding: Encoding, call: &CallValues, out: &mut Vec<u8>) {
        for piece in &self.pieces {
            match piece {
                Piece::Fixed(bytes) => out.extend_from_slice(bytes),
                Piece::Text(text) => {
                    let text = text.render(call);
                    with_output(encoding, out, |p| p.write_string(&text));
                }
                Piece::Number { ty, value, slot } => with_output(encoding, out, |p| {
                    let n = value.integer(call, *slot).expect("an integer value");
                    match ty {
                        Ty::I8 => p.write_i8(n as i8),
                        Ty::I16 => p.write_i16(n as i16),
                        Ty::I32 | Ty::Enum(_) => p.write_i32(n as i32),
                        _ => p.write_i64(n as i64),
                    }
                }),
            }
        }
    }
}

/// Runs `write` on the crate's protocol of `wire` over `out`. Writing into
/// a `Vec` cannot fail.
fn with_output(
    encoding: Encoding,
    out: &mut Vec<u8>,
    write: impl FnOnce(&mut dyn TOutputProtocol) -> thrift::Result<()>,
) {
    let written = match encoding {
        Encoding::Binary => write(&mut TBinaryOutputProtocol::new(&mut *out, true)),
        Encoding::Compact => write(&mut TCompactOutputProtocol::new(&mut *out)),
    };
    written.expect("writing into memory does not fail");
}

/// The wire type of `ty`.
pub fn ttype(ty: &Ty) -> TType {
    match ty {
        Ty::Bool => TType::Bool,
        Ty::I8 => TType::I08,
        Ty::I16 => TType::I16,
        Ty::I32 | Ty::Enum(_) => TType::I32,
        Ty::I64 => TType::I64,
        Ty::Double => TType::Double,
        Ty::String | Ty::Binary => TType::String,
        Ty::List(_) => TType::List,
        Ty::Set(_) => TType::Set,
        Ty::Map(..) => TType::Map,
        Ty::Struct(_) => TType::Struct,
    }
}

/// The crate's protocols write into this; pieces are cut out of it.
struct Sink<'a>(&'a RefCell<Vec<u8>>);

impl io::Write for Sink<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Encodes `value` of type `ty` once.
pub fn encode(schema: &Schema, encoding: Encoding, ty: &Ty, value: &Value) -> Encoded {
    let buffer = RefCell::new(Vec::new());
    let mut encoder = Encoder {
        schema,
        buffer: &buffer,
        pieces: Vec::new(),
    };
    let written = match encoding {
        Encoding::Binary => encoder.value(
            &mut TBinaryOutputProtocol::new(Sink(&buffer), true),
            ty,
            value,
        ),
        Encoding::Compact => {
            encoder.value(&mut TCompactOutputProtocol::new(Sink(&buffer)), ty, value)
        }
    };
    written.expect("writing into memory does not fail");
    let mut pieces = encoder.pieces;
    let rest = buffer.take();
    if !rest.is_empty() {
        pieces.push(Piece::Fixed(rest));
    }
    Encoded { pieces }
}

struct Encoder<'a> {
    schema: &'a Schema,
    buffer: &'a RefCell<Vec<u8>>,
    pieces: Vec<Piece>,
}

/// Struct and field names are never on the wire in the binary and compact
/// protocols.
fn no_name() -> TStructIdentifier {
    TStructIdentifier {
        name: String::new(),
    }
}

impl Encoder<'_> {
    /// The bytes written so far become a piece, before a template value.
    fn cut(&mut self, piece: Piece) {
        let bytes = self.buffer.take();
        if !bytes.is_empty() {
            self.pieces.push(Piece::Fixed(bytes));
        }
        self.pieces.push(piece);
    }

    fn value<P: TOutputProtocol>(
        &mut self,
        p: &mut P,
        ty: &Ty,
        value: &Value,
    ) -> thrift::Result<()> {
        match (value, ty) {
            (Value::Text(text), _) => self.cut(Piece::Text(text.clone())),
            (Value::Number { value, slot }, _) => self.cut(Piece::Number {
                ty: ty.clone(),
                value: *value,
                slot: *slot,
            }),
            (Value::Bool(b), _) => p.write_bool(*b)?,
            (Value::I8(n), _) => p.write_i8(*n)?,
            (Value::I16(n), _) => p.write_i16(*n)?,
            (Value::I32(n), _) => p.write_i32(*n)?,
            (Value::I64(n), _) => p.write_i64(*n)?,
            (Value::Double(d), _) => p.write_double(*d)?,
            (Value::String(s), _) => p.write_string(s)?,
            (Value::Binary(b), _) => p.write_bytes(b)?,
            (Value::List(items), Ty::List(t)) => {
                p.write_list_begin(&TListIdentifier::new(ttype(t), count(items.len())?))?;
                for item in items {
                    self.value(p, t, item)?;
                }
                p.write_list_end()?;
            }
            (Value::List(items), Ty::Set(t)) => {
                p.write_set_begin(&TSetIdentifier::new(ttype(t), count(items.len())?))?;
                for item in items {
                    self.value(p, t, item)?;
                }
                p.write_set_end()?;
            }
            (Value::Map(entries), Ty::Map(k, v)) => {
                p.write_map_begin(&TMapIdentifier::new(
                    ttype(k),
                    ttype(v),
                    count(entries.len())?,
                ))?;
                for (key, value) in entries {
                    self.value(p, k, key)?;
                    self.value(p, v, value)?;
                }
                p.write_map_end()?;
            }
            (Value::Struct(fields), Ty::Struct(i)) => {
                let schema = self.schema;
                let def = &schema.structs[*i];
                p.write_struct_begin(&no_name())?;
                for (id, value) in fields {
                    let field = def
                        .fields
                        .iter()
                        .find(|f| f.id == *id)
                        .expect("a declared field");
                    p.write_field_begin(&TFieldIdentifier {
                        name: None,
                        field_type: ttype(&field.ty),
                        id: Some(*id),
                    })?;
                    self.value(p, &field.ty, value)?;
                    p.write_field_end()?;
                }
                p.write_field_stop()?;
                p.write_struct_end()?;
            }
            (other, ty) => unreachable!("a {other:?} is never made for a {ty:?}"),
        }
        Ok(())
    }
}

fn count(n: usize) -> thrift::Result<i32> {
    i32::try_from(n).map_err(|_| {
        thrift::Error::Protocol(thrift::ProtocolError::new(
            thrift::ProtocolErrorKind::SizeLimit,
            "too many elements for a Thrift collection",
        ))
    })
}

/// Decodes a struct of type `ty` (`body`: its bytes, and perhaps more).
/// A field the IDL does not declare is skipped, as generated code does; a
/// declared field of another wire type is an error naming its path.
pub fn decode(schema: &Schema, encoding: Encoding, ty: &Ty, body: &[u8]) -> Result<Value, String> {
    let decoder = Decoder { schema };
    match encoding {
        Encoding::Binary => decoder.value(&mut TBinaryInputProtocol::new(body, true), ty, ""),
        Encoding::Compact => decoder.value(&mut TCompactInputProtocol::new(body), ty, ""),
    }
}

struct Decoder<'a> {
    schema: &'a Schema,
}

/// Elements reserved at most before they are read (the reply's structure
/// was checked by `scan` before decoding; this only bounds a reservation).
const MAX_RESERVED: usize = 4096;

fn failed(path: &str, e: thrift::Error) -> String {
    if path.is_empty() {
        e.to_string()
    } else {
        format!("{path}: {e}")
    }
}

impl Decoder<'_> {
    fn value<P: TInputProtocol>(&self, p: &mut P, ty: &Ty, path: &str) -> Result<Value, String> {
        let at = |e| failed(path, e);
        Ok(match ty {
            Ty::Bool => Value::Bool(p.read_bool().map_err(at)?),
            Ty::I8 => Value::I8(p.read_i8().map_err(at)?),
            Ty::I16 => Value::I16(p.read_i16().map_err(at)?),
            Ty::I32 | Ty::Enum(_) => Value::I32(p.read_i32().map_err(at)?),
            Ty::I64 => Value::I64(p.read_i64().map_err(at)?),
            Ty::Double => Value::Double(p.read_double().map_err(at)?),
            Ty::String => Value::String(p.read_string().map_err(at)?),
            Ty::Binary => Value::Binary(p.read_bytes().map_err(at)?),
            Ty::List(t) => {
                let list = p.read_list_begin().map_err(at)?;
                let items = self.elements(p, t, list.element_type, list.size, path)?;
                p.read_list_end().map_err(at)?;
                Value::List(items)
            }
            Ty::Set(t) => {
                let set = p.read_set_begin().map_err(at)?;
                let items = self.elements(p, t, set.element_type, set.size, path)?;
                p.read_set_end().map_err(at)?;
                Value::List(items)
            }
            Ty::Map(k, v) => {
                let map = p.read_map_begin().map_err(at)?;
                let size = usize::try_from(map.size).unwrap_or(0);
                if size > 0 {
                    self.check(
                        map.key_type.unwrap_or(TType::Stop),
                        k,
                        &format!("{path} (keys)"),
                    )?;
                    self.check(
                        map.value_type.unwrap_or(TType::Stop),
                        v,
                        &format!("{path} (values)"),
                    )?;
                }
                let mut entries = Vec::with_capacity(size.min(MAX_RESERVED));
                for i in 0..size {
                    let here = format!("{path}[{i}]");
                    let key = self.value(p, k, &here)?;
                    entries.push((key, self.value(p, v, &here)?));
                }
                p.read_map_end().map_err(at)?;
                Value::Map(entries)
            }
            Ty::Struct(i) => {
                let def = &self.schema.structs[*i];
                let mut fields = Vec::new();
                p.read_struct_begin().map_err(at)?;
                loop {
                    let ident = p.read_field_begin().map_err(at)?;
                    if ident.field_type == TType::Stop {
                        break;
                    }
                    match ident
                        .id
                        .and_then(|id| def.fields.iter().find(|f| f.id == id))
                    {
                        Some(field) => {
                            let here = if path.is_empty() {
                                field.name.clone()
                            } else {
                                format!("{path}.{}", field.name)
                            };
                            self.check(ident.field_type, &field.ty, &here)?;
                            let value = self.value(p, &field.ty, &here)?;
                            fields.retain(|(id, _)| *id != field.id);
                            fields.push((field.id, value));
                        }
                        None => p.skip(ident.field_type).map_err(at)?,
                    }
                    p.read_field_end().map_err(at)?;
                }
                p.read_struct_end().map_err(at)?;
                fields.sort_by_key(|(id, _)| def.fields.iter().position(|f| f.id == *id));
                Value::Struct(fields)
            }
        })
    }

    fn elements<P: TInputProtocol>(
        &self,
        p: &mut P,
        ty: &Ty,
        wire_type: TType,
        size: i32,
        path: &str,
    ) -> Result<Vec<Value>, String> {
        let size = usize::try_from(size).unwrap_or(0);
        if size > 0 {
            self.check(wire_type, ty, &format!("{path} (elements)"))?;
        }
        let mut items = Vec::with_capacity(size.min(MAX_RESERVED));
        for i in 0..size {
            items.push(self.value(p, ty, &format!("{path}[{i}]"))?);
        }
        Ok(items)
    }

    /// A value on the wire of `wire_type` where the IDL declares `ty`.
    fn check(&self, wire_type: TType, ty: &Ty, path: &str) -> Result<(), String> {
        let declared = ttype(ty);
        if wire_type == declared {
            Ok(())
        } else {
            Err(format!(
                "{path}: the IDL declares {} ({declared}), the reply has a {wire_type}",
                self.schema.type_name(ty)
            ))
        }
    }
}
