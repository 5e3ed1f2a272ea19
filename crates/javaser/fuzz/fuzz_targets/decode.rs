#![no_main]
//! Decoding arbitrary bytes must return (Ok or Err), never panic, hang or
//! allocate without bound; whatever decodes must re-encode.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut d) = javaser::Decoder::new(data) {
        if let Ok(items) = d.read_all() {
            let mut e = javaser::Encoder::new();
            for c in &items {
                match c {
                    javaser::Content::BlockData(b) => e.write_block_data(b),
                    javaser::Content::Value(v) => {
                        let _ = e.write_value(v);
                    }
                }
            }
            let _ = e.finish();
        }
    }
    if let Ok(mut d) = javaser::Decoder::new(data) {
        let _ = d.read_int();
        let _ = d.read_utf();
        let _ = d.read_object();
    }
});
