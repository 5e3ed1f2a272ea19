//! The dynamic model: class descriptors and everything a stream can carry.

use std::sync::Arc;

use crate::tc;

/// The flags `ObjectInputStream` gives a proxy class (serializable, no
/// `writeObject`); not on the wire.
const SC_SERIALIZABLE_PROXY: u8 = tc::SC_SERIALIZABLE;

/// One field of a class descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDesc {
    /// Java type code: `B C D F I J S Z` for primitives, `L` or `[` for objects.
    pub type_code: u8,
    /// Field name.
    pub name: String,
    /// For `L` / `[` fields, the JVM type string (`Ljava/lang/String;`, `[I`).
    pub class_name: Option<String>,
}

impl FieldDesc {
    /// A primitive field (`type_code` one of `B C D F I J S Z`).
    pub fn prim(type_code: u8, name: &str) -> Self {
        FieldDesc {
            type_code,
            name: name.into(),
            class_name: None,
        }
    }

    /// An object field with its JVM type string, e.g. `Ljava/lang/String;`.
    pub fn object(name: &str, type_string: &str) -> Self {
        let type_code = if type_string.starts_with('[') {
            b'['
        } else {
            b'L'
        };
        FieldDesc {
            type_code,
            name: name.into(),
            class_name: Some(type_string.into()),
        }
    }

    /// Whether the field is a primitive.
    pub fn is_primitive(&self) -> bool {
        !matches!(self.type_code, b'L' | b'[')
    }
}

/// A class descriptor (`TC_CLASSDESC`), with its superclass chain.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassDesc {
    /// Binary class name (`java.lang.Integer`, `[I`).
    pub name: String,
    /// `serialVersionUID`.
    pub suid: i64,
    /// `SC_*` flags.
    pub flags: u8,
    /// Serializable fields in stream order.
    pub fields: Vec<FieldDesc>,
    /// Class annotation (empty for `ObjectOutputStream`).
    pub annotations: Vec<Content>,
    /// Superclass descriptor, `None` when the superclass is not serializable.
    pub super_desc: Option<Arc<ClassDesc>>,
    /// For a dynamic proxy class (`TC_PROXYCLASSDESC`, what
    /// `java.lang.reflect.Proxy` instances such as RMI stubs are written
    /// with): the interface names, in the proxy's order. A proxy descriptor
    /// has no name, `serialVersionUID`, flags or fields of its own on the
    /// wire (they are empty here; its serializable state is its superclass
    /// `java.lang.reflect.Proxy`'s field `h`). `None` for other classes.
    pub proxy_interfaces: Option<Vec<String>>,
}

impl ClassDesc {
    /// A descriptor whose fields are sorted as Java sorts them: primitives
    /// first, then objects, each group by name.
    pub fn new(name: &str, suid: i64, flags: u8, mut fields: Vec<FieldDesc>) -> Self {
        fields.sort_by(|a, b| {
            (!a.is_primitive(), a.name.encode_utf16().collect::<Vec<_>>())
                .cmp(&(!b.is_primitive(), b.name.encode_utf16().collect::<Vec<_>>()))
        });
        ClassDesc {
            name: name.into(),
            suid,
            flags,
            fields,
            annotations: Vec::new(),
            super_desc: None,
            proxy_interfaces: None,
        }
    }

    /// A dynamic proxy class descriptor implementing `interfaces`, whose
    /// superclass is `super_desc` (for a real proxy,
    /// `java.lang.reflect.Proxy`'s descriptor).
    pub fn proxy(interfaces: Vec<String>, super_desc: Arc<ClassDesc>) -> Self {
        ClassDesc {
            name: String::new(),
            suid: 0,
            flags: SC_SERIALIZABLE_PROXY,
            fields: Vec::new(),
            annotations: Vec::new(),
            super_desc: Some(super_desc),
            proxy_interfaces: Some(interfaces),
        }
    }

    /// Whether this is a dynamic proxy class descriptor.
    pub fn is_proxy(&self) -> bool {
        self.proxy_interfaces.is_some()
    }

    /// Sets the superclass descriptor.
    pub fn with_super(mut self, sup: Arc<ClassDesc>) -> Self {
        self.super_desc = Some(sup);
        self
    }

    /// The chain from the topmost serializable superclass down to `self`,
    /// the order in which class data appears in the stream.
    pub fn hierarchy(&self) -> Vec<&ClassDesc> {
        let mut v = vec![self];
        let mut cur = self;
        while let Some(s) = &cur.super_desc {
            v.push(s);
            cur = s;
        }
        v.reverse();
        v
    }

    /// Whether the class has a `writeObject` method.
    pub fn has_write_method(&self) -> bool {
        self.flags & tc::SC_WRITE_METHOD != 0
    }
}

/// A piece of stream content: block data or an object.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// One `TC_BLOCKDATA` / `TC_BLOCKDATALONG` chunk.
    BlockData(Vec<u8>),
    /// An object (or null, reference, ...).
    Value(Value),
}

/// Anything a stream can carry.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `TC_NULL`.
    Null,
    /// `byte` field or array element.
    Byte(i8),
    /// `char` field or array element (one UTF-16 unit).
    Char(u16),
    /// `double`.
    Double(f64),
    /// `float`.
    Float(f32),
    /// `int`.
    Int(i32),
    /// `long`.
    Long(i64),
    /// `short`.
    Short(i16),
    /// `boolean`.
    Boolean(bool),
    /// `TC_STRING` / `TC_LONGSTRING`.
    String(String),
    /// `TC_REFERENCE` to an earlier handle (absolute, e.g. `0x7e0003`).
    Reference(u32),
    /// `TC_OBJECT`.
    Object(Box<Object>),
    /// `TC_ARRAY`.
    Array(Box<Array>),
    /// `TC_ENUM`.
    Enum(Box<Enum>),
    /// `TC_CLASS`.
    Class(Arc<ClassDesc>),
}

/// Class data of one class in an object's hierarchy.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClassData {
    /// Field values, in the descriptor's field order.
    pub values: Vec<Value>,
    /// What `writeObject` (or `writeExternal`) wrote after the fields,
    /// without the closing `TC_ENDBLOCKDATA`.
    pub annotations: Vec<Content>,
}

/// A serialized object.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// Its class descriptor.
    pub desc: Arc<ClassDesc>,
    /// Handle the reader assigned (ignored by the writer).
    pub handle: u32,
    /// One entry per class of [`ClassDesc::hierarchy`], superclass first.
    pub class_data: Vec<ClassData>,
}

impl Object {
    /// A field value by name, searching from the most derived class up.
    pub fn get(&self, name: &str) -> Option<&Value> {
        let h = self.desc.hierarchy();
        for (d, data) in h.iter().zip(&self.class_data).rev() {
            if let Some(i) = d.fields.iter().position(|f| f.name == name) {
                return data.values.get(i);
            }
        }
        None
    }
}

/// An array.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// Its class descriptor (name `[I`, `[Ljava.lang.String;`, ...).
    pub desc: Arc<ClassDesc>,
    /// Handle the reader assigned (ignored by the writer).
    pub handle: u32,
    /// Elements (primitive arrays hold primitive values).
    pub elements: Vec<Value>,
}

/// An enum constant.
#[derive(Debug, Clone, PartialEq)]
pub struct Enum {
    /// The enum's class descriptor (its super is `java.lang.Enum`).
    pub desc: Arc<ClassDesc>,
    /// Handle the reader assigned.
    pub handle: u32,
    /// The constant's name: a [`Value::String`] or [`Value::Reference`].
    pub constant: Value,
}

impl Value {
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
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
}
