//! Streaming gRPC methods (server, client and bidirectional streams) as
//! generic calls: one call is one stream, from its opening to its end,
//! with ghz's stream flags.
//!
//! # ghz's flags
//!
//! | option (flag) | meaning |
//! | --- | --- |
//! | `stream_call_count` (`--stream-call-count N`) | client and bidi streams send N messages, then end their side; a server stream is ended by the client once it has received N |
//! | `stream_call_duration` (`--stream-call-duration 500ms`) | client and bidi streams send until it has passed, then end their side; a server stream is ended by the client once it has passed |
//! | `stream_interval` (`--stream-interval 10ms`) | client and bidi streams wait this long between two messages sent |
//! | `stream_dynamic_messages` (`--stream-dynamic-messages`) | each message sent takes the next `{{.RequestNumber}}`, not its stream's |
//!
//! # Metadata, template values, data arrays
//!
//! They follow a unary call's one rule, by number ([`Peer`]): a stream's
//! metadata is the set of its first number, rendered with that number's
//! values and sent once in the stream's head, since HTTP/2 sends a
//! request's headers once. Its messages share those values (ghz renders a
//! stream's data once), so its `{{.UUID}}` and draws are the same in
//! every message and in the headers; with `--stream-dynamic-messages` each
//! message takes its own number and values, and so the data array's next
//! element. ghz instead sends every element of a data array once on a
//! client stream; here that takes `--stream-dynamic-messages` and a count,
//! and the numbers are shared with the other streams, so nothing is
//! refused but the order differs.
//!
//! Without a count or a duration, a client or bidi stream sends one
//! message (the `--data`, as ghz sends each element of its data once) and
//! a server stream is read to its end. A stream the client ends after its
//! count or duration is a call that succeeded (ghz counts it as cancelled):
//! the client asked for that end. A stream flag on a unary method is
//! refused before any load.
//!
//! # The wire
//!
//! Streams run on [`h2`]'s client, one HTTP/2 connection per
//! [`StreamLink`] (the contract's own HTTP/2 client, [`crate::protocols::grpc`],
//! carries a unary call's one request and one reply only). Plaintext or
//! TLS as the unary calls ([`crate::tls::Transport`]), wire bytes counted
//! the same way. Each stream is one future on the caller's task, its
//! sending and receiving interleaved by one `select!` (no task, no lock of
//! ours, no channel per stream). Sending waits for the server's flow
//! control window, so that a stream that sends for a duration never
//! queues more than the server takes.
//!
//! # Per message
//!
//! Every message received is decoded as the method's output type and,
//! with `--expect`, compared ([`super::GrpcGenericConnection::verify`]):
//! the reply to a message sent with number n is expected with n (a
//! bidi stream's k-th reply answers its k-th message; a client stream's
//! one reply, its last; a server stream's every message, its one
//! request). Each is timed from the later of the stream's last message
//! sent and last message received ([`crate::protocol::Messages`]). A
//! stream's messages are gathered in one buffer per stream; a message that
//! lies whole in a DATA frame is not copied.

use crate::protocol::{CallError, Messages, WireCounter};
use crate::protocols::grpc::reply::PREFIX;
use crate::protocols::grpc::{frame, MAX_MESSAGE_SIZE, USER_AGENT};
use crate::template::CallValues;
use crate::tls::Transport;
use bytes::{Buf, Bytes, BytesMut};
use h2::client::SendRequest;
use rpclab_model::result::StreamSetting;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Which side streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    /// One request, many replies.
    Server,
    /// Many requests, one reply.
    Client,
    /// Many of both.
    Bidi,
}

impl StreamKind {
    /// The kind of a method that streams on the client side, the server
    /// side or both; `None` for a unary method.
    pub fn of(client: bool, server: bool) -> Option<StreamKind> {
        match (client, server) {
            (false, false) => None,
            (false, true) => Some(StreamKind::Server),
            (true, false) => Some(StreamKind::Client),
            (true, true) => Some(StreamKind::Bidi),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            StreamKind::Server => "server",
            StreamKind::Client => "client",
            StreamKind::Bidi => "bidi",
        }
    }

    /// Whether the client sends more than one message.
    fn client_sends(self) -> bool {
        self != StreamKind::Server
    }
}

/// The stream options of this protocol, ghz's flags.
pub const OPTIONS: &[(&str, &str)] = &[
    ("stream_call_count", "--stream-call-count"),
    ("stream_call_duration", "--stream-call-duration"),
    ("stream_interval", "--stream-interval"),
    ("stream_dynamic_messages", "--stream-dynamic-messages"),
];

/// ghz's stream flags, read from the options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamFlags {
    pub call_count: Option<u64>,
    pub call_duration: Option<Duration>,
    pub interval: Option<Duration>,
    pub dynamic_messages: bool,
}

impl StreamFlags {
    /// The flags among `options`; a value that does not parse is an error
    /// naming its flag.
    pub fn from_options(options: &BTreeMap<String, String>) -> Result<StreamFlags, String> {
        let mut flags = StreamFlags::default();
        if let Some(text) = options.get("stream_call_count") {
            flags.call_count = Some(
                text.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| {
                        format!("--stream-call-count `{text}` is not a positive number of messages")
                    })?,
            );
        }
        for (key, flag, slot) in [
            (
                "stream_call_duration",
                "--stream-call-duration",
                &mut flags.call_duration,
            ),
            ("stream_interval", "--stream-interval", &mut flags.interval),
        ] {
            if let Some(text) = options.get(key) {
                let duration = parse_duration(text).ok_or_else(|| {
                    format!(
                        "{flag} `{text}` is not a duration (ghz's form: 500ms, 1s, 1m30s, 250us)"
                    )
                })?;
                *slot = Some(duration);
            }
        }
        if let Some(text) = options.get("stream_dynamic_messages") {
            flags.dynamic_messages = match text.trim() {
                "" | "true" | "1" => true,
                "false" | "0" => false,
                other => {
                    return Err(format!(
                        "--stream-dynamic-messages `{other}` is true or false"
                    ))
                }
            };
        }
        Ok(flags)
    }

    /// The flags given, by their ghz names (for the refusal of a unary
    /// method).
    pub fn given(options: &BTreeMap<String, String>) -> Vec<&'static str> {
        OPTIONS
            .iter()
            .filter(|(key, _)| options.contains_key(*key))
            .map(|(_, flag)| *flag)
            .collect()
    }

    /// What the report records of a stream's making.
    pub fn setting(&self, kind: StreamKind) -> StreamSetting {
        StreamSetting {
            kind: kind.name().to_owned(),
            call_count: self.call_count,
            call_duration_us: self.call_duration.map(|d| d.as_micros() as u64),
            interval_us: self.interval.map(|d| d.as_micros() as u64),
            dynamic_messages: self.dynamic_messages,
        }
    }
}

/// A duration as Go writes it (ghz's flags): `500ms`, `1.5s`, `1m30s`
/// ([`rpclab_model::duration::go_form`]).
pub fn parse_duration(text: &str) -> Option<Duration> {
    rpclab_model::duration::go_form(text).map(Duration::from_secs_f64)
}

/// One HTTP/2 connection for streams ([`h2`]'s client), its connection
/// task spawned.
#[derive(Debug)]
pub struct StreamLink {
    requests: SendRequest<Bytes>,
    /// `http(s)://target/package.Service/Method`, parsed once.
    uri: http::Uri,
}

impl StreamLink {
    /// Opens the connection to `target` for the method at `path`.
    pub async fn open(
        target: &str,
        path: &str,
        counter: &WireCounter,
        transport: &Transport,
    ) -> Result<StreamLink, CallError> {
        let io = transport.open(target, counter).await?;
        let (requests, connection) = h2::client::Builder::new()
            // As the contract's client: a reply is never held back per
            // stream.
            .initial_window_size(frame::MAX_WINDOW)
            .initial_connection_window_size(frame::CONNECTION_WINDOW)
            .handshake(io)
            .await
            .map_err(|e| {
                CallError::Connect(format!("{target}: the HTTP/2 handshake failed: {e}"))
            })?;
        tokio::spawn(async move {
            // Its end (the server's, or the link dropped) fails the
            // streams on it, which say why.
            let _ = connection.await;
        });
        let uri = format!("{}://{target}{path}", transport.scheme())
            .parse()
            .map_err(|e| CallError::Config(format!("{target}{path} is no URI: {e}")))?;
        Ok(StreamLink { requests, uri })
    }

    /// A request head for one stream, with its metadata (`-m`'s pairs,
    /// already checked as gRPC keys and printable values).
    fn head(&self, metadata: &[(String, String)]) -> Result<http::Request<()>, CallError> {
        let mut request = http::Request::new(());
        *request.method_mut() = http::Method::POST;
        *request.uri_mut() = self.uri.clone();
        let headers = request.headers_mut();
        headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/grpc"),
        );
        headers.insert(http::header::TE, http::HeaderValue::from_static("trailers"));
        headers.insert(
            http::header::USER_AGENT,
            http::HeaderValue::from_static(USER_AGENT),
        );
        for (key, value) in metadata {
            let name = http::HeaderName::from_bytes(key.as_bytes())
                .map_err(|e| CallError::Config(format!("metadata key `{key}`: {e}")))?;
            let value = http::HeaderValue::from_str(value)
                .map_err(|e| CallError::Config(format!("metadata `{key}`'s value: {e}")))?;
            headers.append(name, value);
        }
        Ok(request)
    }
}

/// What a stream needs of its connection: its metadata and messages to
/// send, and the check of each message received.
pub trait Peer {
    /// The template values of message number `n` (a stream's first number
    /// is its own, its metadata's and, without `--stream-dynamic-messages`,
    /// every message's: ghz renders a stream's data once).
    fn values(&self, n: u64) -> CallValues;
    /// The length-prefixed body of the message with values `call`.
    fn body(&self, call: &CallValues) -> Bytes;
    /// The metadata of the stream whose first values are `call`, rendered:
    /// headers are sent once, when the stream opens.
    fn metadata(&self, call: &CallValues) -> Vec<(String, String)>;
    /// Checks message `message` (no prefix), the reply to the message sent
    /// with number `n`.
    fn verify(&self, n: u64, message: &Bytes) -> Result<(), CallError>;
    /// The next `{{.RequestNumber}}`.
    fn next_number(&self) -> u64;
}

/// The numbers of the messages sent and not yet answered, in order: what
/// a bidi stream's replies are expected with. One number for every
/// message unless `--stream-dynamic-messages`; then a queue, kept in the
/// stream's future.
#[derive(Debug)]
enum Numbers {
    Same(u64),
    Each(std::collections::VecDeque<u64>, u64),
}

impl Numbers {
    fn sent(&mut self, n: u64) {
        if let Numbers::Each(queue, last) = self {
            queue.push_back(n);
            *last = n;
        }
    }

    /// The number the next reply answers: the oldest unanswered message's
    /// (a bidi stream), or the last one sent (a client stream's one reply,
    /// or a reply beyond the messages sent).
    fn answered(&mut self, kind: StreamKind) -> u64 {
        match self {
            Numbers::Same(n) => *n,
            Numbers::Each(queue, last) if kind == StreamKind::Bidi => {
                queue.pop_front().unwrap_or(*last)
            }
            Numbers::Each(_, last) => *last,
        }
    }
}

/// One stream, from its opening to its end; its messages recorded in
/// `book` (see the module documentation).
pub async fn stream_call<P: Peer>(
    link: &StreamLink,
    peer: &P,
    kind: StreamKind,
    flags: &StreamFlags,
    book: &mut Messages,
) -> Result<(), CallError> {
    let first = peer.next_number();
    let first_values = peer.values(first);
    let mut numbers = if flags.dynamic_messages && kind.client_sends() {
        Numbers::Each(std::collections::VecDeque::new(), first)
    } else {
        Numbers::Same(first)
    };
    let mut requests = link
        .requests
        .clone()
        .ready()
        .await
        .map_err(|e| h2_error("the connection cannot take a stream", e))?;
    let (response, mut out) = requests
        .send_request(link.head(&peer.metadata(&first_values))?, false)
        .map_err(|e| h2_error("opening a stream", e))?;
    let opened = Instant::now();
    let mut last_event = opened;
    let mut deadline = flags
        .call_duration
        .map(|d| tokio::time::Instant::from_std(opened + d));
    // What is left to send: a server stream's one request, else the count,
    // unbounded with a duration alone, else one message.
    let mut left: Option<u64> = match (kind.client_sends(), flags.call_count, flags.call_duration) {
        (false, _, _) => Some(1),
        (true, Some(n), _) => Some(n),
        (true, None, Some(_)) => None,
        (true, None, None) => Some(1),
    };
    let mut sent_any = false;
    // The next message to send, once due, and when it is due.
    let mut next: Option<Bytes> = None;
    let mut due = tokio::time::Instant::now();
    let mut sending = true;
    let mut received: u64 = 0;
    let mut body: Option<h2::RecvStream> = None;
    let mut response = std::pin::pin!(response);
    let mut gathered = BytesMut::new();
    // The messages a server stream is ended after.
    let limit = flags.call_count.filter(|_| kind == StreamKind::Server);
    loop {
        if sending && next.is_none() {
            if left == Some(0) {
                // Every message sent: end the client's side.
                out.send_data(Bytes::new(), true)
                    .map_err(|e| h2_error("ending the requests", e))?;
                sending = false;
            } else {
                let (n, message) = if flags.dynamic_messages && sent_any && kind.client_sends() {
                    let n = peer.next_number();
                    (n, peer.body(&peer.values(n)))
                } else {
                    (first, peer.body(&first_values))
                };
                out.reserve_capacity(message.len());
                numbers.sent(n);
                next = Some(message);
                if sent_any {
                    due += flags.interval.unwrap_or_default();
                }
            }
        }
        // Send what is due and fits the server's window, without waiting.
        if let Some(message) =
            next.take_if(|m| tokio::time::Instant::now() >= due && out.capacity() >= m.len())
        {
            let end = kind == StreamKind::Server;
            out.send_data(message, end)
                .map_err(|e| h2_error("sending a message", e))?;
            book.sent += 1;
            sent_any = true;
            last_event = Instant::now();
            left = left.map(|n| n - 1);
            if end {
                sending = false;
            }
            continue;
        }
        let waiting_time = next.is_some() && tokio::time::Instant::now() < due;
        let waiting_room = next.is_some() && !waiting_time;
        tokio::select! {
            biased;
            head = &mut response, if body.is_none() => {
                let head = head.map_err(|e| h2_error("the reply's head", e))?;
                if check_head(&head)? {
                    // Trailers-Only, status 0: a stream with no reply.
                    return no_reply(kind);
                }
                body = Some(head.into_body());
            }
            chunk = data(&mut body), if body.is_some() => match chunk {
                Some(Ok(chunk)) => {
                    let _ = body.as_mut().expect("polled").flow_control().release_capacity(chunk.len());
                    each_message(&mut gathered, chunk, |message| {
                        // A server stream's messages beyond the count, in
                        // the same frame as the last counted, are not read.
                        if limit.is_some_and(|n| received >= n) {
                            return Ok(());
                        }
                        let now = Instant::now();
                        peer.verify(numbers.answered(kind), &message)?;
                        book.received.push(now.saturating_duration_since(last_event));
                        last_event = now;
                        received += 1;
                        Ok(())
                    })?;
                    if limit.is_some_and(|n| received >= n) {
                        out.send_reset(h2::Reason::CANCEL);
                        return Ok(());
                    }
                }
                Some(Err(e)) => return Err(h2_error("reading the replies", e)),
                None => {
                    if !gathered.is_empty() {
                        return Err(CallError::Protocol(format!(
                            "the stream ended inside a message ({} bytes of it)",
                            gathered.len()
                        )));
                    }
                    let trailers = body
                        .as_mut()
                        .expect("polled")
                        .trailers()
                        .await
                        .map_err(|e| h2_error("the reply's trailers", e))?;
                    status(trailers.as_ref())?;
                    return match (kind, received) {
                        (_, 0) => no_reply(kind),
                        (StreamKind::Client, 1) => Ok(()),
                        (StreamKind::Client, _) => Err(CallError::Protocol(format!(
                            "a client stream answered with {received} messages, not one"
                        ))),
                        _ => Ok(()),
                    };
                }
            },
            _ = until(deadline), if deadline.is_some() => {
                if kind == StreamKind::Server {
                    out.send_reset(h2::Reason::CANCEL);
                    return Ok(());
                }
                // The duration is over: a message not yet sent is not, the
                // client's side ends, and the stream's end is the
                // server's from now on.
                deadline = None;
                if sending {
                    next = None;
                    left = Some(0);
                }
            }
            _ = tokio::time::sleep_until(due), if waiting_time => {}
            room = std::future::poll_fn(|cx| out.poll_capacity(cx)), if waiting_room => match room {
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(h2_error("waiting for the server's window", e)),
                None => return Err(CallError::Protocol("the server closed the stream before the requests' end".into())),
            },
        }
    }
}

/// The next chunk of the reply's body.
async fn data(body: &mut Option<h2::RecvStream>) -> Option<Result<Bytes, h2::Error>> {
    match body {
        Some(body) => body.data().await,
        None => std::future::pending().await,
    }
}

/// Completes at `deadline` (never without one).
async fn until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// A stream that ended well without a message: a client stream owes one
/// reply; a server or bidi stream may have nothing to say.
fn no_reply(kind: StreamKind) -> Result<(), CallError> {
    match kind {
        StreamKind::Client => Err(CallError::Protocol(
            "a client stream ended with grpc-status 0 and no reply".into(),
        )),
        _ => Ok(()),
    }
}

/// The reply's head: status 200, `application/grpc`; true if it ends the
/// stream with `grpc-status` 0 (Trailers-Only), an error if with another.
fn check_head(head: &http::Response<h2::RecvStream>) -> Result<bool, CallError> {
    if head.status() != http::StatusCode::OK {
        return Err(CallError::Protocol(format!(
            "HTTP status {}",
            head.status()
        )));
    }
    if head.headers().contains_key("grpc-status") {
        status(Some(head.headers()))?;
        return Ok(true);
    }
    let content_type = head.headers().get(http::header::CONTENT_TYPE);
    if !content_type.is_some_and(|v| v.as_bytes().starts_with(b"application/grpc")) {
        return Err(CallError::Protocol(format!(
            "reply content-type {content_type:?}, not application/grpc"
        )));
    }
    Ok(false)
}

/// `grpc-status` 0, or the server's status as an error.
fn status(trailers: Option<&http::HeaderMap>) -> Result<(), CallError> {
    let Some(trailers) = trailers else {
        return Err(CallError::Protocol(
            "a stream without trailers (no grpc-status)".into(),
        ));
    };
    crate::protocols::grpc::reply::grpc_status_of(
        trailers.get("grpc-status").map(|v| v.as_bytes()),
        trailers.get("grpc-message").map(|v| v.as_bytes()),
    )
}

/// Hands each whole message of `gathered` and `chunk` (without its
/// prefix) to `each`, and keeps what is left of an incomplete one in
/// `gathered`. A message that lies whole in `chunk` is a slice of it, not
/// a copy; only a message cut by a frame's end is gathered.
fn each_message(
    gathered: &mut BytesMut,
    mut chunk: Bytes,
    mut each: impl FnMut(Bytes) -> Result<(), CallError>,
) -> Result<(), CallError> {
    // First the message an earlier chunk began.
    while !gathered.is_empty() && !chunk.is_empty() {
        let want = framed_len(gathered)?.unwrap_or(PREFIX);
        let take = want.saturating_sub(gathered.len()).min(chunk.len());
        gathered.extend_from_slice(&chunk.split_to(take));
        if framed_len(gathered)? == Some(gathered.len()) {
            each(unprefix(gathered.split().freeze())?)?;
        }
    }
    while !chunk.is_empty() {
        match framed_len(&chunk)? {
            Some(len) if chunk.len() >= len => each(unprefix(chunk.split_to(len))?)?,
            _ => {
                gathered.extend_from_slice(&chunk);
                break;
            }
        }
    }
    Ok(())
}

/// The whole length (prefix included) of the message `bytes` begins with,
/// once its prefix is complete; a message larger than gRPC's limit is
/// refused before it is gathered.
fn framed_len(bytes: &[u8]) -> Result<Option<usize>, CallError> {
    let Some(len) = bytes.get(1..PREFIX) else {
        return Ok(None);
    };
    let len = u32::from_be_bytes(len.try_into().expect("4 bytes")) as usize;
    if len > MAX_MESSAGE_SIZE {
        return Err(CallError::Protocol(format!(
            "a reply message of {len} bytes, more than {MAX_MESSAGE_SIZE}"
        )));
    }
    Ok(Some(PREFIX + len))
}

/// A whole message without its prefix, checked not to be compressed.
fn unprefix(mut message: Bytes) -> Result<Bytes, CallError> {
    if message[0] != 0 {
        return Err(CallError::Protocol(format!(
            "a reply message with compressed flag {}, but no compression was asked for",
            message[0]
        )));
    }
    message.advance(PREFIX);
    Ok(message)
}

/// An h2 failure as the call's error: the server's reset or GOAWAY is the
/// server's; anything else the connection's.
fn h2_error(doing: &str, e: h2::Error) -> CallError {
    if let Some(reason) = e.reason() {
        if e.is_remote() {
            return CallError::Server(format!("{doing}: the server reset the stream ({reason})"));
        }
    }
    if e.is_io() {
        return CallError::Io(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            format!("{doing}: {e}"),
        ));
    }
    CallError::Protocol(format!("{doing}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefixed(message: &[u8]) -> Vec<u8> {
        let mut out = vec![0];
        out.extend_from_slice(&(message.len() as u32).to_be_bytes());
        out.extend_from_slice(message);
        out
    }

    #[test]
    fn go_durations_as_ghz_takes_them() {
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250us"), Some(Duration::from_micros(250)));
        for bad in ["", "10", "5 s", "1d", "0s", "-1s"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn flags_are_read_and_a_bad_value_names_its_flag() {
        let options = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let flags = StreamFlags::from_options(&options(&[
            ("stream_call_count", "5"),
            ("stream_interval", "10ms"),
            ("stream_dynamic_messages", "true"),
        ]))
        .unwrap();
        assert_eq!(flags.call_count, Some(5));
        assert_eq!(flags.interval, Some(Duration::from_millis(10)));
        assert!(flags.dynamic_messages);
        assert_eq!(
            StreamFlags::from_options(&options(&[("stream_call_count", "0")])).unwrap_err(),
            "--stream-call-count `0` is not a positive number of messages"
        );
        assert!(
            StreamFlags::from_options(&options(&[("stream_call_duration", "soon")]))
                .unwrap_err()
                .starts_with("--stream-call-duration `soon` is not a duration")
        );
        assert_eq!(
            StreamFlags::given(&options(&[("stream_interval", "1s"), ("call", "a.B/C")])),
            vec!["--stream-interval"]
        );
    }

    #[test]
    fn messages_are_cut_out_of_chunks_however_the_frames_split_them() {
        let mut wire = Vec::new();
        let sent: Vec<Vec<u8>> = vec![b"one".to_vec(), Vec::new(), vec![7; 300], b"four".to_vec()];
        for m in &sent {
            wire.extend(prefixed(m));
        }
        for cut in [1, 2, 3, 5, 7, 64, wire.len()] {
            let mut gathered = BytesMut::new();
            let mut got = Vec::new();
            for chunk in wire.chunks(cut) {
                each_message(&mut gathered, Bytes::copy_from_slice(chunk), |m| {
                    got.push(m);
                    Ok(())
                })
                .unwrap();
            }
            assert!(gathered.is_empty(), "cut {cut}");
            assert_eq!(
                got,
                sent.iter()
                    .map(|m| Bytes::copy_from_slice(m))
                    .collect::<Vec<_>>(),
                "cut {cut}"
            );
        }
        let mut compressed = prefixed(b"x");
        compressed[0] = 1;
        assert!(each_message(&mut BytesMut::new(), Bytes::from(compressed), |_| Ok(())).is_err());
        let mut huge = vec![0];
        huge.extend_from_slice(&u32::MAX.to_be_bytes());
        assert!(each_message(&mut BytesMut::new(), Bytes::from(huge), |_| Ok(())).is_err());
    }

    #[test]
    fn a_bidi_reply_is_expected_with_its_request_s_number() {
        let mut numbers = Numbers::Each(Default::default(), 0);
        numbers.sent(4);
        numbers.sent(9);
        assert_eq!(numbers.answered(StreamKind::Bidi), 4);
        assert_eq!(numbers.answered(StreamKind::Bidi), 9);
        assert_eq!(numbers.answered(StreamKind::Bidi), 9);
        let mut client = Numbers::Each(Default::default(), 0);
        client.sent(3);
        client.sent(5);
        assert_eq!(client.answered(StreamKind::Client), 5);
        assert_eq!(Numbers::Same(2).answered(StreamKind::Bidi), 2);
    }
}
