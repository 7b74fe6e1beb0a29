//! TLS on rustls with the ring provider, the stack the MySQL driver uses too (driver/tls.rs:
//! one TLS configuration in the binary, no OpenSSL to link). No SCRAM channel binding is offered
//! (it would need the certificate's hash, x509 parsing), which PostgreSQL does not require:
//! plain SCRAM-SHA-256 is negotiated.

use std::io;
use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::errors::PgError;
use crate::driver::stream::Stream;

/// Makes one TLS session per connection from a configuration shared by all of them.
#[derive(Clone)]
pub struct MakeRustls(Arc<ClientConfig>);

impl MakeRustls {
    /// Without a root certificate, the server's certificate is not checked, as
    /// libpq's `sslmode=require` does; with one (`?sslrootcert=`), the chain and the
    /// host name are verified, as `sslmode=verify-full` does (driver/tls.rs, shared with
    /// the MySQL driver).
    pub fn new(root_cert: Option<&Path>) -> Result<Self, String> {
        Ok(Self(crate::driver::tls::client_config(root_cert)?))
    }

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
