//! Arbitrary bytes through every decoding entry point of hessian2: must never
//! panic, hang or allocate without bound. The body is shared with the
//! proptest `decoder_never_panics_on_arbitrary_bytes` (tests/integration/proptest.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

include!("../../tests/common/exercise.rs");

fuzz_target!(|data: &[u8]| {
    exercise_decoder(data);
});
