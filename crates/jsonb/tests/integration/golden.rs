//! Java writes, Rust reads (and writes the same bytes): every vector in
//! golden/vectors was written by Dubbo 3.3.6's FastJson2ObjectOutput over
//! fastjson2 2.0.56 (golden/regenerate.sh). Each must decode to its case,
//! re-encode byte for byte, and, where the case has no HashMap (whose order
//! is Java's hash order), the Rust writer must produce the same bytes from
//! the case itself.

use crate::common;

use common::{case, case_names, golden, rust_check, rust_write, Step};
use fastjson2_jsonb::dubbo::{ObjectInput, ObjectOutput};
use java_interop::assert_same_bytes;

#[test]
fn every_vector_has_a_case_and_every_case_a_vector() {
    let mut files: Vec<String> = std::fs::read_dir(golden().vectors())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".bin").map(str::to_owned))
        .collect();
    files.sort();
    let mut names: Vec<String> = case_names().into_iter().map(str::to_owned).collect();
    names.sort();
    assert_eq!(files, names);
}

#[test]
fn rust_reads_what_java_writes() {
    let mut failures = Vec::new();
    for name in case_names() {
        if let Err(e) = rust_check(name, &golden().vector(name)) {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn decoded_vectors_reencode_byte_for_byte() {
    for name in case_names() {
        let golden = golden().vector(name);
        let mut input = ObjectInput::new(&golden);
        let mut out = ObjectOutput::new();
        while !input.is_at_end() {
            let v = input.read_value().unwrap_or_else(|e| panic!("{name}: {e}"));
            out.write_value(&v).unwrap();
        }
        assert!(
            out.as_bytes() == golden.as_slice(),
            "{name}: re-encoded bytes differ from Java's"
        );
    }
}

#[test]
fn rust_writes_what_java_writes() {
    let mut compared = 0;
    for name in case_names() {
        if case(name)
            .iter()
            .any(|s| matches!(s, Step::Attachments(p) if p.len() > 1))
        {
            continue;
        }
        assert_same_bytes(name, &rust_write(name), &golden().vector(name));
        compared += 1;
    }
    assert!(compared >= 30, "only {compared} cases compared");
}

#[test]
fn rust_reads_what_rust_writes() {
    for name in case_names() {
        rust_check(name, &rust_write(name)).unwrap();
    }
}
