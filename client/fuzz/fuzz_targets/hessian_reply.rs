//! A Hessian-over-HTTP reply body from a hostile server (`H 2 0 R value` or
//! `H 2 0 F fault`), decoded as each contract method's reply. Any outcome
//! is fine but a panic, an abort or an allocation beyond the input's size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpclab_protocols::protocols::hessian::codec;

fuzz_target!(|data: &[u8]| {
    codec::exercise(data);
});
