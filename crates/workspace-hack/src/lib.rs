//! No code: see this crate's `Cargo.toml`. Its dependencies turn on, in a
//! `-p xtask` build, the features `cargo test --workspace` turns on, so
//! both builds share their artifacts.
