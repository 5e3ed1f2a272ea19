//! The dynamic model: what `kryo.readClassAndObject` can return for the
//! classes this crate knows, and the field layouts (schemas) that Kryo's
//! FieldSerializer data cannot be read without.

use std::borrow::Cow;

/// A value of a kryo object graph.
///
/// At the top level and inside collections, primitives stand for their
/// boxed classes (`Int` is a `java.lang.Integer`); as object fields they are
/// the primitive fields of a [`Schema`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `boolean` / `Boolean`.
    Bool(bool),
    /// `byte` / `Byte`.
    Byte(i8),
    /// `char` / `Character`: one UTF-16 unit.
    Char(u16),
    /// `short` / `Short`.
    Short(i16),
    /// `int` / `Integer`.
    Int(i32),
    /// `long` / `Long`.
    Long(i64),
    /// `float` / `Float`.
    Float(f32),
    /// `double` / `Double`.
    Double(f64),
    /// `java.lang.String`.
    String(String),
    /// `java.util.ArrayList`.
    List(Vec<Value>),
    /// `java.util.HashMap`, entries in wire order.
    Map(Vec<(Value, Value)>),
    /// An object written by Kryo's FieldSerializer (a class with a
    /// [`Schema`]).
    Object(Box<Object>),
    /// A back-reference to a non-string object read earlier in the same
    /// graph: its reference id (strings are resolved to their value).
    Reference(u32),
    /// A `java.lang.Throwable` (see [`JavaException`]).
    Exception(Box<JavaException>),
}

impl Value {
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// A string value.
    pub fn string(s: impl Into<String>) -> Value {
        Value::String(s.into())
    }

    /// Equality with floats compared by their bits (a NaN equals the same
    /// NaN, -0.0 is not 0.0): what a lossless round trip must give back.
    pub fn identical(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
            (Value::Double(x), Value::Double(y)) => x.to_bits() == y.to_bits(),
            (Value::List(x), Value::List(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(a, b)| a.identical(b))
            }
            (Value::Map(x), Value::Map(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y)
                        .all(|((k1, v1), (k2, v2))| k1.identical(k2) && v1.identical(v2))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.class == y.class
                    && x.fields.len() == y.fields.len()
                    && x.fields
                        .iter()
                        .zip(&y.fields)
                        .all(|((n1, v1), (n2, v2))| n1 == n2 && v1.identical(v2))
            }
            _ => self == other,
        }
    }
}

/// An object of a class written by FieldSerializer.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// Its Java class name.
    pub class: String,
    /// Field values in Kryo's order: sorted by field name, the order of
    /// the class's [`Schema`].
    pub fields: Vec<(String, Value)>,
}

impl Object {
    /// A field by name.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

/// The declared type of a field, which decides how FieldSerializer writes
/// its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// `boolean`: one byte.
    Bool,
    /// `byte`: one byte.
    Byte,
    /// `char`: two bytes, fixed width.
    Char,
    /// `short`: two bytes, fixed width.
    Short,
    /// `int`: zig-zag varint.
    Int,
    /// `long`: zig-zag varint.
    Long,
    /// `float`: four bytes, fixed width.
    Float,
    /// `double`: eight bytes, fixed width.
    Double,
    /// `String` (a final class): reference marker (0 is null), then the
    /// string.
    String,
    /// Any other declared type (not final): the value's class, then its
    /// reference marker and data, as `writeClassAndObject`.
    Object,
}

/// A class's field layout as Kryo's FieldSerializer sees it: every
/// non-static, non-transient field of the class and its superclasses,
/// sorted by name (both Kryo 4 and 5 sort so "the order of the data is
/// known"). FieldSerializer writes no field names or tags, so a reader
/// needs this to read an object at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    /// The Java class name.
    pub class: Cow<'static, str>,
    /// Fields sorted by name.
    pub fields: Vec<(Cow<'static, str>, FieldType)>,
}

impl Schema {
    /// A schema from the fields in any order (sorted here, as Kryo sorts).
    pub fn new(
        class: impl Into<Cow<'static, str>>,
        fields: impl IntoIterator<Item = (impl Into<Cow<'static, str>>, FieldType)>,
    ) -> Schema {
        let mut fields: Vec<_> = fields.into_iter().map(|(n, t)| (n.into(), t)).collect();
        // Java's String.compareTo on these ASCII identifiers is byte order.
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        Schema {
            class: class.into(),
            fields,
        }
    }
}

/// The schemas a reader or writer knows, looked up by class name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schemas {
    list: Vec<Schema>,
}

impl Schemas {
    /// No schemas.
    pub fn new() -> Schemas {
        Schemas::default()
    }

    /// With one more schema (replacing one of the same class).
    pub fn with(mut self, schema: Schema) -> Schemas {
        self.add(schema);
        self
    }

    /// Adds a schema (replacing one of the same class).
    pub fn add(&mut self, schema: Schema) {
        self.list.retain(|s| s.class != schema.class);
        self.list.push(schema);
    }

    /// The schema of `class`.
    pub fn get(&self, class: &str) -> Option<&Schema> {
        self.list.iter().find(|s| s.class == class)
    }
}

/// A Java exception as far as a client needs it: its class, its message
/// and its cause.
#[derive(Debug, Clone, PartialEq)]
pub struct JavaException {
    /// The exception's class name, e.g. `java.lang.IllegalStateException`.
    pub class: String,
    /// `getMessage()` (the `detailMessage` field), if any.
    pub message: Option<String>,
    /// The cause, if it is another throwable (a throwable whose cause is
    /// itself has none).
    pub cause: Option<Box<JavaException>>,
}

impl std::fmt::Display for JavaException {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.message {
            Some(m) => write!(f, "{}: {m}", self.class)?,
            None => write!(f, "{}", self.class)?,
        }
        if let Some(c) = &self.cause {
            write!(f, " (caused by {c})")?;
        }
        Ok(())
    }
}
