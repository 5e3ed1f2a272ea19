//! The crate's integration tests, one binary (`--test checks`): one
//! compile and link of the test harness and its dependencies instead of
//! one per file. Each module is what was a file of its own; filter with
//! its name (`cargo test --test checks <module>::`).

#[path = "../common/mod.rs"]
mod common;
mod feature_union;
mod function_length;
mod lab_cli;
mod no_import_cycles;
mod report_in_browser;
