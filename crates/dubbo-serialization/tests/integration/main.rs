//! The crate's integration tests, one binary (`--test integration`): one
//! compile and link of the test harness and its dependencies instead of
//! one per file. Each module is what was a file of its own; filter with
//! its name (`cargo test --test integration <module>::`).

#[path = "../common/mod.rs"]
mod common;
mod golden;
mod java_interop;
mod proptest;
