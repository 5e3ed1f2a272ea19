//! The crate's integration tests, one binary (`--test lab`): one
//! compile and link of the test harness and its dependencies instead of
//! one per file. Each module is what was a file of its own; filter with
//! its name (`cargo test --test lab <module>::`).

#[path = "../common/mod.rs"]
mod common;
mod lab_capacity;
mod lab_multi_host;
mod lab_resume;
mod lab_rounds;
mod lab_servers_dir;
mod lab_smoke;
mod lab_target;
