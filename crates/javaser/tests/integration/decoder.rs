//! Malformed input: errors, never panics or huge allocations.

use javaser::{DecodeError, Decoder, Encoder};

fn stream(body: &[u8]) -> Vec<u8> {
    let mut b = vec![0xac, 0xed, 0x00, 0x05];
    b.extend_from_slice(body);
    b
}

fn read(body: &[u8]) -> Result<Vec<javaser::Content>, DecodeError> {
    javaser::from_bytes(&stream(body))
}

#[test]
fn bad_header() {
    assert!(matches!(
        javaser::from_bytes(&[0xac, 0xed, 0, 4]),
        Err(DecodeError::BadHeader { .. })
    ));
    assert!(matches!(
        javaser::from_bytes(&[0xac]),
        Err(DecodeError::UnexpectedEof { .. })
    ));
    assert_eq!(read(&[]).unwrap(), vec![]);
}

#[test]
fn huge_lengths_are_rejected_without_allocating() {
    // TC_LONGSTRING of i64::MAX bytes.
    let mut b = vec![0x7c];
    b.extend_from_slice(&i64::MAX.to_be_bytes());
    assert!(matches!(read(&b), Err(DecodeError::InvalidLength { .. })));
    // TC_LONGSTRING with a negative length.
    let mut b = vec![0x7c];
    b.extend_from_slice(&(-1i64).to_be_bytes());
    assert!(matches!(read(&b), Err(DecodeError::InvalidLength { .. })));
    // TC_BLOCKDATALONG of 2^31-1 bytes.
    let mut b = vec![0x7a];
    b.extend_from_slice(&i32::MAX.to_be_bytes());
    assert!(matches!(read(&b), Err(DecodeError::InvalidLength { .. })));
    // int[] of 2^31-1 elements.
    let mut e = Encoder::new();
    e.write_int_array(&[1]).unwrap();
    let mut b = e.finish();
    let n = b.len();
    b[n - 8..n - 4].copy_from_slice(&i32::MAX.to_be_bytes());
    assert!(matches!(
        javaser::from_bytes(&b),
        Err(DecodeError::InvalidLength { .. })
    ));
}

#[test]
fn bad_references() {
    assert!(matches!(
        read(&[0x71, 0, 0x7e, 0, 0]),
        Err(DecodeError::InvalidHandle { .. })
    ));
    assert!(matches!(
        read(&[0x71, 0xff, 0xff, 0xff, 0xff]),
        Err(DecodeError::InvalidHandle { .. })
    ));
    // A class descriptor that references a string handle.
    let mut b = vec![0x74, 0, 1, b'a', 0x73, 0x71, 0, 0x7e, 0, 0];
    assert!(matches!(read(&b), Err(DecodeError::InvalidHandle { .. })));
    b.truncate(4);
    assert!(read(&b).is_ok());
}

#[test]
fn bad_tags_and_utf() {
    assert!(matches!(
        read(&[0x00]),
        Err(DecodeError::UnexpectedTag { tag: 0, .. })
    ));
    assert!(matches!(
        read(&[0x78]),
        Err(DecodeError::UnexpectedTag { tag: 0x78, .. })
    ));
    assert!(matches!(
        read(&[0x7b]),
        Err(DecodeError::Unsupported { .. })
    ));
    assert!(matches!(
        read(&[0x74, 0, 1, 0xff]),
        Err(DecodeError::InvalidUtf8 { .. })
    ));
    assert!(matches!(
        read(&[0x74, 0, 5, b'a']),
        Err(DecodeError::InvalidLength { .. })
    ));
}

#[test]
fn primitive_reads_need_block_data() {
    let b = stream(&[0x70]);
    let mut d = Decoder::new(&b).unwrap();
    assert!(matches!(
        d.read_int(),
        Err(DecodeError::NotBlockData { .. })
    ));
    let b = stream(&[0x77, 2, 0, 1, 0x77, 2, 0, 2]);
    let mut d = Decoder::new(&b).unwrap();
    assert_eq!(
        d.read_int().unwrap(),
        0x0001_0002,
        "an int may span two chunks"
    );
}

#[test]
fn deep_nesting_is_limited() {
    // Nested TC_ARRAY of Object[] with one element each, 10_000 deep.
    let mut e = Encoder::new();
    let desc = javaser::ClassDesc::new("[Ljava.lang.Object;", 0, javaser::SC_SERIALIZABLE, vec![]);
    for _ in 0..10_000 {
        e.begin_array(&desc, 1).unwrap();
    }
    e.write_null();
    for _ in 0..10_000 {
        e.end_object().unwrap();
    }
    let b = e.finish();
    assert!(matches!(
        javaser::from_bytes(&b),
        Err(DecodeError::TooDeep { .. })
    ));
    // Within the limit the same stream reads (on a thread with enough stack).
    let ok = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut d2 = Decoder::new(&b).unwrap().with_max_depth(20_000);
            d2.read_all().is_ok()
        })
        .unwrap()
        .join()
        .unwrap();
    assert!(ok);
}

#[test]
fn unbalanced_encoder_calls() {
    let mut e = Encoder::new();
    assert!(e.end_object().is_err());
    assert!(e.end_custom_data().is_err());
}
