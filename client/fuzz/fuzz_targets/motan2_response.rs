//! Arbitrary bytes as a motan2 response from a hostile provider: framing
//! (`codec::frame`, the lengths checked against `MAX_META`/`MAX_BODY`
//! before anything is allocated), the meta map, and the body as every
//! method's reply in both serializations the client speaks (hessian2 and
//! simple). Any outcome is fine but a panic, an abort or an allocation
//! beyond the input's size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpclab_protocols::protocols::motan::codec::{self, Method, Serialization};
use rpclab_protocols::protocols::motan::simple::SimpleReader;

fuzz_target!(|data: &[u8]| {
    for serialization in [Serialization::Hessian2, Serialization::Simple] {
        for method in Method::ALL {
            // As a whole frame, the way the connection's reader and the
            // caller see it ...
            let _ = codec::decode_response_frame(data, method, serialization);
        }
    }
    let _ = codec::frame_len_hint(data);
    let _ = codec::parse_meta(data);
    // ... and the bytes as a simple-serialization stream on their own.
    let mut reader = SimpleReader::new(data);
    while !reader.is_empty() && reader.read_value().is_ok() {}
});
