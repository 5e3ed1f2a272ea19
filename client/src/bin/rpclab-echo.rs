//! `rpclab-echo`: a minimal, fast tonic server of the contract's gRPC
//! service `rpclab.Bench` (`contract/bench.proto`).
//!
//! **This is a tool to find the load client's ceiling, not a server under
//! test.** `cargo xtask bench client` starts it pinned on its own CPUs and
//! drives it with the load client, so that what limits the numbers is the
//! client as far as possible: it does the least a correct server can do (no
//! logging, no interceptors, no per-call state) and is never part of a lab
//! run's results. It follows the contract's rules like every server (echoes
//! return their argument, `hello` returns `"hello " + name`, `empty` does
//! nothing), so every call the client makes against it is verified.
//!
//! It listens on `127.0.0.1:$RPCLAB_PORT` (default 50052). On one CPU it
//! runs tokio's current-thread scheduler, which saves the cross-thread
//! wake-ups of the multi-thread one; on more, one worker per CPU it may use.
//! SIGTERM or Ctrl-C stop it.

use clap::Parser;
use std::net::{Ipv4Addr, SocketAddr};

/// The server half of the contract's generated gRPC code, and the
/// contract's service done with as little work as possible.
use rpclab_protocols::protocols::grpc::echo_server::Echo;
use rpclab_protocols::protocols::grpc::server_pb::bench_server::BenchServer;

/// Port used when `RPCLAB_PORT` is not set.
const DEFAULT_PORT: u16 = 50052;

/// Largest message each way: the contract's largest payload is 1 MiB; the
/// client allows the same 16 MiB.
const MAX_MESSAGE_SIZE: usize = 16 * 1024 * 1024;

/// HTTP/2 streams a connection may have open at once, advertised to the
/// client: far above the bench's largest closed loop (256 workers on one
/// connection), so no call waits in the client for a free stream.
const MAX_CONCURRENT_STREAMS: u32 = 4096;

/// A minimal, fast gRPC server of the contract's `rpclab.Bench` service:
/// the tool `cargo xtask bench client` measures the load client against,
/// not a server under test. It has no flags: it listens on
/// 127.0.0.1:$RPCLAB_PORT (default 50052) until SIGTERM or Ctrl-C.
#[derive(Parser)]
#[command(name = "rpclab-echo", version)]
struct Cli {}

fn port() -> Result<u16, String> {
    match std::env::var("RPCLAB_PORT") {
        Err(_) => Ok(DEFAULT_PORT),
        Ok(v) if v.trim().is_empty() => Ok(DEFAULT_PORT),
        Ok(v) => v
            .trim()
            .parse()
            .map_err(|_| format!("RPCLAB_PORT must be a TCP port number, got `{v}`")),
    }
}

/// Resolves on SIGTERM (what the engine sends) or Ctrl-C.
async fn shutdown() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

fn main() {
    Cli::parse();
    let port = port().unwrap_or_else(|e| {
        eprintln!("rpclab-echo: {e}");
        std::process::exit(2);
    });
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let threads = rpclab_client::runtime::available_cpus();
    let runtime = rpclab_client::runtime::for_cpus(threads).unwrap_or_else(|e| {
        eprintln!("rpclab-echo: cannot start the async runtime: {e}");
        std::process::exit(1);
    });
    let service = BenchServer::new(Echo)
        .max_decoding_message_size(MAX_MESSAGE_SIZE)
        .max_encoding_message_size(MAX_MESSAGE_SIZE);
    eprintln!(
        "rpclab-echo: rpclab.Bench on {addr} ({threads} thread{}); a ceiling tool, not a server under test",
        if threads == 1 { "" } else { "s" }
    );
    let served = runtime.block_on(
        tonic::transport::Server::builder()
            .tcp_nodelay(true)
            .max_concurrent_streams(MAX_CONCURRENT_STREAMS)
            .add_service(service)
            .serve_with_shutdown(addr, shutdown()),
    );
    if let Err(e) = served {
        eprintln!("rpclab-echo: cannot serve on {addr}: {e}");
        std::process::exit(1);
    }
}
