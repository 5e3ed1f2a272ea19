#![no_main]
//! Decoding arbitrary bytes in either dialect must return (Ok or Err),
//! never panic, hang or allocate without bound; whatever decodes as a
//! value must write and read back the same.

use kryo::{Decoder, Dialect, Encoder, FieldType, Schema, Schemas};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let schemas = Schemas::new().with(Schema::new(
        "rpclab.contract.Order",
        [
            ("orderId", FieldType::Long),
            ("phone", FieldType::String),
            ("name", FieldType::String),
            ("orderNum", FieldType::String),
            ("orderDate", FieldType::Int),
            ("ticketType", FieldType::Int),
            ("amount", FieldType::Double),
            ("orderStatus", FieldType::Int),
        ],
    ));
    for d in [Dialect::DUBBO_2_6, Dialect::DUBBO_3] {
        let mut r = Decoder::new(data, d);
        while let Ok(v) = r.read_value(&schemas) {
            let mut e = Encoder::new(d);
            if e.write_value(&v, &schemas).is_ok() {
                let bytes = e.finish();
                let _ = Decoder::new(&bytes, d).read_value(&schemas);
            }
            if r.is_at_end() {
                break;
            }
        }
        let _ = Decoder::new(data, d).read_exception();
        let mut r = Decoder::new(data, d);
        let _ = r.read_string();
        let _ = r.read_bytes();
        let _ = r.read_var_long(false);
    }
});
