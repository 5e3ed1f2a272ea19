//! Descriptors and writers for JDK classes, exactly as JDK 17 writes them.

use std::sync::Arc;

use crate::encode::Encoder;
use crate::error::EncodeError;
use crate::tc::{SC_SERIALIZABLE, SC_WRITE_METHOD};
use crate::value::{ClassData, ClassDesc, Content, FieldDesc, Object, Value};

/// `serialVersionUID` of `java.lang.Number`.
pub const NUMBER_SUID: i64 = -8742448824652078965;
/// `serialVersionUID` of `java.lang.Integer`.
pub const INTEGER_SUID: i64 = 1360826667806852920;
/// `serialVersionUID` of `java.lang.Long`.
pub const LONG_SUID: i64 = 4290774380558885855;
/// `serialVersionUID` of `java.lang.Double`.
pub const DOUBLE_SUID: i64 = -9172774392245257468;
/// `serialVersionUID` of `java.lang.Boolean`.
pub const BOOLEAN_SUID: i64 = -3665804199014368530;
/// `serialVersionUID` of `java.util.ArrayList`.
pub const ARRAY_LIST_SUID: i64 = 8683452581122892189;
/// `serialVersionUID` of `java.util.HashMap`.
pub const HASH_MAP_SUID: i64 = 362498820763181265;
/// `serialVersionUID` of `int[]`.
pub const INT_ARRAY_SUID: i64 = 5600894804908749477;
/// `serialVersionUID` of `byte[]`.
pub const BYTE_ARRAY_SUID: i64 = -5984413125824719648;
/// `serialVersionUID` of `String[]`.
pub const STRING_ARRAY_SUID: i64 = -5921575005990323385;

/// `java.lang.Number`.
pub fn number_desc() -> Arc<ClassDesc> {
    Arc::new(ClassDesc::new(
        "java.lang.Number",
        NUMBER_SUID,
        SC_SERIALIZABLE,
        vec![],
    ))
}

fn boxed(name: &str, suid: i64, code: u8, number: bool) -> ClassDesc {
    let d = ClassDesc::new(
        name,
        suid,
        SC_SERIALIZABLE,
        vec![FieldDesc::prim(code, "value")],
    );
    if number {
        d.with_super(number_desc())
    } else {
        d
    }
}

/// `java.lang.Integer` (super `java.lang.Number`).
pub fn integer_desc() -> ClassDesc {
    boxed("java.lang.Integer", INTEGER_SUID, b'I', true)
}
/// `java.lang.Long`.
pub fn long_desc() -> ClassDesc {
    boxed("java.lang.Long", LONG_SUID, b'J', true)
}
/// `java.lang.Double`.
pub fn double_desc() -> ClassDesc {
    boxed("java.lang.Double", DOUBLE_SUID, b'D', true)
}
/// `java.lang.Boolean` (its superclass `Object` is not serializable).
pub fn boolean_desc() -> ClassDesc {
    boxed("java.lang.Boolean", BOOLEAN_SUID, b'Z', false)
}
/// `java.util.ArrayList`.
pub fn array_list_desc() -> ClassDesc {
    ClassDesc::new(
        "java.util.ArrayList",
        ARRAY_LIST_SUID,
        SC_SERIALIZABLE | SC_WRITE_METHOD,
        vec![FieldDesc::prim(b'I', "size")],
    )
}
/// `java.util.HashMap`.
pub fn hash_map_desc() -> ClassDesc {
    ClassDesc::new(
        "java.util.HashMap",
        HASH_MAP_SUID,
        SC_SERIALIZABLE | SC_WRITE_METHOD,
        vec![
            FieldDesc::prim(b'F', "loadFactor"),
            FieldDesc::prim(b'I', "threshold"),
        ],
    )
}
/// `int[]`.
pub fn int_array_desc() -> ClassDesc {
    ClassDesc::new("[I", INT_ARRAY_SUID, SC_SERIALIZABLE, vec![])
}
/// `byte[]`.
pub fn byte_array_desc() -> ClassDesc {
    ClassDesc::new("[B", BYTE_ARRAY_SUID, SC_SERIALIZABLE, vec![])
}
/// `String[]`.
pub fn string_array_desc() -> ClassDesc {
    ClassDesc::new(
        "[Ljava.lang.String;",
        STRING_ARRAY_SUID,
        SC_SERIALIZABLE,
        vec![],
    )
}

/// A boxed primitive as a [`Value`] (`java.lang.Integer` etc.), for
/// `Value::Int`, `Long`, `Double` and `Boolean`; other values are returned
/// unchanged.
pub fn boxed_value(v: Value) -> Value {
    let (desc, number) = match v {
        Value::Int(_) => (integer_desc(), true),
        Value::Long(_) => (long_desc(), true),
        Value::Double(_) => (double_desc(), true),
        Value::Boolean(_) => (boolean_desc(), false),
        other => return other,
    };
    let mut class_data = Vec::new();
    if number {
        class_data.push(ClassData::default());
    }
    class_data.push(ClassData {
        values: vec![v],
        annotations: vec![],
    });
    Value::Object(Box::new(Object {
        desc: Arc::new(desc),
        handle: 0,
        class_data,
    }))
}

/// The primitive inside a boxed `Integer`, `Long`, `Double`, `Boolean`,
/// `Short`, `Byte`, `Float` or `Character` object.
pub fn unboxed(v: &Value) -> Option<&Value> {
    let o = v.as_object()?;
    match o.desc.name.as_str() {
        "java.lang.Integer"
        | "java.lang.Long"
        | "java.lang.Double"
        | "java.lang.Boolean"
        | "java.lang.Short"
        | "java.lang.Byte"
        | "java.lang.Float"
        | "java.lang.Character" => o.get("value"),
        _ => None,
    }
}

impl Encoder {
    fn boxed(
        &mut self,
        desc: &ClassDesc,
        write: impl FnOnce(&mut Self),
    ) -> Result<(), EncodeError> {
        self.begin_object(desc)?;
        write(self);
        self.end_object()
    }

    /// A `java.lang.Integer`.
    pub fn write_integer_object(&mut self, v: i32) -> Result<(), EncodeError> {
        self.boxed(&integer_desc(), |e| e.write_int(v))
    }
    /// A `java.lang.Long`.
    pub fn write_long_object(&mut self, v: i64) -> Result<(), EncodeError> {
        self.boxed(&long_desc(), |e| e.write_long(v))
    }
    /// A `java.lang.Double`.
    pub fn write_double_object(&mut self, v: f64) -> Result<(), EncodeError> {
        self.boxed(&double_desc(), |e| e.write_double(v))
    }
    /// A `java.lang.Boolean`.
    pub fn write_boolean_object(&mut self, v: bool) -> Result<(), EncodeError> {
        self.boxed(&boolean_desc(), |e| e.write_boolean(v))
    }

    /// A `java.util.ArrayList` of `len` elements: `elements` must write
    /// exactly `len` objects.
    pub fn write_array_list(
        &mut self,
        len: usize,
        elements: impl FnOnce(&mut Self) -> Result<(), EncodeError>,
    ) -> Result<(), EncodeError> {
        let n = i32::try_from(len).map_err(|_| EncodeError::Mismatch("list too long".into()))?;
        self.begin_object(&array_list_desc())?;
        self.write_int(n);
        self.begin_custom_data();
        self.write_int(n);
        elements(self)?;
        self.end_custom_data()?;
        self.end_object()
    }

    /// A `java.util.HashMap` of `len` entries built by `put` with the default
    /// capacity and load factor: `entries` must write `len` key/value object
    /// pairs, in the map's iteration (bucket) order.
    pub fn write_hash_map(
        &mut self,
        len: usize,
        entries: impl FnOnce(&mut Self) -> Result<(), EncodeError>,
    ) -> Result<(), EncodeError> {
        let n = i32::try_from(len).map_err(|_| EncodeError::Mismatch("map too long".into()))?;
        let (threshold, buckets) = if n == 0 {
            (0, 16)
        } else {
            let mut cap: i64 = 16;
            while i64::from(n) > cap * 3 / 4 && cap < 1 << 30 {
                cap *= 2;
            }
            ((cap * 3 / 4) as i32, cap as i32)
        };
        self.begin_object(&hash_map_desc())?;
        self.write_float(0.75);
        self.write_int(threshold);
        self.begin_custom_data();
        self.write_int(buckets);
        self.write_int(n);
        entries(self)?;
        self.end_custom_data()?;
        self.end_object()
    }

    /// An `int[]`.
    pub fn write_int_array(&mut self, v: &[i32]) -> Result<(), EncodeError> {
        self.begin_array(&int_array_desc(), v.len())?;
        for &x in v {
            self.write_int(x);
        }
        self.end_object()
    }
    /// A `byte[]`.
    pub fn write_byte_array(&mut self, v: &[u8]) -> Result<(), EncodeError> {
        self.begin_array(&byte_array_desc(), v.len())?;
        self.write_bytes(v);
        self.end_object()
    }
    /// A `String[]` (`None` elements are nulls).
    pub fn write_string_array(&mut self, v: &[Option<&str>]) -> Result<(), EncodeError> {
        self.begin_array(&string_array_desc(), v.len())?;
        for s in v {
            match s {
                Some(s) => {
                    self.write_string(s);
                }
                None => self.write_null(),
            }
        }
        self.end_object()
    }
}

fn custom_values<'a>(v: &'a Value, class: &str) -> Option<(&'a [Content], usize)> {
    let o = v.as_object().filter(|o| o.desc.name == class)?;
    let data = o.class_data.last()?;
    let skip = match data.annotations.first()? {
        Content::BlockData(b) => b.len(),
        _ => return None,
    };
    Some((&data.annotations[1..], skip))
}

/// The elements of a decoded `java.util.ArrayList` (its `writeObject` data
/// after the capacity block), or `None` if `v` is not one.
pub fn array_list_elements(v: &Value) -> Option<Vec<&Value>> {
    let (rest, _) = custom_values(v, "java.util.ArrayList")?;
    rest.iter()
        .map(|c| match c {
            Content::Value(v) => Some(v),
            Content::BlockData(_) => None,
        })
        .collect()
}

/// The key/value pairs of a decoded `java.util.HashMap`, in stream order,
/// or `None` if `v` is not one.
pub fn hash_map_entries(v: &Value) -> Option<Vec<(&Value, &Value)>> {
    let (rest, _) = custom_values(v, "java.util.HashMap")?;
    let vals: Option<Vec<&Value>> = rest
        .iter()
        .map(|c| match c {
            Content::Value(v) => Some(v),
            Content::BlockData(_) => None,
        })
        .collect();
    let vals = vals?;
    if vals.len() % 2 != 0 {
        return None;
    }
    Some(vals.chunks(2).map(|p| (p[0], p[1])).collect())
}

impl Encoder {
    /// A `TC_ENUM` constant of the enum class `desc` (whose descriptor has
    /// `SC_ENUM` and `java.lang.Enum` as superclass, see [`enum_desc`]).
    pub fn write_enum(&mut self, desc: &ClassDesc, constant: &str) -> Result<(), EncodeError> {
        let e = crate::value::Enum {
            desc: Arc::new(desc.clone()),
            handle: 0,
            constant: Value::String(constant.into()),
        };
        self.write_value(&Value::Enum(Box::new(e)))
    }
}

/// The descriptor of enum class `name` as Java writes it: `serialVersionUID`
/// 0, flags `SC_SERIALIZABLE | SC_ENUM`, no fields, superclass
/// `java.lang.Enum`.
pub fn enum_desc(name: &str) -> ClassDesc {
    let flags = SC_SERIALIZABLE | crate::tc::SC_ENUM;
    let base = ClassDesc::new("java.lang.Enum", 0, flags, vec![]);
    ClassDesc::new(name, 0, flags, vec![]).with_super(Arc::new(base))
}
