#![no_main]
//! Decoding arbitrary bytes must return (Ok or Err), never panic, hang or
//! allocate without bound; whatever decodes must re-encode, and the
//! re-encoded stream is a fixed point of decode → encode.
//!
//! Byte equality with the input is not an invariant: the encoder writes a
//! normal form (one descriptor per distinct descriptor and references to it, block
//! data in the chunks it was read in, canonical modified UTF-8, no
//! `TC_RESET`), so an arbitrary stream and its re-encoding differ. Nor is
//! `decode(encode(v)) == v` for any decoded `v`: a stream that defines a
//! class twice, resets, or refers to handles across a reset has its
//! handles renumbered by the normal form, and its literal
//! `TC_REFERENCE`s then point elsewhere (or nowhere). What holds for every
//! input is that the normal form is stable: once `once = encode(decode(x))`
//! decodes, it decodes to contents that encode to `once` again, byte for
//! byte (bytes, not values, because `NaN != NaN`).

use javaser::{Content, EncodeError, Encoder};
use libfuzzer_sys::fuzz_target;

fn encode(items: &[Content]) -> Result<Vec<u8>, EncodeError> {
    let mut e = Encoder::new();
    for c in items {
        match c {
            Content::BlockData(b) => e.write_block_data(b),
            Content::Value(v) => e.write_value(v)?,
        }
    }
    Ok(e.finish())
}

fuzz_target!(|data: &[u8]| {
    if let Ok(items) = javaser::from_bytes(data) {
        match encode(&items) {
            Ok(once) => {
                if let Ok(again) = javaser::from_bytes(&once) {
                    let twice = encode(&again).expect("a decoded normal form re-encodes");
                    assert!(twice == once, "the normal form is not stable");
                }
            }
            // A raw NUL or an overlong sequence is one or two bytes in the
            // input and two in the canonical form: a string near the
            // 65535-byte limit of writeUTF can grow past it. Nothing else
            // that decoded may fail to encode.
            Err(EncodeError::StringTooLong { .. }) => {}
            Err(e) => panic!("decoded contents do not re-encode: {e}"),
        }
    }
    if let Ok(mut d) = javaser::Decoder::new(data) {
        let _ = d.read_int();
        let _ = d.read_utf();
        let _ = d.read_object();
    }
});
