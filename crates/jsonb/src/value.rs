//! A JSONB value tree, for reading anything and for tests.

use crate::bc;
use crate::error::{DecodeError, EncodeError};
use crate::read::Reader;
use crate::write::Writer;

/// Any JSONB value this crate reads.
///
/// Objects keep their fields in wire order. fastjson2 writes a bean's field
/// names as symbols (`WriteNameAsSymbol`) and a map's keys as plain strings;
/// the reader tells them apart by the first name ([`Value::Bean`] or
/// [`Value::Object`]), so a value tree writes back the bytes it was read from.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A `java.lang.Byte` (`INT8`).
    Byte(i8),
    /// A `java.lang.Short` (`INT16`).
    Short(i16),
    /// An `int` / `Integer` (an int32 form).
    Int(i32),
    /// A `long` / `Long` (an int64 form).
    Long(i64),
    /// A `float`.
    Float(f32),
    /// A `double`.
    Double(f64),
    /// A `char` (a UTF-16 code unit).
    Char(u16),
    /// A string.
    String(String),
    /// A `byte[]`.
    Binary(Vec<u8>),
    /// An array, list or set.
    Array(Vec<Value>),
    /// A map: entries in wire order, keys as plain strings.
    Object(Vec<(String, Value)>),
    /// A bean (POJO): fields in wire order, names as symbols.
    Bean(Vec<(String, Value)>),
    /// A value with its Java class name (`WriteClassName`).
    Typed(String, Box<Value>),
    /// A reference to a value met before, by JSONPath (`$`, `$[0]`, `$.field`).
    Reference(String),
}

impl Value {
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// This value without its class name, if it has one.
    pub fn untyped(&self) -> &Value {
        match self {
            Value::Typed(_, v) => v.untyped(),
            v => v,
        }
    }

    /// The class name, if this value is typed.
    pub fn type_name(&self) -> Option<&str> {
        match self {
            Value::Typed(t, _) => Some(t),
            _ => None,
        }
    }

    /// A field of an object (typed or not), by name.
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self.untyped() {
            Value::Object(fields) | Value::Bean(fields) => {
                fields.iter().find(|(k, _)| k == name).map(|(_, v)| v)
            }
            _ => None,
        }
    }

    /// Any integer form as an `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match *self.untyped() {
            Value::Byte(v) => Some(v.into()),
            Value::Short(v) => Some(v.into()),
            Value::Int(v) => Some(v.into()),
            Value::Long(v) => Some(v),
            _ => None,
        }
    }
}

/// Reads one value, whatever it is.
pub(crate) fn read_value(r: &mut Reader<'_>) -> Result<Value, DecodeError> {
    let at = r.position();
    let Some(b) = r.peek() else {
        return Err(DecodeError::UnexpectedEof { offset: at });
    };
    match b {
        0xf0..=0xff | 0x00..=bc::INT32 => return r.read_i32().map(Value::Int),
        bc::INT64..=bc::INT64_NUM_MAX => return r.read_i64().map(Value::Long),
        bc::INT8 => return r.read_i8().map(Value::Byte),
        bc::INT16 => {
            let v = r.read_i64()?;
            return Ok(Value::Short(v as i16));
        }
        bc::DOUBLE_NUM_0..=bc::DOUBLE => return r.read_f64().map(Value::Double),
        bc::FLOAT_INT | bc::FLOAT => return r.read_f32().map(Value::Float),
        bc::TRUE | bc::FALSE => return r.read_bool().map(Value::Bool),
        bc::BINARY => return r.read_binary().map(|b| Value::Binary(b.to_vec())),
        bc::TYPED_ANY => {
            let name = r.read_type_name()?.unwrap_or_default().into_owned();
            r.enter()?;
            let inner = read_value(r);
            r.leave();
            return Ok(Value::Typed(name, Box::new(inner?)));
        }
        bc::ARRAY_FIX_0..=bc::ARRAY => {
            let n = r.start_array()?.unwrap_or(0);
            r.enter()?;
            // n is at most the bytes left; cap the up-front reservation anyway
            let mut items = Vec::with_capacity(n.min(1024));
            let res = (|| {
                for _ in 0..n {
                    items.push(read_value(r)?);
                }
                Ok::<_, DecodeError>(())
            })();
            r.leave();
            return res.map(|()| Value::Array(items));
        }
        _ => {}
    }
    r.byte()?;
    match b {
        bc::NULL => Ok(Value::Null),
        bc::CHAR => {
            let v = r.read_int32_raw()?;
            u16::try_from(v)
                .map(Value::Char)
                .map_err(|_| DecodeError::OutOfRange {
                    value: v.to_string(),
                    target: "char",
                    offset: at,
                })
        }
        bc::REFERENCE => r.read_str().map(|p| Value::Reference(p.into_owned())),
        bc::OBJECT => {
            r.enter()?;
            let mut fields = Vec::new();
            let bean = r.peek() == Some(bc::SYMBOL);
            let res = (|| {
                while let Some(k) = r.next_field()? {
                    let k = k.into_owned();
                    fields.push((k, read_value(r)?));
                }
                Ok::<_, DecodeError>(())
            })();
            r.leave();
            res.map(|()| {
                if bean {
                    Value::Bean(fields)
                } else {
                    Value::Object(fields)
                }
            })
        }
        b if bc::is_string(b) || b == bc::SYMBOL => {
            r.string_after(b, at).map(|s| Value::String(s.into_owned()))
        }
        bc::OBJECT_END => Err(r.unexpected(b, at, "a value")),
        _ => Err(r.unsupported(b, at)),
    }
}

impl Reader<'_> {
    /// Reads the next value into a [`Value`] tree.
    pub fn read_value(&mut self) -> Result<Value, DecodeError> {
        read_value(self)
    }

    /// Skips the next value whatever it is (an unknown field of a bean).
    pub fn skip_value(&mut self) -> Result<(), DecodeError> {
        read_value(self).map(drop)
    }
}

/// Writes a value tree.
pub(crate) fn write_value(w: &mut Writer, v: &Value) -> Result<(), EncodeError> {
    match v {
        Value::Null => w.write_null(),
        Value::Bool(b) => w.write_bool(*b),
        Value::Byte(b) => w.write_i8(*b),
        Value::Short(s) => w.write_i16(*s),
        Value::Int(i) => w.write_i32(*i),
        Value::Long(l) => w.write_i64(*l),
        Value::Float(f) => w.write_f32(*f),
        Value::Double(d) => w.write_f64(*d),
        Value::Char(c) => w.write_char(*c),
        Value::String(s) => w.write_str(s)?,
        Value::Binary(b) => w.write_binary(b)?,
        Value::Array(items) => {
            w.start_array(items.len())?;
            for it in items {
                write_value(w, it)?;
            }
        }
        Value::Object(fields) => write_object(w, fields, Writer::write_map_key)?,
        Value::Bean(fields) => write_object(w, fields, Writer::write_field_name)?,
        Value::Typed(t, inner) => {
            w.write_type_name(t);
            write_value(w, inner)?;
        }
        Value::Reference(p) => w.write_reference(p)?,
    }
    Ok(())
}

/// Writes an object of `fields`, each name written by `write_name` (a map's
/// key or a bean's field name).
fn write_object(
    w: &mut Writer,
    fields: &[(String, Value)],
    write_name: fn(&mut Writer, &str) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    w.start_object();
    for (name, v) in fields {
        write_name(w, name)?;
        write_value(w, v)?;
    }
    w.end_object();
    Ok(())
}

impl Writer {
    /// Writes a value tree.
    pub fn write_value(&mut self, v: &Value) -> Result<(), EncodeError> {
        write_value(self, v)
    }
}
