"""A self-signed certificate for a server under test that is asked to speak TLS.

Clients of a benchmark do not verify it (sysbench's --mysql-ssl=on and libpq's
sslmode=require do not); it exists so that the cost of encryption can be measured."""

from pathlib import Path

from oltplab.servers import process
from oltplab.servers.binaries import find_program
from oltplab.servers.osuser import OsUser, current_user, give_to

_VALID_DAYS = 3650


def ensure_certificate(tls_dir: Path, user: OsUser) -> tuple[Path, Path]:
    """(certificate, key) in `tls_dir`, made on first use and readable by `user` only."""
    cert, key = tls_dir / "server.crt", tls_dir / "server.key"
    if not (cert.is_file() and key.is_file()):
        tls_dir.mkdir(mode=0o700, exist_ok=True)
        openssl = find_program(["openssl"], bin_dir=None, what="openssl (for the TLS certificate)")
        process.run(
            [openssl, "req", "-x509", "-nodes", "-newkey", "ec",
             "-pkeyopt", "ec_paramgen_curve:prime256v1",  # quick to make, accepted by both
             "-keyout", key, "-out", cert, "-days", str(_VALID_DAYS),
             "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
            user=current_user(), what="openssl req", timeout_s=60, cwd=tls_dir,
        )  # fmt: skip
        key.chmod(0o600)  # PostgreSQL refuses a key that others may read
    give_to(user, tls_dir)
    return cert, key
