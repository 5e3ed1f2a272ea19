//! Verifying a reply by its bytes: the **reference reply**.
//!
//! A cell makes the same call over and over, and a correct server answers
//! it with the same bytes every time (the parts that change per call, such
//! as a request id or a `Date` header, are outside the bytes compared).
//! Decoding every reply in full to compare it with the expected value
//! costs more per call than the rest of the client's own work on the
//! fastest protocols; comparing its bytes with those of a reply that *was*
//! decoded in full and found equal to the expected value costs one
//! `memcmp`.
//!
//! Equal bytes decode to an equal value (every codec here is a function of
//! the bytes), so a reply whose bytes equal the reference's is verified
//! without a value: [`Reply::AsReference`]. Only this module makes one,
//! and only for bytes equal to those of a reply that decoded to a value
//! equal to the call's expected one (compared again on every call, so a
//! reference kept for one expected value is never taken for another). Any
//! other reply is decoded in full and compared by the runner
//! ([`crate::protocol::verify`]), for every protocol, so a protocol cannot
//! turn a wrong reply into a success through its reference.

use crate::protocol::{verify, CallError, Connection};
use rpclab_model::contract::{Call, Value};
use std::future::Future;
use std::sync::OnceLock;

/// A connection whose every call is one exchange that hands back a
/// [`Reply`]: like the reference, or decoded. Its [`Connection`] follows
/// (a reply like the reference is never made a value to be verified).
pub trait ReferenceExchange: Send + Sync + 'static {
    /// One exchange: the request sent, its reply checked against the
    /// reference reply, or decoded.
    fn exchange(&self, call: &Call) -> impl Future<Output = Result<Reply, CallError>> + Send;
}

impl<C: ReferenceExchange> Connection for C {
    async fn call(&self, call: &Call) -> Result<Value, CallError> {
        Ok(self.exchange(call).await?.into_value(&call.expected))
    }

    async fn verified_call(&self, call: &Call) -> Result<(), CallError> {
        self.exchange(call).await?.verify(call)
    }
}

/// A reply as [`ReferenceReply::reply_of`] found it.
#[derive(Debug, PartialEq)]
pub enum Reply {
    /// Its bytes are the reference's: it decoded to the expected value.
    AsReference,
    /// Any other reply, decoded in full and not yet compared.
    Decoded(Value),
}

impl Reply {
    /// As a contract value: the expected value for a reply like the
    /// reference.
    pub fn into_value(self, expected: &Value) -> Value {
        match self {
            Reply::AsReference => expected.clone(),
            Reply::Decoded(value) => value,
        }
    }

    /// The reply verified: equal to `call.expected`, or an error.
    pub fn verify(self, call: &Call) -> Result<(), CallError> {
        match self {
            Reply::AsReference => Ok(()),
            Reply::Decoded(value) => verify(value, call),
        }
    }
}

/// The reference reply of one prepared call (see the module documentation).
#[derive(Debug, Default)]
pub struct ReferenceReply {
    /// The reference's bytes and the value they decoded to.
    known: OnceLock<(Box<[u8]>, Value)>,
}

impl ReferenceReply {
    /// The reply in `bytes`: [`Reply::AsReference`] if the bytes are the
    /// reference's and its value is `expected`, else `decode(bytes)`; the
    /// first decoded reply equal to `expected` becomes the reference.
    pub fn reply_of(
        &self,
        bytes: &[u8],
        expected: &Value,
        decode: impl FnOnce(&[u8]) -> Result<Value, CallError>,
    ) -> Result<Reply, CallError> {
        if let Some((reference, value)) = self.known.get() {
            if **reference == *bytes && value == expected {
                return Ok(Reply::AsReference);
            }
        }
        let value = decode(bytes)?;
        if self.known.get().is_none() && value == *expected {
            let _ = self.known.set((bytes.into(), value.clone()));
        }
        Ok(Reply::Decoded(value))
    }

    /// The reference's bytes, once a reply became the reference.
    pub fn bytes(&self) -> Option<&[u8]> {
        self.known.get().map(|(b, _)| &**b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn text(bytes: &[u8]) -> Result<Value, CallError> {
        std::str::from_utf8(bytes)
            .map(|s| Value::Str(s.to_owned()))
            .map_err(|e| CallError::Protocol(e.to_string()))
    }

    #[test]
    fn only_a_reply_equal_to_the_expected_value_becomes_the_reference() {
        let reference = ReferenceReply::default();
        let expected = Value::Str("right".into());
        let decoded = Cell::new(0);
        let decode = |b: &[u8]| {
            decoded.set(decoded.get() + 1);
            text(b)
        };
        // A wrong reply is decoded, handed on as it is, and not kept.
        assert_eq!(
            reference.reply_of(b"wrong", &expected, decode).unwrap(),
            Reply::Decoded(Value::Str("wrong".into()))
        );
        assert!(reference.bytes().is_none());
        // The first right one becomes the reference ...
        assert_eq!(
            reference.reply_of(b"right", &expected, decode).unwrap(),
            Reply::Decoded(expected.clone())
        );
        assert_eq!(reference.bytes(), Some(&b"right"[..]));
        assert_eq!(decoded.get(), 2);
        // ... and the same bytes are not decoded again.
        for _ in 0..3 {
            assert_eq!(
                reference.reply_of(b"right", &expected, decode).unwrap(),
                Reply::AsReference
            );
        }
        assert_eq!(decoded.get(), 2);
        // Other bytes are decoded in full, even when a reference exists.
        assert_eq!(
            reference.reply_of(b"wrong!", &expected, decode).unwrap(),
            Reply::Decoded(Value::Str("wrong!".into()))
        );
        assert!(reference.reply_of(&[0xff], &expected, decode).is_err());
        assert_eq!(decoded.get(), 4);
        // The reference's bytes, when another value is expected, are
        // decoded too: the reference verifies only its own expected value.
        let other = Value::Str("other".into());
        assert_eq!(
            reference.reply_of(b"right", &other, decode).unwrap(),
            Reply::Decoded(expected.clone())
        );
        assert_eq!(decoded.get(), 5);
        assert_eq!(reference.bytes(), Some(&b"right"[..]));
    }

    #[test]
    fn a_reply_is_verified_against_the_calls_expected_value() {
        let call = rpclab_model::contract::Operation::Hello.call();
        assert!(Reply::AsReference.verify(&call).is_ok());
        assert_eq!(Reply::AsReference.into_value(&call.expected), call.expected);
        assert!(Reply::Decoded(call.expected.clone()).verify(&call).is_ok());
        assert!(matches!(
            Reply::Decoded(Value::Str("no".into())).verify(&call),
            Err(CallError::WrongResponse(_))
        ));
    }
}
