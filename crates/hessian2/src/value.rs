//! The dynamic value tree.
//!
//! [`Value`] can hold anything a Hessian 2.0 stream can carry, so it is what a
//! generic reader (a proxy, a test, a debugging tool) decodes into when it
//! does not know the Java types in advance. Typed code should prefer
//! [`ToHessian`](crate::ToHessian) / [`FromHessian`](crate::FromHessian),
//! which skip the tree entirely.
//!
//! # References
//!
//! Java serializes object *graphs*: the second occurrence of a list, map or
//! object (by identity) is written as a reference `Q n` to the n-th list, map
//! or object of the stream, counted in the order they start. A tree of owned
//! Rust values cannot share nodes, so [`Value::Ref`] keeps such a reference as
//! its index. The decoder either keeps every reference as a `Ref`
//! ([`RefMode::Keep`](crate::RefMode::Keep), exact and cheap; re-encoding
//! gives the same bytes), or replaces each one by a copy of the value it
//! points to ([`RefMode::Resolve`](crate::RefMode::Resolve), the default).
//! A cycle cannot be copied into a tree, so under `Resolve` a reference to a
//! value that encloses it stays a `Ref`: after resolving, a `Ref` always
//! means a cycle.

use std::fmt;
use std::sync::Arc;

/// A class definition: the Java class name and its field names, in the order
/// the field values follow in each instance.
///
/// Decoded objects of one class share one `Arc<ClassDef>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClassDef {
    /// Fully qualified Java class name, e.g. `com.example.Order`.
    pub name: String,
    /// Field names in wire order.
    pub fields: Vec<String>,
}

impl ClassDef {
    /// A class definition from a name and field names.
    pub fn new<S: Into<String>>(
        name: impl Into<String>,
        fields: impl IntoIterator<Item = S>,
    ) -> Self {
        ClassDef {
            name: name.into(),
            fields: fields.into_iter().map(Into::into).collect(),
        }
    }

    /// Position of a field, if the class has it.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f == name)
    }
}

/// A Hessian list: a Java array or collection.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct List {
    /// The type name, if the writer sent one: a collection class
    /// (`java.util.LinkedList`) or an array type (`[int`, `[string`,
    /// `[object`, `[com.example.Order`). Java sends none for `ArrayList`.
    pub ty: Option<String>,
    /// The elements.
    pub items: Vec<Value>,
}

/// A Hessian map: a Java `Map`, or an object the reader has no class for.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Map {
    /// The type name, if the writer sent one (Java sends none for `HashMap`).
    pub ty: Option<String>,
    /// Entries in wire order (Java's iteration order).
    pub entries: Vec<(Value, Value)>,
}

/// A Java object: an instance of a class definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    /// The class and its field names.
    pub class: Arc<ClassDef>,
    /// One value per field of `class`, in the same order.
    pub values: Vec<Value>,
}

impl Object {
    /// An object of class `name` with the given fields, in order.
    ///
    /// ```
    /// use hessian2::{Object, Value};
    /// let o = Object::new("com.example.Point", [("x", Value::Int(1)), ("y", Value::Int(2))]);
    /// assert_eq!(o.get("y"), Some(&Value::Int(2)));
    /// ```
    pub fn new<S: Into<String>>(
        name: impl Into<String>,
        fields: impl IntoIterator<Item = (S, Value)>,
    ) -> Self {
        let (names, values): (Vec<String>, Vec<Value>) =
            fields.into_iter().map(|(n, v)| (n.into(), v)).unzip();
        Object {
            class: Arc::new(ClassDef {
                name: name.into(),
                fields: names,
            }),
            values,
        }
    }

    /// The class name.
    pub fn class_name(&self) -> &str {
        &self.class.name
    }

    /// The value of a field, if the class has it.
    pub fn get(&self, field: &str) -> Option<&Value> {
        self.class
            .field_index(field)
            .and_then(|i| self.values.get(i))
    }

    /// (field name, value) pairs in wire order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.class
            .fields
            .iter()
            .map(String::as_str)
            .zip(self.values.iter())
    }
}

/// Any Hessian 2.0 value.
///
/// `PartialEq` compares doubles with `==` (so `NaN != NaN` and
/// `0.0 == -0.0`), like Java's `==` and unlike `Double.equals`.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Value {
    /// `null`.
    #[default]
    Null,
    /// `boolean`.
    Bool(bool),
    /// 32-bit `int` (Java `int`/`Integer`, also `short` and `byte` in hessian-lite).
    Int(i32),
    /// 64-bit `long`.
    Long(i64),
    /// 64-bit `double` (Java `float` is sent as a double).
    Double(f64),
    /// `java.util.Date`: milliseconds since 1970-01-01T00:00:00Z.
    Date(i64),
    /// A string. Java strings are UTF-16; on the wire their length counts
    /// UTF-16 units and supplementary characters travel as surrogate pairs.
    String(String),
    /// `byte[]`.
    Binary(Vec<u8>),
    /// A list or array.
    List(List),
    /// A map.
    Map(Map),
    /// An object.
    Object(Object),
    /// A reference to the n-th list, map or object of the stream (counted from
    /// 0 in the order they start). See the [module docs](self).
    Ref(u32),
}

impl Value {
    /// An untyped list (Java `ArrayList`).
    pub fn list(items: impl IntoIterator<Item = Value>) -> Value {
        Value::List(List {
            ty: None,
            items: items.into_iter().collect(),
        })
    }

    /// A list with a type name.
    pub fn typed_list(ty: impl Into<String>, items: impl IntoIterator<Item = Value>) -> Value {
        Value::List(List {
            ty: Some(ty.into()),
            items: items.into_iter().collect(),
        })
    }

    /// An untyped map (Java `HashMap`).
    pub fn map(entries: impl IntoIterator<Item = (Value, Value)>) -> Value {
        Value::Map(Map {
            ty: None,
            entries: entries.into_iter().collect(),
        })
    }

    /// Equality with doubles compared by their bits (a NaN equals the same
    /// NaN, -0.0 is not 0.0): what a lossless round trip must give back,
    /// where [`PartialEq`] follows Java's `==`.
    pub fn identical(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Double(x), Value::Double(y)) => x.to_bits() == y.to_bits(),
            (Value::List(x), Value::List(y)) => x.ty == y.ty && all_identical(&x.items, &y.items),
            (Value::Map(x), Value::Map(y)) => {
                x.ty == y.ty
                    && x.entries.len() == y.entries.len()
                    && x.entries
                        .iter()
                        .zip(&y.entries)
                        .all(|((k1, v1), (k2, v2))| k1.identical(k2) && v1.identical(v2))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.class == y.class && all_identical(&x.values, &y.values)
            }
            _ => self == other,
        }
    }

    /// Whether this is [`Value::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The integer, if this is an int or a long (of any size).
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int(v) => Some(v.into()),
            Value::Long(v) => Some(v),
            _ => None,
        }
    }

    /// The number as a double, if this is a double, int or long.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Double(v) => Some(v),
            Value::Int(v) => Some(v.into()),
            Value::Long(v) => Some(v as f64),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The bytes, if this is a binary.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Binary(b) => Some(b),
            _ => None,
        }
    }

    /// The list's items, if this is a list.
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(l) => Some(&l.items),
            _ => None,
        }
    }

    /// The map, if this is one.
    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// Whether any [`Value::Ref`] remains anywhere in this tree.
    pub fn contains_ref(&self) -> bool {
        match self {
            Value::Ref(_) => true,
            Value::List(l) => l.items.iter().any(Value::contains_ref),
            Value::Map(m) => m
                .entries
                .iter()
                .any(|(k, v)| k.contains_ref() || v.contains_ref()),
            Value::Object(o) => o.values.iter().any(Value::contains_ref),
            _ => false,
        }
    }
}

macro_rules! from_impl {
    ($($t:ty => $variant:ident $(as $conv:ty)?),* $(,)?) => {$(
        impl From<$t> for Value {
            fn from(v: $t) -> Value {
                Value::$variant(v $(as $conv)?)
            }
        }
    )*};
}

from_impl! {
    bool => Bool,
    i8 => Int as i32,
    i16 => Int as i32,
    i32 => Int,
    i64 => Long,
    f32 => Double as f64,
    f64 => Double,
    String => String,
    Vec<u8> => Binary,
    List => List,
    Map => Map,
    Object => Object,
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::String(v.to_owned())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

impl fmt::Display for Value {
    /// A compact, Java-like rendering for logs and test failures.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(v) => write!(f, "{v}"),
            Value::Long(v) => write!(f, "{v}L"),
            Value::Double(v) => write!(f, "{v:?}"),
            Value::Date(v) => write!(f, "Date({v})"),
            Value::String(s) if s.chars().count() > 64 => {
                let head: String = s.chars().take(61).collect();
                write!(f, "{head:?}... ({} bytes)", s.len())
            }
            Value::String(s) => write!(f, "{s:?}"),
            Value::Binary(b) => write!(f, "byte[{}]", b.len()),
            Value::List(l) => {
                if let Some(t) = &l.ty {
                    write!(f, "{t}")?;
                }
                f.write_str("[")?;
                for (i, v) in l.items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Value::Map(m) => {
                if let Some(t) = &m.ty {
                    write!(f, "{t}")?;
                }
                f.write_str("{")?;
                for (i, (k, v)) in m.entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
            Value::Object(o) => {
                write!(f, "{}{{", o.class.name)?;
                for (i, (k, v)) in o.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
            Value::Ref(n) => write!(f, "@{n}"),
        }
    }
}

/// Whether two runs of values are [`Value::identical`] item by item.
fn all_identical(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.identical(b))
}
