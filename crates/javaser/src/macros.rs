//! [`java_object!`](crate::java_object), the macro that implements the
//! typed traits for a struct standing for a plain `Serializable` Java
//! class. It expands in the caller's crate, so it names only the crate's
//! public paths.

/// Implements [`ToJava`](crate::ToJava) and [`FromJava`](crate::FromJava)
/// for a struct that stands for a plain `Serializable` Java class (no
/// superclass data, no `writeObject`).
/// Fields are written in Java's descriptor order (primitives, then objects,
/// each by name) whatever their order in the macro; the class descriptor is
/// built once per type. Each field is given with its Rust type, which must
/// implement [`JavaField`](crate::JavaField).
///
/// ```
/// use javaser::{java_object, Decoder, Encoder};
///
/// #[derive(Debug, Default, PartialEq)]
/// struct Point { x: i32, label: String }
///
/// java_object!(Point, "demo.Point", 1, { x: i32 => "x", label: String => "label" });
///
/// let mut enc = Encoder::new();
/// enc.write(&Point { x: 1, label: "a".into() }).unwrap();
/// let bytes = enc.finish();
/// let p: Point = Decoder::new(&bytes).unwrap().read().unwrap();
/// assert_eq!(p, Point { x: 1, label: "a".into() });
/// ```
#[macro_export]
macro_rules! java_object {
    ($ty:ty, $class:expr, $suid:expr, { $($field:ident : $fty:ty => $jname:expr),* $(,)? }) => {
        impl $ty {
            /// The class descriptor of this Java class.
            pub fn java_class_desc() -> &'static $crate::ClassDesc {
                static DESC: ::std::sync::OnceLock<$crate::ClassDesc> = ::std::sync::OnceLock::new();
                DESC.get_or_init(|| {
                    $crate::ClassDesc::new($class, $suid, $crate::SC_SERIALIZABLE, vec![
                        $($crate::FieldDesc {
                            type_code: <$fty as $crate::JavaField>::TYPE_CODE,
                            name: ::std::string::String::from($jname),
                            class_name: <$fty as $crate::JavaField>::TYPE_STRING
                                .map(::std::string::String::from),
                        }),*
                    ])
                })
            }
        }

        impl $crate::ToJava for $ty {
            fn write_java(&self, enc: &mut $crate::Encoder) -> ::std::result::Result<(), $crate::EncodeError> {
                let desc = <$ty>::java_class_desc();
                enc.begin_object(desc)?;
                for f in &desc.fields {
                    $(if f.name == $jname {
                        $crate::JavaField::write_field(&self.$field, enc)?;
                        continue;
                    })*
                }
                enc.end_object()
            }
        }

        impl $crate::FromJava for $ty {
            fn from_java(v: &$crate::Value, dec: &$crate::Decoder<'_>) -> ::std::result::Result<Self, $crate::DecodeError> {
                let mismatch = || $crate::DecodeError::TypeMismatch { expected: $class, offset: 0 };
                let o = v.as_object().filter(|o| o.desc.name == $class).ok_or_else(mismatch)?;
                let mut out = <$ty as ::std::default::Default>::default();
                $(
                    if let Some(fv) = o.get($jname) {
                        out.$field = $crate::JavaField::from_field(fv, dec).ok_or_else(mismatch)?;
                    }
                )*
                Ok(out)
            }
        }
    };
}
