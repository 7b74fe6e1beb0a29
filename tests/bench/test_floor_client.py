"""bench/floor/floor_client.c, compiled as vs_sysbench.py --floor compiles it, against the
session's MariaDB and PostgreSQL: it runs point selects and read-only transactions for its time
and stops, waiting in each of its ways, and the server executed at least the statements it
counted (a reply walked wrong would desynchronise the connection, and the next reply would fail
or hang it)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oltplab.servers import ManagedServer, MariaDBServer

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
from _vs_floor import floor_binary  # noqa: E402
from _vs_tools import sysbench_db_args  # noqa: E402

DATA = ["--tables=2", "--table-size=100"]


@pytest.fixture(scope="module", params=["mariadb", "postgres"])
def server(request: pytest.FixtureRequest) -> ManagedServer:
    """Each server's emptied database with the tables loaded, once for the module's tests."""
    emptied: ManagedServer = request.getfixturevalue(f"{request.param}_empty_db")
    argv = [sys.executable, "-m", "oltplab", "prepare", "oltp_read_only", f"--db={emptied.url}"]
    done = subprocess.run([*argv, *DATA], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return emptied


@pytest.fixture(scope="module")
def binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The floor client, compiled once for the module."""
    return floor_binary(tmp_path_factory.mktemp("floor"))


def _executed(server: ManagedServer) -> int:
    """The server's statement executions (MariaDB) or committed transactions (PostgreSQL) so
    far, every session's."""
    if isinstance(server, MariaDBServer):
        return int(server.query("SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'")[0][1])
    sql = f"SELECT xact_commit FROM pg_stat_database WHERE datname = '{server.database}'"
    return int(server.query(sql)[0][0])


def _floor(binary: Path, server: ManagedServer, workload: str, wait: str) -> dict[str, float]:
    how = ["--threads=8", "--event-threads=1"] if wait == "epoll" else ["--threads=2"]
    argv = [str(binary), workload, *sysbench_db_args(server), *DATA, *how, "--time=1",
            "--report-interval=0", "--percentile=95"]  # fmt: skip
    env = os.environ | {"FLOOR_CALLS": wait}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["Threads started!", "SQL statistics:"], done.stdout
    out: dict[str, float] = json.loads(lines[2])
    return out


@pytest.mark.parametrize(
    ("workload", "wait"),
    [
        # The point select's one statement, waited for as the vendors' libraries wait.
        ("oltp_point_select", "library"),
        ("oltp_read_only", "blocking"),
        ("oltp_read_only", "epoll"),
    ],
)
def test_the_floor_client_runs_transactions_the_server_executes(
    binary: Path, server: ManagedServer, workload: str, wait: str
) -> None:
    """Each way of waiting: a blocking recv(2) per connection, the vendor library's calls
    (FLOOR_CALLS=library: a non-blocking socket, poll(2) when a read finds nothing), and one
    thread waiting for all its connections in epoll_wait(2) (--event-threads)."""
    before = _executed(server)
    out = _floor(binary, server, workload, wait)
    assert out["transactions"] > 20, out
    # A read-only transaction is 16 statements (BEGIN, 10 point selects, 4 ranges, COMMIT),
    # and on PostgreSQL one commit.
    per_txn = 16 if workload == "oltp_read_only" and isinstance(server, MariaDBServer) else 1
    assert 0.9 < out["seconds"] < 5, out
    assert out["kernel_s"] > 0, out  # its own CPU over the load: the sends and receives
    # PostgreSQL counts a backend's transactions when it reports them (at its exit at the latest).
    deadline = time.monotonic() + 10
    expected = per_txn * out["transactions"]
    while _executed(server) - before < expected and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _executed(server) - before >= expected


def test_a_wrong_option_is_one_line_and_exit_1(binary: Path) -> None:
    done = subprocess.run([str(binary), "--threads=2", "--bogus=1"],
                          capture_output=True, text=True, timeout=10, check=False)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "floor_client: --bogus=1: not an option of the floor client "
        "(it runs oltp_point_select and oltp_read_only)"
    )


def test_its_compiled_binary_is_reused_until_its_source_changes(tmp_path: Path) -> None:
    first = floor_binary(tmp_path)
    built = first.stat().st_mtime_ns
    assert floor_binary(tmp_path).stat().st_mtime_ns == built
