#![no_main]
//! Decoding arbitrary bytes must return (Ok or Err), never panic, hang or
//! allocate without bound; whatever decodes must re-encode and decode to
//! the same bytes again.

use fastjson2_jsonb::dubbo::ObjectInput;
use fastjson2_jsonb::{from_bytes, to_bytes, Reader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // one JSONB document
    if let Ok(v) = from_bytes(data) {
        let bytes = to_bytes(&v).expect("a decoded value re-encodes");
        let again = from_bytes(&bytes).expect("re-encoded bytes decode");
        assert_eq!(to_bytes(&again).unwrap(), bytes);
    }
    // the field-by-field API, as the Dubbo client reads an Order
    let mut r = Reader::new(data);
    let _ = r.read_type_name();
    if r.start_object().is_ok() {
        while let Ok(Some(_)) = r.next_field() {
            if r.read_i64().is_err() && r.read_str().is_err() && r.skip_value().is_err() {
                break;
            }
        }
    }
    // a Dubbo body: length-prefixed documents
    let mut input = ObjectInput::new(data);
    let _ = input.read_byte();
    while !input.is_at_end() {
        if input.read_value().is_err() {
            break;
        }
    }
});
