//! rpclab's load engine: drives the protocols of [`rpclab_protocols`] and
//! measures them.
//!
//! * [`load`]: the load models (closed and open loop) that drive calls, on
//!   tokio tasks;
//! * [`poll_loop`]: the poll engine, one `epoll` loop over a closed loop's
//!   connections for a protocol with a sans-IO exchange;
//! * [`stats`]: lock-free per-worker recording, merged once at the end;
//! * [`warmup`]: when the warm-up is over (every connection answered, the
//!   intervals steady);
//! * [`wrong_replies`]: a service whose every reply is wrong stops the
//!   warm-up at once, with the first wrong reply;
//! * [`window`]: the one rule for what a window counts, and every per-call
//!   figure derived from it;
//! * [`runner`]: runs one cell ([`rpclab_model::spec::CellSpec`]) and returns
//!   its [`rpclab_model::result::ClientReport`];
//! * [`probe`]: one verified call, used as the lab's readiness check;
//! * [`calibrate`]: a fixed CPU and loopback measurement of the CPU set the
//!   process runs on, recorded in every snapshot;
//! * [`ghz`]: a ghz command line as one cell (`rpclab-client ghz …`), and
//!   the report in ghz's output formats;
//! * [`runtime`]: the binaries' tokio runtime, current-thread on one CPU.
//!
//! The binary `rpclab-client` is a thin command line over these. The
//! protocols live in their own crate, so that a codec or a protocol can be
//! used (and fuzzed, and tested) without the engine; the modules a user of
//! the engine names a protocol with are re-exported here.

pub use rpclab_protocols::{java_contract, protocol, protocols};

pub mod calibrate;
pub mod ghz;
pub mod live;
pub mod load;
pub mod poll_loop;
pub mod probe;
pub mod runner;
pub mod runtime;
pub mod stats;
pub mod warmup;
pub mod window;
pub mod wrong_replies;
