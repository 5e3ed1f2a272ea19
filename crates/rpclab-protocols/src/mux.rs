//! Multiplexed connections: one TCP connection carrying many requests at
//! once, matched to their replies by request id, as the own clients of
//! Dubbo, bolt, Ice and Motan do. Written once here; a protocol says what
//! differs through [`Framing`] (how its frames are delimited, what an
//! incoming frame is, its heartbeat), and its calls through a codec
//! (`mux_exchange::CallCodec`), with which `mux_connection::MuxConnection`
//! makes each call: encode with the id [`Mux::call`] gives, await the reply
//! frame, decode.
//!
//! # Tasks
//!
//! Each [`Mux`] runs:
//!
//! * a **writer** owning the socket's write half, fed through an unbounded
//!   channel of encoded requests (bounded in practice by the load model's
//!   calls in flight). It coalesces whatever is queued into one write
//!   (small messages are copied into a reused 64 KiB batch, messages of
//!   16 KiB or more are written directly), so a busy connection makes few
//!   system calls. When every sender is gone (the `Mux` is dropped) it
//!   writes what is queued, the protocol's [`Framing::goodbye`] if any,
//!   and shuts the socket down;
//! * a **reader** owning the read half: it only frames (the header, then
//!   the rest of the frame into a `BytesMut` sized from the header) and
//!   hands each reply, a slice of its buffer (no copy), to the waiting
//!   caller through its oneshot sender. The caller decodes, so decoding
//!   runs on the callers' tasks in parallel, not serialised on the reader.
//!   It sends what [`Framing::route`] asks to send back at once (e.g. the
//!   answer to the peer's heartbeat) and drops replies nobody waits for
//!   any more (calls cancelled by a timeout);
//! * with a heartbeat period, a **heartbeat** ticker: every period, if
//!   nothing was written since the previous tick, it queues the
//!   protocol's [`Framing::heartbeat`] (so an idle connection says
//!   something at least every 2 × period, which the caller picks within the
//!   peer's idle timeout). Under load it costs one relaxed atomic store per
//!   write batch.
//!
//! # The in-flight map
//!
//! Request id → oneshot sender, sharded: 16 shards, each a
//! `std::sync::Mutex<HashMap>` preallocated for 64 entries, picked by the
//! low bits of the id. Ids are sequential per connection, so consecutive
//! calls land on different shards, and a critical section is a single
//! insert or remove (tens of nanoseconds, never held across an await): the
//! callers inserting and the one reader removing rarely meet on one lock.
//! A lock-free map would save little here and cost a dependency and
//! subtler code; the hash is one multiplication (ids are not
//! attacker-chosen). A call whose future is dropped removes its own entry.
//!
//! When the socket fails, the peer closes it or sends something out of
//! step, every waiting call fails with the reason, and so does every later
//! call on that connection (there is no reconnection: a load-model
//! connection is one TCP connection for the whole cell).
//!
//! # Per-call work
//!
//! The protocol's one request buffer (sized up front, never regrown), one
//! oneshot channel and one map entry; the reply is a slice of the reader's
//! buffer, handed over without a copy.

use crate::id_hash::IdMap;
use crate::protocol::CallError;
use bytes::{Bytes, BytesMut};
use std::collections::HashMap;
use std::fmt;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// The `CONNECTION_MODEL` of a protocol whose connections are a [`Mux`].
pub const CONNECTION_MODEL: &str =
    "multiplexed: many requests in flight per connection, matched by request id";

/// What the multiplexer needs to know of a protocol's framing.
pub trait Framing: Send + Sync + 'static {
    /// The protocol, for messages: "dubbo", "bolt", ...
    const NAME: &'static str;
    /// What the other end is called in messages ("server", "provider").
    const PEER: &'static str = "server";
    /// The request ids this protocol can carry: the mux hands out
    /// `FIRST_ID`, `FIRST_ID + 1`, ... `MAX_ID`, then `FIRST_ID` again.
    const FIRST_ID: u64 = 0;
    /// See [`FIRST_ID`](Self::FIRST_ID).
    const MAX_ID: u64 = u64::MAX;

    /// What [`split`](Self::split) learns of a whole frame and hands to
    /// [`route`](Self::route) (typically its decoded header).
    type Head: Send;
    /// What a caller gets for its request: the reply frame's bytes (a slice
    /// of the reader's buffer) and whatever the reader already parsed.
    type Reply: Send + 'static;

    /// Whether `buf` starts with a whole frame; if not, how long the frame
    /// under way is when its header says (to size the next read). An error
    /// (a malformed or oversized header) closes the connection.
    fn split(&self, buf: &[u8]) -> Result<Split<Self::Head>, CallError>;

    /// What a whole frame is. An error closes the connection.
    fn route(&self, head: Self::Head, frame: Bytes) -> Result<Inbound<Self::Reply>, CallError>;

    /// The heartbeat to send when the connection has been idle; `id` gives
    /// a request id if it needs one. An error stops the heartbeat.
    fn heartbeat(&self, id: impl FnOnce() -> u64) -> Result<Bytes, CallError>;

    /// What to send before shutting the socket down when the connection is
    /// dropped (e.g. Ice's close-connection), if anything.
    fn goodbye(&self) -> Option<Bytes> {
        None
    }
}

/// Whether a buffer starts with a whole frame.
#[derive(Debug)]
pub enum Split<H> {
    /// The first `len` bytes are a frame (`len` > 0).
    Whole { head: H, len: usize },
    /// More bytes are needed; `len` is the frame's whole length if known.
    Partial { len: Option<usize> },
}

/// What an incoming frame is.
#[derive(Debug)]
pub enum Inbound<R> {
    /// The reply to request `id`, for its caller (if still waiting).
    Reply { id: u64, reply: R },
    /// Something to send back at once (e.g. the answer to a heartbeat).
    Answer(Bytes),
    /// Nothing to do (an answer to our heartbeat, an event, a callback...).
    Skip,
    /// The peer closes the connection: fail every call with this reason.
    Close(String),
}

/// One multiplexed connection, shared by many callers (see the module
/// documentation).
pub struct Mux<F: Framing> {
    shared: Arc<Shared<F>>,
    requests: mpsc::UnboundedSender<Bytes>,
    reader: JoinHandle<()>,
    heartbeat: Option<JoinHandle<()>>,
}

impl<F: Framing> fmt::Debug for Mux<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mux")
            .field("protocol", &F::NAME)
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl<F: Framing> Mux<F> {
    /// Runs the connection's tasks over a stream's two halves, with a
    /// heartbeat after `heartbeat` of write silence (`None`: never).
    pub fn start<R, W>(read: R, write: W, heartbeat: Option<Duration>, framing: F) -> Mux<F>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let shared = Arc::new(Shared::new(framing));
        let (requests, queue) = mpsc::unbounded_channel();
        let reader = tokio::spawn(read_loop(read, Arc::clone(&shared), requests.clone()));
        // Detached: it ends when every request sender is gone.
        tokio::spawn(write_loop(write, queue, Arc::clone(&shared)));
        let heartbeat = heartbeat.map(|period| {
            tokio::spawn(heartbeat_loop(
                period,
                Arc::clone(&shared),
                requests.clone(),
            ))
        });
        Mux {
            shared,
            requests,
            reader,
            heartbeat,
        }
    }

    /// Sends the request `encode` builds for the id it is given and waits
    /// for its reply. Nothing is locked across the wait; if the returned
    /// future is dropped first, the call's entry is removed.
    pub async fn call(
        &self,
        encode: impl FnOnce(u64) -> Result<Vec<u8>, CallError>,
    ) -> Result<F::Reply, CallError> {
        let id = self.shared.next_id();
        let request = encode(id)?;
        let (tx, rx) = oneshot::channel();
        self.shared.register(id, tx)?;
        let mut pending = PendingGuard {
            shared: &self.shared,
            id,
            armed: true,
        };
        if self.requests.send(Bytes::from(request)).is_err() {
            return Err(self.shared.closed_error());
        }
        let reply = rx.await;
        // Resolved (or the sender dropped): the entry is gone already.
        pending.armed = false;
        reply.map_err(|_| self.shared.closed_error())?
    }

    /// The protocol's framing.
    pub fn framing(&self) -> &F {
        &self.shared.framing
    }

    /// Whether the connection has failed or been closed by the peer.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::SeqCst)
    }
}

impl<F: Framing> Drop for Mux<F> {
    fn drop(&mut self) {
        // The reader and the heartbeat hold request senders: stop them, and
        // the writer ends once it has written what is queued (then the
        // goodbye, and dropping the write half sends FIN).
        self.reader.abort();
        if let Some(h) = &self.heartbeat {
            h.abort();
        }
    }
}

type Reply<F> = Result<<F as Framing>::Reply, CallError>;

const SHARDS: usize = 16;
const SHARD_CAPACITY: usize = 64;

type Shard<F> = IdMap<u64, oneshot::Sender<Reply<F>>>;

/// What the callers and the connection's tasks share.
struct Shared<F: Framing> {
    framing: F,
    /// Calls so far: the next id is the `next`th of FIRST_ID..=MAX_ID.
    next: AtomicU64,
    pending: [Mutex<Shard<F>>; SHARDS],
    /// Set (after `reason`) when the connection is unusable.
    closed: AtomicBool,
    reason: OnceLock<(io::ErrorKind, String)>,
    /// Whether anything was written since the heartbeat's last tick.
    wrote: AtomicBool,
}

/// The `n`th id of `first..=max`, wrapping.
pub(crate) fn nth_id(first: u64, max: u64, n: u64) -> u64 {
    match (max - first).checked_add(1) {
        Some(span) => first + n % span,
        None => n, // the whole u64 range
    }
}

impl<F: Framing> Shared<F> {
    fn new(framing: F) -> Shared<F> {
        const { assert!(F::FIRST_ID <= F::MAX_ID) };
        Shared {
            framing,
            next: AtomicU64::new(0),
            pending: std::array::from_fn(|_| {
                Mutex::new(HashMap::with_capacity_and_hasher(
                    SHARD_CAPACITY,
                    Default::default(),
                ))
            }),
            closed: AtomicBool::new(false),
            reason: OnceLock::new(),
            wrote: AtomicBool::new(false),
        }
    }

    fn next_id(&self) -> u64 {
        nth_id(
            F::FIRST_ID,
            F::MAX_ID,
            self.next.fetch_add(1, Ordering::Relaxed),
        )
    }

    fn shard(&self, id: u64) -> std::sync::MutexGuard<'_, Shard<F>> {
        // A panic while holding a shard cannot leave the map inconsistent
        // (single insert/remove): ignore poisoning.
        self.pending[(id as usize) % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a caller waiting for reply `id`, unless the connection is
    /// closed. `closed` is read under the shard lock, which `close` takes
    /// after setting it: an entry is either refused here or drained there.
    fn register(&self, id: u64, tx: oneshot::Sender<Reply<F>>) -> Result<(), CallError> {
        let mut shard = self.shard(id);
        if self.closed.load(Ordering::SeqCst) {
            return Err(self.closed_error());
        }
        shard.insert(id, tx);
        Ok(())
    }

    fn take(&self, id: u64) -> Option<oneshot::Sender<Reply<F>>> {
        self.shard(id).remove(&id)
    }

    /// Marks the connection unusable and fails every waiting call.
    fn close(&self, kind: io::ErrorKind, reason: String) {
        let _ = self.reason.set((kind, reason));
        self.closed.store(true, Ordering::SeqCst);
        for shard in &self.pending {
            let drained: Vec<_> = {
                let mut shard = shard.lock().unwrap_or_else(|e| e.into_inner());
                shard.drain().map(|(_, tx)| tx).collect()
            };
            for tx in drained {
                let _ = tx.send(Err(self.closed_error()));
            }
        }
    }

    fn closed_error(&self) -> CallError {
        match self.reason.get() {
            Some((kind, reason)) => CallError::Io(io::Error::new(*kind, reason.clone())),
            None => CallError::Io(io::Error::new(
                io::ErrorKind::NotConnected,
                format!("{} connection closed", F::NAME),
            )),
        }
    }
}

/// Removes a call's entry if its future is dropped before the reply came.
struct PendingGuard<'a, F: Framing> {
    shared: &'a Shared<F>,
    id: u64,
    armed: bool,
}

impl<F: Framing> Drop for PendingGuard<'_, F> {
    fn drop(&mut self) {
        if self.armed {
            self.shared.take(self.id);
        }
    }
}

/// First size of a connection's read buffer; it grows to the largest
/// frame (each protocol's header bounds a frame's length).
const READ_BUFFER: usize = 64 * 1024;

async fn read_loop<F: Framing, R: AsyncRead + Unpin>(
    mut read: R,
    shared: Arc<Shared<F>>,
    requests: mpsc::UnboundedSender<Bytes>,
) {
    let (kind, reason) = match read_frames(&mut read, &shared, &requests).await {
        Ok(None) => (
            io::ErrorKind::UnexpectedEof,
            format!("the {} closed the {} connection", F::PEER, F::NAME),
        ),
        Ok(Some(reason)) => (io::ErrorKind::ConnectionAborted, reason),
        Err(CallError::Io(e)) => (e.kind(), format!("{} connection failed: {e}", F::NAME)),
        Err(e) => (
            io::ErrorKind::InvalidData,
            format!("{} connection out of step, closed: {e}", F::NAME),
        ),
    };
    shared.close(kind, reason);
}

/// Reads frames until the peer closes the connection (`Ok(None)`), says it
/// closes it (`Ok(Some(reason))`), or a read, a header or a frame fails.
async fn read_frames<F: Framing, R: AsyncRead + Unpin>(
    read: &mut R,
    shared: &Shared<F>,
    requests: &mpsc::UnboundedSender<Bytes>,
) -> Result<Option<String>, CallError> {
    let framing = &shared.framing;
    let mut buf = BytesMut::with_capacity(READ_BUFFER);
    loop {
        // Room for the rest of the frame under way, or for the next reads.
        let want = loop {
            match framing.split(&buf)? {
                Split::Whole { head, len } => {
                    debug_assert!(len > 0 && len <= buf.len());
                    let frame = buf.split_to(len).freeze();
                    match framing.route(head, frame)? {
                        Inbound::Reply { id, reply } => {
                            // Else a reply to a call nobody waits for any more.
                            if let Some(tx) = shared.take(id) {
                                let _ = tx.send(Ok(reply));
                            }
                        }
                        Inbound::Answer(bytes) => {
                            let _ = requests.send(bytes);
                        }
                        Inbound::Skip => {}
                        Inbound::Close(reason) => return Ok(Some(reason)),
                    }
                }
                Split::Partial { len } => {
                    break len.map_or(READ_BUFFER, |total| {
                        total.saturating_sub(buf.len()).max(4096)
                    })
                }
            }
        };
        buf.reserve(want);
        if read.read_buf(&mut buf).await? == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(CallError::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "the {} closed the connection inside a frame ({} bytes read)",
                        F::PEER,
                        buf.len()
                    ),
                )))
            };
        }
    }
}

/// Messages at least this large are written directly, not copied into the
/// batch.
const DIRECT_WRITE: usize = 16 * 1024;
/// Size a batch stops growing at.
const BATCH: usize = 64 * 1024;

async fn write_loop<F: Framing, W: AsyncWrite + Unpin>(
    mut write: W,
    mut queue: mpsc::UnboundedReceiver<Bytes>,
    shared: Arc<Shared<F>>,
) {
    let mut batch: Vec<u8> = Vec::with_capacity(BATCH);
    while let Some(first) = queue.recv().await {
        let written = async {
            let mut next = Some(first);
            while let Some(message) = next.take() {
                if message.len() >= DIRECT_WRITE {
                    if !batch.is_empty() {
                        write.write_all(&batch).await?;
                        batch.clear();
                    }
                    write.write_all(&message).await?;
                } else {
                    batch.extend_from_slice(&message);
                }
                if batch.len() < BATCH {
                    next = queue.try_recv().ok();
                }
            }
            if !batch.is_empty() {
                write.write_all(&batch).await?;
                batch.clear();
            }
            write.flush().await
        }
        .await;
        if let Err(e) = written {
            shared.close(
                e.kind(),
                format!("{} connection failed writing: {e}", F::NAME),
            );
            return;
        }
        shared.wrote.store(true, Ordering::Relaxed);
    }
    // Graceful close: the protocol's goodbye, then FIN.
    if !shared.closed.load(Ordering::SeqCst) {
        if let Some(bye) = shared.framing.goodbye() {
            let _ = write.write_all(&bye).await;
        }
    }
    let _ = write.shutdown().await;
}

async fn heartbeat_loop<F: Framing>(
    period: Duration,
    shared: Arc<Shared<F>>,
    requests: mpsc::UnboundedSender<Bytes>,
) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if shared.closed.load(Ordering::Relaxed) {
            return;
        }
        if !shared.wrote.swap(false, Ordering::Relaxed) {
            let Ok(beat) = shared.framing.heartbeat(|| shared.next_id()) else {
                return;
            };
            if requests.send(beat).is_err() {
                return;
            }
        }
    }
}

/// The routes of a byte string's whole frames, and the length of the frame
/// under way after them if known (see [`route_all`]).
#[cfg(test)]
pub(crate) type Routes<F> = (Vec<Inbound<<F as Framing>::Reply>>, Option<usize>);

/// Splits and routes a whole byte string as the reader does, for tests of
/// a protocol's [`Framing`].
#[cfg(test)]
pub(crate) fn route_all<F: Framing>(framing: &F, bytes: &[u8]) -> Result<Routes<F>, CallError> {
    let mut buf = BytesMut::from(bytes);
    let mut routes = Vec::new();
    loop {
        match framing.split(&buf)? {
            Split::Whole { head, len } => {
                let frame = buf.split_to(len).freeze();
                routes.push(framing.route(head, frame)?);
            }
            Split::Partial { len } => return Ok((routes, len)),
        }
    }
}

/// Checks a framing's `split` on a whole frame `good` whose header is
/// `header_len` bytes (and its body at least one): no length before the
/// header is in, the frame's length once it is, the whole frame at its end;
/// and a protocol error for each of `bad`.
#[cfg(test)]
pub(crate) fn check_split<F: Framing>(framing: &F, good: &[u8], header_len: usize, bad: &[&[u8]]) {
    assert!(matches!(
        framing.split(&good[..header_len - 1]),
        Ok(Split::Partial { len: None })
    ));
    assert!(matches!(
        framing.split(&good[..header_len]),
        Ok(Split::Partial { len: Some(n) }) if n == good.len()
    ));
    assert!(matches!(
        framing.split(good),
        Ok(Split::Whole { len, .. }) if len == good.len()
    ));
    for bad in bad {
        assert!(
            matches!(framing.split(bad), Err(CallError::Protocol(_))),
            "{bad:?}"
        );
    }
}

/// A connection that `start` starts over an in-memory stream, with a
/// heartbeat every 50 ms, left idle: the first `N` bytes it writes (within
/// 2 s), the connection and the server's end of the stream. For tests of a
/// protocol's heartbeat.
#[cfg(test)]
pub(crate) async fn idle_start<T, const N: usize>(
    start: impl FnOnce(
        tokio::io::ReadHalf<tokio::io::DuplexStream>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
        Option<Duration>,
    ) -> T,
) -> (T, tokio::io::DuplexStream, [u8; N]) {
    let (client, mut server) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(client);
    let conn = start(read, write, Some(Duration::from_millis(50)));
    let mut first = [0u8; N];
    tokio::time::timeout(Duration::from_secs(2), server.read_exact(&mut first))
        .await
        .unwrap()
        .unwrap();
    (conn, server, first)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny framing: `[kind, id, payload length, payload...]`. Kinds: 0
    /// a reply, 1 the peer's heartbeat (answered with kind 2 and its id),
    /// 2 an answer to ours, 3 "closing" (payload: the reason); ids 1..=3.
    struct Tiny;

    const HEAD: usize = 3;

    impl Framing for Tiny {
        const NAME: &'static str = "tiny";
        const FIRST_ID: u64 = 1;
        const MAX_ID: u64 = 3;
        type Head = (u8, u8);
        type Reply = Bytes;

        fn split(&self, buf: &[u8]) -> Result<Split<(u8, u8)>, CallError> {
            if buf.len() < HEAD {
                return Ok(Split::Partial { len: None });
            }
            if buf[0] > 3 {
                return Err(CallError::Protocol(format!("kind {}", buf[0])));
            }
            let len = HEAD + usize::from(buf[2]);
            Ok(if buf.len() >= len {
                Split::Whole {
                    head: (buf[0], buf[1]),
                    len,
                }
            } else {
                Split::Partial { len: Some(len) }
            })
        }

        fn route(&self, (kind, id): (u8, u8), frame: Bytes) -> Result<Inbound<Bytes>, CallError> {
            Ok(match kind {
                0 => Inbound::Reply {
                    id: id.into(),
                    reply: frame.slice(HEAD..),
                },
                1 => Inbound::Answer(Bytes::from(vec![2, id, 0])),
                2 => Inbound::Skip,
                _ => Inbound::Close(String::from_utf8_lossy(&frame[HEAD..]).into_owned()),
            })
        }

        fn heartbeat(&self, id: impl FnOnce() -> u64) -> Result<Bytes, CallError> {
            Ok(Bytes::from(vec![1, id() as u8, 0]))
        }

        fn goodbye(&self) -> Option<Bytes> {
            Some(Bytes::from_static(b"bye"))
        }
    }

    /// A reader over `bytes` delivered `chunk` bytes at a time.
    fn reader(bytes: Vec<u8>, chunk: usize) -> impl AsyncRead + Unpin + Send + 'static {
        let (mut tx, rx) = tokio::io::duplex(chunk);
        tokio::spawn(async move {
            let _ = tx.write_all(&bytes).await;
        });
        rx
    }

    #[test]
    fn tiny_splits() {
        check_split(&Tiny, &[0, 1, 2, b'o', b'k'], HEAD, &[&[4, 0, 0]]);
    }

    #[test]
    fn ids_wrap_within_the_protocols_range() {
        let s = Shared::new(Tiny);
        let ids: Vec<u64> = (0..7).map(|_| s.next_id()).collect();
        assert_eq!(ids, [1, 2, 3, 1, 2, 3, 1]);
        assert_eq!(nth_id(0, u64::MAX, u64::MAX), u64::MAX);
        assert_eq!(nth_id(0, u64::MAX, 5), 5);
        let ice_max = i32::MAX as u64;
        assert_eq!(nth_id(1, ice_max, 0), 1);
        assert_eq!(nth_id(1, ice_max, ice_max - 1), ice_max);
        assert_eq!(nth_id(1, ice_max, ice_max), 1);
        let bolt_max = u32::MAX as u64;
        assert_eq!(nth_id(1, bolt_max, bolt_max - 1), bolt_max);
        assert_eq!(nth_id(1, bolt_max, bolt_max), 1);
    }

    #[tokio::test]
    async fn malformed_streams_fail_the_waiting_and_later_calls() {
        let cases: [(&[u8], io::ErrorKind, &str); 4] = [
            (&[0, 1], io::ErrorKind::UnexpectedEof, "inside a frame"), // short header
            (
                &[0, 1, 5, 9],
                io::ErrorKind::UnexpectedEof,
                "inside a frame",
            ), // body missing
            (&[7, 1, 0], io::ErrorKind::InvalidData, "out of step"),
            (
                &[3, 0, 2, b'g', b'o'],
                io::ErrorKind::ConnectionAborted,
                "go",
            ),
        ];
        for (bytes, kind, says) in cases {
            let shared = Arc::new(Shared::new(Tiny));
            let (tx, rx) = oneshot::channel();
            shared.register(1, tx).unwrap();
            let (requests, _queue) = mpsc::unbounded_channel();
            read_loop(reader(bytes.to_vec(), 2), Arc::clone(&shared), requests).await;
            match rx.await.unwrap() {
                Err(CallError::Io(e)) => {
                    assert_eq!(e.kind(), kind, "{bytes:?}: {e}");
                    assert!(e.to_string().contains(says), "{bytes:?}: {e}");
                }
                other => panic!("{bytes:?}: {other:?}"),
            }
            // Later calls fail at once.
            let (tx, _rx) = oneshot::channel();
            assert!(matches!(shared.register(2, tx), Err(CallError::Io(_))));
        }
    }

    #[tokio::test]
    async fn routes_replies_by_id_and_answers_at_once() {
        // The peer's heartbeat, an answer to ours, a reply nobody waits
        // for, the reply to 2, then a clean EOF.
        let stream = vec![1, 9, 0, 2, 8, 0, 0, 3, 1, b'x', 0, 2, 2, b'o', b'k'];
        let shared = Arc::new(Shared::new(Tiny));
        let (tx, rx) = oneshot::channel();
        shared.register(2, tx).unwrap();
        let (requests, mut queue) = mpsc::unbounded_channel();
        read_loop(reader(stream, 3), Arc::clone(&shared), requests).await;
        assert_eq!(&rx.await.unwrap().unwrap()[..], b"ok");
        assert_eq!(&queue.try_recv().unwrap()[..], &[2, 9, 0]);
        assert!(queue.try_recv().is_err());
        match shared.closed_error() {
            CallError::Io(e) => {
                assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
                assert_eq!(e.to_string(), "the server closed the tiny connection");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn an_idle_connection_beats_and_a_dropped_one_says_goodbye() {
        // Idle: a heartbeat with the first id comes within two periods.
        let (mux, mut server, beat) =
            idle_start::<_, 3>(|read, write, beat| Mux::start(read, write, beat, Tiny)).await;
        assert_eq!(beat, [1, 1, 0]);
        // Dropped: the goodbye, then EOF.
        drop(mux);
        let mut rest = Vec::new();
        tokio::time::timeout(Duration::from_secs(2), server.read_to_end(&mut rest))
            .await
            .unwrap()
            .unwrap();
        assert!(rest.ends_with(b"bye"), "{rest:?}");
    }

    #[tokio::test]
    async fn a_cancelled_call_leaves_no_entry_and_its_late_reply_is_dropped() {
        let (client, mut server) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(client);
        let mux = Mux::start(read, write, None, Tiny);
        let cancelled = tokio::time::timeout(
            Duration::from_millis(20),
            mux.call(|id| Ok(vec![0, id as u8, 0])),
        )
        .await;
        assert!(cancelled.is_err());
        assert!(mux
            .shared
            .pending
            .iter()
            .all(|s| s.lock().unwrap().is_empty()));
        let mut request = [0u8; 3];
        server.read_exact(&mut request).await.unwrap();
        assert_eq!(request, [0, 1, 0]);
        let (answered, ()) = tokio::join!(mux.call(|id| Ok(vec![0, id as u8, 1, b'q'])), async {
            let mut request = [0u8; 4];
            server.read_exact(&mut request).await.unwrap();
            assert_eq!(request, [0, 2, 1, b'q']);
            // The late reply to 1 first.
            server
                .write_all(&[0, 1, 0, 0, 2, 2, b'h', b'i'])
                .await
                .unwrap();
        });
        assert_eq!(&answered.unwrap()[..], b"hi");
        assert!(!mux.is_closed());
    }

    #[tokio::test]
    async fn a_failed_connection_fails_later_calls_with_the_reason() {
        let (client, server) = tokio::io::duplex(64);
        let (read, write) = tokio::io::split(client);
        let mux = Mux::start(read, write, None, Tiny);
        drop(server);
        tokio::time::timeout(Duration::from_secs(2), async {
            while !mux.is_closed() {
                tokio::task::yield_now().await;
            }
        })
        .await
        .unwrap();
        match mux.call(|id| Ok(vec![0, id as u8, 0])).await {
            Err(CallError::Io(e)) => assert!(e.to_string().contains("closed the tiny"), "{e}"),
            other => panic!("{other:?}"),
        }
        let routes = route_all(&Tiny, &[2, 1, 0, 0, 1]).unwrap();
        assert!(matches!(routes.0[..], [Inbound::Skip]));
        assert_eq!(routes.1, None);
    }
}
