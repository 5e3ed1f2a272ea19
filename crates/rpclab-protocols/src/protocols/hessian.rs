//! Hessian over HTTP: Caucho's Hessian 2.0 RPC (`HessianServlet` on the
//! server, `HessianProxy` in Java clients), and Dubbo's `hessian` protocol,
//! which serves the same envelope from its own servlet.
//!
//! Each call is one HTTP/1.1 `POST` of a Hessian 2 call (`H 2 0 C method
//! argc args`) with `Content-Type: x-application/hessian`; the reply is a
//! Hessian 2 reply (`H 2 0 R value`) or fault (`H 2 0 F {code, message,
//! detail}`), the latter reported as a server error with its code and
//! message. See [`codec`].
//!
//! # Options
//!
//! * `path`: the servlet's path (default `/hessian/bench`, where
//!   `servers/hessian-servlet` maps it; Dubbo's hessian protocol serves
//!   `/rpclab.contract.BenchService`).
//! * `pool`: TCP connections per lab connection (default 128; see
//!   [`crate::http`]).
//! * `tls`, `cacert`, `server_name`, `cert`, `key`: HTTPS, as gRPC's
//!   ([`crate::tls`]); plaintext by default.
//!
//! # Connections
//!
//! HTTP/1.1 keep-alive, one request in flight per TCP connection: a lab
//! connection is a pool of up to `pool` connections opened on demand, so N
//! workers sharing one "client" (seed 002's shape) use up to N connections,
//! as N Java threads sharing one `HessianProxy` do.
//!
//! # Per-call work
//!
//! The whole request (head and Hessian call) is built on the first call and
//! sent again as long as the calls are the same ([`RequestCache`]); per
//! call, one write, the reply read into the connection's reused buffer, its
//! head scanned once, and the body, where it lies in that buffer, compared
//! with the call's reference reply ([`crate::reference`]) or, when it
//! differs, decoded straight into the contract value (see [`crate::http`]).

pub mod codec;

use self::codec::Method;
use crate::http::{HttpPool, RequestCache};
use crate::protocol::{CallError, Protocol, WireCounter};
use crate::reference::{ReferenceExchange, Reply};
use crate::tls::{Alpn, Transport};
use rpclab_model::contract::Call;
use rpclab_model::result::TlsSetting;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where `servers/hessian-servlet` maps its `HessianServlet`.
pub const DEFAULT_PATH: &str = "/hessian/bench";

/// Hessian over HTTP, with its options.
#[derive(Debug)]
pub struct Hessian {
    path: Arc<str>,
    pool: usize,
    transport: Transport,
}

impl Hessian {
    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn pool(&self) -> usize {
        self.pool
    }
}

/// Parses the `pool` option shared by the HTTP protocols.
pub(crate) fn pool_option(
    protocol: &str,
    options: &BTreeMap<String, String>,
) -> Result<usize, CallError> {
    match options.get("pool") {
        None => Ok(crate::http::DEFAULT_POOL),
        Some(s) => match s.parse::<usize>() {
            Ok(n) if (1..=10_000).contains(&n) => Ok(n),
            _ => Err(CallError::Config(format!(
                "option `pool` of protocol `{protocol}` must be a number of connections from 1 to 10000, not `{s}`"
            ))),
        },
    }
}

/// Checks a `path` option: an absolute HTTP path.
pub(crate) fn path_option(
    protocol: &str,
    options: &BTreeMap<String, String>,
    default: &str,
) -> Result<Arc<str>, CallError> {
    let path = options.get("path").map_or(default, String::as_str);
    if !path.starts_with('/') || path.parse::<::http::Uri>().is_err() {
        return Err(CallError::Config(format!(
            "option `path` of protocol `{protocol}` must be an absolute HTTP path such as `{default}`, not `{path}`"
        )));
    }
    Ok(Arc::from(path))
}

impl Protocol for Hessian {
    type Conn = HessianConnection;
    type Exchange = crate::protocol::NoExchange;

    const NAME: &'static str = "hessian";

    const CONNECTION_MODEL: &'static str =
        "HTTP/1.1 keep-alive: one call in flight per TCP connection; \
         each connection is a pool of up to `pool` TCP connections opened on demand";

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        crate::tls::check_options(Self::NAME, options, &["path", "pool"])?;
        Ok(Hessian {
            path: path_option(Self::NAME, options, DEFAULT_PATH)?,
            pool: pool_option(Self::NAME, options)?,
            transport: Transport::from_options(Self::NAME, options, Alpn::Http1)?,
        })
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<HessianConnection, CallError> {
        Ok(HessianConnection {
            pool: HttpPool::connect(&self.transport, target, counter, self.pool).await?,
            path: Arc::clone(&self.path),
            request: RequestCache::default(),
        })
    }

    fn tls(&self) -> Option<TlsSetting> {
        Some(self.transport.setting())
    }
}

/// A pool of keep-alive connections to one Hessian servlet.
#[derive(Debug)]
pub struct HessianConnection {
    pool: HttpPool,
    path: Arc<str>,
    request: RequestCache,
}

impl HessianConnection {
    /// The HTTP pool underneath (its size and open connections).
    pub fn http(&self) -> &HttpPool {
        &self.pool
    }
}

impl ReferenceExchange for HessianConnection {
    /// One exchange: the request sent, its reply checked against the
    /// reference reply, or decoded.
    async fn exchange(&self, call: &Call) -> Result<Reply, CallError> {
        let method = Method::of(call)?;
        let request = self.request.get_or_build(call, || {
            let mut body = Vec::with_capacity(codec::call_capacity(&call.argument));
            codec::encode_call(&mut body, method, &call.argument)?;
            self.pool.build(
                "POST",
                &self.path,
                &[("Content-Type", codec::CONTENT_TYPE)],
                &body,
            )
        })?;
        self.pool
            .send_with(request.bytes(), |reply| {
                if reply.status != ::http::StatusCode::OK {
                    return Err(http_status_error(&self.path, reply.status, reply.body));
                }
                request.reply_of(reply.body, &call.expected, |b| {
                    codec::decode_reply(b, method)
                })
            })
            .await?
    }
}

/// A reply whose HTTP status is not 200, as an error that says what to do.
pub(crate) fn http_status_error(path: &str, status: ::http::StatusCode, body: &[u8]) -> CallError {
    let mut text = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
    text.retain(|c| !c.is_control());
    match status.as_u16() {
        404 | 405 => CallError::Config(format!(
            "HTTP {status} for path `{path}`: no service there; check the `path` option ({text})"
        )),
        // What Tomcat answers a plaintext request on its TLS port: another
        // protocol than the one spoken, as gRPC's TLS record is.
        400 if text.contains("requires TLS") => CallError::Protocol(format!(
            "HTTP {status}: the server speaks TLS, not plaintext HTTP ({text}); connect with \
             --tls, --cacert or --skipTLS"
        )),
        _ => CallError::Server(format!("HTTP {status} for path `{path}`: {text}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::{assert_refused, options as opts};

    #[test]
    fn options() {
        let h = Hessian::new(&opts(&[])).unwrap();
        assert_eq!(
            (h.path(), h.pool()),
            (DEFAULT_PATH, crate::http::DEFAULT_POOL)
        );
        let h = Hessian::new(&opts(&[
            ("path", "/rpclab.contract.BenchService"),
            ("pool", "4"),
        ]))
        .unwrap();
        assert_eq!((h.path(), h.pool()), ("/rpclab.contract.BenchService", 4));
        // A cell records its transport: plaintext unless asked.
        assert_eq!(h.tls(), Some(TlsSetting::Plaintext));
        let https = Hessian::new(&opts(&[("tls", "skip-verify")])).unwrap();
        assert!(matches!(https.tls(), Some(TlsSetting::Unverified { .. })));
        assert_refused::<Hessian>(&[
            &[("path", "hessian")],
            &[("path", "/a b")],
            &[("pool", "0")],
            &[("pool", "many")],
            &[("serialization", "hessian2")],
        ]);
    }
}
