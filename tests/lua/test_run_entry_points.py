"""Scripts of our own through `oltplab sysbench SCRIPT.lua run`, each entry point against the
real sysbench 1.0.20 running the same file on the same MariaDB or PostgreSQL: per-thread globals,
`thread_run` with sysbench's ffi event calls and `ffi.C.usleep`, `sb_counter_inc`, ignorable
errors restarting events through the hooks, a fatal SQL error, a Lua error naming file:line,
sysbench 1.0's legacy API (docs/lua.md)."""

import re
from pathlib import Path

from oltplab.servers import MariaDBServer, PostgresServer
from tests.drivers.commands import sysbench_connection
from tests.drivers.counters import mariadb_status
from tests.lua.test_api_vs_sysbench import server
from tests.lua.test_dropin_commands import real
from tests.lua.test_dropin_run import report_counts, statements
from tests.sysbench_compat.test_cli_sqlite import sysbench_cmd
from tests.sysbench_compat.test_vs_sysbench import connection_options

__all__ = ["server"]  # the fixture: MariaDB and PostgreSQL

EVENTS = 12
Server = MariaDBServer | PostgresServer

# Each thread counts its own events in a global: sysbench's state per thread, oltplab's
# environment per thread. thread_done prints the thread's count and its id.
GLOBALS = """
function thread_init()
  con = sysbench.sql.driver():connect()
  mine = 0
end
function event()
  con:query("SELECT 1")
  mine = mine + 1
end
function thread_done()
  print(string.format("thread %d ran %d", sysbench.tid, mine))
  con:disconnect()
end
"""

# sysbench's own loop written out, as scripts with a thread_run of their own do it.
THREAD_RUN = """
ffi.cdef[[
int usleep(unsigned int);
void sb_counter_inc(int thread_id, sb_counter_type type);
]]
function event() end -- sysbench requires one
function thread_init()
  con = sysbench.sql.driver():connect()
end
function thread_run()
  while ffi.C.sb_more_events(sysbench.tid) do
    ffi.C.sb_event_start(sysbench.tid)
    con:query("SELECT 2")
    ffi.C.usleep(1000)
    ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_WRITE)
    ffi.C.sb_event_stop(sysbench.tid)
  end
end
"""

# The first statement of each thread fails; the hook says it may be ignored; the event starts
# again after before_restart_event.
RESTART = """
function thread_init()
  con = sysbench.sql.driver():connect()
  failed, restarts = false, 0
end
sysbench.hooks.sql_error_ignorable = function(err)
  return err.sql_errno == 1146 or err.sql_state == "42P01"
end
sysbench.hooks.before_restart_event = function(err) restarts = restarts + 1 end
function event()
  if not failed then
    failed = true
    con:query("SELECT * FROM no_such_table")
  end
  con:query("SELECT 3")
end
function thread_done()
  print(string.format("thread %d restarted %d", sysbench.tid, restarts))
end
"""

FATAL = """
function thread_init()
  con = sysbench.sql.driver():connect()
end
function event()
  con:query("SELECT * FROM no_such_table")
end
"""

LUA_ERROR = """
function event()
  local t = nil
  return t.field
end
"""


def both(
    tmp_path: Path, server: Server, name: str, text: str, *options: str
) -> tuple[list[str], list[str]]:
    (tmp_path / name).write_text(text)
    load = [*sysbench_connection(server.url, server.database), *options, "run"]
    ours = sysbench_cmd(f"./{name}", *load, cwd=tmp_path)
    theirs = real(f"./{name}", *load, cwd=tmp_path)
    assert ours.returncode == theirs.returncode == 0, ours.stderr + theirs.stdout
    # sysbench's FATAL lines (a driver's error the hook then ignored) on stderr, once each.
    fatal = sorted({line for line in theirs.stdout.splitlines() if line.startswith("FATAL: ")})
    assert sorted(set(ours.stderr.splitlines())) == fatal
    if not any(o.startswith("--time=") and o != "--time=0" for o in options):
        assert report_counts(ours.stdout) == report_counts(theirs.stdout)
    return ours.stdout.splitlines(), theirs.stdout.splitlines()


def lines_like(lines: list[str], pattern: str) -> list[str]:
    return sorted(line for line in lines if re.match(pattern, line))


def test_each_thread_has_its_own_globals(tmp_path: Path, server: Server) -> None:
    ours, theirs = both(tmp_path, server, "globals.lua", GLOBALS, "--threads=3", "--time=1")
    mine = lines_like(ours, r"thread \d ran \d+$")
    assert [line.split(" ran ")[0] for line in mine] == ["thread 0", "thread 1", "thread 2"]
    # sysbench's print of threads at once may share a line.
    assert len(re.findall(r"thread \d ran \d+", "\n".join(theirs))) == 3
    # --time: each thread's own count, all of them adding up to the report's events.
    events = int(re.findall(r"total number of events:\s+(\d+)", "\n".join(ours))[0])
    assert sum(int(line.split(" ran ")[1]) for line in mine) == events


def test_thread_run_drives_events_through_ffi(tmp_path: Path, server: Server) -> None:
    events = f"--events={EVENTS}"
    ours, _ = both(tmp_path, server, "loop.lua", THREAD_RUN, "--threads=2", events, "--time=0")
    assert report_counts("\n".join(ours))["write"] == EVENTS  # sb_counter_inc's


def test_ignorable_errors_restart_the_event_after_the_hook(tmp_path: Path, server: Server) -> None:
    # A second rather than a few events: with --events, sysbench's other thread can take them
    # all before this one starts, and a thread that never runs an event never restarts one.
    ours, theirs = both(
        tmp_path, server, "restart.lua", RESTART, "--threads=2", "--events=0", "--time=1"
    )
    restarted = ["thread 0 restarted 1", "thread 1 restarted 1"]
    # sysbench's print of two threads at once may share a line.
    theirs_text = "\n".join(theirs)
    assert sorted(re.findall(r"thread \d restarted \d", theirs_text)) == restarted
    assert lines_like(ours, "thread .* restarted") == restarted
    ignored = [line.split()[:3] for line in ours + theirs if "ignored errors:" in line]
    assert ignored == [["ignored", "errors:", "2"]] * 2


FATAL_LINES = {
    "mysql": [
        "FATAL: mysql_drv_query() returned error 1146 (Table 'sbtest.no_such_table' doesn't "
        "exist) for query 'SELECT * FROM no_such_table'",
        "FATAL: `thread_run' function failed: ./fatal.lua:6: SQL error, errno = 1146, "
        "state = '42S02': Table 'sbtest.no_such_table' doesn't exist",
    ],
    "postgresql": [
        'FATAL: PQexec() failed: 7 relation "no_such_table" does not exist',
        "FATAL: failed query was: SELECT * FROM no_such_table",
        "FATAL: `thread_run' function failed: ./fatal.lua:6: SQL error, errno = 0, "
        """state = '42P01': relation "no_such_table" does not exist""",
    ],
}


def test_a_fatal_sql_error_stops_the_run(tmp_path: Path, server: Server) -> None:
    (tmp_path / "fatal.lua").write_text(FATAL)
    load = [*sysbench_connection(server.url, server.database), "--events=5", "--time=0", "run"]
    ours = sysbench_cmd("./fatal.lua", *load, cwd=tmp_path)
    theirs = real("./fatal.lua", *load, cwd=tmp_path)
    assert ours.returncode == theirs.returncode == 1
    expected = FATAL_LINES[server.url.split(":")[0]]
    # sysbench prints its FATAL lines on stdout; oltplab's drop-in, on stderr.
    assert [line for line in theirs.stdout.splitlines() if line.startswith("FATAL")] == expected
    assert ours.stderr.splitlines() == expected


def test_a_lua_error_names_the_file_and_line(tmp_path: Path, mariadb: MariaDBServer) -> None:
    (tmp_path / "broken.lua").write_text(LUA_ERROR)
    load = [*connection_options(mariadb.url), "--events=5", "--time=0", "run"]
    ours = sysbench_cmd("./broken.lua", *load, cwd=tmp_path)
    theirs = real("./broken.lua", *load, cwd=tmp_path)
    assert ours.returncode == theirs.returncode != 0
    message = "./broken.lua:4: attempt to index local 't' (a nil value)"
    assert message in theirs.stdout + theirs.stderr
    assert message in ours.stderr
    assert ours.stderr.count("\n") <= 2, ours.stderr


def test_a_script_without_event_is_refused_as_sysbench_refuses_it(
    tmp_path: Path, mariadb: MariaDBServer
) -> None:
    (tmp_path / "noevent.lua").write_text("function thread_run() end\n")
    load = [*connection_options(mariadb.url), "--events=5", "--time=0", "run"]
    ours = sysbench_cmd("./noevent.lua", *load, cwd=tmp_path)
    theirs = real("./noevent.lua", *load, cwd=tmp_path)
    assert ours.returncode == theirs.returncode == 1
    message = "FATAL: cannot find the event() function in noevent.lua"
    assert message in theirs.stdout
    assert ours.stderr == message + "\n"


# sysbench 1.0's legacy API (its compat layer): the implicit connection, db_query, a prepared
# statement bound to a table of values read at each execute, bulk inserts, sb_rand*.
LEGACY = """
function prepare()
  db_connect()
  db_query("CREATE TABLE legacy (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
  db_bulk_insert_init("INSERT INTO legacy VALUES")
  for i = 1, 50 do
    db_bulk_insert_next(string.format("(%d, 0)", i))
  end
  db_bulk_insert_done()
end
function cleanup()
  db_query("DROP TABLE IF EXISTS legacy")
end
function thread_init(thread_id)
  db_connect()
  stmt = db_prepare("UPDATE legacy SET v = v + 1 WHERE id = ?")
  params = {1}
  db_bind_param(stmt, params)
end
function event(thread_id)
  db_query("BEGIN")
  db_query(string.format("SELECT v FROM legacy WHERE id = %d", sb_rand(1, 50)))
  params[1] = sb_rand_uniform(1, 50)
  db_execute(stmt)
  db_query("COMMIT")
end
function thread_done(thread_id)
  db_disconnect()
end
"""


def test_the_legacy_api_sends_what_sysbench_sends(tmp_path: Path, mariadb: MariaDBServer) -> None:
    (tmp_path / "legacy.lua").write_text(LEGACY)
    db = connection_options(mariadb.url)
    load = [*db, "--threads=1", f"--events={EVENTS}", "--time=0", "run"]
    sent, reports = [], []
    for tool in (real, sysbench_cmd):
        mariadb.query("DROP TABLE IF EXISTS legacy", database=mariadb.database)
        assert tool("./legacy.lua", *db, "prepare", cwd=tmp_path).returncode == 0
        before = mariadb_status(mariadb)
        done = tool("./legacy.lua", *load, cwd=tmp_path)
        sent.append(statements(mariadb, done, before))
        reports.append(report_counts(done.stdout))
        rows = mariadb.query("SELECT COUNT(*), SUM(v) FROM legacy", database=mariadb.database)
        assert rows == [["50", str(EVENTS)]]  # each event's execute read the value it was given
        assert tool("./legacy.lua", *db, "cleanup", cwd=tmp_path).returncode == 0
    assert sent[1] == sent[0]
    assert sent[0]["Com_stmt_execute"] == EVENTS
    assert reports[1] == reports[0]


# init and done around the run, in the main state: sysbench.cmdline's command and argv (what
# follows the program's name), sysbench.version, the options.
INIT_DONE = """
function init()
  local cmdline = sysbench.cmdline
  print("init: " .. cmdline.command .. " " .. sysbench.version .. " " .. sysbench.opt.threads)
  local args = {}
  for i = 1, #sysbench.cmdline.argv do args[#args + 1] = sysbench.cmdline.argv[i] end
  print("argv: " .. table.concat(args, " "))
end
function event() end
function done()
  print("done: " .. sysbench.cmdline.command)
end
"""


def test_init_and_done_run_around_the_run_as_in_sysbench(
    tmp_path: Path, mariadb: MariaDBServer
) -> None:
    # --time: the SQL statistics are not compared: a script that never creates the SQL driver
    # has none, as in sysbench (tests/lua/test_no_sql.py).
    ours, theirs = both(
        tmp_path, mariadb, "id.lua", INIT_DONE, "--threads=2", "--events=5", "--time=9"
    )
    assert "SQL statistics:" not in "\n".join(ours + theirs)
    mine = lines_like(ours, "(init|argv|done): ")
    assert mine == lines_like(theirs, "(init|argv|done): ")
    assert "init: run 1.0.20 2" in mine
    assert "done: run" in mine
