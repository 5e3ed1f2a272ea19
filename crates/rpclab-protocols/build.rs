//! Generates the gRPC code of the contract (`contract/bench.proto`).
//!
//! protoc comes from the `protoc-bin-vendored` crate, so building needs no
//! system protoc. Two outputs, both in `OUT_DIR`:
//!
//! * `grpc-client/rpclab.rs`: the messages only, included by
//!   `src/protocols/grpc.rs` (its calls are made on `h2`, not through a
//!   generated stub);
//! * `grpc-server/rpclab.rs`: messages and the `Bench` server trait, only
//!   with the `grpc-server` feature (`protocols::grpc::server_pb`: the
//!   in-process servers of tests and the `rpclab-echo` tool), so the
//!   protocols themselves need no tonic.

use std::path::{Path, PathBuf};

const PROTO: &str = "../../contract/bench.proto";
const INCLUDE: &str = "../../contract";

fn main() {
    println!("cargo:rerun-if-changed={PROTO}");
    println!("cargo:rerun-if-changed=build.rs");

    let protoc = protoc_bin_vendored::protoc_bin_path()
        .expect("protoc-bin-vendored has no protoc for this build host");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));

    generate(&protoc, &out_dir.join("grpc-client"), false, false);
    if std::env::var_os("CARGO_FEATURE_GRPC_SERVER").is_some() {
        generate(&protoc, &out_dir.join("grpc-server"), false, true);
    }
}

fn generate(protoc: &Path, out: &Path, client: bool, server: bool) {
    std::fs::create_dir_all(out).expect("create the generated code directory");
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc);
    tonic_prost_build::configure()
        .build_client(client)
        .build_server(server)
        .build_transport(false)
        .out_dir(out)
        .compile_with_config(config, &[PROTO], &[INCLUDE])
        .unwrap_or_else(|e| panic!("generating gRPC code from {PROTO}: {e}"));
}
