//! ZeroC Ice: the Ice protocol 1.0 with encoding 1.1 over TCP, against
//! `rpclab::Bench` (`contract/bench.ice`) served by `servers/ice-*`, either
//! at a direct endpoint or located through IceGrid.
//!
//! # Options
//!
//! * `identity`: the object's identity (default `bench`).
//! * `adapter`: an adapter id (e.g. `BenchAdapter`). When set, the proxy
//!   is indirect (`bench @ BenchAdapter`): its endpoints come from the
//!   `locator` (required then), resolved once per protocol instance and
//!   cached, as Ice does; the target is not used. Without it the proxy is
//!   direct: `bench:tcp` at the target.
//! * `locator`: the locator's proxy, e.g.
//!   `IceGrid/Locator:tcp -h 127.0.0.1 -p 10000` (IceGrid's registry).
//! * `heartbeat_s`: seconds of write silence after which the connection
//!   sends a validate-connection message, Ice's heartbeat (default 30: half
//!   of the server's default ACM timeout of 60 s, after which an idle
//!   connection would be closed; 0 disables).
//!
//! # Connections
//!
//! Multiplexed, as Ice's own: one TCP connection carries many twoway
//! requests at once, matched to their replies by request id. A connection
//! is usable once the server's validate-connection message has arrived
//! (Ice servers send it first; a peer that sends anything else is not an
//! Ice server). Each [`IceConnection`] runs:
//!
//! * a **writer** owning the write half, fed by an unbounded channel of
//!   encoded messages (bounded in practice by the load model's calls in
//!   flight), coalescing what is queued into one write; when the
//!   connection is dropped it sends close-connection and shuts the socket
//!   down, Ice's graceful close;
//! * a **reader** owning the read half: it frames messages and hands each
//!   reply's bytes to its waiting caller, who decodes it (so decoding runs
//!   on the callers' tasks in parallel); validate-connection messages from
//!   the server (its heartbeats) are skipped; close-connection from the
//!   server, EOF or a malformed message fail every waiting call and every
//!   later one with the reason;
//! * a **heartbeat** ticker (see `heartbeat_s`).
//!
//! The in-flight map is sharded by request id (16 `std::sync::Mutex`
//! shards, one insert and one remove per call, never held across an
//! await), so callers and the reader rarely meet on one lock.
//!
//! # Per-call work
//!
//! One request buffer sized up front, one oneshot channel, one map entry;
//! the reply is a slice of the reader's buffer, decoded straight into the
//! contract value.

pub mod codec;
pub mod locator;

use self::codec::{Header, Identity, Method, TcpEndpoint, HEADER_LEN};
use self::locator::LocatorProxy;
use crate::net::{connect_tcp, CountingStream};
use crate::protocol::{check_options, CallError, Connection, Protocol, WireCounter};
use bytes::{Bytes, BytesMut};
use rpclab_model::contract::{Call, Value};
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, OnceCell};
use tokio::task::JoinHandle;

/// Default seconds of write silence before a heartbeat.
pub const DEFAULT_HEARTBEAT_S: u64 = 30;

/// How long a new connection waits for the server's validate-connection
/// message, and a locator lookup for its answer.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The Ice protocol, with its options.
#[derive(Debug)]
pub struct Ice {
    identity: Identity,
    heartbeat: Option<Duration>,
    location: Option<Location>,
}

/// An indirect proxy's adapter, its locator and the cached resolution.
#[derive(Debug)]
struct Location {
    adapter: String,
    locator: LocatorProxy,
    endpoints: OnceCell<Vec<TcpEndpoint>>,
}

impl Ice {
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    pub fn heartbeat(&self) -> Option<Duration> {
        self.heartbeat
    }

    /// The endpoints the locator returned, once resolved.
    pub fn located_endpoints(&self) -> Option<&[TcpEndpoint]> {
        self.location
            .as_ref()
            .and_then(|l| l.endpoints.get())
            .map(Vec::as_slice)
    }

    /// The address to dial: the target, or the located adapter's first
    /// endpoint (resolved at the first call, then cached).
    async fn address(&self, target: &str) -> Result<String, CallError> {
        let Some(location) = &self.location else {
            return Ok(target.to_owned());
        };
        let endpoints = location
            .endpoints
            .get_or_try_init(|| {
                location
                    .locator
                    .find_adapter(&location.adapter, HANDSHAKE_TIMEOUT)
            })
            .await?;
        let e = &endpoints[0];
        Ok(format!("{}:{}", e.host, e.port))
    }
}

impl Protocol for Ice {
    type Conn = IceConnection;

    const NAME: &'static str = "ice";

    const CONNECTION_MODEL: &'static str =
        "multiplexed: many twoway requests in flight per connection, matched by request id";

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        check_options(
            Self::NAME,
            options,
            &["identity", "adapter", "locator", "heartbeat_s"],
        )?;
        let identity = Identity::parse(options.get("identity").map_or("bench", String::as_str));
        if identity.name.is_empty() {
            return Err(CallError::Config(
                "option `identity` of protocol `ice` must name an object".into(),
            ));
        }
        let heartbeat = match options.get("heartbeat_s") {
            None => Some(Duration::from_secs(DEFAULT_HEARTBEAT_S)),
            Some(s) => match s.parse::<u64>() {
                Ok(0) => None,
                Ok(n) if n <= 86_400 => Some(Duration::from_secs(n)),
                _ => {
                    return Err(CallError::Config(format!(
                        "option `heartbeat_s` of protocol `ice` must be a number of seconds \
                         from 0 (off) to 86400, not `{s}`"
                    )))
                }
            },
        };
        let location = match (options.get("adapter"), options.get("locator")) {
            (Some(adapter), Some(locator)) => Some(Location {
                adapter: adapter.clone(),
                locator: LocatorProxy::parse(locator)?,
                endpoints: OnceCell::new(),
            }),
            (None, None) => None,
            (Some(_), None) => {
                return Err(CallError::Config(
                    "protocol `ice`: option `adapter` needs `locator` (e.g. \
                     `IceGrid/Locator:tcp -h 127.0.0.1 -p 10000`) to resolve it"
                        .into(),
                ))
            }
            (None, Some(_)) => {
                return Err(CallError::Config(
                    "protocol `ice`: option `locator` is used only with `adapter` \
                     (the adapter id of an indirect proxy, e.g. `BenchAdapter`)"
                        .into(),
                ))
            }
        };
        Ok(Ice {
            identity,
            heartbeat,
            location,
        })
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<IceConnection, CallError> {
        let address = self.address(target).await?;
        let stream = connect_tcp(&address).await?;
        let (read, write) = stream.into_split();
        IceConnection::start(
            CountingStream::new(read, counter.clone()),
            CountingStream::new(write, counter),
            self.identity.clone(),
            self.heartbeat,
        )
        .await
    }
}

/// One Ice connection, shared by many callers (see the module docs).
#[derive(Debug)]
pub struct IceConnection {
    shared: Arc<Shared>,
    identity: Identity,
    requests: mpsc::UnboundedSender<Bytes>,
    reader: JoinHandle<()>,
    heartbeat: Option<JoinHandle<()>>,
}

impl IceConnection {
    /// Waits for the server's validate-connection message on `read`, then
    /// runs the connection's tasks.
    pub async fn start<R, W>(
        mut read: R,
        write: W,
        identity: Identity,
        heartbeat: Option<Duration>,
    ) -> Result<IceConnection, CallError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let mut first = [0u8; HEADER_LEN];
        match tokio::time::timeout(HANDSHAKE_TIMEOUT, read.read_exact(&mut first)).await {
            Err(_) => {
                return Err(CallError::Connect(format!(
                    "no validate-connection message from the server within {HANDSHAKE_TIMEOUT:?}: \
                     is it an Ice server?"
                )))
            }
            Ok(Err(e)) => {
                return Err(CallError::Connect(format!(
                    "the server closed the connection before validating it: {e}"
                )))
            }
            Ok(Ok(_)) => {}
        }
        let h = Header::decode(&first).map_err(|e| CallError::Connect(e.to_string()))?;
        if h.message_type != codec::VALIDATE_CONNECTION {
            return Err(CallError::Connect(format!(
                "the server's first message is of type {}, not validate-connection",
                h.message_type
            )));
        }
        let shared = Arc::new(Shared::new());
        let (requests, queue) = mpsc::unbounded_channel();
        let reader = tokio::spawn(read_loop(read, Arc::clone(&shared)));
        // Detached: it ends (closing gracefully) when every sender is gone.
        tokio::spawn(write_loop(write, queue, Arc::clone(&shared)));
        let heartbeat = heartbeat.map(|period| {
            tokio::spawn(heartbeat_loop(
                period,
                Arc::clone(&shared),
                requests.clone(),
            ))
        });
        Ok(IceConnection {
            shared,
            identity,
            requests,
            reader,
            heartbeat,
        })
    }

    /// Whether the connection has failed or been closed by the server.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::SeqCst)
    }
}

impl Drop for IceConnection {
    fn drop(&mut self) {
        // Our senders are the last ones once the heartbeat is stopped: the
        // writer then sends close-connection and shuts the socket down.
        self.reader.abort();
        if let Some(h) = &self.heartbeat {
            h.abort();
        }
    }
}

impl Connection for IceConnection {
    async fn call(&self, call: &Call) -> Result<Value, CallError> {
        let method = Method::of(call.operation);
        let id = self.shared.next_id();
        let mut request = Vec::with_capacity(codec::request_capacity(
            &self.identity,
            method.name(),
            &call.argument,
        ));
        codec::encode_call(&mut request, id, &self.identity, method, &call.argument)?;

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
        pending.armed = false;
        let body = reply.map_err(|_| self.shared.closed_error())??;
        codec::decode_reply(&body, method)
    }
}

/// A reply's body (from the status byte), or why there is none.
type Reply = Result<Bytes, CallError>;

const SHARDS: usize = 16;
const SHARD_CAPACITY: usize = 64;

type Shard = HashMap<i32, oneshot::Sender<Reply>, BuildHasherDefault<IdHasher>>;

#[derive(Debug)]
struct Shared {
    next_id: AtomicU32,
    pending: [Mutex<Shard>; SHARDS],
    closed: AtomicBool,
    reason: OnceLock<(io::ErrorKind, String)>,
    /// Whether anything was written since the heartbeat's last tick.
    wrote: AtomicBool,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            next_id: AtomicU32::new(0),
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

    /// Request ids run 1, 2, ... and wrap to 1 after `i32::MAX`, as Ice's
    /// (0 means oneway).
    fn next_id(&self) -> i32 {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        (n % i32::MAX as u32) as i32 + 1
    }

    fn shard(&self, id: i32) -> std::sync::MutexGuard<'_, Shard> {
        self.pending[(id as usize) % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a caller waiting for reply `id`, unless the connection is
    /// closed (`closed` is read under the shard lock that `close` takes
    /// after setting it, so an entry is either refused or drained).
    fn register(&self, id: i32, tx: oneshot::Sender<Reply>) -> Result<(), CallError> {
        let mut shard = self.shard(id);
        if self.closed.load(Ordering::SeqCst) {
            return Err(self.closed_error());
        }
        shard.insert(id, tx);
        Ok(())
    }

    fn take(&self, id: i32) -> Option<oneshot::Sender<Reply>> {
        self.shard(id).remove(&id)
    }

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
                "ice connection closed",
            )),
        }
    }
}

struct PendingGuard<'a> {
    shared: &'a Shared,
    id: i32,
    armed: bool,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.shared.take(self.id);
        }
    }
}

/// One multiplication (Fibonacci hashing): request ids are sequential.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_i32(&mut self, n: i32) {
        self.0 = (n as u32 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

const READ_BUFFER: usize = 64 * 1024;

async fn read_loop<R: AsyncRead + Unpin>(mut read: R, shared: Arc<Shared>) {
    let (kind, reason) = match read_messages(&mut read, &shared).await {
        Ok(why) => (io::ErrorKind::ConnectionAborted, why),
        Err(CallError::Io(e)) => (e.kind(), format!("ice connection failed: {e}")),
        Err(e) => (
            io::ErrorKind::InvalidData,
            format!("ice connection out of step, closed: {e}"),
        ),
    };
    shared.close(kind, reason);
}

/// Reads messages until the server closes the connection (`Ok` with the
/// reason) or a read or a header fails.
async fn read_messages<R: AsyncRead + Unpin>(
    read: &mut R,
    shared: &Shared,
) -> Result<String, CallError> {
    let mut buf = BytesMut::with_capacity(READ_BUFFER);
    loop {
        while let Some(header) = codec::frame(&buf)? {
            let message = buf.split_to(header.size).freeze();
            match header.message_type {
                codec::REPLY => {
                    let id = codec::reply_request_id(&message)?;
                    if let Some(tx) = shared.take(id) {
                        let _ = tx.send(Ok(message.slice(HEADER_LEN + 4..)));
                    }
                    // Else a reply to a call nobody waits for any more.
                }
                codec::VALIDATE_CONNECTION => {} // the server's heartbeat
                codec::CLOSE_CONNECTION => {
                    return Ok(
                        "the server closed the ice connection (close-connection message)".into(),
                    )
                }
                other => {
                    return Err(CallError::Protocol(format!(
                        "the server sent a message of type {other} (a request) on a client \
                         connection; bidirectional connections are not part of the contract"
                    )))
                }
            }
        }
        let want = if buf.len() >= HEADER_LEN {
            let header = Header::decode(&buf)?;
            (header.size - buf.len()).max(4096)
        } else {
            READ_BUFFER
        };
        buf.reserve(want);
        if read.read_buf(&mut buf).await? == 0 {
            return if buf.is_empty() {
                Ok("the server closed the ice connection".into())
            } else {
                Err(CallError::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "the server closed the connection inside a message ({} bytes read)",
                        buf.len()
                    ),
                )))
            };
        }
    }
}

const DIRECT_WRITE: usize = 16 * 1024;
const BATCH: usize = 64 * 1024;

async fn write_loop<W: AsyncWrite + Unpin>(
    mut write: W,
    mut queue: mpsc::UnboundedReceiver<Bytes>,
    shared: Arc<Shared>,
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
            shared.close(e.kind(), format!("ice connection failed writing: {e}"));
            return;
        }
        shared.wrote.store(true, Ordering::Relaxed);
    }
    // Graceful close: close-connection, then FIN.
    if !shared.closed.load(Ordering::SeqCst) {
        let _ = write.write_all(&codec::close_connection()).await;
    }
    let _ = write.shutdown().await;
}

async fn heartbeat_loop(
    period: Duration,
    shared: Arc<Shared>,
    requests: mpsc::UnboundedSender<Bytes>,
) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if shared.closed.load(Ordering::Relaxed) {
            return;
        }
        if !shared.wrote.swap(false, Ordering::Relaxed)
            && requests
                .send(Bytes::from_static(&VALIDATE_CONNECTION_MESSAGE))
                .is_err()
        {
            return;
        }
    }
}

static VALIDATE_CONNECTION_MESSAGE: [u8; HEADER_LEN] = [
    b'I',
    b'c',
    b'e',
    b'P',
    1,
    0,
    1,
    0,
    codec::VALIDATE_CONNECTION,
    0,
    HEADER_LEN as u8,
    0,
    0,
    0,
];

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn options() {
        let ice = Ice::new(&opts(&[])).unwrap();
        assert_eq!(ice.identity().name, "bench");
        assert_eq!(ice.heartbeat(), Some(Duration::from_secs(30)));
        let ice = Ice::new(&opts(&[
            ("adapter", "BenchAdapter"),
            ("locator", "IceGrid/Locator:tcp -h 127.0.0.1 -p 10000"),
            ("heartbeat_s", "0"),
        ]))
        .unwrap();
        assert_eq!(ice.heartbeat(), None);
        assert!(ice.located_endpoints().is_none());
        for bad in [
            opts(&[("adapter", "BenchAdapter")]),
            opts(&[("locator", "IceGrid/Locator:tcp -h 127.0.0.1 -p 1")]),
            opts(&[("heartbeat_s", "soon")]),
            opts(&[("identity", "")]),
            opts(&[("transport", "x")]),
        ] {
            assert!(
                matches!(Ice::new(&bad), Err(CallError::Config(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn the_heartbeat_is_a_validate_connection_message() {
        assert_eq!(VALIDATE_CONNECTION_MESSAGE, codec::validate_connection());
    }

    #[test]
    fn request_ids_skip_zero() {
        let s = Shared::new();
        assert_eq!(s.next_id(), 1);
        s.next_id.store(i32::MAX as u32 - 1, Ordering::Relaxed);
        assert_eq!(s.next_id(), i32::MAX);
        assert_eq!(s.next_id(), 1);
    }
}
