//! The authentication paths MariaDB cannot show (it has no `caching_sha2_password`), against a
//! scripted server that checks what the client sends: the SHA-256 scramble, the fast path, the
//! full authentication in clear on a Unix socket and RSA-encrypted on TCP (decrypted here by
//! the `openssl` command with a key made for the test), a switch to `mysql_native_password`,
//! and a result read after the handshake.

use std::path::Path;
use std::process::Command;

use mysql_common::constants::{CapabilityFlags, ColumnType, StatusFlags};
use mysql_common::packets::{Column, HandshakePacket, HandshakeResponse};
use mysql_common::scramble::{scramble_native, scramble_sha256};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UnixStream};

use super::*;
use crate::db::Value;

const PASSWORD: &str = "pa55-wörd";
const NONCE: &[u8; 20] = b"abcdefghijklmnopqrst";

fn net() -> NetTarget {
    NetTarget {
        host: "127.0.0.1".into(),
        port: 0,
        socket: None,
        user: "sb".into(),
        password: PASSWORD.into(),
        password_source: "--db",
        database: "bench".into(),
        tls: false,
        params: std::collections::BTreeMap::new(),
    }
}

/// The server's end: packets with their sequence ids.
struct Peer<S> {
    s: S,
    seq: u8,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Peer<S> {
    async fn send(&mut self, payload: &[u8]) {
        let len = payload.len();
        self.s.write_all(&[len as u8, (len >> 8) as u8, (len >> 16) as u8, self.seq]).await.unwrap();
        self.s.write_all(payload).await.unwrap();
        self.seq = self.seq.wrapping_add(1);
    }

    async fn recv(&mut self) -> Vec<u8> {
        let mut h = [0; 4];
        self.s.read_exact(&mut h).await.unwrap();
        assert_eq!(h[3], self.seq, "the client's sequence id");
        self.seq = self.seq.wrapping_add(1);
        let mut payload = vec![0; usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16];
        self.s.read_exact(&mut payload).await.unwrap();
        payload
    }

    /// Greets with `plugin`, reads the client's response and checks its user, database and
    /// scramble (by `expected`).
    async fn greet(&mut self, plugin: &[u8], expected: Option<Vec<u8>>) {
        let caps = wanted() | CapabilityFlags::CLIENT_SSL;
        let hello = HandshakePacket::new(
            10,
            &b"8.0.36"[..],
            1,
            NONCE[..8].try_into().unwrap(),
            Some([&NONCE[8..], &[0]].concat()),
            caps,
            45,
            StatusFlags::empty(),
            Some(plugin),
        );
        let mut out = Vec::new();
        hello.serialize(&mut out);
        self.send(&out).await;
        let response = self.recv().await;
        let r: HandshakeResponse<'_> = ParseBuf(&response).parse(()).unwrap();
        assert_eq!((r.user(), r.db_name()), (&b"sb"[..], Some(&b"bench"[..])));
        assert!(!r.capabilities().contains(CapabilityFlags::CLIENT_FOUND_ROWS));
        if let Some(want) = expected {
            assert_eq!(r.scramble_buf(), &want[..]);
        }
    }

    async fn ok(&mut self) {
        self.send(b"\x00\x00\x00\x02\x00\x00\x00").await;
    }
}

async fn tcp_pair() -> (Stream, Peer<TcpStream>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
    let (server, _) = listener.accept().await.unwrap();
    (Stream::Tcp(client), Peer { s: server, seq: 0 })
}

fn sha2_scramble() -> Vec<u8> {
    scramble_sha256(NONCE, PASSWORD.as_bytes()).unwrap().to_vec()
}

#[tokio::test]
async fn caching_sha2_fast_path_then_a_result_is_read() {
    let (stream, mut peer) = tcp_pair().await;
    let server = tokio::spawn(async move {
        peer.greet(b"caching_sha2_password", Some(sha2_scramble())).await;
        peer.send(&[0x01, 0x03]).await;
        peer.ok().await;
        peer.seq = 0;
        assert_eq!(peer.recv().await, b"\x03SELECT 1");
        peer.send(&[1]).await;
        let mut column = Vec::new();
        Column::new(ColumnType::MYSQL_TYPE_LONGLONG).with_name(b"1").serialize(&mut column);
        peer.send(&column).await;
        peer.send(b"\x011").await;
        peer.send(b"\xfe\x00\x00\x02\x00\x00\x00").await;
    });
    let mut session = connect(stream, &net(), None).await.unwrap();
    let mut rows = Vec::new();
    let done = session.query("SELECT 1", Some(&mut rows), None).await.unwrap();
    server.await.unwrap();
    assert!(done.result_set);
    assert_eq!((done.rows, rows), (1, vec![vec![Value::Int(1)]]));
}

#[tokio::test]
async fn caching_sha2_full_authentication_sends_the_password_in_clear_only_on_a_unix_socket() {
    let (client, server) = UnixStream::pair().unwrap();
    let mut peer = Peer { s: server, seq: 0 };
    let server = tokio::spawn(async move {
        peer.greet(b"caching_sha2_password", Some(sha2_scramble())).await;
        peer.send(&[0x01, 0x04]).await;
        assert_eq!(peer.recv().await, [PASSWORD.as_bytes(), b"\0"].concat());
        peer.ok().await;
    });
    connect(Stream::Unix(client), &net(), None).await.unwrap();
    server.await.unwrap();
}

#[tokio::test]
async fn caching_sha2_full_authentication_over_tcp_encrypts_with_the_servers_rsa_key() {
    let dir = std::env::temp_dir().join(format!("oltplab-rsa-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("key.pem");
    openssl(&["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out"], &key);
    let public = dir.join("public.pem");
    openssl(&["pkey", "-pubout", "-in", key.to_str().unwrap(), "-out"], &public);
    let pem = std::fs::read(&public).unwrap();
    let (stream, mut peer) = tcp_pair().await;
    let server = tokio::spawn(async move {
        peer.greet(b"caching_sha2_password", Some(sha2_scramble())).await;
        peer.send(&[0x01, 0x04]).await;
        assert_eq!(peer.recv().await, [2], "a request for the public key");
        peer.send(&[&[0x01], &pem[..]].concat()).await;
        let encrypted = peer.recv().await;
        peer.ok().await;
        encrypted
    });
    connect(stream, &net(), None).await.unwrap();
    let encrypted = server.await.unwrap();
    assert_eq!(encrypted.len(), 256);
    let sealed = dir.join("sealed.bin");
    std::fs::write(&sealed, &encrypted).unwrap();
    let clear = Command::new("openssl")
        .args(["pkeyutl", "-decrypt", "-pkeyopt", "rsa_padding_mode:oaep", "-inkey"])
        .arg(&key)
        .arg("-in")
        .arg(&sealed)
        .output()
        .expect("the openssl command");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(clear.status.success(), "{}", String::from_utf8_lossy(&clear.stderr));
    let unmasked: Vec<u8> = clear.stdout.iter().enumerate().map(|(i, b)| b ^ NONCE[i % NONCE.len()]).collect();
    assert_eq!(unmasked, [PASSWORD.as_bytes(), b"\0"].concat());
}

#[tokio::test]
async fn a_switch_to_native_password_uses_the_new_nonce_and_unknown_plugins_are_refused() {
    let (stream, mut peer) = tcp_pair().await;
    let server = tokio::spawn(async move {
        peer.greet(b"caching_sha2_password", Some(sha2_scramble())).await;
        let new_nonce = b"ABCDEFGHIJKLMNOPQRST";
        peer.send(&[&b"\xfemysql_native_password\0"[..], new_nonce, b"\0"].concat()).await;
        let want = scramble_native(new_nonce, PASSWORD.as_bytes()).unwrap();
        assert_eq!(peer.recv().await, want);
        peer.ok().await;
    });
    connect(stream, &net(), None).await.unwrap();
    server.await.unwrap();

    let (stream, mut peer) = tcp_pair().await;
    tokio::spawn(async move {
        peer.greet(b"mysql_native_password", Some(scramble_native(NONCE, PASSWORD.as_bytes()).unwrap().to_vec())).await;
        // The client refuses it and closes: nothing more to read.
        peer.send(b"\xfedialog\0x\0").await;
    });
    let e = connect(stream, &net(), None).await.err().unwrap();
    assert!(matches!(&e, Error::UnknownAuthPlugin(name) if name == "dialog"), "{e}");

    let (stream, mut peer) = tcp_pair().await;
    tokio::spawn(async move {
        peer.greet(b"mysql_native_password", None).await;
        peer.send(b"\xff\x15\x04#28000Access denied for user 'sb'").await;
    });
    let e = connect(stream, &net(), None).await.err().unwrap();
    assert!(matches!(&e, Error::Server { code: 1045, message, .. } if message.starts_with("Access denied")), "{e}");
}

fn openssl(args: &[&str], out: &Path) {
    let done = Command::new("openssl").args(args).arg(out).output().expect("the openssl command");
    assert!(done.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&done.stderr));
}
