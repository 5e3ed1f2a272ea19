//! Property tests: every value the model can hold survives a write and a
//! read in both dialects; strings and varints round-trip at the byte
//! level; arbitrary and mutated bytes never panic the reader.

use crate::common;

use common::{dialects, order_value, schemas};
use kryo::{Decoder, Dialect, Encoder, Value};
use proptest::prelude::*;

fn dialect() -> impl Strategy<Value = Dialect> {
    prop_oneof![Just(Dialect::DUBBO_2_6), Just(Dialect::DUBBO_3)]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i8>().prop_map(Value::Byte),
        any::<u16>().prop_map(Value::Char),
        any::<i16>().prop_map(Value::Short),
        any::<i32>().prop_map(Value::Int),
        any::<i64>().prop_map(Value::Long),
        any::<f32>().prop_map(Value::Float),
        any::<f64>().prop_map(Value::Double),
        ".{0,80}".prop_map(Value::String),
        java_interop::arbitrary_order(".{0,20}", ".{0,40}", "[ -~]{0,70}")
            .prop_map(|order| order_value(&order)),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 40, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::List),
            proptest::collection::vec((inner.clone(), inner), 0..6).prop_map(Value::Map),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn values_round_trip(v in value(), d in dialect(), share in any::<bool>()) {
        let s = schemas();
        let mut e = Encoder::new(d).share_strings(share);
        e.write_value(&v, &s).unwrap();
        e.write_value(&v, &s).unwrap(); // a second graph: tables were reset
        let bytes = e.finish();
        let mut r = Decoder::new(&bytes, d);
        for _ in 0..2 {
            let back = r.read_value(&s).unwrap();
            prop_assert!(back.identical(&v), "{:?} != {:?}", back, v);
        }
        prop_assert!(r.is_at_end());
    }

    #[test]
    fn strings_round_trip(s in proptest::option::of(".{0,300}"), d in dialect()) {
        let mut e = Encoder::new(d);
        e.write_string(s.as_deref());
        let bytes = e.finish();
        let mut r = Decoder::new(&bytes, d);
        prop_assert_eq!(r.read_string().unwrap(), s);
        prop_assert!(r.is_at_end());
    }

    #[test]
    fn varints_round_trip(i in any::<i32>(), l in any::<i64>(), p in any::<bool>(), d in dialect()) {
        let mut e = Encoder::new(d);
        e.write_var_int(i, p);
        e.write_var_long(l, p);
        e.write_int(i);
        e.write_long(l);
        let bytes = e.finish();
        let mut r = Decoder::new(&bytes, d);
        prop_assert_eq!(r.read_var_int(p).unwrap(), i);
        prop_assert_eq!(r.read_var_long(p).unwrap(), l);
        prop_assert_eq!(r.read_int().unwrap(), i);
        prop_assert_eq!(r.read_long().unwrap(), l);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256), d in dialect()) {
        let s = schemas();
        let _ = Decoder::new(&bytes, d).read_value(&s);
        let _ = Decoder::new(&bytes, d).read_exception();
        let _ = Decoder::new(&bytes, d).read_string();
    }

    #[test]
    fn mutated_values_never_panic(v in value(), d in dialect(), flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4)) {
        let s = schemas();
        let mut e = Encoder::new(d);
        e.write_value(&v, &s).unwrap();
        let mut bytes = e.finish();
        for (at, b) in flips {
            let n = bytes.len();
            bytes[at % n] ^= b;
        }
        let _ = Decoder::new(&bytes, d).read_value(&s);
        // Truncations are errors, never panics.
        for cut in 0..bytes.len() {
            let _ = Decoder::new(&bytes[..cut], d).read_value(&s);
        }
    }
}

#[test]
fn hostile_lengths_are_refused_before_allocating() {
    for (_, d) in dialects() {
        // A 2^28-char string with 3 bytes of input.
        let mut r = Decoder::new(&[0xc1, 0xff, 0xff, 0xff, 0x7f], d);
        assert!(matches!(
            r.read_string(),
            Err(kryo::DecodeError::Length { .. })
        ));
        // An ArrayList claiming 2^30 elements.
        let mut e = Encoder::new(d);
        e.write_class(kryo::Class::Id(d.array_list));
        e.write_new_reference();
        e.collection_header(1 << 30, None);
        let bytes = e.finish();
        assert!(matches!(
            Decoder::new(&bytes, d).read_value(&schemas()),
            Err(kryo::DecodeError::Length { .. })
        ));
    }
}

#[test]
fn deep_nesting_is_refused() {
    let mut v = Value::Null;
    for _ in 0..200 {
        v = Value::List(vec![v]);
    }
    for (_, d) in dialects() {
        let mut e = Encoder::new(d);
        e.write_value(&v, &schemas()).unwrap();
        let bytes = e.finish();
        assert!(matches!(
            Decoder::new(&bytes, d).read_value(&schemas()),
            Err(kryo::DecodeError::TooDeep { .. })
        ));
    }
}
