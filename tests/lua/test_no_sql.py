"""Scripts that send no SQL, against the real sysbench 1.0.20: one that never touches
`sysbench.sql` (a cpu-style event of Lua work) needs no server, and its report has neither SQL
statistics nor SQL columns in its interval lines, as sysbench's; one that creates the driver
without connecting gets SQL statistics of zeros, as in sysbench (docs/lua.md)."""

import re
from pathlib import Path

import pytest

from tests.lua.test_dropin_commands import real, without_banner
from tests.sysbench_compat.test_cli_sqlite import sysbench_cmd

# Where no server listens: neither tool may need one.
NOWHERE = ["--mysql-host=127.0.0.1", "--mysql-port=1"]

CPU = """
function event()
  local s = 0
  for i = 1, 2000 do s = s + i % 7 end
end
"""

DRIVER_ONLY = """
function event()
  sysbench.sql.driver()
end
"""

# An event of about a millisecond, so that a 1-s interval holds several.
SPIN = """
function event()
  local t = os.clock() + 0.001
  while os.clock() < t do end
end
"""


def shape(stdout: str) -> list[str]:
    """The report's lines with their numbers blanked and spaces collapsed (numbers are padded
    to their width); the seed's line dropped (oltplab says which it drew)."""
    return [
        " ".join(re.sub(r"\d+(\.\d+)?", "N", line).split())
        for line in without_banner(stdout)
        if not line.startswith("Initializing random number generator")
    ]


@pytest.mark.parametrize(
    ("text", "sql"), [(CPU, False), (DRIVER_ONLY, True)], ids=["cpu", "driver-only"]
)
def test_a_run_without_statements_reports_as_sysbench_does(
    tmp_path: Path, text: str, sql: bool
) -> None:
    (tmp_path / "nosql.lua").write_text(text)
    load = [*NOWHERE, "--threads=2", "--events=200", "--time=0", "run"]
    ours = sysbench_cmd("./nosql.lua", *load, cwd=tmp_path)
    theirs = real("./nosql.lua", *load, cwd=tmp_path)
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    assert ours.stderr == ""
    assert shape(ours.stdout) == shape(theirs.stdout)
    assert ("SQL statistics:" in ours.stdout) is sql
    assert "    total number of events:              200" in ours.stdout


def test_interval_lines_without_sql_are_sysbench_s(tmp_path: Path) -> None:
    (tmp_path / "spin.lua").write_text(SPIN)
    load = [*NOWHERE, "--threads=1", "--time=3", "--report-interval=1", "run"]
    line = re.compile(r"\[ \ds \] thds: 1 eps: \d+\.\d\d lat \(ms,95%\): \d+\.\d\d$")
    for tool in (sysbench_cmd, real):
        done = tool("./spin.lua", *load, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        intervals = [text for text in done.stdout.splitlines() if text.startswith("[ ")]
        assert len(intervals) >= 2, done.stdout
        assert all(line.match(text) for text in intervals), intervals
        assert "SQL statistics:" not in done.stdout
