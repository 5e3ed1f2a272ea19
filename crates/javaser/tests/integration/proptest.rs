//! Property tests: decoding arbitrary (or mutated valid) bytes never panics,
//! and what the encoder writes decodes back.

use javaser::{Content, Decoder, Encoder, Value};
use proptest::prelude::*;

fn decode_all(bytes: &[u8]) {
    if let Ok(mut d) = Decoder::new(bytes) {
        let _ = d.read_all();
    }
    if let Ok(mut d) = Decoder::new(bytes) {
        let _ = d.read_int();
        let _ = d.read_utf();
        let _ = d.read_object();
    }
}

fn seed() -> Vec<u8> {
    let mut e = Encoder::new();
    e.write_int(5);
    e.write_array_list(2, |e| {
        e.write_integer_object(1)?;
        e.write_string("x");
        Ok(())
    })
    .unwrap();
    e.write_hash_map(1, |e| {
        e.write_string("k");
        e.write_long_object(-1)
    })
    .unwrap();
    e.write_int_array(&[1, 2, 3]).unwrap();
    e.write_string_array(&[Some("a"), None]).unwrap();
    e.finish()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..256)) {
        let mut b = vec![0xac, 0xed, 0x00, 0x05];
        b.extend_from_slice(&tail);
        decode_all(&b);
        decode_all(&tail);
    }

    #[test]
    fn mutated_streams_never_panic(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        cut in any::<usize>(),
    ) {
        let mut b = seed();
        for (i, v) in edits {
            let n = b.len();
            b[4 + i % (n - 4)] = v;
        }
        let cut = cut % (b.len() + 1);
        decode_all(&b[..cut]);
        decode_all(&b);
    }

    #[test]
    fn strings_round_trip(s in any::<String>(), ints in proptest::collection::vec(any::<i32>(), 0..400)) {
        let mut e = Encoder::new();
        for &i in &ints {
            e.write_int(i);
        }
        e.write_utf(&s).unwrap();
        e.write_string(&s);
        let b = e.finish();
        let mut d = Decoder::new(&b).unwrap();
        for &i in &ints {
            prop_assert_eq!(d.read_int().unwrap(), i);
        }
        prop_assert_eq!(d.read_utf().unwrap(), s.clone());
        prop_assert_eq!(d.read_object().unwrap(), Value::String(s));
        prop_assert!(d.is_at_end());
    }
}

#[test]
fn seed_decodes() {
    let c = javaser::from_bytes(&seed()).unwrap();
    assert_eq!(c.len(), 5);
    assert_eq!(c[0], Content::BlockData(vec![0, 0, 0, 5]));
}
