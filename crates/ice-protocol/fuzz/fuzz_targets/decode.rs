//! Arbitrary bytes through every decoding entry point of ice-protocol
//! (message framing, requests, replies and their statuses, the locator's
//! proxies): must never panic, hang or allocate without bound. The
//! contract's values on top of them are fuzzed by the client's `ice_reply`
//! target (client/fuzz).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ice_protocol::exercise_decoders(data);
});
