//! Property tests: what the writer writes reads back to the same value,
//! and reading arbitrary or mutated bytes never panics.

use fastjson2_jsonb::dubbo::{ObjectInput, ObjectOutput};
use fastjson2_jsonb::{from_bytes, to_bytes, Reader, Value};
use proptest::prelude::*;

/// Not NaN (never equal to itself) and not -0.0 (written as 0.0, as
/// fastjson2 does).
fn plain(d: f64) -> bool {
    !(d.is_nan() || (d == 0.0 && d.is_sign_negative()))
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i8>().prop_map(Value::Byte),
        any::<i16>().prop_map(Value::Short),
        any::<i32>().prop_map(Value::Int),
        any::<i64>().prop_map(Value::Long),
        any::<f64>()
            .prop_filter("not NaN or -0", |d| plain(*d))
            .prop_map(Value::Double),
        any::<f32>()
            .prop_filter("not NaN or -0", |d| plain(f64::from(*d)))
            .prop_map(Value::Float),
        any::<u16>().prop_map(Value::Char),
        any::<String>().prop_map(Value::String),
        "[a-z]{0,60}".prop_map(Value::String),
        "[\\x00-\\xff]{0,60}".prop_map(Value::String),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(Value::Binary),
        "\\$(\\[[0-9]\\])?".prop_map(Value::Reference),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 64, 20, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..20).prop_map(Value::Array),
            proptest::collection::vec(("[a-zA-Z]{0,12}", inner.clone()), 0..6)
                .prop_map(Value::Object),
            proptest::collection::vec(("[a-zA-Z]{1,12}", inner.clone()), 1..6)
                .prop_map(Value::Bean),
            ("[a-z.]{1,30}", inner).prop_map(|(t, v)| Value::Typed(t, Box::new(v))),
        ]
    })
}

/// Reads `bytes` every way the crate offers; only errors may come out.
fn read_all(bytes: &[u8]) {
    let _ = from_bytes(bytes);
    let mut r = Reader::new(bytes);
    let _ = r.read_type_name();
    let _ = r.start_object();
    while let Ok(Some(_)) = r.next_field() {
        let _ = r.read_i64();
        let _ = r.read_str();
        let _ = r.skip_value();
    }
    let mut input = ObjectInput::new(bytes);
    while !input.is_at_end() {
        if input.read_value().is_err() {
            break;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn values_round_trip(v in value()) {
        let bytes = to_bytes(&v).unwrap();
        let back = from_bytes(&bytes).unwrap();
        // an empty bean reads back as an empty map: same bytes either way
        prop_assert_eq!(to_bytes(&back).unwrap(), bytes);
        if !format!("{v:?}").contains("Bean([])") {
            prop_assert_eq!(back, v);
        }
    }

    #[test]
    fn strings_round_trip_in_every_encoding(s in any::<String>(), t in "[\\x00-\\xff]{0,3000}") {
        for s in [&s, &t] {
            let mut out = ObjectOutput::new();
            out.write_utf(s).unwrap();
            let bytes = out.into_inner();
            let mut input = ObjectInput::new(&bytes);
            prop_assert_eq!(input.read_utf().unwrap(), s.as_str());
            prop_assert!(input.is_at_end());
        }
    }

    #[test]
    fn integers_read_as_any_wider_type(i in any::<i32>(), l in any::<i64>(), b in any::<i8>()) {
        let mut w = fastjson2_jsonb::Writer::new();
        w.write_i32(i);
        w.write_i64(l);
        w.write_i8(b);
        w.write_i32(i);
        let bytes = w.into_inner();
        let mut r = Reader::new(&bytes);
        prop_assert_eq!(r.read_i32().unwrap(), i);
        prop_assert_eq!(r.read_i64().unwrap(), l);
        prop_assert_eq!(r.read_i8().unwrap(), b);
        prop_assert_eq!(r.read_f64().unwrap(), i as f64);
        r.finish().unwrap();
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        read_all(&bytes);
    }

    #[test]
    fn mutated_documents_never_panic(
        v in value(),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        cut in any::<usize>(),
    ) {
        let mut out = ObjectOutput::new();
        out.write_value(&v).unwrap();
        out.write_utf("tail").unwrap();
        let mut b = out.into_inner();
        let n = b.len();
        for (i, x) in edits {
            b[i % n] = x;
        }
        read_all(&b[..cut % (n + 1)]);
        read_all(&b);
        read_all(&b[4.min(b.len())..]);
    }
}

#[test]
fn huge_declared_lengths_are_errors_not_allocations() {
    // an array of 2^31-1 items, a string of 2^31-1 bytes, a 2 GiB frame
    for bytes in [
        vec![0xa4, 0x48, 0x7f, 0xff, 0xff, 0xff, 0x00],
        vec![0x79, 0x48, 0x7f, 0xff, 0xff, 0xff, 0x41],
        vec![0x7a, 0x48, 0x7f, 0xff, 0xff, 0xff, 0x41],
        vec![0x91, 0x48, 0x7f, 0xff, 0xff, 0xff, 0x41],
    ] {
        assert!(from_bytes(&bytes).is_err());
    }
    let mut input = ObjectInput::new(&[0x7f, 0xff, 0xff, 0xff, 0x49]);
    assert!(input.read_value().is_err());
}

#[test]
fn deep_nesting_is_an_error() {
    let bytes = vec![0x95; 100_000];
    let e = from_bytes(&bytes).unwrap_err();
    assert!(e.to_string().contains("nesting deeper than"), "{e}");
}

#[test]
fn unsupported_types_say_what_they_are() {
    let e = from_bytes(&[0xa9, 0, 0, 0, 0]).unwrap_err();
    assert!(e.to_string().contains("java.time"), "{e}");
    let e = from_bytes(&[0x7e, 0x01, 0x41]).unwrap_err();
    assert!(e.to_string().contains("GB18030"), "{e}");
}
