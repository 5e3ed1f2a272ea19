//! The wire protocols rpclab's load client speaks, each natively, usable
//! without the load engine (`rpclab-client`) that drives them.
//!
//! * [`protocol`]: the one trait a wire protocol implements, and how a
//!   reply is verified;
//! * [`call_error`]: why a call failed, in the classes results report;
//! * [`exchange`]: a call as a sans-IO exchange (request bytes, a reply
//!   recognised in the bytes received), for protocols that can be one;
//! * [`protocols`]: the implementations, and the one list that names them
//!   ([`protocols::ProtocolName`], [`protocols::dispatch`]);
//!
//! and what several protocols share:
//!
//! * [`net`]: TCP connections that count their wire bytes;
//! * [`mux`]: multiplexed connections (many calls in flight matched by
//!   request id), with [`id_hash`] for their request-id maps, and
//!   [`mux_exchange`]: the same protocols' calls one at a time, as a
//!   sans-IO exchange;
//! * [`http`]: HTTP/1.1 keep-alive connections (Hessian, SOAP);
//! * [`discovery`]: finding providers in a registry (ZooKeeper);
//! * [`java_contract`]: the contract's Java names and its values in Hessian
//!   and Java serialization, shared by the Java frameworks' protocols;
//! * [`reference`]: a reply verified once by value, then by its bytes;
//! * [`template`]: ghz's template values (`{{.RequestNumber}}`,
//!   `{{randomString 8}}`, ...) parsed once, rendered per call, for the
//!   generic calls' data and metadata;
//! * [`metadata`]: a generic call's metadata (`-m`): gRPC headers, checked
//!   against HTTP/2's rules before any load, and Dubbo attachments;
//! * [`expect`]: partial expectations and field matchers (`$any`,
//!   `$type`, `$regex`, `$range`) of the three generic calls;
//! * [`tls`]: TLS (rustls) for the protocols that offer it (gRPC, Hessian,
//!   SOAP): one setup, plaintext or TLS connections;
//! * `testing` (feature `testing`): what the protocols' tests share
//!   (options, refusals, in-process HTTP/1.1 servers).

pub mod call_error;
pub mod discovery;
mod error_text;
pub mod exchange;
pub mod expect;
pub mod http;
pub mod id_hash;
pub mod java_contract;
pub mod metadata;
pub mod mux;
pub mod mux_connection;
pub mod mux_exchange;
pub mod net;
pub mod prepared;
pub mod protocol;
pub mod protocols;
pub mod reference;
pub mod template;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tls;
