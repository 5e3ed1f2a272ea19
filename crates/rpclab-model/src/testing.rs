//! What the modules' tests share.

use std::fmt::Debug;

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
