//! What the protocols' tests share, in this crate and, with the feature
//! `testing`, in the client's integration tests: options written as pairs;
//! checks that a protocol refuses options it cannot honour (a protocol
//! that accepted a typo silently would measure something the cell does not
//! say, so every protocol tests its refusals the same way); the mutations
//! the decoders' property tests make of real replies; the server side
//! of in-process HTTP/1.1 test servers ([`http`]); and the contract's
//! handler for the Thrift compiler's server ([`thrift`]).

pub mod http;
pub mod thrift;

use crate::exchange::{Exchange, Parsed};
use crate::protocol::{CallError, Protocol};
use rpclab_model::contract::{Operation, StringSize};
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

/// The contract's operations whose replies are small enough for thousands
/// of property-test cases: all but the 1 MiB string.
pub fn small_operations() -> Vec<Operation> {
    Operation::ALL
        .into_iter()
        .filter(|op| *op != Operation::StringEcho(StringSize::M1))
        .collect()
}

/// Mutates `bytes` as the decoders' property tests do: each flip puts its
/// byte at its position, taken modulo the bytes from `from` on (so that a
/// header before `from` stays intact).
pub fn flip(bytes: &mut [u8], from: usize, flips: &[(usize, u8)]) {
    let span = bytes.len() - from;
    for &(at, byte) in flips {
        bytes[from + at % span] = byte;
    }
}

/// One call of `exchange` as the poll engine makes it: its request
/// written, the server's bytes (`server`, given the request) received
/// `chunk` bytes at a time (a short read each), the reply parsed after
/// every read and verified once whole. `Err`: the exchange found the
/// stream out of step (the engine replaces the connection); `Ok(verdict)`:
/// the reply was whole, and all of `server` consumed (what else would be
/// left for the next call is a bug).
pub fn one_exchange<E: Exchange>(
    exchange: &mut E,
    server: impl FnOnce(&[u8]) -> Vec<u8>,
    chunk: usize,
) -> Result<Result<(), CallError>, CallError> {
    let mut request = Vec::new();
    exchange.request(&mut request)?;
    let incoming = server(&request);
    let mut fed = 0;
    loop {
        match exchange.reply(&incoming[..fed])? {
            Parsed::Complete { consumed, outcome } => {
                assert_eq!(consumed, incoming.len(), "the whole reply is consumed");
                return Ok(outcome.and_then(|o| exchange.verify(o)));
            }
            Parsed::Incomplete { at_least } => {
                assert!(at_least > fed, "asks for {at_least} bytes with {fed} in");
                assert!(
                    fed < incoming.len(),
                    "incomplete after all {fed} bytes the server sent"
                );
                fed = (fed + chunk.max(1)).min(incoming.len());
            }
        }
    }
}
