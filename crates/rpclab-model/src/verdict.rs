//! A reproduction's verdicts and measured twins as data.
//!
//! `lab reproduce` decides every claim of a post once, from the snapshot's
//! cells, and stores the outcome here, inside `results.json`
//! ([`crate::result::Reproduction::verdicts`] and
//! [`crate::result::PublishedCell::measured`]). Every rendering (the
//! summary, the HTML page, the README's claims table, `lab compare`) reads
//! these records and recomputes nothing, so two renderings of one snapshot
//! cannot disagree, and two snapshots can be compared claim by claim.

use serde::{Deserialize, Serialize};

/// Which way the measurement points, over the parts of a claim that were
/// decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// As claimed (for an equivalence: level within its tolerance; for
    /// no-errors: no call failed).
    Holds,
    /// The opposite of the claim.
    Reversed,
    /// The systems are level: the difference is inside the noise band.
    WithinNoise,
    /// False without a direction: systems claimed level are not, or calls
    /// failed where none should have.
    DoesNotHold,
    /// Nothing measured that could decide it.
    NotComparable,
}

impl Direction {
    /// As every rendering prints it.
    pub fn label(self) -> &'static str {
        match self {
            Direction::Holds => "holds",
            Direction::Reversed => "reversed",
            Direction::WithinNoise => "within noise",
            Direction::DoesNotHold => "does not hold",
            Direction::NotComparable => "not comparable",
        }
    }
}

/// Whether the measured ratio bears out the published one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Magnitude {
    /// The whole interval lies inside the tolerance band around the
    /// published ratio.
    Matches,
    /// The whole interval lies outside it.
    Differs,
    /// The interval reaches across an edge of the band: the measurement
    /// cannot tell (a wider interval never makes a match easier).
    Undecided,
}

impl Magnitude {
    pub fn label(self) -> &'static str {
        match self {
            Magnitude::Matches => "matches",
            Magnitude::Differs => "differs",
            Magnitude::Undecided => "undecided",
        }
    }
}

/// What a pair's ratio was computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// The claim's measure, on figures without a caveat.
    Trustworthy,
    /// Calls per server core-second (throughput ÷ the server's busy cores):
    /// a client-bound cell whose server was not the limit.
    PerServerCore,
    /// The server's CPU time per call: a latency-bound cell (one synchronous
    /// caller), where round trips rather than a CPU set the rate.
    ServerCpuPerCall,
    /// Shown for orientation; decides nothing.
    Indicative,
}

impl Basis {
    pub fn label(self) -> &'static str {
        match self {
            Basis::Trustworthy => "trustworthy",
            Basis::PerServerCore => "per server core",
            Basis::ServerCpuPerCall => "server CPU per call",
            Basis::Indicative => "indicative",
        }
    }

    /// How much a verdict on this basis carries over (higher: more); a
    /// claim takes the weakest of its parts'.
    pub fn strength(self) -> u8 {
        match self {
            Basis::Trustworthy => 3,
            Basis::ServerCpuPerCall => 2,
            Basis::PerServerCore => 1,
            Basis::Indicative => 0,
        }
    }
}

/// One published figure's measured twin: the lab's value in the published
/// unit, over the rounds (or repetitions) of its cell.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Twin {
    /// The median over rounds, with its order-statistic interval when there
    /// are two rounds or more (in results.json, its fields are the twin's).
    #[serde(flatten)]
    pub value: Spread,
    /// The aggregate's flags (`not-steady`, `client-bound`, `noisy`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// No flag keeps it out of a verdict.
    pub trustworthy: bool,
    /// What to print beside the figure, in its published unit: `lower
    /// bound` (a client-bound throughput), `upper bound` (a time or latency
    /// derived from one), `unsteady`, `too few calls`, `shared CPUs`, `host
    /// busy`. Empty when trustworthy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<String>,
    /// The busiest server and client shares of their CPU sets over its
    /// cells (0..1), so a reader sees where the limit was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_busy: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_busy: Option<f64>,
}

/// One pair of a claim at one level: `over` against `under`, as a speed
/// ratio (above 1: `over` is better).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairVerdict {
    pub over: String,
    pub under: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<f64>,
    /// The median of the per-round ratios (or the ratio of medians where
    /// the cells were not measured in rounds).
    pub measured: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f64>,
    /// Rounds both systems were measured in (the ratios' count).
    pub rounds: u32,
    /// The ratio was taken round by round (false: the ratio of the two
    /// medians, with the corners of their intervals, for cells not
    /// measured in rounds).
    #[serde(default)]
    pub within_rounds: bool,
    pub basis: Basis,
    pub direction: Direction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub magnitude: Option<Magnitude>,
    /// Decided on a basis that carries over (not indicative, and the
    /// interval clear of the noise band's edges).
    pub decided: bool,
    /// Why it is not decided, in words (which figure, which flag, the CPU
    /// busy shares).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_undecided: Option<String>,
    /// Both systems were latency-bound (one synchronous caller, neither
    /// side's cores the limit): the rate is round trips, which another host
    /// changes for both alike, so the verdict says less about the servers'
    /// code; `server_cpu` says what their CPU cost per call was.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub host_dependent: bool,
    /// For a latency-bound pair, the speed ratio of server CPU per call
    /// (`under`'s µs per call over `over`'s: above 1, `over` is cheaper).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu: Option<Spread>,
    /// Rounds left out of the ratio, and why (`round 3: host-busy (ice)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// Each JVM start's own ratio (the geometric mean of its rounds), in
    /// start order: the dots of the claim's forest plot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub starts: Vec<f64>,
    /// The throughput ratio and the server-CPU-per-call ratio point
    /// opposite ways, each clear of 1: the pair is withheld, not used to
    /// decide (nor to flip) the claim.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cpu_disagrees: bool,
    /// On some cell both the server's and the client's cores were at their
    /// threshold: the figure is the host's, not only the server's capacity.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub both_saturated: bool,
}

/// A figure's or a ratio's median over rounds with its order-statistic
/// interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub median: f64,
    /// The median's interval, when there are two rounds or more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
    /// The interval's coverage (0..1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f64>,
    pub rounds: u32,
}

/// One claim's verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimVerdict {
    /// The claim's id.
    pub claim: String,
    /// Every part checked and decided.
    pub decided: bool,
    pub direction: Direction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub magnitude: Option<Magnitude>,
    /// The weakest basis among the measured parts (`None` when nothing was
    /// measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<Basis>,
    /// Parts checked and decided, of all parts (`pairs` or `systems`).
    pub checked: u32,
    pub of: u32,
    /// What a part is.
    pub unit: String,
    /// A system of the claim cannot run in the lab.
    pub not_run: bool,
    /// The verdict in words, as every rendering prints it.
    pub label: String,
    /// The parts in words (figures, flags, busy shares).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<PairVerdict>,
    /// The plan it was decided under (`<seed>@<hash>`), absent for
    /// verdicts decided before plans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// A decided pair of it was latency-bound: the verdict holds on this
    /// host and is counted apart ("decided on this host").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub host_dependent: bool,
    /// The simultaneous coverage of its pairs' intervals (1 − α under its
    /// plan, by Bonferroni over `of` pairs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_twin_writes_its_spread_flat_as_before() {
        let text = r#"{"median":0.73,"low":0.71,"high":0.76,"coverage":0.96,"rounds":9,"trustworthy":true,"server_busy":0.48}"#;
        let twin: Twin = serde_json::from_str(text).unwrap();
        assert_eq!(twin.value.rounds, 9);
        assert_eq!(twin.server_busy, Some(0.48));
        assert_eq!(serde_json::to_string(&twin).unwrap(), text);
        let bare: Twin =
            serde_json::from_str(r#"{"median":3,"rounds":1,"trustworthy":false}"#).unwrap();
        assert_eq!((bare.value.median, bare.value.low), (3.0, None));
    }
}
