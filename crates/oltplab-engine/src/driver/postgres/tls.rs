//! TLS on rustls with the ring provider, the stack the MySQL driver uses too (one TLS
//! implementation in the binary, no OpenSSL to link). No SCRAM channel binding is offered
//! (it would need the certificate's hash, x509 parsing), which PostgreSQL does not require:
//! plain SCRAM-SHA-256 is negotiated.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::errors::PgError;
use super::stream::Stream;

/// Makes one TLS session per connection from a configuration shared by all of them.
#[derive(Clone)]
pub struct MakeRustls(Arc<ClientConfig>);

impl MakeRustls {
    /// Without a root certificate, the server's certificate is not checked, as
    /// libpq's `sslmode=require` does; with one (`?sslrootcert=`), the chain and the
    /// host name are verified, as `sslmode=verify-full` does. Configurations are
    /// cached: thousands of connections share one (and its session cache).
    pub fn new(root_cert: Option<&Path>) -> Result<Self, String> {
        static CACHE: Mutex<Vec<(Option<PathBuf>, Arc<ClientConfig>)>> = Mutex::new(Vec::new());
        let mut cache = CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, config)) = cache.iter().find(|(p, _)| p.as_deref() == root_cert) {
            return Ok(Self(Arc::clone(config)));
        }
        let config = Arc::new(client_config(root_cert)?);
        cache.push((root_cert.map(Path::to_path_buf), Arc::clone(&config)));
        Ok(Self(config))
    }
}

fn client_config(root_cert: Option<&Path>) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS set-up failed: {e}"))?;
    let Some(path) = root_cert else {
        let verifier = Arc::new(AnyCertificate(provider));
        return Ok(builder.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth());
    };
    let bad = |e: &dyn std::fmt::Display| format!("cannot read the root certificate '{}': {e}", path.display());
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| bad(&e))? {
        roots.add(cert.map_err(|e| bad(&e))?).map_err(|e| bad(&e))?;
    }
    if roots.is_empty() {
        return Err(bad(&"no certificate in the file"));
    }
    Ok(builder.with_root_certificates(roots).with_no_client_auth())
}

/// Accepts any certificate but still checks the handshake's signatures, so the
/// session is encrypted to whoever holds the presented key (libpq's `require`).
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
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
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

impl MakeRustls {
    /// PostgreSQL's `SSLRequest`, then the TLS handshake on the same socket (`host` names the
    /// server for SNI and, with a root certificate, for verification).
    pub async fn connect(&self, mut tcp: TcpStream, host: &str) -> Result<Stream, PgError> {
        let mut request = bytes::BytesMut::new();
        postgres_protocol::message::frontend::ssl_request(&mut request);
        tcp.write_all(&request).await?;
        if tcp.read_u8().await? != b'S' {
            return Err(PgError::TlsNotOffered);
        }
        let name = ServerName::try_from(host.to_owned())
            .map_err(|e| PgError::Tls(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
        let connector = tokio_rustls::TlsConnector::from(Arc::clone(&self.0));
        let tls = connector.connect(name, tcp).await.map_err(PgError::Tls)?;
        Ok(Stream::Tls(Box::new(tls)))
    }
}
