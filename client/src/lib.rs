//! rpclab's load client.
//!
//! The client speaks every framework's protocol natively and measures it:
//!
//! * [`protocol`]: the one trait a wire protocol implements;
//! * [`protocols`]: the implementations, and the name → implementation map;
//! * [`mux`]: multiplexed connections (many calls in flight matched by
//!   request id), shared by the protocols that use them;
//! * [`load`]: the load models (closed loop today) that drive calls;
//! * [`stats`]: lock-free per-worker recording, merged once at the end;
//! * [`warmup`]: when the warm-up is over (every connection answered, the
//!   intervals steady);
//! * [`window`]: the one rule for what a window counts, and every per-call
//!   figure derived from it;
//! * [`runner`]: runs one cell ([`rpclab_model::spec::CellSpec`]) and returns
//!   its [`rpclab_model::result::ClientReport`];
//! * [`java_contract`]: the contract's Java names and its values in Hessian
//!   and Java serialization, shared by the Java frameworks' protocols;
//! * [`discovery`]: finding providers in a registry (ZooKeeper);
//! * [`probe`]: one verified call, used as the lab's readiness check;
//! * [`floor`]: the raw-socket floor under any client (`rpclab-floor`);
//! * [`calibrate`]: a fixed CPU and loopback measurement of the CPU set the
//!   process runs on, recorded in every snapshot.
//!
//! The binary `rpclab-client` is a thin command line over these.

pub mod calibrate;
pub mod call_error;
pub mod discovery;
pub mod exchange;
pub mod floor;
pub mod http;
pub mod id_hash;
pub mod java_contract;
pub mod load;
pub mod mux;
pub mod net;
pub mod poll_loop;
pub mod probe;
pub mod protocol;
pub mod protocols;
pub mod reference;
pub mod runner;
pub mod self_cost;
pub mod stats;
pub mod warmup;
pub mod window;
