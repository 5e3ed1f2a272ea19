//! Weibo Motan's `motan2` protocol (the 13-byte header, a meta map, a body
//! in hessian2 or Motan's "simple" serialization), against
//! `rpclab.contract.BenchService` (`contract/java/`) as exported by the
//! providers of `servers/motan-1.2` (Motan 1.2.x and 1.1.x).
//!
//! # Options
//!
//! * `serialization`: `hessian2` (default; Motan's number 0) or `simple`
//!   (number 6; strings, numbers, maps and arrays only, so the Order
//!   operations are refused with a configuration error before anything is
//!   sent). Motan's other serializations are refused, named.
//! * `registry`: e.g. `zookeeper://127.0.0.1:2181`. When set, the provider
//!   is discovered as a Motan referer does it with Motan's ZooKeeper
//!   registry: the children of `/motan/<group>/rpclab.contract.BenchService/server`
//!   (named `ip:port`), whose data is the provider URL
//!   (`motan2://127.0.0.1:8002/rpclab.contract.BenchService?group=...&serialization=...`),
//!   Java-serialized by zkclient with registry type `zookeeper` or plain
//!   UTF-8 with type `zk` (both are read). The provider on the target's
//!   port is used, or the first one for an empty target; its registered
//!   `serialization` must be this client's. Looked up once per protocol
//!   instance (the first `connect`) and shared by all its connections.
//!   Without it, `connect` dials the target.
//! * `group` (default `rpclab`) and `version` (default `1.0`, Motan's): the
//!   service key the provider looks the service up by (`M_g`, `M_v`), and
//!   the registry path.
//! * `heartbeat_s`: seconds of write silence after which a connection sends
//!   a motan2 heartbeat (default 0: off, as a Motan client on a healthy
//!   connection; the provider never closes idle connections). Heartbeats
//!   from the provider are always answered.
//!
//! # Connections
//!
//! Multiplexed, as Motan's own netty client with a shared channel: one TCP
//! connection carries many requests at once, matched to their responses by
//! request id. Each [`MotanConnection`] runs a **writer** (owning the
//! socket's write half, fed through an unbounded channel of encoded
//! requests, bounded in practice by the load model's calls in flight; it
//! coalesces what is queued into one write), a **reader** (owning the read
//! half: it only frames and hands each response's bytes, a slice of its
//! buffer, to the waiting caller, which decodes, so decoding runs on the
//! callers' tasks in parallel) and, with `heartbeat_s`, a heartbeat ticker.
//!
//! The in-flight map (request id → oneshot sender) is sharded: 16 shards,
//! each a `std::sync::Mutex<HashMap>`, picked by the low bits of the id.
//! Ids are sequential per connection, so consecutive calls land on
//! different shards and a critical section is a single insert or remove
//! (never held across an await): callers and the one reader rarely meet
//! on a lock. A call whose future is dropped removes its own entry.
//!
//! When the socket fails or the provider closes it, every waiting call
//! fails with the reason, and so does every later call on that connection
//! (no reconnection: a load-model connection is one TCP connection for the
//! whole cell).
//!
//! # Per-call work
//!
//! One request buffer (sized up front, never regrown; the meta map of each
//! method is encoded once per protocol instance and copied), one oneshot
//! channel and one map entry; the reply's bytes are not copied.

pub mod codec;
pub mod registry;
pub mod simple;

use self::codec::{Header, Layout, Method, RequestTemplate, Serialization, MOTAN_SERIALIZATIONS};
use crate::discovery::{Providers, ZooKeeper};
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

/// The group the rpclab providers export in (`MOTAN_GROUP`).
pub const DEFAULT_GROUP: &str = "rpclab";
/// Motan's default service version.
pub const DEFAULT_VERSION: &str = "1.0";
/// What the client calls itself (`M_s`, Motan's `application`).
pub const SOURCE: &str = "rpclab-client";

/// The motan2 protocol, with its options.
#[derive(Debug)]
pub struct Motan {
    template: Arc<RequestTemplate>,
    group: String,
    heartbeat: Option<Duration>,
    providers: Option<Providers>,
}

impl Motan {
    pub fn serialization(&self) -> Serialization {
        self.template.serialization()
    }

    pub fn heartbeat(&self) -> Option<Duration> {
        self.heartbeat
    }

    pub fn group(&self) -> &str {
        &self.group
    }
}

impl Protocol for Motan {
    type Conn = MotanConnection;

    const NAME: &'static str = "motan2";

    const CONNECTION_MODEL: &'static str =
        "multiplexed: many requests in flight per connection, matched by request id";

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        check_options(
            Self::NAME,
            options,
            &[
                "serialization",
                "registry",
                "group",
                "version",
                "heartbeat_s",
            ],
        )?;
        let name = options
            .get("serialization")
            .map_or("hessian2", String::as_str);
        let serialization = Serialization::from_name(name).ok_or_else(|| {
            let known: Vec<String> = MOTAN_SERIALIZATIONS
                .iter()
                .map(|(n, id)| format!("{n} ({id})"))
                .collect();
            let what = if MOTAN_SERIALIZATIONS.iter().any(|(n, _)| *n == name) {
                format!("serialization `{name}` exists in Motan but is not implemented here")
            } else {
                format!("serialization `{name}` does not exist in motan2")
            };
            CallError::Config(format!(
                "protocol `motan2`: {what}; motan2's serializations are {}; this client \
                 implements `hessian2` and `simple`",
                known.join(", ")
            ))
        })?;
        let heartbeat = match options.get("heartbeat_s") {
            None => None,
            Some(s) => match s.parse::<u64>() {
                Ok(0) => None,
                Ok(n) if n <= 86_400 => Some(Duration::from_secs(n)),
                _ => {
                    return Err(CallError::Config(format!(
                        "option `heartbeat_s` of protocol `motan2` must be a number of seconds \
                         from 0 (off) to 86400, not `{s}`"
                    )))
                }
            },
        };
        let group = options
            .get("group")
            .cloned()
            .unwrap_or_else(|| DEFAULT_GROUP.to_owned());
        let version = options
            .get("version")
            .map_or(DEFAULT_VERSION, String::as_str);
        if group.is_empty() || group.contains('/') {
            return Err(CallError::Config(format!(
                "option `group` of protocol `motan2` must be a non-empty name without `/`, not `{group}`"
            )));
        }
        let template = RequestTemplate::new(serialization, &group, version, SOURCE)?;
        let providers = options
            .get("registry")
            .map(|r| ZooKeeper::parse(Self::NAME, r).map(Providers::new))
            .transpose()?;
        Ok(Motan {
            template: Arc::new(template),
            group,
            heartbeat,
            providers,
        })
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<MotanConnection, CallError> {
        let address = match &self.providers {
            Some(providers) => {
                let group = self.group.clone();
                let provider = providers
                    .resolve(
                        target,
                        |zk| async move { registry::lookup(&zk, &group).await },
                    )
                    .await?;
                let wanted = self.serialization().name();
                let registered = provider
                    .params
                    .get("serialization")
                    .map_or("hessian2", String::as_str);
                if registered != wanted {
                    return Err(CallError::Config(format!(
                        "the provider at {} registered serialization `{registered}`; this client \
                         is set to `{wanted}` (option `serialization`), which Motan would \
                         answer in `{registered}` or refuse",
                        provider.address()
                    )));
                }
                provider.address()
            }
            None => target.to_owned(),
        };
        let stream = connect_tcp(&address).await?;
        let (read, write) = stream.into_split();
        Ok(MotanConnection::start(
            CountingStream::new(read, counter.clone()),
            CountingStream::new(write, counter),
            Arc::clone(&self.template),
            self.heartbeat,
        ))
    }
}

/// One motan2 connection, shared by many callers (see the module
/// documentation).
#[derive(Debug)]
pub struct MotanConnection {
    shared: Arc<Shared>,
    template: Arc<RequestTemplate>,
    requests: mpsc::UnboundedSender<Bytes>,
    reader: JoinHandle<()>,
    heartbeat: Option<JoinHandle<()>>,
}

impl MotanConnection {
    /// Runs the connection's tasks over a stream's two halves.
    pub fn start<R, W>(
        read: R,
        write: W,
        template: Arc<RequestTemplate>,
        heartbeat: Option<Duration>,
    ) -> MotanConnection
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
        MotanConnection {
            shared,
            template,
            requests,
            reader,
            heartbeat,
        }
    }

    /// Whether the connection has failed or been closed by the provider.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::SeqCst)
    }
}

impl Drop for MotanConnection {
    fn drop(&mut self) {
        // The reader and the heartbeat hold request senders: stop them, and
        // the writer ends once it has written what is queued.
        self.reader.abort();
        if let Some(h) = &self.heartbeat {
            h.abort();
        }
    }
}

impl Connection for MotanConnection {
    async fn call(&self, call: &Call) -> Result<Value, CallError> {
        let serialization = self.template.serialization();
        let method = match Method::of(call) {
            Ok(m) if m.fits(serialization) => m,
            Ok(m) => return Err(refuse(codec::unsupported(m, serialization)).await),
            Err(e) => return Err(refuse(e).await),
        };
        let id = self.shared.next_id();
        let mut request = Vec::with_capacity(self.template.capacity(method, &call.argument));
        self.template
            .encode(&mut request, id, method, &call.argument)?;

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
        codec::decode_response(
            &frame.header,
            &frame.bytes[frame.layout.meta.clone()],
            &frame.bytes[frame.layout.body.clone()],
            method,
            self.template.serialization(),
        )
    }
}

/// A call refused before anything is sent (an operation the serialization
/// cannot carry): the error, after yielding once. Such a call completes
/// without ever being pending, and a closed-loop worker that repeats it at
/// once would otherwise hold its runtime thread forever, starving the
/// timers that end the warm-up and the window (seen with `simple` on the
/// Order scenarios).
async fn refuse(e: CallError) -> CallError {
    tokio::task::yield_now().await;
    e
}

/// A response for a caller: its header and the frame's bytes.
#[derive(Debug)]
pub struct Frame {
    pub header: Header,
    pub layout: Layout,
    pub bytes: Bytes,
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
            // Motan's ids start anywhere; 1 keeps 0 out of the way.
            next_id: AtomicU64::new(1),
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
                "motan2 connection closed",
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
            "the provider closed the motan2 connection".to_owned(),
        ),
        Err(CallError::Io(e)) => (e.kind(), format!("motan2 connection failed: {e}")),
        Err(e) => (
            io::ErrorKind::InvalidData,
            format!("motan2 connection out of step, closed: {e}"),
        ),
    };
    shared.close(kind, reason);
}

/// Reads frames until the provider closes the connection (`Ok`) or a read
/// or a header fails.
async fn read_frames<R: AsyncRead + Unpin>(
    read: &mut R,
    shared: &Shared,
    requests: &mpsc::UnboundedSender<Bytes>,
) -> Result<(), CallError> {
    let mut buf = BytesMut::with_capacity(READ_BUFFER);
    loop {
        while let Some((header, layout)) = codec::frame(&buf)? {
            let bytes = buf.split_to(layout.total()).freeze();
            if header.is_heartbeat() {
                if !header.is_response() {
                    let _ =
                        requests.send(Bytes::copy_from_slice(&codec::heartbeat(header.id, true)));
                }
                // A response to our heartbeat: nothing to do.
                continue;
            }
            if !header.is_response() {
                // The provider calling back: not part of this contract.
                continue;
            }
            if let Some(tx) = shared.take(header.id) {
                let _ = tx.send(Ok(Frame {
                    header,
                    layout,
                    bytes,
                }));
            }
        }
        // Room for the rest of the frame under way (its lengths are checked
        // against the limits), or for the next reads.
        let want = match codec::frame_len_hint(&buf)? {
            Some(total) => total.saturating_sub(buf.len()).max(4096),
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
                        "the provider closed the connection inside a frame ({} bytes read)",
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
            shared.close(e.kind(), format!("motan2 connection failed writing: {e}"));
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
            let beat = Bytes::copy_from_slice(&codec::heartbeat(shared.next_id(), false));
            if requests.send(beat).is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpclab_model::contract::Operation;

    fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn options() {
        let m = Motan::new(&opts(&[])).unwrap();
        assert_eq!(m.serialization(), Serialization::Hessian2);
        assert_eq!(m.heartbeat(), None);
        assert_eq!(m.group(), "rpclab");
        let m = Motan::new(&opts(&[
            ("serialization", "simple"),
            ("registry", "zookeeper://127.0.0.1:2181"),
            ("group", "g"),
            ("version", "2.0"),
            ("heartbeat_s", "5"),
        ]))
        .unwrap();
        assert_eq!(m.serialization(), Serialization::Simple);
        assert_eq!(m.heartbeat(), Some(Duration::from_secs(5)));
        match Motan::new(&opts(&[("serialization", "breeze")])) {
            Err(CallError::Config(m)) => {
                assert!(
                    m.contains("`breeze` exists in Motan but is not implemented"),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
        for bad in [
            opts(&[("serialization", "xml")]),
            opts(&[("heartbeat_s", "-1")]),
            opts(&[("registry", "consul://127.0.0.1:8500")]),
            opts(&[("group", "a/b")]),
            opts(&[("version", "1\n0")]),
            opts(&[("transport", "framed")]),
        ] {
            assert!(
                matches!(Motan::new(&bad), Err(CallError::Config(_))),
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
        let good = codec::heartbeat(1, true).to_vec();
        let mut bad_magic = good.clone();
        bad_magic[0] = 0xca;
        let mut huge = good.clone();
        huge[13..17].copy_from_slice(&u32::MAX.to_be_bytes());
        let cases = [
            (good[..10].to_vec(), io::ErrorKind::UnexpectedEof),
            (good[..19].to_vec(), io::ErrorKind::UnexpectedEof),
            (bad_magic, io::ErrorKind::InvalidData),
            (huge, io::ErrorKind::InvalidData),
        ];
        for (bytes, kind) in cases {
            let shared = Arc::new(Shared::new());
            let (tx, rx) = oneshot::channel();
            shared.register(1, tx).unwrap();
            let (requests, _queue) = mpsc::unbounded_channel();
            read_loop(reader(bytes.clone(), 4), Arc::clone(&shared), requests).await;
            match rx.await.unwrap() {
                Err(CallError::Io(e)) => assert_eq!(e.kind(), kind, "{bytes:?}: {e}"),
                other => panic!("{bytes:?}: {other:?}"),
            }
            let (tx, _rx) = oneshot::channel();
            assert!(matches!(shared.register(2, tx), Err(CallError::Io(_))));
        }
    }

    #[tokio::test]
    async fn answers_provider_heartbeats_and_routes_responses() {
        let mut body = Vec::new();
        hessian2::Encoder::new(&mut body).write_string("hello aa");
        let mut stream = codec::heartbeat(77, false).to_vec();
        let mut reply = Header {
            flags: codec::FLAG_RESPONSE,
            version: codec::VERSION,
            status: codec::STATUS_NORMAL,
            serialization: 0,
            id: 5,
        }
        .encode()
        .to_vec();
        reply.extend_from_slice(&0u32.to_be_bytes());
        reply.extend_from_slice(&(body.len() as u32).to_be_bytes());
        reply.extend_from_slice(&body);
        stream.extend_from_slice(&reply);
        // A reply nobody waits for, and one to our heartbeat.
        stream.extend_from_slice(&reply);
        stream.extend_from_slice(&codec::heartbeat(9, true));
        let shared = Arc::new(Shared::new());
        let (tx, rx) = oneshot::channel();
        shared.register(5, tx).unwrap();
        let (requests, mut queue) = mpsc::unbounded_channel();
        read_loop(reader(stream, 3), Arc::clone(&shared), requests).await;
        let frame = rx.await.unwrap().unwrap();
        let value = codec::decode_response(
            &frame.header,
            &frame.bytes[frame.layout.meta.clone()],
            &frame.bytes[frame.layout.body.clone()],
            Method::Hello,
            Serialization::Hessian2,
        )
        .unwrap();
        assert_eq!(value, Operation::Hello.call().expected);
        assert_eq!(
            &queue.try_recv().unwrap()[..],
            &codec::heartbeat(77, true)[..]
        );
        assert!(queue.try_recv().is_err());
    }

    #[tokio::test]
    async fn the_heartbeat_speaks_when_idle() {
        let (client, mut server) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(client);
        let template = Arc::new(
            RequestTemplate::new(Serialization::Hessian2, "rpclab", "1.0", SOURCE).unwrap(),
        );
        let conn = MotanConnection::start(read, write, template, Some(Duration::from_millis(50)));
        let mut beat = [0u8; 21];
        tokio::time::timeout(Duration::from_secs(2), server.read_exact(&mut beat))
            .await
            .unwrap()
            .unwrap();
        let h = Header::decode(&beat).unwrap();
        assert!(h.is_heartbeat() && !h.is_response(), "{h:?}");
        drop(conn);
    }
}
