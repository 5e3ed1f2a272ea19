//! The store: what a run leaves in its results folder ([`snapshot`]) and
//! its repetitions summarised ([`aggregate`]). Data and the arithmetic that
//! summarises it only, so the report can re-render any old snapshot
//! without the engine.

pub mod aggregate;
pub mod snapshot;
