//! The client's own HTTP/2 connection for unary gRPC calls: what `h2` did
//! for the client, reduced to what a unary call needs, so that a call on a
//! shared connection costs a few frame headers and a table entry.
//!
//! # Tasks
//!
//! A [`Channel`] is one **writer** task that lives as long as the channel
//! and owns the write half of the current TCP connection, and one
//! **reader** task per TCP connection ([`super::reader`]).
//!
//! * Callers queue their call (the prepared header block and DATA payload,
//!   reference-counted, and a oneshot sender for the reply) on the
//!   writer's unbounded channel. The writer takes everything queued at
//!   once, gives each call the next stream id, appends its HEADERS frame
//!   (the block as prepared, only the stream id in the frame header
//!   differs) and DATA frame(s) to one buffer, registers the calls' reply
//!   senders for the reader under one lock per batch, and writes the
//!   buffer in one `write` (`write_all`). On a current-thread runtime the
//!   callers of a round queue before the writer runs, so a round is one
//!   write however many streams share the connection.
//! * The reader reads whole frames, decodes the header blocks (HPACK with
//!   the dynamic table), gathers DATA, and when a stream ends checks the
//!   reply and hands its message (a slice of the read buffer, not copied)
//!   to the caller. It sends back what the server asks (SETTINGS and PING
//!   acknowledgements, the connection's receive window) and tells the
//!   writer what changes its sending (the server's SETTINGS, its
//!   WINDOW_UPDATEs, streams ended) through the same channel, once per
//!   read at most.
//!
//! # Flow control and limits
//!
//! The writer keeps the connection's and each unfinished stream's send
//! windows: DATA beyond them waits (a 1 MiB request goes out as the server
//! opens its windows) and is cut to the server's SETTINGS_MAX_FRAME_SIZE.
//! A change of SETTINGS_INITIAL_WINDOW_SIZE moves the open streams'
//! windows by the difference. Calls beyond the server's
//! SETTINGS_MAX_CONCURRENT_STREAMS wait in the writer for a stream to end.
//! The client's receive windows: the largest stream window (a reply is
//! never held back per stream) and a connection window given back every
//! 1 GiB of DATA received.
//!
//! # Reconnection
//!
//! When the reader sees the connection end (EOF, an error, a GOAWAY) it
//! fails the calls it cannot finish, and the writer opens a new TCP
//! connection for the next calls; a connection that served a GOAWAY or ran
//! out of stream ids is kept until its reader is done, so that the streams
//! the server still answers complete. A connection that cannot be opened
//! fails the calls queued for it with [`CallError::Connect`]; the next call
//! tries again.

use super::writer::Writer;
use crate::protocol::{CallError, WireCounter};
use bytes::Bytes;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// A call's reply: the message (without its prefix), or why there is none.
pub type Reply = Result<Bytes, CallError>;

/// One call for the writer.
#[derive(Debug)]
pub struct Call {
    /// The request's header block (see [`super::frame::request_headers`]).
    pub headers: Bytes,
    /// The DATA payload: the length-prefixed message.
    pub body: Bytes,
    pub reply: oneshot::Sender<Reply>,
}

/// What the writer is told.
#[derive(Debug)]
pub enum Command {
    Call(Call),
    /// From the reader of connection `generation`.
    Event(u64, Event),
    /// A caller gave up its call (its future was dropped: a timeout).
    GaveUp,
    /// The channel is dropped: stop.
    Close,
}

/// What a reader tells the writer.
#[derive(Debug)]
pub enum Event {
    /// Frames to send at once (acknowledgements, resets, window updates).
    Send(Vec<u8>),
    /// The server's SETTINGS (to apply, then acknowledge).
    Settings(Settings),
    /// A send window grew (stream 0: the connection's).
    Window { stream: u32, increment: u32 },
    /// Streams ended (replied, reset or given up).
    Ended(u32),
    /// The server reset a stream: drop what is left of its DATA.
    Reset(u32),
}

/// The server's SETTINGS values the writer uses; `None` when not in the
/// frame.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub max_concurrent_streams: Option<u32>,
    pub initial_window: Option<u32>,
    pub max_frame: Option<u32>,
}

/// What the writer and a connection's reader share.
#[derive(Debug, Default)]
pub struct Shared {
    /// Set by the reader when the connection can take no new streams
    /// (ended, or the server sent GOAWAY).
    pub ended: AtomicBool,
    /// Streams whose HEADERS the writer sends, for the reader to pick up.
    pub registry: Mutex<Registry>,
    /// Set by the writer when a caller gave up: the reader then resets the
    /// streams whose callers are gone ([`Shared::sweep_asked`]).
    sweep: AtomicBool,
    sweep_waker: atomic_waker::AtomicWaker,
}

#[derive(Debug, Default)]
pub struct Registry {
    /// Set by the reader when it ends: nothing more is registered.
    pub closed: bool,
    pub streams: Vec<(u32, oneshot::Sender<Reply>)>,
}

impl Shared {
    /// Asks the reader to reset the streams no caller waits for, and wakes
    /// it (it may be waiting for the socket).
    pub fn ask_sweep(&self) {
        self.sweep.store(true, Ordering::Release);
        self.sweep_waker.wake();
    }

    /// Completes when a sweep was asked for (and takes the request). Polled
    /// beside each socket read: one atomic load and one waker registration.
    pub fn sweep_asked(&self) -> impl std::future::Future<Output = ()> + '_ {
        std::future::poll_fn(|cx| {
            if self.sweep.swap(false, Ordering::AcqRel) {
                return std::task::Poll::Ready(());
            }
            self.sweep_waker.register(cx.waker());
            if self.sweep.swap(false, Ordering::AcqRel) {
                std::task::Poll::Ready(())
            } else {
                std::task::Poll::Pending
            }
        })
    }

    pub fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        // A panic cannot leave the registry half-written (single pushes
        // and a take).
        self.registry.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A gRPC channel: one HTTP/2 connection at a time to one server, shared
/// by every caller (see the module documentation).
#[derive(Debug)]
pub struct Channel {
    target: Arc<str>,
    commands: mpsc::UnboundedSender<Command>,
}

impl Channel {
    /// Opens the first connection and starts the writer.
    pub async fn open(target: &str, counter: WireCounter) -> Result<Channel, CallError> {
        let target: Arc<str> = target.into();
        let (commands, queue) = mpsc::unbounded_channel();
        let writer = Writer::open(Arc::clone(&target), counter, queue, commands.clone()).await?;
        tokio::spawn(writer.run());
        Ok(Channel { target, commands })
    }

    /// Makes one call: queues it and waits for its reply. A call whose
    /// future is dropped before its reply (its timeout) tells the writer,
    /// so that its stream is reset (RST_STREAM with CANCEL) and its place
    /// under the server's SETTINGS_MAX_CONCURRENT_STREAMS freed at once,
    /// or, if it was not sent yet, that it is never sent.
    pub async fn call(&self, headers: Bytes, body: Bytes) -> Reply {
        let (reply, answer) = oneshot::channel();
        let call = Call {
            headers,
            body,
            reply,
        };
        if self.commands.send(Command::Call(call)).is_err() {
            return Err(self.gone());
        }
        let mut waiting = Waiting {
            answer: Some(answer),
            commands: &self.commands,
        };
        let answer = waiting.answer.as_mut().expect("set above");
        let reply = answer.await.unwrap_or_else(|_| Err(self.gone()));
        waiting.answer = None;
        reply
    }

    fn gone(&self) -> CallError {
        CallError::Io(io::Error::new(
            io::ErrorKind::ConnectionAborted,
            format!("{}: the connection ended under the call", self.target),
        ))
    }
}

/// A call waiting for its reply; dropped while still waiting, it closes
/// its end of the reply channel first (so that the reader sees the call is
/// gone) and then tells the writer.
struct Waiting<'a> {
    answer: Option<oneshot::Receiver<Reply>>,
    commands: &'a mpsc::UnboundedSender<Command>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Some(answer) = self.answer.take() {
            drop(answer);
            let _ = self.commands.send(Command::GaveUp);
        }
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        // The readers hold senders too: tell the writer to stop.
        let _ = self.commands.send(Command::Close);
    }
}
