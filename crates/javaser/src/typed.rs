//! Typed writing and reading of known classes: [`JavaField`] for field
//! types, [`ToJava`] / [`FromJava`] for whole objects and
//! [`java_object!`](crate::java_object) to implement them for a struct.

use crate::decode::Decoder;
use crate::encode::Encoder;
use crate::error::{DecodeError, EncodeError};
use crate::value::Value;

/// A Rust type that stands for a Java field type.
pub trait JavaField: Sized {
    /// Java type code (`I`, `J`, `D`, ..., `L`).
    const TYPE_CODE: u8;
    /// JVM type string for object fields (`Ljava/lang/String;`).
    const TYPE_STRING: Option<&'static str>;
    /// Writes the field value (raw for primitives, an object otherwise).
    fn write_field(&self, enc: &mut Encoder) -> Result<(), EncodeError>;
    /// Converts a decoded field value (string references are resolved with
    /// the decoder's handle table).
    fn from_field(v: &Value, dec: &Decoder<'_>) -> Option<Self>;
}

macro_rules! prim_field {
    ($t:ty, $code:literal, $variant:ident, $write:ident) => {
        impl JavaField for $t {
            const TYPE_CODE: u8 = $code;
            const TYPE_STRING: Option<&'static str> = None;
            fn write_field(&self, enc: &mut Encoder) -> Result<(), EncodeError> {
                enc.$write(*self);
                Ok(())
            }
            fn from_field(v: &Value, _: &Decoder<'_>) -> Option<Self> {
                match v {
                    Value::$variant(x) => Some(*x),
                    _ => None,
                }
            }
        }
    };
}

prim_field!(i8, b'B', Byte, write_byte);
prim_field!(u16, b'C', Char, write_char);
prim_field!(f64, b'D', Double, write_double);
prim_field!(f32, b'F', Float, write_float);
prim_field!(i32, b'I', Int, write_int);
prim_field!(i64, b'J', Long, write_long);
prim_field!(i16, b'S', Short, write_short);
prim_field!(bool, b'Z', Boolean, write_boolean);

fn string_of(v: &Value, dec: &Decoder<'_>) -> Option<Option<String>> {
    match v {
        Value::Null => Some(None),
        Value::String(s) => Some(Some(s.clone())),
        Value::Reference(h) => dec.handle_string(*h).map(|s| Some(s.to_owned())),
        _ => None,
    }
}

/// A `String` field; Java `null` reads as an empty string.
impl JavaField for String {
    const TYPE_CODE: u8 = b'L';
    const TYPE_STRING: Option<&'static str> = Some("Ljava/lang/String;");
    fn write_field(&self, enc: &mut Encoder) -> Result<(), EncodeError> {
        enc.write_string(self);
        Ok(())
    }
    fn from_field(v: &Value, dec: &Decoder<'_>) -> Option<Self> {
        string_of(v, dec).map(Option::unwrap_or_default)
    }
}

/// A nullable `String` field.
impl JavaField for Option<String> {
    const TYPE_CODE: u8 = b'L';
    const TYPE_STRING: Option<&'static str> = Some("Ljava/lang/String;");
    fn write_field(&self, enc: &mut Encoder) -> Result<(), EncodeError> {
        match self {
            Some(s) => {
                enc.write_string(s);
            }
            None => enc.write_null(),
        }
        Ok(())
    }
    fn from_field(v: &Value, dec: &Decoder<'_>) -> Option<Self> {
        string_of(v, dec)
    }
}

/// Writes `self` as a Java object.
pub trait ToJava {
    /// Writes one object (`writeObject`).
    fn write_java(&self, enc: &mut Encoder) -> Result<(), EncodeError>;
}

/// Builds `Self` from a decoded Java object.
pub trait FromJava: Sized {
    /// Converts `v`, read by `dec` (for string references).
    fn from_java(v: &Value, dec: &Decoder<'_>) -> Result<Self, DecodeError>;
}

impl Encoder {
    /// Writes a [`ToJava`] value.
    pub fn write<T: ToJava + ?Sized>(&mut self, v: &T) -> Result<(), EncodeError> {
        v.write_java(self)
    }
}

impl Decoder<'_> {
    /// `readObject` into a [`FromJava`] type.
    pub fn read<T: FromJava>(&mut self) -> Result<T, DecodeError> {
        let at = self.position();
        let v = self.read_object()?;
        T::from_java(&v, self).map_err(|e| match e {
            DecodeError::TypeMismatch { expected, .. } => DecodeError::TypeMismatch {
                expected,
                offset: at,
            },
            other => other,
        })
    }
}

/// `String` objects (`null` is an error; use `Option<String>`).
impl ToJava for str {
    fn write_java(&self, enc: &mut Encoder) -> Result<(), EncodeError> {
        enc.write_string(self);
        Ok(())
    }
}

impl ToJava for String {
    fn write_java(&self, enc: &mut Encoder) -> Result<(), EncodeError> {
        self.as_str().write_java(enc)
    }
}

impl FromJava for String {
    fn from_java(v: &Value, dec: &Decoder<'_>) -> Result<Self, DecodeError> {
        match string_of(v, dec) {
            Some(Some(s)) => Ok(s),
            _ => Err(DecodeError::TypeMismatch {
                expected: "java.lang.String",
                offset: 0,
            }),
        }
    }
}

impl<T: ToJava> ToJava for Option<T> {
    fn write_java(&self, enc: &mut Encoder) -> Result<(), EncodeError> {
        match self {
            Some(v) => v.write_java(enc),
            None => {
                enc.write_null();
                Ok(())
            }
        }
    }
}

impl<T: FromJava> FromJava for Option<T> {
    fn from_java(v: &Value, dec: &Decoder<'_>) -> Result<Self, DecodeError> {
        match v {
            Value::Null => Ok(None),
            v => T::from_java(v, dec).map(Some),
        }
    }
}

macro_rules! boxed_java {
    ($t:ty, $class:literal, $write:ident, $variant:ident) => {
        /// The boxed Java type.
        impl ToJava for $t {
            fn write_java(&self, enc: &mut Encoder) -> Result<(), EncodeError> {
                enc.$write(*self)
            }
        }
        impl FromJava for $t {
            fn from_java(v: &Value, _: &Decoder<'_>) -> Result<Self, DecodeError> {
                match crate::java::unboxed(v) {
                    Some(Value::$variant(x))
                        if v.as_object().map(|o| o.desc.name.as_str()) == Some($class) =>
                    {
                        Ok(*x)
                    }
                    _ => Err(DecodeError::TypeMismatch {
                        expected: $class,
                        offset: 0,
                    }),
                }
            }
        }
    };
}

boxed_java!(i32, "java.lang.Integer", write_integer_object, Int);
boxed_java!(i64, "java.lang.Long", write_long_object, Long);
boxed_java!(f64, "java.lang.Double", write_double_object, Double);
boxed_java!(bool, "java.lang.Boolean", write_boolean_object, Boolean);

/// A `java.util.ArrayList`.
impl<T: ToJava> ToJava for [T] {
    fn write_java(&self, enc: &mut Encoder) -> Result<(), EncodeError> {
        enc.write_array_list(self.len(), |enc| {
            for v in self {
                v.write_java(enc)?;
            }
            Ok(())
        })
    }
}

/// A `java.util.ArrayList`.
impl<T: ToJava> ToJava for Vec<T> {
    fn write_java(&self, enc: &mut Encoder) -> Result<(), EncodeError> {
        self.as_slice().write_java(enc)
    }
}

/// From a `java.util.ArrayList`. Elements that are back-references to
/// earlier objects (other than strings) cannot be converted.
impl<T: FromJava> FromJava for Vec<T> {
    fn from_java(v: &Value, dec: &Decoder<'_>) -> Result<Self, DecodeError> {
        let els = crate::java::array_list_elements(v).ok_or(DecodeError::TypeMismatch {
            expected: "java.util.ArrayList",
            offset: 0,
        })?;
        els.into_iter().map(|e| T::from_java(e, dec)).collect()
    }
}
