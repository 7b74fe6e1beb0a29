"""Which test runs (a file named like a built-in runs as written, sysbench's own copy too; a
built-in's bare name runs the native workload), `oltplab prepare|cleanup PATH.lua --db URL` on
real MariaDB and PostgreSQL and on a new SQLite file, and `oltplab VERB PATH.lua --help`
(docs/lua.md)."""

import shutil
from pathlib import Path

import pytest

from oltplab.rundir import load_run
from oltplab.servers import MariaDBServer, PostgresServer
from tests.drivers.commands import oltplab_done
from tests.lua.test_dropin_commands import DEBIAN, real, server, without_banner
from tests.sysbench_compat.test_cli_sqlite import sysbench_cmd

__all__ = ["server"]  # the fixture (MariaDB and PostgreSQL), shared with the other tests

OWN = 'function prepare()\n  print("the user\'s own " .. sysbench.cmdline.script_path)\nend\n'


def test_a_path_named_like_a_built_in_runs_the_script_and_names_the_native_one(
    tmp_path: Path,
) -> None:
    (tmp_path / "tpcc.lua").write_text(OWN)
    done = sysbench_cmd("./tpcc.lua", "--mysql-password=secret", "prepare", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "the user's own ./tpcc.lua" in done.stdout
    assert done.stderr == (
        "oltplab: ./tpcc.lua runs as a Lua script; the native tpcc is: "
        "oltplab sysbench tpcc --mysql-password=*** prepare\n"
    )
    elsewhere = tmp_path / "x"
    elsewhere.mkdir()
    (elsewhere / "oltp_point_select.lua").write_text(OWN)
    absolute = str(elsewhere / "oltp_point_select.lua")
    done = sysbench_cmd(absolute, "prepare", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"the user's own {absolute}" in done.stdout
    assert "the native oltp_point_select is: oltplab sysbench oltp_point_select prepare" in (
        done.stderr
    )


def test_sysbench_s_own_copy_runs_as_a_script(tmp_path: Path) -> None:
    """A path into /usr/share/sysbench is a file like any other (issue 21): its help is the
    script's own (sysbench's wording of its options), after the line naming the native one."""
    debian = str(DEBIAN / "oltp_point_select.lua")
    done = sysbench_cmd(debian, "help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        f"oltplab: {debian} runs as a Lua script; "
        "the native oltp_point_select is: oltplab sysbench oltp_point_select help\n"
    )
    assert "oltp_point_select.lua options:\n" in done.stdout


def test_a_built_in_name_runs_the_native_workload(tmp_path: Path) -> None:
    """Even beside a file of that name, with or without .lua."""
    (tmp_path / "oltp_point_select.lua").write_text(OWN)
    db = ["--db-driver=sqlite", f"--sqlite-db={tmp_path / 'x.db'}", "--table-size=10"]
    for test in ("oltp_point_select", "oltp_point_select.lua"):
        done = sysbench_cmd(test, *db, "prepare", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "Creating table 'sbtest1'..." in done.stdout
        assert "the user's own" not in done.stdout
        assert "runs as a Lua script" not in done.stderr
        assert sysbench_cmd(test, *db, "cleanup", cwd=tmp_path).returncode == 0


def _tables(server: MariaDBServer | PostgresServer) -> list[str]:
    schema = server.database if isinstance(server, MariaDBServer) else "public"
    rows = server.query(
        "SELECT table_name FROM information_schema.tables "
        f"WHERE table_schema = '{schema}' AND table_name LIKE 'sbtest%' ORDER BY table_name",
        database=server.database,
    )
    return [row[0] for row in rows]


def test_prepare_and_cleanup_run_the_scripts_own(
    tmp_path: Path, server: MariaDBServer | PostgresServer
) -> None:
    shutil.copy(DEBIAN / "oltp_common.lua", tmp_path)
    shutil.copy(DEBIAN / "oltp_read_only.lua", tmp_path / "oltp_read_only.lua")
    script = "./oltp_read_only.lua"
    server.query("DROP TABLE IF EXISTS sbtest1, sbtest2, sbtest3", database=server.database)
    data = ["--tables=3", "--table-size=50"]
    done = oltplab_done("prepare", script, "--db", server.url, *data, "--threads=2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Initializing worker threads...") == 1  # its PARALLEL_COMMAND
    assert done.stdout.count("Inserting 50 records into 'sbtest") == 3
    assert f"with {script} in " in done.stdout.splitlines()[-1]
    assert server.password not in done.stdout + done.stderr
    assert "the native oltp_read_only is: oltplab prepare oltp_read_only --db" in done.stderr
    assert _tables(server) == ["sbtest1", "sbtest2", "sbtest3"]
    rows = server.query("SELECT COUNT(*) FROM sbtest3", database=server.database)
    assert rows == [["50"]]

    done = oltplab_done("cleanup", script, "--db", server.url, *data, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Dropping table 'sbtest3'..." in done.stdout
    assert _tables(server) == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["prepare", "./kv.lua"], "give --db URL for ./kv.lua"),
        (["cleanup", "./kv.lua", "--db", "mysql://u@127.0.0.1/x", "--ray"], "--ray: a sysbench"),
        (["run", "./kv.lua", "--db", "mysql://u@127.0.0.1/x", "--ray=auto"], "drop --ray"),
    ],
)
def test_script_verbs_refuse_bad_input_in_one_line(
    tmp_path: Path, args: list[str], says: str
) -> None:
    (tmp_path / "kv.lua").write_text("function event() end\n")
    done = oltplab_done(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert says in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr


OPTIONS = """
sysbench.cmdline.options = {
  rows = {"Number of rows", 10},
  fast = {"Skip the index", false},
}
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("CREATE TABLE kv (id INTEGER PRIMARY KEY, v INTEGER)")
  for i = 1, sysbench.opt.rows do
    con:query(string.format("INSERT INTO kv VALUES (%d, 0)", i))
  end
end
function cleanup()
  sysbench.sql.driver():connect():query("DROP TABLE kv")
end
function event()
  local con = sysbench.sql.driver():connect()
  con:query(string.format("UPDATE kv SET v = v + 1 WHERE id = %d", sysbench.rand.uniform(1, 3)))
  con:disconnect()
end
"""


@pytest.mark.parametrize("verb", ["run", "prepare", "cleanup"])
def test_help_lists_oltplab_s_options_then_the_script_s_as_sysbench_does(
    tmp_path: Path, verb: str
) -> None:
    (tmp_path / "kv.lua").write_text(OPTIONS)
    done = oltplab_done(verb, "./kv.lua", "--help", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.startswith(f"usage: oltplab {verb} PATH.lua --db URL")
    assert "  --threads=N " in done.stdout
    theirs = real("./kv.lua", "help", cwd=tmp_path)
    script_s = without_banner(theirs.stdout)
    assert "kv.lua options:" in script_s
    assert done.stdout.splitlines()[-len(script_s) :] == script_s


def test_help_of_a_script_that_declares_nothing_or_does_not_load(tmp_path: Path) -> None:
    (tmp_path / "any.lua").write_text("function event() end\n")
    done = oltplab_done("run", "./any.lua", "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "./any.lua declares no options: it takes any --name=value, as in sysbench."
    )
    (tmp_path / "syntax.lua").write_text("function event(\n  x = = 1\nend\n")
    done = oltplab_done("run", "./syntax.lua", "--help", cwd=tmp_path)
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1, done.stderr
    assert "./syntax.lua:2: ')' expected near '='" in done.stderr


def test_a_script_prepares_a_new_sqlite_file(tmp_path: Path) -> None:
    """As a native prepare does: the file is created (run and cleanup then need it)."""
    (tmp_path / "kv.lua").write_text(OPTIONS)
    db = ["--db", f"sqlite:///{tmp_path / 'kv.db'}", "--rows=3"]
    done = oltplab_done("prepare", "./kv.lua", *db, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run = oltplab_done("run", "./kv.lua", *db, "--events=20", "--time=0", "--out=r", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert load_run(tmp_path / "r").summary.queries.write == 20  # type: ignore[union-attr]
    done = oltplab_done("cleanup", "./kv.lua", *db, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (tmp_path / "kv.db").unlink()
    run = oltplab_done("run", "./kv.lua", *db, "--events=1", "--time=0", cwd=tmp_path)
    assert run.returncode != 0
    assert "does not exist; run `oltplab prepare` with the same --db first" in run.stderr
