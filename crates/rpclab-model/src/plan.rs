//! A reproduction's analysis plan, fixed before its run.
//!
//! A verdict is worth something only if someone who doubts it would reach
//! it by the same procedure: the rule, its error rate, its bands and the
//! design that feeds it are decided before the data are seen, recorded in
//! the run's manifest with their hash, and named by every verdict decided
//! under them. A seed's definition (`compose/seeds/<id>.toml`, `[plan]`)
//! holds its plan; a change to it is a commit of its own, made before the
//! run it applies to (`docs/methodology.md`, "The analysis plan").

use serde::{Deserialize, Serialize};

/// The rule this crate's verdicts implement: a fixed number of JVM starts
/// × rounds per level (no look at the data decides how many), each pair's
/// ratio the geometric mean of its per-start geometric means, its interval
/// Student's t over the start means (the variation between starts
/// included), simultaneous over a claim's pairs by Bonferroni, magnitude
/// and equivalence three-way against their bands.
pub const RULE: &str = "starts-t-bonferroni/1";

/// How a seed's reproduction is measured and judged, as written in its
/// definition (`[plan]`) and recorded in the run's manifest and results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The decision rule and its version ([`RULE`]); a definition naming
    /// another is refused, so that a plan is never judged by a rule it did
    /// not choose.
    pub rule: String,
    /// The chance of a false verdict per claim (family-wise over its
    /// pairs).
    pub alpha: f64,
    /// Relative differences below this are "within noise": a direction is
    /// decided when the interval clears 1 and the ratio reaches 1 + floor,
    /// or the whole interval lies within [1 / (1 + floor), 1 + floor].
    pub noise_floor: f64,
    /// A published ratio P "matches" when the whole interval lies inside
    /// [P / (1 + t), P · (1 + t)], "differs" when it lies wholly outside.
    pub magnitude_tolerance: f64,
    /// "About as fast" holds when the whole interval lies inside 1 ± t,
    /// does not hold when it lies wholly outside.
    pub equivalence_tolerance: f64,
    /// The profile the design and windows belong to (`reproduce`); a run
    /// under another profile is exploratory, and its verdicts say so.
    pub profile: String,
    /// Independent JVM starts per system: a fresh container, primed, its
    /// rounds interleaved with the other systems' (JMH's forks).
    pub starts: u32,
    /// Rounds per level within each start.
    pub rounds: u32,
    /// Why this design: the pilot and the power calculation it came from.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The profile's windows, copied in when the plan is recorded so that
    /// its hash covers them (absent from a definition's `[plan]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows: Option<Windows>,
}

/// The measuring windows of a plan's profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Windows {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prime_s: Option<f64>,
    pub warmup_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_max_s: Option<f64>,
    /// Absent where windows end by the post's call counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_s: Option<f64>,
    pub min_calls: u64,
}

impl Plan {
    /// What is wrong with it, in one line, or nothing.
    pub fn check(&self) -> Result<(), String> {
        if self.rule != RULE {
            return Err(format!(
                "plan rule `{}` is not one this rpclab implements (`{RULE}`)",
                self.rule
            ));
        }
        if !(self.alpha > 0.0 && self.alpha < 0.5) {
            return Err(format!("plan alpha {} must lie in (0, 0.5)", self.alpha));
        }
        for (name, t) in [
            ("noise_floor", self.noise_floor),
            ("magnitude_tolerance", self.magnitude_tolerance),
            ("equivalence_tolerance", self.equivalence_tolerance),
        ] {
            if !(t > 0.0 && t < 1.0) {
                return Err(format!("plan {name} {t} must lie in (0, 1)"));
            }
        }
        if self.starts < 2 {
            return Err(format!(
                "plan starts = {}: at least 2 JVM starts are needed to measure the variation between them (3 or more to decide anything at a useful width)",
                self.starts
            ));
        }
        if self.rounds == 0 {
            return Err("plan rounds = 0: at least one round per start".into());
        }
        Ok(())
    }
}

/// A plan as recorded with a run: the plan and the SHA-256 of its
/// canonical JSON (field order as declared, windows included).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedPlan {
    #[serde(flatten)]
    pub plan: Plan,
    pub hash: String,
}

impl RecordedPlan {
    /// `ice-dubbo-thrift-grpc@3f2a9c1b`: how a verdict names its plan.
    pub fn label(&self, seed: &str) -> String {
        format!("{seed}@{}", &self.hash[..self.hash.len().min(8)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn plan() -> Plan {
        Plan {
            rule: RULE.into(),
            alpha: 0.05,
            noise_floor: 0.05,
            magnitude_tolerance: 0.25,
            equivalence_tolerance: 0.10,
            profile: "reproduce".into(),
            starts: 3,
            rounds: 2,
            reason: String::new(),
            windows: None,
        }
    }

    #[test]
    fn a_plan_with_another_rule_or_one_start_is_refused_in_one_line() {
        assert_eq!(plan().check(), Ok(()));
        let other = Plan {
            rule: "rounds-until-decided/0".into(),
            ..plan()
        };
        assert!(other.check().unwrap_err().contains("not one this rpclab"));
        let one = Plan {
            starts: 1,
            ..plan()
        };
        assert!(one.check().unwrap_err().contains("at least 2 JVM starts"));
        let wide = Plan {
            alpha: 0.7,
            ..plan()
        };
        assert!(wide.check().is_err());
    }
}
