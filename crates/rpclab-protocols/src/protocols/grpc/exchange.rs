//! A gRPC call as a sans-IO exchange for the poll engine: one unary call
//! at a time on a plaintext HTTP/2 connection of its own, the request
//! prepared once and written with the next stream id, the reply's frames
//! read where they lie and verified as the reader task verifies them
//! (`reader.rs`, the checks of `reply.rs`).
//!
//! What the tasks engine needs three tasks for (a caller, the channel's
//! writer, the connection's reader) and a queue, a oneshot, a lock and a
//! stream map between them, is here a `write` and a `read` per call: the
//! connection's own frames (the server's SETTINGS and PINGs to
//! acknowledge, a connection window to give back, a stream to reset)
//! are written in front of the next request, which in a closed loop with
//! one call in flight follows every reply at once.
//!
//! **Verified as on tasks**: `:status` 200, a gRPC content type, exactly
//! one uncompressed length-prefixed message in the DATA, `grpc-status` 0
//! in the trailers (a Trailers-Only reply is the server's status), and the
//! message compared with the reference reply or decoded in full and
//! compared with the expected value. Every header block is decoded, so the
//! HPACK table follows the server's. A reply that breaks HTTP/2 (a
//! malformed frame, an undecodable block, DATA on stream 0, a push) is an
//! `Err` of [`Exchange::reply`] and the connection is replaced; a reply
//! that ends its stream wrongly (another status, no trailers, a status ≠ 0,
//! a wrong message) fails the call and keeps the connection, its stream
//! reset (RST_STREAM with CANCEL, in front of the next request) if the
//! server may still send on it. A stream reset by the server fails the
//! call; a GOAWAY lets the call in flight finish if the server says it
//! will, and the next call opens a new connection
//! ([`Exchange::wants_new_connection`]).
//!
//! **Flow control**: a request goes out whole, in one DATA frame, so only a
//! request that fits the smallest frame and window a server may set runs
//! here (`Grpc::exchange_to`); the connection's send window is kept from the
//! server's WINDOW_UPDATEs, and a request that finds it spent fails (a
//! server that never gives the window back). The receive windows are the
//! reader's: the largest stream window, the connection's given back every
//! [`frame::WINDOW_REFILL`] bytes of DATA.

use super::frame::{self, Head, HEAD_LEN};
use super::reply;
use crate::exchange::{Exchange, Parsed};
use crate::protocol::CallError;
use crate::reference::Reply;
use loona_hpack::Decoder;
use rpclab_model::contract::{Call, Value};
use std::ops::Range;

/// A prepared unary call as the exchange sends and verifies it (the
/// protocol's `Prepared`, encoded once).
pub(super) trait UnaryRequest: Send + 'static {
    /// The request's HPACK header block.
    fn header_block(&self) -> &[u8];
    /// The DATA payload: the length-prefixed request message.
    fn body(&self) -> &[u8];
    /// The reply message, like the reference reply or decoded in full.
    fn reply_of(&self, message: &[u8], expected: &Value) -> Result<Reply, CallError>;
}

/// One connection's unary calls of one prepared request, one at a time.
pub(super) struct UnaryExchange<P> {
    call: Call,
    prepared: P,
    target: String,
    /// The next request starts a connection: its preface first.
    fresh: bool,
    /// Frames to write in front of the next request (acknowledgements, a
    /// window given back, a reset).
    pending: Vec<u8>,
    decoder: Decoder<'static>,
    next_id: u32,
    /// The connection's send window, and a new stream's.
    window: i64,
    initial_window: i64,
    /// The server sent GOAWAY, or the stream ids ran out: the next call
    /// opens a new connection.
    retire: bool,
    /// DATA received since the connection's window was last given back.
    unacked: u64,
    /// The call in flight and what arrived of its reply.
    stream: u32,
    head: bool,
    data: Data,
    /// Bytes of the input already handled (whole frames), for the next
    /// look at the same input.
    scanned: usize,
    /// A header block under way (HEADERS then CONTINUATION).
    block: Vec<u8>,
    block_stream: u32,
    block_end_stream: bool,
}

/// A reply's DATA so far: the payload of its one DATA frame where it lies
/// in the input (a range of it), or the payloads of several, copied.
#[derive(Debug, Default)]
enum Data {
    #[default]
    None,
    At(Range<usize>),
    Copied(Vec<u8>),
}

impl Data {
    fn len(&self) -> usize {
        match self {
            Data::None => 0,
            Data::At(r) => r.len(),
            Data::Copied(v) => v.len(),
        }
    }

    fn push(&mut self, input: &[u8], range: Range<usize>) {
        *self = match std::mem::take(self) {
            Data::None => Data::At(range),
            Data::At(first) => {
                let mut v = Vec::with_capacity(first.len() + range.len());
                v.extend_from_slice(&input[first]);
                v.extend_from_slice(&input[range]);
                Data::Copied(v)
            }
            Data::Copied(mut v) => {
                v.extend_from_slice(&input[range]);
                Data::Copied(v)
            }
        };
    }

    fn bytes<'a>(&'a self, input: &'a [u8]) -> &'a [u8] {
        match self {
            Data::None => &[],
            Data::At(r) => &input[r.clone()],
            Data::Copied(v) => v,
        }
    }
}

/// What one frame did to the call in flight.
enum Step {
    Next,
    Done(Result<Reply, CallError>),
}

impl<P: UnaryRequest> UnaryExchange<P> {
    pub(super) fn new(call: &Call, prepared: P, target: &str) -> UnaryExchange<P> {
        UnaryExchange {
            call: call.clone(),
            prepared,
            target: target.to_owned(),
            fresh: true,
            pending: Vec::new(),
            decoder: new_decoder(),
            next_id: 1,
            window: i64::from(frame::DEFAULT_WINDOW),
            initial_window: i64::from(frame::DEFAULT_WINDOW),
            retire: false,
            unacked: 0,
            stream: 0,
            head: false,
            data: Data::None,
            scanned: 0,
            block: Vec::new(),
            block_stream: 0,
            block_end_stream: false,
        }
    }

    /// The state of a new connection.
    fn restart(&mut self) {
        self.fresh = false;
        self.pending.clear();
        self.decoder = new_decoder();
        self.next_id = 1;
        self.window = i64::from(frame::DEFAULT_WINDOW);
        self.initial_window = i64::from(frame::DEFAULT_WINDOW);
        self.retire = false;
        self.unacked = 0;
        self.scanned = 0;
        self.block.clear();
        self.block_stream = 0;
    }

    fn broken(&self, why: impl std::fmt::Display) -> CallError {
        CallError::Protocol(format!("{}: HTTP/2: {why}", self.target))
    }

    /// The call fails on a stream the server may still send on: it is
    /// reset in front of the next request.
    fn fail_reset(&mut self, e: CallError) -> Step {
        frame::put_rst_stream(&mut self.pending, self.stream, frame::CANCEL);
        Step::Done(Err(e))
    }

    fn fail(&mut self, why: &str, reset: bool) -> Step {
        let e = CallError::Protocol(format!("{}: {why}", self.target));
        if reset {
            self.fail_reset(e)
        } else {
            Step::Done(Err(e))
        }
    }

    /// Handles one whole frame at `input[at..at + HEAD_LEN + head.len]`.
    fn frame(&mut self, input: &[u8], at: usize, head: Head) -> Result<Step, CallError> {
        let start = at + HEAD_LEN;
        let payload = &input[start..start + head.len];
        if self.block_stream != 0 && head.kind != frame::CONTINUATION {
            return Err(self.broken(format_args!(
                "frame type {} inside a header block",
                head.kind
            )));
        }
        match head.kind {
            frame::DATA => {
                if head.stream == 0 {
                    return Err(self.broken("DATA on stream 0"));
                }
                self.unacked += head.len as u64;
                if self.unacked >= frame::WINDOW_REFILL {
                    frame::put_window_update(&mut self.pending, 0, self.unacked as u32);
                    self.unacked = 0;
                }
                let range =
                    frame::unpadded(head.kind, head.flags, payload).map_err(|e| self.broken(e))?;
                if head.stream != self.stream {
                    return Ok(Step::Next);
                }
                let end_stream = head.flags & frame::END_STREAM != 0;
                if !self.head {
                    return Ok(self.fail("DATA before the reply's headers", !end_stream));
                }
                if self.data.len() + range.len() > reply::PREFIX + frame::MAX_MESSAGE_SIZE {
                    let why = format!(
                        "a reply of more than {} bytes of message",
                        frame::MAX_MESSAGE_SIZE
                    );
                    return Ok(self.fail(&why, !end_stream));
                }
                self.data
                    .push(input, start + range.start..start + range.end);
                if end_stream {
                    return Ok(self.fail("a reply without trailers (no grpc-status)", false));
                }
            }
            frame::HEADERS => {
                if head.stream == 0 {
                    return Err(self.broken("HEADERS on stream 0"));
                }
                let range =
                    frame::unpadded(head.kind, head.flags, payload).map_err(|e| self.broken(e))?;
                self.block.extend_from_slice(&payload[range]);
                self.block_end_stream = head.flags & frame::END_STREAM != 0;
                self.block_stream = head.stream;
                if head.flags & frame::END_HEADERS != 0 {
                    return self.headers(input);
                }
            }
            frame::CONTINUATION => {
                if self.block_stream == 0 || head.stream != self.block_stream {
                    return Err(self.broken("CONTINUATION outside its header block"));
                }
                if self.block.len() + payload.len() > super::reader::MAX_HEADER_BLOCK {
                    return Err(self.broken(format_args!(
                        "a header block over {} bytes",
                        super::reader::MAX_HEADER_BLOCK
                    )));
                }
                self.block.extend_from_slice(payload);
                if head.flags & frame::END_HEADERS != 0 {
                    return self.headers(input);
                }
            }
            frame::RST_STREAM => {
                if head.stream == 0 || head.len != 4 {
                    return Err(self.broken("malformed RST_STREAM"));
                }
                if head.stream == self.stream {
                    let code = u32::from_be_bytes(payload.try_into().unwrap());
                    return Ok(Step::Done(Err(frame::reset_by_server(&self.target, code))));
                }
            }
            frame::SETTINGS => {
                if head.stream != 0 {
                    return Err(self.broken("SETTINGS on a stream"));
                }
                if head.flags & frame::ACK != 0 {
                    if head.len != 0 {
                        return Err(self.broken("a SETTINGS acknowledgement with a payload"));
                    }
                    return Ok(Step::Next);
                }
                let s = super::reader::settings(payload).map_err(|e| self.broken(e))?;
                if let Some(window) = s.initial_window {
                    self.initial_window = i64::from(window);
                }
                frame::put_frame(&mut self.pending, frame::SETTINGS, frame::ACK, 0, &[]);
            }
            frame::PING => {
                if head.stream != 0 || head.len != 8 {
                    return Err(self.broken("malformed PING"));
                }
                if head.flags & frame::ACK == 0 {
                    frame::put_frame(&mut self.pending, frame::PING, frame::ACK, 0, payload);
                }
            }
            frame::GOAWAY => {
                if head.stream != 0 || head.len < 8 {
                    return Err(self.broken("malformed GOAWAY"));
                }
                let last =
                    u32::from_be_bytes(payload[..4].try_into().unwrap()) & frame::MAX_STREAM_ID;
                let code = u32::from_be_bytes(payload[4..8].try_into().unwrap());
                self.retire = true;
                if self.stream > last {
                    let debug = String::from_utf8_lossy(&payload[8..]);
                    return Ok(Step::Done(Err(frame::closed_by_server(
                        &self.target,
                        code,
                        &debug,
                    ))));
                }
            }
            frame::WINDOW_UPDATE => {
                if head.len != 4 {
                    return Err(self.broken("malformed WINDOW_UPDATE"));
                }
                let increment = u32::from_be_bytes(payload.try_into().unwrap()) & frame::MAX_WINDOW;
                if increment == 0 {
                    return Err(self.broken("a WINDOW_UPDATE of 0"));
                }
                if head.stream == 0 {
                    self.window += i64::from(increment);
                }
            }
            frame::PUSH_PROMISE => {
                return Err(self.broken("PUSH_PROMISE, though push is disabled"));
            }
            // Priorities mean nothing to a client; unknown types are
            // ignored (RFC 9113 §5.5).
            _ => {}
        }
        Ok(Step::Next)
    }

    /// A whole header block has arrived for `block_stream`.
    fn headers(&mut self, input: &[u8]) -> Result<Step, CallError> {
        let id = std::mem::take(&mut self.block_stream);
        let end_stream = self.block_end_stream;
        let decoded = reply::decode_block(&mut self.decoder, &mut self.block, end_stream);
        let fields = decoded.map_err(|e| self.broken(e))?;
        if id != self.stream {
            return Ok(Step::Next);
        }
        if !self.head {
            if fields.is_informational() && !end_stream {
                return Ok(Step::Next);
            }
            return Ok(match reply::check_head(&fields, end_stream) {
                Ok(()) => {
                    self.head = true;
                    Step::Next
                }
                Err(e) if end_stream => Step::Done(Err(e)),
                Err(e) => self.fail_reset(e),
            });
        }
        if !end_stream {
            return Ok(self.fail("trailers without END_STREAM", true));
        }
        let result = reply::grpc_status(&fields).and_then(|()| {
            let data = self.data.bytes(input);
            let message = reply::unframe_slice(data)
                .map_err(|e| CallError::Protocol(format!("{}: {e}", self.target)))?;
            self.prepared.reply_of(message, &self.call.expected)
        });
        Ok(Step::Done(result))
    }
}

fn new_decoder() -> Decoder<'static> {
    let mut decoder = Decoder::new();
    // The client advertises the default table size (4,096 bytes).
    decoder.set_max_allowed_table_size(4096);
    decoder
}

impl<P: UnaryRequest> Exchange for UnaryExchange<P> {
    type Outcome = Reply;

    fn request(&mut self, out: &mut Vec<u8>) -> Result<(), CallError> {
        out.clear();
        if self.fresh {
            self.restart();
            out.extend_from_slice(&frame::preface());
        }
        let body = self.prepared.body().len() as i64;
        if body > self.window || body > self.initial_window {
            // Not sent: the connection is replaced for the next call.
            self.fresh = true;
            return Err(CallError::Protocol(format!(
                "{}: HTTP/2: the server's flow-control window ({} bytes, {} a stream) \
                 leaves no room for a request of {body} bytes",
                self.target, self.window, self.initial_window
            )));
        }
        out.append(&mut self.pending);
        self.stream = self.next_id;
        self.next_id += 2;
        if self.next_id > frame::MAX_STREAM_ID {
            self.retire = true;
        }
        self.head = false;
        self.data = Data::None;
        let headers = self.prepared.header_block();
        frame::put_head(
            out,
            headers.len(),
            frame::HEADERS,
            frame::END_HEADERS,
            self.stream,
        );
        out.extend_from_slice(headers);
        frame::put_frame(
            out,
            frame::DATA,
            frame::END_STREAM,
            self.stream,
            self.prepared.body(),
        );
        self.window -= body;
        Ok(())
    }

    fn reply(&mut self, input: &[u8]) -> Result<Parsed<Result<Reply, CallError>>, CallError> {
        let result = self.frames(input);
        if result.is_err() {
            // The connection is replaced: the next request starts anew.
            self.fresh = true;
        }
        result
    }

    fn verify(&self, outcome: Reply) -> Result<(), CallError> {
        outcome.verify(&self.call)
    }

    fn connection_opened(&mut self) {
        self.fresh = true;
    }

    fn wants_new_connection(&self) -> bool {
        self.retire
    }
}

impl<P: UnaryRequest> UnaryExchange<P> {
    fn frames(&mut self, input: &[u8]) -> Result<Parsed<Result<Reply, CallError>>, CallError> {
        loop {
            let at = self.scanned;
            if input.len() < at + HEAD_LEN {
                return Ok(Parsed::Incomplete {
                    at_least: at + HEAD_LEN,
                });
            }
            let head = Head::parse(&input[at..]);
            if head.len > frame::RECV_MAX_FRAME {
                return Err(self.broken(format_args!(
                    "a frame of {} bytes, more than the {} allowed",
                    head.len,
                    frame::RECV_MAX_FRAME
                )));
            }
            let end = at + HEAD_LEN + head.len;
            if input.len() < end {
                return Ok(Parsed::Incomplete { at_least: end });
            }
            let step = self.frame(input, at, head)?;
            self.scanned = end;
            if let Step::Done(outcome) = step {
                self.scanned = 0;
                self.data = Data::None;
                return Ok(Parsed::Complete {
                    consumed: end,
                    outcome,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::ReferenceReply;
    use proptest::prelude::*;
    use rpclab_model::contract::Operation;

    /// A prepared hello whose reply message is the greeting's UTF-8 bytes
    /// (the exchange never looks inside a message).
    struct Hello {
        block: Vec<u8>,
        reference: ReferenceReply,
    }

    impl UnaryRequest for Hello {
        fn header_block(&self) -> &[u8] {
            &self.block
        }

        fn body(&self) -> &[u8] {
            b"\0\0\0\0\x04\x0a\x02aa"
        }

        fn reply_of(&self, message: &[u8], expected: &Value) -> Result<Reply, CallError> {
            self.reference.reply_of(message, expected, |m| {
                std::str::from_utf8(m)
                    .map(|s| Value::Str(s.to_owned()))
                    .map_err(|e| CallError::Protocol(e.to_string()))
            })
        }
    }

    fn exchange() -> UnaryExchange<Hello> {
        let call = Operation::Hello.call();
        let hello = Hello {
            block: frame::request_headers("/rpclab.Bench/Hello", "127.0.0.1:1", "t"),
            reference: ReferenceReply::default(),
        };
        UnaryExchange::new(&call, hello, "127.0.0.1:1")
    }

    fn expected_message() -> Vec<u8> {
        let Value::Str(s) = Operation::Hello.call().expected else {
            panic!("hello returns a string")
        };
        s.into_bytes()
    }

    fn head_block(status: &str, content_type: &str) -> Vec<u8> {
        let mut b = Vec::new();
        frame::put_literal(&mut b, 8, ":status", status);
        frame::put_literal(&mut b, 31, "content-type", content_type);
        b
    }

    fn trailers(status: &str) -> Vec<u8> {
        let mut b = Vec::new();
        frame::put_literal(&mut b, 0, "grpc-status", status);
        b
    }

    /// A whole reply on `stream`: head, the message in one DATA frame,
    /// trailers.
    fn reply_on(stream: u32, message: &[u8], status: &str) -> Vec<u8> {
        let mut out = Vec::new();
        let head = head_block("200", "application/grpc");
        frame::put_frame(&mut out, frame::HEADERS, frame::END_HEADERS, stream, &head);
        let mut data = vec![0];
        data.extend_from_slice(&(message.len() as u32).to_be_bytes());
        data.extend_from_slice(message);
        frame::put_frame(&mut out, frame::DATA, 0, stream, &data);
        let end = frame::END_HEADERS | frame::END_STREAM;
        frame::put_frame(&mut out, frame::HEADERS, end, stream, &trailers(status));
        out
    }

    /// Feeds `input` to the exchange in chunks of `chunk` bytes (as reads
    /// would hand it over) until it completes.
    fn feed(
        x: &mut UnaryExchange<Hello>,
        input: &[u8],
        chunk: usize,
    ) -> (usize, Result<Reply, CallError>) {
        let mut have = 0;
        loop {
            match x.reply(&input[..have]).unwrap() {
                Parsed::Complete { consumed, outcome } => return (consumed, outcome),
                Parsed::Incomplete { at_least } => {
                    assert!(at_least > have, "asks for more than it has");
                    assert!(have < input.len(), "incomplete at the end of the input");
                    have = (have + chunk).min(input.len());
                }
            }
        }
    }

    #[test]
    fn a_connection_starts_with_the_preface_and_requests_take_odd_stream_ids() {
        let mut x = exchange();
        let mut out = Vec::new();
        x.request(&mut out).unwrap();
        assert!(out.starts_with(&frame::preface()));
        let at = frame::preface().len();
        let headers = Head::parse(&out[at..]);
        assert_eq!(
            (headers.kind, headers.flags, headers.stream),
            (frame::HEADERS, frame::END_HEADERS, 1)
        );
        let data = Head::parse(&out[at + HEAD_LEN + headers.len..]);
        assert_eq!(
            (data.kind, data.flags, data.stream),
            (frame::DATA, frame::END_STREAM, 1)
        );
        let (_, outcome) = feed(&mut x, &reply_on(1, &expected_message(), "0"), 1 << 20);
        assert_eq!(
            outcome.unwrap(),
            Reply::Decoded(Operation::Hello.call().expected)
        );
        x.request(&mut out).unwrap();
        assert_eq!(
            Head::parse(&out).stream,
            3,
            "no preface on the same connection"
        );
        let (_, outcome) = feed(&mut x, &reply_on(3, &expected_message(), "0"), 1 << 20);
        assert_eq!(outcome.unwrap(), Reply::AsReference);
        // A new connection starts over.
        x.connection_opened();
        x.request(&mut out).unwrap();
        assert!(out.starts_with(&frame::preface()));
        assert_eq!(Head::parse(&out[at..]).stream, 1);
    }

    #[test]
    fn the_servers_frames_are_answered_in_front_of_the_next_request() {
        let mut x = exchange();
        let mut out = Vec::new();
        x.request(&mut out).unwrap();
        let mut input = Vec::new();
        let mut settings = Vec::new();
        settings.extend_from_slice(&frame::SETTINGS_INITIAL_WINDOW_SIZE.to_be_bytes());
        settings.extend_from_slice(&1_000_000u32.to_be_bytes());
        frame::put_frame(&mut input, frame::SETTINGS, 0, 0, &settings);
        frame::put_frame(&mut input, frame::PING, 0, 0, b"12345678");
        frame::put_window_update(&mut input, 0, 100);
        input.extend(reply_on(1, &expected_message(), "0"));
        // A frame after the reply is left for the next call.
        frame::put_frame(&mut input, frame::SETTINGS, frame::ACK, 0, &[]);
        let (consumed, outcome) = feed(&mut x, &input, 7);
        assert_eq!(consumed, input.len() - HEAD_LEN);
        assert!(outcome.is_ok());
        assert_eq!(x.initial_window, 1_000_000);
        x.request(&mut out).unwrap();
        let ack = Head::parse(&out);
        assert_eq!(
            (ack.kind, ack.flags, ack.len),
            (frame::SETTINGS, frame::ACK, 0)
        );
        let pong = Head::parse(&out[HEAD_LEN..]);
        assert_eq!((pong.kind, pong.flags), (frame::PING, frame::ACK));
        assert_eq!(&out[2 * HEAD_LEN..2 * HEAD_LEN + 8], b"12345678");
        assert_eq!(Head::parse(&out[2 * HEAD_LEN + 8..]).stream, 3);
    }

    #[test]
    fn wrong_replies_fail_the_call_and_keep_the_connection() {
        let call = Operation::Hello.call();
        let wrong = b"hello someone else".to_vec();
        let mut x = exchange();
        let mut out = Vec::new();
        x.request(&mut out).unwrap();
        let (_, outcome) = feed(&mut x, &reply_on(1, &wrong, "0"), 3);
        assert!(matches!(
            x.verify(outcome.unwrap()),
            Err(CallError::WrongResponse(_))
        ));
        // A server status.
        x.request(&mut out).unwrap();
        let (_, outcome) = feed(&mut x, &reply_on(3, &expected_message(), "13"), 5);
        assert!(matches!(outcome, Err(CallError::Server(m)) if m.starts_with("INTERNAL")));
        // Another HTTP status, the stream still open: reset.
        x.request(&mut out).unwrap();
        let mut input = Vec::new();
        let head = head_block("503", "text/plain");
        frame::put_frame(&mut input, frame::HEADERS, frame::END_HEADERS, 5, &head);
        let (_, outcome) = feed(&mut x, &input, 4);
        assert!(
            matches!(outcome, Err(CallError::Protocol(_))),
            "{outcome:?}"
        );
        // What the server still sends on it is passed over; the reset goes
        // out with the next request.
        x.request(&mut out).unwrap();
        let reset = Head::parse(&out);
        assert_eq!((reset.kind, reset.stream), (frame::RST_STREAM, 5));
        let mut input = Vec::new();
        frame::put_frame(&mut input, frame::DATA, frame::END_STREAM, 5, b"late");
        input.extend(reply_on(7, &expected_message(), "0"));
        let (_, outcome) = feed(&mut x, &input, 1 << 20);
        assert!(x.verify(outcome.unwrap()).is_ok());
        // Two messages in one reply, or none, or compressed.
        for data in [
            [&[0, 0, 0, 0, 1, 7][..], &[0, 0, 0, 0, 1, 7]].concat(),
            vec![],
            vec![1, 0, 0, 0, 1, 7],
        ] {
            x.request(&mut out).unwrap();
            let s = x.stream;
            let mut input = Vec::new();
            let head = head_block("200", "application/grpc");
            frame::put_frame(&mut input, frame::HEADERS, frame::END_HEADERS, s, &head);
            frame::put_frame(&mut input, frame::DATA, 0, s, &data);
            let end = frame::END_HEADERS | frame::END_STREAM;
            frame::put_frame(&mut input, frame::HEADERS, end, s, &trailers("0"));
            let (_, outcome) = feed(&mut x, &input, 2);
            assert!(matches!(outcome, Err(CallError::Protocol(_))), "{data:?}");
        }
        // A stream reset by the server.
        x.request(&mut out).unwrap();
        let mut input = Vec::new();
        frame::put_rst_stream(&mut input, x.stream, 2);
        let (_, outcome) = feed(&mut x, &input, 1);
        assert!(matches!(outcome, Err(CallError::Io(_))));
        assert!(!x.wants_new_connection());
        // Still in step.
        x.request(&mut out).unwrap();
        let input = reply_on(x.stream, &expected_message(), "0");
        let (_, outcome) = feed(&mut x, &input, 9);
        assert!(outcome.unwrap().verify(&call).is_ok());
    }

    #[test]
    fn a_goaway_retires_the_connection_and_broken_framing_replaces_it() {
        let mut x = exchange();
        let mut out = Vec::new();
        x.request(&mut out).unwrap();
        let mut input = Vec::new();
        let mut goaway = Vec::new();
        frame::put_goaway(&mut goaway, 1, 0);
        input.extend(goaway);
        input.extend(reply_on(1, &expected_message(), "0"));
        let (_, outcome) = feed(&mut x, &input, 1 << 20);
        assert!(
            outcome.is_ok(),
            "the stream below the GOAWAY's last id finishes"
        );
        assert!(x.wants_new_connection());
        x.connection_opened();
        x.request(&mut out).unwrap();
        assert!(!x.wants_new_connection());
        let mut input = Vec::new();
        frame::put_goaway(&mut input, 0, 0);
        let (_, outcome) = feed(&mut x, &input, 1 << 20);
        assert!(matches!(outcome, Err(CallError::Io(_))), "{outcome:?}");
        // Broken framing: an error of the exchange, a new connection next.
        x.connection_opened();
        x.request(&mut out).unwrap();
        let mut input = Vec::new();
        frame::put_frame(&mut input, frame::DATA, 0, 0, b"x");
        assert!(x.reply(&input).is_err());
        x.request(&mut out).unwrap();
        assert!(out.starts_with(&frame::preface()));
    }

    #[test]
    fn a_spent_send_window_fails_the_request() {
        let mut x = exchange();
        let mut out = Vec::new();
        x.request(&mut out).unwrap();
        x.window = 3;
        assert!(matches!(x.request(&mut out), Err(CallError::Protocol(_))));
        x.request(&mut out).unwrap();
        assert!(out.starts_with(&frame::preface()), "a new connection");
    }

    proptest! {
        /// However the reply is cut into reads, and whatever frames the
        /// server puts before it, the outcome is the same.
        #[test]
        fn any_cut_of_the_reply_gives_the_same_outcome(
            chunk in 1usize..64,
            pings in 0usize..3,
            split_data in any::<bool>(),
            padded in any::<bool>(),
        ) {
            let mut x = exchange();
            let mut out = Vec::new();
            for round in 0..3u32 {
                x.request(&mut out).unwrap();
                let stream = 1 + 2 * round;
                let mut input = Vec::new();
                for _ in 0..pings {
                    frame::put_frame(&mut input, frame::PING, 0, 0, b"abcdefgh");
                }
                let head = head_block("200", "application/grpc");
                frame::put_frame(&mut input, frame::HEADERS, frame::END_HEADERS, stream, &head);
                let message = expected_message();
                let mut data = vec![0];
                data.extend_from_slice(&(message.len() as u32).to_be_bytes());
                data.extend_from_slice(&message);
                let cut = if split_data { 3 } else { data.len() };
                for part in [&data[..cut], &data[cut..]] {
                    if part.is_empty() {
                        continue;
                    }
                    if padded {
                        let mut p = vec![2];
                        p.extend_from_slice(part);
                        p.extend_from_slice(&[0, 0]);
                        frame::put_frame(&mut input, frame::DATA, frame::PADDED, stream, &p);
                    } else {
                        frame::put_frame(&mut input, frame::DATA, 0, stream, part);
                    }
                }
                let end = frame::END_HEADERS | frame::END_STREAM;
                frame::put_frame(&mut input, frame::HEADERS, end, stream, &trailers("0"));
                let (consumed, outcome) = feed(&mut x, &input, chunk);
                prop_assert_eq!(consumed, input.len());
                prop_assert!(x.verify(outcome.unwrap()).is_ok());
            }
        }
    }
}
