//! ghz's command line, flag for flag (ghz v0.121's `--help`, and
//! <https://ghz.sh/docs/options>), as `rpclab-client ghz` takes it.
//!
//! Every flag ghz has is here, so that a ghz command line parses as it is;
//! what each means, and which ones are refused with a reason, is
//! [`super::plan`]'s. ghz's booleans take `--flag` or `--flag=true` (its
//! kingpin parser's forms), never a separate value, so that a flag before
//! the target never swallows it.

use clap::{ArgAction, Args};
use std::path::PathBuf;

/// ghz's flags. Defaults are ghz's: 50 workers, 200 calls in total, one
/// connection, TLS on, a 20 s timeout.
#[derive(Args, Debug, Clone)]
pub struct GhzArgs {
    /// host:port of the server (ghz's positional argument).
    pub host: Option<String>,
    /// ghz's JSON or TOML config file (refused: give the flags).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The `.proto` file of the --call service (wins over --protoset).
    #[arg(long)]
    pub proto: Option<PathBuf>,
    /// A compiled descriptor set of the service.
    #[arg(long)]
    pub protoset: Option<PathBuf>,
    /// `package.Service/Method` or `package.Service.Method`.
    #[arg(long)]
    pub call: Option<String>,
    /// Comma-separated import paths of --proto.
    #[arg(short = 'i', long = "import-paths")]
    pub import_paths: Option<String>,
    /// Trusted roots (PEM) to verify the server with.
    #[arg(long)]
    pub cacert: Option<PathBuf>,
    /// The client's certificate (PEM), with --key.
    #[arg(long)]
    pub cert: Option<PathBuf>,
    /// The client's private key (PEM), with --cert.
    #[arg(long)]
    pub key: Option<PathBuf>,
    /// The name the server's certificate is checked for.
    #[arg(long)]
    pub cname: Option<String>,
    /// TLS without verifying the server's certificate.
    #[arg(long = "skipTLS", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", action = ArgAction::Set)]
    pub skip_tls: bool,
    /// Plaintext (ghz's default is TLS).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", action = ArgAction::Set)]
    pub insecure: bool,
    /// The `:authority` to send (refused).
    #[arg(long)]
    pub authority: Option<String>,
    /// Send without waiting for replies (with a rate: rpclab's open loop).
    #[arg(long = "async", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", action = ArgAction::Set)]
    pub asynchronous: bool,
    /// Calls per second in total (no limit by default).
    #[arg(short = 'r', long)]
    pub rps: Option<f64>,
    /// const, step or line.
    #[arg(long = "load-schedule", default_value = "const")]
    pub load_schedule: String,
    /// The first rate of a step or line schedule.
    #[arg(long = "load-start")]
    pub load_start: Option<f64>,
    /// A step's change of rate (a line's per second).
    #[arg(long = "load-step")]
    pub load_step: Option<f64>,
    /// The rate a step or line schedule stops changing at.
    #[arg(long = "load-end")]
    pub load_end: Option<f64>,
    /// How long each step lasts (step schedule).
    #[arg(long = "load-step-duration")]
    pub load_step_duration: Option<String>,
    /// How long the rate changes at most.
    #[arg(long = "load-max-duration")]
    pub load_max_duration: Option<String>,
    /// Workers.
    #[arg(short = 'c', long, default_value_t = 50)]
    pub concurrency: u32,
    /// const, step or line (only const runs: see the plan).
    #[arg(long = "concurrency-schedule", default_value = "const")]
    pub concurrency_schedule: String,
    #[arg(long = "concurrency-start")]
    pub concurrency_start: Option<u32>,
    #[arg(long = "concurrency-end")]
    pub concurrency_end: Option<u32>,
    #[arg(long = "concurrency-step")]
    pub concurrency_step: Option<i64>,
    #[arg(long = "concurrency-step-duration")]
    pub concurrency_step_duration: Option<String>,
    #[arg(long = "concurrency-max-duration")]
    pub concurrency_max_duration: Option<String>,
    /// Calls in total.
    #[arg(short = 'n', long, default_value_t = 200)]
    pub total: u64,
    /// A call's timeout (Go's form; 0: none).
    #[arg(short = 't', long, default_value = "20s")]
    pub timeout: String,
    /// Run this long instead of -n calls (Go's form).
    #[arg(short = 'z', long)]
    pub duration: Option<String>,
    /// At most this long, -n still the goal (refused).
    #[arg(short = 'x', long = "max-duration")]
    pub max_duration: Option<String>,
    /// What happens to calls in flight at -z's end: close, wait, ignore.
    #[arg(long = "duration-stop", default_value = "close")]
    pub duration_stop: String,
    /// The request as JSON; `@`: from standard input.
    #[arg(short = 'd', long)]
    pub data: Option<String>,
    /// The request's JSON from a file.
    #[arg(short = 'D', long = "data-file")]
    pub data_file: Option<PathBuf>,
    /// Binary requests on standard input (refused).
    #[arg(short = 'b', long, num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", action = ArgAction::Set)]
    pub binary: bool,
    /// Binary requests from a file (refused).
    #[arg(short = 'B', long = "binary-file")]
    pub binary_file: Option<PathBuf>,
    /// Metadata as JSON.
    #[arg(short = 'm', long)]
    pub metadata: Option<String>,
    /// Metadata's JSON from a file.
    #[arg(short = 'M', long = "metadata-file")]
    pub metadata_file: Option<PathBuf>,
    #[arg(long = "stream-interval")]
    pub stream_interval: Option<String>,
    #[arg(long = "stream-call-duration")]
    pub stream_call_duration: Option<String>,
    #[arg(long = "stream-call-count")]
    pub stream_call_count: Option<u64>,
    #[arg(long = "stream-dynamic-messages", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", action = ArgAction::Set)]
    pub stream_dynamic_messages: bool,
    /// Metadata of the reflection request only (refused).
    #[arg(long = "reflect-metadata")]
    pub reflect_metadata: Option<String>,
    /// (refused)
    #[arg(long = "max-recv-message-size")]
    pub max_recv_message_size: Option<String>,
    /// (refused)
    #[arg(long = "max-send-message-size")]
    pub max_send_message_size: Option<String>,
    /// Write the output to this file instead of standard output.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// summary, json, pretty, influx-summary, prometheus (csv, html and
    /// influx-details are refused: they list every call).
    #[arg(short = 'O', long, default_value = "summary")]
    pub format: String,
    /// Leave the first N replies out of the figures.
    #[arg(long = "skipFirst", default_value_t = 0)]
    pub skip_first: u64,
    /// Connections the workers share.
    #[arg(long, default_value_t = 1)]
    pub connections: u32,
    /// The dial's timeout (Go's form).
    #[arg(long = "connect-timeout", default_value = "10s")]
    pub connect_timeout: String,
    /// HTTP/2 keep-alive pings (refused).
    #[arg(long)]
    pub keepalive: Option<String>,
    /// The test's name (in the JSON, InfluxDB and Prometheus outputs).
    #[arg(long)]
    pub name: Option<String>,
    /// The test's tags, a JSON object of strings.
    #[arg(long)]
    pub tags: Option<String>,
    /// The client's CPUs (worker threads).
    #[arg(long)]
    pub cpus: Option<usize>,
    /// A debug log file (refused).
    #[arg(long)]
    pub debug: Option<PathBuf>,
    /// gzip the requests (refused).
    #[arg(short = 'e', long = "enable-compression", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", action = ArgAction::Set)]
    pub enable_compression: bool,
    /// gRPC's client load balancing (refused).
    #[arg(long = "lb-strategy")]
    pub lb_strategy: Option<String>,
    /// Failed calls in the latency figures too (refused).
    #[arg(long = "count-errors", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", action = ArgAction::Set)]
    pub count_errors: bool,
    /// Template functions off.
    #[arg(long = "disable-template-functions", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", action = ArgAction::Set)]
    pub disable_template_functions: bool,
    /// Templates off: the data is sent as written.
    #[arg(long = "disable-template-data", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", action = ArgAction::Set)]
    pub disable_template_data: bool,
}
