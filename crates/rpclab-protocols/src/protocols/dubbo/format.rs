//! [`Format`]: the Dubbo serialization chosen at run time (the
//! `serialization` option), with the codec's body functions dispatched
//! over it by one `match` per body, so each codec call stays monomorphic
//! and the hot path has no dynamic dispatch. It sits above both the codec
//! and the serializations, which know nothing of each other's choice.
//!
//! Adding a serialization: one `Variant => path::Type` line in the
//! `formats!` invocation below (and its module under `serialization`).

use super::codec::{self, Header};
use super::serialization::{dubbo, fastjson, fastjson2, hessian2, java, kryo, Serialization};
use crate::java_contract::Method;
use crate::protocol::CallError;
use rpclab_model::contract::Value;
use std::collections::BTreeMap;

/// Declares [`Format`], the serializations the client speaks, from
/// `Variant => path::Type` lines.
macro_rules! formats {
    ($($variant:ident => $ty:ty),+ $(,)?) => {
        /// A serialization chosen at run time.
        #[derive(Debug)]
        pub enum Format {
            $($variant($ty),)+
        }

        impl Format {
            /// Every `serialization` option value the client speaks.
            pub fn names() -> Vec<&'static str> {
                let mut names = Vec::new();
                $(names.extend_from_slice(<$ty as Serialization>::NAMES);)+
                names
            }

            /// Options of the serializations, for the protocol's check.
            pub fn options() -> Vec<&'static str> {
                let mut options = Vec::new();
                $(options.extend_from_slice(<$ty as Serialization>::OPTIONS);)+
                options
            }

            /// The serialization called `name`, or `None` if the client
            /// does not speak it.
            pub fn new(
                name: &str,
                options: &BTreeMap<String, String>,
            ) -> Option<Result<Format, CallError>> {
                $(
                    if <$ty as Serialization>::NAMES.contains(&name) {
                        return Some(<$ty as Serialization>::new(name, options).map(Format::$variant));
                    }
                )+
                None
            }

            /// Dubbo's id of the serialization.
            pub fn id(&self) -> u8 {
                match self {
                    $(Format::$variant(s) => s.id(),)+
                }
            }

            /// See [`codec::encode_request`](codec::encode_request).
            pub fn encode_request(
                &self,
                out: &mut Vec<u8>,
                id: u64,
                method: Method,
                argument: &Value,
            ) -> Result<(), CallError> {
                match self {
                    $(Format::$variant(s) => codec::encode_request(s, out, id, method, argument),)+
                }
            }

            /// See [`codec::decode_response`](codec::decode_response).
            pub fn decode_response(
                &self,
                header: &Header,
                body: &[u8],
                method: Method,
            ) -> Result<Value, CallError> {
                match self {
                    $(Format::$variant(s) => codec::decode_response(s, header, body, method),)+
                }
            }

            /// See [`codec::is_expected`](codec::is_expected).
            pub fn is_expected(
                &self,
                header: &Header,
                body: &[u8],
                method: Method,
                expected: &Value,
            ) -> bool {
                match self {
                    $(Format::$variant(s) => codec::is_expected(s, header, body, method, expected),)+
                }
            }

            /// See [`codec::heartbeat_request`](codec::heartbeat_request).
            pub fn heartbeat_request(&self, id: u64) -> Result<Vec<u8>, CallError> {
                match self {
                    $(Format::$variant(s) => codec::heartbeat_request(s, id),)+
                }
            }

            /// See [`codec::heartbeat_response`](codec::heartbeat_response).
            pub fn heartbeat_response(&self, id: u64) -> Result<Vec<u8>, CallError> {
                match self {
                    $(Format::$variant(s) => codec::heartbeat_response(s, id),)+
                }
            }
        }
    };
}

formats! {
    Hessian2 => hessian2::Hessian2,
    Java => java::Java,
    Fastjson2 => fastjson2::Fastjson2,
    Fastjson => fastjson::Fastjson,
    Kryo => kryo::Kryo,
    Dubbo => dubbo::DubboSerialization,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::decoding;
    use proptest::prelude::*;

    /// Every serialization the client speaks, in each dialect its options
    /// select (kryo's Kryo 4 and Kryo 5 lines).
    fn every_format() -> Vec<Format> {
        let dialects: [&[(&str, &str)]; 3] = [&[], &[("kryo", "4")], &[("kryo", "5")]];
        let mut formats = Vec::new();
        for name in Format::names() {
            for dialect in dialects {
                let options = dialect
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                if let Some(Ok(format)) = Format::new(name, &options) {
                    formats.push(format);
                }
            }
        }
        assert!(formats.len() > Format::names().len(), "kryo's two lines");
        formats
    }

    proptest! {
        #![proptest_config(decoding::cases())]

        /// Decoding arbitrary bytes as a response body behind a valid
        /// header never panics, in any serialization.
        #[test]
        fn decoding_arbitrary_bytes_never_panics(
            bytes in decoding::arbitrary_bytes(),
            status in prop_oneof![Just(codec::OK), any::<u8>()],
        ) {
            for format in every_format() {
                let header = Header { flag: format.id(), status, id: 1, len: bytes.len() };
                for method in Method::ALL {
                    let _ = format.decode_response(&header, &bytes, method);
                }
            }
        }
    }
}
