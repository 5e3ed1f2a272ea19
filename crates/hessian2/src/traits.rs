//! Typed encoding and decoding.
//!
//! [`ToHessian`] writes a Rust value straight into an [`Encoder`] and
//! [`FromHessian`] reads one straight from a [`Decoder`], with no [`Value`]
//! tree in between: this is the hot path of an RPC client. The impls here
//! follow what a Java peer sends and expects: `i32` is a Java `int`, `i64` a
//! `long`, `Vec<T>` an `ArrayList` (an untyped fixed-length list),
//! `HashMap`/`BTreeMap` a `HashMap` (an untyped map), `Option::None` a
//! `null`. Bytes go as a Hessian binary through [`bytes::Bytes`] (a
//! `Vec<u8>` is a list of ints, like any `Vec`).
//!
//! For Java classes, [`hessian_object!`](crate::hessian_object) implements
//! both traits for a struct, or implement them by hand with
//! [`Encoder::begin_object`] and [`Decoder::begin_object`].

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::BufMut;

use crate::decode::Decoder;
use crate::encode::Encoder;
use crate::error::{DecodeError, EncodeError};
use crate::value::Value;

/// A Rust type that can be written as Hessian.
pub trait ToHessian {
    /// Writes `self` as one Hessian value.
    fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError>;
}

/// A Rust type that can be read from Hessian.
pub trait FromHessian: Sized {
    /// Reads one Hessian value.
    fn decode(dec: &mut Decoder<'_>) -> Result<Self, DecodeError>;
}

// The typed entry points of the encoder and the decoder live beside the
// traits, so that the codec's modules need not know them.

impl<B: BufMut> Encoder<B> {
    /// Writes any [`ToHessian`] value.
    pub fn write<T: ToHessian + ?Sized>(&mut self, v: &T) -> Result<(), EncodeError> {
        v.encode(self)
    }
}

impl Decoder<'_> {
    /// Reads any [`FromHessian`] value.
    pub fn read<T: FromHessian>(&mut self) -> Result<T, DecodeError> {
        T::decode(self)
    }
}

impl<T: ToHessian + ?Sized> ToHessian for &T {
    fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError> {
        (**self).encode(enc)
    }
}

impl<T: ToHessian + ?Sized> ToHessian for Box<T> {
    fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError> {
        (**self).encode(enc)
    }
}

impl<T: FromHessian> FromHessian for Box<T> {
    fn decode(dec: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        T::decode(dec).map(Box::new)
    }
}

macro_rules! scalar {
    ($($t:ty: $write:ident($conv:ty), $read:ident;)*) => {$(
        impl ToHessian for $t {
            fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError> {
                enc.$write(<$conv>::from(*self));
                Ok(())
            }
        }

        impl FromHessian for $t {
            fn decode(dec: &mut Decoder<'_>) -> Result<Self, DecodeError> {
                let at = dec.position();
                let v = dec.$read()?;
                <$t>::try_from(v).map_err(|_| DecodeError::OutOfRange {
                    value: v as i64,
                    target: stringify!($t),
                    offset: at,
                })
            }
        }
    )*};
}

scalar! {
    i8: write_int(i32), read_i32;
    i16: write_int(i32), read_i32;
    i32: write_int(i32), read_i32;
    i64: write_long(i64), read_i64;
}

/// The types the encoder writes and the decoder reads as they are.
macro_rules! exact {
    ($($t:ty: $write:ident, $read:ident;)*) => {$(
        impl ToHessian for $t {
            fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError> {
                enc.$write(*self);
                Ok(())
            }
        }

        impl FromHessian for $t {
            fn decode(dec: &mut Decoder<'_>) -> Result<Self, DecodeError> {
                dec.$read()
            }
        }
    )*};
}

exact! {
    bool: write_bool, read_bool;
    f64: write_double, read_f64;
}

impl ToHessian for f32 {
    /// Java sends a `float` as a double too.
    fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError> {
        enc.write_double(f64::from(*self));
        Ok(())
    }
}

impl FromHessian for f32 {
    fn decode(dec: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        dec.read_f64().map(|v| v as f32)
    }
}

impl ToHessian for str {
    fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError> {
        enc.write_string(self);
        Ok(())
    }
}

impl ToHessian for String {
    fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError> {
        enc.write_string(self);
        Ok(())
    }
}

impl FromHessian for String {
    fn decode(dec: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        dec.read_string()
    }
}

impl ToHessian for bytes::Bytes {
    fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError> {
        enc.write_binary(self);
        Ok(())
    }
}

impl FromHessian for bytes::Bytes {
    fn decode(dec: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        dec.read_binary().map(bytes::Bytes::from)
    }
}

impl ToHessian for SystemTime {
    /// A `java.util.Date`, to the millisecond.
    fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError> {
        let millis = match self.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
            Err(e) => i64::try_from(e.duration().as_millis()).map_or(i64::MIN, |m| -m),
        };
        enc.write_date(millis);
        Ok(())
    }
}

impl FromHessian for SystemTime {
    fn decode(dec: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let at = dec.position();
        let millis = dec.read_date()?;
        let d = Duration::from_millis(millis.unsigned_abs());
        let t = if millis >= 0 {
            UNIX_EPOCH.checked_add(d)
        } else {
            UNIX_EPOCH.checked_sub(d)
        };
        t.ok_or(DecodeError::OutOfRange {
            value: millis,
            target: "SystemTime",
            offset: at,
        })
    }
}

impl ToHessian for Value {
    fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError> {
        enc.write_value(self)
    }
}

impl FromHessian for Value {
    fn decode(dec: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        dec.read_value()
    }
}

impl<T: ToHessian> ToHessian for Option<T> {
    /// `None` is `null`.
    fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError> {
        match self {
            Some(v) => v.encode(enc),
            None => {
                enc.write_null();
                Ok(())
            }
        }
    }
}

impl<T: FromHessian> FromHessian for Option<T> {
    fn decode(dec: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        if dec.try_read_null()? {
            Ok(None)
        } else {
            T::decode(dec).map(Some)
        }
    }
}

impl<T: ToHessian> ToHessian for [T] {
    /// An untyped fixed-length list, as Java writes an `ArrayList`.
    fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError> {
        enc.begin_list(self.len(), None)?;
        for v in self {
            v.encode(enc)?;
        }
        Ok(())
    }
}

impl<T: ToHessian> ToHessian for Vec<T> {
    fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError> {
        self.as_slice().encode(enc)
    }
}

impl<T: FromHessian> FromHessian for Vec<T> {
    /// Any list: typed or not, fixed or variable length.
    fn decode(dec: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let h = dec.begin_list()?;
        let mut out = Vec::with_capacity(dec.prealloc(h.len));
        while dec.has_next()? {
            out.push(T::decode(dec)?);
        }
        dec.end()?;
        Ok(out)
    }
}

fn encode_map<'a, K, V, B>(
    enc: &mut Encoder<B>,
    entries: impl Iterator<Item = (&'a K, &'a V)>,
) -> Result<(), EncodeError>
where
    K: ToHessian + 'a,
    V: ToHessian + 'a,
    B: BufMut,
{
    enc.begin_map(None)?;
    for (k, v) in entries {
        k.encode(enc)?;
        v.encode(enc)?;
    }
    enc.end_map();
    Ok(())
}

/// Reads a map's entries into any map type: `HashMap` and `BTreeMap` read
/// alike and differ only in how they keep the entries.
fn decode_map<K, V, M>(dec: &mut Decoder<'_>) -> Result<M, DecodeError>
where
    K: FromHessian,
    V: FromHessian,
    M: Default + Extend<(K, V)>,
{
    dec.begin_map()?;
    let mut out = M::default();
    while dec.has_next()? {
        let k = K::decode(dec)?;
        let v = V::decode(dec)?;
        out.extend(std::iter::once((k, v)));
    }
    dec.end()?;
    Ok(out)
}

impl<K: ToHessian, V: ToHessian, S> ToHessian for HashMap<K, V, S> {
    /// An untyped map, as Java writes a `HashMap`.
    fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError> {
        encode_map(enc, self.iter())
    }
}

impl<K: FromHessian + Eq + Hash, V: FromHessian, S: BuildHasher + Default> FromHessian
    for HashMap<K, V, S>
{
    fn decode(dec: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        decode_map(dec)
    }
}

impl<K: ToHessian, V: ToHessian> ToHessian for BTreeMap<K, V> {
    /// An untyped map.
    fn encode<B: BufMut>(&self, enc: &mut Encoder<B>) -> Result<(), EncodeError> {
        encode_map(enc, self.iter())
    }
}

impl<K: FromHessian + Ord, V: FromHessian> FromHessian for BTreeMap<K, V> {
    fn decode(dec: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        decode_map(dec)
    }
}
