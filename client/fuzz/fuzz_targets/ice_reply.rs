//! Arbitrary bytes through every Ice decoding entry point of the load
//! client (message framing, replies of each contract operation, requests,
//! the locator's proxies): must never panic, hang or allocate without
//! bound. The body is shared with the proptest `arbitrary_bytes_never_panic`
//! (client/tests/integration/protocols_ice.rs). The protocol layer alone is also
//! fuzzed by ice-protocol's own `decode` target (crates/ice-protocol/fuzz).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpclab_protocols::protocols::ice::codec::exercise_decoders;

fuzz_target!(|data: &[u8]| {
    exercise_decoders(data);
});
