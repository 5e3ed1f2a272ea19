//! The writer task of a gRPC `Channel`: stream ids,
//! send windows, the concurrency limit, batched writes and reconnection
//! (see the `conn` module for how it fits with the readers).

use super::frame::{self, DATA, END_HEADERS, END_STREAM, HEADERS};
use super::reader;
use super::shared::{Call, Command, Event, Reply, Settings, Shared};
use crate::protocol::{CallError, WireCounter};
use crate::tls::{Transport, WriteHalf};
use bytes::Bytes;
use std::collections::VecDeque;
use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// Most calls taken from the queue for one write.
const MAX_BATCH_CALLS: usize = 1024;

/// The writer and what it keeps between rounds.
pub struct Writer {
    target: Arc<str>,
    counter: WireCounter,
    transport: Transport,
    queue: mpsc::UnboundedReceiver<Command>,
    /// Handed to each new connection's reader.
    commands: mpsc::UnboundedSender<Command>,
    live: Option<Live>,
    /// Connections that take no new streams but may still finish some.
    retired: Vec<Live>,
    generation: u64,
    /// What the next write sends.
    out: Vec<u8>,
    /// Calls taken from the queue this round, and calls waiting for a
    /// stream the server allows.
    incoming: Vec<Call>,
    waiting: VecDeque<Call>,
    /// Reused for the round's newly started streams.
    started: Vec<(u32, oneshot::Sender<Reply>)>,
}

/// One TCP connection, as the writer sees it.
struct Live {
    generation: u64,
    write: WriteHalf,
    shared: Arc<Shared>,
    reader: JoinHandle<()>,
    /// Set when a write failed.
    failed: bool,
    next_id: u32,
    open: u32,
    max_streams: u32,
    max_frame: usize,
    /// Send windows: the connection's, and a new stream's.
    window: i64,
    initial_window: i64,
    /// Streams with DATA not yet sent, in order.
    pending: VecDeque<Pending>,
}

/// A request body not yet wholly sent.
struct Pending {
    stream: u32,
    body: Bytes,
    sent: usize,
    window: i64,
}

impl Writer {
    /// A writer with its first connection open.
    pub async fn open(
        target: Arc<str>,
        counter: WireCounter,
        transport: Transport,
        queue: mpsc::UnboundedReceiver<Command>,
        commands: mpsc::UnboundedSender<Command>,
    ) -> Result<Writer, CallError> {
        let live = Live::connect(&target, &counter, &transport, 1, &commands).await?;
        Ok(Writer {
            target,
            counter,
            transport,
            queue,
            commands,
            live: Some(live),
            retired: Vec::new(),
            generation: 1,
            out: Vec::with_capacity(64 * 1024),
            incoming: Vec::with_capacity(64),
            waiting: VecDeque::new(),
            started: Vec::with_capacity(64),
        })
    }

    /// Takes whatever is queued, writes it in one go, until the channel
    /// is dropped.
    pub async fn run(mut self) {
        while let Some(first) = self.queue.recv().await {
            if !self.take(first) {
                return;
            }
            while self.incoming.len() < MAX_BATCH_CALLS {
                match self.queue.try_recv() {
                    Ok(command) => {
                        if !self.take(command) {
                            return;
                        }
                    }
                    Err(_) => break,
                }
            }
            self.round().await;
        }
    }

    /// Takes one command; `false` to stop.
    fn take(&mut self, command: Command) -> bool {
        match command {
            Command::Call(call) => self.incoming.push(call),
            Command::Event(generation, event) => {
                // A retired connection's events are dropped: nothing more
                // is sent on it.
                if let Some(live) = self.live.as_mut().filter(|l| l.generation == generation) {
                    live.apply(event, &mut self.out);
                }
            }
            Command::GaveUp => {
                // Not sent yet: never sent. Sent: the readers reset it.
                self.incoming.retain(|c| !c.reply.is_closed());
                self.waiting.retain(|c| !c.reply.is_closed());
                for live in self.live.iter().chain(&self.retired) {
                    live.shared.ask_sweep();
                }
            }
            Command::Close => return false,
        }
        true
    }

    /// Starts the calls it can (on a new connection if the current one
    /// takes no more) and writes.
    async fn round(&mut self) {
        self.retired.retain(|live| !live.reader.is_finished());
        let calls = !self.incoming.is_empty() || !self.waiting.is_empty();
        if calls && !self.live.as_ref().is_some_and(Live::usable) {
            self.write_out().await;
            self.reconnect().await;
        }
        self.start_calls();
        self.write_out().await;
    }

    async fn reconnect(&mut self) {
        if let Some(old) = self.live.take() {
            if !old.failed && !old.reader.is_finished() {
                self.retired.push(old);
            }
        }
        self.generation += 1;
        match Live::connect(
            &self.target,
            &self.counter,
            &self.transport,
            self.generation,
            &self.commands,
        )
        .await
        {
            Ok(live) => self.live = Some(live),
            Err(e) => {
                let message = match e {
                    CallError::Connect(m) => m,
                    other => other.to_string(),
                };
                for call in self.incoming.drain(..).chain(self.waiting.drain(..)) {
                    let _ = call.reply.send(Err(CallError::Connect(message.clone())));
                }
            }
        }
    }

    /// Gives the waiting and new calls their streams, as far as the server
    /// allows, and registers them for the reader.
    fn start_calls(&mut self) {
        let Some(live) = &mut self.live else { return };
        let mut queue = std::mem::take(&mut self.waiting);
        for call in queue.drain(..).chain(self.incoming.drain(..)) {
            if !live.has_room() {
                self.waiting.push_back(call);
                continue;
            }
            let stream = live.next_id;
            live.next_id += 2;
            live.open += 1;
            frame::put_head(
                &mut self.out,
                call.headers.len(),
                HEADERS,
                END_HEADERS,
                stream,
            );
            self.out.extend_from_slice(&call.headers);
            live.send_data(&mut self.out, stream, call.body);
            self.started.push((stream, call.reply));
        }
        if self.waiting.is_empty() {
            // Keep the allocation.
            self.waiting = queue;
        }
        if self.started.is_empty() {
            return;
        }
        let mut registry = live.shared.registry();
        if registry.closed {
            drop(registry);
            for (_, reply) in self.started.drain(..) {
                let _ = reply.send(Err(CallError::Io(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    format!(
                        "{}: the connection closed as the call was sent",
                        self.target
                    ),
                ))));
            }
        } else {
            registry.streams.append(&mut self.started);
        }
    }

    async fn write_out(&mut self) {
        if self.out.is_empty() {
            return;
        }
        if let Some(live) = &mut self.live {
            if !live.failed && write_flushed(&mut live.write, &self.out).await.is_err() {
                // The reader sees the same socket fail and says why.
                live.failed = true;
            }
        }
        self.out.clear();
    }
}

/// Writes `bytes` whole and flushes: a no-op for plaintext, and for TLS
/// what pushes the records rustls still holds onto the socket.
async fn write_flushed(write: &mut WriteHalf, bytes: &[u8]) -> std::io::Result<()> {
    write.write_all(bytes).await?;
    write.flush().await
}

impl Live {
    /// Opens a connection and sends the preface; its reader reports to
    /// `commands` as connection `generation`.
    async fn connect(
        target: &Arc<str>,
        counter: &WireCounter,
        transport: &Transport,
        generation: u64,
        commands: &mpsc::UnboundedSender<Command>,
    ) -> Result<Live, CallError> {
        let (read, mut write) = transport.connect(target, counter).await?;
        write_flushed(&mut write, &frame::preface())
            .await
            .map_err(|e| {
                CallError::Connect(format!("{target}: sending the HTTP/2 preface: {e}"))
            })?;
        let shared = Arc::new(Shared::default());
        let reader = tokio::spawn(reader::run(
            read,
            Arc::clone(target),
            generation,
            Arc::clone(&shared),
            commands.clone(),
        ));
        Ok(Live {
            generation,
            write,
            shared,
            reader,
            failed: false,
            next_id: 1,
            open: 0,
            max_streams: u32::MAX,
            max_frame: frame::DEFAULT_MAX_FRAME,
            window: i64::from(frame::DEFAULT_WINDOW),
            initial_window: i64::from(frame::DEFAULT_WINDOW),
            pending: VecDeque::new(),
        })
    }

    /// Whether new streams may be opened on it (now or once some end).
    fn usable(&self) -> bool {
        !self.failed
            && self.next_id <= frame::MAX_STREAM_ID
            && !self.shared.ended.load(Ordering::Acquire)
    }

    fn has_room(&self) -> bool {
        self.open < self.max_streams && self.next_id <= frame::MAX_STREAM_ID
    }

    fn apply(&mut self, event: Event, out: &mut Vec<u8>) {
        match event {
            Event::Send(frames) => out.extend_from_slice(&frames),
            Event::Settings(settings) => self.settings(settings, out),
            Event::Window {
                stream: 0,
                increment,
            } => {
                self.window += i64::from(increment);
                self.pump(out);
            }
            Event::Window { stream, increment } => {
                if let Some(p) = self.pending.iter_mut().find(|p| p.stream == stream) {
                    p.window += i64::from(increment);
                    self.pump(out);
                }
            }
            Event::Ended(n) => self.open = self.open.saturating_sub(n),
            Event::Reset(stream) => self.pending.retain(|p| p.stream != stream),
        }
    }

    /// Applies the server's SETTINGS and acknowledges them.
    fn settings(&mut self, s: Settings, out: &mut Vec<u8>) {
        if let Some(max) = s.max_concurrent_streams {
            self.max_streams = max;
        }
        if let Some(frame) = s.max_frame {
            self.max_frame = frame as usize;
        }
        if let Some(window) = s.initial_window {
            let delta = i64::from(window) - self.initial_window;
            self.initial_window = i64::from(window);
            for p in &mut self.pending {
                p.window += delta;
            }
        }
        frame::put_frame(out, frame::SETTINGS, frame::ACK, 0, &[]);
        self.pump(out);
    }

    /// Appends a stream's DATA: at once when it fits the windows and one
    /// frame, else as far as the windows allow (the rest waits).
    fn send_data(&mut self, out: &mut Vec<u8>, stream: u32, body: Bytes) {
        let len = body.len() as i64;
        if self.pending.is_empty()
            && len <= self.window
            && len <= self.initial_window
            && body.len() <= self.max_frame
        {
            frame::put_frame(out, DATA, END_STREAM, stream, &body);
            self.window -= len;
            return;
        }
        let window = self.initial_window;
        self.pending.push_back(Pending {
            stream,
            body,
            sent: 0,
            window,
        });
        self.pump(out);
    }

    /// Sends what the windows allow of the waiting DATA, in order.
    fn pump(&mut self, out: &mut Vec<u8>) {
        let max_frame = self.max_frame;
        let window = &mut self.window;
        self.pending.retain_mut(|p| loop {
            let left = p.body.len() - p.sent;
            let room = (*window).min(p.window).max(0) as usize;
            let n = left.min(max_frame).min(room);
            if n == 0 && left > 0 {
                return true;
            }
            let end = n == left;
            let flags = if end { END_STREAM } else { 0 };
            frame::put_frame(out, DATA, flags, p.stream, &p.body[p.sent..p.sent + n]);
            p.sent += n;
            p.window -= n as i64;
            *window -= n as i64;
            if end {
                return false;
            }
        });
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        // Its calls fail ("the connection ended under the call").
        self.reader.abort();
    }
}
