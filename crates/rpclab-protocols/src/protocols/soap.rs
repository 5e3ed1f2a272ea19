//! SOAP 1.1 web services, document/literal wrapped, over HTTP/1.1: JAX-WS
//! RI (`Endpoint.publish`, seed 002's "Java 6 WebService"), Apache CXF's
//! JAX-WS frontend, and Dubbo's `webservice` protocol (CXF's simple
//! frontend).
//!
//! Each call is one `POST` of an envelope built from the contract's value
//! ([`envelope`]), with `Content-Type: text/xml; charset=utf-8` and the
//! operation's `SOAPAction`; the reply envelope is parsed with quick-xml
//! straight into the contract's value, and a SOAP fault (HTTP 500, or 200)
//! becomes a server error with its faultcode and faultstring.
//!
//! The namespace, the wrapper, parameter and return element names, whether
//! local elements are qualified, the Order's field order and the
//! SOAPActions are read from the service's WSDL ([`wsdl`]) at start-up: once
//! per protocol instance, at the first `connect`, shared by every
//! connection.
//!
//! # Options
//!
//! * `path`: the endpoint's HTTP path (default `/bench`, where
//!   `servers/jaxws-ri` publishes it).
//! * `wsdl`: the WSDL's path and query (default `<path>?wsdl`), or `none`
//!   to skip it and use JAX-WS's default names with `namespace`.
//! * `namespace`: the service namespace when `wsdl = none` (default
//!   `http://contract.rpclab/`).
//! * `pool`: TCP connections per lab connection (default 128; see
//!   [`crate::http`]).
//! * `tls`, `cacert`, `server_name`, `cert`, `key`: HTTPS, as gRPC's
//!   ([`crate::tls`]); plaintext by default. The WSDL is read over the
//!   same transport.
//!
//! # Connections
//!
//! HTTP/1.1 keep-alive, one request in flight per TCP connection; a lab
//! connection is a pool of up to `pool` connections opened on demand.
//!
//! # Per-call work
//!
//! The whole request (head and envelope) is built on the first call and
//! sent again as long as the calls are the same ([`RequestCache`]); per
//! call, one write, the reply read into the connection's reused buffer
//! (see [`crate::http`]) and compared there with the call's reference reply
//! ([`crate::reference`]); a reply that differs from it gets one pass of the
//! pull parser (strings without entities are copied once, into the
//! result).

pub mod envelope;
pub mod wsdl;

use self::envelope::Operation;
use crate::http::{HttpPool, RequestCache};
use crate::java_contract::Method;
use crate::protocol::{CallError, Protocol, WireCounter};
use crate::protocols::hessian::{http_status_error, path_option, pool_option};
use crate::reference::{ReferenceExchange, Reply};
use crate::tls::{Alpn, Transport};
use bytes::Bytes;
use rpclab_model::contract::Call;
use rpclab_model::result::TlsSetting;
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::OnceCell;

/// Where `servers/jaxws-ri` publishes the service.
pub const DEFAULT_PATH: &str = "/bench";

/// Most schema documents followed from one WSDL (imports of imports).
const MAX_DOCUMENTS: usize = 8;

/// One operation, ready to send: its names and its `SOAPAction` header.
#[derive(Debug)]
pub struct Prepared {
    pub op: Operation,
    action: String,
}

impl Prepared {
    fn new(op: Operation) -> Result<Prepared, CallError> {
        let action = format!("\"{}\"", op.soap_action);
        if action.bytes().any(|b| b.is_ascii_control()) {
            return Err(CallError::Config(format!(
                "the SOAPAction {:?} of `{}` is not a valid HTTP header value",
                op.soap_action, op.wrapper
            )));
        }
        Ok(Prepared { op, action })
    }
}

/// SOAP over HTTP, with its options and, after the first connect, the
/// service's description.
#[derive(Debug)]
pub struct Soap {
    path: Arc<str>,
    wsdl: Option<String>,
    namespace: String,
    pool: usize,
    transport: Transport,
    ops: OnceCell<Arc<[Prepared]>>,
}

impl Soap {
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The WSDL's path and query, unless `wsdl = none`.
    pub fn wsdl(&self) -> Option<&str> {
        self.wsdl.as_deref()
    }

    /// The operations, once a connection has read the WSDL.
    pub fn operations(&self) -> Option<impl Iterator<Item = &Operation>> {
        self.ops.get().map(|ops| ops.iter().map(|p| &p.op))
    }

    /// The URL of `path` on `target`, `http` or `https` as the transport is.
    fn url(&self, target: &str, path: &str) -> String {
        format!("{}://{target}{path}", self.transport.scheme())
    }

    async fn describe(&self, pool: &HttpPool, target: &str) -> Result<Arc<[Prepared]>, CallError> {
        let ops: Vec<Operation> = match &self.wsdl {
            None => Method::ALL
                .iter()
                .map(|m| Operation::jaxws_default(*m, &self.namespace))
                .collect(),
            Some(wsdl) => {
                let mut scan = wsdl::Scan::default();
                let mut pending = vec![wsdl.clone()];
                let mut read = 0;
                while let Some(path) = pending.pop() {
                    read += 1;
                    if read > MAX_DOCUMENTS {
                        return Err(CallError::Config(format!(
                            "the WSDL at {wsdl} imports more than {MAX_DOCUMENTS} documents"
                        )));
                    }
                    let body = get(pool, &path, &self.url(target, &path)).await?;
                    let before = scan.imports.len();
                    scan.add(&body).map_err(|e| {
                        CallError::Config(format!("reading {path} from {target}: {e}"))
                    })?;
                    for location in scan.imports[before..].iter() {
                        pending.push(local_path(location, &self.path));
                    }
                }
                wsdl::operations(&scan, &self.url(target, wsdl))?
            }
        };
        ops.into_iter()
            .map(Prepared::new)
            .collect::<Result<Vec<_>, _>>()
            .map(Arc::from)
    }
}

/// A `schemaLocation` as a path on the same server: an absolute URL loses
/// its scheme and authority (a server may advertise another host name than
/// the one the lab reaches it by); a relative one is resolved against the
/// endpoint's path.
fn local_path(location: &str, endpoint: &str) -> String {
    if let Some(rest) = location
        .strip_prefix("http://")
        .or_else(|| location.strip_prefix("https://"))
    {
        return rest
            .find('/')
            .map_or("/".to_owned(), |i| rest[i..].to_owned());
    }
    if location.starts_with('/') {
        return location.to_owned();
    }
    let base = endpoint.rsplit_once('/').map_or("", |(b, _)| b);
    if location.starts_with('?') {
        format!("{endpoint}{location}")
    } else {
        format!("{base}/{location}")
    }
}

/// A GET of `path`, which is at `url` (named in an error).
async fn get(pool: &HttpPool, path: &str, url: &str) -> Result<Bytes, CallError> {
    let reply = pool.request("GET", path, &[], &[]).await?;
    if reply.status != ::http::StatusCode::OK {
        return Err(CallError::Config(format!(
            "GET {url} answered HTTP {}: cannot read the service's WSDL; \
             check the `path` and `wsdl` options (or set `wsdl = none`)",
            reply.status
        )));
    }
    Ok(reply.body)
}

impl Protocol for Soap {
    type Conn = SoapConnection;
    type Exchange = crate::protocol::NoExchange;

    const NAME: &'static str = "soap";

    const CONNECTION_MODEL: &'static str =
        "HTTP/1.1 keep-alive: one call in flight per TCP connection; \
         each connection is a pool of up to `pool` TCP connections opened on demand";

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        crate::tls::check_options(Self::NAME, options, &["path", "wsdl", "namespace", "pool"])?;
        let path = path_option(Self::NAME, options, DEFAULT_PATH)?;
        let wsdl = match options.get("wsdl").map(String::as_str) {
            None => Some(format!("{path}?wsdl")),
            Some("none") => None,
            Some(w) if w.starts_with('/') && w.parse::<::http::Uri>().is_ok() => Some(w.to_owned()),
            Some(w) => {
                return Err(CallError::Config(format!(
                    "option `wsdl` of protocol `soap` must be an absolute path and query such as \
                     `{path}?wsdl`, or `none`, not `{w}`"
                )))
            }
        };
        if wsdl.is_some() && options.contains_key("namespace") {
            return Err(CallError::Config(
                "option `namespace` of protocol `soap` is only used with `wsdl = none` \
                 (otherwise the WSDL says it)"
                    .into(),
            ));
        }
        Ok(Soap {
            path,
            wsdl,
            namespace: options
                .get("namespace")
                .cloned()
                .unwrap_or_else(|| envelope::DEFAULT_NAMESPACE.to_owned()),
            pool: pool_option(Self::NAME, options)?,
            transport: Transport::from_options(Self::NAME, options, Alpn::Http1)?,
            ops: OnceCell::new(),
        })
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<SoapConnection, CallError> {
        let pool = HttpPool::connect(&self.transport, target, counter, self.pool).await?;
        let ops = self
            .ops
            .get_or_try_init(|| async {
                // On a connection of its own, so the WSDL's bytes are not
                // counted as the cell's wire bytes.
                let meta =
                    HttpPool::connect(&self.transport, target, WireCounter::default(), 1).await?;
                self.describe(&meta, target).await
            })
            .await?
            .clone();
        Ok(SoapConnection {
            pool,
            path: Arc::clone(&self.path),
            ops,
            request: RequestCache::default(),
        })
    }

    fn tls(&self) -> Option<TlsSetting> {
        Some(self.transport.setting())
    }
}

/// A pool of keep-alive connections to one SOAP endpoint.
#[derive(Debug)]
pub struct SoapConnection {
    pool: HttpPool,
    path: Arc<str>,
    ops: Arc<[Prepared]>,
    request: RequestCache,
}

impl ReferenceExchange for SoapConnection {
    /// One exchange: the request sent, its reply checked against the
    /// reference reply, or decoded.
    async fn exchange(&self, call: &Call) -> Result<Reply, CallError> {
        let method = Method::of(call)?;
        let prepared = &self.ops[method.index()];
        let request = self.request.get_or_build(call, || {
            let mut body = Vec::with_capacity(envelope::request_capacity(&call.argument));
            envelope::encode_request(&mut body, &prepared.op, &call.argument);
            self.pool.build(
                "POST",
                &self.path,
                &[
                    ("Content-Type", envelope::CONTENT_TYPE),
                    ("SOAPAction", &prepared.action),
                ],
                &body,
            )
        })?;
        self.pool
            .send_with(request.bytes(), |reply| match reply.status.as_u16() {
                200 => request.reply_of(reply.body, &call.expected, |b| {
                    envelope::decode_response(b, &prepared.op)
                }),
                // A fault comes with 500; anything else that is not an
                // envelope is reported with the status.
                500 => match envelope::decode_response(reply.body, &prepared.op) {
                    Err(e @ CallError::Server(_)) => Err(e),
                    _ => Err(http_status_error(&self.path, reply.status, reply.body)),
                },
                _ => Err(http_status_error(&self.path, reply.status, reply.body)),
            })
            .await?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::{assert_refused, options as opts};

    #[test]
    fn options() {
        let s = Soap::new(&opts(&[])).unwrap();
        assert_eq!((s.path(), s.wsdl()), ("/bench", Some("/bench?wsdl")));
        let s = Soap::new(&opts(&[("path", "/services/bench"), ("pool", "2")])).unwrap();
        assert_eq!(s.wsdl(), Some("/services/bench?wsdl"));
        let s = Soap::new(&opts(&[("wsdl", "none"), ("namespace", "urn:x")])).unwrap();
        assert_eq!(s.wsdl(), None);
        assert_eq!(s.tls(), Some(TlsSetting::Plaintext));
        assert_eq!(
            s.url("127.0.0.1:8092", "/bench?wsdl"),
            "http://127.0.0.1:8092/bench?wsdl"
        );
        let s = Soap::new(&opts(&[("tls", "skip-verify")])).unwrap();
        assert_eq!(s.url("h:1", "/b"), "https://h:1/b");
        assert_refused::<Soap>(&[
            &[("wsdl", "bench?wsdl")],
            &[("namespace", "urn:x")],
            &[("pool", "0")],
            &[("soapaction", "x")],
            &[("tls", "maybe")],
            &[("server_name", "x")],
        ]);
    }

    #[test]
    fn schema_locations_become_local_paths() {
        assert_eq!(
            local_path("http://10.0.0.1:8091/bench?xsd=1", "/bench"),
            "/bench?xsd=1"
        );
        assert_eq!(local_path("/x.xsd", "/bench"), "/x.xsd");
        assert_eq!(local_path("?xsd=2", "/a/bench"), "/a/bench?xsd=2");
        assert_eq!(local_path("types.xsd", "/a/bench"), "/a/types.xsd");
    }
}
