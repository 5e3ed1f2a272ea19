//! ZeroC Ice: the Ice protocol 1.0 with encoding 1.1 over TCP, against
//! `rpclab::Bench` (`contract/bench.ice`) served by `servers/ice-*`, either
//! at a direct endpoint or located through IceGrid.
//!
//! # Options
//!
//! * `identity`: the object's identity (default `bench`).
//! * `adapter`: an adapter id (e.g. `BenchAdapter`). When set, the proxy
//!   is indirect (`bench @ BenchAdapter`): its endpoints come from the
//!   `locator` (required then), resolved once per protocol instance and
//!   cached, as Ice does; the target is not used. Without it the proxy is
//!   direct: `bench:tcp` at the target.
//! * `locator`: the locator's proxy, e.g.
//!   `IceGrid/Locator:tcp -h 127.0.0.1 -p 10000` (IceGrid's registry).
//! * `heartbeat_s`: seconds of write silence after which the connection
//!   sends a validate-connection message, Ice's heartbeat (default 30: half
//!   of the server's default ACM timeout of 60 s, after which an idle
//!   connection would be closed; 0 disables).
//!
//! # Connections
//!
//! Multiplexed, as Ice's own: see [`mux`](crate::mux) (one TCP connection,
//! many twoway requests in flight matched by request id, a coalescing
//! writer, a reader that only frames, replies decoded on the callers'
//! tasks). What is Ice's:
//!
//! * a connection is usable once the server's validate-connection message
//!   has arrived (Ice servers send it first; a peer that sends anything
//!   else is not an Ice server): [`validated`] waits for it before
//!   the mux starts;
//! * request ids run 1, 2, ... and wrap to 1 after `i32::MAX`, as Ice's
//!   (0 means oneway);
//! * in [`IceFraming`]: validate-connection messages from the server (its
//!   heartbeats) are skipped; close-connection from the server fails every
//!   waiting call and every later one, saying so; a request from the
//!   server is out of step (bidirectional connections are not part of the
//!   contract); the heartbeat is a validate-connection message (see
//!   `heartbeat_s`); and when the connection is dropped the writer sends
//!   close-connection before shutting the socket down, Ice's graceful
//!   close.
//!
//! On the poll engine (a direct proxy, one call in flight per
//! connection), a connection is an [`IceExchange`]: the same encoder and
//! decoder ([`IceCalls`]) and the same framing, request ids counted per
//! connection. It does not wait for the validate-connection message before
//! its first request (the server reads the request once it has validated
//! the connection); it skips it, as the server's later heartbeats, when it
//! reads the reply.
//!
//! # Per-call work
//!
//! One request buffer, sized up front; the reply is decoded straight into
//! the contract value. On the poll engine the request is encoded once and
//! restamped with each call's id, and a string reply is compared with the
//! expected string where it lies in the reply, no value made
//! ([`codec::is_expected`]; any other reply is decoded and compared). The
//! rest is the mux's.

pub mod codec;
pub mod locator;

use self::codec::{Header, Identity, TcpEndpoint, HEADER_LEN};
use self::locator::LocatorProxy;
use crate::mux::{Framing, Inbound, Split};
use crate::mux_connection::MuxConnection;
use crate::mux_exchange::{CallCodec, MuxExchange};
use crate::net::{connect_tcp, CountingStream};
use crate::protocol::{check_options, heartbeat_option, CallError, Protocol, WireCounter};
use bytes::Bytes;
use rpclab_model::contract::{Call, Value};
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::OnceCell;

/// Default seconds of write silence before a heartbeat.
pub const DEFAULT_HEARTBEAT_S: u64 = 30;

/// How long a new connection waits for the server's validate-connection
/// message, and a locator lookup for its answer.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The Ice protocol, with its options.
#[derive(Debug)]
pub struct Ice {
    identity: Identity,
    heartbeat: Option<Duration>,
    location: Option<Location>,
}

/// An indirect proxy's adapter, its locator and the cached resolution.
#[derive(Debug)]
struct Location {
    adapter: String,
    locator: LocatorProxy,
    endpoints: OnceCell<Vec<TcpEndpoint>>,
}

impl Ice {
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    pub fn heartbeat(&self) -> Option<Duration> {
        self.heartbeat
    }

    /// The endpoints the locator returned, once resolved.
    pub fn located_endpoints(&self) -> Option<&[TcpEndpoint]> {
        self.location
            .as_ref()
            .and_then(|l| l.endpoints.get())
            .map(Vec::as_slice)
    }

    /// The address to dial: the target, or the located adapter's first
    /// endpoint (resolved at the first call, then cached).
    async fn address(&self, target: &str) -> Result<String, CallError> {
        let Some(location) = &self.location else {
            return Ok(target.to_owned());
        };
        let endpoints = location
            .endpoints
            .get_or_try_init(|| {
                location
                    .locator
                    .find_adapter(&location.adapter, HANDSHAKE_TIMEOUT)
            })
            .await?;
        let e = &endpoints[0];
        Ok(format!("{}:{}", e.host, e.port))
    }
}

impl Protocol for Ice {
    type Conn = IceConnection;
    type Exchange = IceExchange;

    const NAME: &'static str = "ice";

    const CONNECTION_MODEL: &'static str =
        "multiplexed: many twoway requests in flight per connection, matched by request id";

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        check_options(
            Self::NAME,
            options,
            &["identity", "adapter", "locator", "heartbeat_s"],
        )?;
        let identity = Identity::parse(options.get("identity").map_or("bench", String::as_str));
        if identity.name.is_empty() {
            return Err(CallError::Config(
                "option `identity` of protocol `ice` must name an object".into(),
            ));
        }
        let heartbeat = heartbeat_option(Self::NAME, options, Some(DEFAULT_HEARTBEAT_S))?;
        let location = match (options.get("adapter"), options.get("locator")) {
            (Some(adapter), Some(locator)) => Some(Location {
                adapter: adapter.clone(),
                locator: LocatorProxy::parse(locator)?,
                endpoints: OnceCell::new(),
            }),
            (None, None) => None,
            (Some(_), None) => {
                return Err(CallError::Config(
                    "protocol `ice`: option `adapter` needs `locator` (e.g. \
                     `IceGrid/Locator:tcp -h 127.0.0.1 -p 10000`) to resolve it"
                        .into(),
                ))
            }
            (None, Some(_)) => {
                return Err(CallError::Config(
                    "protocol `ice`: option `locator` is used only with `adapter` \
                     (the adapter id of an indirect proxy, e.g. `BenchAdapter`)"
                        .into(),
                ))
            }
        };
        Ok(Ice {
            identity,
            heartbeat,
            location,
        })
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<IceConnection, CallError> {
        let address = self.address(target).await?;
        let stream = connect_tcp(&address).await?;
        let (read, write) = stream.into_split();
        let read = validated(CountingStream::new(read, counter.clone())).await?;
        let calls = IceCalls {
            identity: self.identity.clone(),
        };
        Ok(IceConnection::start(
            read,
            CountingStream::new(write, counter),
            self.heartbeat,
            calls,
        ))
    }

    /// A direct proxy's calls: the poll engine dials the target, so an
    /// indirect proxy (its address from the locator) runs on tasks.
    fn exchange(&self, call: &Call) -> Result<Option<IceExchange>, CallError> {
        if self.location.is_some() {
            return Ok(None);
        }
        let calls = IceCalls {
            identity: self.identity.clone(),
        };
        Ok(Some(MuxExchange::new(calls, call)))
    }
}

/// An Ice call, one at a time on its own connection (the poll engine's).
pub type IceExchange = MuxExchange<IceCalls>;

/// Ice's requests to one object, and their replies: what an
/// [`IceConnection`] and an [`IceExchange`] both encode and decode.
#[derive(Debug, Clone)]
pub struct IceCalls {
    identity: Identity,
}

impl CallCodec for IceCalls {
    type Framing = IceFraming;

    fn framing(&self) -> IceFraming {
        IceFraming
    }

    fn request_capacity(&self, call: &Call) -> usize {
        codec::request_capacity(
            &self.identity,
            call.operation.method().name(),
            &call.argument,
        )
    }

    fn encode(&self, out: &mut Vec<u8>, id: u64, call: &Call) -> Result<(), CallError> {
        out.clear();
        // Within 1..=i32::MAX (IceFraming's ids).
        codec::encode_call(
            out,
            id as i32,
            &self.identity,
            call.operation.method(),
            &call.argument,
        )
    }

    fn restamp(&self, request: &mut [u8], id: u64) -> bool {
        // Within 1..=i32::MAX, as in `encode`.
        codec::restamp_request(request, id as i32)
    }

    fn decode(&self, body: &Bytes, call: &Call) -> Result<Value, CallError> {
        codec::decode_reply(body, call.operation.method())
    }

    fn is_expected(&self, body: &Bytes, call: &Call) -> bool {
        codec::is_expected(body, call.operation.method(), &call.expected)
    }
}

/// One Ice connection, shared by many callers (see [`mux`](crate::mux)),
/// started once the server has validated it ([`validated`]).
pub type IceConnection = MuxConnection<IceCalls>;

/// `read` once the server's validate-connection message has come on it
/// (and been consumed): what an Ice connection waits for before it starts.
pub async fn validated<R: AsyncRead + Unpin>(mut read: R) -> Result<R, CallError> {
    let mut first = [0u8; HEADER_LEN];
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, read.read_exact(&mut first)).await {
        Err(_) => {
            return Err(CallError::Connect(format!(
                "no validate-connection message from the server within {HANDSHAKE_TIMEOUT:?}: \
                 is it an Ice server?"
            )))
        }
        Ok(Err(e)) => {
            return Err(CallError::Connect(format!(
                "the server closed the connection before validating it: {e}"
            )))
        }
        Ok(Ok(_)) => {}
    }
    let h = Header::decode(&first).map_err(|e| CallError::Connect(e.to_string()))?;
    if h.message_type != codec::VALIDATE_CONNECTION {
        return Err(CallError::Connect(format!(
            "the server's first message is of type {}, not validate-connection",
            h.message_type
        )));
    }
    Ok(read)
}

/// Ice's messages, for the [`mux`](crate::mux) (see the module
/// documentation). A caller gets its reply's body, from the status byte.
#[derive(Debug)]
pub struct IceFraming;

impl Framing for IceFraming {
    const NAME: &'static str = "ice";
    const FIRST_ID: u64 = 1;
    const MAX_ID: u64 = i32::MAX as u64;
    type Head = Header;
    type Reply = Bytes;

    fn split(&self, buf: &[u8]) -> Result<Split<Header>, CallError> {
        Ok(match codec::frame(buf)? {
            Some(head) => Split::Whole {
                len: head.size,
                head,
            },
            None if buf.len() >= HEADER_LEN => Split::Partial {
                len: Some(Header::decode(buf)?.size),
            },
            None => Split::Partial { len: None },
        })
    }

    fn route(&self, header: Header, message: Bytes) -> Result<Inbound<Bytes>, CallError> {
        Ok(match header.message_type {
            codec::REPLY => {
                // A negative id matches no call.
                let id = codec::reply_request_id(&message)? as u32;
                Inbound::Reply {
                    id: id.into(),
                    reply: message.slice(HEADER_LEN + 4..),
                }
            }
            codec::VALIDATE_CONNECTION => Inbound::Skip, // the server's heartbeat
            codec::CLOSE_CONNECTION => Inbound::Close(
                "the server closed the ice connection (close-connection message)".into(),
            ),
            other => {
                return Err(CallError::Protocol(format!(
                    "the server sent a message of type {other} (a request) on a client \
                     connection; bidirectional connections are not part of the contract"
                )))
            }
        })
    }

    /// A validate-connection message; it needs no request id.
    fn heartbeat(&self, _id: impl FnOnce() -> u64) -> Result<Bytes, CallError> {
        Ok(Bytes::from_static(&VALIDATE_CONNECTION_MESSAGE))
    }

    /// Close-connection (then the mux sends FIN).
    fn goodbye(&self) -> Option<Bytes> {
        Some(Bytes::from_static(&CLOSE_CONNECTION_MESSAGE))
    }
}

static VALIDATE_CONNECTION_MESSAGE: [u8; HEADER_LEN] = message(codec::VALIDATE_CONNECTION);
static CLOSE_CONNECTION_MESSAGE: [u8; HEADER_LEN] = message(codec::CLOSE_CONNECTION);

/// A header-only message, as [`codec::validate_connection`] and
/// [`codec::close_connection`] build it (in a `static`, for `Bytes`).
const fn message(message_type: u8) -> [u8; HEADER_LEN] {
    [
        b'I',
        b'c',
        b'e',
        b'P',
        1,
        0,
        1,
        0,
        message_type,
        0,
        HEADER_LEN as u8,
        0,
        0,
        0,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mux::{check_split, route_all};

    use crate::testing::{assert_refused, options as opts};

    #[test]
    fn options() {
        let ice = Ice::new(&opts(&[])).unwrap();
        assert_eq!(ice.identity().name, "bench");
        assert_eq!(ice.heartbeat(), Some(Duration::from_secs(30)));
        let ice = Ice::new(&opts(&[
            ("adapter", "BenchAdapter"),
            ("locator", "IceGrid/Locator:tcp -h 127.0.0.1 -p 10000"),
            ("heartbeat_s", "0"),
        ]))
        .unwrap();
        assert_eq!(ice.heartbeat(), None);
        assert!(ice.located_endpoints().is_none());
        assert_refused::<Ice>(&[
            &[("adapter", "BenchAdapter")],
            &[("locator", "IceGrid/Locator:tcp -h 127.0.0.1 -p 1")],
            &[("heartbeat_s", "soon")],
            &[("identity", "")],
            &[("transport", "x")],
        ]);
    }

    /// A request is encoded once per exchange and restamped with each
    /// call's id, the same bytes as encoded, up to the largest id.
    #[test]
    fn restamped_requests_are_encoded_requests() {
        let calls = IceCalls {
            identity: Identity::parse("bench"),
        };
        crate::testing::restamped_requests_are_encoded_requests(
            &calls,
            &[1, 2, 0x0102_0304, i32::MAX as u64],
        );
    }

    #[test]
    fn the_heartbeat_and_goodbye_are_validate_and_close_connection() {
        assert_eq!(
            &IceFraming.heartbeat(|| unreachable!()).unwrap()[..],
            codec::validate_connection()
        );
        assert_eq!(
            &IceFraming.goodbye().unwrap()[..],
            codec::close_connection()
        );
    }

    #[test]
    fn routes_replies_skips_heartbeats_and_stops_at_close_or_requests() {
        let mut reply = Vec::new();
        codec::encode_reply(&mut reply, 7, codec::ReplyStatus::Ok, |o| {
            codec::write_value(o, &Value::Str("hi".into()))
        });
        let mut stream = codec::validate_connection().to_vec();
        stream.extend_from_slice(&reply);
        stream.extend_from_slice(&codec::close_connection());
        stream.extend_from_slice(&reply[..HEADER_LEN + 2]);
        let (routes, rest) = route_all(&IceFraming, &stream).unwrap();
        assert_eq!(rest, Some(reply.len()));
        match &routes[..] {
            [Inbound::Skip, Inbound::Reply { id: 7, reply: body }, Inbound::Close(why)] => {
                assert_eq!(&body[..], &reply[HEADER_LEN + 4..]);
                assert!(why.contains("close-connection"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        let mut request = Vec::new();
        codec::encode_call(
            &mut request,
            1,
            &Identity::parse("bench"),
            codec::Method::Hello,
            &Value::Str("x".into()),
        )
        .unwrap();
        assert!(matches!(
            route_all(&IceFraming, &request),
            Err(CallError::Protocol(_))
        ));
        let mut bad_magic = codec::validate_connection();
        bad_magic[0] = b'X';
        check_split(&IceFraming, &reply, HEADER_LEN, &[&bad_magic]);
    }
}
