//! The commands' layer, under `main.rs`'s parsing: what `lab reproduce`
//! and `lab capacity` run, and what `lab run` and `lab reproduce` do with
//! a run once it returns. It may use every layer below; nothing imports
//! it.

pub mod capacity;
pub mod outcome;
pub mod reproduce;
pub mod target;
