"""`oltplab sysbench SCRIPT.lua run`: a user's script's events on the engine, against the real
sysbench 1.0.20 running the same script on the same server. Debian's scripts copied under
names that are not built-in workloads (so that the script itself runs), a fixed number of
events on one connection: the server's own statement counters (MariaDB's Com_*,
PostgreSQL's pg_stat_statements) must move alike for both tools and for oltplab's native
workload of the same name, and the report must count what sysbench counts (docs/lua.md)."""

import re
import subprocess
from pathlib import Path

import pytest

from oltplab.servers import MariaDBServer, PostgresServer
from tests.drivers.commands import sysbench_connection
from tests.drivers.counters import Counts, delta, mariadb_status
from tests.lua.test_dropin_commands import real, scripts, without_banner
from tests.lua.test_script_verbs import server
from tests.sysbench_compat.test_cli_sqlite import sysbench_cmd
from tests.sysbench_compat.test_vs_sysbench import connection_options

__all__ = ["scripts", "server"]  # the fixtures, shared with the other tests

EVENTS = 20
# The statements a script's events send, as the server counts them. Not the SHOWs each tool
# reads the server with, nor the logins: those differ by design (docs/lua.md).
STATEMENT_COUNTERS = (
    "Com_select",
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Com_begin",
    "Com_commit",
    "Com_rollback",
    "Com_stmt_prepare",
    "Com_stmt_execute",
    "Com_stmt_close",
)
SCRIPTS = (
    "oltp_read_write",
    "oltp_read_only",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_delete",
    "oltp_insert",
    "select_random_points",
    "select_random_ranges",
)


def tables(script: str) -> int:
    """select_random_* read sbtest1 only (oltplab's native ones refuse more tables)."""
    return 1 if script.startswith("select_random_") else 2


def statements(
    server: MariaDBServer, run: "subprocess.CompletedProcess[str]", before: Counts
) -> Counts:
    assert run.returncode == 0, run.stdout + run.stderr
    moved = delta(mariadb_status(server), before)
    return {name: moved[name] for name in STATEMENT_COUNTERS}


def report_counts(stdout: str) -> dict[str, int]:
    """sysbench's report: the queries performed and the events. A statement that changed no
    row counts as "other", not "write": with sysbench's random ids (oltp_delete deletes some
    twice), the split differs from run to run, the sum does not."""
    found = {}
    for name in ("read", "write", "other", "total"):
        m = re.search(rf"^\s+{name}:\s+(\d+)$", stdout, re.M)
        assert m is not None, stdout
        found[name] = int(m.group(1))
    m = re.search(r"^\s+total number of events:\s+(\d+)$", stdout, re.M)
    assert m is not None, stdout
    found["events"] = int(m.group(1))
    found["write"] += found.pop("other")
    return found


@pytest.mark.parametrize("name", SCRIPTS)
def test_a_debian_script_sends_what_sysbench_sends(
    scripts: Path, mariadb_empty_db: MariaDBServer, name: str
) -> None:
    server = mariadb_empty_db
    script = f"./my_{name}.lua"
    db = [*connection_options(server.url), f"--tables={tables(name)}", "--table-size=200"]
    load = [*db, "--threads=1", f"--events={EVENTS}", "--time=0"]

    def fresh() -> None:  # the same rows for each tool (oltp_delete's find fewer to delete)
        server.query("DROP TABLE IF EXISTS sbtest1, sbtest2", database=server.database)
        assert real(script, *db, "prepare", cwd=scripts).returncode == 0

    fresh()
    before = mariadb_status(server)
    theirs_run = real(script, *load, "run", cwd=scripts)
    theirs = statements(server, theirs_run, before)
    fresh()
    before = mariadb_status(server)
    ours_run = sysbench_cmd(script, *load, "run", cwd=scripts)
    ours = statements(server, ours_run, before)

    assert ours == theirs
    assert sum(theirs.values()) >= EVENTS
    # oltplab's native workload of the same name sends the same per event (it closes no
    # statement: its connection's end does; its pre-flight reads one row of each table).
    before = mariadb_status(server)
    native = statements(server, sysbench_cmd(name, *load, "run", cwd=scripts), before)
    native["Com_select"] -= tables(name)
    assert {**native, "Com_stmt_close": 0} == {**theirs, "Com_stmt_close": 0}
    assert report_counts(ours_run.stdout) == report_counts(theirs_run.stdout)
    assert ours_run.stderr == ""
    assert "Threads started!" in without_banner(ours_run.stdout)
    sysbench_cmd(script, *db, "cleanup", cwd=scripts)


# Calls per statement text since the reset, the benchmark's statements only (not the tools'
# reads of the server's version and settings, nor the reset itself); select_random_*'s texts
# span lines, read back one line each.
_PGSS = (
    r"SELECT regexp_replace(s.query, '\s+', ' ', 'g'), sum(s.calls) FROM pg_stat_statements s "
    "JOIN pg_database d "
    "ON d.oid = s.dbid WHERE d.datname = current_database() AND (s.query LIKE '%sbtest%' "
    "OR s.query IN ('BEGIN', 'COMMIT', 'ROLLBACK')) GROUP BY 1"
)


def pg_statements(server: PostgresServer) -> dict[str, int]:
    """Calls per statement, whichever table it went to (the tools draw tables alike, not the
    same tables)."""
    calls: dict[str, int] = {}
    for query, n in server.query(_PGSS, database=server.database):
        text = re.sub(r"sbtest[0-9]+", "sbtestN", query)
        calls[text] = calls.get(text, 0) + int(float(n))
    return calls


def pg_reset(server: PostgresServer) -> None:
    server.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", database=server.database)
    server.query("SELECT pg_stat_statements_reset()", database=server.database)


@pytest.mark.parametrize("name", SCRIPTS)
def test_a_debian_script_sends_what_sysbench_and_the_native_one_send_to_postgresql(
    scripts: Path, postgres_empty_db: PostgresServer, name: str
) -> None:
    server = postgres_empty_db
    script = f"./my_{name}.lua"
    db = [
        *sysbench_connection(server.url, server.database),
        f"--tables={tables(name)}",
        "--table-size=200",
    ]
    load = [*db, "--threads=1", f"--events={EVENTS}", "--time=0"]
    server.query("DROP TABLE IF EXISTS sbtest1, sbtest2", database=server.database)
    assert real(script, *db, "prepare", cwd=scripts).returncode == 0

    pg_reset(server)
    theirs_run = real(script, *load, "run", cwd=scripts)
    assert theirs_run.returncode == 0, theirs_run.stdout
    theirs = pg_statements(server)
    pg_reset(server)
    ours_run = sysbench_cmd(script, *load, "run", cwd=scripts)
    assert ours_run.returncode == 0, ours_run.stderr
    ours = pg_statements(server)

    assert ours == theirs
    assert sum(theirs.values()) >= EVENTS
    assert report_counts(ours_run.stdout) == report_counts(theirs_run.stdout)
    pg_reset(server)
    native_run = sysbench_cmd(name, *load, "run", cwd=scripts)
    assert native_run.returncode == 0, native_run.stderr
    # oltplab's native workload of the same name sends the same, but for its pre-flight (a
    # look for each table, one row read).
    native = {
        text: n
        for text, n in pg_statements(server).items()
        if "information_schema" not in text and not text.startswith("SELECT id FROM sbtestN LIMIT")
    }
    assert native == theirs
    sysbench_cmd(script, *db, "cleanup", cwd=scripts)


@pytest.mark.slow
def test_bulk_insert_fills_a_table_per_thread_as_sysbench_does(
    scripts: Path, server: MariaDBServer | PostgresServer
) -> None:
    """Debian's bulk_insert.lua: each thread appends to its own table in events that send
    nothing until the buffer fills. Connections whose events never wait must still share the
    engine thread's time, as sysbench's OS threads do (each table gets rows)."""
    script = "./my_bulk_insert.lua"
    db = [*sysbench_connection(server.url, server.database), "--threads=2"]

    def rows() -> list[int]:
        return [
            int(server.query(f"SELECT COUNT(*) FROM sbtest{t}", database=server.database)[0][0])
            for t in (1, 2)
        ]

    for tool in (real, sysbench_cmd):
        server.query("DROP TABLE IF EXISTS sbtest1, sbtest2", database=server.database)
        assert tool(script, *db, "prepare", cwd=scripts).returncode == 0
        done = tool(script, *db, "--time=1", "run", cwd=scripts)
        assert done.returncode == 0, done.stdout + done.stderr
        filled = rows()
        assert all(n > 0 for n in filled), (tool, filled)
        assert sum(filled) == report_counts(done.stdout)["events"]
        assert tool(script, *db, "cleanup", cwd=scripts).returncode == 0
