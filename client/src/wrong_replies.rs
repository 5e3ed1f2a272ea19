//! A wrong service fails fast: the replies of connections that have not
//! yet verified a call, counted during the warm-up.
//!
//! Against a server whose every reply is wrong (another service on the
//! port, another contract, a bug), the warm-up would wait for a verified
//! call until its maximum (about a minute) and then measure failures.
//! Instead, once every connection has answered [`GIVE_UP_AFTER`] calls and
//! none of them verified, the run stops: nothing is measured, and the error
//! shows the first wrong reply as the protocol decoded it.
//!
//! A reply is wrong when the service answered but not with the contract's
//! reply: a reply that does not verify, that does not decode, or a server
//! error (`wrong response`, `protocol error`, `server error`). A timeout,
//! a refused connection or a broken socket are not replies, and only the
//! warm-up's maximum ends a wait on those.

use rpclab_protocols::protocol::CallError;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::OnceLock;

/// Wrong replies, and no verified one, that each connection must have
/// seen before the run stops.
pub const GIVE_UP_AFTER: u32 = 3;

/// Per connection, the wrong replies seen before its first verified call.
#[derive(Debug)]
pub struct WrongReplies {
    counts: Box<[AtomicU32]>,
    first: OnceLock<String>,
    given_up: AtomicBool,
}

impl WrongReplies {
    pub fn new(connections: usize) -> WrongReplies {
        WrongReplies {
            counts: (0..connections).map(|_| AtomicU32::new(0)).collect(),
            first: OnceLock::new(),
            given_up: AtomicBool::new(false),
        }
    }

    /// Records a failed call on `connection`, which has not verified a call
    /// yet; true when, with it, every connection has answered only wrong
    /// replies, at least [`GIVE_UP_AFTER`] each (`answered`: whether a
    /// connection has verified a call).
    pub fn record(
        &self,
        connection: usize,
        error: &CallError,
        answered: impl Fn(usize) -> bool,
    ) -> bool {
        if !is_a_reply(error) {
            return false;
        }
        let Some(count) = self.counts.get(connection) else {
            return false;
        };
        let _ = self.first.set(error.to_string());
        count.fetch_add(1, Ordering::AcqRel);
        let all_wrong = self
            .counts
            .iter()
            .enumerate()
            .all(|(i, c)| !answered(i) && c.load(Ordering::Acquire) >= GIVE_UP_AFTER);
        all_wrong && !self.given_up.swap(true, Ordering::AcqRel)
    }

    /// Why the run stopped, once every connection answered only wrong
    /// replies: one line, with the first of them.
    pub fn verdict(&self) -> Option<String> {
        if !self.given_up.load(Ordering::Acquire) {
            return None;
        }
        Some(format!(
            "the service answered only wrong replies ({} connection(s), at least {GIVE_UP_AFTER} calls each, none verified), so nothing was measured; the first: {}",
            self.counts.len(),
            self.first.get().map_or("?", String::as_str)
        ))
    }
}

/// Whether `error` means the service answered, but not as the contract says.
fn is_a_reply(error: &CallError) -> bool {
    matches!(
        error,
        CallError::WrongResponse(_) | CallError::Protocol(_) | CallError::Server(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrong() -> CallError {
        CallError::WrongResponse("hello returned \"goodbye\"".into())
    }

    #[test]
    fn every_connection_must_answer_only_wrong_replies_before_the_run_stops() {
        let w = WrongReplies::new(2);
        let none = |_| false;
        for _ in 0..GIVE_UP_AFTER {
            assert!(!w.record(0, &wrong(), none));
        }
        assert!(
            !w.record(1, &CallError::Timeout, none),
            "a timeout is no reply"
        );
        assert!(!w.record(1, &wrong(), none));
        assert!(!w.record(1, &wrong(), none));
        assert_eq!(w.verdict(), None);
        assert!(w.record(1, &wrong(), none), "the last connection's third");
        assert!(!w.record(1, &wrong(), none), "told once");
        let verdict = w.verdict().unwrap();
        assert!(
            verdict.ends_with("the first: wrong response: hello returned \"goodbye\""),
            "{verdict}"
        );
    }

    #[test]
    fn a_connection_that_verified_a_call_keeps_the_run_going() {
        let w = WrongReplies::new(2);
        for _ in 0..10 {
            w.record(0, &wrong(), |i| i == 1);
            assert!(!w.record(1, &wrong(), |i| i == 1));
        }
        assert_eq!(w.verdict(), None);
    }
}
