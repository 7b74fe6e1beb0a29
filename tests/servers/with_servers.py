"""Runs a command with private MariaDB and PostgreSQL servers, as `make test` runs the engine's
Rust tests and pytest:

    python -m tests.servers.with_servers -- scripts/test-phases rust parallel serial
    python -m tests.servers.with_servers -- cargo test -p oltplab-engine

The command finds the servers in OLTPLAB_TEST_MYSQL_URL, OLTPLAB_TEST_PG_URL and
OLTPLAB_TEST_PG_TLS_URL, and pytest (tests/conftest.py) in OLTPLAB_TEST_SERVERS_DIR, so that
one pair serves every phase of `make test` (scripts/test-phases). They are stopped when it
ends, whatever the ending, and their directory is removed; when the command failed, all but
the data directories is kept.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from oltplab.exceptions import OltpLabError
from oltplab.servers import ManagedServer, MariaDBServer, PostgresServer
from tests.servers.settings import (
    PG_TEST_SERVER_SETTINGS,
    SHARED_SERVERS_ENV,
    TEST_SERVER_SETTINGS,
)

USAGE = "usage: python -m tests.servers.with_servers -- COMMAND [ARG...]"


def main(argv: Sequence[str]) -> int:
    if len(argv) < 2 or argv[0] != "--":
        print(USAGE, file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _exit_on_sigterm)  # so that the servers are stopped
    root = Path(tempfile.mkdtemp(prefix="oltplab-servers-"))
    root.chmod(0o711)  # when we are root, the servers' accounts must enter it
    mariadb = MariaDBServer(root / "mariadb", TEST_SERVER_SETTINGS)
    postgres = PostgresServer(root / "postgresql", PG_TEST_SERVER_SETTINGS)
    code = 1
    try:
        for server in (mariadb, postgres):
            server.start()
        # The engine's tests switch local_infile off and on (SET GLOBAL) to reach the
        # multi-row INSERT fallback of LOAD DATA.
        mariadb.query(f"GRANT SUPER ON *.* TO '{mariadb.user}'@'{mariadb.host}'")
        env = os.environ | {
            "OLTPLAB_TEST_MYSQL_URL": mariadb.url,
            "OLTPLAB_TEST_PG_URL": postgres.url,
            "OLTPLAB_TEST_PG_TLS_URL": postgres.tls_url,
            SHARED_SERVERS_ENV: str(root),
        }
        code = subprocess.run(list(argv[1:]), env=env, check=False).returncode
    except OltpLabError as e:
        print(f"with_servers: {e}", file=sys.stderr)
    finally:
        code = _stop(mariadb, postgres) or code
        if code == 0:
            shutil.rmtree(root, ignore_errors=True)
        else:
            for server in (mariadb, postgres):
                shutil.rmtree(server.data_dir, ignore_errors=True)
            print(f"with_servers: the servers' logs are kept in {root}", file=sys.stderr)
    return code


def _stop(*servers: ManagedServer) -> int:
    code = 0
    for server in servers:
        try:
            server.stop()
        except OltpLabError as e:
            print(f"with_servers: {e}", file=sys.stderr)
            code = 1
    return code


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
