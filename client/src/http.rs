//! A keep-alive HTTP/1.1 client pool for the protocols that ride on HTTP
//! (Hessian over HTTP, SOAP): hyper 1's low-level `client::conn::http1`
//! connections, each over a [`CountingStream`], handed out one request at a
//! time.
//!
//! HTTP/1.1 carries one request at a time per TCP connection (pipelining is
//! not used by any Java HTTP client these servers are measured against), so
//! a lab "connection" of these protocols is a **pool**: up to `size` TCP
//! connections to one server, opened on demand and kept alive between calls.
//! That is what a Java client does: `HessianProxy` and JAX-WS/CXF proxies
//! go through `HttpURLConnection`, which opens a connection per concurrent
//! request and keeps finished ones alive for reuse.
//!
//! A call checks out an idle connection (a lock-free bounded queue,
//! `async_channel`), or opens a new one while fewer than `size` exist, or
//! waits for one to be returned. A connection the server closed (its
//! `Connection: close` after the last allowed keep-alive request, an idle
//! timeout, an error) is dropped and the pool may open another in its place.
//! A request that fails on a *reused* connection before any response byte
//! arrived (the server closed it while it sat idle: the classic keep-alive
//! race) is retried once on a fresh connection.

use crate::net::{connect_tcp, CountingStream};
use crate::protocol::{CallError, WireCounter};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{HeaderName, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE, HOST};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Largest response body accepted (the contract's largest reply is a 1 MiB
/// string in some envelope); anything larger is a protocol error, refused
/// before it is buffered.
pub const MAX_RESPONSE: usize = 64 * 1024 * 1024;

/// Default number of TCP connections per pool: enough for every worker of
/// the seeds' largest shared-client shape (100 threads) to have its own.
pub const DEFAULT_POOL: usize = 128;

type Sender = SendRequest<Full<Bytes>>;

/// One HTTP reply: its status, content type and whole body.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub content_type: Option<HeaderValue>,
    pub body: Bytes,
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
    host: HeaderValue,
    counter: WireCounter,
    size: usize,
    /// Slots created so far (at most `size`).
    slots: AtomicUsize,
    /// Connections open now (idle or in use), for tests and reports.
    open: AtomicUsize,
    idle_tx: async_channel::Sender<Option<Sender>>,
    idle_rx: async_channel::Receiver<Option<Sender>>,
}

/// A slot taken from the pool: its connection, if it has one, and whether
/// that connection carried requests before.
struct Slot {
    sender: Option<Sender>,
    reused: bool,
}

impl HttpPool {
    /// A pool of at most `size` connections to `target` (`host:port`). One
    /// connection is opened at once, so that an unreachable server is a
    /// connect error here and connection set-up is part of `connect` (as a
    /// scenario that counts it expects); the others open when needed.
    pub async fn connect(
        target: &str,
        counter: WireCounter,
        size: usize,
    ) -> Result<HttpPool, CallError> {
        let size = size.max(1);
        let host = HeaderValue::from_str(target)
            .map_err(|_| CallError::Config(format!("`{target}` is not a valid HTTP host")))?;
        let (idle_tx, idle_rx) = async_channel::bounded(size);
        let pool = HttpPool {
            target: target.to_owned(),
            host,
            counter,
            size,
            slots: AtomicUsize::new(1),
            open: AtomicUsize::new(0),
            idle_tx,
            idle_rx,
        };
        let sender = pool.open_connection().await?;
        let _ = pool.idle_tx.try_send(Some(sender));
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

    async fn open_connection(&self) -> Result<Sender, CallError> {
        let tcp = connect_tcp(&self.target).await?;
        let io = TokioIo::new(CountingStream::new(tcp, self.counter.clone()));
        let (sender, connection) = http1::handshake(io)
            .await
            .map_err(|e| CallError::Connect(format!("{}: HTTP/1.1 handshake: {e}", self.target)))?;
        self.open.fetch_add(1, Ordering::AcqRel);
        // Drives the connection until it closes; the sender then reports
        // `is_closed` and is dropped when its slot is next taken or returned.
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(sender)
    }

    /// An idle slot, a new one while fewer than `size` exist, or the next
    /// one returned.
    async fn checkout(&self) -> Result<Slot, CallError> {
        let idle = loop {
            if let Ok(idle) = self.idle_rx.try_recv() {
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
            break self
                .idle_rx
                .recv()
                .await
                .map_err(|_| CallError::Io(std::io::Error::other("HTTP pool closed")))?;
        };
        Ok(match idle {
            Some(sender) if !sender.is_closed() => Slot {
                sender: Some(sender),
                reused: true,
            },
            Some(_closed) => {
                self.open.fetch_sub(1, Ordering::AcqRel);
                Slot {
                    sender: None,
                    reused: false,
                }
            }
            None => Slot {
                sender: None,
                reused: false,
            },
        })
    }

    /// Returns a slot: with its connection if it can carry another request.
    fn give_back(&self, sender: Option<Sender>) {
        let sender = match sender {
            Some(s) if s.is_closed() => {
                self.open.fetch_sub(1, Ordering::AcqRel);
                None
            }
            other => other,
        };
        // Never full: there are at most `size` slots.
        let _ = self.idle_tx.try_send(sender);
    }

    /// Drops a slot's broken connection and returns the empty slot.
    fn discard(&self, sender: Sender) {
        drop(sender);
        self.open.fetch_sub(1, Ordering::AcqRel);
        self.give_back(None);
    }

    /// Sends one request (`method` on `path`, with `headers` and `body`) and
    /// reads the whole reply body (at most [`MAX_RESPONSE`] bytes).
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        headers: &[(HeaderName, HeaderValue)],
        body: Bytes,
    ) -> Result<Reply, CallError> {
        let slot = self.checkout().await?;
        let mut reused = slot.reused;
        let mut sender = match slot.sender {
            Some(s) => s,
            None => match self.open_connection().await {
                Ok(s) => s,
                Err(e) => {
                    self.give_back(None);
                    return Err(e);
                }
            },
        };
        loop {
            let mut builder = Request::builder()
                .method(method.clone())
                .uri(path)
                .header(HOST, self.host.clone());
            for (name, value) in headers {
                builder = builder.header(name, value);
            }
            let request = match builder.body(Full::new(body.clone())) {
                Ok(r) => r,
                Err(e) => {
                    self.give_back(Some(sender));
                    return Err(CallError::Config(format!("HTTP request to `{path}`: {e}")));
                }
            };
            // A reused connection the server closed while it was idle (the
            // keep-alive race) fails before any reply byte: once, open a
            // fresh connection in its slot and send again.
            let retry = |e: &hyper::Error| {
                reused && (e.is_canceled() || e.is_incomplete_message() || e.is_closed())
            };
            if let Err(e) = sender.ready().await {
                let again = retry(&e);
                drop(sender);
                self.open.fetch_sub(1, Ordering::AcqRel);
                if again {
                    reused = false;
                    sender = match self.open_connection().await {
                        Ok(s) => s,
                        Err(e) => {
                            self.give_back(None);
                            return Err(e);
                        }
                    };
                    continue;
                }
                self.give_back(None);
                return Err(io_error(&self.target, e));
            }
            let response = match sender.send_request(request).await {
                Ok(r) => r,
                Err(e) => {
                    let again = retry(&e);
                    drop(sender);
                    self.open.fetch_sub(1, Ordering::AcqRel);
                    if again {
                        reused = false;
                        sender = match self.open_connection().await {
                            Ok(s) => s,
                            Err(e) => {
                                self.give_back(None);
                                return Err(e);
                            }
                        };
                        continue;
                    }
                    self.give_back(None);
                    return Err(io_error(&self.target, e));
                }
            };
            let (parts, incoming) = response.into_parts();
            if let Some(len) = parts.headers.get(CONTENT_LENGTH) {
                let ok = len
                    .to_str()
                    .ok()
                    .and_then(|l| l.parse::<u64>().ok())
                    .is_some_and(|l| l <= MAX_RESPONSE as u64);
                if !ok {
                    self.discard(sender);
                    return Err(CallError::Protocol(format!(
                        "HTTP reply with Content-Length {len:?}: not a length of at most {MAX_RESPONSE} bytes"
                    )));
                }
            }
            let body = match Limited::new(incoming, MAX_RESPONSE).collect().await {
                Ok(c) => c.to_bytes(),
                Err(e) => {
                    self.discard(sender);
                    return Err(CallError::Io(std::io::Error::other(format!(
                        "{}: reading the HTTP reply body: {e}",
                        self.target
                    ))));
                }
            };
            self.give_back(Some(sender));
            return Ok(Reply {
                status: parts.status,
                content_type: parts.headers.get(CONTENT_TYPE).cloned(),
                body,
            });
        }
    }
}

fn io_error(target: &str, e: hyper::Error) -> CallError {
    if e.is_parse() || e.is_parse_status() {
        CallError::Protocol(format!("{target}: malformed HTTP reply: {e}"))
    } else {
        CallError::Io(std::io::Error::other(format!("{target}: HTTP/1.1: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// A tiny HTTP/1.1 server: answers every request with its own body,
    /// closing the connection after `per_connection` requests.
    async fn echo_server(per_connection: usize) -> (String, std::sync::Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let accepted = std::sync::Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::Relaxed);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    for served in 1..=per_connection {
                        let (head_end, len) = loop {
                            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                                let head = String::from_utf8_lossy(&buf[..i]).to_lowercase();
                                let len = head
                                    .lines()
                                    .find_map(|l| l.strip_prefix("content-length: "))
                                    .map_or(0, |l| l.trim().parse::<usize>().unwrap());
                                break (i + 4, len);
                            }
                            match s.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        };
                        while buf.len() < head_end + len {
                            match s.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        }
                        let body: Vec<u8> = buf.drain(..head_end + len).skip(head_end).collect();
                        let close = if served == per_connection {
                            "Connection: close\r\n"
                        } else {
                            ""
                        };
                        let head = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: x-test\r\n{close}Content-Length: {}\r\n\r\n",
                            body.len()
                        );
                        if s.write_all(head.as_bytes()).await.is_err()
                            || s.write_all(&body).await.is_err()
                        {
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
        let pool = HttpPool::connect(&addr, counter.clone(), 4).await.unwrap();
        for i in 0..10u32 {
            let body = Bytes::from(i.to_string());
            let reply = pool
                .request(Method::POST, "/x", &[], body.clone())
                .await
                .unwrap();
            assert_eq!(reply.status, StatusCode::OK);
            assert_eq!(reply.body, body);
            assert_eq!(reply.content_type.unwrap(), "x-test");
        }
        // Sequential calls: one connection at a time, a new one every 3 calls.
        assert_eq!(accepted.load(Ordering::Relaxed), 4);
        let (sent, received) = counter.totals();
        assert!(sent > 10 * 30 && received > 10 * 30, "{sent} {received}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_callers_share_at_most_size_connections() {
        let (addr, accepted) = echo_server(usize::MAX).await;
        let pool = std::sync::Arc::new(
            HttpPool::connect(&addr, WireCounter::default(), 3)
                .await
                .unwrap(),
        );
        let mut tasks = Vec::new();
        for t in 0..12 {
            let pool = pool.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..20 {
                    let body = Bytes::from(format!("{t}-{i}"));
                    let reply = pool
                        .request(Method::POST, "/", &[], body.clone())
                        .await
                        .unwrap();
                    assert_eq!(reply.body, body);
                }
            }));
        }
        for t in tasks {
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
            HttpPool::connect(&addr, WireCounter::default(), 1)
                .await
                .unwrap(),
        );
        let mut tasks = Vec::new();
        for t in 0..4 {
            let pool = pool.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..10 {
                    let body = Bytes::from(format!("{t}-{i}"));
                    let reply = pool
                        .request(Method::POST, "/", &[], body.clone())
                        .await
                        .unwrap();
                    assert_eq!(reply.body, body);
                }
            }));
        }
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

    #[tokio::test]
    async fn unreachable_servers_are_connect_errors() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let r = HttpPool::connect(&format!("127.0.0.1:{port}"), WireCounter::default(), 2).await;
        assert!(matches!(r, Err(CallError::Connect(_))), "{r:?}");
    }
}
