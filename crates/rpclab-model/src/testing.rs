//! What the modules' tests share.

use crate::percentile::Percentile;
use std::fmt::Debug;

/// Spellings of percentiles and the values they read as.
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

/// Checks that `parse` refuses each of `bad` with an error of one line
/// that quotes `grammar`.
pub(crate) fn refused_in_one_line<B: Debug, T: Debug, E: ToString>(
    bad: impl IntoIterator<Item = B>,
    parse: impl Fn(B) -> Result<T, E>,
    grammar: &str,
) {
    for bad in bad {
        let what = format!("{bad:?}");
        let e = parse(bad).unwrap_err().to_string();
        assert!(e.contains(grammar), "{what}: {e}");
        assert!(!e.contains('\n'), "{what}: one line");
    }
}
