//! A latency percentile, the one type and the one reading of it that every
//! part uses: the client's and `lab run`'s `--threshold` (`p99<2ms`,
//! k6's `p(95)<200ms`, `med<1ms`), `lab capacity --percentile` (`95`,
//! `99.9`) and the cells' extra percentiles (`spec::CellSpec::percentiles`).
//!
//! Any percentile from 0 to 100 reads, to four decimals (k6's `p(99.99)`):
//! it is kept as an integer number of ten-thousandths of a percent, so two
//! spellings of one percentile are equal and a percentile can key a map.
//! `p(0)` is the fastest call and `p(100)` the slowest (`min` and `max`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// The spellings that read, in one line, quoted by every error about a
/// percentile.
pub const PERCENTILE_GRAMMAR: &str = "a percentile is a number from 0 to 100 with at most four decimals, written N, pN or p(N) (95, p99, p(99.9), p(97.5)); p999 is 99.9";

/// Ten-thousandths of a percent in one percent.
const SCALE: u32 = 10_000;

/// A latency percentile: `Percentile::P99` is the 99th.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Percentile(u32);

/// A percentile that does not read: what was written.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot read percentile `{0}`: {grammar}", grammar = PERCENTILE_GRAMMAR)]
pub struct BadPercentile(pub String);

impl Percentile {
    pub const P50: Percentile = Percentile(50 * SCALE);
    pub const P90: Percentile = Percentile(90 * SCALE);
    pub const P95: Percentile = Percentile(95 * SCALE);
    pub const P99: Percentile = Percentile(99 * SCALE);
    pub const P999: Percentile = Percentile(99 * SCALE + 9 * SCALE / 10);
    /// The fastest call (`min`).
    pub const MIN: Percentile = Percentile(0);
    /// The slowest call (`max`).
    pub const MAX: Percentile = Percentile(100 * SCALE);

    /// The percentile as a quantile, 0 to 1 (HdrHistogram's argument).
    pub fn quantile(self) -> f64 {
        f64::from(self.0) / f64::from(100 * SCALE)
    }

    /// The percentile, 0 to 100.
    pub fn percent(self) -> f64 {
        f64::from(self.0) / f64::from(SCALE)
    }

    /// `N`, `pN` or `p(N)`, with `p999` for 99.9 (the thresholds' first
    /// spelling). `None` for anything else.
    fn read(text: &str) -> Option<Percentile> {
        let t = text.trim();
        let number = match t.strip_prefix('p') {
            Some(rest) => match rest.strip_prefix('(') {
                Some(inner) => inner.strip_suffix(')')?,
                None if rest == "999" => return Some(Percentile::P999),
                None => rest,
            },
            None => t,
        };
        Self::of_decimal(number.trim())
    }

    /// A decimal number from 0 to 100 with at most four decimals, read
    /// exactly (no float rounding decides what `99.99` is).
    fn of_decimal(text: &str) -> Option<Percentile> {
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() || whole.len() > 3 || fraction.len() > 4 || !digits(whole) {
            return None;
        }
        if !digits(fraction) || (text.contains('.') && fraction.is_empty()) {
            return None;
        }
        let whole: u32 = whole.parse().ok()?;
        let fraction: u32 = format!("{fraction:0<4}").parse().ok()?;
        let value = whole.checked_mul(SCALE)? + fraction;
        (value <= 100 * SCALE).then_some(Percentile(value))
    }
}

impl FromStr for Percentile {
    type Err = BadPercentile;

    fn from_str(text: &str) -> Result<Percentile, BadPercentile> {
        Percentile::read(text).ok_or_else(|| BadPercentile(text.to_owned()))
    }
}

impl fmt::Display for Percentile {
    /// `p99`, `p99.9`, `p97.5`: the shortest exact decimal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, fraction) = (self.0 / SCALE, self.0 % SCALE);
        if fraction == 0 {
            return write!(f, "p{whole}");
        }
        let decimals = format!("{fraction:04}");
        write!(f, "p{whole}.{}", decimals.trim_end_matches('0'))
    }
}

/// As `results.json` and `manifest.toml` keep it: its display (`p95`,
/// `p97.5`), except 99.9, kept as `p999` as snapshots before any
/// percentile was readable wrote it. Read with [`FromStr`].
impl Serialize for Percentile {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if *self == Percentile::P999 {
            s.serialize_str("p999")
        } else {
            s.collect_str(self)
        }
    }
}

impl<'de> Deserialize<'de> for Percentile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Percentile, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Spellings of percentiles and the values they read as: what the tests
/// of every option that takes a percentile read in full.
#[cfg(test)]
pub(crate) const SPELLINGS: [(&str, Percentile); 12] = [
    ("99", Percentile::P99),
    ("p99", Percentile::P99),
    ("p(99)", Percentile::P99),
    ("99.9", Percentile::P999),
    ("p99.9", Percentile::P999),
    ("p(99.9)", Percentile::P999),
    ("p999", Percentile::P999),
    ("p(99.90)", Percentile::P999),
    ("95", Percentile::P95),
    ("p(50)", Percentile::P50),
    ("0", Percentile::MIN),
    ("p(100)", Percentile::MAX),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::refused_in_one_line;
    use proptest::prelude::*;

    #[test]
    fn every_spelling_of_a_percentile_reads_as_one_value() {
        for (text, p) in SPELLINGS {
            assert_eq!(text.parse::<Percentile>(), Ok(p), "{text}");
        }
        assert_eq!(
            "p(99.99)".parse::<Percentile>().unwrap().to_string(),
            "p99.99"
        );
        assert_eq!("97.5".parse::<Percentile>().unwrap().quantile(), 0.975);
    }

    #[test]
    fn what_is_no_percentile_is_refused_with_the_grammar_in_one_line() {
        let bad = [
            "",
            "p",
            "p()",
            "p(101)",
            "100.1",
            "-1",
            "p(99.99999)",
            "99.",
            ".5",
            "p9999",
            "p(95",
            "1e2",
            "p 99x",
            "nan",
        ];
        refused_in_one_line(bad, str::parse::<Percentile>, PERCENTILE_GRAMMAR);
    }

    #[test]
    fn snapshots_keep_the_old_names_and_read_them_back() {
        let json = |p: Percentile| serde_json::to_string(&p).unwrap();
        assert_eq!(json(Percentile::P99), "\"p99\"");
        assert_eq!(
            json(Percentile::P999),
            "\"p999\"",
            "as older snapshots wrote it"
        );
        for old in ["p50", "p90", "p95", "p99", "p999"] {
            let p: Percentile = serde_json::from_str(&format!("\"{old}\"")).unwrap();
            assert_eq!(json(p), format!("\"{old}\""));
        }
    }

    proptest! {
        /// Every percentile prints as a spelling that reads back as itself.
        #[test]
        fn display_reads_back(value in 0u32..=1_000_000) {
            let p = Percentile(value);
            prop_assert_eq!(p.to_string().parse::<Percentile>(), Ok(p));
            let json = serde_json::to_string(&p).unwrap();
            prop_assert_eq!(serde_json::from_str::<Percentile>(&json).unwrap(), p);
            prop_assert_eq!(format!("p({})", &p.to_string()[1..]).parse::<Percentile>(), Ok(p));
        }
    }
}
