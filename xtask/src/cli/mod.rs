//! The commands' layer, under `main.rs`'s parsing: what `lab reproduce`
//! and `lab capacity` run, and what `lab run` and `lab reproduce` do with
//! a run once it returns. It may use every layer below; nothing imports
//! it.

pub mod capacity;
pub mod kube;
#[cfg(feature = "kubernetes")]
pub mod kube_cluster;
pub mod outcome;
pub mod reproduce;
pub mod target;

/// A command line split at its spaces, as the tests of the commands that
/// rewrite one (`--resume`'s, a seed's own) write their input.
#[cfg(test)]
fn words(line: &str) -> Vec<String> {
    line.split(' ').map(str::to_owned).collect()
}
