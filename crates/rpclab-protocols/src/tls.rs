//! TLS for every protocol that offers it (gRPC, contract and generic, and
//! the HTTP/1.1 protocols, Hessian and SOAP), with rustls: the setting read
//! from a protocol's options, the client configuration built from it once,
//! and the connections opened with it, plaintext or TLS: whole
//! ([`Stream`], for HTTP/1.1's pooled connections) or split in halves that
//! two tasks read and write ([`ReadHalf`], [`WriteHalf`], for the gRPC
//! channel). One setup for every protocol: a protocol reads these options
//! and says which application protocol it speaks ([`Alpn`]), nothing else.
//!
//! # Options
//!
//! | option | values | meaning |
//! | --- | --- | --- |
//! | `tls` | `off` (default), `on`, `skip-verify` | plaintext; TLS with the server's certificate verified; TLS with no verification |
//! | `cacert` | a PEM file | the roots `tls=on` verifies against (default: the system's); alone, it turns TLS on |
//! | `server_name` | a DNS name or IP | the name the certificate is checked for and sent as SNI (default: the target's host) |
//! | `cert`, `key` | PEM files | the client's own certificate (chain) and private key, for a server that asks for one (mutual TLS) |
//!
//! The client's flags map onto them as ghz's do (`--cacert`, `--skipTLS`,
//! `--cname`, `--cert`, `--key`, `--insecure` for plaintext), except that
//! plaintext is the default (ghz's default is TLS against the system's
//! roots: `--tls` here).
//!
//! # Wire bytes and per-call cost
//!
//! The TCP stream is wrapped in a [`CountingStream`] *under* TLS, so the
//! bytes a cell reports are the bytes on the wire, records and handshake
//! included, as for plaintext. The configuration is built once per
//! protocol and each connection's handshake once per connection; a
//! plaintext connection costs one `match` per read or write over the bare
//! counting stream, no allocation and no lock.

use crate::net::{connect_tcp, CountingStream};
use crate::protocol::{CallError, WireCounter};
use rpclab_model::result::TlsSetting;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WantsClientCert;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, ConfigBuilder, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::collections::BTreeMap;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// The option keys this module reads.
pub const OPTIONS: &[&str] = &["tls", "cacert", "server_name", "cert", "key"];

/// [`crate::protocol::check_options`] for a protocol that offers TLS: its
/// `own` option keys and this module's.
pub fn check_options(
    protocol: &str,
    options: &BTreeMap<String, String>,
    own: &[&str],
) -> Result<(), CallError> {
    crate::protocol::check_options(protocol, options, &[own, OPTIONS].concat())
}

/// The application protocol a TLS connection offers (ALPN): servers that
/// speak several choose by it, and a gRPC server refuses a connection that
/// does not offer `h2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alpn {
    /// HTTP/2 (gRPC).
    H2,
    /// HTTP/1.1 (Hessian, SOAP).
    Http1,
}

impl Alpn {
    fn id(self) -> &'static [u8] {
        match self {
            Alpn::H2 => b"h2",
            Alpn::Http1 => b"http/1.1",
        }
    }
}

/// A connection's transport: plaintext, or TLS with its client
/// configuration (built once per protocol).
#[derive(Clone)]
pub enum Transport {
    Plaintext,
    Tls(Arc<TlsClient>),
}

/// A TLS client: its rustls configuration, what the report says of it and
/// the name the certificate is checked for, if not the target's host.
pub struct TlsClient {
    connector: TlsConnector,
    server_name: Option<ServerName<'static>>,
    setting: TlsSetting,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.setting())
    }
}

/// A client certificate chain and its private key (`cert`, `key`).
struct Identity {
    path: String,
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
}

impl Transport {
    /// The transport the options ask for, offering `alpn`; a file that
    /// cannot be read, a value that is none of those above, or a TLS
    /// option without TLS is a configuration error that says what to pass
    /// instead.
    pub fn from_options(
        protocol: &str,
        options: &BTreeMap<String, String>,
        alpn: Alpn,
    ) -> Result<Transport, CallError> {
        let cacert = options.get("cacert");
        let server_name = options.get("server_name");
        let mode = match (options.get("tls").map(String::as_str), cacert) {
            (None, None) | (Some("off"), None) => "off",
            (None, Some(_)) | (Some("on"), _) => "on",
            (Some("skip-verify"), None) => "skip-verify",
            (Some(mode @ ("off" | "skip-verify")), Some(_)) => {
                return Err(CallError::Config(format!(
                    "protocol `{protocol}`: a CA file (`cacert`, --cacert) verifies the server, \
                     but `tls={mode}` does not; drop one of them"
                )))
            }
            (Some(other), _) => {
                return Err(CallError::Config(format!(
                    "option `tls` of protocol `{protocol}` is `off`, `on` or `skip-verify`, \
                     not `{other}`"
                )))
            }
        };
        if mode == "off" {
            let for_tls = [
                ("server_name", "a server name (`server_name`, --cname)"),
                ("cert", "a client certificate (`cert`, --cert)"),
                ("key", "a client key (`key`, --key)"),
            ];
            if let Some((_, what)) = for_tls.iter().find(|(key, _)| options.contains_key(*key)) {
                return Err(CallError::Config(format!(
                    "protocol `{protocol}`: {what} is for TLS; add --tls, --cacert or --skipTLS"
                )));
            }
            return Ok(Transport::Plaintext);
        }
        let identity = identity(protocol, options)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| CallError::Config(format!("TLS: {e}")))?;
        let (wants_client_cert, roots): (ConfigBuilder<ClientConfig, WantsClientCert>, _) =
            match (mode, cacert) {
                ("skip-verify", _) => (
                    builder
                        .dangerous()
                        .with_custom_certificate_verifier(Arc::new(NoVerification(provider))),
                    None,
                ),
                (_, Some(path)) => {
                    let mut roots = RootCertStore::empty();
                    for cert in pem_certificates(path, "CA file")? {
                        roots.add(cert).map_err(|e| {
                            CallError::Config(format!(
                                "CA file {path}: a certificate rustls refuses: {e}"
                            ))
                        })?;
                    }
                    (
                        builder.with_root_certificates(roots),
                        Some(format!("CA file {path}")),
                    )
                }
                (_, None) => {
                    let mut roots = RootCertStore::empty();
                    let found = rustls_native_certs::load_native_certs();
                    let (added, _) = roots.add_parsable_certificates(found.certs);
                    if added == 0 {
                        return Err(CallError::Config(
                            "TLS: the system has no root certificate to verify the server with; \
                             pass --cacert FILE (or --skipTLS not to verify)"
                                .into(),
                        ));
                    }
                    (
                        builder.with_root_certificates(roots),
                        Some("system roots".to_owned()),
                    )
                }
            };
        let client_cert = identity.as_ref().map(|i| i.path.clone());
        let mut config = match identity {
            None => wants_client_cert.with_no_client_auth(),
            Some(Identity { path, chain, key }) => wants_client_cert
                .with_client_auth_cert(chain, key)
                .map_err(|e| {
                    CallError::Config(format!(
                        "client certificate {path} and its key (--cert, --key): {e}"
                    ))
                })?,
        };
        config.alpn_protocols = vec![alpn.id().to_vec()];
        let server_name = server_name
            .map(|name| {
                ServerName::try_from(name.clone()).map_err(|_| {
                    CallError::Config(format!(
                        "`{name}` (option `server_name`, --cname) is no DNS name or IP address"
                    ))
                })
            })
            .transpose()?;
        let named = options.get("server_name").cloned();
        let setting = match roots {
            Some(roots) => TlsSetting::Verified {
                roots,
                server_name: named,
                client_cert,
            },
            None => TlsSetting::Unverified {
                server_name: named,
                client_cert,
            },
        };
        Ok(Transport::Tls(Arc::new(TlsClient {
            connector: TlsConnector::from(Arc::new(config)),
            server_name,
            setting,
        })))
    }

    /// What a report records of this transport.
    pub fn setting(&self) -> TlsSetting {
        match self {
            Transport::Plaintext => TlsSetting::Plaintext,
            Transport::Tls(client) => client.setting.clone(),
        }
    }

    /// Whether requests go over TLS (their scheme is `https`).
    pub fn is_tls(&self) -> bool {
        matches!(self, Transport::Tls(_))
    }

    /// `http` or `https`, for the URLs a protocol names in its messages.
    pub fn scheme(&self) -> &'static str {
        if self.is_tls() {
            "https"
        } else {
            "http"
        }
    }

    /// Opens a connection to `target` (`host:port`, `TCP_NODELAY` set),
    /// the TLS handshake done, its wire bytes counted in `counter`: one
    /// stream that one task reads and writes.
    pub async fn open(&self, target: &str, counter: &WireCounter) -> Result<Stream, CallError> {
        let tcp = connect_tcp(target).await?;
        match self {
            Transport::Plaintext => Ok(Stream::Plain(CountingStream::new(tcp, counter.clone()))),
            Transport::Tls(client) => {
                let name = match &client.server_name {
                    Some(name) => name.clone(),
                    None => server_name_of(target)?,
                };
                let stream = client
                    .connector
                    .connect(name, CountingStream::new(tcp, counter.clone()))
                    .await
                    .map_err(|e| {
                        CallError::Connect(format!(
                            "{target}: the TLS handshake failed: {e} ({})",
                            handshake_hint(&e)
                        ))
                    })?;
                Ok(Stream::Tls(Box::new(stream)))
            }
        }
    }

    /// [`Transport::open`], split in halves that two tasks read and write.
    pub async fn connect(
        &self,
        target: &str,
        counter: &WireCounter,
    ) -> Result<(ReadHalf, WriteHalf), CallError> {
        Ok(match self.open(target, counter).await? {
            Stream::Plain(stream) => {
                let (read, write) = stream.into_inner().into_split();
                (
                    ReadHalf::Plain(CountingStream::new(read, counter.clone())),
                    WriteHalf::Plain(CountingStream::new(write, counter.clone())),
                )
            }
            Stream::Tls(stream) => {
                let (read, write) = tokio::io::split(*stream);
                (ReadHalf::Tls(read), WriteHalf::Tls(write))
            }
        })
    }
}

/// Whether a server's first bytes are a TLS record (an alert or a
/// handshake: 0x15 or 0x16, then version 0x03): a TLS server answering a
/// plaintext client.
pub fn is_tls_record(first: &[u8]) -> bool {
    matches!(first, [0x15 | 0x16, 0x03, ..])
}

/// The certificates of the PEM file `path` (`what` names it in errors).
fn pem_certificates(path: &str, what: &str) -> Result<Vec<CertificateDer<'static>>, CallError> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| CallError::Config(format!("cannot read the {what} {path}: {e}")))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CallError::Config(format!("{what} {path}: {e}")))?;
    if certs.is_empty() {
        return Err(CallError::Config(format!(
            "{what} {path} holds no PEM certificate"
        )));
    }
    Ok(certs)
}

/// The client's certificate and key (`cert`, `key`), both or neither.
fn identity(
    protocol: &str,
    options: &BTreeMap<String, String>,
) -> Result<Option<Identity>, CallError> {
    match (options.get("cert"), options.get("key")) {
        (None, None) => Ok(None),
        (Some(_), None) | (None, Some(_)) => Err(CallError::Config(format!(
            "protocol `{protocol}`: a client certificate needs its PEM certificate (`cert`, \
             --cert) and its private key (`key`, --key), both"
        ))),
        (Some(cert), Some(key_path)) => {
            let chain = pem_certificates(cert, "client certificate file")?;
            let key = PrivateKeyDer::from_pem_file(key_path).map_err(|e| {
                CallError::Config(format!(
                    "cannot read a private key from {key_path} (--key: a PEM file, PKCS#8, \
                     PKCS#1 or SEC1): {e}"
                ))
            })?;
            Ok(Some(Identity {
                path: cert.clone(),
                chain,
                key,
            }))
        }
    }
}

/// What to do about a failed handshake: a certificate the roots do not
/// vouch for, a client certificate the server wants, or a server that
/// does not speak TLS at all.
fn handshake_hint(e: &io::Error) -> &'static str {
    if let Some(hint) = alert_hint(e) {
        return hint;
    }
    match rustls_error(e) {
        Some(rustls::Error::InvalidCertificate(_)) => {
            "pass the CA that signed the server's certificate with --cacert, or --skipTLS \
             not to verify it"
        }
        _ => "a plaintext server? then leave out --tls, --cacert and --skipTLS",
    }
}

/// What to do about an I/O error that is the server's TLS alert about the
/// client's certificate, if it is one. Over TLS 1.3 a server refuses a
/// missing or unknown client certificate only after the client finished
/// its handshake, so the alert comes with the first read: the protocols
/// make the call that read it a protocol error (the server answered, with
/// a refusal) that says this.
pub fn alert_hint(e: &io::Error) -> Option<&'static str> {
    use rustls::AlertDescription as A;
    match rustls_error(e)? {
        rustls::Error::AlertReceived(
            A::CertificateRequired | A::BadCertificate | A::UnknownCA | A::CertificateUnknown,
        ) => Some(
            "the server wants a client certificate its CA signed: pass it with --cert and --key",
        ),
        _ => None,
    }
}

/// The rustls error an I/O error of tokio-rustls carries.
fn rustls_error(e: &io::Error) -> Option<&rustls::Error> {
    e.get_ref()?.downcast_ref::<rustls::Error>()
}

/// The server name of `host:port` (an IP address, or a DNS name).
fn server_name_of(target: &str) -> Result<ServerName<'static>, CallError> {
    let host = target
        .rsplit_once(':')
        .map_or(target, |(host, _)| host)
        .trim_start_matches('[')
        .trim_end_matches(']');
    ServerName::try_from(host.to_owned()).map_err(|_| {
        CallError::Config(format!(
            "`{host}` is no DNS name or IP address to check a certificate for; pass --cname NAME"
        ))
    })
}

type Tls = TlsStream<CountingStream<TcpStream>>;

/// The read half of a connection.
pub enum ReadHalf {
    Plain(CountingStream<OwnedReadHalf>),
    Tls(tokio::io::ReadHalf<Tls>),
}

/// The write half of a connection.
pub enum WriteHalf {
    Plain(CountingStream<OwnedWriteHalf>),
    Tls(tokio::io::WriteHalf<Tls>),
}

/// A whole connection, read and written by one task.
#[derive(Debug)]
pub enum Stream {
    Plain(CountingStream<TcpStream>),
    /// Boxed: a TLS session is large, and a plaintext connection, moved in
    /// and out of a pool on every call, stays small.
    Tls(Box<Tls>),
}

/// Forwards a call to the variant's stream, whichever it is.
macro_rules! either {
    ($self:expr, $s:ident => $call:expr) => {
        match $self {
            Self::Plain($s) => $call,
            Self::Tls($s) => $call,
        }
    };
}

/// `AsyncRead` for an enum of a plaintext and a TLS stream.
macro_rules! forward_read {
    ($t:ty) => {
        impl AsyncRead for $t {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                either!(self.get_mut(), s => Pin::new(s).poll_read(cx, buf))
            }
        }
    };
}

/// `AsyncWrite` for an enum of a plaintext and a TLS stream, vectored
/// writes forwarded.
macro_rules! forward_write {
    ($t:ty) => {
        impl AsyncWrite for $t {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                either!(self.get_mut(), s => Pin::new(s).poll_write(cx, buf))
            }

            fn poll_write_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                either!(self.get_mut(), s => Pin::new(s).poll_write_vectored(cx, bufs))
            }

            fn is_write_vectored(&self) -> bool {
                either!(self, s => s.is_write_vectored())
            }

            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                either!(self.get_mut(), s => Pin::new(s).poll_flush(cx))
            }

            fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                either!(self.get_mut(), s => Pin::new(s).poll_shutdown(cx))
            }
        }
    };
}

forward_read!(ReadHalf);
forward_read!(Stream);
forward_write!(WriteHalf);
forward_write!(Stream);

/// `tls=skip-verify` (ghz's `--skipTLS`): any certificate is accepted, but
/// the handshake's signatures are still checked, so the connection is
/// encrypted to whoever holds the certificate's key.
#[derive(Debug)]
struct NoVerification(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::options;

    fn refusal(pairs: &[(&str, &str)]) -> String {
        match Transport::from_options("grpc", &options(pairs), Alpn::H2) {
            Err(CallError::Config(m)) => m,
            other => panic!("{pairs:?}: {other:?}"),
        }
    }

    #[test]
    fn plaintext_by_default_and_tls_as_asked() {
        let t = Transport::from_options("grpc", &options(&[]), Alpn::H2).unwrap();
        assert_eq!(t.setting(), TlsSetting::Plaintext);
        assert!(!t.is_tls());
        let t = Transport::from_options("grpc", &options(&[("tls", "off")]), Alpn::H2).unwrap();
        assert_eq!(t.setting(), TlsSetting::Plaintext);
        let t = Transport::from_options(
            "grpc",
            &options(&[("tls", "skip-verify"), ("server_name", "shop.local")]),
            Alpn::Http1,
        )
        .unwrap();
        assert!(t.is_tls());
        assert_eq!(t.scheme(), "https");
        assert_eq!(
            t.setting(),
            TlsSetting::Unverified {
                server_name: Some("shop.local".into()),
                client_cert: None,
            }
        );
    }

    #[test]
    fn tls_records_are_told_from_http() {
        assert!(is_tls_record(&[0x15, 0x03, 0x03, 0x00, 0x02]));
        assert!(is_tls_record(&[0x16, 0x03, 0x01]));
        assert!(!is_tls_record(b"HTTP/1.1 200 OK"));
        assert!(!is_tls_record(&[0x15]));
        assert!(!is_tls_record(&[0x00, 0x00, 0x12, 0x04]));
    }

    #[test]
    fn contradictions_and_unreadable_files_are_refused_with_what_to_do() {
        assert!(refusal(&[("tls", "yes")]).contains("`off`, `on` or `skip-verify`"));
        assert!(refusal(&[("tls", "off"), ("cacert", "ca.pem")]).contains("drop one of them"));
        assert!(refusal(&[("server_name", "x")]).contains("add --tls, --cacert or --skipTLS"));
        let m = refusal(&[("cert", "c.pem"), ("key", "k.pem")]);
        assert!(
            m.contains("a client certificate (`cert`, --cert) is for TLS"),
            "{m}"
        );
        let m = refusal(&[("tls", "skip-verify"), ("cert", "c.pem")]);
        assert!(m.contains("(`key`, --key), both"), "{m}");
        let m = refusal(&[
            ("tls", "skip-verify"),
            ("cert", "/nonexistent/c.pem"),
            ("key", "/nonexistent/k.pem"),
        ]);
        assert!(
            m.starts_with("cannot read the client certificate file /nonexistent/c.pem"),
            "{m}"
        );
        let m = refusal(&[("cacert", "/nonexistent/ca.pem")]);
        assert!(
            m.starts_with("cannot read the CA file /nonexistent/ca.pem"),
            "{m}"
        );
        let dir = std::env::temp_dir().join(format!("rpclab-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "no certificate here\n").unwrap();
        let m = refusal(&[("cacert", empty.to_str().unwrap())]);
        assert!(m.contains("holds no PEM certificate"), "{m}");
        let m = refusal(&[
            ("tls", "skip-verify"),
            ("cert", empty.to_str().unwrap()),
            ("key", empty.to_str().unwrap()),
        ]);
        assert!(
            m.contains("client certificate file") && m.contains("holds no PEM certificate"),
            "{m}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_server_name_is_the_targets_host() {
        assert_eq!(
            server_name_of("127.0.0.1:50051").unwrap(),
            ServerName::try_from("127.0.0.1").unwrap()
        );
        assert_eq!(
            server_name_of("shop.example:443").unwrap(),
            ServerName::try_from("shop.example").unwrap()
        );
        assert_eq!(
            server_name_of("[::1]:443").unwrap(),
            ServerName::try_from("::1").unwrap()
        );
    }
}
