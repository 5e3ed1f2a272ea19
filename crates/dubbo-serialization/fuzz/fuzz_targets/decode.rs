#![no_main]
//! Decoding arbitrary bytes must return (Ok or Err), never panic, hang or
//! allocate without bound (every length is checked against the input);
//! strings that decode must re-encode and decode to the same string.

use dubbo_serialization::{Reader, Writer};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // a Dubbo body: objects one after another
    let mut r = Reader::new(data);
    while !r.is_at_end() {
        if r.read_object().is_err() {
            break;
        }
    }
    // the primitive forms
    let mut r = Reader::new(data);
    let _ = r.read_byte();
    let _ = r.read_long();
    let _ = r.read_uint();
    let mut r = Reader::new(data);
    if let Ok(s) = r.read_utf() {
        let mut w = Writer::new();
        w.write_utf(s.as_deref());
        let bytes = w.into_inner();
        assert_eq!(Reader::new(&bytes).read_utf().unwrap(), s);
    }
});
