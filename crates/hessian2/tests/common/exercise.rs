// Shared by the proptest "never panics" test (tests/integration/proptest.rs) and the
// cargo-fuzz target (fuzz/fuzz_targets/decode.rs), which `include!`s this
// file: everything a peer's bytes can reach in the decoder.

/// Feeds arbitrary bytes through every decoding entry point. Must never
/// panic, loop forever or allocate without bound; errors are expected.
pub fn exercise_decoder(data: &[u8]) {
    use hessian2::{DecodeOptions, Decoder, RefMode, Value};

    // dynamic values, both reference modes, until the input runs out
    for mode in [RefMode::Resolve, RefMode::Keep] {
        let mut dec = Decoder::with_options(data, DecodeOptions::default().refs(mode));
        while !dec.is_empty() {
            let before = dec.position();
            if dec.read_value().is_err() || dec.position() == before {
                break;
            }
        }
    }

    // skipping
    let mut dec = Decoder::new(data);
    while !dec.is_empty() {
        let before = dec.position();
        if dec.skip_value().is_err() || dec.position() == before {
            break;
        }
    }

    // typed reads, driven by what the next value looks like
    let mut dec = Decoder::with_options(data, DecodeOptions::default().max_depth(64));
    let mut steps = 0;
    while !dec.is_empty() && steps < 10_000 {
        steps += 1;
        let ok = match dec.peek_kind() {
            Err(_) => false,
            Ok(kind) => {
                use hessian2::ValueKind as K;
                match kind {
                    K::Null => dec.read_null().is_ok(),
                    K::Bool => dec.read_bool().is_ok(),
                    K::Int => dec.read_i32().is_ok(),
                    K::Long => dec.read_i64().is_ok(),
                    K::Double => dec.read_f64().is_ok(),
                    K::Date => dec.read_date().is_ok(),
                    K::String => dec.read_str().is_ok(),
                    K::Binary => dec.read_bytes().is_ok(),
                    K::List => dec.begin_list().is_ok(),
                    K::Map => dec.begin_map().is_ok(),
                    K::Object => dec.begin_object().is_ok(),
                    K::Ref => dec.read::<Value>().is_ok(),
                }
            }
        };
        if !ok {
            // maybe the end of a container: close it and carry on
            match dec.has_next() {
                Ok(false) => {
                    if dec.end().is_err() {
                        break;
                    }
                }
                _ => break,
            }
        }
    }

    // typed whole values
    let _ = hessian2::from_slice::<Vec<Option<String>>>(data);
    let _ = hessian2::from_slice::<std::collections::HashMap<String, Vec<i64>>>(data);
    let _ = hessian2::from_slice::<Vec<hessian2::bytes::Bytes>>(data);
}
