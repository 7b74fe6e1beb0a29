"""A statement's two paths (script/resume.rs): done in its first poll, without a yield, on an
engine thread that owns one connection; awaited after a yield where the engine thread owns
several connections or the operation waits (an open loop's next arrival, `ffi.C.usleep`). On
every path each event sends its statement, reads the value it bound, and is counted once, on a
real MariaDB."""

import json
from pathlib import Path

import pytest

from oltplab.servers import MariaDBServer
from tests.drivers.commands import oltplab_cli, oltplab_done

EVENTS = 400

# Each event reads back the thread id it bound, and fails at the script's line when it differs;
# every other thread also thinks for 100 µs in ffi.C.usleep.
SCRIPT = """
ffi.cdef[[int usleep(unsigned int);]]

function thread_init()
  con = sysbench.sql.driver():connect()
  stmt = con:prepare("SELECT ?")
  param = stmt:bind_create(sysbench.sql.type.INT)
  stmt:bind_param(param)
end

function event()
  param:set(sysbench.tid)
  stmt:execute()
  local got = con:query_row("SELECT " .. sysbench.tid)
  if tonumber(got) ~= sysbench.tid then
    error("read " .. tostring(got) .. " in thread " .. sysbench.tid)
  end
  if sysbench.tid % 2 == 0 then
    ffi.C.usleep(100)
  end
end

function thread_done()
  stmt:close()
  con:disconnect()
end
"""


@pytest.mark.parametrize(
    "shape",
    [["--threads=2"], ["--threads=2", "--rate=400"], ["--threads=80"]],
    ids=["one-connection-per-thread", "open-loop", "threads-with-several-connections"],
)
def test_every_event_sends_and_counts_its_statements(
    tmp_path: Path, mariadb: MariaDBServer, shape: list[str]
) -> None:
    (tmp_path / "paths.lua").write_text(SCRIPT)
    out = tmp_path / "run"
    oltplab_cli(
        "run", "./paths.lua", "--db", mariadb.url, *shape, f"--events={EVENTS}", "--time=0",
        "--out", str(out), cwd=tmp_path,
    )  # fmt: skip
    summary = json.loads((out / "run.json").read_text())["summary"]
    assert summary["transactions"] == EVENTS
    # The prepared statement and the query of each event: both read.
    assert summary["queries"]["read"] == 2 * EVENTS
    assert summary["queries"]["total"] == 2 * EVENTS
    assert summary["errors"]["total"] == 0


def test_an_error_of_the_engine_s_function_names_the_script_line(
    tmp_path: Path, mariadb: MariaDBServer
) -> None:
    """On the path without a yield too, an error of the engine's function (a closed statement
    executed) names the line of the script that called it."""
    failing = SCRIPT.replace("  stmt:execute()\n", "  stmt:close()\n  stmt:execute()\n", 1)
    (tmp_path / "fails.lua").write_text(failing)
    lines = failing.splitlines()
    line = next(n for n, text in enumerate(lines, 1) if text == "  stmt:execute()")
    done = oltplab_done(
        "run", "./fails.lua", "--db", mariadb.url, "--threads=1", "--events=5", "--time=0",
        "--out", str(tmp_path / "run"), cwd=tmp_path,
    )  # fmt: skip
    said = done.stdout + done.stderr
    assert done.returncode != 0, said
    assert f"fails.lua:{line}: attempt to execute a closed statement" in said, said
    assert "Traceback" not in said


# Every other attempt inserts key 0, which the table holds: a duplicate-key error of the
# statement's execute, which the hook makes ignorable (the event restarts, counted as an error,
# and its next attempt inserts a new key).
DUPLICATES = """
function sysbench.hooks.sql_error_ignorable(e)
  return e.sql_errno == 1062
end

function thread_init()
  con = sysbench.sql.driver():connect()
  stmt = con:prepare("INSERT INTO TABLE_NAME VALUES (?)")
  param = stmt:bind_create(sysbench.sql.type.INT)
  stmt:bind_param(param)
  attempts = 0
end

function event()
  attempts = attempts + 1
  param:set(attempts % 2 == 0 and 0 or sysbench.tid * 1000000 + attempts)
  stmt:execute()
end
"""


@pytest.mark.parametrize(
    "threads", [1, 80], ids=["one-connection-per-thread", "threads-with-several-connections"]
)
def test_a_failed_execute_restarts_its_event_on_either_path(
    tmp_path: Path, mariadb: MariaDBServer, threads: int
) -> None:
    """A statement's error reaches the script from the ffi call's slow path (done in its first
    poll or awaited after a yield): the hook sees its errno and the event restarts."""
    table = f"dup_keys_{threads}"
    mariadb.query(f"DROP TABLE IF EXISTS {table}", mariadb.database)
    mariadb.query(f"CREATE TABLE {table} (k INT PRIMARY KEY)", mariadb.database)
    mariadb.query(f"INSERT INTO {table} VALUES (0)", mariadb.database)
    (tmp_path / "dups.lua").write_text(DUPLICATES.replace("TABLE_NAME", table))
    out = tmp_path / "run"
    oltplab_cli(
        "run", "./dups.lua", "--db", mariadb.url, f"--threads={threads}", "--time=2",
        "--out", str(out), cwd=tmp_path,
    )  # fmt: skip
    summary = json.loads((out / "run.json").read_text())["summary"]
    # Each event's first attempt fails (but a thread's first), its second inserts a row.
    events = summary["transactions"]
    assert events > 10 * threads
    assert summary["queries"]["write"] == events
    assert events - threads <= summary["errors"]["total"] <= events
    rows = mariadb.query(f"SELECT COUNT(*) FROM {table}", mariadb.database)
    assert int(rows[0][0]) - 1 >= events  # and those of events the time limit cut short
