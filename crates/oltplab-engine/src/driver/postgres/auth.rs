//! Authentication after the startup message: trust, cleartext password, md5 and SCRAM-SHA-256
//! (without channel binding), the methods tokio-postgres and libpq offer over TCP and Unix sockets.
//!
//! SCRAM's salted password (PBKDF2-HMAC-SHA-256, 4,096 iterations by default: about 1 ms of CPU)
//! depends only on the password, the salt and the iteration count, which the server keeps per
//! role: it is derived once per process and reused by every connection, so that 4,096
//! connections cost one derivation, not 4,096. The keys stay in memory only.

use std::num::NonZeroU32;
use std::sync::Mutex;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::SCRAM_SHA_256;
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;
use ring::{digest, hmac, pbkdf2, rand::SecureRandom as _};

use super::errors::PgError;
use super::wire::Wire;

/// A server that asks for more iterations than this could make every connection burn CPU
/// (postgres-protocol and pgjdbc cap it the same way); PostgreSQL's default is 4,096.
const MAX_ITERATIONS: u32 = 100_000;

/// Answers the server's authentication requests until it says `AuthenticationOk`.
pub async fn authenticate(wire: &mut Wire, user: &str, password: &str) -> Result<(), PgError> {
    let password = || if password.is_empty() { Err(PgError::PasswordMissing) } else { Ok(password.as_bytes()) };
    let protocol = |e: std::io::Error| PgError::Protocol(e.to_string());
    loop {
        match next_message(wire).await? {
            Message::AuthenticationOk => return Ok(()),
            Message::AuthenticationCleartextPassword => {
                frontend::password_message(password()?, &mut wire.out).map_err(protocol)?;
            }
            Message::AuthenticationMd5Password(body) => {
                let hash = md5_hash(user.as_bytes(), password()?, body.salt());
                frontend::password_message(hash.as_bytes(), &mut wire.out).map_err(protocol)?;
            }
            Message::AuthenticationSasl(body) => {
                let mut mechanisms = body.mechanisms();
                let mut scram = false;
                while let Some(m) = fallible_iterator::FallibleIterator::next(&mut mechanisms)? {
                    scram |= m == SCRAM_SHA_256;
                }
                if !scram {
                    return Err(PgError::Protocol(
                        "the server offers no SASL mechanism but SCRAM-SHA-256-PLUS, which needs channel binding"
                            .into(),
                    ));
                }
                scram_sha_256(wire, password()?).await?;
                continue;
            }
            _ => return Err(PgError::Protocol("unsupported authentication method (GSSAPI, SSPI or Kerberos)".into())),
        }
        wire.send().await?;
    }
}

/// The next message, with an `ErrorResponse` as an error.
async fn next_message(wire: &mut Wire) -> Result<Message, PgError> {
    let f = wire.frame().await?;
    if f.tag == b'E' {
        return Err(PgError::Server(wire.server_error(f)?));
    }
    wire.message(f)
}

/// RFC 5802/7677 with gs2 header `n,,` (no channel binding); the exchange ends with the
/// server's signature checked, so a server that does not know the password is refused.
async fn scram_sha_256(wire: &mut Wire, password: &[u8]) -> Result<(), PgError> {
    let bad = |what: &str| PgError::Protocol(format!("SCRAM: {what}"));
    let nonce = client_nonce()?;
    let client_first_bare = format!("n=,r={nonce}");
    let client_first = format!("n,,{client_first_bare}");
    frontend::sasl_initial_response(SCRAM_SHA_256, client_first.as_bytes(), &mut wire.out)
        .map_err(|e| bad(&e.to_string()))?;
    wire.send().await?;

    let Message::AuthenticationSaslContinue(body) = next_message(wire).await? else {
        return Err(bad("expected the server's first message"));
    };
    let server_first = std::str::from_utf8(body.data()).map_err(|_| bad("server message is not UTF-8"))?.to_owned();
    let first = ServerFirst::parse(&server_first).ok_or_else(|| bad("malformed server message"))?;
    if !first.nonce.starts_with(&nonce) {
        return Err(bad("the server's nonce does not extend ours"));
    }
    let keys = Keys::cached(password, &first.salt, first.iterations)?;
    // "biws" is base64("n,,").
    let client_final_bare = format!("c=biws,r={}", first.nonce);
    let auth_message = format!("{client_first_bare},{server_first},{client_final_bare}");
    let signature = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &keys.stored), auth_message.as_bytes());
    let proof: Vec<u8> = keys.client.iter().zip(signature.as_ref()).map(|(k, s)| k ^ s).collect();
    let client_final = format!("{client_final_bare},p={}", BASE64.encode(proof));
    frontend::sasl_response(client_final.as_bytes(), &mut wire.out).map_err(|e| bad(&e.to_string()))?;
    wire.send().await?;

    let Message::AuthenticationSaslFinal(body) = next_message(wire).await? else {
        return Err(bad("expected the server's final message"));
    };
    let verifier = std::str::from_utf8(body.data())
        .ok()
        .and_then(|m| m.strip_prefix("v="))
        .and_then(|v| BASE64.decode(v.split(',').next().unwrap_or(v)).ok())
        .ok_or_else(|| bad("malformed server signature"))?;
    let expected = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &keys.server), auth_message.as_bytes());
    if verifier != expected.as_ref() {
        return Err(bad("the server's signature is wrong (it does not know the password)"));
    }
    Ok(())
}

/// 24 random printable characters other than ',' (as libpq and postgres-protocol make them).
fn client_nonce() -> Result<String, PgError> {
    let mut raw = [0u8; 18];
    ring::rand::SystemRandom::new().fill(&mut raw).map_err(|_| PgError::Protocol("no random numbers".into()))?;
    Ok(BASE64.encode(raw))
}

struct ServerFirst<'a> {
    nonce: &'a str,
    salt: Vec<u8>,
    iterations: u32,
}

impl<'a> ServerFirst<'a> {
    /// `r=<nonce>,s=<salt>,i=<iterations>[,extensions]`
    fn parse(m: &'a str) -> Option<Self> {
        let mut parts = m.split(',');
        let nonce = parts.next()?.strip_prefix("r=")?;
        let salt = BASE64.decode(parts.next()?.strip_prefix("s=")?).ok()?;
        let iterations = parts.next()?.strip_prefix("i=")?.parse().ok()?;
        Some(Self { nonce, salt, iterations })
    }
}

/// `ClientKey`, `StoredKey` and `ServerKey` of one password, salt and iteration count.
#[derive(Clone)]
struct Keys {
    client: [u8; 32],
    stored: [u8; 32],
    server: [u8; 32],
}

/// One entry per password, salt and iteration count the process met: a run has one.
type CacheEntry = (Vec<u8>, Vec<u8>, u32, Keys);

impl Keys {
    /// The keys from the cache, derived (and kept) on a miss. The lock is held while deriving:
    /// connections opened together wait a millisecond for the first instead of each deriving.
    fn cached(password: &[u8], salt: &[u8], iterations: u32) -> Result<Self, PgError> {
        static CACHE: Mutex<Vec<CacheEntry>> = Mutex::new(Vec::new());
        let mut cache = CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((.., keys)) = cache.iter().find(|(p, s, i, _)| p == password && s == salt && *i == iterations) {
            return Ok(keys.clone());
        }
        let keys = Self::derive(password, salt, iterations)?;
        if cache.len() >= 8 {
            cache.remove(0);
        }
        cache.push((password.to_vec(), salt.to_vec(), iterations, keys.clone()));
        Ok(keys)
    }

    fn derive(password: &[u8], salt: &[u8], iterations: u32) -> Result<Self, PgError> {
        let iterations = NonZeroU32::new(iterations)
            .filter(|i| i.get() <= MAX_ITERATIONS)
            .ok_or_else(|| PgError::Protocol(format!("SCRAM: the server asks for {iterations} iterations")))?;
        let mut salted = [0u8; 32];
        pbkdf2::derive(pbkdf2::PBKDF2_HMAC_SHA256, iterations, salt, &saslprep(password), &mut salted);
        let key = hmac::Key::new(hmac::HMAC_SHA256, &salted);
        let mut keys = Keys { client: [0; 32], stored: [0; 32], server: [0; 32] };
        keys.client.copy_from_slice(hmac::sign(&key, b"Client Key").as_ref());
        keys.stored.copy_from_slice(digest::digest(&digest::SHA256, &keys.client).as_ref());
        keys.server.copy_from_slice(hmac::sign(&key, b"Server Key").as_ref());
        Ok(keys)
    }
}

/// `SASLprep` where the password allows it, else its bytes as they are (what the server does).
fn saslprep(password: &[u8]) -> Vec<u8> {
    match std::str::from_utf8(password).map(stringprep::saslprep) {
        Ok(Ok(p)) => p.into_owned().into_bytes(),
        _ => password.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677's example: user "user", password "pencil", 4,096 iterations.
    #[test]
    fn keys_match_rfc_7677() {
        let salt = BASE64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let keys = Keys::derive(b"pencil", &salt, 4096).unwrap();
        let client_first_bare = "n=user,r=rOprNGfwEbeRWgbNEkqO";
        let server_first = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let client_final_bare = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
        let auth = format!("{client_first_bare},{server_first},{client_final_bare}");
        let signature = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &keys.stored), auth.as_bytes());
        let proof: Vec<u8> = keys.client.iter().zip(signature.as_ref()).map(|(k, s)| k ^ s).collect();
        assert_eq!(BASE64.encode(proof), "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
        let server = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &keys.server), auth.as_bytes());
        assert_eq!(BASE64.encode(server), "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
    }

    #[test]
    fn keys_are_derived_once_per_password_salt_and_iterations() {
        let a = Keys::cached(b"once-pw", b"salt-1", 64).unwrap();
        let b = Keys::cached(b"once-pw", b"salt-1", 64).unwrap();
        let c = Keys::cached(b"once-pw", b"salt-2", 64).unwrap();
        assert_eq!(a.client, b.client);
        assert_ne!(a.client, c.client);
        assert!(Keys::derive(b"x", b"s", MAX_ITERATIONS + 1).is_err());
    }

    #[test]
    fn server_first_message() {
        let m = ServerFirst::parse("r=abc123,s=c2FsdA==,i=4096").unwrap();
        assert_eq!((m.nonce, m.salt.as_slice(), m.iterations), ("abc123", &b"salt"[..], 4096));
        assert!(ServerFirst::parse("r=abc,i=4096").is_none());
    }
}
