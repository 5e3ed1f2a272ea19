//! Properties: every value the writer can write reads back unchanged, with
//! nothing left over, and the reader never panics on arbitrary bytes.

use crate::common;

use common::{write_order_object, BuilderOrder, Order};
use dubbo_serialization::{Reader, Value, Writer};
use proptest::prelude::*;

fn order() -> impl Strategy<Value = Order> {
    java_interop::arbitrary_order(".{0,40}", ".{0,40}", "[ -~]{0,20}")
}

proptest! {
    #[test]
    fn longs_round_trip(v in any::<i64>()) {
        let mut w = Writer::new();
        w.write_long(v);
        let bytes = w.into_inner();
        let mut r = Reader::new(&bytes);
        prop_assert_eq!(r.read_long().unwrap(), v);
        prop_assert!(r.is_at_end());
    }

    #[test]
    fn ints_round_trip_and_are_at_most_five_bytes(v in any::<i32>()) {
        let mut w = Writer::new();
        w.write_int(v);
        let bytes = w.into_inner();
        prop_assert!(bytes.len() <= 5);
        prop_assert_eq!(Reader::new(&bytes).read_int().unwrap(), v);
    }

    #[test]
    fn uints_round_trip(v in any::<u32>()) {
        let mut w = Writer::new();
        w.write_uint(v);
        let bytes = w.into_inner();
        prop_assert_eq!(Reader::new(&bytes).read_uint().unwrap(), v);
    }

    #[test]
    fn strings_round_trip(s in proptest::option::of(".{0,200}")) {
        let mut w = Writer::new();
        w.write_utf(s.as_deref());
        w.write_string_object(s.as_deref());
        let bytes = w.into_inner();
        let mut r = Reader::new(&bytes);
        prop_assert_eq!(r.read_utf().unwrap(), s.clone());
        let want = s.map_or(Value::Null, Value::String);
        prop_assert_eq!(r.read_object().unwrap(), want);
        prop_assert!(r.is_at_end());
    }

    #[test]
    fn order_lists_round_trip_with_references(
        orders in proptest::collection::vec(order(), 0..8),
        repeats in proptest::collection::vec(any::<prop::sample::Index>(), 0..4),
    ) {
        let mut list = orders.clone();
        if !orders.is_empty() {
            for ix in &repeats {
                list.push(orders[ix.index(orders.len())].clone());
            }
        }
        let mut w = Writer::new();
        let mut seen = Vec::new();
        w.begin_array_list(list.len() as u32);
        for o in &list {
            write_order_object(&mut w, o, &mut seen);
        }
        let bytes = w.into_inner();
        let mut r = Reader::new(&bytes);
        let Value::List(items) = r.read_object().unwrap() else { panic!("not a list") };
        prop_assert!(r.is_at_end());
        prop_assert_eq!(items.len(), list.len());
        for (item, want) in items.iter().zip(&list) {
            let got = Order::from_value(item).unwrap();
            prop_assert!(got.java_equals(want), "{:?} != {:?}", got, want);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let mut r = Reader::new(&bytes);
        while !r.is_at_end() {
            if r.read_object().is_err() {
                break;
            }
        }
        let mut r = Reader::new(&bytes);
        let _ = r.read_utf();
        let _ = r.read_long();
        let _ = r.read_uint();
    }
}
