//! Arbitrary bytes as a dubbo2 response frame, decoded as every method's
//! reply in every serialization the client speaks: must never panic, hang
//! or allocate without bound (`codec::MAX_BODY` bounds a frame, and each
//! serialization's decoder checks lengths against the bytes it has).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpclab_protocols::protocols::dubbo::codec::{self, Header, Method, HEADER_LEN};
use rpclab_protocols::protocols::dubbo::format::Format;
use std::collections::BTreeMap;

const METHODS: [Method; Method::COUNT] = Method::ALL;

fuzz_target!(|data: &[u8]| {
    // kryo's two lines are selected by an option; the others ignore it.
    let dialects: Vec<BTreeMap<String, String>> = ["4", "5"]
        .iter()
        .map(|v| BTreeMap::from([("kryo".to_string(), v.to_string())]))
        .collect();
    // The header as sent, if it is one ...
    let _ = codec::frame(data);
    // ... and the bytes after a 16-byte prefix as a body in each
    // serialization, with the status the prefix carries where a real
    // header does (byte 3, after the magic 0xdabb and the flag), so a
    // golden error frame takes the error path. The header's own
    // serialization id is set to match, so the body is always decoded.
    let body = data.get(HEADER_LEN..).unwrap_or_default();
    let status = data.get(3).copied().unwrap_or(codec::OK);
    for (name, options) in Format::names()
        .into_iter()
        .flat_map(|n| dialects.iter().map(move |o| (n, o)))
    {
        let Some(Ok(format)) = Format::new(name, options) else {
            continue;
        };
        let header = Header {
            flag: format.id(),
            status,
            id: 1,
            len: body.len(),
        };
        for method in METHODS {
            let _ = format.decode_response(&header, body, method);
        }
    }
});
