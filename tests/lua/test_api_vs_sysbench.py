"""Pieces of sysbench 1.0.20's Lua API checked against the real sysbench running the same
script: `sysbench.histogram`, result sets' `nfields`, SQL errors' `sql_state` (docs/lua.md)."""

import re
from pathlib import Path

import pytest

from oltplab.servers import MariaDBServer, PostgresServer
from tests.drivers.commands import sysbench_connection
from tests.lua.test_dropin_commands import real, without_banner
from tests.sysbench_compat.test_cli_sqlite import sysbench_cmd

HISTOGRAM = """
function event() end
local function fill()
  local h = sysbench.histogram.new(64, 1, 1000)
  for i = 1, 700 do
    h:update(i * 1.37)
  end
  h:update(0.25)     -- below the range: the first bucket
  h:update(123456)   -- above it: the last
  h:print()
  sysbench.histogram.new(8, 1, 10):print()  -- empty: prints nothing
end
sysbench.cmdline.commands = { hist = { fill } }
"""


def test_histograms_print_what_sysbench_prints(tmp_path: Path) -> None:
    (tmp_path / "hist.lua").write_text(HISTOGRAM)
    theirs = real("./hist.lua", "hist", cwd=tmp_path)
    ours = sysbench_cmd("./hist.lua", "hist", cwd=tmp_path)
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    assert without_banner(ours.stdout) == without_banner(theirs.stdout)
    assert "------------- distribution -------------" in ours.stdout


RESULTS_AND_ERRORS = """
function event() end
function sysbench.hooks.sql_error_ignorable(e)
  print(string.format("hook: errno=%s state='%s'", tostring(e.sql_errno), e.sql_state))
  return false
end
function prepare()
  local con = sysbench.sql.driver():connect()
  for _, q in ipairs({"SELECT 1 AS a, 2 AS b FROM (SELECT 1 AS x) t WHERE x = 0",
                      "SELECT 1 AS a, 2 AS b, 3 AS c"}) do
    local rs = con:query(q)
    print(string.format("%s: nrows=%d nfields=%d", q, rs.nrows, rs.nfields))
  end
  local ok, err = pcall(con.query, con, "SELECT * FROM no_such_table")
  print(ok, (tostring(err):gsub("^.-SQL error", "SQL error")))
end
"""


@pytest.fixture(params=["mariadb", "postgres"])
def server(request: pytest.FixtureRequest) -> MariaDBServer | PostgresServer:
    server: MariaDBServer | PostgresServer = request.getfixturevalue(request.param)
    return server


def test_result_sets_and_sql_errors_read_as_in_sysbench(
    tmp_path: Path, server: MariaDBServer | PostgresServer
) -> None:
    """nfields is the column count even without rows; an error's sql_state is the server's
    (MySQL's ERR packet, PostgreSQL's code), in the hook's descriptor and the fatal message."""
    (tmp_path / "rs.lua").write_text(RESULTS_AND_ERRORS)
    db = sysbench_connection(server.url, server.database)
    theirs = real("./rs.lua", *db, "prepare", cwd=tmp_path)
    ours = sysbench_cmd("./rs.lua", *db, "prepare", cwd=tmp_path)
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    # sysbench's driver prints its FATAL line on stdout; oltplab's drop-in, on stderr.
    said = [line for line in without_banner(theirs.stdout) if not line.startswith("FATAL: ")]
    assert without_banner(ours.stdout) == said
    assert "nrows=0 nfields=2" in ours.stdout
    assert re.search(r"state = '\w{5}'", ours.stdout), ours.stdout


ONE_RESULT_SET = """
function event() end
function prepare()
  local con = sysbench.sql.driver():connect()
  local first = con:query("SELECT 1 AS a")
  print(string.format("first: nrows=%d nfields=%d", first.nrows, first.nfields))
  local second = con:query("SELECT 1 AS a, 2 AS b UNION ALL SELECT 3, 4")
  print("the same result set:", first == second)
  print(string.format("first now: nrows=%d nfields=%d", first.nrows, first.nfields))
  local row = second:fetch_row()
  print(row[1], row[2])
  local other = sysbench.sql.driver():connect():query("SELECT 5 AS a")
  print("another connection's too:", other == second)
end
"""


def test_a_connection_has_one_result_set_as_in_sysbench(
    tmp_path: Path, server: MariaDBServer | PostgresServer
) -> None:
    """A connection's next statement reuses its result set, as sysbench's connection has one
    (oltplab reuses its table: no garbage per statement for the collector)."""
    (tmp_path / "one.lua").write_text(ONE_RESULT_SET)
    db = sysbench_connection(server.url, server.database)
    theirs = real("./one.lua", *db, "prepare", cwd=tmp_path)
    ours = sysbench_cmd("./one.lua", *db, "prepare", cwd=tmp_path)
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    assert without_banner(ours.stdout) == without_banner(theirs.stdout)
    assert "the same result set:\ttrue" in ours.stdout
    assert "first now: nrows=2 nfields=2" in ours.stdout


BOUND_VALUES = """
function event() end
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("DROP TABLE IF EXISTS bound_values")
  con:query("CREATE TABLE bound_values (k INT, i BIGINT, d DOUBLE PRECISION, s VARCHAR(20), " ..
            "c VARCHAR(20))")
  local stmt = con:prepare("INSERT INTO bound_values VALUES (?, ?, ?, ?, ?)")
  local t = sysbench.sql.type
  local k, i, d = stmt:bind_create(t.INT), stmt:bind_create(t.BIGINT), stmt:bind_create(t.DOUBLE)
  local s, c = stmt:bind_create(t.VARCHAR, 20), stmt:bind_create(t.CHAR, 4)
  stmt:bind_param(k, i, d, s, c)
  local rows = { { 42.9, 0.25, "h\\195\\169llo w\\195\\182rld", "abcdefg" },
                 { -3.5, 3, "", "123456" }, { 2 ^ 40, -1e-3, "x", "xy" } }
  for n, r in ipairs(rows) do
    k:set(n)
    i:set(r[1])
    d:set(r[2])
    s:set(r[3])
    c:set(r[4])
    stmt:execute()
  end
  k:set(#rows + 1)
  s:set_rand_str("###")
  stmt:execute()
  local rs = con:query("SELECT k, i, s, c, length(s), d FROM bound_values ORDER BY k")
  local doubles = {}
  for n = 1, rs.nrows do
    local row = rs:fetch_row()
    doubles[n] = table.remove(row)
    if n < rs.nrows then
      print(table.concat(row, "|"))
    else
      print(row[1], row[5], row[3]:match("^%d%d%d$") ~= nil)
    end
  end
  -- sysbench 1.0.20 binds a DOUBLE's buffer wrongly (MariaDB stores 0); oltplab sends the number.
  print("doubles: " .. table.concat(doubles, " ", 1, 3))
  con:query("DROP TABLE bound_values")
  stmt:close()
  con:disconnect()
end
"""


def test_bound_parameters_reach_the_server_as_sysbench_s(
    tmp_path: Path, server: MariaDBServer | PostgresServer
) -> None:
    """`param:set` writes a number or a string into the statement's parameter slot, which its
    execute (an ffi call, script/execute_call.rs) reads: an INT truncates a fraction, a DOUBLE
    takes a number, a CHAR is cut at its length, a string keeps its bytes; the rows
    are sysbench's."""
    (tmp_path / "bound.lua").write_text(BOUND_VALUES)
    db = sysbench_connection(server.url, server.database)
    theirs = real("./bound.lua", *db, "prepare", cwd=tmp_path)
    ours = sysbench_cmd("./bound.lua", *db, "prepare", cwd=tmp_path)
    # sysbench 1.0.20 prints every line, then dies of SIGSEGV as this script ends.
    assert ours.returncode == 0, ours.stderr

    def rows(out: str) -> list[str]:
        return [line for line in without_banner(out) if not line.startswith("doubles: ")]

    assert rows(ours.stdout) == rows(theirs.stdout)
    assert "1|42|héllo wörld|abcd|" in ours.stdout, ours.stdout
    assert "doubles: 0.25 3 -0.001" in ours.stdout, ours.stdout
