//! What the protocols' tests share, in this crate and, with the feature
//! `testing`, in the client's integration tests: options written as pairs;
//! checks that a protocol refuses options it cannot honour (a protocol
//! that accepted a typo silently would measure something the cell does not
//! say, so every protocol tests its refusals the same way); the mutations
//! the decoders' property tests make of real replies; an exchange's calls
//! against a recording of a server's frames; the server side
//! of in-process HTTP/1.1 test servers ([`http`]); and the contract's
//! handler for the Thrift compiler's server ([`thrift`]).

pub mod http;
pub mod thrift;

use crate::exchange::{Exchange, Parsed};
use crate::mux_exchange::CallCodec;
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

/// The poll engine's exchange of `protocol` for a call of `operation`;
/// panics if there is none (a protocol that dials its target has one).
pub fn exchange_of<P: Protocol>(protocol: &P, operation: Operation) -> P::Exchange {
    protocol
        .exchange(&operation.call())
        .unwrap()
        .unwrap_or_else(|| panic!("{} has no exchange for {operation}", P::NAME))
}

/// A golden frame with the request id's bytes (`id`, as its protocol
/// writes them) put at `at`: a reply must carry the id of the request in
/// flight.
pub fn with_id_at(frame: &[u8], at: usize, id: &[u8]) -> Vec<u8> {
    let mut frame = frame.to_vec();
    frame[at..at + id.len()].copy_from_slice(id);
    frame
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

/// Calls of `exchange`'s exchanges checked against a server's recording:
/// for each of `chunks`, a new exchange makes a call with each of `ids`
/// (the ids its connection's requests carry), `server` checks the request
/// of call `id` and gives the server's bytes, received `chunk` bytes at a
/// time, and each call is verified. `what` names the case in failures.
pub fn exchanges_verified<E: Exchange>(
    mut exchange: impl FnMut() -> E,
    chunks: &[usize],
    ids: impl Iterator<Item = u64> + Clone,
    mut server: impl FnMut(u64, &[u8]) -> Vec<u8>,
    what: &str,
) {
    for &chunk in chunks {
        let mut exchange = exchange();
        for id in ids.clone() {
            one_exchange(&mut exchange, |sent| server(id, sent), chunk)
                .unwrap()
                .unwrap_or_else(|e| panic!("{what}: {e}"));
        }
    }
}

/// Checks that `hello` (an exchange of `hello`) fails what is not its
/// reply: a wrong value (`wrong`) and a server's exception (`thrown`, in
/// pieces) are failed calls, a reply to another request (`stale`) a stream
/// out of step. Each gives the server's bytes for the request it is given.
pub fn wrong_replies_fail<E: Exchange>(
    hello: &mut E,
    wrong: impl FnOnce(&[u8]) -> Vec<u8>,
    thrown: impl FnOnce(&[u8]) -> Vec<u8>,
    stale: impl FnOnce(&[u8]) -> Vec<u8>,
    what: &str,
) {
    let wrong = one_exchange(hello, wrong, usize::MAX);
    assert!(
        matches!(wrong, Ok(Err(CallError::WrongResponse(_)))),
        "{what}: {wrong:?}"
    );
    let thrown = one_exchange(hello, thrown, 3);
    assert!(
        matches!(thrown, Ok(Err(CallError::Server(_)))),
        "{what}: {thrown:?}"
    );
    let stale = one_exchange(hello, stale, usize::MAX);
    assert!(
        matches!(stale, Err(CallError::Protocol(_))),
        "{what}: {stale:?}"
    );
}

/// Checks that `hello` verifies its reply behind a heartbeat request of
/// the server's (`server`: those bytes, given the request, received
/// `chunk` at a time), then writes the heartbeat's `answer` in front of
/// its next request, whose id (read by `id_of`) is `next_id`.
pub fn heartbeat_answered_before_the_next_request<E: Exchange>(
    hello: &mut E,
    server: impl FnOnce(&[u8]) -> Vec<u8>,
    chunk: usize,
    answer: &[u8],
    id_of: impl Fn(&[u8]) -> u64,
    next_id: u64,
    what: &str,
) {
    one_exchange(hello, server, chunk).unwrap().unwrap();
    let mut next = Vec::new();
    hello.request(&mut next).unwrap();
    assert_eq!(next[..answer.len()], answer[..], "{what}: the answer first");
    assert_eq!(
        id_of(&next[answer.len()..]),
        next_id,
        "{what}: then the request"
    );
}

/// What the decoders' property tests share.
pub mod decoding {
    use proptest::prelude::*;
    use rpclab_model::contract::Order;

    /// 500 cases: each decodes real replies, mutated, with every method
    /// (or serialization); in a debug build 2,000 took half a minute per
    /// test. The codec crates' fuzz targets search deeper (crates/*/fuzz).
    pub fn cases() -> ProptestConfig {
        ProptestConfig::with_cases(500)
    }

    /// Arbitrary bytes to decode: up to 512 of them.
    pub fn arbitrary_bytes() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(any::<u8>(), 0..512)
    }

    /// The flips of a mutated reply ([`super::flip`]): one to seven.
    pub fn flips() -> impl Strategy<Value = Vec<(usize, u8)>> {
        proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)
    }

    /// Checks that `decode` never panics on arbitrary bytes ([`cases`] of
    /// them).
    pub fn arbitrary_bytes_never_panic(decode: impl Fn(&[u8])) {
        proptest::test_runner::TestRunner::new(cases())
            .run(&arbitrary_bytes(), |bytes| {
                decode(&bytes);
                Ok(())
            })
            .unwrap();
    }

    /// Checks that decoding real replies, mutated, never panics: `reply`
    /// gives the reply to one of the small operations
    /// ([`super::small_operations`]), whose bytes from `from` on are
    /// flipped ([`flips`]), and `decode` decodes it ([`cases`] of them).
    pub fn mutated_replies_never_panic(
        reply: impl Fn(super::Operation) -> Vec<u8>,
        from: usize,
        decode: impl Fn(&[u8]),
    ) {
        let strategy = (proptest::sample::select(super::small_operations()), flips());
        proptest::test_runner::TestRunner::new(cases())
            .run(&strategy, |(op, flips)| {
                let mut reply = reply(op);
                super::flip(&mut reply, from, &flips);
                decode(&reply);
                Ok(())
            })
            .unwrap();
    }

    /// Any Order a call may carry (its amount a number: NaN never equals
    /// itself, so no round trip could be checked).
    pub fn order() -> impl Strategy<Value = Order> {
        (
            any::<i64>(),
            ".{0,40}",
            ".{0,300}",
            "[ -~]{0,20}",
            any::<i32>(),
            any::<i32>(),
            any::<f64>().prop_filter("NaN never equals itself", |f| !f.is_nan()),
            any::<i32>(),
        )
            .prop_map(
                |(id, phone, name, num, date, ticket, amount, status)| Order {
                    order_id: id,
                    phone,
                    name,
                    order_num: num,
                    order_date: date,
                    ticket_type: ticket,
                    amount,
                    order_status: status,
                },
            )
    }
}

/// Checks [`CallCodec::restamp`]: for every operation `codec` carries, a
/// request encoded with the first of `ids` and restamped with each of the
/// others is byte for byte the request encoded with that id, and an
/// exchange's requests are the codec's, whether restamped or not.
pub fn restamped_requests_are_encoded_requests<C: CallCodec + Clone>(codec: &C, ids: &[u64]) {
    for operation in Operation::ALL {
        let call = operation.call();
        if codec.refusal(&call).is_some() {
            continue;
        }
        let encoded = |id| {
            let mut out = Vec::new();
            codec.encode(&mut out, id, &call).unwrap();
            out
        };
        let first = encoded(ids[0]);
        for &id in ids {
            let mut restamped = first.clone();
            assert!(codec.restamp(&mut restamped, id), "{operation}: {id}");
            assert_eq!(restamped, encoded(id), "{operation}: request {id}");
        }
        let mut exchange = crate::mux_exchange::MuxExchange::new(codec.clone(), &call);
        let mut out = Vec::new();
        for n in 0..3 {
            exchange.request(&mut out).unwrap();
            let id = crate::mux::nth_id(
                <C::Framing as crate::mux::Framing>::FIRST_ID,
                <C::Framing as crate::mux::Framing>::MAX_ID,
                n,
            );
            assert_eq!(out, encoded(id), "{operation}: the exchange's request {n}");
        }
    }
}
