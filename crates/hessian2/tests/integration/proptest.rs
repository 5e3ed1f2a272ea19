//! Property tests: arbitrary values survive an encode/decode round trip, and
//! no input makes the decoder panic.

include!("../common/exercise.rs");

use std::sync::Arc;

use hessian2::{ClassDef, DecodeOptions, Decoder, Encoder, List, Map, Object, RefMode, Value};
use proptest::prelude::*;

fn type_name() -> impl Strategy<Value = String> {
    "[a-zA-Z\\[][a-zA-Z0-9_.$]{0,20}"
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::Int),
        (-300_000i32..300_000).prop_map(Value::Int),
        any::<i64>().prop_map(Value::Long),
        (-300_000i64..300_000).prop_map(Value::Long),
        // -0.0 is written as 0.0 (as Java does), so it cannot come back.
        any::<f64>().prop_map(|d| Value::Double(if d == 0.0 { 0.0 } else { d })),
        (-40_000i32..40_000).prop_map(|m| Value::Double(f64::from(m) / 1000.0)),
        any::<i64>().prop_map(Value::Date),
        any::<i32>().prop_map(|m| Value::Date(i64::from(m) * 60_000)),
        any::<String>().prop_map(Value::String),
        proptest::collection::vec(any::<u8>(), 0..1100).prop_map(Value::Binary),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 96, 8, |inner| {
        prop_oneof![
            (
                proptest::option::of(type_name()),
                proptest::collection::vec(inner.clone(), 0..12)
            )
                .prop_map(|(ty, items)| Value::List(List { ty, items })),
            (
                proptest::option::of(type_name()),
                proptest::collection::vec((inner.clone(), inner.clone()), 0..6)
            )
                .prop_map(|(ty, entries)| Value::Map(Map { ty, entries })),
            (
                proptest::collection::btree_set("[a-z][a-zA-Z0-9]{0,8}", 0..6),
                proptest::collection::vec(inner, 6)
            )
                .prop_map(|(fields, values)| {
                    let fields: Vec<String> = fields.into_iter().collect();
                    // one class name per field list, as a Java stream requires
                    let name = format!("p.C_{}", fields.join("_"));
                    let values = values.into_iter().take(fields.len()).collect();
                    Value::Object(Object {
                        class: Arc::new(ClassDef { name, fields }),
                        values,
                    })
                }),
        ]
    })
}

fn encode_all(values: &[Value]) -> Vec<u8> {
    let mut enc = Encoder::new(Vec::new());
    for v in values {
        enc.write_value(v).unwrap();
    }
    enc.into_inner()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn values_round_trip(values in proptest::collection::vec(value(), 1..4)) {
        let bytes = encode_all(&values);
        for mode in [RefMode::Resolve, RefMode::Keep] {
            let mut dec = Decoder::with_options(&bytes, DecodeOptions::default().refs(mode));
            for v in &values {
                let back = dec.read_value().unwrap();
                prop_assert!(v.identical(&back), "{} != {}", v, back);
            }
            prop_assert!(dec.is_empty());
        }
        // skipping consumes exactly the same bytes
        let mut dec = Decoder::new(&bytes);
        for _ in &values {
            dec.skip_value().unwrap();
        }
        prop_assert!(dec.is_empty());
        // decoded values re-encode to the same bytes
        let mut dec = Decoder::new(&bytes);
        let back: Vec<Value> = values.iter().map(|_| dec.read_value().unwrap()).collect();
        prop_assert_eq!(encode_all(&back), bytes);
    }

    #[test]
    fn typed_scalars_round_trip(i in any::<i32>(), l in any::<i64>(), d in any::<f64>(), s in any::<String>(), b in any::<bool>()) {
        let mut enc = Encoder::new(Vec::new());
        enc.write_int(i);
        enc.write_long(l);
        enc.write_double(d);
        enc.write_string(&s);
        enc.write_bool(b);
        enc.write_date(l);
        enc.write_binary(s.as_bytes());
        let bytes = enc.into_inner();
        let mut dec = Decoder::new(&bytes);
        prop_assert_eq!(dec.read_i32().unwrap(), i);
        prop_assert_eq!(dec.read_i64().unwrap(), l);
        let back = dec.read_f64().unwrap();
        prop_assert!(back.to_bits() == d.to_bits() || (back == 0.0 && d == 0.0));
        prop_assert_eq!(dec.read_str().unwrap(), s.as_str());
        prop_assert_eq!(dec.read_bool().unwrap(), b);
        prop_assert_eq!(dec.read_date().unwrap(), l);
        prop_assert_eq!(dec.read_bytes().unwrap(), s.as_bytes());
        prop_assert!(dec.is_empty());
    }

    #[test]
    fn decoder_never_panics_on_arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        exercise_decoder(&data);
    }

    #[test]
    fn decoder_never_panics_on_damaged_encodings(
        v in value(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8),
    ) {
        let mut bytes = encode_all(&[v]);
        for (at, byte, op) in edits {
            if bytes.is_empty() {
                bytes.push(byte);
                continue;
            }
            let i = at.index(bytes.len());
            match op {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                _ => { bytes.remove(i); }
            }
        }
        exercise_decoder(&bytes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn long_strings_and_binaries_round_trip(
        unit in "[a-z\u{e9}\u{20ac}\u{1f600}]{1,3}",
        count in 10_000usize..25_000,
        blen in 8_000usize..40_000,
    ) {
        let s = unit.repeat(count);
        let b: Vec<u8> = (0..blen).map(|i| (i * 31) as u8).collect();
        let bytes = encode_all(&[Value::String(s.clone()), Value::Binary(b.clone())]);
        let mut dec = Decoder::new(&bytes);
        prop_assert_eq!(dec.read_string().unwrap(), s);
        prop_assert_eq!(dec.read_binary().unwrap(), b);
        prop_assert!(dec.is_empty());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// A string found where it lies is the string read, and is read to the
    /// same place: every ASCII string of one chunk written by the encoder
    /// is found, never a longer or another one, on arbitrary bytes too.
    #[test]
    fn written_strings_are_found_where_they_lie(
        s in "[ -~]{0,1100}",
        big in 0usize..3,
        other in "[ -~]{0,40}",
        bytes in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let s = if big == 0 { "y".repeat(0x8000 - 1 + s.len() % 3) } else { s };
        let mut encoded = Vec::new();
        let mut enc = Encoder::new(&mut encoded);
        enc.write_string(&s);
        enc.write_int(7);
        let mut found = Decoder::new(&encoded);
        prop_assert_eq!(found.read_written_str(&s), s.len() <= 0x8000);
        if s.len() <= 0x8000 {
            prop_assert_eq!(found.read_i32().unwrap(), 7);
        }
        let longer = format!("{s}x");
        prop_assert!(!Decoder::new(&encoded).read_written_str(&longer));
        // Wherever it says yes, reading says the same, to the same place.
        for (input, want) in [(&encoded[..], &other), (&bytes[..], &other), (&bytes[..], &String::new())] {
            let mut fast = Decoder::new(input);
            if fast.read_written_str(want) {
                let mut slow = Decoder::new(input);
                prop_assert_eq!(slow.read_str().unwrap(), want.as_str());
                prop_assert_eq!(fast.position(), slow.position());
            } else {
                prop_assert_eq!(fast.position(), 0);
            }
        }
    }
}

/// Not ASCII, longer than a chunk, or under a class definition: not found
/// in place (read instead).
#[test]
fn strings_not_found_in_place() {
    for s in ["\u{e9}", &"z".repeat(0x8001)] {
        let mut encoded = Vec::new();
        Encoder::new(&mut encoded).write_string(s);
        assert!(!Decoder::new(&encoded).read_written_str(s));
        assert_eq!(Decoder::new(&encoded).read_string().unwrap(), s);
    }
    // The long form of a short string is not how it is written.
    assert!(!Decoder::new(b"S\x00\x02aa").read_written_str("aa"));
    assert!(Decoder::new(b"\x02aa").read_written_str("aa"));
}
