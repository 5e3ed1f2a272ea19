//! The gRPC protocol's own HTTP/2 client against a scripted peer that
//! writes raw frames (CONTINUATION, padding, PRIORITY, PING, flow control,
//! RST_STREAM both ways, GOAWAY, broken framing), and against the real tonic server
//! `rpclab-echo` with the contract's 1 MiB payload. Nothing here waits for
//! time to pass: each step waits for the frame that shows the last one
//! was handled.

use crate::common;

use prost::Message as _;
use rpclab_client::protocol::{CallError, Connection, Protocol, WireCounter};
use rpclab_client::protocols::grpc::{pb, Grpc};
use rpclab_model::contract::{Operation, StringSize, Value};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const DATA: u8 = 0;
const HEADERS: u8 = 1;
const RST_STREAM: u8 = 3;
const SETTINGS: u8 = 4;
const PING: u8 = 6;
const GOAWAY: u8 = 7;
const WINDOW_UPDATE: u8 = 8;
const CONTINUATION: u8 = 9;
const END_STREAM: u8 = 1;
const ACK: u8 = 1;
const END_HEADERS: u8 = 4;
const PADDED: u8 = 8;
const PRIORITY: u8 = 0x20;

#[derive(Debug)]
struct Frame {
    kind: u8,
    flags: u8,
    stream: u32,
    payload: Vec<u8>,
}

/// The server end of one connection, frame by frame.
struct Peer {
    socket: TcpStream,
    encoder: loona_hpack::Encoder<'static>,
}

impl Peer {
    /// Accepts a connection and reads the client's preface magic.
    async fn accept(listener: &TcpListener) -> Peer {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut magic = [0u8; 24];
        socket.read_exact(&mut magic).await.unwrap();
        assert_eq!(&magic, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        Peer {
            socket,
            encoder: loona_hpack::Encoder::new(),
        }
    }

    async fn read(&mut self) -> Option<Frame> {
        let mut head = [0u8; 9];
        self.socket.read_exact(&mut head).await.ok()?;
        let len = (usize::from(head[0]) << 16) | (usize::from(head[1]) << 8) | usize::from(head[2]);
        let mut payload = vec![0; len];
        self.socket.read_exact(&mut payload).await.unwrap();
        Some(Frame {
            kind: head[3],
            flags: head[4],
            stream: u32::from_be_bytes(head[5..9].try_into().unwrap()),
            payload,
        })
    }

    async fn send(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
        let mut frame = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        frame.extend_from_slice(&[kind, flags]);
        frame.extend_from_slice(&stream.to_be_bytes());
        frame.extend_from_slice(payload);
        self.socket.write_all(&frame).await.unwrap();
    }

    /// Sends one setting and reads until the client acknowledges it.
    async fn settle(&mut self, id: u16, value: u32) {
        let mut settings = id.to_be_bytes().to_vec();
        settings.extend_from_slice(&value.to_be_bytes());
        self.send(SETTINGS, 0, 0, &settings).await;
        loop {
            let f = self.read().await.expect("a SETTINGS acknowledgement");
            if f.kind == SETTINGS && f.flags & ACK != 0 {
                return;
            }
        }
    }

    /// Reads up to the next request (its HEADERS); returns its stream.
    async fn request_headers(&mut self) -> u32 {
        loop {
            let f = self.read().await.expect("a request");
            if f.kind == HEADERS {
                assert_ne!(f.flags & END_HEADERS, 0, "the client's block is one frame");
                return f.stream;
            }
        }
    }

    /// Reads a whole request: its stream and its DATA.
    async fn request(&mut self) -> (u32, Vec<u8>) {
        let stream = self.request_headers().await;
        let mut body = Vec::new();
        loop {
            let f = self.read().await.expect("the request's DATA");
            if f.kind == DATA && f.stream == stream {
                body.extend_from_slice(&f.payload);
                if f.flags & END_STREAM != 0 {
                    return (stream, body);
                }
            }
        }
    }

    fn block(&mut self, fields: &[(&str, &str)]) -> Vec<u8> {
        self.encoder
            .encode(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())))
    }

    /// Sends a PING and reads until its acknowledgement, gathering the
    /// DATA that came before it into `data` (no frame larger than the
    /// default maximum).
    async fn ping(&mut self, data: &mut Vec<u8>) {
        self.send(PING, 0, 0, b"rpclab!!").await;
        loop {
            let f = self.read().await.expect("a PING ack");
            match f.kind {
                PING if f.flags & ACK != 0 => {
                    assert_eq!(f.payload, b"rpclab!!");
                    return;
                }
                DATA => {
                    assert!(f.payload.len() <= 16_384, "{} bytes", f.payload.len());
                    data.extend_from_slice(&f.payload);
                }
                _ => {}
            }
        }
    }

    /// A whole right reply carrying `message`, in plain frames.
    async fn reply(&mut self, stream: u32, message: &[u8]) {
        let head = self.block(&[(":status", "200"), ("content-type", "application/grpc")]);
        self.send(HEADERS, END_HEADERS, stream, &head).await;
        self.send(DATA, 0, stream, &framed(message)).await;
        let trailers = self.block(&[("grpc-status", "0")]);
        self.send(HEADERS, END_HEADERS | END_STREAM, stream, &trailers)
            .await;
    }
}

fn framed(message: &[u8]) -> Vec<u8> {
    let mut v = vec![0];
    v.extend_from_slice(&(message.len() as u32).to_be_bytes());
    v.extend_from_slice(message);
    v
}

fn greeting(name_call: &rpclab_model::contract::Call) -> Vec<u8> {
    let Value::Str(expected) = &name_call.expected else {
        panic!("hello returns a string")
    };
    pb::Text {
        value: expected.clone(),
    }
    .encode_to_vec()
}

/// A server on a local port that accepts one client (its preface read)
/// and runs `serve` on it, with the listener for the connections a test
/// expects next: the address to dial and the server's task.
async fn serve<F, Fut>(serve: F) -> (String, JoinHandle<Fut::Output>)
where
    F: FnOnce(Peer, TcpListener) -> Fut + Send + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let server = tokio::spawn(async move {
        let peer = Peer::accept(&listener).await;
        serve(peer, listener).await
    });
    (addr, server)
}

fn grpc() -> Grpc {
    Grpc::new(&BTreeMap::new()).unwrap()
}

#[tokio::test]
async fn continuation_padding_priority_and_ping_are_handled() {
    let call = Operation::Hello.call();
    let message = greeting(&call);
    let (addr, server) = serve(move |mut peer, _| async move {
        peer.send(SETTINGS, 0, 0, &[]).await;
        for _ in 0..2 {
            let (stream, _) = peer.request().await;
            // The head: padded, with priority, split in three frames. The
            // second time round the encoder refers to its dynamic table.
            let head = peer.block(&[
                (":status", "200"),
                ("content-type", "application/grpc"),
                ("x-server", "scripted"),
            ]);
            let mut first = vec![3]; // pad length
            first.extend_from_slice(&[0, 0, 0, 0, 16]); // priority
            first.extend_from_slice(&head[..2]);
            first.extend_from_slice(&[0; 3]);
            peer.send(HEADERS, PADDED | PRIORITY, stream, &first).await;
            peer.send(CONTINUATION, 0, stream, &head[2..3]).await;
            peer.send(CONTINUATION, END_HEADERS, stream, &head[3..])
                .await;
            // The message in two padded DATA frames.
            let data = framed(&message);
            for (i, part) in [&data[..4], &data[4..]].into_iter().enumerate() {
                let mut padded = vec![i as u8 * 7];
                padded.extend_from_slice(part);
                padded.extend(std::iter::repeat_n(0, i * 7));
                peer.send(DATA, PADDED, stream, &padded).await;
            }
            let mut early = Vec::new();
            peer.ping(&mut early).await;
            assert!(early.is_empty());
            let trailers = peer.block(&[("grpc-status", "0"), ("x-trailer", "yes")]);
            peer.send(HEADERS, END_STREAM, stream, &trailers[..1]).await;
            peer.send(CONTINUATION, END_HEADERS, stream, &trailers[1..])
                .await;
        }
        peer
    })
    .await;
    let conn = grpc().connect(&addr, WireCounter::default()).await.unwrap();
    for _ in 0..2 {
        assert_eq!(conn.call(&call).await.unwrap(), call.expected);
    }
    drop(server.await.unwrap());
}

#[tokio::test]
async fn the_servers_send_windows_and_frame_size_are_respected() {
    let call = Operation::StringEcho(StringSize::M1).call();
    let (acked, settings_acked) = oneshot::channel();
    let (addr, server) = serve(move |mut peer, _| async move {
        // A stream window of 1000 bytes; frames of the smallest size.
        peer.settle(4, 1000).await; // SETTINGS_INITIAL_WINDOW_SIZE
        acked.send(()).unwrap();
        let stream = peer.request_headers().await;
        // Only the stream's window comes, then nothing until it opens.
        let mut body = Vec::new();
        peer.ping(&mut body).await;
        assert_eq!(body.len(), 1000);
        peer.send(WINDOW_UPDATE, 0, stream, &(4u32 << 20).to_be_bytes())
            .await;
        // Then up to the connection's window (65,535 by default).
        peer.ping(&mut body).await;
        assert_eq!(body.len(), 65_535);
        peer.send(WINDOW_UPDATE, 0, 0, &(4u32 << 20).to_be_bytes())
            .await;
        loop {
            let f = peer.read().await.unwrap();
            if f.kind == DATA {
                assert!(f.payload.len() <= 16_384, "{} bytes", f.payload.len());
                body.extend_from_slice(&f.payload);
                if f.flags & END_STREAM != 0 {
                    break;
                }
            }
        }
        peer.reply(stream, &[]).await;
        body
    })
    .await;
    let conn = grpc().connect(&addr, WireCounter::default()).await.unwrap();
    settings_acked.await.unwrap();
    let Value::Str(text) = &call.argument else {
        panic!("string-1m takes a string")
    };
    // The server answers with an empty Text: a wrong reply, but a whole one.
    assert_eq!(conn.call(&call).await.unwrap(), Value::Str(String::new()));
    let body = server.await.unwrap();
    let sent = pb::Text {
        value: text.clone(),
    }
    .encode_to_vec();
    assert_eq!(body, framed(&sent));
}

#[tokio::test]
async fn rst_stream_and_goaway_are_io_errors_and_the_next_call_reconnects() {
    let call = Operation::Hello.call();
    let message = greeting(&call);
    let (addr, server) = serve(move |mut peer, listener| async move {
        let (one, _) = peer.request().await;
        let (two, _) = peer.request().await;
        let (_three, _) = peer.request().await;
        peer.send(RST_STREAM, 0, one, &7u32.to_be_bytes()).await; // REFUSED_STREAM
        peer.reply(two, &message).await;
        // GOAWAY naming stream two as the last processed: three fails.
        let mut goaway = two.to_be_bytes().to_vec();
        goaway.extend_from_slice(&0u32.to_be_bytes());
        goaway.extend_from_slice(b"bye");
        peer.send(GOAWAY, 0, 0, &goaway).await;
        // The next call comes on a new connection.
        let mut again = Peer::accept(&listener).await;
        let (stream, _) = again.request().await;
        again.reply(stream, &message).await;
        (peer, again)
    })
    .await;
    let conn = Arc::new(grpc().connect(&addr, WireCounter::default()).await.unwrap());
    // Three calls in flight at once, on streams 1, 3, 5 in order.
    let (a, b, c) = tokio::join!(conn.call(&call), conn.call(&call), conn.call(&call));
    let mut results = [a, b, c];
    results.sort_by_key(|r| match r {
        Err(CallError::Io(e)) if e.to_string().contains("RST_STREAM") => 0,
        Ok(_) => 1,
        _ => 2,
    });
    match &results[0] {
        Err(CallError::Io(e)) => assert!(e.to_string().contains("REFUSED_STREAM"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(results[1].as_ref().unwrap(), &call.expected);
    match &results[2] {
        Err(CallError::Io(e)) => {
            let e = e.to_string();
            assert!(e.contains("GOAWAY") && e.contains("NO_ERROR (bye)"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(conn.call(&call).await.unwrap(), call.expected);
    drop(server.await.unwrap());
}

/// A call given up (its future dropped, as its timeout does) resets its
/// stream with CANCEL and frees its place: with the server allowing one
/// stream at a time, the next call is sent at once, and what the server
/// still sends on the reset stream is ignored.
#[tokio::test]
async fn a_call_given_up_resets_its_stream_and_frees_its_place() {
    let call = Operation::Hello.call();
    let message = greeting(&call);
    let (acked, settings_acked) = oneshot::channel();
    let (sent, request_read) = oneshot::channel();
    let (addr, server) = serve(move |mut peer, _| async move {
        peer.settle(3, 1).await; // SETTINGS_MAX_CONCURRENT_STREAMS
        acked.send(()).unwrap();
        let (first, _) = peer.request().await;
        sent.send(()).unwrap();
        // Never answered: the client resets it.
        loop {
            let f = peer.read().await.expect("a RST_STREAM");
            if f.kind == RST_STREAM {
                assert_eq!(f.stream, first);
                assert_eq!(f.payload, 8u32.to_be_bytes(), "CANCEL");
                break;
            }
        }
        let (second, _) = peer.request().await;
        assert!(second > first);
        // A late reply to the reset stream, then the right one.
        peer.reply(first, b"late").await;
        peer.reply(second, &message).await;
        peer
    })
    .await;
    let conn = grpc().connect(&addr, WireCounter::default()).await.unwrap();
    settings_acked.await.unwrap();
    tokio::select! {
        r = conn.call(&call) => panic!("the server never answers the first call: {r:?}"),
        _ = request_read => {}
    }
    // A stuck place would keep this call queued forever; the guard only
    // turns such a hang into a failure.
    let second = tokio::time::timeout(std::time::Duration::from_secs(60), conn.call(&call))
        .await
        .expect("the given-up stream's place was freed");
    assert_eq!(second.unwrap(), call.expected);
    drop(server.await.unwrap());
}

#[tokio::test]
async fn broken_framing_is_a_protocol_error() {
    let call = Operation::Hello.call();
    let (addr, server) = serve(move |mut peer, listener| async move {
        let (_, _) = peer.request().await;
        // An index far beyond both tables.
        peer.send(HEADERS, END_HEADERS, 1, &[0xff, 0x80, 0x10])
            .await;
        // The client answers with GOAWAY(PROTOCOL_ERROR).
        loop {
            let f = peer.read().await.expect("a GOAWAY");
            if f.kind == GOAWAY {
                assert_eq!(&f.payload[4..8], &1u32.to_be_bytes());
                break;
            }
        }
        let mut again = Peer::accept(&listener).await;
        let (_, _) = again.request().await;
        again.send(DATA, 0, 0, b"data on stream 0").await;
        again
    })
    .await;
    let conn = grpc().connect(&addr, WireCounter::default()).await.unwrap();
    for says in ["HPACK", "DATA on stream 0"] {
        match conn.call(&call).await {
            Err(CallError::Protocol(m)) => assert!(m.contains(says), "{m}"),
            other => panic!("{other:?}"),
        }
    }
    drop(server.await.unwrap());
}

/// The contract's 1 MiB string both ways, many calls at once on one
/// connection, against the real tonic server: its windows and frame sizes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_mib_payloads_against_rpclab_echo() {
    let port = common::free_port();
    let _echo = common::KilledOnDrop(
        std::process::Command::new(env!("CARGO_BIN_EXE_rpclab-echo"))
            .env("RPCLAB_PORT", port.to_string())
            .spawn()
            .unwrap(),
    );
    let addr = format!("127.0.0.1:{port}");
    let counter = WireCounter::default();
    // Until it listens (it binds right after starting).
    let mut conn = grpc().connect(&addr, counter.clone()).await;
    for _ in 0..500 {
        if !matches!(conn, Err(CallError::Connect(_))) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        conn = grpc().connect(&addr, counter.clone()).await;
    }
    let conn = Arc::new(conn.unwrap());
    let mut tasks = Vec::new();
    for i in 0..8 {
        let conn = Arc::clone(&conn);
        tasks.push(tokio::spawn(async move {
            let big = Operation::StringEcho(StringSize::M1).call();
            let small = Operation::OrderEcho.call();
            for _ in 0..3 {
                let call = if i % 2 == 0 { &big } else { &small };
                let reply = conn.call(call).await.unwrap();
                assert!(reply == call.expected);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let (sent, received) = counter.totals();
    assert!(sent > 12 << 20 && received > 12 << 20, "{sent} {received}");
}
