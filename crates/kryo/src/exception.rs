//! Throwables: what Dubbo puts on the wire for an exception response, in
//! each kryo line (see [`crate::Decoder::read_exception`]).

use crate::value::{FieldType, JavaException};

/// FieldSerializer's field order for a throwable of `class` on Kryo 4
/// (JDK 17): `Throwable`'s non-transient fields plus the known subclass
/// fields, sorted by name.
pub(crate) fn kryo4_fields(class: &str) -> Vec<(&'static str, FieldType)> {
    let mut f = vec![
        ("cause", FieldType::Object),
        ("detailMessage", FieldType::String),
        ("stackTrace", FieldType::Object),
        ("suppressedExceptions", FieldType::Object),
    ];
    // Exception classes with fields of their own that a Dubbo provider may
    // send. java.lang's exceptions add none (NullPointerException's are
    // transient).
    match class {
        "com.alibaba.dubbo.rpc.RpcException" | "org.apache.dubbo.rpc.RpcException" => {
            f.push(("code", FieldType::Int))
        }
        _ => {}
    }
    f.sort_by(|a, b| a.0.cmp(b.0));
    f
}

/// A Java-serialized throwable (Kryo's JavaSerializer) as a
/// [`JavaException`]; `None` when `v` is no object with a `detailMessage`.
pub(crate) fn from_java(v: &javaser::Value, d: &javaser::Decoder<'_>) -> Option<JavaException> {
    let o = v.as_object()?;
    let string = |v: &javaser::Value| match v {
        javaser::Value::String(s) => Some(s.clone()),
        javaser::Value::Reference(h) => d.handle_string(*h).map(str::to_owned),
        _ => None,
    };
    let message = match o.get("detailMessage")? {
        javaser::Value::Null => None,
        m => Some(string(m)?),
    };
    let cause = match o.get("cause") {
        Some(c @ javaser::Value::Object(inner)) if inner.handle != o.handle => {
            from_java(c, d).map(Box::new)
        }
        _ => None,
    };
    Some(JavaException {
        class: o.desc.name.clone(),
        message,
        cause,
    })
}
