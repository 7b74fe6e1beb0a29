"""`oltplab run PATH.lua --db URL [options]`: a sysbench script with everything a native run
has (a run directory naming the script and its options, then show, compare, report), on a
real MariaDB and PostgreSQL (docs/lua.md)."""

import json
import signal
from pathlib import Path

import pytest

from oltplab.rundir import load_run
from oltplab.servers import MariaDBServer, PostgresServer
from tests.drivers.commands import (
    oltplab_cli,
    oltplab_done,
    oltplab_started,
    sysbench_connection,
    wait_for_intervals,
)
from tests.lua.test_dropin_commands import real, scripts
from tests.lua.test_report_hooks import EVENTS
from tests.lua.test_script_verbs import server
from tests.sysbench_compat.test_cli_sqlite import sysbench_cmd
from tests.sysbench_compat.test_vs_sysbench import connection_options

__all__ = ["scripts", "server"]  # the fixtures, shared with the commands' tests


@pytest.mark.slow
def test_a_script_run_is_a_run_directory_like_any_other(
    scripts: Path, server: MariaDBServer | PostgresServer
) -> None:
    script = "./my_oltp_read_only.lua"
    server.query("DROP TABLE IF EXISTS sbtest1, sbtest2", database=server.database)
    data = ["--tables=1", "--table-size=300"]
    db = sysbench_connection(server.url, server.database)
    assert real(script, *db, *data, "prepare", cwd=scripts).returncode == 0
    runs = []
    # oltplab's own run options (warm-up, step plans) are the engine's, not the script's: a
    # script that declares its options must not refuse them as unknown.
    for n, extra in enumerate((["--skip-trx=on", "--warmup-time=1"], ["--range-selects=off"])):
        out = scripts / f"run{n}"
        load = [*data, "--threads=2", "--time=2", "--report-interval=1", *extra]
        report = oltplab_cli(
            "run", script, "--db", server.url, *load, "--out", str(out), cwd=scripts
        )
        assert "transactions:" in report, report
        doc = json.loads((out / "run.json").read_text())
        assert doc["complete"] is True
        assert doc["workload"]["name"] == "my_oltp_read_only.lua"
        assert str(doc["workload"]["options"]["table_size"]) == "300"
        assert doc["workload"]["options"][extra[0][2:].split("=")[0].replace("-", "_")] in (
            "on",
            "off",
        )
        assert doc["summary"]["transactions"] > 0
        assert doc["summary"]["warmup_s"] == (1.0 if n == 0 else 0.0)
        assert server.password not in (out / "run.json").read_text()
        runs.append(out)
    shown = oltplab_cli("show", str(runs[0]), cwd=scripts)
    assert "my_oltp_read_only.lua" in shown
    compared = oltplab_cli("compare", str(runs[1]), "--vs", str(runs[0]), cwd=scripts)
    assert "transactions" in compared.lower() or "tps" in compared.lower(), compared
    html = scripts / "report.html"
    oltplab_cli("report", str(runs[0]), str(runs[1]), "-o", str(html), cwd=scripts)
    assert "my_oltp_read_only.lua" in html.read_text()


def test_a_script_option_it_does_not_declare_is_refused(
    scripts: Path, mariadb_empty_db: MariaDBServer
) -> None:
    done = oltplab_done(
        "run", "./my_oltp_read_only.lua", "--db", mariadb_empty_db.url, "--no-such-option=1",
        cwd=scripts,
    )  # fmt: skip
    assert done.returncode != 0
    assert "no-such-option" in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stopped_script_run_leaves_a_complete_run_directory_marked_incomplete(
    tmp_path: Path, mariadb: MariaDBServer, sig: signal.Signals, code: int
) -> None:
    (tmp_path / "slow.lua").write_text(EVENTS)
    args = ["--db", mariadb.url, "--threads=2", "--time=120", "--out=r"]
    child = oltplab_started("run", "./slow.lua", *args, cwd=tmp_path)
    wait_for_intervals(child, tmp_path / "r", 2)
    child.send_signal(sig)
    _out, err = child.communicate(timeout=60)
    assert child.returncode == code, err
    assert "Traceback" not in err
    run = load_run(tmp_path / "r")
    assert run.complete is False
    assert run.doc.stop_reason == "interrupted"
    assert run.summary is not None
    assert run.summary.transactions > 0
    assert run.doc.workload.name == "slow.lua"
    assert "slow.lua" in oltplab_cli("show", "r", cwd=tmp_path)


def test_the_drop_in_keeps_a_script_run_s_directory_with_out(
    tmp_path: Path, mariadb: MariaDBServer
) -> None:
    """`oltplab sysbench PATH.lua ... --out DIR run` (README's drop-in): a run directory that
    `show` reads, the script's options without --out; Ctrl-C keeps what was measured."""
    (tmp_path / "slow.lua").write_text(EVENTS)
    db = [*connection_options(mariadb.url), "--threads=2"]
    done = sysbench_cmd("./slow.lua", *db, "--time=1", "--out", "r1", "run", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "total number of events:" in done.stdout
    run = load_run(tmp_path / "r1")
    assert run.complete is True
    assert run.doc.workload.name == "slow.lua"
    assert "out" not in run.doc.workload.options
    assert "slow.lua" in oltplab_cli("show", "r1", cwd=tmp_path)

    child = oltplab_started("sysbench", "./slow.lua", *db, "--time=120", "--out=r2", "run",
                            cwd=tmp_path)  # fmt: skip
    wait_for_intervals(child, tmp_path / "r2", 2)
    child.send_signal(signal.SIGINT)
    _out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    assert err == "oltplab: interrupted; what was measured is in r2\n"
    run = load_run(tmp_path / "r2")
    assert run.complete is False
    assert run.summary is not None
    assert run.summary.transactions > 0


UNIQUE = """
function thread_init()
  con = sysbench.sql.driver():connect()
end
function event()
  con:query("INSERT INTO uniq VALUES (" .. sysbench.rand.unique() .. ")")
end
"""


def test_rand_unique_is_one_sequence_for_all_the_runs_threads(
    tmp_path: Path, mariadb_empty_db: MariaDBServer
) -> None:
    """Up to 64 connections each has an engine thread with states of its own, as sysbench's
    threads; `sysbench.rand.unique()` stays one sequence for the run, as sysbench's one per
    process: no value twice (the primary key refuses a repeat, which fails the run)."""
    server = mariadb_empty_db
    server.query("DROP TABLE IF EXISTS uniq", database=server.database)
    server.query("CREATE TABLE uniq (v BIGINT UNSIGNED PRIMARY KEY)", database=server.database)
    (tmp_path / "uniq.lua").write_text(UNIQUE)
    report = oltplab_cli(
        "run", "./uniq.lua", "--db", server.url, "--threads=4", "--events=2000", "--time=0",
        cwd=tmp_path,
    )  # fmt: skip
    [[rows]] = server.query("SELECT COUNT(*) FROM uniq", database=server.database)
    assert int(rows) == 2000, report
