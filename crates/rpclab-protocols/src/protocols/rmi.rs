//! Java RMI over JRMP (the [`jrmp`] crate), against the lab's RMI servers:
//! a plain JDK RMI server (`servers/rmi-jdk`), Spring's
//! `RmiServiceExporter` (`servers/rmi-spring`) and Dubbo's `rmi` protocol
//! (`servers/dubbo-rmi`, which exports through Spring's exporter).
//!
//! # Options
//!
//! * `style`: how a contract call is made.
//!   - `plain` (default): the service is a `java.rmi.Remote` interface; a
//!     call names the contract method by its hash and carries its argument.
//!   - `spring`: the bound object is Spring's `RmiInvocationHandler`; every
//!     call is `invoke(RemoteInvocation)` with the method name, parameter
//!     types and arguments (Spring's `RmiProxyFactoryBean`).
//!   - `dubbo`: as `spring`, with Dubbo's `RmiRemoteInvocation` subclass and
//!     its `dubbo.attachments` attribute (an empty map, what a Dubbo 2.6
//!     consumer sends without RpcContext attachments).
//! * `name`: the name bound in the registry (default
//!   `rpclab.contract.BenchService`, also Dubbo's service path).
//! * `ping`: `jdk` (default) or `never`. `jdk` pings a cached connection
//!   before reusing it exactly when the JDK client does
//!   (`TCPConnection.isDead`): when it has been idle for at least its last
//!   ping round trip × 2 in whole milliseconds (5 ms before the first
//!   ping). On loopback that round trip rounds to 0 ms, so after a
//!   connection's first ping the JDK pings before *every* reuse; this is
//!   the JDK's behaviour and costs a round trip per call, so it is the
//!   default, and `never` shows what it costs.
//! * `dgc`: `jdk` (default) or `off`. `jdk` does what the JDK's client does
//!   with the stub a lookup returns: a DGC `dirty` call to the object's
//!   server (a 10-minute lease, never renewed: cells are shorter) and a
//!   DGC acknowledgement of the lookup's return. `off` skips both (the
//!   lab's servers keep their objects strongly referenced, so calls work
//!   either way).
//!
//! # Connections
//!
//! JRMP carries one call at a time per TCP connection. The JDK client keeps,
//! per server endpoint, a free list of idle connections: a call takes the
//! most recently freed one (pinging it first when due, see `ping`) or opens
//! a new one (TCP connect and the JRMP handshake), and gives it back when
//! the return has been read. An [`RmiConnection`] is that: one client's
//! view of one remote object, with its own free list, shared by all the
//! workers that use it. Under N concurrent callers it grows to N sockets,
//! as the JDK does; idle sockets are not closed during a cell (the JDK
//! closes them after 15 s idle). The free list is a `Vec` behind a
//! `std::sync::Mutex` (like the JDK's synchronized list), held for one push
//! or pop, never across an await.
//!
//! `connect` does what a JDK client does before its first call:
//! connect to the registry (the target), handshake, `lookup(name)`, parse
//! the stub (host, port, ObjID and interfaces), then the DGC calls (see
//! `dgc`) on the object's endpoint. When the object lives on the
//! registry's endpoint (the lab's plain and Spring servers), the registry
//! connection joins the free list, exactly like the JDK's per-endpoint
//! channel; otherwise (Dubbo exports on an anonymous port) calls open
//! their own.
//!
//! # Per-call work
//!
//! Each pooled socket owns its request and reply buffers, reused call after
//! call; a call encodes into the first, reads into the second until the
//! return parses (a string reply's length is known from its first bytes,
//! so a 1 MiB reply is read, not re-parsed, as it arrives) and decodes the
//! reply straight into the contract value.

pub mod contract;

use self::contract::Method;
use crate::net::{connect_tcp, CountingStream};
use crate::protocol::{check_options, CallError, Connection, Protocol, WireCounter};
use jrmp::message::{self, Progress, ReturnStatus, Vmid};
use jrmp::wire::{self, ObjId, Uid};
use jrmp::{invocation, method_hash, RemoteException, RemoteRef};
use rpclab_model::contract::{Call, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The name the lab's servers bind (Dubbo's service path).
pub const DEFAULT_NAME: &str = "rpclab.contract.BenchService";

/// Largest message accepted (the contract's largest is 1 MiB of text).
pub const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// The JDK's default DGC lease (`java.rmi.dgc.leaseValue`).
pub const LEASE_MS: i64 = 600_000;

/// The JDK's first ping round-trip estimate (`TCPConnection.roundtrip`).
const INITIAL_ROUNDTRIP_MS: u64 = 5;

/// How a contract call is made on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// The contract as a `java.rmi.Remote` interface.
    Plain,
    /// Spring's `RmiInvocationHandler.invoke(RemoteInvocation)`.
    Spring,
    /// Dubbo's `RmiRemoteInvocation` through Spring's handler.
    Dubbo,
}

/// The RMI protocol with its options.
#[derive(Debug)]
pub struct Rmi {
    style: Style,
    name: String,
    ping: bool,
    dgc: bool,
    /// This client's VMID (for DGC leases), made once per protocol instance.
    vmid: Vmid,
    /// Sequence numbers of DGC calls (the JDK starts at `Long.MIN_VALUE`).
    dgc_sequence: std::sync::atomic::AtomicI64,
}

impl Rmi {
    pub fn style(&self) -> Style {
        self.style
    }
}

fn new_uid() -> Uid {
    static COUNT: AtomicU16 = AtomicU16::new(0);
    static TIME: OnceLock<i64> = OnceLock::new();
    let time = *TIME.get_or_init(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    });
    Uid {
        unique: std::process::id() as i32,
        time,
        count: COUNT.fetch_add(1, Ordering::Relaxed) as i16,
    }
}

fn random_bytes() -> Vec<u8> {
    // Not a secret: the JDK fills VMID.addr from SecureRandom only to make
    // VMIDs unique. The clock and the process id do that here.
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    (nanos ^ ((std::process::id() as u64) << 32))
        .to_be_bytes()
        .to_vec()
}

impl Protocol for Rmi {
    type Conn = RmiConnection;
    type Exchange = crate::protocol::NoExchange;

    const NAME: &'static str = "rmi";

    const CONNECTION_MODEL: &'static str = "one call in flight per TCP connection (JRMP); \
         each client connection is a JDK-style free list of JRMP connections to the remote object, \
         growing to one per concurrent caller, reused most-recently-freed first, \
         pinged before reuse as the JDK does (ping=jdk)";

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        check_options(Self::NAME, options, &["style", "name", "ping", "dgc"])?;
        let style = match options.get("style").map(String::as_str) {
            None | Some("plain") => Style::Plain,
            Some("spring") => Style::Spring,
            Some("dubbo") => Style::Dubbo,
            Some(other) => {
                return Err(CallError::Config(format!(
                    "option `style` of protocol `rmi` must be plain, spring or dubbo, not `{other}`"
                )))
            }
        };
        let flag = |key: &str, on: &str, off: &str| match options.get(key).map(String::as_str) {
            None => Ok(true),
            Some(v) if v == on => Ok(true),
            Some(v) if v == off => Ok(false),
            Some(v) => Err(CallError::Config(format!(
                "option `{key}` of protocol `rmi` must be {on} or {off}, not `{v}`"
            ))),
        };
        let name = options
            .get("name")
            .cloned()
            .unwrap_or_else(|| DEFAULT_NAME.to_owned());
        if name.is_empty() || name.len() > 0xffff {
            return Err(CallError::Config(
                "option `name` of protocol `rmi` must be a non-empty registry name".into(),
            ));
        }
        Ok(Rmi {
            style,
            name,
            ping: flag("ping", "jdk", "never")?,
            dgc: flag("dgc", "jdk", "off")?,
            vmid: Vmid {
                addr: random_bytes(),
                uid: new_uid(),
            },
            dgc_sequence: std::sync::atomic::AtomicI64::new(i64::MIN),
        })
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<RmiConnection, CallError> {
        // The registry: handshake, lookup.
        let mut registry = JrmpSocket::open(target, &counter).await?;
        let request = message::lookup_call(&self.name, std::mem::take(&mut registry.wbuf));
        let (stub, ack) = registry
            .call(request, true, |ret| match ret.status {
                ReturnStatus::Normal => {
                    let v = ret.value.as_ref().ok_or_else(|| protocol("lookup returned nothing"))?;
                    Ok((RemoteRef::from_stub(v).map_err(|e| protocol(&format!("lookup of `{}`: {e}", self.name)))?, ret.ack))
                }
                ReturnStatus::Exceptional => Err(remote_error(&ret, &format!(
                    "lookup of `{}` in the registry at {target} failed (is the name right? option `name`)",
                    self.name
                ))),
            })
            .await?;
        self.check_interfaces(&stub)?;
        let address = stub.address();
        let pool = Pool::default();
        let same_endpoint = same_endpoint(target, &address);
        let mut registry = Some(registry);
        if self.dgc {
            // What the JDK does on unmarshalling a live reference: a dirty
            // call to the DGC of the object's endpoint, then the
            // acknowledgement of the return that carried the reference, on
            // the registry's endpoint. Each reuses a cached connection,
            // pinging it first when due.
            let mut object_sock = match registry.take_if(|_| same_endpoint) {
                Some(s) => s,
                None => JrmpSocket::open(&address, &counter).await?,
            };
            if self.ping && object_sock.ping_due() {
                object_sock.ping().await?;
            }
            let seq = self.dgc_sequence.fetch_add(1, Ordering::Relaxed);
            let dirty = message::dirty_call(
                &[stub.obj_id],
                seq,
                &self.vmid,
                LEASE_MS,
                std::mem::take(&mut object_sock.wbuf),
            )
            .map_err(|e| protocol(&format!("encoding the DGC dirty call: {e}")))?;
            object_sock
                .call(dirty, true, |ret| match ret.status {
                    ReturnStatus::Normal => Ok(()),
                    ReturnStatus::Exceptional => Err(remote_error(&ret, "DGC dirty call")),
                })
                .await?;
            let ack_sock = match registry.as_mut() {
                Some(r) => r,
                None => &mut object_sock,
            };
            if self.ping && ack_sock.ping_due() {
                ack_sock.ping().await?;
            }
            ack_sock.send_dgc_ack(&ack).await?;
            pool.put(object_sock);
        } else if let Some(r) = registry.take_if(|_| same_endpoint) {
            pool.put(r);
        }
        let (hash, desc) = match self.style {
            Style::Plain => (None, None),
            Style::Spring => (
                Some(method_hash(invocation::INVOKE)),
                Some(invocation::remote_invocation_desc()),
            ),
            Style::Dubbo => (
                Some(method_hash(invocation::INVOKE)),
                Some(Arc::new(invocation::subclass_desc(
                    invocation::DUBBO_RMI_REMOTE_INVOCATION,
                    invocation::DUBBO_RMI_REMOTE_INVOCATION_SUID,
                ))),
            ),
        };
        Ok(RmiConnection {
            style: self.style,
            object: stub.obj_id,
            address,
            counter,
            pool,
            ping: self.ping,
            hashes: Method::ALL.map(|m| method_hash(m.java_signature())),
            invoke_hash: hash,
            invocation_desc: desc,
        })
    }
}

impl Rmi {
    fn check_interfaces(&self, stub: &RemoteRef) -> Result<(), CallError> {
        let invoker = stub
            .interfaces
            .iter()
            .any(|i| i == invocation::RMI_INVOCATION_HANDLER);
        match (self.style, invoker) {
            (Style::Plain, true) => Err(CallError::Config(format!(
                "`{}` is a Spring RmiInvocationHandler (interfaces {:?}): use style=spring or style=dubbo",
                self.name, stub.interfaces
            ))),
            (Style::Spring | Style::Dubbo, false) => Err(CallError::Config(format!(
                "`{}` is not a Spring RmiInvocationHandler (interfaces {:?}): use style=plain",
                self.name, stub.interfaces
            ))),
            _ => Ok(()),
        }
    }
}

fn same_endpoint(target: &str, address: &str) -> bool {
    if target == address {
        return true;
    }
    // "localhost:1099" and "127.0.0.1:1099" are one endpoint to the lab.
    let port = |s: &str| s.rsplit_once(':').map(|(_, p)| p.to_owned());
    let host = |s: &str| {
        s.rsplit_once(':')
            .map(|(h, _)| h.trim_matches(['[', ']']).to_owned())
    };
    let loopback = |h: &str| h == "localhost" || h == "::1" || h.starts_with("127.");
    port(target) == port(address)
        && matches!((host(target), host(address)), (Some(a), Some(b)) if loopback(&a) && loopback(&b))
}

fn protocol(msg: &str) -> CallError {
    CallError::Protocol(msg.to_owned())
}

fn remote_error(ret: &jrmp::Return<'_>, context: &str) -> CallError {
    let summary = ret
        .value
        .as_ref()
        .map(|v| RemoteException::from_value(v, &ret.decoder).to_string())
        .unwrap_or_default();
    CallError::Server(format!("{context}: remote exception {summary}"))
}

/// One client's view of a remote object: its id, endpoint and free list of
/// JRMP connections (see the module documentation).
#[derive(Debug)]
pub struct RmiConnection {
    style: Style,
    object: ObjId,
    address: String,
    counter: WireCounter,
    pool: Pool,
    ping: bool,
    /// Method hashes of [`Method::ALL`], in its order, computed once.
    hashes: [i64; 5],
    /// `RmiInvocationHandler.invoke`'s hash (spring and dubbo styles).
    invoke_hash: Option<i64>,
    invocation_desc: Option<Arc<javaser::ClassDesc>>,
}

impl RmiConnection {
    /// The remote object's endpoint, from its stub.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The remote object's id, from its stub.
    pub fn object_id(&self) -> ObjId {
        self.object
    }

    /// How many JRMP connections are idle in the free list.
    pub fn idle_connections(&self) -> usize {
        self.pool.len()
    }

    fn hash_of(&self, method: Method) -> i64 {
        self.hashes[method.index()]
    }

    fn encode(&self, method: Method, call: &Call, buf: Vec<u8>) -> Result<Vec<u8>, CallError> {
        let enc_err = |e: &dyn std::fmt::Display| {
            CallError::Protocol(format!("encoding {}: {e}", method.name()))
        };
        let mut buf = buf;
        buf.reserve(contract::argument_capacity(&call.argument));
        match (self.style, self.invoke_hash, &self.invocation_desc) {
            (Style::Plain, _, _) => {
                let mut enc =
                    message::begin_call(buf, &self.object, message::HASH_OP, self.hash_of(method));
                contract::write_argument(&mut enc, &call.argument).map_err(|e| enc_err(&e))?;
                Ok(enc.finish())
            }
            (_, Some(hash), Some(desc)) => {
                let mut enc = message::begin_call(buf, &self.object, message::HASH_OP, hash);
                let dubbo = self.style == Style::Dubbo;
                invocation::write_remote_invocation(
                    &mut enc,
                    desc,
                    method.name(),
                    contract::parameter_types(method),
                    |enc| Ok(contract::write_argument(enc, &call.argument)?),
                    |enc| {
                        if dubbo {
                            // attributes = {"dubbo.attachments": {}}
                            enc.write_hash_map(1, |enc| {
                                enc.write_string(invocation::DUBBO_ATTACHMENTS);
                                enc.write_hash_map(0, |_| Ok(()))
                            })?;
                        } else {
                            enc.write_null();
                        }
                        Ok(())
                    },
                )
                .map_err(|e| enc_err(&e))?;
                Ok(enc.finish())
            }
            _ => Err(protocol("spring/dubbo style without the invoke hash")),
        }
    }
}

impl Connection for RmiConnection {
    async fn call(&self, call: &Call) -> Result<Value, CallError> {
        let method = Method::of(call)?;
        let mut sock = match self.pool.take() {
            Some(s) => s,
            None => JrmpSocket::open(&self.address, &self.counter).await?,
        };
        if self.ping && sock.ping_due() {
            sock.ping().await?;
        }
        let request = self.encode(method, call, std::mem::take(&mut sock.wbuf))?;
        // Spring's invoke returns an Object even for void methods (null).
        let has_value = method.returns_value() || self.style != Style::Plain;
        let reply = sock
            .call(request, has_value, |mut ret| match ret.status {
                ReturnStatus::Normal => {
                    contract::decode_reply(method, ret.value.take(), &ret.decoder)
                }
                ReturnStatus::Exceptional => Err(remote_error(&ret, method.name())),
            })
            .await;
        match reply {
            // A server error is a complete exchange: the connection is fine.
            Ok(_) | Err(CallError::Server(_)) | Err(CallError::WrongResponse(_)) => {
                self.pool.put(sock)
            }
            // Anything else leaves the stream in an unknown state: drop it.
            Err(_) => {}
        }
        reply
    }
}

/// The free list of one endpoint's idle JRMP connections, most recently
/// freed last.
#[derive(Debug, Default)]
struct Pool(Mutex<Vec<JrmpSocket>>);

impl Pool {
    fn take(&self) -> Option<JrmpSocket> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).pop()
    }
    fn put(&self, sock: JrmpSocket) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(sock);
    }
    fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// One JRMP connection, after its handshake.
#[derive(Debug)]
struct JrmpSocket {
    stream: CountingStream<TcpStream>,
    wbuf: Vec<u8>,
    rbuf: Vec<u8>,
    /// When the last exchange ended (`TCPConnection.lastuse`).
    last_use: Instant,
    /// The JDK's ping round-trip estimate, whole milliseconds × 2.
    roundtrip_ms: u64,
}

impl JrmpSocket {
    /// TCP connect and the JRMP handshake (what `TCPChannel.createConnection`
    /// does): header, the server's acknowledgement, our endpoint.
    async fn open(address: &str, counter: &WireCounter) -> Result<JrmpSocket, CallError> {
        let stream = connect_tcp(address).await?;
        let mut sock = JrmpSocket {
            stream: CountingStream::new(stream, counter.clone()),
            wbuf: Vec::with_capacity(4096),
            rbuf: Vec::with_capacity(16 * 1024),
            last_use: Instant::now(),
            roundtrip_ms: INITIAL_ROUNDTRIP_MS,
        };
        sock.stream.write_all(&wire::client_header()).await?;
        let ack = loop {
            match jrmp::wire::parse_protocol_ack(&sock.rbuf)
                .map_err(|e| CallError::Connect(format!("{address}: JRMP handshake: {e}")))?
            {
                Progress::Done { value, .. } => break value,
                Progress::NeedMore { .. } => sock.fill(address).await?,
            }
        };
        sock.rbuf.clear();
        // The JDK sends its own host as the server suggested it and port 0.
        let mut out = std::mem::take(&mut sock.wbuf);
        out.clear();
        wire::client_endpoint(&ack.host, 0, &mut out).map_err(|e| protocol(&e.to_string()))?;
        sock.stream.write_all(&out).await?;
        sock.wbuf = out;
        Ok(sock)
    }

    /// Reads more bytes into `rbuf`; the server closing is an error.
    async fn fill(&mut self, what: &str) -> Result<(), CallError> {
        if self.rbuf.capacity() - self.rbuf.len() < 8 * 1024 {
            self.rbuf.reserve(64 * 1024);
        }
        let n = self.stream.read_buf(&mut self.rbuf).await?;
        if n == 0 {
            return Err(CallError::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("{what}: the server closed the connection"),
            )));
        }
        Ok(())
    }

    /// `TCPConnection.isDead`'s test: skip the ping if used within the
    /// last round trip.
    fn ping_due(&self) -> bool {
        !(self.roundtrip_ms > 0
            && self.last_use.elapsed() < Duration::from_millis(self.roundtrip_ms))
    }

    async fn ping(&mut self) -> Result<(), CallError> {
        let start = Instant::now();
        self.stream.write_all(&[wire::PING]).await?;
        let mut b = [0u8; 1];
        self.stream.read_exact(&mut b).await?;
        if b[0] != wire::PING_ACK {
            return Err(protocol(&format!(
                "ping answered with 0x{:02x}, not PingAck",
                b[0]
            )));
        }
        // Whole milliseconds, as System.currentTimeMillis() differences.
        self.roundtrip_ms = start.elapsed().as_millis() as u64 * 2;
        Ok(())
    }

    async fn send_dgc_ack(&mut self, ack: &Uid) -> Result<(), CallError> {
        self.stream.write_all(&message::dgc_ack(ack)).await?;
        Ok(())
    }

    /// Sends `request` (a whole call message), reads the return and hands
    /// it to `decode`. The request buffer is kept for the next call.
    async fn call<T>(
        &mut self,
        request: Vec<u8>,
        has_value: bool,
        decode: impl FnOnce(jrmp::Return<'_>) -> Result<T, CallError>,
    ) -> Result<T, CallError> {
        self.stream.write_all(&request).await?;
        self.wbuf = request;
        self.rbuf.clear();
        loop {
            let total = match message::parse_return(&self.rbuf, has_value, MAX_MESSAGE) {
                Ok(Progress::Done { value, len }) => {
                    if len != self.rbuf.len() {
                        return Err(protocol(&format!(
                            "{} bytes after a return of {len}: the server sent something unasked",
                            self.rbuf.len() - len
                        )));
                    }
                    self.last_use = Instant::now();
                    // Decoded once, from the parse that found it complete.
                    return decode(value);
                }
                Ok(Progress::NeedMore { total }) => total,
                Err(e) => return Err(protocol(&format!("reading a return: {e}"))),
            };
            match total {
                Some(total) => {
                    // Read exactly the rest, then parse once.
                    if self.rbuf.capacity() < total {
                        self.rbuf.reserve(total - self.rbuf.len());
                    }
                    while self.rbuf.len() < total {
                        self.fill("return").await?;
                    }
                }
                None => self.fill("return").await?,
            }
        }
    }
}
