//! Typed contracts shared by every part of rpclab.
//!
//! The orchestrator (`xtask`) and the load client (`rpclab-client`) run in
//! different processes, usually in different containers. They agree on three
//! things, all defined here so that neither side can drift from the other:
//!
//! * [`contract`]: the logical service every server under test implements, and
//!   the deterministic payloads sent to it (the same bytes of meaning for every
//!   framework, whatever its wire format);
//! * [`spec`]: what one measurement cell asks the client to do;
//! * [`result`]: what the client reports back for that cell, which becomes a
//!   row of `results.json`.
//!
//! Beside them, the data of a snapshot that the orchestrator writes and the
//! report reads: [`manifest`] (`manifest.toml`, how the run was made) and
//! [`aggregate`] (the repetitions of a cell summarised), and the
//! [`threshold`]s that fail a run (`p99<2ms`), judged on the client's
//! window or on each cell of a snapshot, with their [`breach`]es as a
//! snapshot keeps them, a [`capacity`] search under an SLO as a
//! snapshot keeps it, the one rule of which side was a cell's
//! [`limit`], and where a run's wall time went, by [`phases`]. Two
//! readers every command shares: the one [`duration`] syntax (`10s`,
//! `500ms`) and the one [`percentile`] type (`p(99.9)`); and the
//! [`exposition`] rules of InfluxDB's and Prometheus' text formats.
#![forbid(unsafe_code)]

pub mod aggregate;
pub mod breach;
pub mod capacity;
pub mod contract;
pub mod duration;
pub mod exposition;
pub mod limit;
pub mod manifest;
pub mod percentile;
pub mod phases;
pub mod plan;
pub mod random;
pub mod result;
pub mod run_error;
pub mod spec;
pub mod threshold;
pub mod verdict;

#[cfg(test)]
mod testing;
