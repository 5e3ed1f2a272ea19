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
//! the bytes), so a reply whose bytes equal the reference's is handed on as
//! a clone of the reference's decoded value; any other reply is decoded in
//! full. The runner still compares every value with the expected one, for
//! every protocol, so a protocol cannot turn a wrong reply into a success
//! through its reference: only a reply that decoded to the expected value
//! becomes one, and a reply that differs from it in any byte is decoded.

use crate::protocol::CallError;
use rpclab_model::contract::Value;
use std::sync::OnceLock;

/// The reference reply of one prepared call (see the module documentation).
#[derive(Debug, Default)]
pub struct ReferenceReply {
    known: OnceLock<(Box<[u8]>, Value)>,
}

impl ReferenceReply {
    /// The reply in `bytes` as a contract value: the reference's value if
    /// the bytes are the reference's, else `decode(bytes)`; the first
    /// decoded reply equal to `expected` becomes the reference.
    pub fn value_of(
        &self,
        bytes: &[u8],
        expected: &Value,
        decode: impl FnOnce(&[u8]) -> Result<Value, CallError>,
    ) -> Result<Value, CallError> {
        if let Some((reference, value)) = self.known.get() {
            if **reference == *bytes {
                return Ok(value.clone());
            }
        }
        let value = decode(bytes)?;
        if self.known.get().is_none() && value == *expected {
            let _ = self.known.set((bytes.into(), value.clone()));
        }
        Ok(value)
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
            reference.value_of(b"wrong", &expected, decode).unwrap(),
            Value::Str("wrong".into())
        );
        assert!(reference.bytes().is_none());
        // The first right one becomes the reference ...
        assert_eq!(
            reference.value_of(b"right", &expected, decode).unwrap(),
            expected
        );
        assert_eq!(reference.bytes(), Some(&b"right"[..]));
        assert_eq!(decoded.get(), 2);
        // ... and the same bytes are not decoded again.
        for _ in 0..3 {
            assert_eq!(
                reference.value_of(b"right", &expected, decode).unwrap(),
                expected
            );
        }
        assert_eq!(decoded.get(), 2);
        // Other bytes are decoded in full, even when a reference exists.
        assert_eq!(
            reference.value_of(b"wrong!", &expected, decode).unwrap(),
            Value::Str("wrong!".into())
        );
        assert!(reference.value_of(&[0xff], &expected, decode).is_err());
        assert_eq!(decoded.get(), 4);
        assert_eq!(reference.bytes(), Some(&b"right"[..]));
    }
}
