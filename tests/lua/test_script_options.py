"""A script's options refused as the real sysbench 1.0.20 refuses them: a value its type does
not take, a value its validator (`def[4]`) refuses, an option it does not declare. The text is
sysbench's; the drop-in's convention for bad input stays (FATAL on stderr, exit 2; sysbench
prints the bare line and exits 1: docs/sysbench-compat.md)."""

from pathlib import Path

import pytest

from tests.lua.test_dropin_commands import real
from tests.sysbench_compat.test_cli_sqlite import sysbench_cmd

OPTIONS = """
sysbench.cmdline.options = {
  flag = {"a flag", false},
  int = {"an int", 3, sysbench.cmdline.ARG_INT},
  lst = {"a list", {1, 2}},
}
function event() end
function prepare()
  print(sysbench.opt.flag, sysbench.opt.int, #sysbench.opt.lst)
end
"""

# Alone in its script: sysbench 1.0.20 calls a script's validator for every option given, not
# only its own (oltplab calls each option's own; docs/lua.md).
VALIDATED = """
local ffi = require("ffi")
sysbench.cmdline.options = {
  even = {"an even number", 2, sysbench.cmdline.ARG_INT, function(name, value)
    return tonumber(ffi.string(value)) % 2 == 0
  end},
}
function event() end
function prepare()
  print(sysbench.opt.even)
end
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    (tmp_path / "opts.lua").write_text(OPTIONS)
    (tmp_path / "even.lua").write_text(VALIDATED)
    return tmp_path


@pytest.mark.parametrize(
    ("name", "arg"),
    [
        ("opts", "--flag=maybe"),
        ("opts", "--int=x"),
        ("opts", "--int=2.5"),
        ("opts", "--int=99999999999"),
        ("opts", "--nope=1"),
        ("opts", "--nope"),
        ("even", "--even=3"),
    ],
)
def test_a_bad_option_is_refused_with_sysbench_s_text(script: Path, name: str, arg: str) -> None:
    theirs = real(f"./{name}.lua", arg, "prepare", cwd=script)
    ours = sysbench_cmd(f"./{name}.lua", arg, "prepare", cwd=script)
    assert theirs.returncode == 1
    said = (theirs.stdout + theirs.stderr).splitlines()[-1]
    assert said.startswith(("invalid option: ", "Invalid value for the "))
    assert (ours.returncode, ours.stderr) == (2, f"FATAL: {said}\n")


@pytest.mark.parametrize(
    ("name", "args"),
    [("opts", []), ("opts", ["--flag", "--int=-7", "--lst=a,b,c"]), ("even", ["--even=8"])],
)
def test_good_options_reach_the_script_as_in_sysbench(
    script: Path, name: str, args: list[str]
) -> None:
    theirs = real(f"./{name}.lua", *args, "prepare", cwd=script)
    ours = sysbench_cmd(f"./{name}.lua", *args, "prepare", cwd=script)
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    assert ours.stdout.splitlines()[1:] == theirs.stdout.splitlines()[1:]
