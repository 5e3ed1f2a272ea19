//! The one duration syntax: a number with a unit, `500ms`, `10s`, `2m`.
//!
//! Every duration a user writes reads with it: the client's `--duration`,
//! `--warmup`, `--warmup-max`, `--cooldown` and `--timeout`, `lab run`'s
//! and `lab capacity`'s `--duration` and `--engine-wait`, a threshold's
//! latency (`p99<2ms`) and `lab capacity --slo`. A flag also takes a bare
//! number as seconds (`--duration 10`, as `--duration-s 10` always did);
//! a latency bound needs its unit ([`with_unit`]), so that k6's bare
//! milliseconds (`p(95)<200`) are never read as seconds.

/// The syntax in one line, quoted by every error about a duration.
pub const DURATION_GRAMMAR: &str =
    "a duration is a number with a unit ns, us, ms, s, m or h (500ms, 10s, 2m)";

/// The units, longest suffix first so that `ms` is not read as `m`.
const UNITS: [(&str, f64); 7] = [
    ("ns", 1e-9),
    ("us", 1e-6),
    ("µs", 1e-6),
    ("ms", 1e-3),
    ("s", 1.0),
    ("m", 60.0),
    ("h", 3600.0),
];

/// A duration with its unit, in seconds (not negative); `None` without a
/// unit or for anything else.
pub fn with_unit(text: &str) -> Option<f64> {
    let text = text.trim();
    UNITS.into_iter().find_map(|(unit, scale)| {
        let number = text.strip_suffix(unit)?;
        Some(non_negative(number)? * scale)
    })
}

/// A flag's duration, in seconds: [`with_unit`], or a bare number of
/// seconds; it must be more than zero. The error is one line with
/// [`DURATION_GRAMMAR`] (clap prints it after the flag's name).
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    with_unit(text)
        .or_else(|| non_negative(text.trim()))
        .filter(|s| *s > 0.0)
        .ok_or_else(|| format!("`{text}` is not a duration: {DURATION_GRAMMAR}, or seconds"))
}

/// As [`parse_seconds`], but zero is allowed (`--warmup 0`, `--cooldown 0`).
pub fn parse_seconds_or_zero(text: &str) -> Result<f64, String> {
    with_unit(text)
        .or_else(|| non_negative(text.trim()))
        .ok_or_else(|| format!("`{text}` is not a duration: {DURATION_GRAMMAR}, or seconds"))
}

/// A duration as Go writes it (ghz's flags), in seconds: a sequence of
/// decimal numbers each with a unit, `ns`, `us` (or `µs`), `ms`, `s`, `m`,
/// `h`: `500ms`, `1.5s`, `1m30s`; more than zero. `None` for anything
/// else (a bare number too: Go's `time.ParseDuration` wants a unit).
pub fn go_form(text: &str) -> Option<f64> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        rest = &rest[unit..];
        total += number * scale;
    }
    (total.is_finite() && total > 0.0).then_some(total)
}

/// A plain decimal number (digits first: no `inf`, `nan`, sign or
/// exponent-only forms), finite and not negative.
pub(crate) fn non_negative(text: &str) -> Option<f64> {
    if !text.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::refused_in_one_line;
    use proptest::prelude::*;

    #[test]
    fn every_unit_reads_and_a_flag_takes_bare_seconds() {
        assert_eq!(with_unit("500ms"), Some(0.5));
        assert_eq!(with_unit("10s"), Some(10.0));
        assert_eq!(with_unit("2m"), Some(120.0));
        assert_eq!(with_unit("1h"), Some(3600.0));
        let near = |got: Option<f64>, want: f64| got.is_some_and(|g| (g - want).abs() < 1e-15);
        assert!(near(with_unit("250us"), 250e-6));
        assert!(near(with_unit("250µs"), 250e-6));
        assert_eq!(with_unit("1.5 s"), None, "no space inside");
        assert!(near(with_unit(" 7ns "), 7e-9));
        assert_eq!(with_unit("10"), None, "a latency needs its unit");
        // A flag's (`lab run --duration`, ...): with a unit or bare seconds.
        for (text, seconds) in [
            ("10", 10.0),
            ("3", 3.0),
            ("10s", 10.0),
            ("500ms", 0.5),
            ("2m", 120.0),
        ] {
            assert_eq!(parse_seconds(text), Ok(seconds), "{text}");
        }
        assert_eq!(parse_seconds_or_zero("0"), Ok(0.0));
    }

    #[test]
    fn what_is_no_duration_is_one_line_with_the_syntax() {
        let bad = [
            "", "s", "-1s", "10x", "2min", "inf", "nans", "0", "0ms", "0s", "1e", "m10", "ten",
        ];
        refused_in_one_line(bad, parse_seconds, DURATION_GRAMMAR);
    }

    proptest! {
        /// Milliseconds and seconds of one duration read as one value.
        #[test]
        fn units_agree(ms in 1u32..10_000_000) {
            let by_ms = parse_seconds(&format!("{ms}ms")).unwrap();
            let by_s = parse_seconds(&format!("{}s", f64::from(ms) / 1e3)).unwrap();
            prop_assert!((by_ms - by_s).abs() <= 1e-9 * by_s.max(1.0));
        }
    }
}
