#![no_main]
//! What a server (or anything listening on an RMI port) sends a client:
//! the handshake answer, then returns and ping acknowledgements. Parsing
//! arbitrary bytes must return (done, need-more or an error), never panic,
//! hang or allocate without bound; a parsed value's stub and exception
//! readers must not panic either.

use jrmp::message::{self, Progress};
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    if let Ok(Progress::Done { len, .. }) = jrmp::wire::parse_protocol_ack(rest) {
        rest = &rest[len..];
    }
    // A stream of returns, as a client reads them one call after another.
    for _ in 0..8 {
        if rest.first() == Some(&jrmp::wire::PING_ACK) {
            rest = &rest[1..];
            continue;
        }
        let mut next = None;
        for has_value in [true, false] {
            if let Ok(Progress::Done { value, len }) = message::parse_return(rest, has_value, LIMIT) {
                assert!(len <= rest.len());
                if let Some(v) = &value.value {
                    let _ = jrmp::RemoteRef::from_stub(v);
                    let _ = jrmp::RemoteException::from_value(v, &value.decoder).to_string();
                }
                next.get_or_insert(len);
            }
        }
        match next {
            Some(len) if len > 0 => rest = &rest[len..],
            _ => break,
        }
    }
});
