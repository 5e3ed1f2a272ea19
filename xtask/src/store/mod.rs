//! The store: what a run leaves in its results folder ([`snapshot`]),
//! written as the run goes. Data only; its types are the model's
//! (`rpclab_model::result`, `rpclab_model::manifest`) and its arithmetic
//! too (`rpclab_model::aggregate`), so the report (`rpclab_report`) reads
//! and re-renders any old snapshot without the engine.

pub mod snapshot;
