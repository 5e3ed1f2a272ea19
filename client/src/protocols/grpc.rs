//! gRPC (HTTP/2 + protobuf) with tonic, against service `rpclab.Bench` of
//! `contract/bench.proto`.
//!
//! The messages and the client stub are generated at build time by
//! `build.rs` (tonic-prost-build, with a vendored protoc).
//!
//! # Connections
//!
//! One [`GrpcConnection`] is one HTTP/2 connection: a tonic `Channel` to a
//! single endpoint, no load balancing, opened through [`connect_tcp`] and
//! wrapped in a [`CountingStream`] so every byte of it (HTTP/2 framing,
//! headers, gRPC length prefixes, protobuf) is counted. Many tasks share
//! the connection and their calls are multiplexed on it as HTTP/2 streams.
//! Should the server close it, the channel reconnects through the same
//! connector on the next call (still one connection at a time).
//!
//! # Errors
//!
//! A status the server sent (`grpc-status` trailer) becomes
//! [`CallError::Server`]`("<CODE>: <message>")`, with the canonical code
//! name (`UNAVAILABLE`, `INTERNAL`, ...). A status tonic made locally out of
//! a transport failure carries that failure as its source: a failed
//! (re)connection becomes [`CallError::Connect`], any other I/O or HTTP/2
//! failure [`CallError::Io`].

use crate::net::{connect_tcp, CountingStream};
use crate::protocol::{check_options, CallError, Connection, Protocol, WireCounter};
use hyper_util::rt::TokioIo;
use rpclab_model::contract::{self, Call, MismatchedArgument, Operation, Value};
use std::collections::BTreeMap;
use std::error::Error as _;
use std::sync::Arc;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};

/// Code generated from `contract/bench.proto`: messages and `BenchClient`.
#[allow(clippy::all, missing_docs)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/grpc-client/rpclab.rs"));
}

use pb::bench_client::BenchClient;

/// Largest message encoded or decoded, each way: the contract's largest
/// payload is a 1 MiB string, and gRPC's default limit (4 MiB decoding in
/// tonic) leaves little margin for frameworks that pad or wrap.
pub const MAX_MESSAGE_SIZE: usize = 16 * 1024 * 1024;

/// The gRPC protocol. It has no options yet.
#[derive(Debug, Clone, Copy, Default)]
pub struct Grpc;

impl Protocol for Grpc {
    type Conn = GrpcConnection;

    const NAME: &'static str = "grpc";

    const CONNECTION_MODEL: &'static str = "HTTP/2, calls multiplexed on each connection";

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        check_options(Self::NAME, options, &[])?;
        Ok(Grpc)
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<GrpcConnection, CallError> {
        let endpoint = Endpoint::from_shared(format!("http://{target}"))
            .map_err(|e| CallError::Connect(format!("invalid target `{target}`: {e}")))?;
        let target: Arc<str> = Arc::from(target);
        let connector = tower::service_fn(move |_: tonic::codegen::http::Uri| {
            let target = Arc::clone(&target);
            let counter = counter.clone();
            async move {
                let stream = connect_tcp(&target).await?;
                Ok::<_, CallError>(TokioIo::new(CountingStream::new(stream, counter)))
            }
        });
        let channel = endpoint
            .connect_with_connector(connector)
            .await
            .map_err(|e| match transport_error("", &e) {
                CallError::Io(io) => CallError::Connect(io.to_string()),
                other => other,
            })?;
        Ok(GrpcConnection::new(channel))
    }
}

/// One HTTP/2 connection to a gRPC server, shared by many tasks.
///
/// # Per-call work
///
/// tonic's stubs take `&mut self` and an owned request message, so each
/// call clones the stub (a handle to the shared channel: reference-count
/// bumps, no new connection) and builds the protobuf request from the
/// contract value it borrows: one allocation and copy per string field,
/// plus the list (300 small strings and a `Vec` for `orders-echo`, one
/// string for the string operations, nothing for `empty`). That is the same
/// work as cloning a prepared prost message, and what a real gRPC client
/// does per call anyway.
///
/// We deliberately cache nothing keyed by operation: [`Call`]'s fields are
/// public, so a cache could send a stale payload for a call that carries
/// another argument with the same operation, and what it would save (a copy
/// of at most 1 MiB, next to HTTP/2 framing and a 1 MiB round trip) is small.
/// The reply is decoded by prost and its strings are moved, not copied,
/// into the contract value.
#[derive(Debug, Clone)]
pub struct GrpcConnection {
    client: BenchClient<Channel>,
}

impl GrpcConnection {
    fn new(channel: Channel) -> Self {
        let client = BenchClient::new(channel)
            .max_decoding_message_size(MAX_MESSAGE_SIZE)
            .max_encoding_message_size(MAX_MESSAGE_SIZE);
        GrpcConnection { client }
    }
}

impl Connection for GrpcConnection {
    async fn call(&self, call: &Call) -> Result<Value, CallError> {
        let mut client = self.client.clone();
        match (call.operation, &call.argument) {
            (Operation::OrderEcho, Value::Order(order)) => {
                let reply = client
                    .echo_order(to_pb(order))
                    .await
                    .map_err(status_error)?;
                Ok(Value::Order(from_pb(reply.into_inner())))
            }
            (Operation::OrdersEcho, Value::Orders(orders)) => {
                let request = pb::OrderList {
                    orders: orders.iter().map(to_pb).collect(),
                };
                let reply = client.echo_orders(request).await.map_err(status_error)?;
                Ok(Value::Orders(
                    reply.into_inner().orders.into_iter().map(from_pb).collect(),
                ))
            }
            (Operation::StringEcho(_), Value::Str(s)) => {
                let request = pb::Text { value: s.clone() };
                let reply = client.echo_string(request).await.map_err(status_error)?;
                Ok(Value::Str(reply.into_inner().value))
            }
            (Operation::Hello, Value::Str(name)) => {
                let request = pb::Text {
                    value: name.clone(),
                };
                let reply = client.hello(request).await.map_err(status_error)?;
                Ok(Value::Str(reply.into_inner().value))
            }
            (Operation::Empty, Value::Unit) => {
                client.empty(pb::Nothing {}).await.map_err(status_error)?;
                Ok(Value::Unit)
            }
            (operation, argument) => Err(MismatchedArgument::new(operation, argument).into()),
        }
    }
}

fn to_pb(order: &contract::Order) -> pb::Order {
    pb::Order {
        order_id: order.order_id,
        phone: order.phone.clone(),
        name: order.name.clone(),
        order_num: order.order_num.clone(),
        order_date: order.order_date,
        ticket_type: order.ticket_type,
        amount: order.amount,
        order_status: order.order_status,
    }
}

fn from_pb(order: pb::Order) -> contract::Order {
    contract::Order {
        order_id: order.order_id,
        phone: order.phone,
        name: order.name,
        order_num: order.order_num,
        order_date: order.order_date,
        ticket_type: order.ticket_type,
        amount: order.amount,
        order_status: order.order_status,
    }
}

/// Classifies a failed call's status (see the module documentation).
fn status_error(status: Status) -> CallError {
    // Only statuses tonic builds from a local error have a source; one read
    // from the server's trailers never does.
    match status.source() {
        None => CallError::Server(format!(
            "{}: {}",
            code_name(status.code()),
            status.message()
        )),
        Some(source) => transport_error(status.message(), source),
    }
}

/// Classifies a local failure: `err` and its sources, described after
/// `message`.
fn transport_error(message: &str, err: &(dyn std::error::Error + 'static)) -> CallError {
    // Our own connector's error, wrapped by tonic: already classified.
    let mut next = Some(err);
    while let Some(e) = next {
        match e.downcast_ref::<CallError>() {
            Some(CallError::Connect(m)) => return CallError::Connect(m.clone()),
            Some(other) => return CallError::Connect(other.to_string()),
            None => next = e.source(),
        }
    }
    let mut next = Some(err);
    while let Some(e) = next {
        if e.is::<tonic::ConnectError>() {
            return CallError::Connect(error_chain(message, err));
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return CallError::Io(std::io::Error::new(io.kind(), error_chain(message, err)));
        }
        next = e.source();
    }
    CallError::Io(std::io::Error::other(error_chain(message, err)))
}

/// `first`, then the messages of `err` and its sources, `: `-separated,
/// skipping those already said (tonic and hyper often repeat their source's
/// message in their own).
fn error_chain(first: &str, err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = first.to_string();
    let mut next = Some(err);
    while let Some(err) = next {
        let message = err.to_string();
        if !text.contains(&message) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&message);
        }
        next = err.source();
    }
    text
}

/// The canonical name of a gRPC status code, as in the gRPC specification
/// and grpc-java (`UNAVAILABLE`, not tonic's `Unavailable`).
fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_convert_field_for_field() {
        for i in [0, 1, 99] {
            let order = contract::Order::sample(i);
            assert_eq!(from_pb(to_pb(&order)), order);
        }
    }

    #[test]
    fn server_statuses_keep_code_and_message() {
        let err = status_error(Status::new(Code::NotFound, "no such thing"));
        assert!(
            matches!(&err, CallError::Server(m) if m == "NOT_FOUND: no such thing"),
            "{err:?}"
        );
    }

    #[test]
    fn options_are_rejected() {
        let mut options = BTreeMap::new();
        assert!(Grpc::new(&options).is_ok());
        options.insert("compression".to_string(), "gzip".to_string());
        assert!(matches!(Grpc::new(&options), Err(CallError::Config(_))));
    }

    #[tokio::test]
    async fn refused_connection_is_a_connect_error() {
        // Bind then drop a listener to get a local port nobody listens on.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let result = Grpc
            .connect(&addr.to_string(), WireCounter::default())
            .await;
        assert!(matches!(result, Err(CallError::Connect(_))), "{result:?}");
    }
}
