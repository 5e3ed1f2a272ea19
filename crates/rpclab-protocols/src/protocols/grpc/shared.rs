//! What the callers of a gRPC `Channel`, its writer task
//! and its reader tasks share (the module documentation of `conn` says how
//! they fit): a queued [`Call`] and its [`Reply`], the [`Command`]s the
//! writer takes, the [`Event`]s the reader sends it, the server's
//! [`Settings`], and the [`Shared`] state behind one lock per batch. Its own
//! module so that the channel, the writer and the reader each build on it
//! and none of them on another's internals.

use crate::protocol::CallError;
use bytes::Bytes;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use tokio::sync::oneshot;

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
