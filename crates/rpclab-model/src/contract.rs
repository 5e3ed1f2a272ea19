//! The lab's service contract and its deterministic payloads.
//!
//! Every server under test implements one logical service (see
//! `contract/README.md` in the repository for the IDL of each framework):
//!
//! | operation     | signature                               | seed           |
//! |---------------|-----------------------------------------|----------------|
//! | `order-echo`  | `Order echoOrder(Order)`                | 001, 000 (POJO)|
//! | `orders-echo` | `List<Order> echoOrders(List<Order>)`   | 000 (100 POJOs)|
//! | `string-1k`   | `String echoString(String)`, 1 KiB      | 000            |
//! | `string-100k` | `String echoString(String)`, 100 KiB    | 000            |
//! | `string-1m`   | `String echoString(String)`, 1 MiB      | 000            |
//! | `hello`       | `String hello(String)` with `"aa"`      | 003, 002       |
//! | `empty`       | `void empty()`                          | 004            |
//!
//! Payloads are generated, never read from files, by pure functions of the
//! operation, so that a Rust client, a Java golden-vector generator and a
//! reader of a results snapshot all agree on what was sent. The strings are
//! ASCII so that their length in bytes equals their length in characters in
//! every encoding the frameworks use (UTF-8, modified UTF-8, UTF-16 counts).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The 8-field order of seed 001, field for field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Order {
    pub order_id: i64,
    pub phone: String,
    pub name: String,
    pub order_num: String,
    pub order_date: i32,
    pub ticket_type: i32,
    pub amount: f64,
    pub order_status: i32,
}

impl Order {
    /// The `i`-th order of the deterministic sequence.
    ///
    /// Values are chosen to exercise the encodings a little (a 64-bit id that
    /// does not fit in 32 bits, a non-integral amount, non-empty strings of
    /// different lengths) while staying plain ASCII.
    pub fn sample(i: u32) -> Order {
        let i64v = i as i64;
        Order {
            order_id: 10_000_000_000 + i64v,
            phone: format!("138{:08}", (i as u64 * 7919) % 100_000_000),
            name: format!("customer-{i}"),
            order_num: format!("ORD-2015-{i:06}"),
            order_date: 20_150_701 + (i % 28) as i32,
            ticket_type: (i % 4) as i32,
            amount: 100.25 + i as f64 * 0.5,
            order_status: (i % 3) as i32,
        }
    }
}

/// Greeting prefix of `hello`: the server returns `HELLO_PREFIX + name`, so a
/// server that merely echoes is caught by verification.
pub const HELLO_PREFIX: &str = "hello ";

/// The argument of `hello` in seeds 002 and 003.
pub const HELLO_NAME: &str = "aa";

/// One operation of the contract with its payload size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Operation {
    OrderEcho,
    OrdersEcho,
    StringEcho(StringSize),
    Hello,
    Empty,
}

/// The string sizes of seed 000.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StringSize {
    K1,
    K100,
    M1,
}

impl StringSize {
    pub fn bytes(self) -> usize {
        match self {
            StringSize::K1 => 1024,
            StringSize::K100 => 100 * 1024,
            StringSize::M1 => 1024 * 1024,
        }
    }
}

/// Number of orders in `orders-echo` (seed 000: a list of 100 POJOs).
pub const ORDERS_IN_LIST: u32 = 100;

impl Operation {
    pub const ALL: [Operation; 7] = [
        Operation::OrderEcho,
        Operation::OrdersEcho,
        Operation::StringEcho(StringSize::K1),
        Operation::StringEcho(StringSize::K100),
        Operation::StringEcho(StringSize::M1),
        Operation::Hello,
        Operation::Empty,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Operation::OrderEcho => "order-echo",
            Operation::OrdersEcho => "orders-echo",
            Operation::StringEcho(StringSize::K1) => "string-1k",
            Operation::StringEcho(StringSize::K100) => "string-100k",
            Operation::StringEcho(StringSize::M1) => "string-1m",
            Operation::Hello => "hello",
            Operation::Empty => "empty",
        }
    }

    /// The method name of the contract this operation calls (Java spelling;
    /// each IDL maps it to its own convention).
    pub fn method(self) -> &'static str {
        match self {
            Operation::OrderEcho => "echoOrder",
            Operation::OrdersEcho => "echoOrders",
            Operation::StringEcho(_) => "echoString",
            Operation::Hello => "hello",
            Operation::Empty => "empty",
        }
    }

    /// The argument sent by every call of this operation.
    pub fn argument(self) -> Value {
        match self {
            Operation::OrderEcho => Value::Order(Order::sample(1)),
            Operation::OrdersEcho => {
                Value::Orders((0..ORDERS_IN_LIST).map(Order::sample).collect())
            }
            Operation::StringEcho(size) => Value::Str(ascii_text(size.bytes())),
            Operation::Hello => Value::Str(HELLO_NAME.to_owned()),
            Operation::Empty => Value::Unit,
        }
    }

    /// What a correct server answers to [`Operation::argument`].
    pub fn expected_reply(self) -> Value {
        match self {
            Operation::Hello => Value::Str(format!("{HELLO_PREFIX}{HELLO_NAME}")),
            other => other.argument(),
        }
    }

    /// A call ready to be sent: argument and expected reply built once, so
    /// the hot path never builds payloads.
    pub fn call(self) -> Call {
        Call {
            operation: self,
            argument: self.argument(),
            expected: self.expected_reply(),
        }
    }
}

/// A deterministic printable-ASCII text of exactly `len` bytes.
pub fn ascii_text(len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
    (0..len)
        .map(|i| ALPHABET[(i * 31 + i / 64) % ALPHABET.len()] as char)
        .collect()
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An operation name that is not part of the contract.
#[derive(Debug, thiserror::Error)]
#[error("unknown operation `{0}`; known: order-echo, orders-echo, string-1k, string-100k, string-1m, hello, empty")]
pub struct UnknownOperation(pub String);

impl FromStr for Operation {
    type Err = UnknownOperation;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Operation::ALL
            .into_iter()
            .find(|op| op.name() == s)
            .ok_or_else(|| UnknownOperation(s.to_owned()))
    }
}

impl TryFrom<String> for Operation {
    type Error = UnknownOperation;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Operation> for String {
    fn from(op: Operation) -> String {
        op.name().to_owned()
    }
}

/// A value of the contract, independent of any wire format. Protocol
/// implementations decode replies into this type so that verification is
/// done once, in one place, for every framework.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Order(Order),
    Orders(Vec<Order>),
    Str(String),
    Unit,
}

/// A prepared call: what to send and what must come back.
#[derive(Clone, Debug)]
pub struct Call {
    pub operation: Operation,
    pub argument: Value,
    pub expected: Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_names_round_trip() {
        for op in Operation::ALL {
            assert_eq!(op.name().parse::<Operation>().unwrap(), op);
        }
        assert!("string-2k".parse::<Operation>().is_err());
    }

    #[test]
    fn payloads_have_the_published_sizes() {
        for (op, len) in [
            (Operation::StringEcho(StringSize::K1), 1024),
            (Operation::StringEcho(StringSize::K100), 102_400),
            (Operation::StringEcho(StringSize::M1), 1_048_576),
        ] {
            match op.argument() {
                Value::Str(s) => {
                    assert_eq!(s.len(), len);
                    assert!(s.is_ascii());
                }
                other => panic!("{op}: unexpected {other:?}"),
            }
        }
        match Operation::OrdersEcho.argument() {
            Value::Orders(v) => assert_eq!(v.len(), 100),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn payloads_are_deterministic() {
        assert_eq!(Order::sample(7), Order::sample(7));
        assert_ne!(Order::sample(7), Order::sample(8));
        assert_eq!(ascii_text(100), ascii_text(100));
    }

    #[test]
    fn hello_expects_the_greeting_not_an_echo() {
        let call = Operation::Hello.call();
        assert_ne!(call.argument, call.expected);
        assert_eq!(call.expected, Value::Str("hello aa".into()));
    }
}
