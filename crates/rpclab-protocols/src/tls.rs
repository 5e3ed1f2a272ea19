//! TLS for the protocols that offer it (gRPC, contract and generic), with
//! rustls: the setting read from a protocol's options, the client
//! configuration built from it once, and the connection halves the gRPC
//! channel reads and writes, plaintext or TLS.
//!
//! # Options
//!
//! | option | values | meaning |
//! | --- | --- | --- |
//! | `tls` | `off` (default), `on`, `skip-verify` | plaintext; TLS with the server's certificate verified; TLS with no verification |
//! | `cacert` | a PEM file | the roots `tls=on` verifies against (default: the system's); alone, it turns TLS on |
//! | `server_name` | a DNS name or IP | the name the certificate is checked for and sent as SNI (default: the target's host) |
//!
//! The client's flags map onto them as ghz's do (`--cacert`, `--skipTLS`,
//! `--cname`, `--insecure` for plaintext), except that plaintext is the
//! default (ghz's default is TLS against the system's roots: `--tls` here).
//!
//! # Wire bytes
//!
//! The TCP stream is wrapped in a [`CountingStream`] *under* TLS, so the
//! bytes a cell reports are the bytes on the wire, records and handshake
//! included, as for plaintext.

use crate::net::{connect_tcp, CountingStream};
use crate::protocol::{CallError, WireCounter};
use rpclab_model::result::TlsSetting;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
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
pub const OPTIONS: &[&str] = &["tls", "cacert", "server_name"];

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

impl Transport {
    /// The transport the options ask for; a file that cannot be read, a
    /// value that is none of those above, or a TLS option without TLS is
    /// a configuration error that says what to pass instead.
    pub fn from_options(
        protocol: &str,
        options: &BTreeMap<String, String>,
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
            if server_name.is_some() {
                return Err(CallError::Config(format!(
                    "protocol `{protocol}`: a server name (`server_name`, --cname) is for TLS; \
                     add --tls, --cacert or --skipTLS"
                )));
            }
            return Ok(Transport::Plaintext);
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| CallError::Config(format!("TLS: {e}")))?;
        let (mut config, setting_roots) = match (mode, cacert) {
            ("skip-verify", _) => (
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(NoVerification(provider)))
                    .with_no_client_auth(),
                None,
            ),
            (_, Some(path)) => {
                let mut roots = RootCertStore::empty();
                let certs = CertificateDer::pem_file_iter(path)
                    .map_err(|e| CallError::Config(format!("cannot read the CA file {path}: {e}")))?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| CallError::Config(format!("CA file {path}: {e}")))?;
                if certs.is_empty() {
                    return Err(CallError::Config(format!(
                        "CA file {path} holds no PEM certificate"
                    )));
                }
                for cert in certs {
                    roots.add(cert).map_err(|e| {
                        CallError::Config(format!(
                            "CA file {path}: a certificate rustls refuses: {e}"
                        ))
                    })?;
                }
                (
                    builder.with_root_certificates(roots).with_no_client_auth(),
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
                    builder.with_root_certificates(roots).with_no_client_auth(),
                    Some("system roots".to_owned()),
                )
            }
        };
        // gRPC is HTTP/2: servers (tonic, grpc-java, grpc-go) refuse a
        // TLS connection that does not negotiate `h2`.
        config.alpn_protocols = vec![b"h2".to_vec()];
        let server_name = server_name
            .map(|name| {
                ServerName::try_from(name.clone()).map_err(|_| {
                    CallError::Config(format!(
                        "`{name}` (option `server_name`, --cname) is no DNS name or IP address"
                    ))
                })
            })
            .transpose()?;
        let setting = match setting_roots {
            Some(roots) => TlsSetting::Verified {
                roots,
                server_name: options.get("server_name").cloned(),
            },
            None => TlsSetting::Unverified {
                server_name: options.get("server_name").cloned(),
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

    /// Whether requests go over TLS (their `:scheme` is `https`).
    pub fn is_tls(&self) -> bool {
        matches!(self, Transport::Tls(_))
    }

    /// Opens a connection to `target` (`host:port`, `TCP_NODELAY` set),
    /// the TLS handshake done, its wire bytes counted in `counter`.
    pub async fn connect(
        &self,
        target: &str,
        counter: &WireCounter,
    ) -> Result<(ReadHalf, WriteHalf), CallError> {
        let tcp = connect_tcp(target).await?;
        match self {
            Transport::Plaintext => {
                let (read, write) = tcp.into_split();
                Ok((
                    ReadHalf::Plain(CountingStream::new(read, counter.clone())),
                    WriteHalf::Plain(CountingStream::new(write, counter.clone())),
                ))
            }
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
                let (read, write) = tokio::io::split(stream);
                Ok((ReadHalf::Tls(read), WriteHalf::Tls(write)))
            }
        }
    }
}

/// What to do about a failed handshake: a certificate the roots do not
/// vouch for, or a server that does not speak TLS at all.
fn handshake_hint(e: &io::Error) -> &'static str {
    let rustls_error = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>());
    match rustls_error {
        Some(rustls::Error::InvalidCertificate(_)) => {
            "pass the CA that signed the server's certificate with --cacert, or --skipTLS \
             not to verify it"
        }
        _ => "a plaintext server? then leave out --tls, --cacert and --skipTLS",
    }
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

impl AsyncRead for ReadHalf {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ReadHalf::Plain(s) => Pin::new(s).poll_read(cx, buf),
            ReadHalf::Tls(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for WriteHalf {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            WriteHalf::Plain(s) => Pin::new(s).poll_write(cx, buf),
            WriteHalf::Tls(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            WriteHalf::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            WriteHalf::Tls(s) => Pin::new(s).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            WriteHalf::Plain(s) => s.is_write_vectored(),
            WriteHalf::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            WriteHalf::Plain(s) => Pin::new(s).poll_flush(cx),
            WriteHalf::Tls(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            WriteHalf::Plain(s) => Pin::new(s).poll_shutdown(cx),
            WriteHalf::Tls(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

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
        match Transport::from_options("grpc", &options(pairs)) {
            Err(CallError::Config(m)) => m,
            other => panic!("{pairs:?}: {other:?}"),
        }
    }

    #[test]
    fn plaintext_by_default_and_tls_as_asked() {
        let t = Transport::from_options("grpc", &options(&[])).unwrap();
        assert_eq!(t.setting(), TlsSetting::Plaintext);
        assert!(!t.is_tls());
        let t = Transport::from_options("grpc", &options(&[("tls", "off")])).unwrap();
        assert_eq!(t.setting(), TlsSetting::Plaintext);
        let t = Transport::from_options(
            "grpc",
            &options(&[("tls", "skip-verify"), ("server_name", "shop.local")]),
        )
        .unwrap();
        assert!(t.is_tls());
        assert_eq!(
            t.setting(),
            TlsSetting::Unverified {
                server_name: Some("shop.local".into())
            }
        );
    }

    #[test]
    fn contradictions_and_unreadable_files_are_refused_with_what_to_do() {
        assert!(refusal(&[("tls", "yes")]).contains("`off`, `on` or `skip-verify`"));
        assert!(refusal(&[("tls", "off"), ("cacert", "ca.pem")]).contains("drop one of them"));
        assert!(refusal(&[("server_name", "x")]).contains("add --tls, --cacert or --skipTLS"));
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
