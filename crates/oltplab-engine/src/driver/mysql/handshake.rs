//! The connection phase: the server's greeting, TLS on request, and authentication by
//! `mysql_native_password` or `caching_sha2_password` (its fast path, and its full
//! authentication: the password in clear over TLS or a Unix socket, otherwise encrypted with the
//! server's RSA public key). The packets and scrambles are `mysql_common`'s; the exchange is ours.

use std::sync::Arc;

use mysql_common::constants::{CapabilityFlags, MariadbCapabilities};
use mysql_common::crypto;
use mysql_common::io::ParseBuf;
use mysql_common::packets::{AuthPlugin, AuthSwitchRequest, HandshakePacket, HandshakeResponse, SslRequest};
use mysql_common::proto::MySerialize;
use rustls::pki_types::ServerName;
use rustls::ClientConfig;

use super::errors::Error;
use super::reply::server_error;
use super::session::Session;
use super::wire::{Stream, Wire};
use crate::driver::url::NetTarget;

/// The protocol's largest packet: the client never refuses what the server sends.
const MAX_PACKET_BYTES: u32 = 1 << 30;
/// `utf8mb4_general_ci`, as libmysqlclient asks for.
const UTF8MB4_GENERAL_CI: u8 = 45;

/// What the client asks for, of what the server offers. Not `CLIENT_FOUND_ROWS`: sysbench's
/// affected rows are changed rows, so an UPDATE that sets a column to its value counts as
/// "other", as in sysbench.
fn wanted() -> CapabilityFlags {
    CapabilityFlags::CLIENT_PROTOCOL_41
        | CapabilityFlags::CLIENT_LONG_PASSWORD
        | CapabilityFlags::CLIENT_LONG_FLAG
        | CapabilityFlags::CLIENT_TRANSACTIONS
        | CapabilityFlags::CLIENT_SECURE_CONNECTION
        | CapabilityFlags::CLIENT_MULTI_STATEMENTS
        | CapabilityFlags::CLIENT_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PS_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PLUGIN_AUTH
        | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CapabilityFlags::CLIENT_LOCAL_FILES
        | CapabilityFlags::CLIENT_DEPRECATE_EOF
        | CapabilityFlags::CLIENT_CONNECT_WITH_DB
}

/// What the client asks a MariaDB server for beyond the protocol's 32 bits (sent where MySQL
/// has reserved bytes): a prepared statement's result metadata only when it changed, as
/// libmariadb (sysbench's client) asks. Otherwise the server builds and sends every column's
/// definition at every execution (docs/performance-engine.md, "The result metadata MariaDB sent
/// at every execution"). A MariaDB server offers its extended capabilities by leaving out
/// `CLIENT_MYSQL` (the old `CLIENT_LONG_PASSWORD` bit), and reads a client's only from a client
/// that leaves it out too (`wanted() & offered` does).
fn wanted_mariadb(hello: &HandshakePacket<'_>) -> MariadbCapabilities {
    if hello.capabilities().contains(CapabilityFlags::CLIENT_LONG_PASSWORD) {
        return MariadbCapabilities::empty();
    }
    MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA & hello.mariadb_ext_capabilities()
}

/// Greeting, TLS and authentication on a fresh socket.
pub async fn connect(
    stream: Stream,
    net: &NetTarget,
    tls: Option<&(Arc<ClientConfig>, ServerName<'static>)>,
) -> Result<Session, Error> {
    let local = matches!(stream, Stream::Unix(_));
    let mut wire = Wire::new(stream);
    let greeting = wire.read().await?;
    if greeting.first() == Some(&0xFF) {
        return Err(server_error(greeting));
    }
    let hello: HandshakePacket<'_> = ParseBuf(greeting).parse(()).map_err(|e| bad("the server's greeting", &e))?;
    let offered = hello.capabilities();
    if !offered.contains(CapabilityFlags::CLIENT_PROTOCOL_41) {
        return Err(Error::Protocol("the server is older than MySQL 4.1".into()));
    }
    let mut caps = wanted() & offered;
    let mariadb_caps = wanted_mariadb(&hello);
    let version = hello.server_version_parsed().unwrap_or((5, 5, 3));
    let mut nonce = hello.nonce();
    let mut plugin = match hello.auth_plugin() {
        Some(p @ (AuthPlugin::CachingSha2Password | AuthPlugin::MysqlNativePassword)) => p.into_owned(),
        // Another default plugin: answer as most accounts are; the server switches if needed.
        _ => AuthPlugin::MysqlNativePassword,
    };
    if net.database.is_empty() {
        caps.remove(CapabilityFlags::CLIENT_CONNECT_WITH_DB);
    }
    if let Some((config, name)) = tls {
        if !offered.contains(CapabilityFlags::CLIENT_SSL) {
            return Err(Error::NoTls);
        }
        caps.insert(CapabilityFlags::CLIENT_SSL);
        // MariaDB takes the extended capabilities from this first packet.
        SslRequest::new(caps, MAX_PACKET_BYTES, UTF8MB4_GENERAL_CI)
            .with_mariadb_capabilities(mariadb_caps)
            .serialize(wire.reply());
        wire.send().await?;
        wire = wire.upgrade(config, name).await?;
    }
    let secure = local || tls.is_some();
    let password = (!net.password.is_empty()).then_some(net.password.as_str());
    let scramble = plugin.gen_data(password, &nonce);
    let db = (!net.database.is_empty()).then_some(net.database.as_bytes());
    HandshakeResponse::new(
        scramble.as_deref(),
        version,
        Some(net.user.as_bytes()),
        db,
        Some(plugin.borrow()),
        caps,
        None,
        MAX_PACKET_BYTES,
    )
    .with_mariadb_ext_capabilities(mariadb_caps)
    .serialize(wire.reply());
    wire.send().await?;
    loop {
        let packet = wire.read().await?;
        match packet.first() {
            Some(0x00) => break,
            Some(0xFF) => return Err(server_error(packet)),
            // An authentication switch: another plugin, with a new nonce.
            Some(0xFE) => {
                if packet.len() == 1 {
                    return Err(Error::UnknownAuthPlugin("mysql_old_password".into()));
                }
                let switch: AuthSwitchRequest<'_> =
                    ParseBuf(packet).parse(()).map_err(|e| bad("an authentication switch", &e))?;
                plugin = switch.auth_plugin().into_owned();
                if !matches!(plugin, AuthPlugin::CachingSha2Password | AuthPlugin::MysqlNativePassword) {
                    return Err(Error::UnknownAuthPlugin(String::from_utf8_lossy(plugin.as_bytes()).into_owned()));
                }
                nonce = switch.plugin_data().to_vec();
                let data = plugin.gen_data(password, &nonce);
                wire.reply().extend_from_slice(data.as_deref().unwrap_or_default());
                wire.send().await?;
            }
            // caching_sha2_password: 3 is "fast authentication done" (its OK follows), 4 asks
            // for the password itself.
            Some(0x01) if plugin == AuthPlugin::CachingSha2Password => match packet.get(1) {
                Some(3) => {}
                Some(4) if secure => {
                    let out = wire.reply();
                    out.extend_from_slice(net.password.as_bytes());
                    out.push(0);
                    wire.send().await?;
                }
                Some(4) => {
                    wire.reply().push(2); // the server's RSA public key, please
                    wire.send().await?;
                    let key = wire.read().await?;
                    let pem = key.strip_prefix(&[0x01]).ok_or_else(|| {
                        Error::Protocol("no RSA public key from the server for caching_sha2_password".into())
                    })?;
                    let encrypted = encrypt_password(&net.password, &nonce, pem);
                    wire.reply().extend_from_slice(&encrypted);
                    wire.send().await?;
                }
                _ => return Err(Error::Protocol("unexpected caching_sha2_password state".into())),
            },
            _ => return Err(Error::Protocol("unexpected packet during authentication".into())),
        }
    }
    Ok(Session::new(wire, caps, mariadb_caps))
}

/// The password, NUL-terminated and XOR-ed with the nonce, RSA-OAEP-encrypted with `pem`.
fn encrypt_password(password: &str, nonce: &[u8], pem: &[u8]) -> Vec<u8> {
    let mut clear: Vec<u8> = password.bytes().chain([0]).collect();
    if !nonce.is_empty() {
        for (i, b) in clear.iter_mut().enumerate() {
            *b ^= nonce[i % nonce.len()];
        }
    }
    crypto::encrypt(&clear, pem)
}

fn bad(what: &str, e: &std::io::Error) -> Error {
    Error::Protocol(format!("cannot read {what}: {e}"))
}

#[cfg(test)]
#[path = "handshake_tests.rs"]
mod tests;
