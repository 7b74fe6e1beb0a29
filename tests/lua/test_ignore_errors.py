"""Ignorable SQL errors against the real sysbench 1.0.20 on MariaDB and PostgreSQL: a script of
our own whose every other attempt inserts a duplicate key. Where sysbench ignores the error
(MariaDB's 1062 in `--mysql-ignore-errors`, `all`; PostgreSQL's unique violation, which its pgsql
driver always ignores: it has no ignore-errors option) the event restarts after
`before_restart_event` with the error's descriptor, and the report's `ignored errors` line
counts each; where it does not, the run stops with sysbench's FATAL lines and exit 1."""

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from oltplab.servers import MariaDBServer, PostgresServer
from tests.drivers.commands import sysbench_connection
from tests.lua.test_api_vs_sysbench import server
from tests.lua.test_dropin_commands import real
from tests.lua.test_dropin_run import report_counts
from tests.sysbench_compat.test_cli_sqlite import sysbench_cmd

__all__ = ["server"]  # the fixture: MariaDB and PostgreSQL

EVENTS = 10
Tool = Callable[..., "subprocess.CompletedProcess[str]"]

DUPLICATES = """
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("DROP TABLE IF EXISTS dup")
  con:query("CREATE TABLE dup (id INTEGER PRIMARY KEY)")
  con:query("INSERT INTO dup VALUES (1)")
end
function cleanup()
  sysbench.sql.driver():connect():query("DROP TABLE IF EXISTS dup")
end
function thread_init()
  con = sysbench.sql.driver():connect()
  tries, restarts = 0, 0
end
function sysbench.hooks.before_restart_event(err)
  restarts = restarts + 1
  last = err
end
function event()
  tries = tries + 1
  con:query("SELECT 1")
  if tries % 2 == 1 then
    con:query("INSERT INTO dup VALUES (@ID@)")
  end
end
function thread_done()
  print(string.format("thread %d: %d tries, %d restarts, last errno %s state %s", sysbench.tid,
    tries, restarts, tostring(last and last.sql_errno), tostring(last and last.sql_state)))
end
"""


def runs(
    tmp_path: Path, server: MariaDBServer | PostgresServer, value: str, *options: str
) -> tuple["subprocess.CompletedProcess[str]", "subprocess.CompletedProcess[str]"]:
    """Our run and sysbench's of the script, each on freshly prepared data."""
    (tmp_path / "dup.lua").write_text(DUPLICATES.replace("@ID@", value))
    db = sysbench_connection(server.url, server.database)
    load = [*db, "--threads=1", f"--events={EVENTS}", "--time=0", *options, "run"]
    done = []
    for tool in (sysbench_cmd, real):
        assert tool("./dup.lua", *db, "prepare", cwd=tmp_path).returncode == 0
        done.append(tool("./dup.lua", *load, cwd=tmp_path))
        assert tool("./dup.lua", *db, "cleanup", cwd=tmp_path).returncode == 0
    return done[0], done[1]


def ignored(stdout: str) -> int:
    m = re.search(r"^\s+ignored errors:\s+(\d+)\s+\(", stdout, re.M)
    assert m is not None, stdout
    return int(m.group(1))


def restarted(
    ours: "subprocess.CompletedProcess[str]", theirs: "subprocess.CompletedProcess[str]", state: str
) -> None:
    assert ours.returncode == theirs.returncode == 0, ours.stderr + theirs.stdout
    errno = "1062" if state == "23000" else "0"  # sysbench's pgsql driver gives no number
    said = f"thread 0: {2 * EVENTS} tries, {EVENTS} restarts, last errno {errno} state {state}"
    assert said in theirs.stdout
    assert said in ours.stdout
    assert ignored(ours.stdout) == ignored(theirs.stdout) == EVENTS
    # The failed INSERTs count nowhere; the SELECTs of both attempts do.
    assert report_counts(ours.stdout) == report_counts(theirs.stdout)
    assert report_counts(ours.stdout)["read"] == 2 * EVENTS
    assert "FATAL" not in ours.stdout + ours.stderr


@pytest.mark.parametrize("ignore", ["1062", "all", "1213,1062"])
def test_listed_mysql_errors_restart_the_event(
    tmp_path: Path, mariadb: MariaDBServer, ignore: str
) -> None:
    ours, theirs = runs(tmp_path, mariadb, "1", f"--mysql-ignore-errors={ignore}")
    restarted(ours, theirs, "23000")


def test_a_unique_violation_restarts_the_event_on_postgresql(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    ours, theirs = runs(tmp_path, postgres, "1")
    restarted(ours, theirs, "23505")


# The error each tool prints last, and the driver's lines before it.
FATAL = {
    "mariadb": [
        "FATAL: mysql_drv_query() returned error 1062 (Duplicate entry '1' for key 'PRIMARY') "
        "for query 'INSERT INTO dup VALUES (1)'",
        "FATAL: `thread_run' function failed: ./dup.lua:23: SQL error, errno = 1062, "
        "state = '23000': Duplicate entry '1' for key 'PRIMARY'",
    ],
    "postgres": [
        'FATAL: PQexec() failed: 7 null value in column "id" of relation "dup" violates '
        "not-null constraint",
        "FATAL: failed query was: INSERT INTO dup VALUES (NULL)",
        "FATAL: `thread_run' function failed: ./dup.lua:23: SQL error, errno = 0, "
        """state = '23502': null value in column "id" of relation "dup" violates not-null """
        "constraint",
    ],
}


def test_an_error_sysbench_does_not_ignore_stops_the_run(
    tmp_path: Path, server: MariaDBServer | PostgresServer
) -> None:
    """MariaDB's 1062 outside the default list (1213,1020,1205); PostgreSQL's not-null
    violation, which its driver never ignores."""
    mysql = isinstance(server, MariaDBServer)
    ours, theirs = runs(tmp_path, server, "1" if mysql else "NULL")
    assert ours.returncode == theirs.returncode == 1
    expected = FATAL["mariadb" if mysql else "postgres"]
    # sysbench prints its FATAL lines on stdout; oltplab's drop-in, on stderr.
    assert [line for line in theirs.stdout.splitlines() if line.startswith("FATAL")] == expected
    assert ours.stderr.splitlines() == expected
    assert "SQL statistics" not in ours.stdout
