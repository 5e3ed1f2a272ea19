//! A bolt response frame from a hostile server: framing (`codec::frame`),
//! then the SofaResponse (or error content) as each contract method's
//! reply. Any outcome is fine but a panic, an abort or an allocation
//! beyond the input's size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpclab_protocols::protocols::bolt::{codec, hessian};
use rpclab_protocols::java_contract::Method;

const METHODS: [Method; Method::COUNT] = Method::ALL;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some((header, total))) = codec::frame(data) {
        let frame = &data[..total];
        for method in METHODS {
            let _ = codec::decode_response(&header, frame, method);
        }
        let _ = codec::decode_header_map(codec::parts(&header, frame).header);
    }
    // The draft Hessian reader on its own, from the first byte.
    let _ = hessian::Reader::new(data).value();
});
