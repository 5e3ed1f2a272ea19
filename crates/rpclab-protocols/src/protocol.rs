//! The one abstraction every wire protocol implements.
//!
//! A protocol module turns the contract's [`Call`] into bytes on the wire and
//! the server's reply back into a contract [`Value`]. It knows nothing about
//! load or timing: the load models drive it. Every decoded reply is
//! compared with the expected one in one place, [`verify`], so no protocol
//! can accidentally count a wrong answer as a success; a protocol that
//! verifies replies by their bytes does so only through
//! [`crate::reference`], which vouches only for the bytes of a reply that
//! decoded to the expected value.
//!
//! Methods use `impl Future` rather than boxed futures so that the runner,
//! which is generic over the protocol, pays no allocation per call for
//! dynamic dispatch.

#[doc(no_inline)]
pub use crate::call_error::CallError;
use crate::error_text::listed;
use crate::exchange::Exchange;
#[doc(no_inline)]
pub use crate::exchange::NoExchange;
use rpclab_model::contract::{Call, Value};
use rpclab_model::result::{GenericCall, TlsSetting};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A kind of server endpoint the client can talk to (gRPC, Thrift, ...).
pub trait Protocol: Send + Sync + Sized + 'static {
    type Conn: Connection;

    /// The protocol's calls as a sans-IO exchange ([`crate::exchange`]);
    /// [`NoExchange`] for a protocol that has none.
    type Exchange: Exchange;

    /// Name used by `--protocol` and by server manifests.
    const NAME: &'static str;

    /// How this protocol's connections are used, recorded with every result
    /// (e.g. "multiplexed HTTP/2, many calls in flight per connection").
    const CONNECTION_MODEL: &'static str;

    /// The options whose values are paths of files the protocol reads (a
    /// descriptor set, a request's JSON, a CA certificate). The lab takes
    /// them relative to a server's folder and makes the files reach the
    /// client's and the probe's containers; none by default.
    const FILE_OPTIONS: &'static [&'static str] = &[];

    /// The option that names the method of the user's own service a
    /// generic protocol calls (`call` for `grpc-generic`); `None` (the
    /// default) for a protocol of the contract, whose calls are the
    /// scenario's operation.
    const CALL_OPTION: Option<&'static str> = None;

    /// Builds the protocol from the cell's options. Unknown keys are an error
    /// that names the key and the accepted ones.
    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError>;

    /// Opens one connection to `target` (`host:port`). Wire bytes on it are
    /// added to `counter`.
    fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> impl Future<Output = Result<Self::Conn, CallError>> + Send;

    /// `call` as a sans-IO exchange on a plain TCP connection (`TCP_NODELAY`
    /// set, nothing sent or received but requests and replies), when the
    /// protocol can make it one: the closed loop may then run it on its
    /// poll engine ([`crate::poll_loop`]). `None` (the default): the call
    /// runs on tasks, through [`Protocol::Conn`].
    fn exchange(&self, _call: &Call) -> Result<Option<Self::Exchange>, CallError> {
        Ok(None)
    }

    /// [`Protocol::exchange`] for a connection to `target`, what the poll
    /// engine asks for: by default the same exchange, for a protocol whose
    /// requests do not name the server (gRPC's do: `:authority`).
    fn exchange_to(&self, call: &Call, target: &str) -> Result<Option<Self::Exchange>, CallError> {
        let _ = target;
        self.exchange(call)
    }

    /// The transport security of this protocol's connections, recorded in
    /// the report; `None` (the default) for a protocol without TLS.
    fn tls(&self) -> Option<TlsSetting> {
        None
    }

    /// What a generic call calls (the user's own method, not the
    /// contract's), recorded in the report once the connections are open
    /// (its types may come from the server's reflection); `None` (the
    /// default) for the contract's operations.
    fn generic_call(&self) -> Option<GenericCall> {
        None
    }
}

/// One open connection (or channel) to a server.
///
/// `call` takes `&self`: a multiplexing protocol lets many workers share one
/// connection with many calls in flight; a protocol with one call in flight
/// per connection serialises internally.
pub trait Connection: Send + Sync + 'static {
    /// The call's reply as a contract value.
    fn call(&self, call: &Call) -> impl Future<Output = Result<Value, CallError>> + Send;

    /// The call, its reply verified: equal to `call.expected`, or an
    /// error. The load models make every call through this. By default the
    /// reply is decoded ([`Connection::call`]) and compared ([`verify`]); a
    /// protocol with a reference reply ([`crate::reference`]) verifies a
    /// reply with the reference's bytes without making a value of it.
    fn verified_call(&self, call: &Call) -> impl Future<Output = Result<(), CallError>> + Send {
        async move { verify(self.call(call).await?, call) }
    }

    /// [`Connection::verified_call`], with the messages of a call that
    /// streams (a streaming gRPC method's stream) recorded in `messages`
    /// for the load engine, which records them beside the call once it
    /// knows the call is the window's. A unary call has none to record:
    /// the default makes the call and records nothing.
    fn verified_call_recording(
        &self,
        call: &Call,
        messages: &mut Messages,
    ) -> impl Future<Output = Result<(), CallError>> + Send {
        let _ = messages;
        self.verified_call(call)
    }
}

/// The messages of one streaming call (a stream), as its connection saw
/// them: what the load engine records per message beside the call. One
/// per caller, emptied after each call and reused, so that recording a
/// message allocates nothing once its list has grown to a stream's
/// length.
#[derive(Debug, Default)]
pub struct Messages {
    /// Messages sent on the stream.
    pub sent: u64,
    /// Each message received, in order: its latency, from the later of
    /// the stream's last message sent and last message received (or the
    /// stream's opening).
    pub received: Vec<Duration>,
}

impl Messages {
    /// Empties it for the next call, its capacity kept.
    pub fn clear(&mut self) {
        self.sent = 0;
        self.received.clear();
    }
}

/// A decoded reply compared with the call's expected value.
pub fn verify(reply: Value, call: &Call) -> Result<(), CallError> {
    if reply == call.expected {
        return Ok(());
    }
    let mut got = format!("{reply:?}");
    // At most 160 bytes, cut at a character's boundary.
    let cut = (0..=got.len().min(160))
        .rev()
        .find(|&i| got.is_char_boundary(i))
        .unwrap_or(0);
    got.truncate(cut);
    Err(CallError::WrongResponse(format!(
        "{} returned {got}",
        call.operation
    )))
}

/// Bytes sent and received on the wire, shared by the connections of a cell.
///
/// Relaxed atomic adds: one per socket read or write, not per byte, and
/// never a lock.
#[derive(Clone, Debug, Default)]
pub struct WireCounter(Arc<WireBytes>);

#[derive(Debug, Default)]
pub struct WireBytes {
    sent: AtomicU64,
    received: AtomicU64,
}

impl WireCounter {
    pub fn add_sent(&self, n: usize) {
        self.0.sent.fetch_add(n as u64, Ordering::Relaxed);
    }
    pub fn add_received(&self, n: usize) {
        self.0.received.fetch_add(n as u64, Ordering::Relaxed);
    }
    /// (sent, received) so far.
    pub fn totals(&self) -> (u64, u64) {
        (
            self.0.sent.load(Ordering::Relaxed),
            self.0.received.load(Ordering::Relaxed),
        )
    }
}

/// Rejects option keys a protocol does not know.
pub fn check_options(
    protocol: &str,
    options: &BTreeMap<String, String>,
    known: &[&str],
) -> Result<(), CallError> {
    match options.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(CallError::Config(format!(
            "protocol `{protocol}` has no option `{key}` (known: {})",
            listed(known)
        ))),
        None => Ok(()),
    }
}

/// The options every generic call reads, after its `call`: its request's
/// JSON and its expected reply's, each inline or in a file
/// ([`json_option`]), and whether the expectation is partial.
pub const GENERIC_OPTIONS: &[&str] = &[
    "data",
    "data_file",
    "expect",
    "expect_file",
    crate::expect::PARTIAL_OPTION,
];

/// The JSON of option `key`, or of the file in option `<key>_file` (the
/// generic calls' `data` and `expect`); `flag` names it in errors
/// (`--data`, and `--data-file` for the file).
pub fn json_option(
    options: &BTreeMap<String, String>,
    key: &str,
    flag: &str,
) -> Result<Option<serde_json::Value>, CallError> {
    let file_key = format!("{key}_file");
    let (text, source) = match (options.get(key), options.get(&file_key)) {
        (Some(_), Some(_)) => {
            return Err(CallError::Config(format!(
                "{flag} and {flag}-file both given; pass one"
            )))
        }
        (Some(text), None) => (text.clone(), flag.to_owned()),
        (None, Some(path)) => (
            std::fs::read_to_string(path)
                .map_err(|e| CallError::Config(format!("cannot read {flag}-file {path}: {e}")))?,
            format!("{flag}-file {path}"),
        ),
        (None, None) => return Ok(None),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| CallError::Config(format!("{source} is not JSON: {e}")))
}

/// [`json_option`], where a file may also hold one JSON message a line (as
/// ghz's data files may): its lines become a JSON array, a data array sent
/// round-robin. A line that is not JSON is named by its number.
pub fn json_lines_option(
    options: &BTreeMap<String, String>,
    key: &str,
    flag: &str,
) -> Result<Option<serde_json::Value>, CallError> {
    let whole = json_option(options, key, flag);
    let Some(path) = options.get(&format!("{key}_file")) else {
        return whole;
    };
    if whole.is_ok() {
        return whole;
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| CallError::Config(format!("cannot read {flag}-file {path}: {e}")))?;
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .collect();
    if lines.len() < 2 {
        return whole;
    }
    lines
        .into_iter()
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| {
                CallError::Config(format!(
                    "{flag}-file {path}: line {} is not JSON ({e}); give one JSON value, \
                     or one JSON message a line",
                    i + 1
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(|messages| Some(serde_json::Value::Array(messages)))
}

/// How long a generic call's first, verified call may take (and gRPC's
/// reflection before it).
pub const FIRST_CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// A generic call's first call (`call`, within [`FIRST_CALL_TIMEOUT`]),
/// made before anything is measured: a failure becomes one wrong response
/// that names `what` was called and says that nothing was measured.
pub async fn first_call_verified<T>(
    what: &str,
    call: impl Future<Output = Result<T, CallError>>,
) -> Result<T, CallError> {
    let outcome = tokio::time::timeout(FIRST_CALL_TIMEOUT, call)
        .await
        .unwrap_or(Err(CallError::Timeout));
    outcome.map_err(|e| {
        let why = match e {
            CallError::WrongResponse(m) | CallError::Config(m) => m,
            other => other.to_string(),
        };
        CallError::WrongResponse(format!(
            "the first call of {what} could not be verified, so nothing was measured: {why}"
        ))
    })
}

/// The longest `heartbeat_s` a protocol accepts: a day.
pub const MAX_HEARTBEAT_S: u64 = 86_400;

/// The `heartbeat_s` option of a multiplexing protocol ([`mux`](crate::mux)):
/// seconds of write silence after which a connection sends a heartbeat,
/// `0` for none. `default_s` applies when the option is absent (`None`:
/// no heartbeat).
pub fn heartbeat_option(
    protocol: &str,
    options: &BTreeMap<String, String>,
    default_s: Option<u64>,
) -> Result<Option<Duration>, CallError> {
    let seconds = match options.get("heartbeat_s") {
        None => default_s,
        Some(s) => match s.parse::<u64>() {
            Ok(0) => None,
            Ok(n) if n <= MAX_HEARTBEAT_S => Some(n),
            _ => {
                return Err(CallError::Config(format!(
                    "option `heartbeat_s` of protocol `{protocol}` must be a number of seconds \
                     from 0 (off) to {MAX_HEARTBEAT_S}, not `{s}`"
                )))
            }
        },
    };
    Ok(seconds.map(Duration::from_secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(heartbeat: &str) -> BTreeMap<String, String> {
        BTreeMap::from([("heartbeat_s".to_owned(), heartbeat.to_owned())])
    }

    #[test]
    fn a_wrong_reply_is_described_in_at_most_160_bytes_whatever_its_characters() {
        let call = rpclab_model::contract::Operation::Hello.call();
        assert!(verify(call.expected.clone(), &call).is_ok());
        for text in [
            "a".repeat(400),
            "✓".repeat(400),
            format!("a{}", "é".repeat(400)),
        ] {
            match verify(Value::Str(text), &call) {
                Err(CallError::WrongResponse(m)) => {
                    assert!(m.starts_with("hello returned Str(\""), "{m}");
                    assert!(m.len() <= 160 + "hello returned ".len(), "{}", m.len());
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn heartbeat_is_seconds_zero_for_off_default_when_absent() {
        let none = BTreeMap::new();
        assert_eq!(
            heartbeat_option("p", &none, Some(15)).unwrap(),
            Some(Duration::from_secs(15))
        );
        assert_eq!(heartbeat_option("p", &none, None).unwrap(), None);
        assert_eq!(heartbeat_option("p", &opts("0"), Some(15)).unwrap(), None);
        assert_eq!(
            heartbeat_option("p", &opts("86400"), None).unwrap(),
            Some(Duration::from_secs(86_400))
        );
        for bad in ["-1", "soon", "86401", ""] {
            let e = heartbeat_option("p", &opts(bad), None).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "configuration: option `heartbeat_s` of protocol `p` must be a number \
                     of seconds from 0 (off) to 86400, not `{bad}`"
                )
            );
        }
    }
}
