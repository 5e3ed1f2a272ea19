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

use super::shared::{Call, Command, Reply};
use super::writer::Writer;
use crate::protocol::{CallError, WireCounter};
use crate::tls::Transport;
use bytes::Bytes;
use std::io;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// A gRPC channel: one HTTP/2 connection at a time to one server, shared
/// by every caller (see the module documentation).
#[derive(Debug)]
pub struct Channel {
    target: Arc<str>,
    commands: mpsc::UnboundedSender<Command>,
}

impl Channel {
    /// Opens the first connection (plaintext or TLS, as `transport` says)
    /// and starts the writer.
    pub async fn open(
        target: &str,
        counter: WireCounter,
        transport: Transport,
    ) -> Result<Channel, CallError> {
        let target: Arc<str> = target.into();
        let (commands, queue) = mpsc::unbounded_channel();
        let writer = Writer::open(
            Arc::clone(&target),
            counter,
            transport,
            queue,
            commands.clone(),
        )
        .await?;
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
