//! The verdict of a run's thresholds as a snapshot keeps it: the
//! thresholds asked and each breach, data only. Apart from
//! [`crate::threshold`] (the grammar and the judging), so that
//! `results.json`'s type can hold it without depending on the judging,
//! which reads the results.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The thresholds `lab run` was given and the cells that breached them,
/// kept in `results.json` (`thresholds`; added compatibly to schema
/// version 1 on 2026-12-05: absent when none was given, and in older
/// snapshots).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThresholdCheck {
    /// The thresholds, as written (`p99<2ms`).
    pub asked: Vec<String>,
    /// Every breach, one per threshold and cell; empty: all held.
    #[serde(default)]
    pub breaches: Vec<Breach>,
}

/// A threshold one window did not hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Breach {
    /// The threshold, as written.
    pub threshold: String,
    /// The window: `server/variant scenario c=N rep R` (a cell of a
    /// snapshot) or the client's `protocol operation`.
    pub subject: String,
    /// The figure judged, with its unit: `p99 3.100 ms`.
    pub observed: String,
}

impl fmt::Display for Breach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "threshold {} breached: {} {}",
            self.threshold, self.subject, self.observed
        )
    }
}
