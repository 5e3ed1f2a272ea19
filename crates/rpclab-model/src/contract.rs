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

    /// The method of the service this operation calls (the three string
    /// sizes call the same one).
    pub fn method(self) -> Method {
        match self {
            Operation::OrderEcho => Method::EchoOrder,
            Operation::OrdersEcho => Method::EchoOrders,
            Operation::StringEcho(_) => Method::EchoString,
            Operation::Hello => Method::Hello,
            Operation::Empty => Method::Empty,
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

/// A method of the service, the same five in every IDL of `contract/`.
///
/// This is the one place that maps the contract to what goes on the wire:
/// the method's name in each IDL and, for the frameworks that carry Java
/// objects, its Java signature. Every protocol reads its names here
/// ([`Operation::method`] for an operation, [`Method::of`] for a call with
/// its argument checked).
///
/// | method | Java, Thrift, Slice | protobuf | Java signature |
/// | --- | --- | --- | --- |
/// | [`EchoOrder`](Method::EchoOrder) | `echoOrder` | `EchoOrder` | `echoOrder(Lrpclab/contract/Order;)Lrpclab/contract/Order;` |
/// | [`EchoOrders`](Method::EchoOrders) | `echoOrders` | `EchoOrders` | `echoOrders(Ljava/util/List;)Ljava/util/List;` |
/// | [`EchoString`](Method::EchoString) | `echoString` | `EchoString` | `echoString(Ljava/lang/String;)Ljava/lang/String;` |
/// | [`Hello`](Method::Hello) | `hello` | `Hello` | `hello(Ljava/lang/String;)Ljava/lang/String;` |
/// | [`Empty`](Method::Empty) | `empty` | `Empty` | `empty()V` |
///
/// A test checks every name against the IDL files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    EchoOrder,
    EchoOrders,
    EchoString,
    Hello,
    Empty,
}

/// One row of [`Method`]'s table.
struct MethodNames {
    /// `BenchService.java`, `bench.thrift` and `bench.ice` spell it alike.
    name: &'static str,
    /// `bench.proto`'s `service Bench`.
    proto: &'static str,
    /// The JVM descriptors of the parameters, concatenated.
    java_parameters: &'static str,
    /// Name and full JVM method descriptor (what RMI's method hash hashes).
    java_signature: &'static str,
}

/// [`Method`]'s table, in [`Method::ALL`] order.
const METHOD_NAMES: [MethodNames; Method::COUNT] = [
    MethodNames {
        name: "echoOrder",
        proto: "EchoOrder",
        java_parameters: "Lrpclab/contract/Order;",
        java_signature: "echoOrder(Lrpclab/contract/Order;)Lrpclab/contract/Order;",
    },
    MethodNames {
        name: "echoOrders",
        proto: "EchoOrders",
        java_parameters: "Ljava/util/List;",
        java_signature: "echoOrders(Ljava/util/List;)Ljava/util/List;",
    },
    MethodNames {
        name: "echoString",
        proto: "EchoString",
        java_parameters: "Ljava/lang/String;",
        java_signature: "echoString(Ljava/lang/String;)Ljava/lang/String;",
    },
    MethodNames {
        name: "hello",
        proto: "Hello",
        java_parameters: "Ljava/lang/String;",
        java_signature: "hello(Ljava/lang/String;)Ljava/lang/String;",
    },
    MethodNames {
        name: "empty",
        proto: "Empty",
        java_parameters: "",
        java_signature: "empty()V",
    },
];

impl Method {
    pub const COUNT: usize = 5;
    pub const ALL: [Method; Method::COUNT] = [
        Method::EchoOrder,
        Method::EchoOrders,
        Method::EchoString,
        Method::Hello,
        Method::Empty,
    ];

    /// The method a call invokes, if its argument fits it.
    pub fn of(call: &Call) -> Result<Method, MismatchedArgument> {
        Method::checked(call.operation, &call.argument)
    }

    /// `operation`'s method, if `argument` is of its parameter type.
    pub fn checked(operation: Operation, argument: &Value) -> Result<Method, MismatchedArgument> {
        let method = operation.method();
        if method.accepts(argument) {
            Ok(method)
        } else {
            Err(MismatchedArgument::new(operation, argument))
        }
    }

    /// Whether `argument` is of the method's parameter type ([`Value::Unit`]
    /// for `empty`, which has none).
    pub fn accepts(self, argument: &Value) -> bool {
        matches!(
            (self, argument),
            (Method::EchoOrder, Value::Order(_))
                | (Method::EchoOrders, Value::Orders(_))
                | (Method::EchoString | Method::Hello, Value::Str(_))
                | (Method::Empty, Value::Unit)
        )
    }

    /// The method's position in [`Method::ALL`] (for per-method tables).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The name in Java, Thrift and Slice (what those protocols put on the
    /// wire).
    pub fn name(self) -> &'static str {
        METHOD_NAMES[self.index()].name
    }

    /// The rpc's name in `bench.proto` (gRPC's path is
    /// `/rpclab.Bench/<name>`).
    pub fn proto_name(self) -> &'static str {
        METHOD_NAMES[self.index()].proto
    }

    /// The JVM descriptors of the Java parameters, concatenated (Dubbo's
    /// parameter-types string).
    pub fn java_parameters(self) -> &'static str {
        METHOD_NAMES[self.index()].java_parameters
    }

    /// The Java name and method descriptor, `name(params)return`.
    pub fn java_signature(self) -> &'static str {
        METHOD_NAMES[self.index()].java_signature
    }

    /// Whether the method returns a value (all but `void empty()`).
    pub fn returns_value(self) -> bool {
        self != Method::Empty
    }

    /// A decoded return value checked against the method: only a `void`
    /// method returns nothing (Java `null` decodes as [`Value::Unit`]).
    pub fn returned(self, value: Value) -> Result<Value, WrongReturn> {
        match (value, self.returns_value()) {
            (Value::Unit, false) => Ok(Value::Unit),
            (Value::Unit, true) => Err(WrongReturn::Null(self)),
            (_, false) => Err(WrongReturn::Value(self)),
            (value, true) => Ok(value),
        }
    }
}

/// A return value that does not fit the method's return type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WrongReturn {
    /// A method with a return type returned `null` (or nothing).
    #[error("`{0}` returned null")]
    Null(Method),
    /// A `void` method returned a value.
    #[error("`{0}` returned a value")]
    Value(Method),
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A call whose argument is not of its operation's parameter type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("operation `{operation}` cannot send {argument} as its argument")]
pub struct MismatchedArgument {
    pub operation: Operation,
    /// What the argument was ("an order", "a string", ...).
    pub argument: &'static str,
}

impl MismatchedArgument {
    pub fn new(operation: Operation, argument: &Value) -> MismatchedArgument {
        let argument = match argument {
            Value::Order(_) => "an order",
            Value::Orders(_) => "a list of orders",
            Value::Str(_) => "a string",
            Value::Unit => "no value",
        };
        MismatchedArgument {
            operation,
            argument,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IDL file of `contract/`.
    fn idl(name: &str) -> String {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../contract/");
        std::fs::read_to_string(format!("{path}{name}"))
            .unwrap_or_else(|e| panic!("{path}{name}: {e}"))
    }

    #[test]
    fn method_names_are_those_of_every_idl() {
        let (thrift, slice, proto) = (idl("bench.thrift"), idl("bench.ice"), idl("bench.proto"));
        let java = idl("java/rpclab/contract/BenchService.java");
        for m in Method::ALL {
            let name = m.name();
            assert!(
                thrift.contains(&format!(" {name}(")),
                "bench.thrift: {name}"
            );
            assert!(slice.contains(&format!(" {name}(")), "bench.ice: {name}");
            assert!(
                java.contains(&format!(" {name}(")),
                "BenchService.java: {name}"
            );
            let rpc = format!("rpc {}(", m.proto_name());
            assert!(proto.contains(&rpc), "bench.proto: {rpc}");
            let sig = m.java_signature();
            assert!(sig.starts_with(&format!("{name}({})", m.java_parameters())));
            assert_eq!(sig.ends_with(")V"), !m.returns_value(), "{sig}");
        }
    }

    #[test]
    fn every_operation_calls_a_method_that_takes_its_argument() {
        for op in Operation::ALL {
            let call = op.call();
            assert_eq!(Method::of(&call), Ok(op.method()));
            assert_eq!(op.method().returns_value(), call.expected != Value::Unit);
        }
        let wrong = Method::checked(Operation::Hello, &Value::Unit).unwrap_err();
        assert_eq!(
            wrong.to_string(),
            "operation `hello` cannot send no value as its argument"
        );
        assert_eq!(
            Method::Hello.returned(Value::Unit).unwrap_err().to_string(),
            "`hello` returned null"
        );
        assert_eq!(
            Method::Empty
                .returned(Value::Str(String::new()))
                .unwrap_err()
                .to_string(),
            "`empty` returned a value"
        );
        for (i, m) in Method::ALL.into_iter().enumerate() {
            assert_eq!(m.index(), i);
        }
    }

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
