"""The done-when test: the same command line through the real sysbench 1.0.20 (Debian's
package) and through `oltplab sysbench`, against the same MariaDB server; the two outputs
agree line by line in structure (tests/sysbench_compat/shapes.py).

Needs the session's private MariaDB (tests/conftest.py) and /usr/bin/sysbench.
"""

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from oltplab.servers import MariaDBServer
from tests.sysbench_compat.shapes import assert_same_structure
from tests.sysbench_compat.test_cli_sqlite import sysbench_cmd

pytestmark = pytest.mark.serial  # open-loop rates side by side with sysbench

DATA = ["--table-size=1000", "--tables=2"]


def connection_options(url: str) -> list[str]:
    """sysbench's options for a mysql:// URL (TCP, or ?socket=)."""
    parts = urlsplit(url)
    socket = parse_qs(parts.query).get("socket")
    where = (
        [f"--mysql-socket={socket[0]}"]
        if socket
        else [f"--mysql-host={parts.hostname}", f"--mysql-port={parts.port or 3306}"]
    )
    return [
        *where,
        f"--mysql-user={unquote(parts.username or 'sbtest')}",
        f"--mysql-password={unquote(parts.password or '')}",
        f"--mysql-db={unquote(parts.path.lstrip('/')) or 'sbtest'}",
    ]


class Both:
    """Runs one command line through both tools."""

    def __init__(self, url: str, cwd: Path) -> None:
        self.sysbench = shutil.which("sysbench") or "/usr/bin/sysbench"
        self.connection = connection_options(url)
        self.cwd = cwd

    def real(self, *args: str) -> str:
        done = subprocess.run(
            [self.sysbench, "oltp_read_write", *self.connection, *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def ours(self, *args: str) -> str:
        done = sysbench_cmd("oltp_read_write", *self.connection, *args, cwd=self.cwd)
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        return done.stdout


@pytest.fixture(scope="module")
def both(
    mariadb_empty_db: MariaDBServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Both]:
    """Both tools on the session's MariaDB over TCP; no sbtest tables are left behind."""
    tools = Both(mariadb_empty_db.url, tmp_path_factory.mktemp("vs-sysbench"))
    yield tools
    tools.real(*DATA, "cleanup")


@pytest.mark.parametrize("threads", ["--threads=1", "--threads=2"])
def test_prepare_and_cleanup(both: Both, threads: str) -> None:
    ordered = threads == "--threads=1"  # parallel prepare finishes tables in any order
    theirs = both.real(*DATA, threads, "prepare")
    both.real(*DATA, "cleanup")
    ours = both.ours(*DATA, threads, "prepare")
    assert_same_structure(ours, theirs, ordered=ordered)
    assert_same_structure(
        both.ours(*DATA, threads, "cleanup"), both.real(*DATA, threads, "cleanup")
    )


@pytest.fixture(scope="module")
def prepared(both: Both) -> Both:
    both.ours(*DATA, "prepare")
    return both


@pytest.mark.parametrize(
    "options",
    [
        ["--time=2"],
        ["--time=3", "--threads=2", "--report-interval=1"],
        ["--time=1", "--histogram"],
        ["--time=1", "--percentile=99", "--rand-seed=7"],
        ["--time=1", "--percentile=0"],
        ["--time=0", "--events=200", "--db-ps-mode=disable"],
        ["--time=2", "--rate=200"],
    ],
    ids=lambda options: " ".join(options),
)
def test_run(prepared: Both, options: list[str]) -> None:
    assert_same_structure(
        prepared.ours(*DATA, *options, "run"), prepared.real(*DATA, *options, "run")
    )


def test_run_over_the_socket(prepared: Both, mariadb_empty_db: MariaDBServer) -> None:
    """--mysql-socket, as sysbench takes it, reaches the same server."""
    over_socket = Both(mariadb_empty_db.socket_url, prepared.cwd)
    assert any(o.startswith("--mysql-socket=") for o in over_socket.connection)
    # At least two intervals: sysbench's last interval line appears or not with timing.
    options = [*DATA, "--time=2", "--report-interval=1", "run"]
    assert_same_structure(over_socket.ours(*options), over_socket.real(*options))
