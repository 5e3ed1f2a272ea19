//! One Thrift socket, one call at a time: what the contract's Thrift
//! ([`super::ThriftConnection`]) and the generic Thrift call
//! (`protocols::thrift_generic`) both run their calls on.
//!
//! The [`Link`] keeps its socket, its buffers and the prepared call behind
//! a `tokio::sync::Mutex`, so concurrent callers queue (in FIFO order), as
//! with a blocking Thrift client. A call that fails in the middle of an
//! exchange, or whose future is dropped (a timeout), leaves the socket in
//! an unknown state: the next call replaces the socket with a new one
//! first.

use crate::exchange::{Exchange, Parsed, Received};
use crate::net::{connect_tcp, CountingStream};
use crate::protocol::{CallError, WireCounter};
use std::future::Future;
use std::io;
use std::pin::Pin;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Mutex;

/// Largest reply accepted, framed or not: far above the contract's largest
/// (a 1 MiB string), far below what would hurt the client.
pub const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// One socket making calls one at a time (see the module documentation).
#[derive(Debug)]
pub struct Link<E> {
    target: String,
    counter: WireCounter,
    state: Mutex<State<E>>,
}

/// A link's socket and everything it reuses from call to call.
#[derive(Debug)]
struct State<E> {
    stream: CountingStream<TcpStream>,
    /// Set while an exchange is under way; still set on entry means the
    /// previous call failed or was cancelled mid-exchange.
    dirty: bool,
    /// The request being sent (with its frame header when framed).
    out: Vec<u8>,
    input: Received,
    /// The call being made over and over, prepared once.
    prepared: Option<E>,
}

impl<E> State<E> {
    fn new(stream: CountingStream<TcpStream>) -> Self {
        State {
            stream,
            dirty: false,
            out: Vec::new(),
            input: Received::default(),
            prepared: None,
        }
    }
}

impl<E: Exchange> Link<E> {
    pub async fn open(target: &str, counter: WireCounter) -> Result<Link<E>, CallError> {
        let stream = connect_tcp(target).await?;
        Ok(Link {
            target: target.to_owned(),
            state: Mutex::new(State::new(CountingStream::new(stream, counter.clone()))),
            counter,
        })
    }

    /// One exchange of the prepared call that `prepare` picks (the one
    /// kept, or a new one in its slot): its request sent, its reply read
    /// whole and parsed.
    pub async fn exchange(
        &self,
        prepare: impl FnOnce(&mut Option<E>) -> Result<&mut E, CallError>,
    ) -> Result<E::Outcome, CallError> {
        let mut guard = self.state.lock().await;
        if guard.dirty {
            // The socket goes, the prepared call stays.
            let prepared = guard.prepared.take();
            *guard = self.reopen().await?;
            guard.prepared = prepared;
        }
        let State {
            stream,
            dirty,
            out,
            input,
            prepared,
        } = &mut *guard;
        let step = prepare(prepared)?;
        step.request(out)?;

        // From here until the reply is read whole, the socket may hold part
        // of an exchange: a failure or a cancellation leaves it dirty.
        *dirty = true;
        stream.write_all(out).await?;
        loop {
            match step.reply(input.available())? {
                Parsed::Incomplete { at_least } => read_more(input, stream, at_least).await?,
                Parsed::Complete { consumed, outcome } => {
                    // The exchange is complete and in step: the socket is
                    // clean again.
                    input.consume(consumed);
                    *dirty = false;
                    return outcome;
                }
            }
        }
    }

    /// A new socket and state in place of a dirty one. Boxed and called
    /// through a `dyn` future, so that the connect's code (resolving,
    /// connecting, its errors) is not inlined into the exchange that every
    /// call runs: it runs only after a failed or cancelled call.
    fn reopen(&self) -> Pin<Box<dyn Future<Output = Result<State<E>, CallError>> + Send + '_>>
    where
        E: Send,
    {
        Box::pin(async move {
            let stream = connect_tcp(&self.target).await?;
            Ok(State::new(CountingStream::new(
                stream,
                self.counter.clone(),
            )))
        })
    }
}

/// Reads once from `stream` into `input`, as much as fits, making room for
/// at least `need` available bytes in all.
pub async fn read_more<S: AsyncRead + Unpin>(
    input: &mut Received,
    stream: &mut S,
    need: usize,
) -> io::Result<()> {
    let spare = input.spare(need, MAX_MESSAGE + 4);
    if spare.is_empty() {
        // Unreachable: `need` never exceeds MAX_MESSAGE + 4.
        return Err(io::Error::other("read buffer full"));
    }
    let n = stream.read(spare).await?;
    if n == 0 {
        return Err(closed());
    }
    input.filled(n);
    Ok(())
}

#[cold]
fn closed() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the server closed the connection",
    )
}
