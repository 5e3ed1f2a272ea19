//! Apache Dubbo's `dubbo` protocol (dubbo2: the 16-byte exchange header over
//! TCP) with hessian2 serialization, against `rpclab.contract.BenchService`
//! (`contract/java/`), as exported by the Dubbo 3.3 and 2.6 providers of
//! `servers/dubbo-*`.
//!
//! # Options
//!
//! * `serialization`: `hessian2` (default; Dubbo's id 2) or another of
//!   [`serialization::Format::names`] (see [`serialization`]). Dubbo's
//!   serializations this client does not speak are refused with a
//!   configuration error that lists the ones it does. It must be the one
//!   the provider is configured with: with a registry, the provider's
//!   registered `serialization` is checked before connecting.
//! * `registry`: e.g. `zookeeper://127.0.0.1:2181`. When set, the provider's
//!   address is discovered in ZooKeeper (the URL-decoded children of
//!   `/dubbo/rpclab.contract.BenchService/providers`): the provider whose
//!   port is the target's port, or the first one for an empty target. The
//!   lookup is done once per protocol instance (at the first `connect`) and
//!   shared by all its connections. Without it, `connect` dials the target.
//! * `heartbeat_s`: seconds of write silence after which a connection sends
//!   a heartbeat (default 60, Dubbo's; 0 disables).
//!
//! # Wire format
//!
//! See [`codec`] (the frame and the order of values, once for every
//! serialization) and [`serialization`] (the values): requests carry the dubbo version `2.0.2`, the path and
//! interface `rpclab.contract.BenchService`, service version `0.0.0` (both
//! providers export none; Dubbo treats `0.0.0` as none), the method, its JVM
//! parameter descriptor, the argument (an `rpclab.contract.Order` object,
//! an `ArrayList` of them, or a string) and the attachments (path,
//! interface, version). Replies are decoded straight into contract values.
//!
//! # Connections
//!
//! Multiplexed, as Dubbo's own client: one TCP connection carries many
//! requests at once, matched to their responses by request id. Each
//! [`DubboConnection`] runs three tasks:
//!
//! * a **writer** owning the socket's write half, fed through an unbounded
//!   channel of encoded requests (bounded in practice by the load model's
//!   calls in flight); it coalesces whatever is queued into one write
//!   (small requests are copied into a reused 64 KiB batch, large ones
//!   written directly), so a busy connection makes few system calls;
//! * a **reader** owning the read half: it only frames (header, then body
//!   length bytes into a `BytesMut`) and hands each response's bytes to the
//!   waiting caller through its oneshot sender; the caller decodes, so
//!   Hessian decoding runs on the callers' tasks in parallel, not serialised
//!   on the reader. It answers the server's heartbeats and drops responses
//!   nobody waits for any more (calls cancelled by a timeout);
//! * a **heartbeat** ticker: every `heartbeat_s`, if nothing was written
//!   since the previous tick, it queues a heartbeat request (so an idle
//!   connection says something at least every 2 × `heartbeat_s`, within
//!   the provider's idle timeout of 3 × its heartbeat). Under load it costs
//!   one relaxed atomic store per write batch.
//!
//! The in-flight map (request id → oneshot sender) is sharded: 16 shards,
//! each a `std::sync::Mutex<HashMap>` preallocated for 64 entries, picked by
//! the low bits of the id. Ids are sequential per connection, so
//! consecutive calls land on different shards, and a critical section is a
//! single insert or remove (tens of nanoseconds, never held across an
//! await): the callers inserting and the one reader removing rarely meet on
//! one lock. A lock-free map would save little here and cost a dependency
//! and subtler code; the hash is one multiplication (ids are not
//! attacker-chosen). A call whose future is dropped removes its own entry.
//!
//! When the socket fails or the server closes it, every waiting call fails
//! with the reason, and so does every later call on that connection
//! (there is no reconnection: a load-model connection is one TCP
//! connection for the whole cell).
//!
//! # Per-call work
//!
//! One request buffer (sized up front from the argument, never regrown),
//! one oneshot channel and one map entry; the reply's bytes are a slice of
//! the reader's buffer (no copy) and are decoded straight into the contract
//! value (its strings and list).

pub mod codec;
pub mod serialization;

use self::codec::{Header, Method, HEADER_LEN, MAX_BODY};
use self::serialization::Format;
use crate::discovery::{url_decode, Providers, ServiceUrl, ZooKeeper};
use crate::net::{connect_tcp, CountingStream};
use crate::protocol::{check_options, CallError, Connection, Protocol, WireCounter};
use bytes::{Bytes, BytesMut};
use rpclab_model::contract::{Call, Value};
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// Dubbo's default heartbeat interval.
pub const DEFAULT_HEARTBEAT_S: u64 = 60;

/// Every serialization Dubbo 2.x/3.x ships (or shipped), with its id, for
/// the message that refuses one this client does not speak.
pub const DUBBO_SERIALIZATIONS: &[(&str, u8)] = &[
    ("hessian2", 2),
    ("java", 3),
    ("compactedjava", 4),
    ("fastjson", 6),
    ("nativejava", 7),
    ("kryo", 8),
    ("fst", 9),
    ("protostuff", 12),
    ("avro", 11),
    ("gson", 16),
    ("protobuf-json", 21),
    ("protobuf", 22),
    ("fastjson2", 23),
    ("kryo2", 25),
];

/// The dubbo protocol, with its options.
#[derive(Debug)]
pub struct Dubbo {
    serialization: String,
    format: Arc<Format>,
    heartbeat: Option<Duration>,
    registry: Option<Providers>,
}

impl Dubbo {
    /// The `serialization` option's value.
    pub fn serialization(&self) -> &str {
        &self.serialization
    }

    pub fn heartbeat(&self) -> Option<Duration> {
        self.heartbeat
    }

    pub fn registry(&self) -> Option<&str> {
        self.registry.as_ref().map(|p| p.registry().url())
    }
}

impl Protocol for Dubbo {
    type Conn = DubboConnection;

    const NAME: &'static str = "dubbo";

    const CONNECTION_MODEL: &'static str =
        "multiplexed: many requests in flight per connection, matched by request id";

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        let mut known = vec!["serialization", "registry", "heartbeat_s"];
        known.extend(Format::options());
        check_options(Self::NAME, options, &known)?;
        let serialization = options
            .get("serialization")
            .map_or("hessian2", String::as_str)
            .to_owned();
        let format = match Format::new(&serialization, options) {
            Some(format) => format?,
            None => {
                let dubbo_has: Vec<String> = DUBBO_SERIALIZATIONS
                    .iter()
                    .map(|(name, id)| format!("{name} ({id})"))
                    .collect();
                let what = if DUBBO_SERIALIZATIONS
                    .iter()
                    .any(|(n, _)| *n == serialization)
                {
                    format!("serialization `{serialization}` exists in Dubbo but this client does not speak it")
                } else {
                    format!("serialization `{serialization}` does not exist in Dubbo")
                };
                return Err(CallError::Config(format!(
                    "protocol `dubbo`: {what}; Dubbo's serializations are {}; \
                     this client speaks {}",
                    dubbo_has.join(", "),
                    Format::names().join(", ")
                )));
            }
        };
        let heartbeat = match options.get("heartbeat_s") {
            None => Some(Duration::from_secs(DEFAULT_HEARTBEAT_S)),
            Some(s) => match s.parse::<u64>() {
                Ok(0) => None,
                Ok(n) if n <= 86_400 => Some(Duration::from_secs(n)),
                _ => {
                    return Err(CallError::Config(format!(
                        "option `heartbeat_s` of protocol `dubbo` must be a number of seconds \
                         from 0 (off) to 86400, not `{s}`"
                    )))
                }
            },
        };
        let registry = options
            .get("registry")
            .map(|r| ZooKeeper::parse(Self::NAME, r).map(Providers::new))
            .transpose()?;
        Ok(Dubbo {
            serialization,
            format: Arc::new(format),
            heartbeat,
            registry,
        })
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<DubboConnection, CallError> {
        let address = match &self.registry {
            Some(registry) => {
                let provider = registry.resolve(target, discover).await?;
                // A provider without the parameter uses Dubbo's default
                // (hessian2 up to 3.2).
                let theirs = provider
                    .params
                    .get("serialization")
                    .map_or("hessian2", String::as_str);
                if theirs != self.serialization {
                    return Err(CallError::Config(format!(
                        "the provider at {} registered serialization `{theirs}`; this client \
                         was configured to send `{}`, which the provider would refuse \
                         (set the `serialization` option to `{theirs}`)",
                        provider.address(),
                        self.serialization
                    )));
                }
                provider.address()
            }
            None => target.to_owned(),
        };
        let stream = connect_tcp(&address).await?;
        let (read, write) = stream.into_split();
        Ok(DubboConnection::start(
            CountingStream::new(read, counter.clone()),
            CountingStream::new(write, counter),
            self.heartbeat,
            Arc::clone(&self.format),
        ))
    }
}

/// Lists the dubbo providers of the contract's service as a Dubbo consumer
/// does with interface-level registration: the children of
/// `/dubbo/<interface>/providers` are the providers' URLs, URL-encoded
/// (`java.net.URLEncoder`), e.g.
/// `dubbo://127.0.0.1:20880/rpclab.contract.BenchService?dubbo=2.0.2&serialization=hessian2&...`.
/// Providers of other protocols under the same interface are skipped; none
/// left is an error that lists what was skipped.
async fn discover(zk: ZooKeeper) -> Result<Vec<ServiceUrl>, CallError> {
    let path = format!("/dubbo/{}/providers", codec::SERVICE);
    let mut providers = Vec::new();
    let mut skipped = Vec::new();
    for child in zk.children(&path).await? {
        let url = url_decode(&child);
        match ServiceUrl::parse(&url) {
            Ok(p) if p.protocol == "dubbo" => providers.push(p),
            Ok(p) => skipped.push(format!("{url} (protocol {})", p.protocol)),
            Err(e) => skipped.push(e),
        }
    }
    if providers.is_empty() {
        return Err(CallError::Connect(format!(
            "registry {}: no dubbo provider under {path}{}",
            zk.url(),
            if skipped.is_empty() {
                String::new()
            } else {
                format!(" (skipped: {})", skipped.join("; "))
            }
        )));
    }
    Ok(providers)
}

/// One dubbo connection, shared by many callers (see the module
/// documentation).
#[derive(Debug)]
pub struct DubboConnection {
    format: Arc<Format>,
    shared: Arc<Shared>,
    requests: mpsc::UnboundedSender<Bytes>,
    reader: JoinHandle<()>,
    heartbeat: Option<JoinHandle<()>>,
}

impl DubboConnection {
    /// Runs the connection's tasks over a stream's two halves.
    pub fn start<R, W>(
        read: R,
        write: W,
        heartbeat: Option<Duration>,
        format: Arc<Format>,
    ) -> DubboConnection
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let shared = Arc::new(Shared::new());
        let (requests, queue) = mpsc::unbounded_channel();
        let reader = tokio::spawn(read_loop(
            read,
            Arc::clone(&shared),
            requests.clone(),
            Arc::clone(&format),
        ));
        // Detached: it ends when every request sender is gone.
        tokio::spawn(write_loop(write, queue, Arc::clone(&shared)));
        let heartbeat = heartbeat.map(|period| {
            tokio::spawn(heartbeat_loop(
                period,
                Arc::clone(&shared),
                requests.clone(),
                Arc::clone(&format),
            ))
        });
        DubboConnection {
            format,
            shared,
            requests,
            reader,
            heartbeat,
        }
    }

    /// Whether the connection has failed or been closed by the server.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::SeqCst)
    }
}

impl Drop for DubboConnection {
    fn drop(&mut self) {
        // The reader and the heartbeat hold request senders: stop them, and
        // the writer ends once it has written what is queued (dropping the
        // write half sends FIN).
        self.reader.abort();
        if let Some(h) = &self.heartbeat {
            h.abort();
        }
    }
}

impl Connection for DubboConnection {
    async fn call(&self, call: &Call) -> Result<Value, CallError> {
        let method = Method::of(call)?;
        let id = self.shared.next_id();
        let mut request = Vec::with_capacity(codec::request_capacity(&call.argument));
        self.format
            .encode_request(&mut request, id, method, &call.argument)?;

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
        let frame = reply.map_err(|_| self.shared.closed_error())??;
        self.format
            .decode_response(&frame.header, &frame.body, method)
    }
}

/// A response for a caller: its header and body.
#[derive(Debug)]
pub struct Frame {
    pub header: Header,
    pub body: Bytes,
}

type Reply = Result<Frame, CallError>;

const SHARDS: usize = 16;
const SHARD_CAPACITY: usize = 64;

type Shard = HashMap<u64, oneshot::Sender<Reply>, BuildHasherDefault<IdHasher>>;

/// What the callers and the connection's tasks share.
#[derive(Debug)]
struct Shared {
    next_id: AtomicU64,
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
            next_id: AtomicU64::new(0),
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
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn shard(&self, id: u64) -> std::sync::MutexGuard<'_, Shard> {
        // A panic while holding a shard cannot leave the map inconsistent
        // (single insert/remove): ignore poisoning.
        self.pending[(id as usize) % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a caller waiting for response `id`, unless the connection
    /// is closed. `closed` is read under the shard lock, which `close` takes
    /// after setting it: an entry is either refused here or drained there.
    fn register(&self, id: u64, tx: oneshot::Sender<Reply>) -> Result<(), CallError> {
        let mut shard = self.shard(id);
        if self.closed.load(Ordering::SeqCst) {
            return Err(self.closed_error());
        }
        shard.insert(id, tx);
        Ok(())
    }

    fn take(&self, id: u64) -> Option<oneshot::Sender<Reply>> {
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
                "dubbo connection closed",
            )),
        }
    }
}

/// Removes a call's entry if its future is dropped before the reply came.
struct PendingGuard<'a> {
    shared: &'a Shared,
    id: u64,
    armed: bool,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.shared.take(self.id);
        }
    }
}

/// Hashes a request id with one multiplication (Fibonacci hashing): ids
/// are sequential, which an identity hash would give hashbrown as equal
/// control bytes.
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
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// First size of a connection's read buffer; it grows to the largest
/// frame (at most 16 bytes + [`MAX_BODY`]).
const READ_BUFFER: usize = 64 * 1024;

async fn read_loop<R: AsyncRead + Unpin>(
    mut read: R,
    shared: Arc<Shared>,
    requests: mpsc::UnboundedSender<Bytes>,
    format: Arc<Format>,
) {
    let (kind, reason) = match read_frames(&mut read, &shared, &requests, &format).await {
        Ok(()) => (
            io::ErrorKind::UnexpectedEof,
            "the server closed the dubbo connection".to_owned(),
        ),
        Err(CallError::Io(e)) => (e.kind(), format!("dubbo connection failed: {e}")),
        Err(e) => (
            io::ErrorKind::InvalidData,
            format!("dubbo connection out of step, closed: {e}"),
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
    format: &Format,
) -> Result<(), CallError> {
    let mut buf = BytesMut::with_capacity(READ_BUFFER);
    loop {
        while let Some((header, total)) = codec::frame(&buf)? {
            let mut frame = buf.split_to(total).freeze();
            if header.is_event() {
                if header.is_request() && header.is_two_way() {
                    let _ = requests.send(Bytes::from(format.heartbeat_response(header.id)?));
                }
                // A response to our heartbeat: nothing to do.
                continue;
            }
            if header.is_request() {
                // The server calling back: not part of this contract.
                continue;
            }
            if let Some(tx) = shared.take(header.id) {
                let body = frame.split_off(HEADER_LEN);
                let _ = tx.send(Ok(Frame { header, body }));
            }
        }
        // Room for the rest of the frame under way (its length is checked
        // against MAX_BODY), or for the next reads.
        let want = if buf.len() >= HEADER_LEN {
            let header = Header::decode(&buf)?;
            (HEADER_LEN + header.len - buf.len()).max(4096)
        } else {
            READ_BUFFER
        };
        debug_assert!(want <= HEADER_LEN + MAX_BODY);
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
            shared.close(e.kind(), format!("dubbo connection failed writing: {e}"));
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
    format: Arc<Format>,
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
            let Ok(beat) = format.heartbeat_request(id) else {
                return;
            };
            if requests.send(Bytes::from(beat)).is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Protocol;
    use crate::protocols::dubbo::serialization::hessian2::{Hessian2, ID as HESSIAN2};
    use rpclab_model::contract::Operation;

    fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn options() {
        let d = Dubbo::new(&opts(&[])).unwrap();
        assert_eq!(d.heartbeat(), Some(Duration::from_secs(60)));
        assert_eq!(d.registry(), None);
        let d = Dubbo::new(&opts(&[
            ("serialization", "hessian2"),
            ("registry", "zookeeper://127.0.0.1:2181"),
            ("heartbeat_s", "0"),
        ]))
        .unwrap();
        assert_eq!(d.heartbeat(), None);
        assert_eq!(d.registry(), Some("zookeeper://127.0.0.1:2181"));
        let d = Dubbo::new(&opts(&[("serialization", "java")])).unwrap();
        assert_eq!(d.serialization(), "java");
        match Dubbo::new(&opts(&[("serialization", "fst")])) {
            Err(CallError::Config(m)) => {
                assert!(
                    m.contains("`fst` exists in Dubbo but this client does not speak it"),
                    "{m}"
                );
                assert!(m.contains("fastjson2 (23)"), "{m}");
            }
            other => panic!("{other:?}"),
        }
        match Dubbo::new(&opts(&[("serialization", "xml")])) {
            Err(CallError::Config(m)) => assert!(m.contains("does not exist"), "{m}"),
            other => panic!("{other:?}"),
        }
        for bad in [
            opts(&[("heartbeat_s", "-1")]),
            opts(&[("heartbeat_s", "soon")]),
            opts(&[("registry", "nacos://127.0.0.1:8848")]),
            opts(&[("transport", "framed")]),
        ] {
            assert!(
                matches!(Dubbo::new(&bad), Err(CallError::Config(_))),
                "{bad:?}"
            );
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

    #[tokio::test]
    async fn malformed_streams_fail_the_waiting_calls() {
        let good = codec::heartbeat_response(&Hessian2, 1).unwrap();
        let mut bad_magic = good.clone();
        bad_magic[0] = 0xca;
        let mut huge = good.clone();
        huge[12..16].copy_from_slice(&u32::MAX.to_be_bytes());
        let cases = [
            (good[..10].to_vec(), io::ErrorKind::UnexpectedEof), // short header
            (good[..16].to_vec(), io::ErrorKind::UnexpectedEof), // body missing
            (bad_magic, io::ErrorKind::InvalidData),
            (huge, io::ErrorKind::InvalidData),
        ];
        for (bytes, kind) in cases {
            let shared = Arc::new(Shared::new());
            let (tx, rx) = oneshot::channel();
            shared.register(1, tx).unwrap();
            let (requests, _queue) = mpsc::unbounded_channel();
            read_loop(
                reader(bytes.clone(), 4),
                Arc::clone(&shared),
                requests,
                Arc::new(Format::Hessian2(Hessian2)),
            )
            .await;
            match rx.await.unwrap() {
                Err(CallError::Io(e)) => assert_eq!(e.kind(), kind, "{bytes:?}: {e}"),
                other => panic!("{bytes:?}: {other:?}"),
            }
            // Later calls fail at once.
            let (tx, _rx) = oneshot::channel();
            assert!(matches!(shared.register(2, tx), Err(CallError::Io(_))));
        }
    }

    #[tokio::test]
    async fn answers_server_heartbeats_and_routes_responses() {
        let call = Operation::Hello.call();
        let mut request = Vec::new();
        codec::encode_request(&Hessian2, &mut request, 5, Method::Hello, &call.argument).unwrap();
        // The server's reply to request 5: "hello aa".
        let mut body = Vec::new();
        let mut enc = hessian2::Encoder::new(&mut body);
        enc.write_int(codec::RESPONSE_VALUE);
        enc.write_string("hello aa");
        let mut stream = codec::heartbeat_request(&Hessian2, 77).unwrap();
        stream.extend_from_slice(
            &Header {
                flag: HESSIAN2,
                status: codec::OK,
                id: 5,
                len: body.len(),
            }
            .encode(),
        );
        stream.extend_from_slice(&body);
        // A reply to a call nobody waits for, and one to our heartbeat.
        stream.extend_from_slice(&codec::heartbeat_response(&Hessian2, 9).unwrap());
        let shared = Arc::new(Shared::new());
        let (tx, rx) = oneshot::channel();
        shared.register(5, tx).unwrap();
        let (requests, mut queue) = mpsc::unbounded_channel();
        read_loop(
            reader(stream, 3),
            Arc::clone(&shared),
            requests,
            Arc::new(Format::Hessian2(Hessian2)),
        )
        .await;
        let frame = rx.await.unwrap().unwrap();
        assert_eq!(
            codec::decode_response(&Hessian2, &frame.header, &frame.body, Method::Hello).unwrap(),
            call.expected
        );
        assert_eq!(
            &queue.try_recv().unwrap()[..],
            &codec::heartbeat_response(&Hessian2, 77).unwrap()[..]
        );
        assert!(queue.try_recv().is_err());
    }

    #[tokio::test]
    async fn the_writer_coalesces_and_the_heartbeat_speaks_when_idle() {
        let (client, mut server) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(client);
        let conn = DubboConnection::start(
            read,
            write,
            Some(Duration::from_millis(50)),
            Arc::new(Format::Hessian2(Hessian2)),
        );
        // Idle: a heartbeat request comes within two periods.
        let mut header = [0u8; 17];
        tokio::time::timeout(Duration::from_secs(2), server.read_exact(&mut header))
            .await
            .unwrap()
            .unwrap();
        let h = Header::decode(&header).unwrap();
        assert!(h.is_event() && h.is_request() && h.is_two_way(), "{h:?}");
        drop(conn);
    }
}
