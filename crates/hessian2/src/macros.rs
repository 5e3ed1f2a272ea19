//! [`hessian_object!`](crate::hessian_object), the macro that implements
//! the typed traits for a struct standing for a Java class. It expands in
//! the caller's crate, so it names only the crate's public paths.

/// Implements [`ToHessian`](crate::ToHessian) and
/// [`FromHessian`](crate::FromHessian) for a struct that stands for
/// a Java class.
///
/// Name the Java class and map each Rust field to its Java field name, in the
/// order the fields go on the wire. Encoding writes the class definition
/// once per encoder, then each instance's field values directly, with no
/// allocation. Decoding matches fields by name, so it accepts any field
/// order (Caucho's Java writer sends declaration order, hessian-lite sends
/// it reversed), ignores fields it does not know, and leaves fields the
/// stream lacks as the struct's `Default` has them (the struct must
/// implement `Default`). The class name is not checked when decoding.
///
/// ```
/// use hessian2::{hessian_object, from_slice, to_vec};
///
/// #[derive(Debug, Default, PartialEq)]
/// struct Point {
///     x: i32,
///     label: Option<String>,
/// }
///
/// hessian_object!(Point, "com.example.Point", {
///     x => "x",
///     label => "label",
/// });
///
/// let p = Point { x: 7, label: Some("seven".into()) };
/// let bytes = to_vec(&p).unwrap();
/// assert_eq!(&bytes[..2], b"C\x11");
/// assert_eq!(from_slice::<Point>(&bytes).unwrap(), p);
/// ```
#[macro_export]
macro_rules! hessian_object {
    ($ty:ty, $class:expr, { $($field:ident => $name:literal),* $(,)? }) => {
        impl $crate::ToHessian for $ty {
            fn encode<B: $crate::bytes::BufMut>(
                &self,
                enc: &mut $crate::Encoder<B>,
            ) -> ::core::result::Result<(), $crate::EncodeError> {
                const FIELDS: &[&str] = &[$($name),*];
                enc.begin_object($class, FIELDS)?;
                $( $crate::ToHessian::encode(&self.$field, enc)?; )*
                ::core::result::Result::Ok(())
            }
        }

        impl $crate::FromHessian for $ty {
            fn decode(
                dec: &mut $crate::Decoder<'_>,
            ) -> ::core::result::Result<Self, $crate::DecodeError> {
                let header = dec.begin_object()?;
                let mut out = <$ty as ::core::default::Default>::default();
                for name in header.class.fields.iter() {
                    match name.as_str() {
                        $( $name => out.$field = $crate::FromHessian::decode(dec)?, )*
                        _ => dec.skip_value()?,
                    }
                }
                dec.end()?;
                ::core::result::Result::Ok(out)
            }
        }
    };
}
