//! The crate's integration tests, one binary (`--test integration`): one
//! compile and link of the test harness and its dependencies instead of
//! one per file. Each module is what was a file of its own; filter with
//! its name (`cargo test --test integration <module>::`).

#[path = "../common/mod.rs"]
mod common;
mod dubbo_generic;
mod dubbo_generic_golden;
mod dubbo_golden;
mod floor;
mod ghz_cli;
mod grpc_generic;
mod grpc_http2;
mod grpc_streams;
mod http_tls;
mod motan_golden;
mod protocols_bolt;
mod protocols_dubbo;
mod protocols_grpc;
mod protocols_hessian;
mod protocols_ice;
mod protocols_motan;
mod protocols_rmi;
mod protocols_soap;
mod protocols_thrift;
mod thrift_generic;
mod wrong_service;
