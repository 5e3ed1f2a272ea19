//! What the protocols' tests share, in this crate and, with the feature
//! `testing`, in the client's integration tests: options written as pairs;
//! checks that a protocol refuses options it cannot honour (a protocol
//! that accepted a typo silently would measure something the cell does not
//! say, so every protocol tests its refusals the same way); and the server
//! side of in-process HTTP/1.1 test servers ([`http`]).

pub mod http;

use crate::protocol::{CallError, Protocol};
use std::collections::BTreeMap;

/// Protocol options from `(key, value)` pairs, as a cell spec holds them.
pub fn options(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The configuration error `P` gives for these options; panics if `P`
/// accepts them or fails otherwise.
pub fn refusal<P: Protocol>(pairs: &[(&str, &str)]) -> String {
    match P::new(&options(pairs)) {
        Err(CallError::Config(m)) => m,
        Err(other) => panic!("{pairs:?}: not a configuration error: {other:?}"),
        Ok(_) => panic!("{pairs:?}: accepted"),
    }
}

/// Asserts that `P` refuses each of these option sets as a configuration
/// error.
pub fn assert_refused<P: Protocol>(refused: &[&[(&str, &str)]]) {
    for pairs in refused {
        refusal::<P>(pairs);
    }
}
