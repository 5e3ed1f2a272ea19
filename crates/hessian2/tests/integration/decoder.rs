//! Decoder behaviour beyond what Java's writer produces: every legal
//! encoding of each type, the typed API, references, and malformed input.

use hessian2::{
    from_slice, tag, DecodeError, DecodeOptions, Decoder, Encoder, List, Object, RefMode, Value,
    ValueKind,
};

fn value(bytes: &[u8]) -> Value {
    let mut dec = Decoder::new(bytes);
    let v = dec
        .read_value()
        .unwrap_or_else(|e| panic!("{bytes:02x?}: {e}"));
    assert!(dec.is_empty(), "{bytes:02x?}: bytes left");
    v
}

fn error(bytes: &[u8]) -> DecodeError {
    let mut dec = Decoder::new(bytes);
    match dec.read_value() {
        Ok(v) if dec.is_empty() => panic!("{bytes:02x?} decoded to {v}"),
        Ok(_) => DecodeError::TrailingBytes {
            offset: dec.position(),
        },
        Err(e) => e,
    }
}

/// Asserts that reading `$bytes` fails with an error that matches
/// `$pattern`, and shows the bytes and the error when it does not.
macro_rules! assert_error {
    ($bytes:expr, $pattern:pat) => {{
        let bytes: &[u8] = $bytes;
        let e = error(bytes);
        assert!(matches!(e, $pattern), "{bytes:02x?}: {e:?}");
    }};
}

#[test]
fn every_int_form() {
    assert_eq!(value(&[0x90]), Value::Int(0));
    assert_eq!(value(&[0x80]), Value::Int(-16));
    assert_eq!(value(&[0xbf]), Value::Int(47));
    assert_eq!(value(&[0xc0, 0x00]), Value::Int(-2048));
    assert_eq!(value(&[0xcf, 0xff]), Value::Int(2047));
    assert_eq!(value(&[0xd0, 0x00, 0x00]), Value::Int(-262144));
    assert_eq!(value(&[0xd7, 0xff, 0xff]), Value::Int(262143));
    // non-shortest forms are legal
    assert_eq!(value(&[b'I', 0, 0, 0, 1]), Value::Int(1));
    assert_eq!(value(&[0xc8, 0x01]), Value::Int(1));
    assert_eq!(value(&[b'I', 0x80, 0, 0, 0]), Value::Int(i32::MIN));
}

#[test]
fn every_long_form() {
    assert_eq!(value(&[0xe0]), Value::Long(0));
    assert_eq!(value(&[0xd8]), Value::Long(-8));
    assert_eq!(value(&[0xef]), Value::Long(15));
    assert_eq!(value(&[0xf0, 0x00]), Value::Long(-2048));
    assert_eq!(value(&[0xff, 0xff]), Value::Long(2047));
    assert_eq!(value(&[0x38, 0x00, 0x00]), Value::Long(-262144));
    assert_eq!(value(&[0x3f, 0xff, 0xff]), Value::Long(262143));
    assert_eq!(value(&[0x59, 0xff, 0xff, 0xff, 0xff]), Value::Long(-1));
    assert_eq!(
        value(&[b'L', 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
        Value::Long(i64::MAX)
    );
    assert_eq!(value(&[b'L', 0, 0, 0, 0, 0, 0, 0, 3]), Value::Long(3));
}

#[test]
fn every_double_form() {
    assert_eq!(value(&[0x5b]), Value::Double(0.0));
    assert_eq!(value(&[0x5c]), Value::Double(1.0));
    assert_eq!(value(&[0x5d, 0x80]), Value::Double(-128.0));
    assert_eq!(value(&[0x5e, 0x80, 0x00]), Value::Double(-32768.0));
    assert_eq!(
        value(&[0x5f, 0xff, 0xff, 0xff, 0xff]),
        Value::Double(-0.001)
    );
    assert_eq!(value(&[0x5f, 0x00, 0x00, 0x2f, 0xda]), Value::Double(12.25));
    let mut d = vec![b'D'];
    d.extend_from_slice(&1.5f64.to_bits().to_be_bytes());
    assert_eq!(value(&d), Value::Double(1.5));
}

#[test]
fn dates() {
    assert_eq!(value(&[0x4b, 0xff, 0xff, 0xff, 0xff]), Value::Date(-60_000));
    assert_eq!(value(&[0x4a, 0, 0, 0, 0, 0, 0, 0, 7]), Value::Date(7));
}

#[test]
fn strings_in_any_chunking() {
    // 'R' chunks of any size, final chunk in any form
    assert_eq!(value(b"R\x00\x02abS\x00\x01c"), Value::String("abc".into()));
    assert_eq!(
        value(b"R\x00\x02abR\x00\x00\x01c"),
        Value::String("abc".into())
    );
    assert_eq!(value(b"R\x00\x01a\x30\x02bc"), Value::String("abc".into()));
    assert_eq!(value(b"S\x00\x00"), Value::String(String::new()));
    // a surrogate pair split across chunks
    assert_eq!(
        value(&[b'R', 0, 1, 0xed, 0xa0, 0xbd, 0x01, 0xed, 0xb8, 0x80]),
        Value::String("😀".into())
    );
    // standard 4-byte UTF-8 counts two units
    let mut b = vec![0x02];
    b.extend_from_slice("😀".as_bytes());
    assert_eq!(value(&b), Value::String("😀".into()));
    // NUL as modified UTF-8
    assert_eq!(value(&[0x01, 0xc0, 0x80]), Value::String("\0".into()));
}

#[test]
fn binaries_in_any_chunking() {
    assert_eq!(
        value(b"A\x00\x02abB\x00\x01c"),
        Value::Binary(b"abc".to_vec())
    );
    assert_eq!(value(b"A\x00\x01a\x22bc"), Value::Binary(b"abc".to_vec()));
    assert_eq!(value(b"\x34\x03abc"), Value::Binary(b"abc".to_vec()));
    let mut dec = Decoder::new(b"\x23abc");
    assert!(matches!(
        dec.read_bytes().unwrap(),
        std::borrow::Cow::Borrowed(b"abc")
    ));
}

#[test]
fn every_list_form() {
    let ints = |ty: Option<&str>| {
        Value::List(List {
            ty: ty.map(Into::into),
            items: vec![Value::Int(1), Value::Int(2)],
        })
    };
    assert_eq!(value(b"\x7a\x91\x92"), ints(None));
    assert_eq!(value(b"\x58\x92\x91\x92"), ints(None));
    assert_eq!(value(b"\x57\x91\x92Z"), ints(None));
    assert_eq!(value(b"\x72\x04[int\x91\x92"), ints(Some("[int")));
    assert_eq!(value(b"V\x04[int\x92\x91\x92"), ints(Some("[int")));
    assert_eq!(value(b"\x55\x04[int\x91\x92Z"), ints(Some("[int")));
    // a type reference to an earlier type name
    assert_eq!(
        value(b"\x7a\x55\x04[int\x91Z\x70\x90"),
        Value::list([
            Value::typed_list("[int", [Value::Int(1)]),
            Value::typed_list("[int", [])
        ])
    );
}

#[test]
fn maps_and_objects() {
    assert_eq!(
        value(b"H\x01a\x91Z"),
        Value::map([(Value::String("a".into()), Value::Int(1))])
    );
    let m = value(b"M\x03Foo\x91\x92Z");
    assert_eq!(m.as_map().unwrap().ty.as_deref(), Some("Foo"));
    // 'O' with the class index as an int, and a class definition in front of a non-object
    let v = value(b"\x7aC\x01P\x91\x01xO\x90\x91C\x01Q\x90\x93");
    let items = v.as_list().unwrap();
    assert_eq!(
        items[0],
        Value::Object(Object::new("P", [("x", Value::Int(1))]))
    );
    assert_eq!(items[1], Value::Int(3));
    // an object of a class without fields
    assert_eq!(
        value(b"C\x01E\x90\x60"),
        Value::Object(Object::new("E", Vec::<(String, Value)>::new()))
    );
}

#[test]
fn references_keep_resolve_and_cycles() {
    // [m, m] where m = {"k": 1}: list is #0, map #1
    let bytes = b"\x7aH\x01k\x91Z\x51\x91";
    let m = Value::map([(Value::String("k".into()), Value::Int(1))]);
    assert_eq!(value(bytes), Value::list([m.clone(), m.clone()]));
    let mut keep = Decoder::with_options(bytes, DecodeOptions::default().refs(RefMode::Keep));
    assert_eq!(
        keep.read_value().unwrap(),
        Value::list([m.clone(), Value::Ref(1)])
    );
    // a list containing itself stays a Ref in both modes
    let cyclic = b"\x79\x51\x90";
    assert_eq!(value(cyclic), Value::list([Value::Ref(0)]));
    let v: Result<Vec<Vec<i32>>, _> = from_slice(cyclic);
    assert!(matches!(
        v,
        Err(DecodeError::CyclicReference { index: 0, .. })
    ));
    // references to values not read yet
    assert_error!(
        b"\x79\x51\x91",
        DecodeError::InvalidReference { index: 1, .. }
    );
    assert_error!(b"\x51\x90", DecodeError::InvalidReference { .. });
}

#[test]
fn references_to_shared_values_are_re_read_for_typed_reads() {
    // [[1,2], ref 1, ref 1]
    let bytes = b"\x7b\x7a\x91\x92\x51\x91\x51\x91";
    let v: Vec<Vec<i64>> = from_slice(bytes).unwrap();
    assert_eq!(v, vec![vec![1, 2]; 3]);
    // references inside a re-read value keep their numbering:
    // [l1=[l2=["x"]], l3=[ref 2], ref 3]: re-reading l3 re-reads l2 again
    let bytes = b"\x7b\x79\x79\x01x\x79\x51\x92\x51\x93";
    let v: Vec<Vec<Vec<String>>> = from_slice(bytes).unwrap();
    assert_eq!(v, vec![vec![vec!["x".to_string()]]; 3]);
    let x = Value::list([Value::String("x".into())]);
    assert_eq!(
        value(bytes),
        Value::list([
            Value::list([x.clone()]),
            Value::list([x.clone()]),
            Value::list([x])
        ])
    );
}

#[test]
fn exponential_reference_fan_out_is_bounded() {
    // l0 = [1,1,1,1], l(n+1) = [ref ln, ref ln, ref ln, ref ln]: 4^30 elements in ~200 bytes
    let mut enc = Encoder::new(Vec::new());
    let levels = 30u32;
    enc.begin_list(levels as usize + 1, None).unwrap();
    enc.begin_list(4, None).unwrap();
    for _ in 0..4 {
        enc.write_int(1);
    }
    for n in 0..levels {
        enc.begin_list(4, None).unwrap();
        for _ in 0..4 {
            enc.write_ref(n + 1).unwrap();
        }
    }
    let bytes = enc.into_inner();
    assert!(bytes.len() < 400);
    let err = Decoder::new(&bytes).read_value().unwrap_err();
    assert!(
        matches!(err, DecodeError::RefExpansionLimit { .. }),
        "{err}"
    );
    // kept as references it is small and fine
    let mut keep = Decoder::with_options(&bytes, DecodeOptions::default().refs(RefMode::Keep));
    assert!(keep.read_value().unwrap().contains_ref());
    // and a typed reader hits the same limit
    #[allow(clippy::type_complexity)]
    let typed: Result<Vec<Value>, _> = from_slice(&bytes);
    assert!(typed.is_err());
}

#[test]
fn nesting_is_bounded() {
    let deep = [0x79u8; 100_000];
    assert_error!(&deep, DecodeError::DepthLimit { limit: 256, .. });
    let mut dec = Decoder::with_options(&deep[..10], DecodeOptions::default().max_depth(5));
    assert!(matches!(
        dec.skip_value(),
        Err(DecodeError::DepthLimit { limit: 5, .. })
    ));
    // within the limit
    let mut ok = vec![0x79u8; 200];
    ok.push(0x90);
    assert!(value(&ok).as_list().is_some());
}

#[test]
fn lengths_are_checked_against_the_input() {
    assert_error!(b"\x58\xd7\xff\xff", DecodeError::InvalidLength { .. });
    assert_error!(b"V\x01a\x8f", DecodeError::InvalidLength { .. });
    assert_error!(
        b"\x58I\x7f\xff\xff\xff\x90",
        DecodeError::InvalidLength { .. }
    );
    assert_error!(
        b"C\x01PI\x7f\xff\xff\xff",
        DecodeError::InvalidLength { .. }
    );
    assert_error!(b"S\xff\xffabc", DecodeError::UnexpectedEof { .. });
    assert_error!(b"B\xff\xffabc", DecodeError::UnexpectedEof { .. });
}

#[test]
fn malformed_input_gives_errors() {
    assert_error!(b"", DecodeError::UnexpectedEof { offset: 0 });
    assert_error!(b"Z", DecodeError::UnexpectedTag { tag: b'Z', .. });
    assert_error!(b"@", DecodeError::UnexpectedTag { tag: 0x40, .. });
    assert_error!(b"\x60", DecodeError::UnknownClass { index: 0, .. });
    assert_error!(b"O\x91", DecodeError::UnknownClass { index: 1, .. });
    assert_error!(b"\x71\x91\x90", DecodeError::UnknownType { index: 1, .. });
    assert_error!(&[0x01, 0xff], DecodeError::InvalidUtf8 { offset: 1 });
    assert_error!(&[0x01, 0xe2, 0x82], DecodeError::UnexpectedEof { .. });
    assert_error!(b"\x79", DecodeError::UnexpectedEof { .. });
    assert_error!(b"H\x91", DecodeError::UnexpectedEof { .. });
    assert_error!(b"\x91\x91", DecodeError::TrailingBytes { offset: 1 });
}

#[test]
fn typed_readers_accept_every_form_of_their_type() {
    let mut dec = Decoder::new(b"\xe5\x59\x00\x00\x00\x07I\x00\x00\x00\x08");
    assert_eq!(dec.read_i32().unwrap(), 5);
    assert_eq!(dec.read_i32().unwrap(), 7);
    assert_eq!(dec.read_i64().unwrap(), 8);
    let mut dec = Decoder::new(b"L\x00\x00\x00\x01\x00\x00\x00\x00");
    assert!(matches!(
        dec.read_i32(),
        Err(DecodeError::OutOfRange {
            value: 4294967296,
            ..
        })
    ));
    let mut dec = Decoder::new(b"\x91\xe2\x5c");
    assert_eq!(dec.read_f64().unwrap(), 1.0);
    assert_eq!(dec.read_f64().unwrap(), 2.0);
    assert_eq!(dec.read_f64().unwrap(), 1.0);
    let mut dec = Decoder::new(b"NT\x02hiN\x4b\x00\x00\x00\x01");
    assert_eq!(dec.read_opt_string().unwrap(), None);
    assert!(dec.read_bool().unwrap());
    assert_eq!(dec.read_opt_string().unwrap().as_deref(), Some("hi"));
    dec.read_null().unwrap();
    assert_eq!(dec.read_date().unwrap(), 60_000);
    let mut dec = Decoder::new(b"\x91");
    assert!(matches!(
        dec.read_string(),
        Err(DecodeError::UnexpectedTag { tag: 0x91, .. })
    ));
    assert_eq!(
        from_slice::<i8>(b"\xc8\x80").unwrap_err().to_string(),
        "value 128 at offset 0 does not fit in i8"
    );
}

#[test]
fn containers_skip_what_the_caller_does_not_read() {
    // [[1, 2, 3], "after"] and a map with an unread entry
    let mut dec = Decoder::new(b"\x7a\x7b\x91\x92\x93\x05afterH\x01a\x91\x01b\x92Z\x90");
    let outer = dec.begin_list().unwrap();
    assert_eq!(outer.len, Some(2));
    let inner = dec.begin_list().unwrap();
    assert_eq!((inner.len, inner.ref_index), (Some(3), 1));
    assert_eq!(dec.read_i32().unwrap(), 1);
    dec.end().unwrap();
    assert!(dec.has_next().unwrap());
    assert_eq!(dec.read_string().unwrap(), "after");
    assert!(!dec.has_next().unwrap());
    assert!(matches!(dec.read_i32(), Err(DecodeError::Misuse(_))));
    dec.end().unwrap();
    dec.begin_map().unwrap();
    assert_eq!(dec.read_string().unwrap(), "a");
    dec.end().unwrap();
    assert_eq!(dec.read_i32().unwrap(), 0);
    assert!(dec.is_empty());
    assert!(matches!(dec.end(), Err(DecodeError::Misuse(_))));
    assert!(matches!(dec.has_next(), Err(DecodeError::Misuse(_))));
}

#[test]
fn peek_kind_names_the_next_value() {
    let mut dec = Decoder::new(b"C\x01P\x90\x60N");
    assert_eq!(dec.peek_kind().unwrap(), ValueKind::Object);
    assert_eq!(dec.classes().len(), 1);
    dec.skip_value().unwrap();
    assert_eq!(dec.peek_kind().unwrap(), ValueKind::Null);
    for t in 0..=255u8 {
        let _ = ValueKind::of(t);
    }
    assert_eq!(ValueKind::of(tag::END), None);
    assert_eq!(ValueKind::of(tag::CLASS_DEF), None);
}

#[test]
fn lone_surrogates_become_replacement_characters() {
    assert_eq!(
        value(&[0x03, b'a', 0xed, 0xa0, 0x80, b'b']),
        Value::String("a\u{fffd}b".into())
    );
    assert_eq!(
        value(&[0x01, 0xed, 0xb0, 0x80]),
        Value::String("\u{fffd}".into())
    );
    assert_eq!(
        value(&[0x01, 0xed, 0xa0, 0x80]),
        Value::String("\u{fffd}".into())
    );
}

#[test]
fn resetting_tables() {
    let mut enc = Encoder::new(Vec::new());
    enc.begin_object("P", &["x"]).unwrap();
    enc.write_int(1);
    enc.reset();
    enc.begin_object("P", &["x"]).unwrap();
    enc.write_int(2);
    let bytes = enc.into_inner();
    // two independent streams back to back: the decoder must be reset between them
    let mut dec = Decoder::new(&bytes);
    dec.read_value().unwrap();
    dec.reset();
    let second = dec.read_value().unwrap();
    assert_eq!(second.as_object().unwrap().get("x"), Some(&Value::Int(2)));
}

#[test]
fn dynamic_container_readers() {
    let mut dec = Decoder::new(b"\x7a\x91\x92H\x01a\x91ZC\x01P\x91\x01x\x60\x93\x51\x90\x91");
    assert_eq!(dec.read_list().unwrap().items.len(), 2);
    assert_eq!(dec.read_map().unwrap().entries.len(), 1);
    assert_eq!(dec.read_object().unwrap().get("x"), Some(&Value::Int(3)));
    // a reference to the list read first
    assert_eq!(
        dec.read_list().unwrap().items,
        [Value::Int(1), Value::Int(2)]
    );
    assert!(matches!(
        dec.read_list(),
        Err(DecodeError::UnexpectedTag { tag: 0x91, .. })
    ));
}
