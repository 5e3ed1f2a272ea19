//! The reader task of one HTTP/2 connection: frames in, replies out (see
//! the `conn` module for how it fits with the writer).
//!
//! Its streams are its own (a map no one else touches); the writer's newly
//! started ones are taken from the shared registry, under its lock, only
//! when a frame names a stream id above every one known, so at most once
//! per read. Header blocks are always decoded, also for a stream nobody
//! waits for any more, because the HPACK dynamic table must follow the
//! server's.

use super::frame::{self, Head, HEAD_LEN};
use super::reply::{self, Gather};
use super::shared::{Command, Event, Reply, Settings, Shared};
use crate::id_hash::IdMap;
use crate::protocol::CallError;
use crate::tls::ReadHalf;
use bytes::BytesMut;
use loona_hpack::Decoder;
use std::collections::HashMap;
use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::io::AsyncReadExt;
use tokio::sync::{mpsc, oneshot};

/// First size of the read buffer; it grows to the largest frame.
const READ_BUFFER: usize = 64 * 1024;

/// The largest header block accepted (a reply's head or trailers).
pub(super) const MAX_HEADER_BLOCK: usize = 1 << 20;

/// Why the connection ended, for the calls it leaves unanswered.
#[derive(Debug)]
enum End {
    /// The server closed it (after a GOAWAY, if it sent one).
    Closed(Option<(u32, String)>),
    Io(io::Error),
    GoAway(u32, String),
    /// The server broke HTTP/2.
    Broken(String),
}

impl End {
    fn error(&self, target: &str) -> CallError {
        match self {
            End::Closed(Some((code, debug))) | End::GoAway(code, debug) => {
                frame::closed_by_server(target, *code, debug)
            }
            End::Closed(None) => CallError::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{target}: the server closed the connection"),
            )),
            // The server's TLS alert refusing the client's certificate: an
            // answer, with what to pass (as the HTTP/1.1 pool says it).
            End::Io(e) => match crate::tls::alert_hint(e) {
                Some(hint) => CallError::Protocol(format!("{target}: TLS: {e} ({hint})")),
                None => CallError::Io(io::Error::new(e.kind(), format!("{target}: {e}"))),
            },
            End::Broken(why) => CallError::Protocol(format!("{target}: HTTP/2: {why}")),
        }
    }
}

/// A stream waiting for its reply.
struct Stream {
    reply: oneshot::Sender<Reply>,
    /// Whether its head was read and found right.
    head: bool,
    data: Gather,
}

/// Reads one connection until it ends, then fails what is left.
pub async fn run(
    read: ReadHalf,
    target: Arc<str>,
    generation: u64,
    shared: Arc<Shared>,
    commands: mpsc::UnboundedSender<Command>,
) {
    let mut decoder = Decoder::new();
    // The client advertises the default table size (4,096 bytes): a
    // server's size update beyond it is an error.
    decoder.set_max_allowed_table_size(4096);
    let mut reader = Reader {
        target,
        generation,
        shared,
        commands,
        decoder,
        streams: HashMap::with_capacity_and_hasher(64, Default::default()),
        known: 0,
        spare: Vec::new(),
        block: Vec::new(),
        block_stream: 0,
        block_end_stream: false,
        unacked: 0,
        credit: 0,
        send: Vec::new(),
        ended: 0,
        goaway: None,
    };
    let end = reader.read(read).await;
    if let End::Broken(_) = end {
        let mut bye = Vec::new();
        frame::put_goaway(&mut bye, 0, frame::PROTOCOL_ERROR);
        reader.event(Event::Send(bye));
    }
    reader.fail_all(&end);
}

struct Reader {
    target: Arc<str>,
    generation: u64,
    shared: Arc<Shared>,
    commands: mpsc::UnboundedSender<Command>,
    decoder: Decoder<'static>,
    streams: IdMap<u32, Stream>,
    /// The highest stream id taken from the registry.
    known: u32,
    /// Swapped with the registry's list, so that neither allocates again.
    spare: Vec<(u32, oneshot::Sender<Reply>)>,
    /// A header block under way (HEADERS then CONTINUATION).
    block: Vec<u8>,
    block_stream: u32,
    block_end_stream: bool,
    /// DATA received since the connection's window was last given back.
    unacked: u64,
    /// This read's WINDOW_UPDATE increments of the connection, frames to
    /// send, streams ended: told the writer once per read.
    credit: u64,
    send: Vec<u8>,
    ended: u32,
    /// The server's GOAWAY, once sent.
    goaway: Option<(u32, String)>,
}

impl Reader {
    async fn read(&mut self, mut read: ReadHalf) -> End {
        let mut buf = BytesMut::with_capacity(READ_BUFFER);
        let mut first = true;
        loop {
            if first && buf.len() >= 2 {
                first = false;
                // A server's first frame is its SETTINGS, whose length
                // starts with a zero byte; a TLS record (an alert, a
                // handshake) starts with 0x15 or 0x16, then 0x03.
                if crate::tls::is_tls_record(&buf) {
                    return End::Broken(
                        "the server answered with a TLS record: it speaks TLS, not plaintext \
                         HTTP/2 (connect with --tls, --cacert or --skipTLS)"
                            .into(),
                    );
                }
            }
            let want = loop {
                if buf.len() < HEAD_LEN {
                    break READ_BUFFER;
                }
                let head = Head::parse(&buf);
                if head.len > frame::RECV_MAX_FRAME {
                    return End::Broken(format!(
                        "a frame of {} bytes, more than the {} allowed",
                        head.len,
                        frame::RECV_MAX_FRAME
                    ));
                }
                if buf.len() < HEAD_LEN + head.len {
                    break HEAD_LEN + head.len - buf.len();
                }
                let bytes = buf.split_to(HEAD_LEN + head.len);
                if let Err(end) = self.frame(head, bytes) {
                    return end;
                }
            };
            self.tell_writer();
            buf.reserve(want.max(4096));
            let got = tokio::select! {
                biased;
                got = read.read_buf(&mut buf) => Some(got),
                () = self.shared.sweep_asked() => None,
            };
            let Some(got) = got else {
                self.reset_given_up();
                continue;
            };
            match got {
                Ok(0) if buf.is_empty() => return End::Closed(self.goaway.take()),
                Ok(0) => {
                    return End::Io(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!(
                            "the server closed the connection inside a frame ({} bytes read)",
                            buf.len()
                        ),
                    ))
                }
                Ok(_) => {}
                Err(e) => return End::Io(e),
            }
        }
    }

    /// Handles one whole frame (its header and payload in `bytes`).
    fn frame(&mut self, head: Head, mut bytes: BytesMut) -> Result<(), End> {
        let broken = |why: String| Err(End::Broken(why));
        if self.block_stream != 0 && head.kind != frame::CONTINUATION {
            return broken(format!("frame type {} inside a header block", head.kind));
        }
        let payload = &bytes[HEAD_LEN..];
        match head.kind {
            frame::DATA => {
                if head.stream == 0 {
                    return broken("DATA on stream 0".into());
                }
                self.received(head.len);
                let range = frame::unpadded(head.kind, head.flags, payload).map_err(End::Broken)?;
                let end_stream = head.flags & frame::END_STREAM != 0;
                let Some(stream) = self.stream(head.stream) else {
                    return Ok(());
                };
                if !stream.head {
                    return self.fail(head.stream, "DATA before the reply's headers".into(), true);
                }
                let data = bytes.split_off(HEAD_LEN).freeze().slice(range);
                if let Err(e) = stream.data.push(data) {
                    return self.fail(head.stream, e, !end_stream);
                }
                if end_stream {
                    let e = "a reply without trailers (no grpc-status)".into();
                    return self.fail(head.stream, e, false);
                }
            }
            frame::HEADERS => {
                if head.stream == 0 {
                    return broken("HEADERS on stream 0".into());
                }
                let range = frame::unpadded(head.kind, head.flags, payload).map_err(End::Broken)?;
                self.block.extend_from_slice(&payload[range]);
                self.block_end_stream = head.flags & frame::END_STREAM != 0;
                self.block_stream = head.stream;
                if head.flags & frame::END_HEADERS != 0 {
                    return self.headers();
                }
            }
            frame::CONTINUATION => {
                if self.block_stream == 0 || head.stream != self.block_stream {
                    return broken("CONTINUATION outside its header block".into());
                }
                if self.block.len() + payload.len() > MAX_HEADER_BLOCK {
                    return broken(format!("a header block over {MAX_HEADER_BLOCK} bytes"));
                }
                self.block.extend_from_slice(payload);
                if head.flags & frame::END_HEADERS != 0 {
                    return self.headers();
                }
            }
            frame::RST_STREAM => {
                if head.stream == 0 || head.len != 4 {
                    return broken("malformed RST_STREAM".into());
                }
                let code = u32::from_be_bytes(payload.try_into().unwrap());
                self.stream(head.stream);
                if let Some(stream) = self.take(head.stream) {
                    let _ = stream
                        .reply
                        .send(Err(frame::reset_by_server(&self.target, code)));
                    self.event(Event::Reset(head.stream));
                }
            }
            frame::SETTINGS => {
                if head.stream != 0 {
                    return broken("SETTINGS on a stream".into());
                }
                if head.flags & frame::ACK != 0 {
                    if head.len != 0 {
                        return broken("a SETTINGS acknowledgement with a payload".into());
                    }
                    return Ok(());
                }
                let settings = settings(payload).map_err(End::Broken)?;
                self.tell_writer();
                self.event(Event::Settings(settings));
            }
            frame::PING => {
                if head.stream != 0 || head.len != 8 {
                    return broken("malformed PING".into());
                }
                if head.flags & frame::ACK == 0 {
                    frame::put_frame(&mut self.send, frame::PING, frame::ACK, 0, payload);
                }
            }
            frame::GOAWAY => {
                if head.stream != 0 || head.len < 8 {
                    return broken("malformed GOAWAY".into());
                }
                let last =
                    u32::from_be_bytes(payload[..4].try_into().unwrap()) & frame::MAX_STREAM_ID;
                let code = u32::from_be_bytes(payload[4..8].try_into().unwrap());
                let debug = String::from_utf8_lossy(&payload[8..]).into_owned();
                self.go_away(last, code, debug);
            }
            frame::WINDOW_UPDATE => {
                if head.len != 4 {
                    return broken("malformed WINDOW_UPDATE".into());
                }
                let increment = u32::from_be_bytes(payload.try_into().unwrap()) & frame::MAX_WINDOW;
                if increment == 0 {
                    return broken("a WINDOW_UPDATE of 0".into());
                }
                if head.stream == 0 {
                    self.credit += u64::from(increment);
                } else {
                    let stream = head.stream;
                    self.event(Event::Window { stream, increment });
                }
            }
            frame::PUSH_PROMISE => return broken("PUSH_PROMISE, though push is disabled".into()),
            // Priorities mean nothing to a client; unknown types are
            // ignored (RFC 9113 §5.5).
            frame::PRIORITY => {}
            _ => {}
        }
        Ok(())
    }

    /// A whole header block has arrived for `block_stream`.
    fn headers(&mut self) -> Result<(), End> {
        let id = std::mem::take(&mut self.block_stream);
        let end_stream = self.block_end_stream;
        let fields = reply::decode_block(&mut self.decoder, &mut self.block, end_stream)
            .map_err(End::Broken)?;
        let Some(stream) = self.stream(id) else {
            return Ok(());
        };
        if !stream.head {
            if fields.is_informational() && !end_stream {
                return Ok(());
            }
            return match reply::check_head(&fields, end_stream) {
                Ok(()) => {
                    stream.head = true;
                    Ok(())
                }
                Err(e) => self.fail_with(id, e, !end_stream),
            };
        }
        if !end_stream {
            return self.fail(id, "trailers without END_STREAM".into(), true);
        }
        let stream = self.take(id).expect("the stream was just found");
        let result = reply::grpc_status(&fields).and_then(|()| {
            reply::unframe(stream.data.into_bytes())
                .map_err(|e| CallError::Protocol(format!("{}: {e}", self.target)))
        });
        let _ = stream.reply.send(result);
        Ok(())
    }

    /// The stream `id` if a caller waits for it; streams the writer started
    /// since are picked up first.
    fn stream(&mut self, id: u32) -> Option<&mut Stream> {
        if id > self.known {
            std::mem::swap(&mut self.shared.registry().streams, &mut self.spare);
            for (stream, reply) in self.spare.drain(..) {
                self.known = self.known.max(stream);
                let data = Gather::default();
                self.streams.insert(
                    stream,
                    Stream {
                        reply,
                        head: false,
                        data,
                    },
                );
            }
        }
        self.streams.get_mut(&id)
    }

    /// Resets the streams whose callers gave up (RST_STREAM with CANCEL):
    /// they end here, so the writer frees their places and drops what is
    /// left of their DATA; what the server still sends on them is ignored.
    fn reset_given_up(&mut self) {
        self.stream(u32::MAX);
        let gone: Vec<u32> = self
            .streams
            .iter()
            .filter(|(_, s)| s.reply.is_closed())
            .map(|(id, _)| *id)
            .collect();
        for id in gone {
            self.take(id);
            frame::put_rst_stream(&mut self.send, id, frame::CANCEL);
            self.event(Event::Reset(id));
        }
    }

    /// Removes a stream that has ended.
    fn take(&mut self, id: u32) -> Option<Stream> {
        let stream = self.streams.remove(&id)?;
        self.ended += 1;
        Some(stream)
    }

    /// Fails a call whose reply is broken; `reset` when the server may
    /// still send on the stream, which is then reset.
    fn fail(&mut self, id: u32, why: String, reset: bool) -> Result<(), End> {
        let e = CallError::Protocol(format!("{}: {why}", self.target));
        self.fail_with(id, e, reset)
    }

    fn fail_with(&mut self, id: u32, e: CallError, reset: bool) -> Result<(), End> {
        if let Some(stream) = self.take(id) {
            let _ = stream.reply.send(Err(e));
        }
        if reset {
            frame::put_rst_stream(&mut self.send, id, frame::CANCEL);
        }
        Ok(())
    }

    /// DATA counts against the connection's window, given back in one
    /// WINDOW_UPDATE per [`frame::WINDOW_REFILL`].
    fn received(&mut self, len: usize) {
        self.unacked += len as u64;
        if self.unacked >= frame::WINDOW_REFILL {
            frame::put_window_update(&mut self.send, 0, self.unacked as u32);
            self.unacked = 0;
        }
    }

    /// The server takes no new streams; those above `last` were not
    /// processed and fail now, the others may still be answered.
    fn go_away(&mut self, last: u32, code: u32, debug: String) {
        self.shared.ended.store(true, Ordering::Release);
        self.stream(u32::MAX);
        let end = End::GoAway(code, debug.clone());
        let refused: Vec<u32> = self
            .streams
            .keys()
            .copied()
            .filter(|id| *id > last)
            .collect();
        for id in refused {
            if let Some(stream) = self.take(id) {
                let _ = stream.reply.send(Err(end.error(&self.target)));
            }
        }
        self.goaway = Some((code, debug));
    }

    fn event(&mut self, event: Event) {
        let _ = self.commands.send(Command::Event(self.generation, event));
    }

    /// Tells the writer what this read changed, in as few messages as
    /// there are kinds of change.
    fn tell_writer(&mut self) {
        if !self.send.is_empty() {
            let frames = std::mem::take(&mut self.send);
            self.event(Event::Send(frames));
        }
        if self.credit > 0 {
            let increment = self.credit.min(u64::from(frame::MAX_WINDOW)) as u32;
            self.credit = 0;
            self.event(Event::Window {
                stream: 0,
                increment,
            });
        }
        if self.ended > 0 {
            let n = std::mem::take(&mut self.ended);
            self.event(Event::Ended(n));
        }
    }

    /// The connection ended: every call still waiting on it fails.
    fn fail_all(&mut self, end: &End) {
        self.shared.ended.store(true, Ordering::Release);
        let started = {
            let mut registry = self.shared.registry();
            registry.closed = true;
            std::mem::take(&mut registry.streams)
        };
        let waiting = self.streams.drain().map(|(_, s)| s.reply);
        for reply in waiting.chain(started.into_iter().map(|(_, r)| r)) {
            let _ = reply.send(Err(end.error(&self.target)));
        }
        self.tell_writer();
    }
}

/// The values of a SETTINGS frame's payload the writer uses, checked.
pub(super) fn settings(payload: &[u8]) -> Result<Settings, String> {
    if !payload.len().is_multiple_of(6) {
        return Err(format!("a SETTINGS payload of {} bytes", payload.len()));
    }
    let mut s = Settings::default();
    for entry in payload.chunks_exact(6) {
        let id = u16::from_be_bytes([entry[0], entry[1]]);
        let value = u32::from_be_bytes([entry[2], entry[3], entry[4], entry[5]]);
        match id {
            frame::SETTINGS_MAX_CONCURRENT_STREAMS => s.max_concurrent_streams = Some(value),
            frame::SETTINGS_INITIAL_WINDOW_SIZE => {
                if value > frame::MAX_WINDOW {
                    return Err(format!("SETTINGS_INITIAL_WINDOW_SIZE {value}"));
                }
                s.initial_window = Some(value);
            }
            frame::SETTINGS_MAX_FRAME_SIZE => {
                if !(frame::DEFAULT_MAX_FRAME..=frame::MAX_FRAME_LIMIT).contains(&(value as usize))
                {
                    return Err(format!("SETTINGS_MAX_FRAME_SIZE {value}"));
                }
                s.max_frame = Some(value);
            }
            // The header table size only bounds a table the client's
            // encoder never uses; the others do not concern a client.
            _ => {}
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_read_and_checked() {
        let entry = |id: u16, v: u32| {
            let mut e = id.to_be_bytes().to_vec();
            e.extend_from_slice(&v.to_be_bytes());
            e
        };
        let mut payload = entry(frame::SETTINGS_MAX_CONCURRENT_STREAMS, 100);
        payload.extend(entry(frame::SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20));
        payload.extend(entry(0x1, 0)); // HEADER_TABLE_SIZE: not ours
        payload.extend(entry(0x99, 7)); // unknown: ignored
        assert_eq!(
            settings(&payload).unwrap(),
            Settings {
                max_concurrent_streams: Some(100),
                initial_window: Some(1 << 20),
                max_frame: None
            }
        );
        for bad in [
            entry(frame::SETTINGS_INITIAL_WINDOW_SIZE, 1 << 31),
            entry(frame::SETTINGS_MAX_FRAME_SIZE, 100),
            entry(frame::SETTINGS_MAX_FRAME_SIZE, 1 << 24),
            vec![0; 5],
        ] {
            assert!(settings(&bad).is_err(), "{bad:?}");
        }
    }
}
