"""A script split into modules as sysbench-tpcc is (tpcc.lua requiring tpcc_common, tpcc_run and
tpcc_check; a small imitation of our own, not Percona's code), through `oltplab sysbench` on real
MariaDB and PostgreSQL against the real sysbench 1.0.20 running the same files: `help`, a
parallel prepare, a `PARALLEL_COMMAND` custom command, `run`'s counts, `cleanup`, an unknown
command; and the modules found from another directory, where sysbench does not look
(docs/lua.md's differences)."""

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from oltplab.servers import MariaDBServer, PostgresServer
from tests.drivers.commands import sysbench_connection
from tests.lua.test_dropin_commands import real, without_banner
from tests.lua.test_dropin_run import report_counts
from tests.lua.test_script_verbs import server
from tests.sysbench_compat.test_cli_sqlite import sysbench_cmd

__all__ = ["server"]  # the fixture: MariaDB and PostgreSQL

MAIN = """#!/usr/bin/env sysbench
require("wh_common")
require("wh_run")
require("wh_check")

function thread_init()
  con = sysbench.sql.driver():connect()
  done_events = 0
end

function event()
  done_events = done_events + 1
  if done_events % 3 == 0 then stock_level() else new_order() end
end

function thread_done()
  con:disconnect()
end
"""

COMMON = """
sysbench.cmdline.options = {
  scale = {"Warehouses per set", 2},
  sets = {"Sets of tables", 1},
}

local function my_sets()
  return sysbench.tid % sysbench.opt.threads + 1, sysbench.opt.sets, sysbench.opt.threads
end

function cmd_prepare()
  local con = sysbench.sql.driver():connect()
  local first, last, step = my_sets()
  for t = first, last, step do
    print(string.format("Creating set %d", t))
    con:query(string.format("CREATE TABLE wh%d (w_id INTEGER PRIMARY KEY, w_ytd INTEGER)", t))
    for w = 1, sysbench.opt.scale do
      con:query(string.format("INSERT INTO wh%d VALUES (%d, 0)", t, w))
    end
  end
end

function cmd_check()
  check_sets(my_sets())
end

function cleanup()
  local con = sysbench.sql.driver():connect()
  for t = 1, sysbench.opt.sets do
    print(string.format("Dropping set %d", t))
    con:query(string.format("DROP TABLE IF EXISTS wh%d", t))
  end
end

sysbench.cmdline.commands = {
  prepare = {cmd_prepare, sysbench.cmdline.PARALLEL_COMMAND},
  check = {cmd_check, sysbench.cmdline.PARALLEL_COMMAND},
}
"""

RUN = """
function new_order()
  local t = sysbench.rand.uniform(1, sysbench.opt.sets)
  local w = sysbench.rand.uniform(1, sysbench.opt.scale)
  con:query("BEGIN")
  con:query(string.format("UPDATE wh%d SET w_ytd = w_ytd + 1 WHERE w_id = %d", t, w))
  con:query("COMMIT")
end

function stock_level()
  local t = sysbench.rand.uniform(1, sysbench.opt.sets)
  local rs = con:query(string.format("SELECT w_ytd FROM wh%d WHERE w_id = 1", t))
  for _ = 1, rs.nrows do rs:fetch_row() end
end
"""

CHECK = """
function check_sets(first, last, step)
  local con = sysbench.sql.driver():connect()
  for t = first, last, step do
    local n = con:query_row(string.format("SELECT COUNT(*) FROM wh%d", t))
    print(string.format("Checking set %d: %s warehouses", t, n))
  end
end
"""

EVENTS = 30
Tool = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    for name, text in (("wh", MAIN), ("wh_common", COMMON), ("wh_run", RUN), ("wh_check", CHECK)):
        (tmp_path / f"{name}.lua").write_text(text)
    return tmp_path


# Where one of the script's messages starts: sysbench's threads print a message and its newline
# apart, so two of its messages can share a line.
MESSAGE_START = re.compile(r"(?=Creating set |Checking set |Initializing )")


def said(text: str) -> list[str]:
    """The messages, sorted: parallel threads print in any order."""
    lines = [line for line in without_banner(text) if line]
    return sorted(part for line in lines for part in MESSAGE_START.split(line) if part)


def test_a_script_in_modules_runs_as_in_sysbench(
    layout: Path, server: MariaDBServer | PostgresServer
) -> None:
    db = [*sysbench_connection(server.url, server.database), "--sets=3"]
    server.query("DROP TABLE IF EXISTS wh1, wh2, wh3", database=server.database)

    def each(tool: Tool, *args: str) -> str:
        done = tool("./wh.lua", *db, *args, cwd=layout)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "FATAL" not in done.stdout + done.stderr, done.stdout + done.stderr
        return done.stdout

    def both(*args: str) -> tuple[str, str]:
        return each(sysbench_cmd, *args), each(real, *args)

    ours, theirs = both("help")
    assert without_banner(ours) == without_banner(theirs)
    assert "  --sets=N  Sets of tables [1]" in ours
    ours = each(sysbench_cmd, "--threads=2", "prepare")
    created = ["Creating set 1", "Creating set 2", "Creating set 3"]
    assert said(ours) == [*created, "Initializing worker threads..."]
    each(sysbench_cmd, "cleanup")  # sysbench prepares the same again
    assert said(each(real, "--threads=2", "prepare")) == said(ours)

    ours, theirs = both("--threads=2", "check")  # the custom PARALLEL_COMMAND
    assert said(ours) == said(theirs)
    assert [line for line in said(ours) if line.startswith("Checking")] == [
        f"Checking set {t}: 2 warehouses" for t in (1, 2, 3)
    ]

    # One thread, a fixed number of events: the same statements by each tool, counted alike.
    ours, theirs = both("--threads=1", f"--events={EVENTS}", "--time=0", "run")
    counts = report_counts(ours)
    assert counts == report_counts(theirs)
    assert counts["events"] == EVENTS
    assert counts["read"] == EVENTS // 3  # a stock level each third event

    ours = each(sysbench_cmd, "cleanup")
    assert without_banner(ours) == without_banner(each(real, "cleanup"))
    assert said(ours) == ["Dropping set 1", "Dropping set 2", "Dropping set 3"]
    assert server.query(
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_name LIKE 'wh%'",
        database=server.database,
    ) == [["0"]]


def test_modules_are_found_beside_the_script_from_elsewhere(layout: Path) -> None:
    """sysbench looks for modules in the current directory only: oltplab also in the script's."""
    elsewhere = layout / "elsewhere"
    elsewhere.mkdir()
    ours = sysbench_cmd("../wh.lua", "help", cwd=elsewhere)
    assert ours.returncode == 0, ours.stderr
    assert "  --scale=N Warehouses per set [2]" in ours.stdout
    theirs = real("../wh.lua", "help", cwd=elsewhere)
    assert "module 'wh_common' not found" in theirs.stdout + theirs.stderr


def test_an_unknown_command_is_refused_as_sysbench_refuses_it(layout: Path) -> None:
    ours = sysbench_cmd("./wh.lua", "bogus", cwd=layout)
    theirs = real("./wh.lua", "bogus", cwd=layout)
    assert theirs.returncode == 1
    assert ours.returncode != 0
    assert re.search(r"Unknown command: bogus", theirs.stdout + theirs.stderr)
    assert "bogus" in ours.stderr
    assert ours.stderr.count("\n") == 1, ours.stderr
    assert "Traceback" not in ours.stderr
