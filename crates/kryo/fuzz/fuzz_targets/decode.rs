#![no_main]
//! Decoding arbitrary bytes in either dialect must return (Ok or Err),
//! never panic, hang or allocate without bound; whatever decodes as a
//! value must write and read back the same.
//!
//! The round trip is checked from the decoded value, not from the input
//! bytes (an input may use overlong varints, shared strings or Kryo's
//! other encodings of one value): `v = decode(x)` must encode unless it
//! holds what this crate reads but does not write (a back-reference, a
//! Throwable), and then `decode(encode(v))` is `v` again
//! ([`Value::identical`]), from all of the bytes written.

use kryo::{Decoder, Dialect, Encoder, FieldType, Schema, Schemas, Value};
use libfuzzer_sys::fuzz_target;

/// Whether `v` holds a value the encoder refuses by design.
fn unwritable(v: &Value) -> bool {
    match v {
        Value::Reference(_) | Value::Exception(_) => true,
        Value::List(items) => items.iter().any(unwritable),
        Value::Map(entries) => entries.iter().any(|(k, v)| unwritable(k) || unwritable(v)),
        Value::Object(o) => o.fields.iter().any(|(_, v)| unwritable(v)),
        _ => false,
    }
}

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
            match e.write_value(&v, &schemas) {
                Ok(()) => {
                    let bytes = e.finish();
                    let mut back = Decoder::new(&bytes, d);
                    let again = back.read_value(&schemas).unwrap_or_else(|e| {
                        panic!("{v:?} was written as {bytes:02x?}, which does not read: {e}")
                    });
                    assert!(v.identical(&again), "{v:?} was read back as {again:?}");
                    assert!(back.is_at_end(), "{v:?}: bytes left after reading it back");
                }
                Err(e) => assert!(unwritable(&v), "{v:?} was read but does not write: {e}"),
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
