//! The shop fixture's descriptors (`fixtures/grpc-shop/proto`), compiled by
//! the vendored protoc, for the generic call's tests (its own, the
//! request's and the comparison's): a module of its own, so that those
//! tests do not import the module that imports them.

use prost_reflect::DescriptorPool;
use std::sync::OnceLock;

pub fn shop() -> DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| DescriptorPool::decode(protoset().as_slice()).unwrap())
        .clone()
}

/// The fixture's descriptor set, as `protoc --include_imports` writes it.
pub fn protoset() -> Vec<u8> {
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/grpc-shop/proto");
    let out = std::env::temp_dir().join(format!("rpclab-shop-{}.protoset", std::process::id()));
    let status = std::process::Command::new(protoc_bin_vendored::protoc_bin_path().unwrap())
        .arg(format!("--proto_path={}", root.display()))
        .arg(format!("--descriptor_set_out={}", out.display()))
        .arg("--include_imports")
        .arg("shop/v1/inventory.proto")
        .status()
        .unwrap();
    assert!(status.success());
    let bytes = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    bytes
}
