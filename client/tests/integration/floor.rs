//! `rpclab-floor`'s loop against in-process servers of each framing: it
//! completes exactly the calls the servers answered, on every connection.

use rpclab_floor::{self as floor, Config, Framing, LengthField};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn config(target: SocketAddr, framing: Framing, request: &[u8], calls: u64) -> Config {
    Config {
        target,
        connections: 3,
        framing,
        request: request.to_vec(),
        greeting: 0,
        warmup: Duration::ZERO,
        duration: Duration::from_secs(120),
        max_calls: Some(calls),
    }
}

/// A thread per connection: `greeting` first, then for every request of
/// `request_len` bytes, `reply`. Counts the requests it answered.
fn server(
    greeting: &'static [u8],
    request_len: usize,
    reply: Vec<u8>,
) -> (SocketAddr, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let served = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&served);
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let (mut s, reply, count) = (s.unwrap(), reply.clone(), Arc::clone(&count));
            std::thread::spawn(move || {
                s.set_nodelay(true).unwrap();
                if s.write_all(greeting).is_err() {
                    return;
                }
                let mut request = vec![0; request_len];
                // Replies go out in two writes, so the floor sees partial
                // messages.
                while s.read_exact(&mut request).is_ok() {
                    count.fetch_add(1, Ordering::Relaxed);
                    let (a, b) = reply.split_at(reply.len() / 2);
                    if s.write_all(a).is_err() || s.write_all(b).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, served)
}

#[test]
fn length_framed_replies_are_counted_one_call_each() {
    let request = b"\0\0\0\x03abc";
    let mut reply = vec![0, 0, 0, 200];
    reply.extend(std::iter::repeat_n(7u8, 200));
    let (addr, served) = server(b"", request.len(), reply);
    let framing = Framing::Length {
        fields: vec![LengthField::parse("0:4:be").unwrap()],
        constant: 4,
    };
    let outcome = floor::run(&config(addr, framing, request, 300)).unwrap();
    assert!(outcome.calls >= 300, "{outcome:?}");
    assert_eq!((outcome.request_bytes, outcome.reply_bytes), (7, 204));
    // One call in flight per connection: the server answered at most one
    // more per connection than the floor counted.
    let served = served.load(Ordering::Relaxed);
    assert!(
        served >= outcome.calls && served <= outcome.calls + 3,
        "{served}"
    );
}

#[test]
fn a_greeting_is_skipped_before_the_first_call() {
    // Ice: the server's 14-byte ValidateConnection comes first; the size is
    // a little-endian field at offset 10 counting the whole message.
    let mut reply = vec![b'I', b'c', b'e', b'P', 1, 0, 1, 0, 2, 0, 0, 0, 0, 0, 9, 9];
    reply[10] = 16;
    let greeting: &'static [u8] = b"IceP\x01\x00\x01\x00\x03\x00\x0e\x00\x00\x00";
    let (addr, _) = server(greeting, 5, reply);
    let framing = Framing::Length {
        fields: vec![LengthField::parse("10:4:le").unwrap()],
        constant: 0,
    };
    let mut c = config(addr, framing, b"hello", 50);
    c.greeting = 14;
    let outcome = floor::run(&c).unwrap();
    assert!(outcome.calls >= 50);
    assert_eq!(outcome.reply_bytes, 16);
}

#[test]
fn http1_replies_end_after_their_content_length() {
    let request = b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi";
    let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".to_vec();
    let (addr, served) = server(b"", request.len(), reply.clone());
    let outcome = floor::run(&config(addr, Framing::Http1, request, 200)).unwrap();
    assert!(outcome.calls >= 200);
    assert_eq!(outcome.reply_bytes, reply.len());
    assert!(served.load(Ordering::Relaxed) >= outcome.calls);
}

#[test]
fn a_server_that_closes_is_an_error_not_a_hang() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            drop(s);
        }
    });
    let r = floor::run(&config(addr, Framing::Http1, b"GET / HTTP/1.1\r\n\r\n", 10));
    assert!(r.is_err(), "{r:?}");
}

mod grpc {
    use super::*;
    use tonic::{Request, Response, Status};

    use pb::bench_server::{Bench, BenchServer};
    use rpclab_protocols::protocols::grpc::echo_server::Echo;
    use rpclab_protocols::protocols::grpc::server_pb as pb;

    /// The lab's echo server ([`Echo`]), counting the hellos it answers and
    /// checking their name.
    struct Hello(Arc<AtomicU64>);

    #[tonic::async_trait]
    impl Bench for Hello {
        async fn echo_order(&self, r: Request<pb::Order>) -> Result<Response<pb::Order>, Status> {
            Echo.echo_order(r).await
        }
        async fn echo_orders(
            &self,
            r: Request<pb::OrderList>,
        ) -> Result<Response<pb::OrderList>, Status> {
            Echo.echo_orders(r).await
        }
        async fn echo_string(&self, r: Request<pb::Text>) -> Result<Response<pb::Text>, Status> {
            Echo.echo_string(r).await
        }
        async fn hello(&self, r: Request<pb::Text>) -> Result<Response<pb::Text>, Status> {
            assert_eq!(r.get_ref().value, "aa");
            self.0.fetch_add(1, Ordering::Relaxed);
            Echo.hello(r).await
        }
        async fn empty(&self, r: Request<pb::Nothing>) -> Result<Response<pb::Nothing>, Status> {
            Echo.empty(r).await
        }
    }

    /// The floor's hand-made HTTP/2 (preface, HPACK literals, patched stream
    /// ids) is accepted by tonic/h2 call after call, on every connection.
    #[test]
    fn grpc_calls_over_hand_made_http2_reach_a_tonic_server() {
        let served = Arc::new(AtomicU64::new(0));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        listener.set_nonblocking(true).unwrap();
        let count = Arc::clone(&served);
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                tonic::transport::Server::builder()
                    .add_service(BenchServer::new(Hello(count)))
                    .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener))
                    .await
                    .unwrap();
            });
        });
        let framing = Framing::H2 {
            path: "/rpclab.Bench/Hello".into(),
            authority: addr.to_string(),
        };
        let outcome = floor::run(&config(addr, framing, b"\0\0\0\0\x04\x0a\x02aa", 500)).unwrap();
        assert!(outcome.calls >= 500, "{outcome:?}");
        let served = served.load(Ordering::Relaxed);
        assert!(
            served >= outcome.calls && served <= outcome.calls + 3,
            "{served}"
        );
        // HEADERS, DATA ("hello aa" in a gRPC message) and trailers.
        assert!(outcome.reply_bytes > 9 * 3 + 5 + 10, "{outcome:?}");
    }
}
