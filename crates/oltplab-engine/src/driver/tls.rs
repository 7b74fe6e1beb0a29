//! The one TLS client configuration of both network drivers: rustls on the ring provider
//! (aws-lc-rs, rustls' default, needs cmake and a long C build; no OpenSSL to link).
//! Without a root certificate the server's certificate is not checked (libpq's
//! `sslmode=require`, the MySQL client's `--ssl-mode=REQUIRED`: benchmark servers mostly use
//! self-signed certificates); with one, the chain and the host name are verified
//! (`verify-full`, `VERIFY_IDENTITY`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// The configuration for `root_cert`, built once: thousands of connections share one (and its
/// session cache).
pub fn client_config(root_cert: Option<&Path>) -> Result<Arc<ClientConfig>, String> {
    static CACHE: Mutex<Vec<(Option<PathBuf>, Arc<ClientConfig>)>> = Mutex::new(Vec::new());
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, config)) = cache.iter().find(|(p, _)| p.as_deref() == root_cert) {
        return Ok(Arc::clone(config));
    }
    let config = Arc::new(build(root_cert)?);
    cache.push((root_cert.map(Path::to_path_buf), Arc::clone(&config)));
    Ok(config)
}

fn build(root_cert: Option<&Path>) -> Result<ClientConfig, String> {
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
