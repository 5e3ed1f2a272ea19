//! Empty: it exists so that `[build-dependencies]` (host crates whose
//! features the tests' proc-macros turn on) are part of xtask's build
//! (Cargo.toml says why).
fn main() {}
