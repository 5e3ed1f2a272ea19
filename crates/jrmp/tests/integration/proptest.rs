//! Property tests: the parsers never panic and never run past their input
//! on arbitrary or mutated bytes, and what the writers write parses back.

use javaser::{Encoder, Value};
use jrmp::message::{self, Progress, ReturnStatus};
use jrmp::wire::{self, ObjId, Uid};
use jrmp::{RemoteException, RemoteRef};
use proptest::prelude::*;

const LIMIT: usize = 1 << 20;

/// A return message as a server writes it: message byte, stream header,
/// return type and UID as block data, then the value (none for void).
fn return_bytes(status: u8, ack: &Uid, value: Option<&str>) -> Vec<u8> {
    let mut enc = Encoder::with_buffer(vec![wire::RETURN]);
    enc.write_byte(status as i8);
    ack.write(&mut enc);
    if let Some(s) = value {
        enc.write_string(s);
    }
    enc.finish()
}

fn uid() -> impl Strategy<Value = Uid> {
    (any::<i32>(), any::<i64>(), any::<i16>()).prop_map(|(unique, time, count)| Uid {
        unique,
        time,
        count,
    })
}

fn check_all(bytes: &[u8]) {
    for has_value in [false, true] {
        if let Ok(Progress::Done { value, len }) = message::parse_return(bytes, has_value, LIMIT) {
            assert!(len <= bytes.len());
            if let Some(v) = &value.value {
                let _ = RemoteRef::from_stub(v);
                let _ = RemoteException::from_value(v, &value.decoder).to_string();
            }
        }
    }
    let _ = wire::parse_protocol_ack(bytes);
    let _ = message::parse_call(bytes, 2);
}

proptest! {
    #[test]
    fn string_returns_round_trip(s in "[ -~]{0,300}", ack in uid()) {
        let bytes = return_bytes(wire::NORMAL_RETURN, &ack, Some(&s));
        match message::parse_return(&bytes, true, LIMIT).unwrap() {
            Progress::Done { value, len } => {
                prop_assert_eq!(len, bytes.len());
                prop_assert_eq!(value.status, ReturnStatus::Normal);
                prop_assert_eq!(value.ack, ack);
                prop_assert_eq!(value.value, Some(Value::String(s.clone())));
            }
            Progress::NeedMore { .. } => prop_assert!(false, "complete return reported incomplete"),
        }
        // Every prefix asks for more, with the right total when it says one.
        for cut in 0..bytes.len() {
            match message::parse_return(&bytes[..cut], true, LIMIT) {
                Ok(Progress::NeedMore { total }) => prop_assert!(total.is_none_or(|t| t == bytes.len())),
                other => prop_assert!(false, "prefix {}: {:?}", cut, other),
            }
        }
    }

    #[test]
    fn void_returns_end_after_their_header(ack in uid(), tail in proptest::collection::vec(any::<u8>(), 0..4)) {
        let mut bytes = return_bytes(wire::NORMAL_RETURN, &ack, None);
        let n = bytes.len();
        bytes.extend_from_slice(&tail);
        match message::parse_return(&bytes, false, LIMIT).unwrap() {
            Progress::Done { value, len } => {
                prop_assert_eq!(len, n);
                prop_assert!(value.value.is_none());
            }
            Progress::NeedMore { .. } => prop_assert!(false),
        }
    }

    #[test]
    fn lookup_calls_parse_back(name in "[a-zA-Z0-9.]{1,80}") {
        let bytes = message::lookup_call(&name, Vec::new());
        match message::parse_call(&bytes, 1).unwrap() {
            Progress::Done { value: (h, args), len } => {
                prop_assert_eq!(len, bytes.len());
                prop_assert_eq!(h.target, ObjId::REGISTRY);
                prop_assert_eq!(args, vec![Value::String(name)]);
            }
            Progress::NeedMore { .. } => prop_assert!(false),
        }
    }

    #[test]
    fn uids_round_trip(u in uid()) {
        prop_assert_eq!(Uid::from_bytes(&u.to_bytes()), u);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        check_all(&bytes);
        let mut with_return = vec![wire::RETURN, 0xac, 0xed, 0, 5];
        with_return.extend_from_slice(&bytes);
        check_all(&with_return);
    }

    #[test]
    fn mutated_golden_returns_never_panic(
        which in 0usize..4,
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let name = ["jdk-lookup-c0-s2c.bin", "jdk-not-bound-c0-s2c.bin", "spring-orders-c0-s2c.bin", "spring-no-such-method-c0-s2c.bin"][which];
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("golden/vectors").join(name);
        let mut bytes = std::fs::read(path).unwrap();
        if bytes.first() == Some(&wire::PROTOCOL_ACK) {
            if let Ok(Progress::Done { len, .. }) = wire::parse_protocol_ack(&bytes) {
                bytes.drain(..len);
            }
        }
        for (i, b) in flips {
            let i = i.index(bytes.len());
            bytes[i] = b;
        }
        check_all(&bytes);
    }
}
