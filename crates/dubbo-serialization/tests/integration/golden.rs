//! Java writes, Rust reads and writes: every golden vector (written by
//! Dubbo 2.5's GenericObjectOutput, golden/regenerate.sh) reads back as its
//! case, and the Rust writer produces the same bytes.

use crate::common;

use common::{case_names, check_read, golden, rust_write};
use java_interop::assert_same_bytes;

#[test]
fn rust_reads_every_golden_vector() {
    for name in case_names() {
        check_read(name, &golden().vector(name));
    }
}

#[test]
fn rust_writes_every_golden_vector_byte_for_byte() {
    for name in case_names() {
        assert_same_bytes(name, &rust_write(name), &golden().vector(name));
    }
}

#[test]
fn every_golden_vector_has_a_case() {
    let names = case_names();
    for entry in std::fs::read_dir(common::golden().vectors()).unwrap() {
        let file = entry.unwrap().file_name().into_string().unwrap();
        let name = file.strip_suffix(".bin").unwrap();
        assert!(names.contains(&name), "{file} has no case in tests/common");
    }
}
