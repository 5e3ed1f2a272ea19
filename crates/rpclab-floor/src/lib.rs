//! The raw-socket floor: the least CPU a client can spend per call.
//!
//! `rpclab-floor` (`src/main.rs`) opens N connections on one
//! thread with one `epoll` loop (mio), keeps one call in flight on each,
//! replays a request encoded once before the run, and reads each reply only
//! as far as its framing says where it ends. Nothing is decoded, allocated
//! or timed per call beyond that, so the CPU it spends per call is what the
//! kernel's socket path costs plus a few branches: the floor under any
//! client that makes one `write` and one `read` per message. The ceiling
//! benchmarks (`cargo xtask bench client`, `cargo xtask bench peers`) show
//! it beside the load client, so a reader sees how far the client is above
//! the floor rather than an absolute figure.
//!
//! The floor **does not verify replies**; it is a yardstick, never a
//! measurement of a server.
//!
//! Four framings ([`Framing`]):
//!
//! * [`Framing::Length`]: binary protocols whose header carries the
//!   message's length (Thrift framed, Dubbo, Ice, bolt): one or more
//!   length fields at fixed offsets ([`LengthField`]: offset, width, byte
//!   order) and a constant, so that message size = constant + the sum of
//!   the fields;
//! * [`Framing::Motan2`]: motan2, whose body length follows its metadata,
//!   so that no fixed offset holds it: after the 13-byte header, the
//!   metadata and the body, each after its own 4-byte big-endian length;
//! * [`Framing::Http1`]: HTTP/1.1 keep-alive, a reply ending after its head
//!   and `Content-Length` bytes, or after its last chunk (Tomcat chunks);
//! * [`Framing::H2`]: gRPC over HTTP/2: the floor writes the connection
//!   preface once, then per call one `HEADERS` (HPACK literals without
//!   indexing, so the same block is valid every time; only the stream id is
//!   patched) and one `DATA` frame with the gRPC message, and a call ends at
//!   the frame that carries `END_STREAM` on its stream. It acknowledges
//!   `SETTINGS` and `PING`, and gives the connection's receive window back
//!   in one `WINDOW_UPDATE` per 1 GiB.

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use self_cost::process_cpu_time;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// One length field of a binary header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LengthField {
    /// Byte offset of the field from the message's start.
    pub offset: usize,
    /// Width in bytes: 1, 2, 4 or 8.
    pub width: usize,
    pub big_endian: bool,
}

impl LengthField {
    /// Parses `offset:width:be|le`, e.g. `0:4:be` (Thrift framed).
    pub fn parse(text: &str) -> Result<LengthField, String> {
        let parts: Vec<&str> = text.split(':').collect();
        let bad = || {
            format!(
                "length field `{text}`: expected offset:width:be|le, e.g. 0:4:be, width 1, 2, 4 or 8"
            )
        };
        let [offset, width, order] = parts[..] else {
            return Err(bad());
        };
        let offset = offset.parse().map_err(|_| bad())?;
        let width = width.parse().map_err(|_| bad())?;
        let big_endian = match order {
            "be" => true,
            "le" => false,
            _ => return Err(bad()),
        };
        if ![1, 2, 4, 8].contains(&width) {
            return Err(bad());
        }
        Ok(LengthField {
            offset,
            width,
            big_endian,
        })
    }

    fn end(&self) -> usize {
        self.offset + self.width
    }

    fn read(&self, buf: &[u8]) -> u64 {
        let bytes = &buf[self.offset..self.end()];
        let mut v = 0u64;
        if self.big_endian {
            for b in bytes {
                v = (v << 8) | u64::from(*b);
            }
        } else {
            for b in bytes.iter().rev() {
                v = (v << 8) | u64::from(*b);
            }
        }
        v
    }
}

/// How a reply's end is found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Framing {
    /// Message size = `constant` + the sum of `fields` (signed, so that a
    /// length counting more than the message, e.g. a header counted twice,
    /// can be expressed).
    Length {
        fields: Vec<LengthField>,
        constant: i64,
    },
    /// motan2: a 13-byte header, then the metadata and the body, each
    /// after its 4-byte big-endian length (the body's length sits after
    /// the metadata, at no fixed offset).
    Motan2,
    Http1,
    /// gRPC over HTTP/2 to `path` (e.g. `/rpclab.Bench/Hello`) with
    /// `authority`; the request is the gRPC message (5-byte prefix and
    /// protobuf).
    H2 {
        path: String,
        authority: String,
    },
}

/// Most bytes a reply may have: the contract's largest is about 1 MiB.
pub const MAX_REPLY: usize = 64 * 1024 * 1024;

impl Framing {
    /// The size of the reply at the start of `buf`, once enough of it has
    /// arrived to tell (`Ok(None)` until then).
    pub fn reply_len(&self, buf: &[u8]) -> Result<Option<usize>, String> {
        match self {
            Framing::Length { fields, constant } => {
                let header = fields.iter().map(LengthField::end).max().unwrap_or(0);
                if buf.len() < header {
                    return Ok(None);
                }
                let sum: i64 = fields.iter().map(|f| f.read(buf) as i64).sum();
                let len = sum + constant;
                if len < header as i64 || len > MAX_REPLY as i64 {
                    return Err(format!(
                        "reply length {len} from the length field(s) is not between the header's {header} bytes and {MAX_REPLY}"
                    ));
                }
                Ok((buf.len() >= len as usize).then_some(len as usize))
            }
            Framing::Motan2 => motan2_reply_len(buf),
            Framing::Http1 => http1_reply_len(buf),
            Framing::H2 { .. } => Err("HTTP/2 replies are frames, not messages".into()),
        }
    }
}

/// The size of the motan2 reply at the start of `buf` (see
/// [`Framing::Motan2`]).
fn motan2_reply_len(buf: &[u8]) -> Result<Option<usize>, String> {
    const HEADER: usize = 13;
    let mut end = HEADER;
    for section in ["metadata", "body"] {
        let Some(len) = buf.get(end..end + 4) else {
            return Ok(None);
        };
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        if len > MAX_REPLY {
            return Err(format!("motan2 {section} of {len} bytes, over {MAX_REPLY}"));
        }
        end += 4 + len;
    }
    Ok((buf.len() >= end).then_some(end))
}

/// The size of the HTTP/1.1 reply at the start of `buf` (head and
/// `Content-Length` body).
fn http1_reply_len(buf: &[u8]) -> Result<Option<usize>, String> {
    let Some(head_end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        if buf.len() > 64 * 1024 {
            return Err("HTTP reply head longer than 64 KiB".into());
        }
        return Ok(None);
    };
    let head = &buf[..head_end];
    let (mut length, mut chunked) = (None, false);
    for line in head.split(|b| *b == b'\n').skip(1) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|b| *b == b':') else {
            continue;
        };
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if name.eq_ignore_ascii_case(b"content-length") {
            length = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.parse::<usize>().ok());
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            chunked = true;
        }
    }
    if chunked {
        return chunked_end(buf, head_end + 4);
    }
    let Some(length) = length.filter(|l| *l <= MAX_REPLY) else {
        return Err("HTTP reply without a usable Content-Length".into());
    };
    let total = head_end + 4 + length;
    Ok((buf.len() >= total).then_some(total))
}

/// Where a chunked body starting at `at` ends (its last chunk and
/// trailers), once all of it has arrived. Chunks are skipped, not joined.
fn chunked_end(buf: &[u8], mut at: usize) -> Result<Option<usize>, String> {
    let line = |from: usize| {
        buf.get(from..)?
            .windows(2)
            .position(|w| w == b"\r\n")
            .map(|i| from + i)
    };
    loop {
        let Some(end) = line(at) else { return Ok(None) };
        let text = &buf[at..end];
        let size = text
            .split(|b| *b == b';')
            .next()
            .unwrap_or_default()
            .trim_ascii();
        let size = std::str::from_utf8(size)
            .ok()
            .and_then(|s| usize::from_str_radix(s, 16).ok())
            .filter(|s| *s <= MAX_REPLY)
            .ok_or_else(|| "bad chunk size in an HTTP reply".to_string())?;
        at = end + 2;
        if size == 0 {
            // Trailers, up to the blank line.
            loop {
                let Some(end) = line(at) else { return Ok(None) };
                let blank = end == at;
                at = end + 2;
                if blank {
                    return Ok(Some(at));
                }
            }
        }
        at += size + 2;
        if buf.len() < at {
            return Ok(None);
        }
    }
}

/// HTTP/2 frame types and flags the floor uses.
/// The floor's HTTP/2: the load client's framing
/// ([`frame`](rpclab_protocols::protocols::grpc::frame)) with the floor's own
/// preface and a header block without `user-agent`.
mod h2 {
    pub use rpclab_protocols::protocols::grpc::frame::{
        put_frame as frame, ACK, DATA, END_HEADERS, END_STREAM, GOAWAY, HEADERS, MAX_WINDOW, PING,
        RST_STREAM, SETTINGS,
    };
    use rpclab_protocols::protocols::grpc::frame::{
        put_literal, put_window_update, DEFAULT_WINDOW, PREFACE, SETTINGS_ENABLE_PUSH,
        SETTINGS_INITIAL_WINDOW_SIZE,
    };

    /// Receive window given back once this much DATA has arrived.
    pub const WINDOW_REFILL: u32 = 1 << 30;

    /// The request's header block: indexed `:method POST` and `:scheme
    /// http`, everything else literal without indexing, so the block never
    /// changes the server's dynamic table and can be sent again unchanged.
    pub fn request_headers(path: &str, authority: &str) -> Vec<u8> {
        let mut b = Vec::new();
        b.push(0x80 | 3); // :method POST
        b.push(0x80 | 6); // :scheme http
        put_literal(&mut b, 4, ":path", path);
        put_literal(&mut b, 1, ":authority", authority);
        put_literal(&mut b, 0, "content-type", "application/grpc");
        put_literal(&mut b, 0, "te", "trailers");
        b
    }

    /// Preface, our SETTINGS (largest stream window) and a connection
    /// WINDOW_UPDATE to the largest window.
    pub fn preface() -> Vec<u8> {
        let mut out = PREFACE.to_vec();
        let mut settings = Vec::new();
        for (id, value) in [
            (SETTINGS_INITIAL_WINDOW_SIZE, MAX_WINDOW),
            (SETTINGS_ENABLE_PUSH, 0),
        ] {
            settings.extend_from_slice(&id.to_be_bytes());
            settings.extend_from_slice(&value.to_be_bytes());
        }
        frame(&mut out, SETTINGS, 0, 0, &settings);
        window_update(&mut out, MAX_WINDOW - DEFAULT_WINDOW);
        out
    }

    /// A connection WINDOW_UPDATE.
    pub fn window_update(out: &mut Vec<u8>, increment: u32) {
        put_window_update(out, 0, increment);
    }
}

/// One request, encoded once, ready to be sent again and again.
#[derive(Debug, Clone)]
pub struct Request {
    bytes: Vec<u8>,
    /// H2: offsets of the two stream-id fields to patch per call.
    stream_id_at: Option<[usize; 2]>,
}

impl Request {
    pub fn new(framing: &Framing, request: &[u8]) -> Request {
        match framing {
            Framing::H2 { path, authority } => {
                let mut bytes = Vec::new();
                h2::frame(
                    &mut bytes,
                    h2::HEADERS,
                    h2::END_HEADERS,
                    1,
                    &h2::request_headers(path, authority),
                );
                let data_at = bytes.len();
                h2::frame(&mut bytes, h2::DATA, h2::END_STREAM, 1, request);
                Request {
                    bytes,
                    stream_id_at: Some([5, data_at + 5]),
                }
            }
            _ => Request {
                bytes: request.to_vec(),
                stream_id_at: None,
            },
        }
    }

    /// The bytes of one call on `stream` (ignored but for HTTP/2).
    fn for_stream(&mut self, stream: u32) -> &[u8] {
        if let Some(at) = self.stream_id_at {
            for o in at {
                self.bytes[o..o + 4].copy_from_slice(&stream.to_be_bytes());
            }
        }
        &self.bytes
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub target: SocketAddr,
    pub connections: usize,
    pub framing: Framing,
    /// The request as given: the whole message, or for HTTP/2 the gRPC
    /// message.
    pub request: Vec<u8>,
    /// Bytes the server sends first on a new connection, skipped (Ice's
    /// 14-byte ValidateConnection).
    pub greeting: usize,
    pub warmup: Duration,
    pub duration: Duration,
    /// Ends the window early after this many calls (tests: a run that does
    /// not depend on the machine's speed).
    pub max_calls: Option<u64>,
}

/// What a run measured over its window.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Outcome {
    pub connections: usize,
    /// Replies completed in the window.
    pub calls: u64,
    pub window_s: f64,
    pub calls_per_s: f64,
    /// The process's CPU time (user + system) over the window, per call.
    pub cpu_us_per_call: f64,
    /// CPU time over wall time over the window.
    pub cpu_cores_busy: f64,
    /// Request and reply bytes of one call (the last one completed).
    pub request_bytes: usize,
    pub reply_bytes: usize,
}

struct Conn {
    stream: TcpStream,
    request: Request,
    out: Vec<u8>,
    written: usize,
    /// Received bytes: `buf[consumed..filled]` is not parsed yet.
    buf: Vec<u8>,
    consumed: usize,
    filled: usize,
    greeting_left: usize,
    /// HTTP/2: the current call's stream id and the DATA received since the
    /// last WINDOW_UPDATE.
    stream_id: u32,
    unacked_data: u32,
    /// Size of the last reply, and of the current one so far (HTTP/2).
    reply_bytes: usize,
    reply_so_far: usize,
}

/// Size of a connection's receive buffer (grown for larger replies).
const READ_CHUNK: usize = 64 * 1024;

impl Conn {
    fn queue_call(&mut self) {
        let stream = self.stream_id;
        let bytes = self.request.for_stream(stream);
        self.out.extend_from_slice(bytes);
    }

    /// Writes what is queued; what the socket does not take now goes out
    /// on the next writable event.
    fn flush(&mut self) -> io::Result<()> {
        while self.written < self.out.len() {
            match self.stream.write(&self.out[self.written..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.out.clear();
        self.written = 0;
        Ok(())
    }

    /// Reads what arrived and returns how many calls completed (each
    /// followed by the next call, queued).
    fn read(&mut self, framing: &Framing) -> io::Result<u64> {
        let mut completed = 0;
        loop {
            if self.consumed == self.filled {
                (self.consumed, self.filled) = (0, 0);
            } else if self.buf.len() - self.filled < READ_CHUNK / 4 {
                // Move the partial message to the front; grow only when it
                // fills most of the buffer (a large reply).
                self.buf.copy_within(self.consumed..self.filled, 0);
                (self.consumed, self.filled) = (0, self.filled - self.consumed);
                if self.buf.len() - self.filled < READ_CHUNK / 4 {
                    let len = self.buf.len();
                    self.buf.resize(len * 2, 0);
                }
            }
            match self.stream.read(&mut self.buf[self.filled..]) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    ))
                }
                Ok(n) => {
                    self.filled += n;
                    completed += self.parse(framing)?;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(completed),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn parse(&mut self, framing: &Framing) -> io::Result<u64> {
        let bad = |e: String| io::Error::new(io::ErrorKind::InvalidData, e);
        let mut completed = 0;
        if self.greeting_left > 0 {
            let skip = self.greeting_left.min(self.filled - self.consumed);
            self.consumed += skip;
            self.greeting_left -= skip;
            if self.greeting_left > 0 {
                return Ok(0);
            }
            self.queue_call();
        }
        if let Framing::H2 { .. } = framing {
            while self.filled - self.consumed >= 9 {
                let f = &self.buf[self.consumed..self.filled];
                let len = (usize::from(f[0]) << 16) | (usize::from(f[1]) << 8) | usize::from(f[2]);
                if f.len() < 9 + len {
                    break;
                }
                let (kind, flags) = (f[3], f[4]);
                let stream = u32::from_be_bytes([f[5], f[6], f[7], f[8]]) & 0x7fff_ffff;
                match kind {
                    h2::SETTINGS if flags & h2::ACK == 0 => {
                        h2::frame(&mut self.out, h2::SETTINGS, h2::ACK, 0, &[]);
                    }
                    h2::PING if flags & h2::ACK == 0 => {
                        let payload = f[9..9 + len].to_vec();
                        h2::frame(&mut self.out, h2::PING, h2::ACK, 0, &payload);
                    }
                    h2::GOAWAY => return Err(bad("the server sent GOAWAY".into())),
                    h2::RST_STREAM if stream == self.stream_id => {
                        return Err(bad(format!("the server reset stream {stream}")))
                    }
                    h2::DATA => {
                        self.unacked_data += len as u32;
                        if self.unacked_data >= h2::WINDOW_REFILL {
                            h2::window_update(&mut self.out, self.unacked_data);
                            self.unacked_data = 0;
                        }
                    }
                    _ => {}
                }
                self.reply_so_far += 9 + len;
                self.consumed += 9 + len;
                if (kind == h2::HEADERS || kind == h2::DATA)
                    && flags & h2::END_STREAM != 0
                    && stream == self.stream_id
                {
                    completed += 1;
                    self.reply_bytes = std::mem::take(&mut self.reply_so_far);
                    self.stream_id += 2;
                    if self.stream_id > 0x7fff_0000 {
                        return Err(bad("stream ids exhausted on one connection".into()));
                    }
                    self.queue_call();
                }
            }
            return Ok(completed);
        }
        while let Some(len) = framing
            .reply_len(&self.buf[self.consumed..self.filled])
            .map_err(bad)?
        {
            self.consumed += len;
            self.reply_bytes = len;
            completed += 1;
            self.queue_call();
        }
        Ok(completed)
    }
}

/// Runs the floor: connects, warms up, measures, returns the window's
/// figures.
pub fn run(config: &Config) -> io::Result<Outcome> {
    let mut poll = Poll::new()?;
    let request = Request::new(&config.framing, &config.request);
    let mut conns = Vec::with_capacity(config.connections);
    for i in 0..config.connections.max(1) {
        let std = std::net::TcpStream::connect(config.target)?;
        std.set_nodelay(true)?;
        std.set_nonblocking(true)?;
        let mut stream = TcpStream::from_std(std);
        poll.registry().register(
            &mut stream,
            Token(i),
            Interest::READABLE | Interest::WRITABLE,
        )?;
        let mut conn = Conn {
            stream,
            request: request.clone(),
            out: Vec::with_capacity(4096),
            written: 0,
            buf: vec![0; READ_CHUNK],
            consumed: 0,
            filled: 0,
            greeting_left: config.greeting,
            stream_id: 1,
            unacked_data: 0,
            reply_bytes: 0,
            reply_so_far: 0,
        };
        if let Framing::H2 { .. } = config.framing {
            conn.out.extend_from_slice(&h2::preface());
        }
        if conn.greeting_left == 0 {
            conn.queue_call();
        }
        conn.flush()?;
        conns.push(conn);
    }

    let mut events = Events::with_capacity(1024);
    let start = Instant::now();
    let window_start = start + config.warmup;
    let end = window_start + config.duration;
    let mut measuring = false;
    let (mut calls, mut cpu_start, mut wall_start) = (0u64, Duration::ZERO, start);
    loop {
        let now = Instant::now();
        if !measuring && now >= window_start {
            measuring = true;
            calls = 0;
            cpu_start = process_cpu_time();
            wall_start = now;
        }
        if now >= end || (measuring && config.max_calls.is_some_and(|m| calls >= m)) {
            break;
        }
        let wait = if measuring {
            end - now
        } else {
            window_start - now
        };
        poll.poll(&mut events, Some(wait.min(Duration::from_millis(100))))?;
        for event in events.iter() {
            let conn = &mut conns[event.token().0];
            if event.is_readable() {
                calls += conn.read(&config.framing)?;
            }
            conn.flush()?;
        }
    }
    let cpu = process_cpu_time().saturating_sub(cpu_start);
    let wall = wall_start.elapsed().as_secs_f64();
    let reply_bytes = conns.iter().map(|c| c.reply_bytes).max().unwrap_or(0);
    Ok(Outcome {
        connections: conns.len(),
        calls,
        window_s: wall,
        calls_per_s: calls as f64 / wall,
        cpu_us_per_call: if calls > 0 {
            cpu.as_secs_f64() * 1e6 / calls as f64
        } else {
            0.0
        },
        cpu_cores_busy: cpu.as_secs_f64() / wall,
        request_bytes: request.bytes.len(),
        reply_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_fields_parse_and_read_both_byte_orders() {
        let be = LengthField::parse("2:4:be").unwrap();
        let le = LengthField::parse("0:2:le").unwrap();
        assert_eq!(be.read(&[9, 9, 0, 0, 1, 2]), 258);
        assert_eq!(le.read(&[2, 1]), 258);
        for bad in ["4:be", "0:3:be", "0:4:xx", "a:4:be", "0:4:be:1"] {
            assert!(LengthField::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_length_framed_reply_ends_where_its_fields_say() {
        // Thrift framed: 4-byte length excluding itself.
        let thrift = Framing::Length {
            fields: vec![LengthField::parse("0:4:be").unwrap()],
            constant: 4,
        };
        assert_eq!(thrift.reply_len(&[0, 0]).unwrap(), None);
        assert_eq!(thrift.reply_len(&[0, 0, 0, 2, 7]).unwrap(), None);
        assert_eq!(thrift.reply_len(&[0, 0, 0, 2, 7, 7, 1]).unwrap(), Some(6));
        // Two fields summed plus a header (bolt-like).
        let two = Framing::Length {
            fields: vec![
                LengthField::parse("0:1:be").unwrap(),
                LengthField::parse("1:2:le").unwrap(),
            ],
            constant: 3,
        };
        assert_eq!(two.reply_len(&[1, 2, 0, 0, 0, 0]).unwrap(), Some(6));
        // A length shorter than the header is corrupt, not a short message.
        let dubbo = Framing::Length {
            fields: vec![LengthField::parse("12:4:be").unwrap()],
            constant: -100,
        };
        assert!(dubbo.reply_len(&[0; 16]).is_err());
    }

    #[test]
    fn a_motan2_reply_ends_after_its_metadata_and_body() {
        let mut reply = vec![0xf1, 0xf1, 0, 8, 0x10, 0, 0, 0, 0, 0, 0, 0, 7];
        reply.extend(3u32.to_be_bytes());
        reply.extend(b"m=1");
        reply.extend(2u32.to_be_bytes());
        reply.extend(b"ok");
        let whole = reply.len();
        reply.extend(b"next");
        for cut in 0..whole {
            assert_eq!(
                Framing::Motan2.reply_len(&reply[..cut]).unwrap(),
                None,
                "{cut}"
            );
        }
        assert_eq!(Framing::Motan2.reply_len(&reply).unwrap(), Some(whole));
        let mut huge = reply[..17].to_vec();
        huge[13..17].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(Framing::Motan2.reply_len(&huge).is_err());
    }

    #[test]
    fn an_http1_reply_ends_after_its_content_length() {
        let reply = b"HTTP/1.1 200 OK\r\nContent-Type: x\r\ncontent-length: 3\r\n\r\nabcHTTP";
        assert_eq!(Framing::Http1.reply_len(&reply[..20]).unwrap(), None);
        assert_eq!(Framing::Http1.reply_len(&reply[..57]).unwrap(), None);
        assert_eq!(Framing::Http1.reply_len(reply).unwrap(), Some(58));
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\nHTTP";
        let end = chunked.len() - 4;
        for cut in [48, 55, 60, 66, end - 1] {
            assert_eq!(
                Framing::Http1.reply_len(&chunked[..cut]).unwrap(),
                None,
                "{cut}"
            );
        }
        assert_eq!(Framing::Http1.reply_len(chunked).unwrap(), Some(end));
        let bad = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
        assert!(Framing::Http1.reply_len(bad).is_err());
        assert!(Framing::Http1
            .reply_len(b"HTTP/1.1 200 OK\r\n\r\n")
            .is_err());
    }

    #[test]
    fn h2_requests_patch_both_stream_ids() {
        let framing = Framing::H2 {
            path: "/rpclab.Bench/Hello".into(),
            authority: "127.0.0.1:1".into(),
        };
        let mut request = Request::new(&framing, b"\0\0\0\0\x04\x0a\x02aa");
        let bytes = request.for_stream(7).to_vec();
        let headers_len = (usize::from(bytes[1]) << 8) | usize::from(bytes[2]);
        let data = &bytes[9 + headers_len..];
        assert_eq!(&bytes[5..9], &7u32.to_be_bytes());
        assert_eq!((data[3], data[4]), (h2::DATA, h2::END_STREAM));
        assert_eq!(&data[5..9], &7u32.to_be_bytes());
        assert_eq!(&data[9..], b"\0\0\0\0\x04\x0a\x02aa");
    }
}
