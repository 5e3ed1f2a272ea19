//! SOFA-RPC's `bolt` protocol (sofa-bolt `RpcProtocol` v1) with hessian2,
//! against `rpclab.contract.BenchService` (`contract/java/`), as exported
//! by the SOFA-RPC providers of `servers/sofa-rpc`.
//!
//! # Options
//!
//! * `registry`: e.g. `zookeeper://127.0.0.1:2181`. When set, the provider's
//!   address is discovered in ZooKeeper: the URL-decoded children of
//!   `/sofa-rpc/rpclab.contract.BenchService/providers` (SOFA-RPC's
//!   `ZookeeperRegistry` layout; a child whose data is the single byte 0 is
//!   a provider registered offline and is skipped). The provider whose port
//!   is the target's port is used, or the first one for an empty target;
//!   the lookup is done once per protocol instance (at the first `connect`)
//!   and shared by all its connections. Without it, `connect` dials the
//!   target.
//! * `heartbeat_s`: seconds of write silence after which a connection sends
//!   a bolt heartbeat (default 15, bolt's `bolt.tcp.heartbeat.interval`;
//!   0 disables). The provider closes connections idle for 90 s.
//! * `timeout_ms`: the timeout written in each request (default 3000,
//!   SOFA-RPC's consumer default). The provider discards, unanswered, a
//!   request that waited longer than this in its queue; this client has no
//!   timer of its own (the runner's call timeout applies).
//!
//! # Wire format
//!
//! See [`codec`] (frames, header map, SofaRequest/SofaResponse) and
//! [`hessian`] (SOFA-RPC 5's Hessian is the 2.0 *draft*, which the
//! final-spec `hessian2` crate does not speak).
//!
//! # Connections
//!
//! Multiplexed, as bolt's own client: one TCP connection carries many
//! requests at once, matched to their responses by request id. Each
//! [`BoltConnection`] runs three tasks, as the dubbo module's connections
//! do (see there for the reasoning):
//!
//! * a **writer** owning the socket's write half, fed through an unbounded
//!   channel of encoded requests, coalescing whatever is queued into one
//!   write;
//! * a **reader** owning the read half: it only frames and hands each
//!   response's bytes to the waiting caller through its oneshot sender (the
//!   caller decodes, in parallel with other callers); it answers heartbeat
//!   requests and drops responses nobody waits for any more;
//! * a **heartbeat** ticker sending a heartbeat after `heartbeat_s` of
//!   write silence.
//!
//! The in-flight map (request id → oneshot sender) is sharded 16 ways by the
//! low bits of the (sequential) id, each shard a `std::sync::Mutex` held
//! for one insert or remove, never across an await. When the socket fails
//! or the server closes it, every waiting call fails with the reason, and
//! so does every later call on that connection.
//!
//! # Per-call work
//!
//! One request buffer (sized up front from the argument), one oneshot
//! channel and one map entry; the reply is a slice of the reader's buffer
//! (no copy), decoded straight into the contract value.

pub mod codec;
pub mod hessian;

use self::codec::Header;
use crate::discovery::{url_decode, Providers, ServiceUrl, ZooKeeper};
use crate::net::{connect_tcp, CountingStream};
use crate::protocol::{check_options, CallError, Connection, Protocol, WireCounter};
use crate::protocols::dubbo::codec::Method;
use bytes::{Bytes, BytesMut};
use rpclab_model::contract::{Call, Value};
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// bolt's default heartbeat interval (`bolt.tcp.heartbeat.interval`).
pub const DEFAULT_HEARTBEAT_S: u64 = 15;
/// SOFA-RPC's default consumer timeout (`consumer.invoke.timeout`).
pub const DEFAULT_TIMEOUT_MS: i32 = 3000;
/// Where SOFA-RPC's ZooKeeper registry lists the contract's providers.
pub const PROVIDERS_PATH: &str = "/sofa-rpc/rpclab.contract.BenchService/providers";

/// The bolt protocol, with its options.
#[derive(Debug)]
pub struct Bolt {
    heartbeat: Option<Duration>,
    timeout_ms: i32,
    providers: Option<Providers>,
}

impl Bolt {
    pub fn heartbeat(&self) -> Option<Duration> {
        self.heartbeat
    }

    pub fn timeout_ms(&self) -> i32 {
        self.timeout_ms
    }

    pub fn registry(&self) -> Option<&str> {
        self.providers.as_ref().map(|p| p.registry().url())
    }
}

/// The providers of the contract registered in ZooKeeper, online ones only.
pub async fn lookup(zk: &ZooKeeper) -> Result<Vec<ServiceUrl>, CallError> {
    let children = zk.children_with_data(PROVIDERS_PATH).await?;
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    for (name, data) in children {
        let url = url_decode(&name);
        if data.as_slice() == [0] {
            skipped.push(format!("{url} (offline)"));
            continue;
        }
        match ServiceUrl::parse(&url) {
            Ok(p) if p.protocol == "bolt" => found.push(p),
            Ok(p) => skipped.push(format!("{url} (protocol {})", p.protocol)),
            Err(e) => skipped.push(format!("{url} ({e})")),
        }
    }
    if found.is_empty() {
        return Err(CallError::Connect(format!(
            "registry {}: no online bolt provider under {PROVIDERS_PATH}{}; is the SOFA-RPC \
             provider up and registered?",
            zk.url(),
            if skipped.is_empty() {
                String::new()
            } else {
                format!(" (found: {})", skipped.join(", "))
            }
        )));
    }
    Ok(found)
}

impl Protocol for Bolt {
    type Conn = BoltConnection;

    const NAME: &'static str = "bolt";

    const CONNECTION_MODEL: &'static str =
        "multiplexed: many requests in flight per connection, matched by request id";

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        check_options(
            Self::NAME,
            options,
            &["registry", "heartbeat_s", "timeout_ms"],
        )?;
        let heartbeat = match options.get("heartbeat_s") {
            None => Some(Duration::from_secs(DEFAULT_HEARTBEAT_S)),
            Some(s) => match s.parse::<u64>() {
                Ok(0) => None,
                Ok(n) if n <= 86_400 => Some(Duration::from_secs(n)),
                _ => {
                    return Err(CallError::Config(format!(
                        "option `heartbeat_s` of protocol `bolt` must be a number of seconds \
                         from 0 (off) to 86400, not `{s}`"
                    )))
                }
            },
        };
        let timeout_ms = match options.get("timeout_ms") {
            None => DEFAULT_TIMEOUT_MS,
            Some(s) => match s.parse::<i32>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(CallError::Config(format!(
                        "option `timeout_ms` of protocol `bolt` must be a positive number of \
                         milliseconds (at most {}), not `{s}`",
                        i32::MAX
                    )))
                }
            },
        };
        let providers = options
            .get("registry")
            .map(|r| ZooKeeper::parse(Self::NAME, r).map(Providers::new))
            .transpose()?;
        Ok(Bolt {
            heartbeat,
            timeout_ms,
            providers,
        })
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<BoltConnection, CallError> {
        let address = match &self.providers {
            Some(providers) => {
                let provider = providers
                    .resolve(target, |zk| {
                        let zk = zk.clone();
                        async move { lookup(&zk).await }
                    })
                    .await?;
                if let Some(s) = provider.params.get("serialization") {
                    if s != "hessian2" {
                        return Err(CallError::Config(format!(
                            "the provider at {} registered serialization `{s}`; this client \
                             speaks only hessian2",
                            provider.address()
                        )));
                    }
                }
                provider.address()
            }
            None => target.to_owned(),
        };
        let stream = connect_tcp(&address).await?;
        let (read, write) = stream.into_split();
        Ok(BoltConnection::start(
            CountingStream::new(read, counter.clone()),
            CountingStream::new(write, counter),
            self.heartbeat,
            self.timeout_ms,
        ))
    }
}

/// One bolt connection, shared by many callers (see the module
/// documentation).
#[derive(Debug)]
pub struct BoltConnection {
    shared: Arc<Shared>,
    requests: mpsc::UnboundedSender<Bytes>,
    reader: JoinHandle<()>,
    heartbeat: Option<JoinHandle<()>>,
    timeout_ms: i32,
}

impl BoltConnection {
    /// Runs the connection's tasks over a stream's two halves.
    pub fn start<R, W>(
        read: R,
        write: W,
        heartbeat: Option<Duration>,
        timeout_ms: i32,
    ) -> BoltConnection
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let shared = Arc::new(Shared::new());
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
        BoltConnection {
            shared,
            requests,
            reader,
            heartbeat,
            timeout_ms,
        }
    }

    /// Whether the connection has failed or been closed by the server.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::SeqCst)
    }
}

impl Drop for BoltConnection {
    fn drop(&mut self) {
        self.reader.abort();
        if let Some(h) = &self.heartbeat {
            h.abort();
        }
    }
}

impl Connection for BoltConnection {
    async fn call(&self, call: &Call) -> Result<Value, CallError> {
        let method = Method::of(call)?;
        let id = self.shared.next_id();
        let mut request = Vec::with_capacity(codec::request_capacity(&call.argument));
        codec::encode_request(&mut request, id, self.timeout_ms, method, &call.argument)?;

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
        let frame = reply.map_err(|_| self.shared.closed_error())??;
        codec::decode_response(&frame.header, &frame.bytes, method)
    }
}

/// A response for a caller: its header and the whole frame.
#[derive(Debug)]
pub struct Frame {
    pub header: Header,
    pub bytes: Bytes,
}

type Reply = Result<Frame, CallError>;

const SHARDS: usize = 16;
const SHARD_CAPACITY: usize = 64;

type Shard = HashMap<u32, oneshot::Sender<Reply>, BuildHasherDefault<IdHasher>>;

/// What the callers and the connection's tasks share.
#[derive(Debug)]
struct Shared {
    next_id: AtomicU32,
    pending: [Mutex<Shard>; SHARDS],
    /// Set (after `reason`) when the connection is unusable.
    closed: AtomicBool,
    reason: OnceLock<(io::ErrorKind, String)>,
    /// Whether anything was written since the heartbeat's last tick.
    wrote: AtomicBool,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            // bolt's IDGenerator starts at 1 (and wraps as a Java int).
            next_id: AtomicU32::new(1),
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

    fn next_id(&self) -> u32 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn shard(&self, id: u32) -> std::sync::MutexGuard<'_, Shard> {
        // A panic while holding a shard cannot leave the map inconsistent
        // (single insert/remove): ignore poisoning.
        self.pending[(id as usize) % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a caller waiting for response `id`, unless the connection
    /// is closed (checked under the shard lock, which `close` takes after
    /// setting `closed`).
    fn register(&self, id: u32, tx: oneshot::Sender<Reply>) -> Result<(), CallError> {
        let mut shard = self.shard(id);
        if self.closed.load(Ordering::SeqCst) {
            return Err(self.closed_error());
        }
        shard.insert(id, tx);
        Ok(())
    }

    fn take(&self, id: u32) -> Option<oneshot::Sender<Reply>> {
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
                "bolt connection closed",
            )),
        }
    }
}

/// Removes a call's entry if its future is dropped before the reply came.
struct PendingGuard<'a> {
    shared: &'a Shared,
    id: u32,
    armed: bool,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.shared.take(self.id);
        }
    }
}

/// Hashes a request id with one multiplication (ids are sequential).
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
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// First size of a connection's read buffer; it grows to the largest frame.
const READ_BUFFER: usize = 64 * 1024;

async fn read_loop<R: AsyncRead + Unpin>(
    mut read: R,
    shared: Arc<Shared>,
    requests: mpsc::UnboundedSender<Bytes>,
) {
    let (kind, reason) = match read_frames(&mut read, &shared, &requests).await {
        Ok(()) => (
            io::ErrorKind::UnexpectedEof,
            "the server closed the bolt connection".to_owned(),
        ),
        Err(CallError::Io(e)) => (e.kind(), format!("bolt connection failed: {e}")),
        Err(e) => (
            io::ErrorKind::InvalidData,
            format!("bolt connection out of step, closed: {e}"),
        ),
    };
    shared.close(kind, reason);
}

/// Reads frames until the server closes the connection (`Ok`) or a read or
/// a header fails.
async fn read_frames<R: AsyncRead + Unpin>(
    read: &mut R,
    shared: &Shared,
    requests: &mpsc::UnboundedSender<Bytes>,
) -> Result<(), CallError> {
    let mut buf = BytesMut::with_capacity(READ_BUFFER);
    loop {
        while let Some((header, total)) = codec::frame(&buf)? {
            let frame = buf.split_to(total).freeze();
            if header.is_request() {
                if header.is_heartbeat() && header.kind == codec::TYPE_REQUEST {
                    let _ = requests.send(Bytes::copy_from_slice(&codec::heartbeat_ack(header.id)));
                }
                // Other requests from the server: not part of this contract.
                continue;
            }
            if header.is_heartbeat() {
                // The ack of our heartbeat: nothing waits for it.
                continue;
            }
            if let Some(tx) = shared.take(header.id) {
                let _ = tx.send(Ok(Frame {
                    header,
                    bytes: frame,
                }));
            }
        }
        // Room for the rest of the frame under way (lengths are checked
        // against MAX_BODY), or for the next reads.
        let want = match codec::Header::decode(&buf)? {
            Some(h) => (h.total() - buf.len()).max(4096),
            None => READ_BUFFER,
        };
        buf.reserve(want);
        if read.read_buf(&mut buf).await? == 0 {
            return if buf.is_empty() {
                Ok(())
            } else {
                Err(CallError::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "the server closed the connection inside a frame ({} bytes read)",
                        buf.len()
                    ),
                )))
            };
        }
    }
}

/// Requests at least this large are written directly, not copied into the
/// batch.
const DIRECT_WRITE: usize = 16 * 1024;
/// Size a batch stops growing at.
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
            shared.close(e.kind(), format!("bolt connection failed writing: {e}"));
            return;
        }
        shared.wrote.store(true, Ordering::Relaxed);
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
        if !shared.wrote.swap(false, Ordering::Relaxed) {
            let id = shared.next_id();
            let beat = Bytes::copy_from_slice(&codec::heartbeat_request(id));
            if requests.send(beat).is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader over `bytes` delivered `chunk` bytes at a time.
    fn reader(bytes: Vec<u8>, chunk: usize) -> impl AsyncRead + Unpin + Send + 'static {
        let (mut tx, rx) = tokio::io::duplex(chunk);
        tokio::spawn(async move {
            let _ = tx.write_all(&bytes).await;
        });
        rx
    }

    #[tokio::test]
    async fn malformed_streams_fail_the_waiting_calls() {
        let good = codec::heartbeat_ack(1).to_vec();
        let mut bad_proto = good.clone();
        bad_proto[0] = 2;
        let mut huge = good.clone();
        huge[16..20].copy_from_slice(&u32::MAX.to_be_bytes());
        let cases = [
            (good[..10].to_vec(), io::ErrorKind::UnexpectedEof), // short header
            (
                {
                    let mut cut = good.clone();
                    cut[16..20].copy_from_slice(&5u32.to_be_bytes());
                    cut
                },
                io::ErrorKind::UnexpectedEof,
            ), // content missing
            (bad_proto, io::ErrorKind::InvalidData),
            (huge, io::ErrorKind::InvalidData),
        ];
        for (bytes, kind) in cases {
            let shared = Arc::new(Shared::new());
            let (tx, rx) = oneshot::channel();
            shared.register(1, tx).unwrap();
            let (requests, _queue) = mpsc::unbounded_channel();
            read_loop(reader(bytes.clone(), 3), Arc::clone(&shared), requests).await;
            match rx.await.unwrap() {
                Err(CallError::Io(e)) => assert_eq!(e.kind(), kind, "{bytes:?}: {e}"),
                other => panic!("{bytes:?}: {other:?}"),
            }
            let (tx, _rx) = oneshot::channel();
            assert!(matches!(shared.register(2, tx), Err(CallError::Io(_))));
        }
    }

    #[tokio::test]
    async fn answers_heartbeats_and_routes_responses_by_id() {
        let hello = include_bytes!("bolt/golden/vectors/5.13/hello.response.bin");
        let (h, _) = codec::frame(hello).unwrap().unwrap();
        let mut stream = codec::heartbeat_request(77).to_vec();
        stream.extend_from_slice(&codec::heartbeat_ack(5)); // ours: ignored
        stream.extend_from_slice(hello);
        let shared = Arc::new(Shared::new());
        let (tx, rx) = oneshot::channel();
        shared.register(h.id, tx).unwrap();
        let (requests, mut queue) = mpsc::unbounded_channel();
        read_loop(reader(stream, 7), Arc::clone(&shared), requests).await;
        let frame = rx.await.unwrap().unwrap();
        assert_eq!(
            codec::decode_response(&frame.header, &frame.bytes, Method::Hello).unwrap(),
            Value::Str("hello aa".into())
        );
        assert_eq!(
            &queue.try_recv().unwrap()[..],
            &codec::heartbeat_ack(77)[..]
        );
        assert!(queue.try_recv().is_err());
    }
}
