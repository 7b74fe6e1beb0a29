"""The command-line clients, run the way a user would with a server's URL: they prove that
the credentials a ManagedServer hands out work, independently of oltplab's own drivers."""

import os
import subprocess
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from oltplab.servers.process import cmdline, pid_alive


def mariadb_cli(url: str, sql: str) -> subprocess.CompletedProcess[str]:
    """`mariadb` as the URL's user, over TCP or, with `?socket=`, the Unix socket; with
    `?ssl=on`, over TLS."""
    parts = urlsplit(url)
    params = parse_qs(parts.query)
    socket = params.get("socket")
    where = (
        [f"--socket={socket[0]}"]
        if socket
        else [f"--host={parts.hostname}", f"--port={parts.port}"]
    )
    # The client's default would use TLS whenever the server offers it.
    where.append("--ssl" if params.get("ssl") == ["on"] else "--skip-ssl")
    argv = [
        "mariadb", "--no-defaults", *where, f"--user={parts.username}",
        f"--database={parts.path.lstrip('/')}", "--batch", "--skip-column-names", "-e", sql,
    ]  # fmt: skip
    env = os.environ | {"MYSQL_PWD": parts.password or ""}
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False)


def psql_cli(url: str, sql: str) -> subprocess.CompletedProcess[str]:
    """`psql` as the URL's user, over TCP or, with `?socket=DIR`, the Unix socket; with
    `?sslmode=require`, over TLS."""
    parts = urlsplit(url)
    params = parse_qs(parts.query)
    socket = params.get("socket")
    argv = [
        "psql", "--no-psqlrc", "--no-align", "--tuples-only", "--set=ON_ERROR_STOP=1",
        f"--host={socket[0] if socket else parts.hostname}", f"--port={parts.port}",
        f"--username={parts.username}", f"--dbname={parts.path.lstrip('/')}", "--command", sql,
    ]  # fmt: skip
    env = os.environ | {
        "PGPASSWORD": parts.password or "",
        "PGCONNECT_TIMEOUT": "10",
        # libpq's default ("prefer") would use TLS whenever the server offers it.
        "PGSSLMODE": params.get("sslmode", ["disable"])[0],
    }
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False)


def processes_under(directory: Path) -> list[int]:
    """Live processes whose command line names a path under `directory`."""
    marker = f"{directory.resolve()}/"
    pids = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]
    return [p for p in pids if pid_alive(p) and any(marker in arg for arg in cmdline(p))]
