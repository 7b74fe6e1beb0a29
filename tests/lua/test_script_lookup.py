"""A test named without a path, found as the real sysbench 1.0.20 finds it: `kv` is the module
`kv` on its Lua search path (the current directory first, then LuaRocks', the system's and
/usr/share/sysbench; `LUA_PATH` instead when set, `;;` standing for those), while `kv.lua` is a
file of the current directory only. sysbench names the test as typed: `kv options:` for `kv`,
`kv.lua options:` for `./kv.lua` (docs/lua.md)."""

from pathlib import Path

import pytest

from tests.lua.test_dropin_commands import real, without_banner
from tests.sysbench_compat.test_cli_sqlite import sysbench_cmd

KV = """
sysbench.cmdline.options = {{ n = {{"{where}", 3}} }}
function event() end
"""


@pytest.fixture
def two_kvs(tmp_path: Path) -> Path:
    """kv.lua in tmp_path and another in tmp_path/lib, each saying where it is."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "kv.lua").write_text(KV.format(where="here"))
    (tmp_path / "lib" / "kv.lua").write_text(KV.format(where="in lib"))
    return tmp_path


def helped(test: str, cwd: Path) -> list[str]:
    """`help`'s lines from both tools, which must agree."""
    ours = sysbench_cmd(test, "help", cwd=cwd)
    theirs = real(test, "help", cwd=cwd)
    assert ours.returncode == theirs.returncode == 0, ours.stderr + theirs.stdout
    assert ours.stderr == ""
    assert without_banner(ours.stdout) == without_banner(theirs.stdout)
    return without_banner(ours.stdout)


@pytest.mark.parametrize(
    ("test", "heading"),
    [("kv", "kv options:"), ("kv.lua", "kv.lua options:"), ("./kv.lua", "kv.lua options:")],
)
def test_a_script_of_the_current_directory_is_found_by_name(
    two_kvs: Path, test: str, heading: str
) -> None:
    assert helped(test, two_kvs)[1:3] == [heading, "  --n=N here [3]"]


def test_lua_path_is_searched_as_sysbench_searches_it(
    two_kvs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib = two_kvs / "lib"
    monkeypatch.setenv("LUA_PATH", f"{lib}/?.lua;;")  # before the current directory
    assert helped("kv", two_kvs)[1:3] == ["kv options:", "  --n=N in lib [3]"]
    elsewhere = two_kvs / "elsewhere"
    elsewhere.mkdir()
    assert helped("kv", elsewhere)[1:3] == ["kv options:", "  --n=N in lib [3]"]
    # A file name is looked for in the current directory only.
    ours = sysbench_cmd("kv.lua", "help", cwd=elsewhere)
    theirs = real("kv.lua", "help", cwd=elsewhere)
    missing = "Cannot find benchmark 'kv.lua': no such built-in test, file or module"
    assert f"FATAL: {missing}" in theirs.stdout
    assert ours.returncode != 0
    assert missing in ours.stderr
    assert ours.stderr.count("\n") == 1, ours.stderr
    # Without the default (no `;;`), the current directory is not searched either.
    monkeypatch.setenv("LUA_PATH", f"{elsewhere}/?.lua")
    ours = sysbench_cmd("kv", "help", cwd=two_kvs)
    theirs = real("kv", "help", cwd=two_kvs)
    assert "FATAL: Cannot find benchmark 'kv'" in theirs.stdout
    assert ours.returncode != 0
    assert "Cannot find benchmark 'kv'" in ours.stderr


def test_a_bare_name_found_on_the_path_runs_as_that_name(
    two_kvs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sysbench's messages name the test as typed (here: a script without event())."""
    (two_kvs / "lib" / "noevent.lua").write_text("function thread_run() end\n")
    monkeypatch.setenv("LUA_PATH", f"{two_kvs / 'lib'}/?.lua")
    ours = sysbench_cmd("noevent", "--events=1", "run", cwd=two_kvs)
    theirs = real("noevent", "--events=1", "run", cwd=two_kvs)
    assert ours.returncode == theirs.returncode == 1
    message = "FATAL: cannot find the event() function in noevent"
    assert theirs.stdout.splitlines()[-1] == message
    assert ours.stderr == message + "\n"
