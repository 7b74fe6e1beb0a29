"""`oltplab sysbench SCRIPT.lua help|prepare|cleanup|COMMAND` against the real sysbench 1.0.20
running the same script on the same MariaDB: Debian's scripts copied under names that are not
built-in workloads, so that the script itself runs (docs/lua.md)."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from oltplab.servers import MariaDBServer, PostgresServer
from tests.drivers.commands import sysbench_connection
from tests.sysbench_compat.test_cli_sqlite import sysbench_cmd

# Where one of prepare's messages starts (sysbench's threads can print two on one line).
MESSAGE_START = re.compile(r"(?=Creating table |Inserting \d|Creating a secondary |Initializing )")

SYSBENCH = shutil.which("sysbench") or "/usr/bin/sysbench"
DEBIAN = Path("/usr/share/sysbench")


def real(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SYSBENCH, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def without_banner(text: str) -> list[str]:
    lines = text.splitlines()
    assert lines[0].startswith("sysbench 1.0.20 (using ")
    return lines[1:]


@pytest.fixture
def scripts(tmp_path: Path) -> Path:
    """Debian's OLTP scripts as `my_<name>.lua`, with oltp_common.lua beside them."""
    shutil.copy(DEBIAN / "oltp_common.lua", tmp_path)
    for script in DEBIAN.glob("*.lua"):
        if script.name != "oltp_common.lua":
            shutil.copy(script, tmp_path / f"my_{script.name}")
    return tmp_path


@pytest.mark.parametrize("script", ["my_oltp_read_write.lua", "my_select_random_points.lua"])
def test_help_lists_the_script_options_as_sysbench_does(scripts: Path, script: str) -> None:
    ours = sysbench_cmd(f"./{script}", "help", cwd=scripts)
    theirs = real(f"./{script}", "help", cwd=scripts)
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    assert without_banner(ours.stdout) == without_banner(theirs.stdout)
    assert f"{script} options:" in ours.stdout


@pytest.fixture(params=["mariadb", "postgres"])
def server(request: pytest.FixtureRequest) -> MariaDBServer | PostgresServer:
    """The session's MariaDB or PostgreSQL, its `sbtest` emptied for the module."""
    server: MariaDBServer | PostgresServer = request.getfixturevalue(f"{request.param}_empty_db")
    return server


def test_prepare_and_cleanup_interoperate_with_sysbench(
    scripts: Path, server: MariaDBServer | PostgresServer
) -> None:
    db = [*sysbench_connection(server.url, server.database), "--tables=2", "--table-size=500"]
    script = "./my_oltp_read_only.lua"
    ours = sysbench_cmd(script, *db, "--threads=2", "prepare", cwd=scripts)
    assert (ours.returncode, ours.stderr) == (0, ""), ours.stderr
    theirs = real(script, *db, "cleanup", cwd=scripts)  # sysbench drops what we created
    assert theirs.returncode == 0, theirs.stdout
    assert "Dropping table 'sbtest2'..." in theirs.stdout
    theirs = real(script, *db, "--threads=2", "prepare", cwd=scripts)
    assert theirs.returncode == 0, theirs.stdout

    # Parallel prepare finishes the tables in any order, and its threads' blank lines come
    # between them in any order too: compare the sorted lines that say something. sysbench's
    # threads print a message and its newline apart, so two of its messages can share a line:
    # its lines are split where a message starts (ours must have one message per line).
    def said(text: str, split: bool = False) -> list[str]:
        lines = [line for line in without_banner(text) if line]
        if split:
            lines = [part for line in lines for part in MESSAGE_START.split(line) if part]
        return sorted(lines)

    assert said(ours.stdout) == said(theirs.stdout, split=True)
    rows = server.query("SELECT COUNT(*) FROM sbtest1", server.database)
    assert rows == [["500"]]
    ours = sysbench_cmd(script, *db, "cleanup", cwd=scripts)
    assert ours.returncode == 0, ours.stderr
    dropped = ["", "Dropping table 'sbtest1'...", "Dropping table 'sbtest2'..."]
    assert without_banner(ours.stdout) == dropped


def test_script_errors_are_one_line_naming_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "broken.lua").write_text("function prepare()\n  local x = nil\n  return x.y\nend\n")
    done = sysbench_cmd("./broken.lua", "prepare", cwd=tmp_path)
    assert done.returncode == 1
    failed = "`prepare' function failed: ./broken.lua:3: attempt to index local 'x' (a nil value)"
    assert done.stderr == f"FATAL: {failed}\n"
    theirs = real("./broken.lua", "prepare", cwd=tmp_path)
    assert "`prepare' function failed: ./broken.lua:3: attempt to index local 'x'" in theirs.stdout


def test_a_missing_api_entry_is_named_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "new_api.lua").write_text(
        "function prepare()\n  sysbench.rand.zipfian(1, 10)\nend\n"
    )
    done = sysbench_cmd("./new_api.lua", "prepare", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert "./new_api.lua:2: sysbench.rand.zipfian is not provided by oltplab" in done.stderr
