//! A keep-alive HTTP/1.1 client pool for the protocols that ride on HTTP
//! (Hessian over HTTP, SOAP): plain HTTP/1.1 written and parsed here, each
//! connection over a [`CountingStream`](crate::net::CountingStream), plaintext or under TLS
//! ([`crate::tls`], the same setup as gRPC's: `https`), handed out one
//! request at a time.
//!
//! HTTP/1.1 carries one request at a time per TCP connection (pipelining is
//! not used by any Java HTTP client these servers are measured against), so
//! a lab "connection" of these protocols is a **pool**: up to `size` TCP
//! connections to one server, opened on demand and kept alive between calls.
//! That is what a Java client does: `HessianProxy` and JAX-WS/CXF proxies
//! go through `HttpURLConnection`, which opens a connection per concurrent
//! request and keeps finished ones alive for reuse.
//!
//! A call checks out an idle connection (the last one returned, from a
//! list under a lock held for one pop), or opens a new one while fewer than `size` exist, or
//! waits for one to be returned. A connection the server closed (its
//! `Connection: close` after the last allowed keep-alive request, an idle
//! timeout, an error) is dropped and the pool may open another in its place.
//! A request that fails on a *reused* connection before any response byte
//! arrived (the server closed it while it sat idle: the classic keep-alive
//! race) is retried once on a fresh connection. A call given up half-way
//! (its timeout) drops its connection and gives the slot back.
//!
//! # Per-call work
//!
//! A protocol builds each request once ([`HttpPool::build`]: request line,
//! `Host`, its headers, `Content-Length` and body in one buffer) and sends
//! the same bytes on every call ([`HttpPool::send_with`]): one `write` per
//! call, no header map, no URI parsing. The reply is read into the
//! connection's own buffer, reused from call to call; its head is compared
//! with the connection's last one and, when it differs, scanned once for the
//! status, `Content-Length`, `Transfer-Encoding: chunked`, `Connection` and
//! `Content-Type`; the protocol reads the body where it lies, without a copy
//! (a chunked body is joined into one buffer the connection reuses). Over
//! TLS the same, through rustls; a plaintext connection's only extra work
//! is the `match` of [`Stream`] per read and write.

use crate::prepared::{CallKey, ForCall, Prepared, PreparedCall};
use crate::protocol::{CallError, WireCounter};
use crate::reference::{self, ReferenceReply};
use crate::tls::{Stream, Transport};
use ::http::header::HeaderValue;
use ::http::StatusCode;
use bytes::{Bytes, BytesMut};
use rpclab_model::contract::{Call, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Largest response body accepted (the contract's largest reply is a 1 MiB
/// string in some envelope); anything larger is a protocol error, refused
/// before it is buffered.
pub const MAX_RESPONSE: usize = 64 * 1024 * 1024;

/// Largest response head accepted.
const MAX_HEAD: usize = 64 * 1024;

/// Default number of TCP connections per pool: enough for every worker of
/// the seeds' largest shared-client shape (100 threads) to have its own.
pub const DEFAULT_POOL: usize = 128;

/// What a connection's read buffer starts with (it grows for larger
/// replies and keeps its size).
const READ_BUFFER: usize = 16 * 1024;

/// One HTTP reply: its status, content type and whole body.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub content_type: Option<HeaderValue>,
    pub body: Bytes,
}

/// One open keep-alive connection and its read buffer.
#[derive(Debug)]
struct Conn {
    stream: Stream,
    buf: BytesMut,
    /// A chunked reply's body, its chunks joined.
    joined: Vec<u8>,
    last_head: LastHead,
}

/// The connection's last reply head, bytes and parse: a server answers the
/// same call with the same head, but for its `Date` (once a second), so
/// most heads are one comparison instead of a parse.
#[derive(Debug, Default)]
struct LastHead {
    bytes: Vec<u8>,
    parsed: Option<Head>,
}

impl LastHead {
    fn parse(&mut self, head: &[u8]) -> Result<Head, Failure> {
        if let Some(parsed) = self.parsed.filter(|_| self.bytes == head) {
            return Ok(parsed);
        }
        let parsed = parse_head(head).map_err(Failure::Protocol)?;
        self.bytes.clear();
        self.bytes.extend_from_slice(head);
        self.parsed = Some(parsed);
        Ok(parsed)
    }
}

/// Up to `size` keep-alive HTTP/1.1 connections to one server.
///
/// The pool has `size` slots, created on demand. An idle slot sits in a
/// bounded lock-free queue, holding its open connection or nothing (its
/// connection was closed: the next caller to take it opens a new one), so a
/// caller waiting for a slot is woken whether a connection comes back or
/// one is dropped.
#[derive(Debug)]
pub struct HttpPool {
    target: String,
    counter: WireCounter,
    transport: Transport,
    size: usize,
    /// Slots created so far (at most `size`).
    slots: AtomicUsize,
    /// Connections open now (idle or in use), for tests and reports.
    open: AtomicUsize,
    /// The idle slots, the last returned on top (its connection the
    /// warmest), under a lock held for one push or pop.
    idle: std::sync::Mutex<Vec<Option<Conn>>>,
    /// Wakes a caller waiting for a slot when one is returned.
    returned: tokio::sync::Notify,
}

/// A slot taken from the pool. Dropped without [`SlotGuard::keep`] (an
/// error, or the caller's future dropped by its timeout), it closes its
/// connection and returns the empty slot, so the pool never loses one.
struct SlotGuard<'a> {
    pool: &'a HttpPool,
    conn: Option<Conn>,
    /// The connection carried requests before (the keep-alive race).
    reused: bool,
    done: bool,
}

impl SlotGuard<'_> {
    /// Returns the slot with its connection, kept open for the next call.
    fn keep(mut self) {
        self.done = true;
        let conn = self.conn.take();
        self.pool.give_back(conn);
    }
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            if self.conn.take().is_some() {
                self.pool.open.fetch_sub(1, Ordering::AcqRel);
            }
            self.pool.give_back(None);
        }
    }
}

impl HttpPool {
    /// A pool of at most `size` connections to `target` (`host:port`),
    /// plaintext or TLS as `transport` says. One connection is opened at
    /// once, so that an unreachable server (or a failed TLS handshake) is a
    /// connect error here and connection set-up is part of `connect` (as a
    /// scenario that counts it expects); the others open when needed.
    pub async fn connect(
        transport: &Transport,
        target: &str,
        counter: WireCounter,
        size: usize,
    ) -> Result<HttpPool, CallError> {
        let size = size.max(1);
        if target
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err(CallError::Config(format!(
                "`{target}` is not a valid HTTP host"
            )));
        }
        let pool = HttpPool {
            target: target.to_owned(),
            counter,
            transport: transport.clone(),
            size,
            slots: AtomicUsize::new(1),
            open: AtomicUsize::new(0),
            idle: std::sync::Mutex::new(Vec::new()),
            returned: tokio::sync::Notify::new(),
        };
        let conn = pool.open_connection().await?;
        pool.give_back(Some(conn));
        Ok(pool)
    }

    /// The pool's largest number of connections.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Connections open now (idle or in use).
    pub fn open_connections(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    /// One whole request, built once and sent with [`HttpPool::send`] as
    /// often as needed: `method path HTTP/1.1`, `Host`, `headers` (name,
    /// value), `Content-Length` (for a body, or any method but `GET`) and
    /// `body`. Names and values must be valid header text; they are checked
    /// here, once.
    pub fn build(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Bytes, CallError> {
        let bad = |what: &str, s: &str| {
            CallError::Config(format!("HTTP request to `{path}`: invalid {what} {s:?}"))
        };
        if !path.starts_with('/') || path.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(bad("path", path));
        }
        let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_graphic() && b != b':');
        if !token(method) {
            return Err(bad("method", method));
        }
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.target);
        for (name, value) in headers {
            if !token(name) {
                return Err(bad("header name", name));
            }
            if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
                return Err(bad("header value", value));
            }
            head.push_str(name);
            head.push_str(": ");
            head.push_str(value);
            head.push_str("\r\n");
        }
        if !body.is_empty() || method != "GET" {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let mut request = Vec::with_capacity(head.len() + body.len());
        request.extend_from_slice(head.as_bytes());
        request.extend_from_slice(body);
        Ok(Bytes::from(request))
    }

    async fn open_connection(&self) -> Result<Conn, CallError> {
        let stream = self.transport.open(&self.target, &self.counter).await?;
        self.open.fetch_add(1, Ordering::AcqRel);
        Ok(Conn {
            stream,
            buf: BytesMut::with_capacity(READ_BUFFER),
            joined: Vec::new(),
            last_head: LastHead::default(),
        })
    }

    /// An idle slot, a new one while fewer than `size` exist, or the next
    /// one returned.
    async fn checkout(&self) -> Result<SlotGuard<'_>, CallError> {
        let idle = loop {
            if let Some(idle) = self.take_idle() {
                break idle;
            }
            let slots = self.slots.load(Ordering::Acquire);
            if slots < self.size {
                if self
                    .slots
                    .compare_exchange(slots, slots + 1, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    break None;
                }
                continue;
            }
            // Every slot is in use: wait for one to come back. Registered
            // before looking again, so a slot returned in between wakes it.
            let returned = self.returned.notified();
            let mut returned = std::pin::pin!(returned);
            returned.as_mut().enable();
            if let Some(idle) = self.take_idle() {
                break idle;
            }
            returned.await;
        };
        Ok(SlotGuard {
            pool: self,
            reused: idle.is_some(),
            conn: idle,
            done: false,
        })
    }

    /// An idle slot, if one is.
    fn take_idle(&self) -> Option<Option<Conn>> {
        self.idle_slots().pop()
    }

    fn idle_slots(&self) -> std::sync::MutexGuard<'_, Vec<Option<Conn>>> {
        // A panic cannot leave the list half-written (single pushes and pops).
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Returns a slot, with its connection if it can carry another request.
    fn give_back(&self, conn: Option<Conn>) {
        self.idle_slots().push(conn);
        self.returned.notify_one();
    }

    /// Sends one request (`method` on `path`, with `headers` and `body`) and
    /// reads the whole reply; [`HttpPool::build`] and [`HttpPool::send`] in
    /// one, for requests made once (a WSDL).
    pub async fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Reply, CallError> {
        let request = self.build(method, path, headers, body)?;
        self.send(&request).await
    }

    /// Sends a request made by [`HttpPool::build`] on a pooled connection
    /// and reads the whole reply body (at most [`MAX_RESPONSE`] bytes) into
    /// an owned [`Reply`]; for requests made once (a WSDL).
    pub async fn send(&self, request: &[u8]) -> Result<Reply, CallError> {
        self.send_with(request, |reply| Reply {
            status: reply.status,
            content_type: reply
                .content_type
                .and_then(|t| HeaderValue::from_bytes(t).ok()),
            body: Bytes::copy_from_slice(reply.body),
        })
        .await
    }

    /// Sends a request made by [`HttpPool::build`] on a pooled connection,
    /// reads the whole reply (at most [`MAX_RESPONSE`] bytes) and hands it
    /// to `read` where it lies, in the connection's buffer, before the
    /// connection goes back to the pool: no copy, no allocation per call.
    pub async fn send_with<R>(
        &self,
        request: &[u8],
        read: impl FnOnce(ReplyRef<'_>) -> R,
    ) -> Result<R, CallError> {
        let mut slot = self.checkout().await?;
        loop {
            let conn = match &mut slot.conn {
                Some(c) => c,
                None => slot.conn.insert(self.open_connection().await?),
            };
            match exchange(conn, request).await {
                Ok(parsed) => {
                    let out = read(parsed.reply(&conn.buf, &conn.joined));
                    if parsed.keep_alive {
                        slot.keep();
                    }
                    // Otherwise the guard closes the connection and returns
                    // the empty slot.
                    return Ok(out);
                }
                // The keep-alive race: the server closed the idle connection
                // before reading the request. Once, on a fresh connection.
                Err(Failure::ClosedBeforeReply(_)) if slot.reused => {
                    slot.conn = None;
                    self.open.fetch_sub(1, Ordering::AcqRel);
                    slot.reused = false;
                }
                // The server's TLS alert refusing the client's certificate
                // is an answer (a protocol error, so that a run of nothing
                // but these stops before measuring), with what to pass.
                Err(Failure::ClosedBeforeReply(e) | Failure::Io(e)) => {
                    return Err(match crate::tls::alert_hint(&e) {
                        Some(hint) => {
                            CallError::Protocol(format!("{}: TLS: {e} ({hint})", self.target))
                        }
                        None => CallError::Io(std::io::Error::new(
                            e.kind(),
                            format!("{}: HTTP/1.1: {e}", self.target),
                        )),
                    })
                }
                Err(Failure::Protocol(e)) => {
                    return Err(CallError::Protocol(format!("{}: {e}", self.target)))
                }
            }
        }
    }
}

/// A call's whole request, built on its first call and sent again on the
/// next ones while they are the same call ([`crate::prepared`]). The kept
/// call also keeps its reference reply ([`ReferenceReply`]).
#[derive(Debug, Default)]
pub struct RequestCache {
    prepared: PreparedCall<PreparedRequest>,
}

/// A call's request and, once one was verified, its reference reply.
#[derive(Debug)]
pub struct PreparedRequest {
    key: CallKey,
    request: Bytes,
    reference: ReferenceReply,
}

impl ForCall for PreparedRequest {
    fn is_for(&self, call: &Call) -> bool {
        self.key.is_for(call)
    }
}

/// A call's request: the kept one, or one built for this call alone.
#[derive(Debug)]
pub struct Request<'a>(Prepared<'a, PreparedRequest>);

impl Request<'_> {
    /// What to send.
    pub fn bytes(&self) -> &[u8] {
        &self.0.request
    }

    /// The reply body: checked against the kept call's reference reply
    /// first, decoded in full otherwise (a call built for itself alone
    /// keeps no reference).
    pub fn reply_of(
        &self,
        body: &[u8],
        expected: &Value,
        decode: impl FnOnce(&[u8]) -> Result<Value, CallError>,
    ) -> Result<reference::Reply, CallError> {
        match &self.0 {
            Prepared::Kept(p) => p.reference.reply_of(body, expected, decode),
            Prepared::Once(_) => decode(body).map(reference::Reply::Decoded),
        }
    }
}

impl RequestCache {
    /// The request of `call`: the kept one, or `build`'s (kept when
    /// nothing is yet).
    pub fn get_or_build(
        &self,
        call: &Call,
        build: impl FnOnce() -> Result<Bytes, CallError>,
    ) -> Result<Request<'_>, CallError> {
        self.prepared
            .get_or_build(call, || {
                Ok(PreparedRequest {
                    key: CallKey::of(call),
                    request: build()?,
                    reference: ReferenceReply::default(),
                })
            })
            .map(Request)
    }
}

/// Why an exchange failed.
enum Failure {
    /// Not one reply byte arrived: the request may not have been read.
    ClosedBeforeReply(std::io::Error),
    Io(std::io::Error),
    Protocol(String),
}

/// A reply as it lies in its connection's buffer (see [`HttpPool::send_with`]).
#[derive(Debug, Clone, Copy)]
pub struct ReplyRef<'a> {
    pub status: StatusCode,
    pub content_type: Option<&'a [u8]>,
    pub body: &'a [u8],
}

/// Where an exchange's reply is: the head and a plain body in the
/// connection's buffer, a chunked body joined in its `joined` buffer.
struct Parsed {
    status: StatusCode,
    content_type: Option<(usize, usize)>,
    body: BodyAt,
    keep_alive: bool,
}

enum BodyAt {
    Buffer(usize, usize),
    Joined,
}

impl Parsed {
    fn reply<'a>(&self, buf: &'a [u8], joined: &'a [u8]) -> ReplyRef<'a> {
        ReplyRef {
            status: self.status,
            content_type: self.content_type.map(|(a, b)| &buf[a..b]),
            body: match self.body {
                BodyAt::Buffer(a, b) => &buf[a..b],
                BodyAt::Joined => joined,
            },
        }
    }
}

/// Writes `request` and reads its reply into the connection's buffers;
/// also says whether the connection may carry another request.
async fn exchange(conn: &mut Conn, request: &[u8]) -> Result<Parsed, Failure> {
    conn.buf.clear();
    if let Err(e) = write_request(&mut conn.stream, request).await {
        return Err(Failure::ClosedBeforeReply(e));
    }
    // The head.
    let mut scanned = 0;
    let head_end = loop {
        if let Some(i) = find_head_end(&conn.buf, scanned) {
            break i;
        }
        if conn.buf.len() > MAX_HEAD {
            return Err(Failure::Protocol(format!(
                "HTTP reply head longer than {MAX_HEAD} bytes"
            )));
        }
        scanned = conn.buf.len().saturating_sub(3);
        match read_more(conn).await {
            Ok(0) if conn.buf.is_empty() => {
                return Err(Failure::ClosedBeforeReply(
                    std::io::ErrorKind::UnexpectedEof.into(),
                ))
            }
            Ok(0) | Err(_) if crate::tls::is_tls_record(&conn.buf) => {
                return Err(Failure::Protocol(
                    "the server answered with a TLS record: it speaks TLS, not plaintext \
                     HTTP/1.1 (connect with --tls, --cacert or --skipTLS)"
                        .into(),
                ))
            }
            Ok(0) => {
                return Err(Failure::Io(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "connection closed in the reply head",
                )))
            }
            Ok(_) => {}
            Err(e) if conn.buf.is_empty() => return Err(Failure::ClosedBeforeReply(e)),
            Err(e) => return Err(Failure::Io(e)),
        }
    };
    let head = conn.last_head.parse(&conn.buf[..head_end])?;
    let mut keep_alive = head.keep_alive;
    let body = match head.body {
        BodyLength::Length(len) => {
            if len > MAX_RESPONSE {
                return Err(Failure::Protocol(format!(
                    "HTTP reply with Content-Length {len}: more than {MAX_RESPONSE} bytes"
                )));
            }
            let end = head_end + len;
            conn.buf.reserve(end.saturating_sub(conn.buf.len()));
            while conn.buf.len() < end {
                if read_more(conn).await.map_err(Failure::Io)? == 0 {
                    return Err(Failure::Io(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "connection closed in the reply body",
                    )));
                }
            }
            if conn.buf.len() > end {
                // Bytes past the reply: the server is not speaking
                // request/response HTTP/1.1.
                keep_alive = false;
            }
            BodyAt::Buffer(head_end, end)
        }
        BodyLength::Chunked => {
            read_chunked(conn, head_end).await?;
            BodyAt::Joined
        }
        BodyLength::UntilClose => {
            keep_alive = false;
            loop {
                if conn.buf.len() - head_end > MAX_RESPONSE {
                    return Err(Failure::Protocol(format!(
                        "HTTP reply body longer than {MAX_RESPONSE} bytes"
                    )));
                }
                if read_more(conn).await.map_err(Failure::Io)? == 0 {
                    break;
                }
            }
            BodyAt::Buffer(head_end, conn.buf.len())
        }
    };
    Ok(Parsed {
        status: head.status,
        content_type: head.content_type,
        body,
        keep_alive,
    })
}

/// Writes a whole request; over TLS, then flushes the records rustls may
/// still hold (a plaintext write goes straight to the socket: nothing to
/// flush, so nothing more per call).
async fn write_request(stream: &mut Stream, request: &[u8]) -> std::io::Result<()> {
    stream.write_all(request).await?;
    if let Stream::Tls(_) = stream {
        stream.flush().await?;
    }
    Ok(())
}

async fn read_more(conn: &mut Conn) -> std::io::Result<usize> {
    if conn.buf.capacity() - conn.buf.len() < 4096 {
        conn.buf.reserve(READ_BUFFER.max(conn.buf.len()));
    }
    conn.stream.read_buf(&mut conn.buf).await
}

/// Where the head ends (after its blank line), searching from `from`.
fn find_head_end(buf: &[u8], from: usize) -> Option<usize> {
    static BLANK_LINE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\r\n\r\n"));
    BLANK_LINE.find(buf.get(from..)?).map(|i| from + i + 4)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyLength {
    Length(usize),
    Chunked,
    UntilClose,
}

#[derive(Debug, Clone, Copy)]
struct Head {
    status: StatusCode,
    body: BodyLength,
    keep_alive: bool,
    /// Where the Content-Type value is in the head.
    content_type: Option<(usize, usize)>,
}

/// The status line and the headers the client needs.
fn parse_head(head: &[u8]) -> Result<Head, String> {
    let bad = |what: &str| {
        let shown = String::from_utf8_lossy(&head[..head.len().min(80)]).into_owned();
        format!("malformed HTTP reply ({what}): {shown:?}")
    };
    let line_end = memchr::memchr(b'\n', head)
        .filter(|&i| i > 0 && head[i - 1] == b'\r')
        .map(|i| i - 1)
        .ok_or_else(|| bad("no status line"))?;
    let line = &head[..line_end];
    let (version, rest) = match line {
        [b'H', b'T', b'T', b'P', b'/', b'1', b'.', v, b' ', rest @ ..] => (*v, rest),
        _ => return Err(bad("not HTTP/1.x")),
    };
    let code = rest
        .get(..3)
        .and_then(|c| std::str::from_utf8(c).ok())
        .and_then(|c| c.parse::<u16>().ok())
        .and_then(|c| StatusCode::from_u16(c).ok())
        .ok_or_else(|| bad("status code"))?;
    let mut keep_alive = version == b'1';
    let (mut length, mut chunked, mut content_type) = (None, false, None);
    let mut at = line_end + 2;
    for line in head[at..].split(|b| *b == b'\n') {
        let start = at;
        at += line.len() + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = memchr::memchr(b':', line) else {
            continue;
        };
        let name = &line[..colon];
        // Only four names matter; their lengths differ, so most headers
        // are passed over by their length alone.
        if !matches!(name.len(), 10 | 12 | 14 | 17) {
            continue;
        }
        let raw = &line[colon + 1..];
        let value = raw.trim_ascii();
        if name.eq_ignore_ascii_case(b"content-length") {
            let l = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.parse::<usize>().ok())
                .ok_or_else(|| bad("Content-Length"))?;
            if length.is_some_and(|p| p != l) {
                return Err(bad("two Content-Lengths"));
            }
            length = Some(l);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            chunked = value
                .rsplit(|b| *b == b',')
                .next()
                .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
            if !chunked {
                return Err(bad("a transfer coding other than chunked"));
            }
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in value.split(|b| *b == b',').map(<[u8]>::trim_ascii) {
                if token.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive = true;
                }
            }
        } else if name.eq_ignore_ascii_case(b"content-type") {
            let lead = raw.len() - raw.trim_ascii_start().len();
            let from = start + colon + 1 + lead;
            content_type = Some((from, from + value.len()));
        }
    }
    // No body: 1xx, 204 and 304 (HEAD is never sent).
    let bodiless = code.is_informational()
        || code == StatusCode::NO_CONTENT
        || code == StatusCode::NOT_MODIFIED;
    let body = if bodiless {
        BodyLength::Length(0)
    } else if chunked {
        BodyLength::Chunked
    } else if let Some(l) = length {
        BodyLength::Length(l)
    } else {
        BodyLength::UntilClose
    };
    Ok(Head {
        status: code,
        body,
        keep_alive,
        content_type,
    })
}

/// A chunked body that starts at `at` in the connection's buffer, its
/// chunks joined into the connection's `joined` buffer (trailers skipped).
async fn read_chunked(conn: &mut Conn, mut at: usize) -> Result<(), Failure> {
    conn.joined.clear();
    let line_end = |buf: &[u8], at: usize| memchr::memmem::find(&buf[at..], b"\r\n");
    loop {
        // The chunk-size line.
        let end = loop {
            if let Some(i) = line_end(&conn.buf, at) {
                break i;
            }
            if conn.buf.len() - at > 4096 {
                return Err(Failure::Protocol("chunk size line too long".into()));
            }
            if read_more(conn).await.map_err(Failure::Io)? == 0 {
                return Err(Failure::Io(std::io::ErrorKind::UnexpectedEof.into()));
            }
        };
        let size_text = conn.buf[at..at + end]
            .split(|b| *b == b';')
            .next()
            .unwrap_or_default()
            .trim_ascii();
        let size = std::str::from_utf8(size_text)
            .ok()
            .and_then(|s| usize::from_str_radix(s, 16).ok())
            .ok_or_else(|| Failure::Protocol("bad chunk size".into()))?;
        at += end + 2;
        if size == 0 {
            // Trailers, up to the blank line.
            loop {
                if let Some(i) = line_end(&conn.buf, at) {
                    at += i + 2;
                    if i == 0 {
                        return Ok(());
                    }
                    continue;
                }
                if read_more(conn).await.map_err(Failure::Io)? == 0 {
                    return Err(Failure::Io(std::io::ErrorKind::UnexpectedEof.into()));
                }
            }
        }
        if conn.joined.len() + size > MAX_RESPONSE {
            return Err(Failure::Protocol(format!(
                "chunked HTTP reply body longer than {MAX_RESPONSE} bytes"
            )));
        }
        while conn.buf.len() < at + size + 2 {
            if read_more(conn).await.map_err(Failure::Io)? == 0 {
                return Err(Failure::Io(std::io::ErrorKind::UnexpectedEof.into()));
            }
        }
        if &conn.buf[at + size..at + size + 2] != b"\r\n" {
            return Err(Failure::Protocol("chunk not followed by CRLF".into()));
        }
        conn.joined.extend_from_slice(&conn.buf[at..at + size]);
        at += size + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::http::{http_reply, http_server, read_request, HttpRequest};
    use rpclab_model::contract::Operation;
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

    /// A tiny HTTP/1.1 server: answers every request with its own body,
    /// closing the connection after `per_connection` requests.
    async fn echo_server(per_connection: usize) -> (String, std::sync::Arc<AtomicUsize>) {
        echo_server_with(per_connection, Style::Length).await
    }

    #[derive(Clone, Copy, PartialEq)]
    enum Style {
        /// Content-Length, `Connection: close` on the last reply.
        Length,
        /// Chunked in 3-byte chunks with a trailer.
        Chunked,
        /// Content-Length; after the last reply the connection is closed
        /// without a word, as an idle timeout does.
        SilentClose,
    }

    async fn echo_server_with(
        per_connection: usize,
        style: Style,
    ) -> (String, std::sync::Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let accepted = std::sync::Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::Relaxed);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    for served in 1..=per_connection {
                        let Some(HttpRequest { body, .. }) = read_request(&mut s, &mut buf).await
                        else {
                            return;
                        };
                        let close = if served == per_connection && style == Style::Length {
                            "Connection: close\r\n"
                        } else {
                            ""
                        };
                        let reply = if style == Style::Chunked {
                            let mut r = b"HTTP/1.1 200 OK\r\nContent-Type: x-test\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
                            for c in body.chunks(3) {
                                r.extend_from_slice(format!("{:x};ext=1\r\n", c.len()).as_bytes());
                                r.extend_from_slice(c);
                                r.extend_from_slice(b"\r\n");
                            }
                            r.extend_from_slice(b"0\r\nX-Trailer: t\r\n\r\n");
                            r
                        } else {
                            let mut r = format!(
                                "HTTP/1.1 200 OK\r\nContent-Type: x-test\r\n{close}Content-Length: {}\r\n\r\n",
                                body.len()
                            )
                            .into_bytes();
                            r.extend_from_slice(&body);
                            r
                        };
                        // In two writes, so the client sees partial replies.
                        let (a, b) = reply.split_at(reply.len() / 2);
                        if s.write_all(a).await.is_err() || s.write_all(b).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (addr, accepted)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reuses_connections_and_survives_server_closes() {
        let (addr, accepted) = echo_server(3).await;
        let counter = WireCounter::default();
        let pool = HttpPool::connect(&Transport::Plaintext, &addr, counter.clone(), 4)
            .await
            .unwrap();
        for i in 0..10u32 {
            let body = Bytes::from(i.to_string());
            let reply = pool.request("POST", "/x", &[], &body).await.unwrap();
            assert_eq!(reply.status, StatusCode::OK);
            assert_eq!(reply.body, body);
            assert_eq!(reply.content_type.unwrap(), "x-test");
        }
        // Sequential calls: one connection at a time, a new one every 3 calls.
        assert_eq!(accepted.load(Ordering::Relaxed), 4);
        let (sent, received) = counter.totals();
        assert!(sent > 10 * 30 && received > 10 * 30, "{sent} {received}");
    }

    /// `callers` tasks sharing `pool`, each sending `requests` distinct
    /// bodies to an echo server and checking each comes back.
    fn echo_callers(
        pool: &std::sync::Arc<HttpPool>,
        callers: usize,
        requests: usize,
    ) -> Vec<tokio::task::JoinHandle<()>> {
        (0..callers)
            .map(|t| {
                let pool = pool.clone();
                tokio::spawn(async move {
                    for i in 0..requests {
                        let body = Bytes::from(format!("{t}-{i}"));
                        let reply = pool.request("POST", "/", &[], &body).await.unwrap();
                        assert_eq!(reply.body, body);
                    }
                })
            })
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_callers_share_at_most_size_connections() {
        let (addr, accepted) = echo_server(usize::MAX).await;
        let pool = std::sync::Arc::new(
            HttpPool::connect(&Transport::Plaintext, &addr, WireCounter::default(), 3)
                .await
                .unwrap(),
        );
        for t in echo_callers(&pool, 12, 20) {
            t.await.unwrap();
        }
        assert!(accepted.load(Ordering::Relaxed) <= 3);
        assert!(pool.open_connections() <= 3);
    }

    /// Callers waiting for the only slot are woken when its connection is
    /// closed by the server after each reply, not only when one comes back.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn waiters_get_the_slot_of_a_closed_connection() {
        let (addr, accepted) = echo_server(1).await;
        let pool = std::sync::Arc::new(
            HttpPool::connect(&Transport::Plaintext, &addr, WireCounter::default(), 1)
                .await
                .unwrap(),
        );
        let tasks = echo_callers(&pool, 4, 10);
        tokio::time::timeout(std::time::Duration::from_secs(20), async {
            for t in tasks {
                t.await.unwrap();
            }
        })
        .await
        .expect("callers waiting for a slot must not starve");
        // One connection per request, never two at once.
        assert_eq!(accepted.load(Ordering::Relaxed), 40);
        assert!(pool.open_connections() <= 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn chunked_replies_are_joined() {
        let (addr, accepted) = echo_server_with(usize::MAX, Style::Chunked).await;
        let pool = HttpPool::connect(&Transport::Plaintext, &addr, WireCounter::default(), 2)
            .await
            .unwrap();
        for body in [&b""[..], b"a", b"abcdefghij", &[7u8; 10_000][..]] {
            let reply = pool.request("POST", "/", &[], body).await.unwrap();
            assert_eq!(&reply.body[..], body);
        }
        assert_eq!(accepted.load(Ordering::Relaxed), 1);
    }

    /// A server that closes idle keep-alive connections without a word: the
    /// next request on such a connection fails before any reply byte and is
    /// sent again, once, on a fresh connection.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_silently_closed_idle_connection_is_retried_once() {
        let (addr, accepted) = echo_server_with(2, Style::SilentClose).await;
        let pool = HttpPool::connect(&Transport::Plaintext, &addr, WireCounter::default(), 1)
            .await
            .unwrap();
        for i in 0..7u32 {
            let body = i.to_string();
            let reply = pool
                .request("POST", "/", &[], body.as_bytes())
                .await
                .unwrap();
            assert_eq!(reply.body, body.as_bytes());
            // Let the server's close arrive before the next request.
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert_eq!(accepted.load(Ordering::Relaxed), 4);
    }

    /// A call dropped half-way (its timeout) gives its slot back: the next
    /// call on a pool of one gets a connection.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_call_gives_its_slot_back() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            // The first connection never answers; the second echoes.
            let (silent, _) = listener.accept().await.unwrap();
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).await.unwrap();
            assert!(n > 0);
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .await
                .unwrap();
            drop(silent);
            tokio::time::sleep(std::time::Duration::from_secs(5)).await;
        });
        let pool = HttpPool::connect(&Transport::Plaintext, &addr, WireCounter::default(), 1)
            .await
            .unwrap();
        let first = tokio::time::timeout(
            std::time::Duration::from_millis(100),
            pool.request("POST", "/", &[], b"x"),
        )
        .await;
        assert!(first.is_err(), "the silent server cannot have answered");
        assert_eq!(pool.open_connections(), 0);
        let reply = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            pool.request("POST", "/", &[], b"x"),
        )
        .await
        .expect("the slot came back")
        .unwrap();
        assert_eq!(&reply.body[..], b"ok");
    }

    #[test]
    fn a_repeated_head_is_compared_not_parsed_again_and_another_is_parsed() {
        let mut last = LastHead::default();
        let a = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\nDate: x\r\n\r\n";
        let b = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nDate: x\r\n\r\n";
        let c = b"HTTP/1.1 500 Oops\r\nConnection: close\r\nContent-Length: 1\r\n\r\n";
        for _ in 0..2 {
            let h = last.parse(a).ok().unwrap();
            assert_eq!(
                (h.status, h.body, h.keep_alive),
                (StatusCode::OK, BodyLength::Length(12), true)
            );
        }
        let h = last.parse(b).ok().unwrap();
        assert_eq!(h.body, BodyLength::Length(13));
        let h = last.parse(c).ok().unwrap();
        assert_eq!(
            (h.status, h.keep_alive),
            (StatusCode::INTERNAL_SERVER_ERROR, false)
        );
        assert!(last.parse(b"HTTP/2 200\r\n\r\n").is_err());
        // A broken head is not kept: the next one is parsed on its own.
        assert_eq!(last.parse(a).ok().unwrap().body, BodyLength::Length(12));
    }

    #[test]
    fn heads_are_parsed_for_what_the_client_needs() {
        let h = parse_head(b"HTTP/1.1 500 Internal\r\ncontent-type:  text/xml \r\nConnection: Close\r\nContent-Length: 12\r\n\r\n").unwrap();
        assert_eq!(h.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(h.body, BodyLength::Length(12));
        assert!(!h.keep_alive);
        let head = b"HTTP/1.1 500 Internal\r\ncontent-type:  text/xml \r\n";
        let h2 = parse_head(head).unwrap();
        let (a, b) = h2.content_type.unwrap();
        assert_eq!(&head[a..b], b"text/xml");
        assert_eq!(h2.body, BodyLength::UntilClose);
        let h = parse_head(b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n").unwrap();
        assert_eq!((h.body, h.keep_alive), (BodyLength::Chunked, false));
        assert_eq!(
            parse_head(b"HTTP/1.1 204 No Content\r\n\r\n").unwrap().body,
            BodyLength::Length(0)
        );
        for bad in [
            &b"HTTP/2 200\r\n\r\n"[..],
            b"HTTP/1.1 2x0 OK\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: a\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        ] {
            assert!(
                parse_head(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[tokio::test]
    async fn requests_are_built_once_with_their_length() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let pool = HttpPool::connect(&Transport::Plaintext, &addr, WireCounter::default(), 1)
            .await
            .unwrap();
        let r = pool
            .build(
                "POST",
                "/p?q",
                &[("Content-Type", "x-application/hessian")],
                b"body",
            )
            .unwrap();
        assert_eq!(
            &r[..],
            format!("POST /p?q HTTP/1.1\r\nHost: {addr}\r\nContent-Type: x-application/hessian\r\nContent-Length: 4\r\n\r\nbody").as_bytes()
        );
        let get = pool.build("GET", "/w?wsdl", &[], b"").unwrap();
        assert!(get.ends_with(b"\r\n\r\n") && !get.windows(7).any(|w| w == b"Content"));
        for (m, p, h) in [
            ("POST", "no-slash", ("a", "b")),
            ("POST", "/a b", ("a", "b")),
            ("PO ST", "/", ("a", "b")),
            ("POST", "/", ("a:b", "c")),
            ("POST", "/", ("a", "b\r\nX: y")),
        ] {
            assert!(pool.build(m, p, &[h], b"").is_err(), "{m} {p} {h:?}");
        }
    }

    #[test]
    fn the_request_cache_builds_once_per_call_and_never_serves_another() {
        let cache = RequestCache::default();
        let builds = std::cell::Cell::new(0);
        let build = |b: &'static [u8]| {
            builds.set(builds.get() + 1);
            Ok(Bytes::from_static(b))
        };
        let hello = Operation::Hello.call();
        for _ in 0..3 {
            assert_eq!(
                cache.get_or_build(&hello, || build(b"h")).unwrap().bytes(),
                b"h"
            );
        }
        assert_eq!(builds.get(), 1);
        // Another call (or the same operation with another argument) is
        // built afresh, every time.
        let mut other = Operation::Hello.call();
        other.argument = Value::Str("bb".into());
        for _ in 0..2 {
            assert_eq!(
                cache.get_or_build(&other, || build(b"o")).unwrap().bytes(),
                b"o"
            );
        }
        let empty = Operation::Empty.call();
        assert_eq!(
            cache.get_or_build(&empty, || build(b"e")).unwrap().bytes(),
            b"e"
        );
        assert_eq!(builds.get(), 4);
        assert_eq!(
            cache.get_or_build(&hello, || build(b"x")).unwrap().bytes(),
            b"h"
        );
    }

    /// A loopback server that answers whatever a connection first sends
    /// with `answer`, whether or not the client speaks its protocol: the
    /// peer of the tests of a client talking to the wrong kind of server.
    async fn answering_every_connection(answer: &'static [u8]) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf).await;
                let _ = s.write_all(answer).await;
            }
        });
        addr
    }

    /// A plaintext pool whose server answers with a TLS alert: one error
    /// that says the server speaks TLS and what to pass.
    #[tokio::test]
    async fn a_tls_server_answering_a_plaintext_request_is_named() {
        // An alert record: fatal, protocol_version.
        let addr = answering_every_connection(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46]).await;
        let pool = HttpPool::connect(&Transport::Plaintext, &addr, WireCounter::default(), 1)
            .await
            .unwrap();
        match pool.request("POST", "/", &[], b"x").await {
            Err(CallError::Protocol(m)) => {
                assert!(m.contains("speaks TLS") && m.contains("--cacert"), "{m}")
            }
            other => panic!("{other:?}"),
        }
    }

    /// A TLS pool against a plaintext HTTP server: the handshake fails
    /// when the pool connects, with the hint that the server is plaintext.
    #[tokio::test]
    async fn a_tls_pool_against_a_plaintext_server_fails_to_connect() {
        let addr =
            answering_every_connection(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
                .await;
        let tls = Transport::from_options(
            "hessian",
            &crate::testing::options(&[("tls", "skip-verify")]),
            crate::tls::Alpn::Http1,
        )
        .unwrap();
        match HttpPool::connect(&tls, &addr, WireCounter::default(), 1).await {
            Err(CallError::Connect(m)) => assert!(
                m.contains("TLS handshake failed") && m.contains("a plaintext server?"),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn unreachable_servers_are_connect_errors() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let r = HttpPool::connect(
            &Transport::Plaintext,
            &format!("127.0.0.1:{port}"),
            WireCounter::default(),
            2,
        )
        .await;
        assert!(matches!(r, Err(CallError::Connect(_))), "{r:?}");
    }

    /// The client's own pool reads what the test server of
    /// `testing::http` writes, call after call on one keep-alive
    /// connection.
    #[tokio::test]
    async fn answers_requests_on_a_keep_alive_connection() {
        let (addr, accepted) = http_server(|request: HttpRequest| async move {
            let mut body = format!("{} {} ", request.method(), request.path()).into_bytes();
            body.extend_from_slice(&request.body);
            http_reply("201 Created", "x-test", &body)
        })
        .await;
        let pool = HttpPool::connect(&Transport::Plaintext, &addr, WireCounter::default(), 1)
            .await
            .unwrap();
        for i in 0..3 {
            let reply = pool
                .request("POST", "/p", &[], &Bytes::from(i.to_string()))
                .await
                .unwrap();
            assert_eq!(reply.status, StatusCode::CREATED);
            assert_eq!(reply.content_type.unwrap(), "x-test");
            assert_eq!(&reply.body[..], format!("POST /p {i}").as_bytes());
        }
        assert_eq!(accepted.load(Ordering::Relaxed), 1);
    }
}
