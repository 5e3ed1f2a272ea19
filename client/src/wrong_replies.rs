//! A wrong service fails fast, by counting calls, never by a clock. Two
//! rules stop a run:
//!
//! 1. **Nothing ever verified.** Against a server whose every reply is
//!    wrong (another service on the port, another contract, a bug), the
//!    warm-up would wait for a verified call until its maximum (about a
//!    minute) and then measure failures. Instead, once every connection
//!    has answered [`GIVE_UP_AFTER`] calls and none of them verified, the
//!    run stops.
//! 2. **Wrong replies in a row.** A service whose first replies matched
//!    `--expect` and whose later replies do not (a counter in the reply, a
//!    cache that fills, a deploy mid-run) passes rule 1. Once
//!    [`STOP_AFTER_IN_A_ROW`] wrong replies came in a row, across every
//!    connection, with no verified call between them, the run stops in the
//!    warm-up or in the window alike: a window of wrong replies measures
//!    how fast a service answers wrongly, which nobody asked. The count is
//!    small (far below a second's calls of any service worth measuring)
//!    and a single verified call resets it, so a service that fails some
//!    calls (a flaky one, half wrong) is measured, its failures counted.
//!
//! Either way nothing is measured, and the error names the rule, the
//! calls made, and the first wrong replies ([`EXAMPLES`] of them) as the
//! protocol decoded them.
//!
//! A reply is wrong when the service answered but not with the contract's
//! reply: a reply that does not verify, that does not decode, or a server
//! error (`wrong response`, `protocol error`, `server error`). A timeout,
//! a refused connection or a broken socket are not replies, and only the
//! warm-up's maximum ends a wait on those.

use rpclab_protocols::protocol::CallError;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Wrong replies, and no verified one, that each connection must have
/// seen before the run stops (rule 1).
pub const GIVE_UP_AFTER: u32 = 3;

/// Wrong replies in a row, across every connection, that stop a run
/// (rule 2). Small: a service that answers wrongly is told within a few
/// dozen calls, whatever its speed and the run's length; large enough
/// that a service failing half its calls at random practically never
/// reaches it (2⁻⁵⁰).
pub const STOP_AFTER_IN_A_ROW: u64 = 50;

/// The wrong replies an error quotes.
pub const EXAMPLES: usize = 3;

/// Which rule stopped a run (0: none yet).
const NOT_STOPPED: u8 = 0;
const NOTHING_VERIFIED: u8 = 1;
const IN_A_ROW: u8 = 2;

/// Per connection, the wrong replies seen before its first verified call;
/// across them, the wrong replies since the last verified call.
#[derive(Debug)]
pub struct WrongReplies {
    counts: Box<[AtomicU32]>,
    first: OnceLock<String>,
    given_up: AtomicBool,
    /// Wrong replies since the last verified call, any connection.
    in_a_row: AtomicU64,
    /// Which rule stopped the run, once one did.
    stopped_by: AtomicU8,
    /// The first wrong replies, at most [`EXAMPLES`] (`noted` counts them
    /// without the lock).
    examples: Mutex<Vec<String>>,
    noted: AtomicUsize,
}

impl WrongReplies {
    pub fn new(connections: usize) -> WrongReplies {
        WrongReplies {
            counts: (0..connections).map(|_| AtomicU32::new(0)).collect(),
            first: OnceLock::new(),
            given_up: AtomicBool::new(false),
            in_a_row: AtomicU64::new(0),
            stopped_by: AtomicU8::new(NOT_STOPPED),
            examples: Mutex::new(Vec::new()),
            noted: AtomicUsize::new(0),
        }
    }

    /// A verified call: the wrong replies in a row start again. One
    /// relaxed load per call while nothing is wrong (the line stays
    /// shared between cores); a store only after a wrong reply.
    pub fn verified(&self) {
        if self.in_a_row.load(Ordering::Relaxed) != 0 {
            self.in_a_row.store(0, Ordering::Relaxed);
        }
    }

    /// Records a failed call on any connection, in the warm-up or the
    /// window; true when, with it, [`STOP_AFTER_IN_A_ROW`] wrong replies
    /// came in a row (rule 2), told once.
    pub fn failed(&self, error: &CallError) -> bool {
        if !is_wrong(error) {
            return false;
        }
        if self.noted.fetch_add(1, Ordering::Relaxed) < EXAMPLES {
            let mut examples = self.examples.lock().unwrap_or_else(|e| e.into_inner());
            if examples.len() < EXAMPLES {
                examples.push(error.to_string());
            }
        }
        let streak = self.in_a_row.fetch_add(1, Ordering::AcqRel) + 1;
        streak >= STOP_AFTER_IN_A_ROW && self.stop(IN_A_ROW)
    }

    /// Marks the run stopped by `rule`; true for the first rule only.
    fn stop(&self, rule: u8) -> bool {
        self.stopped_by
            .compare_exchange(NOT_STOPPED, rule, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
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
        all_wrong && !self.given_up.swap(true, Ordering::AcqRel) && self.stop(NOTHING_VERIFIED)
    }

    /// Why the run stopped, once a rule stopped it: one line, with the
    /// first wrong replies.
    pub fn verdict(&self) -> Option<String> {
        match self.stopped_by.load(Ordering::Acquire) {
            NOTHING_VERIFIED => Some(format!(
                "the service answered only wrong replies ({} connection(s), at least {GIVE_UP_AFTER} calls each, none verified), so nothing was measured; the first: {}",
                self.counts.len(),
                self.first.get().map_or("?", String::as_str)
            )),
            IN_A_ROW => {
                let examples = self.examples.lock().unwrap_or_else(|e| e.into_inner());
                Some(format!(
                    "stopped after {STOP_AFTER_IN_A_ROW} wrong replies in a row with no verified call between them, so nothing was measured; the first wrong replies: {}",
                    examples.join(" | ")
                ))
            }
            _ => None,
        }
    }
}

/// Whether `error` is a reply that is not the expected one: it decoded and
/// differed, or did not decode. A server's error status is a result the
/// lab measures (an overloaded server's refusals), and so are timeouts and
/// broken connections: only rule 1, before anything verified, ends a run
/// on those.
fn is_wrong(error: &CallError) -> bool {
    matches!(error, CallError::WrongResponse(_) | CallError::Protocol(_))
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
    fn wrong_replies_in_a_row_stop_the_run_and_a_verified_call_resets_them() {
        let w = WrongReplies::new(4);
        for _ in 0..STOP_AFTER_IN_A_ROW - 1 {
            assert!(!w.failed(&wrong()));
        }
        w.verified();
        for _ in 0..STOP_AFTER_IN_A_ROW - 1 {
            assert!(!w.failed(&wrong()));
            assert!(
                !w.failed(&CallError::Timeout),
                "a timeout is no wrong reply"
            );
            assert!(
                !w.failed(&CallError::Server("overloaded".into())),
                "a server's error is a result"
            );
        }
        assert_eq!(w.verdict(), None);
        assert!(
            w.failed(&CallError::Protocol("no frame".into())),
            "the last one of the row"
        );
        assert!(!w.failed(&wrong()), "told once");
        let verdict = w.verdict().unwrap();
        assert!(
            verdict.starts_with(&format!(
                "stopped after {STOP_AFTER_IN_A_ROW} wrong replies in a row"
            )),
            "{verdict}"
        );
        let quoted = verdict.split("the first wrong replies: ").nth(1).unwrap();
        assert_eq!(quoted.split(" | ").count(), EXAMPLES, "{verdict}");
        assert!(!verdict.contains('\n'));
    }

    #[test]
    fn a_service_wrong_every_other_call_is_measured() {
        let w = WrongReplies::new(1);
        for _ in 0..10 * STOP_AFTER_IN_A_ROW {
            assert!(!w.failed(&wrong()));
            w.verified();
        }
        assert_eq!(w.verdict(), None);
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
