//! The lab's contract (`contract/bench.ice`) in the Ice encoding: the
//! `rpclab::Order` struct, the operations' parameters and return values,
//! and the requests and replies of `rpclab::Bench`. The protocol and the
//! encoding themselves (headers, requests, replies and their statuses,
//! encapsulations, sizes, strings, proxies, the locator's
//! `findAdapterById`) are the `ice-protocol` crate, re-exported here, so
//! `codec::Header`, `codec::Reader` and the rest keep their paths.
//!
//! Tested against golden bytes recorded from the real Ice for Java runtime
//! (`crates/ice-protocol/golden/`), round-tripped by property tests and
//! fuzzed (`client/fuzz`, target `ice_reply`): a malformed message is an
//! error, never a panic, and no length read from the wire allocates more
//! than the bytes that are actually there.

pub use ice_protocol::*;

use crate::protocol::CallError;
use rpclab_model::contract::{Order, Value};

impl From<Error> for CallError {
    /// Malformed bytes are a protocol error; a failure the server reports
    /// is a server error.
    fn from(e: Error) -> CallError {
        match e {
            Error::Malformed(m) => CallError::Protocol(m),
            Error::Remote(m) => CallError::Server(m),
        }
    }
}

/// The contract's operations as Slice operations of `rpclab::Bench` (the
/// model's table: Slice names are the Java ones).
pub use rpclab_model::contract::Method;

/// Checks that `value` is `method`'s parameter type.
pub fn check_argument(method: Method, value: &Value) -> Result<(), CallError> {
    if method.accepts(value) {
        Ok(())
    } else {
        Err(CallError::Config(format!(
            "Slice operation `{}` cannot take {value:?}",
            method.name()
        )))
    }
}

/// Appends `rpclab::Order`: its members in Slice order.
pub fn write_order(out: &mut Vec<u8>, o: &Order) {
    out.extend_from_slice(&o.order_id.to_le_bytes());
    write_string(out, &o.phone);
    write_string(out, &o.name);
    write_string(out, &o.order_num);
    out.extend_from_slice(&o.order_date.to_le_bytes());
    out.extend_from_slice(&o.ticket_type.to_le_bytes());
    out.extend_from_slice(&o.amount.to_le_bytes());
    out.extend_from_slice(&o.order_status.to_le_bytes());
}

/// Appends a contract value as the parameters of its operation.
pub fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Order(o) => write_order(out, o),
        Value::Orders(list) => {
            write_size(out, list.len());
            for o in list {
                write_order(out, o);
            }
        }
        Value::Str(s) => write_string(out, s),
        Value::Unit => {}
    }
}

fn order_len(o: &Order) -> usize {
    8 + 4 * 3 + 8 + 3 * 5 + o.phone.len() + o.name.len() + o.order_num.len()
}

/// Bytes of `v` as parameters, within 5 bytes per size: a buffer of
/// [`request_capacity`] never grows while a request is written.
pub fn value_capacity(v: &Value) -> usize {
    match v {
        Value::Order(o) => order_len(o),
        Value::Orders(list) => 5 + list.iter().map(order_len).sum::<usize>(),
        Value::Str(s) => 5 + s.len(),
        Value::Unit => 0,
    }
}

/// Capacity for a request to `identity` carrying `v`.
pub fn request_capacity(identity: &Identity, operation: &str, v: &Value) -> usize {
    HEADER_LEN
        + 4
        + 10
        + identity.name.len()
        + identity.category.len()
        + 1
        + 5
        + operation.len()
        + 2
        + 6
        + value_capacity(v)
}

/// Appends the request calling `method` with `argument` on `identity`.
pub fn encode_call(
    out: &mut Vec<u8>,
    request_id: i32,
    identity: &Identity,
    method: Method,
    argument: &Value,
) -> Result<(), CallError> {
    check_argument(method, argument)?;
    encode_request(out, request_id, identity, method.name(), MODE_NORMAL, |o| {
        write_value(o, argument)
    });
    Ok(())
}

/// The smallest encoded `rpclab::Order` (three empty strings).
pub const MIN_ORDER_LEN: usize = 8 + 3 + 4 + 4 + 8 + 4;

/// Reads `method`'s return value from a success reply's parameters.
pub fn read_return(data: &[u8], method: Method) -> Result<Value, CallError> {
    let mut r = Reader::new(data);
    let v = match method {
        Method::EchoOrder => Value::Order(read_order(&mut r)?),
        Method::EchoOrders => {
            let n = r.read_seq_size(MIN_ORDER_LEN)?;
            let mut list = Vec::with_capacity(n);
            for _ in 0..n {
                list.push(read_order(&mut r)?);
            }
            Value::Orders(list)
        }
        Method::EchoString | Method::Hello => Value::Str(r.read_string()?),
        Method::Empty => Value::Unit,
    };
    r.finish(&format!("the return value of `{}`", method.name()))?;
    Ok(v)
}

/// Decodes a reply body (from the status byte) to `method`'s contract
/// value.
pub fn decode_reply(body: &[u8], method: Method) -> Result<Value, CallError> {
    read_return(reply_params(body, method.name())?, method)
}

/// Whether a reply body (from the status byte) to a call of `method` is
/// without a doubt `expected`, told where it lies without making a value:
/// a success whose encapsulation (encoding 1.1, as Ice writes it) holds
/// exactly that string, its size in the short form for fewer than 255
/// bytes, and nothing after it. [`decode_reply`] decodes such a body to
/// exactly `expected`; anything else (another status, encoding or
/// spelling, a wrong string) is false, and is then decoded.
pub fn is_expected(body: &[u8], method: Method, expected: &Value) -> bool {
    let Value::Str(want) = expected else {
        return false;
    };
    if !matches!(method, Method::EchoString | Method::Hello) {
        return false;
    }
    let n = want.len();
    // Status, the encapsulation's size and encoding, the string's size.
    let head = if n < 255 { 7 + 1 } else { 7 + 5 };
    // The encapsulation's size counts itself, not the status.
    let Some(encaps) = i32::try_from(n + head - 1).ok() else {
        return false;
    };
    let Some((prefix, string)) = body.split_at_checked(head) else {
        return false;
    };
    let size_ok = if n < 255 {
        prefix[7] == n as u8
    } else {
        prefix[7] == 255 && prefix[8..12] == (n as i32).to_le_bytes()
    };
    prefix[0] == ReplyStatus::Ok as u8
        && prefix[1..5] == encaps.to_le_bytes()
        && prefix[5..7] == [ENCODING_1_1.0, ENCODING_1_1.1]
        && size_ok
        && string == want.as_bytes()
}

/// Reads `method`'s parameter from a request's parameters.
pub fn read_argument(params: &[u8], method: Method) -> Result<Value, CallError> {
    // The parameters have the same shapes as the return values.
    read_return(params, method)
}

/// Every decoding entry point over arbitrary bytes: each must return, never
/// panic, hang or allocate beyond the input's size. Shared by the fuzz
/// target (`client/fuzz`, `ice_reply`) and the property tests.
#[doc(hidden)]
pub fn exercise_decoders(data: &[u8]) {
    ice_protocol::exercise_decoders(data);
    for method in Method::ALL {
        let _ = decode_reply(data, method);
        let _ = read_return(data, method);
    }
}

/// Reads `rpclab::Order`: its members in Slice order.
pub fn read_order(r: &mut Reader<'_>) -> Result<Order, CallError> {
    Ok(Order {
        order_id: r.read_i64()?,
        phone: r.read_string()?,
        name: r.read_string()?,
        order_num: r.read_string()?,
        order_date: r.read_i32()?,
        ticket_type: r.read_i32()?,
        amount: r.read_f64()?,
        order_status: r.read_i32()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{decoding, flip};
    use proptest::prelude::*;

    /// A success reply's body (from the status byte) carrying `v`, as Ice
    /// writes it.
    fn body(v: &Value) -> Vec<u8> {
        let mut reply = Vec::new();
        encode_reply(&mut reply, 1, ReplyStatus::Ok, |o| write_value(o, v));
        reply.split_off(HEADER_LEN + 4)
    }

    /// Whether `body` is found to be `expected` in place, which must then
    /// be what decoding it gives.
    fn found(body: &[u8], method: Method, expected: &Value) -> bool {
        let yes = is_expected(body, method, expected);
        if yes {
            let decoded = decode_reply(body, method);
            assert!(
                matches!(&decoded, Ok(v) if v == expected),
                "{body:?}: {decoded:?}"
            );
        }
        yes
    }

    /// A reply is the expected string in place exactly when it is written
    /// as Ice writes it and decodes to it: not a wrong string, a cut or a
    /// longer one, another status or encoding, bytes after it, a size
    /// written long, nor another method's reply.
    #[test]
    fn the_expected_string_is_found_in_place() {
        for s in [
            "",
            "hello aa",
            &"x".repeat(254),
            &"y".repeat(255),
            &"é".repeat(300),
        ] {
            let want = Value::Str(s.to_owned());
            let good = body(&want);
            assert!(found(&good, Method::Hello, &want), "{}", s.len());
            assert!(found(&good, Method::EchoString, &want));
            assert!(!found(&good, Method::Empty, &want));
            assert!(!found(&good, Method::EchoOrder, &want));
            assert!(!found(&good, Method::Hello, &Value::Str(format!("{s}x"))));
            assert!(!found(&good, Method::Hello, &Value::Unit));
            let mut longer = good.clone();
            longer.push(0);
            assert!(!found(&longer, Method::Hello, &want));
            assert!(!found(&good[..good.len() - 1], Method::Hello, &want));
            for (at, byte) in [
                (0, ReplyStatus::UserException as u8),
                (1, 0),
                (5, 2),
                (6, 0),
                (6, 2),
            ] {
                let mut other = good.clone();
                other[at] = byte;
                assert!(!found(&other, Method::Hello, &want), "{at} {byte}");
            }
            if !s.is_empty() {
                let mut other = good.clone();
                *other.last_mut().unwrap() ^= 1;
                assert!(!found(&other, Method::Hello, &want));
            }
        }
        // The size in its long form: decoded, not found in place.
        let mut long_size = vec![ReplyStatus::Ok as u8];
        long_size.extend_from_slice(&(6 + 5 + 2i32).to_le_bytes());
        long_size.extend_from_slice(&[1, 1, 255, 2, 0, 0, 0, b'a', b'a']);
        let aa = Value::Str("aa".into());
        assert!(matches!(decode_reply(&long_size, Method::Hello), Ok(v) if v == aa));
        assert!(!found(&long_size, Method::Hello, &aa));
        // Encoding 1.0: decoded, not found in place.
        let mut one_oh = body(&aa);
        one_oh[6] = 0;
        assert!(matches!(decode_reply(&one_oh, Method::Hello), Ok(v) if v == aa));
        assert!(!found(&one_oh, Method::Hello, &aa));
    }

    proptest! {
        #![proptest_config(decoding::cases())]

        /// Every string Ice writes is found in place, never another one.
        #[test]
        fn written_strings_are_found_in_place(s in ".{0,600}") {
            let want = Value::Str(s.clone());
            prop_assert!(found(&body(&want), Method::EchoString, &want));
            let other = Value::Str(format!("{s}x"));
            prop_assert!(!found(&body(&want), Method::EchoString, &other));
        }

        /// On arbitrary bytes, and on a real reply mutated (status,
        /// encapsulation and string alike), a body found in place decodes
        /// to the expected value.
        #[test]
        fn found_in_place_means_decoded_to_it(
            bytes in decoding::arbitrary_bytes(),
            flips in decoding::flips(),
            s in prop_oneof![Just(String::new()), Just("hello aa".to_owned()), "[a-c]{0,3}"],
        ) {
            let want = Value::Str(s);
            let mut mutated = body(&want);
            flip(&mut mutated, 0, &flips);
            for m in Method::ALL {
                found(&bytes, m, &want);
                found(&mutated, m, &want);
            }
        }
    }

    #[test]
    fn request_layout() {
        let mut out = Vec::new();
        let id = Identity::parse("bench");
        encode_call(&mut out, 7, &id, Method::Hello, &Value::Str("aa".into())).unwrap();
        let h = Header::decode(&out).unwrap();
        assert_eq!((h.message_type, h.size), (REQUEST, out.len()));
        assert_eq!(
            &out[HEADER_LEN..],
            &[
                7, 0, 0, 0, // request id
                5, b'b', b'e', b'n', b'c', b'h', 0, // identity
                0, // facet
                5, b'h', b'e', b'l', b'l', b'o', 0, // operation, mode
                0, // context
                9, 0, 0, 0, 1, 1, 2, b'a', b'a', // encapsulation
            ]
        );
        assert!(out.len() <= request_capacity(&id, "hello", &Value::Str("aa".into())));
    }

    #[test]
    fn forged_sequence_sizes_do_not_allocate() {
        let mut body = vec![ReplyStatus::Ok as u8];
        body.extend_from_slice(&11i32.to_le_bytes());
        body.extend_from_slice(&[1, 1, 255, 0xff, 0xff, 0xff, 0x7f]);
        assert!(decode_reply(&body, Method::EchoOrders).is_err());
    }
}
