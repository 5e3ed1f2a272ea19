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
