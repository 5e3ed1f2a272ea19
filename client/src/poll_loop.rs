//! The closed loop's **poll engine**: every connection of a cell on one
//! thread and one `epoll` loop (mio), each connection with one call in
//! flight, its protocol's codec run as a sans-IO [`Exchange`].
//!
//! Why a second engine: on the binary protocols with one call in flight
//! per connection, a call's own work is a `write`, a `read` and a few
//! comparisons, and on tokio about as much again goes to what makes tasks
//! work: a wake-up and a poll per reply, the I/O registration's readiness
//! bookkeeping, the connection's lock, the call's timer. The
//! poll engine keeps what every call needs and none of the rest:
//!
//! * per call: one `write` and one `read` (a short read means the socket
//!   is drained, as tokio assumes too), the exchange's `request` and
//!   `reply`, one clock read (a call's end is the next call's start, so
//!   the caller's bookkeeping between them counts in the next call's
//!   latency), and the caller's bookkeeping, the same
//!   [`crate::load::Caller`] as on tasks;
//! * per loop turn: one `epoll_wait` for every reply that arrived, and one
//!   clock read;
//! * timeouts: a scan of the calls in flight when the earliest deadline
//!   may have passed, at least every [`SCAN`]; a call past its deadline
//!   fails with [`CallError::Timeout`] as on tasks, and its connection is
//!   replaced.
//! * a new connection (after a failed call, or when the exchange asks for
//!   one: [`Exchange::wants_new_connection`], gRPC after a GOAWAY) is told
//!   to the exchange ([`Exchange::connection_opened`]), which starts its
//!   connection's state over (gRPC's preface, stream ids, HPACK table).
//!
//! **Every reply is still verified**: [`Exchange::reply`] completes a call
//! with `Ok` only for a reply verified to be the expected value, exactly
//! as the protocol's async connection does (it runs the same exchange).
//!
//! It runs when the cell's closed loop has one call in flight per caller
//! and a connection per caller, and the protocol offers an exchange
//! ([`rpclab_protocols::protocol::Protocol::exchange`]); the runner decides
//! ([`eligible`]) and the report says which engine ran
//! (`ClientReport.engine`). The thread is tokio's blocking pool's, so the
//! runner's phase clock and warm-up go on on the runtime beside it.

use crate::load::{closed_loop_callers, Caller, Clock, Issued};
use crate::stats::WorkerStats;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use rpclab_model::spec::ClosedLoop;
use rpclab_protocols::exchange::{Exchange, Parsed, Received};
use rpclab_protocols::protocol::{CallError, WireCounter};
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Name of this engine in reports.
pub const ENGINE: &str = "poll";

/// Longest time between two scans for calls past their deadline while
/// nothing arrives.
pub const SCAN: Duration = Duration::from_millis(10);

/// Whether a closed loop over `connections` connections can run here: one
/// call in flight per caller, and each caller with a connection of its own.
pub fn eligible(model: &ClosedLoop, connections: u32) -> bool {
    model.outstanding <= 1 && model.callers() == connections && connections > 0
}

/// One connection of the loop: its socket, its exchange and its caller.
pub struct Link<E> {
    stream: Option<TcpStream>,
    exchange: E,
    out: Vec<u8>,
    written: usize,
    input: Received,
    /// The call in flight and when it started.
    in_flight: Option<(Issued, Instant)>,
    /// Registered for writable events too: only while a request waits for
    /// room in the socket, so that the acknowledgements of requests sent
    /// whole (all of them, in practice) wake nothing.
    wants_writable: bool,
}

/// Opens one plain TCP connection per exchange to `target`, with
/// `TCP_NODELAY` set as [`rpclab_protocols::net::connect_tcp`] does.
pub fn connect_all<E: Exchange>(
    target: &str,
    exchanges: Vec<E>,
) -> Result<Vec<Link<E>>, CallError> {
    exchanges
        .into_iter()
        .map(|exchange| {
            Ok(Link {
                stream: Some(connect(target)?),
                exchange,
                out: Vec::new(),
                written: 0,
                input: Received::default(),
                in_flight: None,
                wants_writable: false,
            })
        })
        .collect()
}

fn connect(target: &str) -> Result<TcpStream, CallError> {
    let fail = |e: io::Error| CallError::Connect(format!("{target}: {e}"));
    let stream = std::net::TcpStream::connect(target).map_err(fail)?;
    stream
        .set_nodelay(true)
        .map_err(|e| CallError::Connect(format!("{target}: cannot set TCP_NODELAY: {e}")))?;
    stream.set_nonblocking(true).map_err(fail)?;
    Ok(TcpStream::from_std(stream))
}

/// Everything the loop needs besides its links.
pub struct Plan {
    pub target: String,
    pub timeout: Duration,
    pub clock: Arc<Clock>,
    pub keep_load_until_done: bool,
    pub counter: WireCounter,
}

/// Drives `model` over `links` on a thread of tokio's blocking pool until
/// the run is done; each caller's stats, as the tasks engine returns them.
pub async fn drive<E: Exchange>(
    model: &ClosedLoop,
    links: Vec<Link<E>>,
    plan: Plan,
) -> Vec<WorkerStats> {
    let callers = closed_loop_callers(model, links.len(), &plan.clock, plan.keep_load_until_done);
    match tokio::task::spawn_blocking(move || Loop::new(links, callers, plan).run()).await {
        Ok(stats) => stats,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => panic!("the poll engine's thread was cancelled: {e}"),
    }
}

struct Loop<E> {
    links: Vec<Link<E>>,
    callers: Vec<Option<Caller>>,
    stats: Vec<WorkerStats>,
    plan: Plan,
    poll: Poll,
    /// Links whose next call waits for the next loop turn: after a failure
    /// (a connection to reopen), so that a server refusing every call makes
    /// the loop turn, not spin inside one link.
    retry: Vec<usize>,
    active: usize,
}

impl<E: Exchange> Loop<E> {
    fn new(links: Vec<Link<E>>, callers: Vec<Caller>, plan: Plan) -> Loop<E> {
        let poll = match Poll::new() {
            Ok(poll) => poll,
            Err(e) => panic!("cannot create the poll engine's epoll instance: {e}"),
        };
        let n = links.len();
        Loop {
            links,
            callers: callers.into_iter().map(Some).collect(),
            stats: Vec::with_capacity(n),
            plan,
            poll,
            retry: Vec::new(),
            active: n,
        }
    }

    fn run(mut self) -> Vec<WorkerStats> {
        for i in 0..self.links.len() {
            if let Some(stream) = self.links[i].stream.as_mut() {
                if let Err(e) = register(&self.poll, stream, i) {
                    self.links[i].stream = None;
                    self.fail_connection(i, CallError::Io(e));
                    continue;
                }
            }
            let now = Instant::now();
            self.next_call(i, now);
        }
        let mut events = Events::with_capacity(self.links.len().max(16));
        let mut next_scan = Instant::now() + SCAN;
        while self.active > 0 {
            let now = Instant::now();
            let wait = if self.retry.is_empty() {
                next_scan.saturating_duration_since(now)
            } else {
                Duration::ZERO
            };
            if let Err(e) = self.poll.poll(&mut events, Some(wait)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    panic!("the poll engine's epoll_wait failed: {e}");
                }
            }
            for event in events.iter() {
                self.on_ready(
                    event.token().0,
                    event.is_readable() || event.is_read_closed(),
                );
            }
            for i in std::mem::take(&mut self.retry) {
                self.next_call(i, Instant::now());
            }
            let now = Instant::now();
            if now >= next_scan {
                next_scan = self.scan(now);
            }
        }
        self.stats
    }

    /// A readiness event on link `i`: what is left of its request written,
    /// what arrived read (`readable`), and its call completed if its reply
    /// is whole.
    fn on_ready(&mut self, i: usize, readable: bool) {
        let link = &mut self.links[i];
        if link.in_flight.is_none() {
            return;
        }
        if link.wants_writable {
            if let Err(e) = link.send(&self.poll, i, &self.plan.counter) {
                return self.fail_call(i, CallError::Io(e));
            }
        }
        if !readable {
            return;
        }
        let Some(stream) = link.stream.as_mut() else {
            return;
        };
        let mut drained = false;
        loop {
            let parsed = match link.exchange.reply(link.input.available()) {
                Ok(parsed) => parsed,
                Err(e) => return self.fail_call(i, e),
            };
            match parsed {
                // The rest comes with the next readable event.
                Parsed::Incomplete { .. } if drained => return,
                Parsed::Incomplete { at_least } => {
                    match read_from(&mut link.input, stream, at_least, &self.plan.counter) {
                        Ok(Filled::Drained) => drained = true,
                        Ok(Filled::More) => {}
                        Err(e) => return self.fail_call(i, CallError::Io(e)),
                    }
                }
                Parsed::Complete { consumed, outcome } => {
                    link.input.consume(consumed);
                    let outcome = outcome.and_then(|o| link.exchange.verify(o));
                    let end = Instant::now();
                    if !self.complete(i, end, outcome) {
                        return;
                    }
                    return self.next_call(i, end);
                }
            }
        }
    }

    /// Records link `i`'s call in flight; false: its caller stopped.
    fn complete(&mut self, i: usize, end: Instant, outcome: Result<(), CallError>) -> bool {
        let Some((issued, start)) = self.links[i].in_flight.take() else {
            return true;
        };
        let caller = self.callers[i]
            .as_mut()
            .expect("an active link has its caller");
        if caller.complete(issued, end.saturating_duration_since(start), end, outcome) {
            return true;
        }
        self.stop(i);
        false
    }

    /// Link `i`'s next call, started at `now`, or its caller's end.
    fn next_call(&mut self, i: usize, now: Instant) {
        let Some(caller) = self.callers[i].as_mut() else {
            return;
        };
        let Some(issued) = caller.issue() else {
            return self.stop(i);
        };
        let link = &mut self.links[i];
        link.in_flight = Some((issued, now));
        if link.exchange.wants_new_connection() {
            if let Some(mut stream) = link.stream.take() {
                let _ = self.poll.registry().deregister(&mut stream);
                link.input = Received::default();
            }
        }
        if link.stream.is_none() {
            match connect(&self.plan.target).and_then(|mut s| {
                register(&self.poll, &mut s, i)
                    .map(|()| s)
                    .map_err(CallError::Io)
            }) {
                Ok(stream) => link.stream = Some(stream),
                Err(e) => return self.fail_connection(i, e),
            }
            link.exchange.connection_opened();
        }
        if let Err(e) = link.exchange.request(&mut link.out) {
            return self.fail_call(i, e);
        }
        link.written = 0;
        if let Err(e) = link.send(&self.poll, i, &self.plan.counter) {
            self.fail_call(i, CallError::Io(e));
        }
    }

    /// Link `i`'s call failed mid-exchange: the socket may hold part of it,
    /// so it is replaced before the next call, on the next loop turn.
    fn fail_call(&mut self, i: usize, error: CallError) {
        if let Some(mut stream) = self.links[i].stream.take() {
            let _ = self.poll.registry().deregister(&mut stream);
        }
        self.fail_connection(i, error);
    }

    /// Link `i`'s call failed and the link has no socket.
    fn fail_connection(&mut self, i: usize, error: CallError) {
        let link = &mut self.links[i];
        link.input = Received::default();
        link.out.clear();
        link.wants_writable = false;
        if link.in_flight.is_none() {
            // Not yet issued (a registration that failed at the start).
            self.retry.push(i);
            return;
        }
        if self.complete(i, Instant::now(), Err(error)) {
            self.retry.push(i);
        }
    }

    /// Link `i`'s caller stopped calling.
    fn stop(&mut self, i: usize) {
        if let Some(caller) = self.callers[i].take() {
            self.stats.push(caller.into_stats());
            self.active -= 1;
        }
        let link = &mut self.links[i];
        link.in_flight = None;
        if let Some(mut stream) = link.stream.take() {
            let _ = self.poll.registry().deregister(&mut stream);
        }
    }

    /// Fails the calls past their deadline; when the next scan is due.
    fn scan(&mut self, now: Instant) -> Instant {
        let timeout = self.plan.timeout;
        let mut next = now + SCAN;
        for i in 0..self.links.len() {
            let Some((_, start)) = self.links[i].in_flight else {
                continue;
            };
            let due = start + timeout;
            if due <= now {
                self.fail_call(i, CallError::Timeout);
            } else {
                next = next.min(due);
            }
        }
        next
    }
}

fn register(poll: &Poll, stream: &mut TcpStream, i: usize) -> io::Result<()> {
    poll.registry()
        .register(stream, Token(i), Interest::READABLE)
}

impl<E> Link<E> {
    /// Writes what is left of the request; registers for writable events
    /// while some of it waits for room, and no longer once it is all sent.
    fn send(&mut self, poll: &Poll, i: usize, counter: &WireCounter) -> io::Result<()> {
        let stream = self.stream.as_mut().ok_or(io::ErrorKind::NotConnected)?;
        flush(stream, &self.out, &mut self.written, counter)?;
        let waiting = self.written < self.out.len();
        if waiting != self.wants_writable {
            let interest = if waiting {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            poll.registry().reregister(stream, Token(i), interest)?;
            self.wants_writable = waiting;
        }
        Ok(())
    }
}

/// Writes `out[*written..]`; what the socket does not take now goes on the
/// next writable event.
fn flush(
    stream: &mut TcpStream,
    out: &[u8],
    written: &mut usize,
    counter: &WireCounter,
) -> io::Result<()> {
    while *written < out.len() {
        match stream.write(&out[*written..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                *written += n;
                counter.add_sent(n);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// What one read left.
enum Filled {
    /// The socket may hold more: read again.
    More,
    /// The socket is drained until the next readable event.
    Drained,
}

/// One read into `input`, with room for at least `need` available bytes in
/// all. A read that does not fill the room drained the socket
/// (edge-triggered readiness fires again when more arrives).
fn read_from(
    input: &mut Received,
    stream: &mut TcpStream,
    need: usize,
    counter: &WireCounter,
) -> io::Result<Filled> {
    let spare = input.spare(need, usize::MAX);
    let room = spare.len();
    loop {
        return match stream.read(spare) {
            Ok(0) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            )),
            Ok(n) => {
                input.filled(n);
                counter.add_received(n);
                Ok(if n == room {
                    Filled::More
                } else {
                    Filled::Drained
                })
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Filled::Drained),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Err(e),
        };
    }
}
