//! Java writes, Rust reads (and writes the same bytes): every vector in
//! golden/vectors/{kryo4,kryo5} was written by Dubbo's own KryoObjectOutput
//! (Dubbo 2.6.12 + Kryo 4.0.1; Dubbo 3.3.6 + dubbo-serialization-kryo
//! 3.2.0 / Kryo 5.4). Each is read back step by step and compared with the
//! case's values, and the case written with the Rust API must be the same
//! bytes.

use crate::common;

use common::{cases, check_read, dialects, golden, rust_write, Step};
use java_interop::assert_same_bytes;
use kryo::Dialect;

#[test]
fn every_case_has_a_vector_and_every_vector_a_case() {
    for (dir, _) in dialects() {
        let mut on_disk: Vec<String> = std::fs::read_dir(golden().vectors().join(dir))
            .expect("golden/vectors")
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter_map(|n| n.strip_suffix(".bin").map(str::to_owned))
            .collect();
        on_disk.sort();
        let mut names: Vec<String> = cases()
            .into_iter()
            .map(|(n, _)| n.to_owned())
            .filter(|n| n != "utf_1m") // not checked in (1 MiB); see Generate.java
            .collect();
        names.sort();
        assert_eq!(
            on_disk, names,
            "{dir}: run golden/regenerate.sh after changing Cases.java"
        );
    }
}

/// Every case that has a vector of a line: `<line>/<name>`, the line's
/// dialect, the case's steps and the bytes Java wrote.
fn java_vectors() -> Vec<(String, Dialect, Vec<Step>, Vec<u8>)> {
    let mut found = Vec::new();
    for (dir, dialect) in dialects() {
        for (name, steps) in cases() {
            let path = golden().vectors().join(dir).join(format!("{name}.bin"));
            if let Ok(bytes) = std::fs::read(&path) {
                found.push((format!("{dir}/{name}"), dialect, steps, bytes));
            }
        }
    }
    found
}

#[test]
fn rust_reads_what_java_writes() {
    let mut checked = 0;
    for (at, dialect, steps, bytes) in java_vectors() {
        if let Err(e) = check_read(&steps, &bytes, dialect) {
            panic!("{at}: {e}");
        }
        checked += 1;
    }
    assert!(checked >= 60, "only {checked} vectors checked");
}

#[test]
fn rust_writes_what_java_writes() {
    let mut checked = 0;
    for (case, dialect, steps, java) in java_vectors() {
        let Some(rust) = rust_write(&steps, dialect) else {
            continue;
        };
        assert_same_bytes(&case, &rust, &java);
        checked += 1;
    }
    assert!(checked >= 56, "only {checked} vectors compared");
}

#[test]
fn the_two_lines_differ_where_documented() {
    // Same calls, different bytes: this is why the client needs to know the
    // server's Kryo line.
    let read = |dir: &str, name: &str| golden().vector(&format!("{dir}/{name}"));
    for name in [
        "prims",
        "order",
        "orders_two",
        "map_attachments",
        "utf_lengths",
    ] {
        assert_ne!(read("kryo4", name), read("kryo5", name), "{name}");
    }
    for name in ["object_string", "utf_short", "utf_unicode", "raw_varints"] {
        assert_eq!(read("kryo4", name), read("kryo5", name), "{name}");
    }
}

#[test]
fn dialect_ids_are_the_ones_dubbos_kryo_registered() {
    // golden/vectors/<line>/ids.txt: `kryo.getRegistration(c).getId()` of
    // the Kryo instance Dubbo's ObjectOutput uses, written by Generate.
    for (dir, d) in dialects() {
        let text = std::fs::read_to_string(golden().vectors().join(dir).join("ids.txt")).unwrap();
        let id = |class: &str| -> u32 {
            text.lines()
                .find_map(|l| l.strip_prefix(class)?.strip_prefix(' ')?.parse().ok())
                .unwrap_or_else(|| panic!("{dir}: no id for {class}"))
        };
        assert_eq!(id("java.util.HashMap"), d.hash_map, "{dir}");
        assert_eq!(id("java.util.ArrayList"), d.array_list, "{dir}");
        assert_eq!(id("java.lang.String"), kryo::ids::STRING, "{dir}");
        assert_eq!(id("int"), kryo::ids::INT, "{dir}");
        assert_eq!(id("long"), kryo::ids::LONG, "{dir}");
        assert_eq!(id("double"), kryo::ids::DOUBLE, "{dir}");
    }
}
