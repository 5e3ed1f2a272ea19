//! A protocol's call as a **sans-IO exchange**: the bytes of one request,
//! and a reply recognised and verified in the bytes received, with no
//! socket in sight.
//!
//! A protocol with one call in flight per connection and nothing but its
//! requests and replies on the wire (Thrift) can describe a call this way.
//! Both engines of the closed loop then run the same codec:
//!
//! * the tasks engine ([`crate::load`]), where a connection's async
//!   `call` writes [`Exchange::request`] and reads until
//!   [`Exchange::reply`] finds the reply whole;
//! * the poll engine ([`crate::poll_loop`]), one thread and one `epoll`
//!   loop over every connection of a cell, which makes the same two calls
//!   per call and nothing of tokio's (task wake-ups, I/O registrations,
//!   the connection's lock, a timer per task).
//!
//! So what a reply must be to count is decided in one place per protocol,
//! whichever engine made the call.

use crate::call_error::CallError;

/// One call made over and over on one connection, one at a time. The one
/// trait of a sans-IO call: the poll engine runs it, and so does the tasks
/// engine's one-call-at-a-time link (`protocols::thrift::link`), which
/// hands the [`Exchange::Outcome`] on to the reference-reply check.
pub trait Exchange: Send + 'static {
    /// What a whole reply yields: the decoded reply, or what was verified
    /// of it; [`Exchange::verify`] makes it a verdict.
    type Outcome;

    /// Puts the next request's bytes in `out`, in place of what it held
    /// (with a fresh sequence id, if the protocol has one).
    fn request(&mut self, out: &mut Vec<u8>) -> Result<(), CallError>;

    /// Looks at the bytes received since the request was written (and not
    /// yet consumed). `Err`: the stream is out of step (a corrupt frame, a
    /// reply to another call) and the connection must be replaced.
    fn reply(
        &mut self,
        input: &[u8],
    ) -> Result<Parsed<Result<Self::Outcome, CallError>>, CallError>;

    /// The call's last check of an outcome, where only "verified or not"
    /// counts (the poll engine): `Ok` only for the call's expected value.
    fn verify(&self, outcome: Self::Outcome) -> Result<(), CallError>;

    /// The poll engine opened a new connection for the next request (the
    /// last one failed, or [`Exchange::wants_new_connection`] said so):
    /// what the exchange keeps of its connection starts over (gRPC's
    /// preface, stream ids, HPACK table). Nothing by default.
    fn connection_opened(&mut self) {}

    /// Whether the next call must go on a new connection although the
    /// current one did not fail (gRPC: the server sent GOAWAY, or the
    /// stream ids ran out); the poll engine then closes it and opens
    /// another. False by default.
    fn wants_new_connection(&self) -> bool {
        false
    }
}

/// What [`Exchange::reply`] found (`T`: the call's outcome; a protocol's
/// own parser may hand on more, such as the decoded value).
#[derive(Debug)]
pub enum Parsed<T = Result<(), CallError>> {
    /// Not the whole reply yet: at least this many bytes are needed in all.
    Incomplete { at_least: usize },
    /// The whole reply, `consumed` bytes long. `outcome` is the call's:
    /// `Ok` only for a reply verified to be the call's expected value; an
    /// error reply (a server exception, a wrong value) leaves the stream in
    /// step.
    Complete { consumed: usize, outcome: T },
}

/// The exchange of a protocol that has none ([`crate::protocol::Protocol::Exchange`]):
/// its calls only ever run on the tasks engine. It has no values.
pub enum NoExchange {}

impl Exchange for NoExchange {
    type Outcome = ();

    fn request(&mut self, _: &mut Vec<u8>) -> Result<(), CallError> {
        match *self {}
    }

    fn reply(&mut self, _: &[u8]) -> Result<Parsed, CallError> {
        match *self {}
    }

    fn verify(&self, (): ()) -> Result<(), CallError> {
        match *self {}
    }
}

/// Bytes received and not yet consumed (`data[start..end]`), in a buffer
/// reused from reply to reply, whichever engine reads into it.
#[derive(Debug, Default)]
pub struct Received {
    data: Vec<u8>,
    start: usize,
    end: usize,
}

/// First size of a connection's read buffer; it grows to the largest reply.
const INITIAL_READ_BUFFER: usize = 16 * 1024;

impl Received {
    pub fn available(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }

    pub fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// The free space to read into, made with room for at least `need`
    /// available bytes in all: what is left is moved to the front, and the
    /// buffer doubles (to at most `limit` bytes, or `need`) when that is
    /// not room enough. Empty only if `need` is more than `limit`.
    pub fn spare(&mut self, need: usize, limit: usize) -> &mut [u8] {
        if self.data.len() - self.start < need || self.end == self.data.len() {
            if self.start > 0 {
                self.data.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.data.len() < need || self.end == self.data.len() {
                let grown = (self.data.len() * 2)
                    .clamp(INITIAL_READ_BUFFER, limit.max(INITIAL_READ_BUFFER));
                self.data.resize(grown.max(need), 0);
            }
        }
        &mut self.data[self.end..]
    }

    /// `n` bytes were read into [`Received::spare`].
    pub fn filled(&mut self, n: usize) {
        self.end += n;
    }

    /// Bytes the buffer holds, used or not.
    pub fn allocated(&self) -> usize {
        self.data.len()
    }
}
