//! Quick runs without editing TOML: `lab run --duration 10s --repetitions 5
//! --levels 1,8,32 --variant grpc-java/1.83`.
//!
//! The flags change the profile the run uses (and so the lab definition
//! that `manifest.toml` records as run, where they show like any setting
//! of the file, and which `--resume` must match), or select variants
//! (recorded as the manifest's `variants`). Nothing else reads them.

use crate::definitions::lab::Profile;
use crate::definitions::manifest::Manifest;
use anyhow::{bail, Result};

/// What the command line changes in the profile.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    /// Each window's length, seconds (instead of `measure_s` or the
    /// scenarios' published call counts).
    pub measure_s: Option<f64>,
    /// Repetitions of each cell (in a profile with rounds: the rounds per
    /// start; the starts stay the profile's).
    pub repetitions: Option<u32>,
    /// The concurrency levels of every closed-loop scenario.
    pub levels: Vec<u32>,
}

impl Overrides {
    /// `profile` with these overrides.
    pub fn apply(&self, profile: &mut Profile) {
        if let Some(s) = self.measure_s {
            profile.measure_s = Some(s);
            profile.seed_counts = false;
        }
        if let Some(n) = self.repetitions {
            profile.repetitions = n;
            if let Some(rounds) = &mut profile.rounds {
                rounds.per_start = n;
            }
        }
        if !self.levels.is_empty() {
            profile.levels = self.levels.clone();
            profile.max_levels = None;
        }
    }
}

/// `--duration` and `--engine-wait`: `10s`, `500ms`, `2m` or plain
/// seconds, the one duration syntax every command reads
/// ([`rpclab_model::duration`]).
pub use rpclab_model::duration::parse_seconds as parse_duration;

/// The (server, variant) pairs that `--variant` names among `selected`:
/// each name is `server/variant`, or a variant's name alone (every
/// selected server's variant of that name). A name that matches nothing
/// is an error that lists the variants there are.
pub fn variant_pairs(names: &[String], selected: &[&Manifest]) -> Result<Vec<(String, String)>> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for name in names {
        let (server, variant) = match name.split_once('/') {
            Some((s, v)) => (Some(s), v),
            None => (None, name.as_str()),
        };
        let found: Vec<(String, String)> = selected
            .iter()
            .filter(|m| server.is_none_or(|s| s == m.name || s == m.framework))
            .flat_map(|m| m.variants.iter().map(move |v| (m, v)))
            .filter(|(_, v)| v.name == variant)
            .map(|(m, v)| (m.name.clone(), v.name.clone()))
            .collect();
        if found.is_empty() {
            let known: Vec<String> = selected
                .iter()
                .flat_map(|m| {
                    m.variants
                        .iter()
                        .map(move |v| format!("{}/{}", m.name, v.name))
                })
                .collect();
            bail!(
                "--variant `{name}` matches no variant of the selected servers; known: {}",
                known.join(", ")
            );
        }
        for pair in found {
            if !pairs.contains(&pair) {
                pairs.push(pair);
            }
        }
    }
    Ok(pairs)
}
