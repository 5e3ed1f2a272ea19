//! The "Rust writes what Java writes" check of the golden tests: equal
//! bytes, or a failure that shows where they part.

/// Panics unless `rust` and `java` are the same bytes, naming the `case`,
/// both lengths, the first offset where they differ and the bytes around
/// it on each side.
pub fn assert_same_bytes(case: &str, rust: &[u8], java: &[u8]) {
    if rust == java {
        return;
    }
    let at = rust
        .iter()
        .zip(java)
        .position(|(a, b)| a != b)
        .unwrap_or(rust.len().min(java.len()));
    let around = |b: &[u8]| b[at.saturating_sub(8)..(at + 16).min(b.len())].to_vec();
    panic!(
        "{case}: Rust wrote {} bytes, Java {}; first difference at offset {at}\nrust: {:02x?}\njava: {:02x?}",
        rust.len(),
        java.len(),
        around(rust),
        around(java)
    );
}
