"""sysbench's report hooks during a script's run (`sysbench.hooks.report_intermediate` every
--report-interval, `report_cumulative` in place of the final report) and the report functions
called from them, against the real sysbench 1.0.20 running the same script: the same stat
fields, the same lines and shapes (the numbers differ) (docs/lua.md)."""

import re
from pathlib import Path

from oltplab.servers import MariaDBServer
from tests.lua.test_dropin_commands import real
from tests.sysbench_compat.test_cli_sqlite import sysbench_cmd
from tests.sysbench_compat.test_vs_sysbench import connection_options

# Events of a statement and 2 ms of think time, on a connection per thread.
EVENTS = """
local ffi = require("ffi")
ffi.cdef[[int usleep(unsigned int);]]
function thread_init()
  con = sysbench.sql.driver():connect()
end
function event()
  con:query("SELECT 1")
  ffi.C.usleep(2000)
end
"""

HOOKS = (
    EVENTS
    + """
local function fields(stat)
  local names = {}
  for k, v in pairs(stat) do names[#names + 1] = k .. "=" .. type(v) end
  table.sort(names)
  return table.concat(names, " ")
end
function sysbench.hooks.report_intermediate(stat)
  print("intermediate: " .. fields(stat))
  sysbench.report_default(stat)
  sysbench.report_csv(stat)
end
function sysbench.hooks.report_cumulative(stat)
  print("cumulative: " .. fields(stat))
  print(string.format("running=%d reads=%s", stat.threads_running, tostring(stat.reads > 0)))
  sysbench.report_json(stat)
end
"""
)

NUMBER = re.compile(r"\d+(\.\d+)?")


def shape(stdout: str) -> list[str]:
    """The lines after the preamble, numbers as N, each distinct line once in its order
    (how many intervals fit in the time differs by one between the tools)."""
    lines = stdout.split("Threads started!\n", 1)[1].splitlines()
    seen: list[str] = []
    for line in lines:
        line = NUMBER.sub("N", line)
        if line not in seen:
            seen.append(line)
    return seen


def test_report_hooks_replace_sysbench_reports_as_in_sysbench(
    tmp_path: Path, mariadb: MariaDBServer
) -> None:
    (tmp_path / "hooks.lua").write_text(HOOKS)
    # A run cut by --events, not --time: with --time=3 sysbench's last intermediate report
    # (its reporter thread, at 3 s) raced the cumulative one and now and then shared its line.
    # 2,500 events of ~2 ms on 2 threads: about 2.5 s, ending between two reports.
    args = ["./hooks.lua", *connection_options(mariadb.url), "--threads=2", "--time=0"]
    args += ["--events=2500", "--report-interval=1", "run"]
    theirs = real(*args, cwd=tmp_path)
    ours = sysbench_cmd(*args, cwd=tmp_path)
    assert theirs.returncode == ours.returncode == 0, ours.stderr
    assert shape(ours.stdout) == shape(theirs.stdout)
    assert ours.stdout.count("intermediate: ") >= 2
    assert "running=0 reads=true" in ours.stdout  # the workers have ended, as in sysbench
    assert "SQL statistics:" not in ours.stdout  # report_cumulative replaced the report
    assert ours.stdout.rstrip().endswith("]")  # report_json's array, closed at the end


def test_no_intermediate_report_without_a_report_interval(
    tmp_path: Path, mariadb: MariaDBServer
) -> None:
    (tmp_path / "hooks.lua").write_text(HOOKS)
    args = ["./hooks.lua", *connection_options(mariadb.url), "--time=2", "run"]
    ours = sysbench_cmd(*args, cwd=tmp_path)
    assert ours.returncode == 0, ours.stderr
    assert "intermediate: " not in ours.stdout
    assert ours.stdout.count("cumulative: ") == 1
