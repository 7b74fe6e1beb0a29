"""Pieces of sysbench 1.0.20's Lua API checked against the real sysbench running the same
script: `sysbench.histogram` (docs/lua.md)."""

from pathlib import Path

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
