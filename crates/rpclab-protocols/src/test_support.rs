//! What the protocols' unit tests share: options written as pairs, and
//! checks that a protocol refuses options it cannot honour. A protocol that
//! accepts a typo silently would measure something the cell does not say,
//! so every protocol tests its refusals the same way.

use crate::protocol::{CallError, Protocol};
use std::collections::BTreeMap;

/// Protocol options from `(key, value)` pairs, as a cell spec holds them.
pub(crate) fn options(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The configuration error `P` gives for these options; panics if `P`
/// accepts them or fails otherwise.
pub(crate) fn refusal<P: Protocol>(pairs: &[(&str, &str)]) -> String {
    match P::new(&options(pairs)) {
        Err(CallError::Config(m)) => m,
        Err(other) => panic!("{pairs:?}: not a configuration error: {other:?}"),
        Ok(_) => panic!("{pairs:?}: accepted"),
    }
}

/// Asserts that `P` refuses each of these option sets as a configuration
/// error.
pub(crate) fn assert_refused<P: Protocol>(refused: &[&[(&str, &str)]]) {
    for pairs in refused {
        refusal::<P>(pairs);
    }
}
