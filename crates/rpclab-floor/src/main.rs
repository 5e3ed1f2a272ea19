//! `rpclab-floor`: the raw-socket floor (see [`rpclab_floor`]).
//!
//! One thread, one epoll loop, N connections with one call in flight each,
//! a request encoded once and replayed, replies framed by a length field
//! and never decoded. It prints the window's calls/s and its own CPU-µs per
//! call as one JSON line.
//!
//! ```sh
//! # Thrift framed: a 4-byte big-endian length that excludes itself
//! rpclab-floor --target 127.0.0.1:9090 --request call.bin --length 0:4:be --constant 4
//! # Dubbo: 16-byte header, body length at offset 12
//! rpclab-floor --target 127.0.0.1:20880 --request call.bin --length 12:4:be --constant 16
//! # Ice: the server's 14-byte ValidateConnection first, the size at offset 10
//! rpclab-floor --target 127.0.0.1:10000 --request call.bin --greeting 14 --length 10:4:le
//! # bolt: a 20-byte response header with the class, header and content lengths
//! rpclab-floor --target 127.0.0.1:12200 --request call.bin --length 12:2:be --length 14:2:be --length 16:4:be --constant 20
//! # motan2: metadata and body after the 13-byte header, each after its length
//! rpclab-floor --target 127.0.0.1:8002 --request call.bin --framing motan2
//! # HTTP/1.1 keep-alive (Hessian, SOAP): the whole request, head and body
//! rpclab-floor --target 127.0.0.1:8080 --request post.http --framing http1
//! # gRPC: the gRPC message (5-byte prefix + protobuf) to a method path
//! rpclab-floor --target 127.0.0.1:50052 --request hello.grpc --framing h2 --path /rpclab.Bench/Hello
//! ```

use clap::{Parser, ValueEnum};
use rpclab_floor::{self as floor, Config, Framing, LengthField};
use std::net::ToSocketAddrs;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Clone, Copy, ValueEnum)]
enum FramingKind {
    /// Binary messages sized by length fields (--length, --constant).
    Length,
    /// motan2: metadata and body after the header, each after its length.
    Motan2,
    /// HTTP/1.1 replies with Content-Length.
    Http1,
    /// gRPC over HTTP/2 (--path).
    H2,
}

/// The raw-socket floor: replays one pre-encoded request on N connections
/// (one call in flight each) and reads each reply by its framing, without
/// decoding. Not a verifying client: a yardstick for one.
#[derive(Parser)]
#[command(name = "rpclab-floor", version)]
struct Cli {
    /// host:port of the server.
    #[arg(long)]
    target: String,
    /// File with the request: the whole message (length, http1) or the gRPC
    /// message with its 5-byte prefix (h2).
    #[arg(long)]
    request: PathBuf,
    /// How a reply's end is found: length fields, HTTP/1.1's
    /// Content-Length, or HTTP/2's END_STREAM.
    #[arg(long, value_enum, default_value = "length")]
    framing: FramingKind,
    /// Length field offset:width:be|le (repeatable; their sum is used).
    #[arg(long = "length", value_parser = LengthField::parse)]
    lengths: Vec<LengthField>,
    /// Added to the length fields' sum to give the message's size, e.g. 4
    /// when a 4-byte length excludes itself, 16 for Dubbo's header.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    constant: i64,
    /// HTTP/2 :path of the gRPC method.
    #[arg(long, default_value = "/rpclab.Bench/Hello")]
    path: String,
    /// Bytes the server sends first on each connection, skipped (Ice: 14).
    #[arg(long, default_value_t = 0)]
    greeting: usize,
    /// Connections, each with one call in flight.
    #[arg(long, default_value_t = 1)]
    connections: usize,
    /// Seconds of calls before the window, not counted.
    #[arg(long, default_value_t = 1.0)]
    warmup_s: f64,
    /// Seconds of the measured window.
    #[arg(long, default_value_t = 5.0)]
    duration_s: f64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rpclab-floor: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), String> {
    let target = cli
        .target
        .to_socket_addrs()
        .map_err(|e| format!("target `{}`: {e}", cli.target))?
        .next()
        .ok_or_else(|| format!("target `{}` has no address", cli.target))?;
    let request = std::fs::read(&cli.request)
        .map_err(|e| format!("cannot read {}: {e}", cli.request.display()))?;
    let framing = match cli.framing {
        FramingKind::Length if cli.lengths.is_empty() => {
            return Err("--framing length needs at least one --length offset:width:be|le".into())
        }
        FramingKind::Length => Framing::Length {
            fields: cli.lengths,
            constant: cli.constant,
        },
        FramingKind::Motan2 => Framing::Motan2,
        FramingKind::Http1 => Framing::Http1,
        FramingKind::H2 => Framing::H2 {
            path: cli.path,
            authority: cli.target.clone(),
        },
    };
    if !(cli.duration_s > 0.0 && cli.warmup_s >= 0.0) {
        return Err("--duration-s must be positive and --warmup-s zero or positive".into());
    }
    let outcome = floor::run(&Config {
        target,
        connections: cli.connections,
        framing,
        request,
        greeting: cli.greeting,
        warmup: Duration::from_secs_f64(cli.warmup_s),
        duration: Duration::from_secs_f64(cli.duration_s),
        max_calls: None,
    })
    .map_err(|e| format!("{}: {e}", cli.target))?;
    println!(
        "{}",
        serde_json::to_string(&outcome).expect("plain numbers serialise")
    );
    Ok(())
}
