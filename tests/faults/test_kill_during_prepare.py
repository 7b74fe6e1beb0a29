"""Fault: the server is SIGKILLed while `prepare` loads the tables, then restarted.

- prepare ends at once with one line saying what happened, exit 1 (a failed run);
- `run` refuses the half-loaded database (exit 2) instead of measuring another data set than
  its options say: prepare marks itself unfinished until every table is loaded
  (docs/faults.md, "An unfinished prepare");
- `prepare` again completes: it drops what the unfinished one made and loads everything;
  every table then holds --table-size rows, and `run` works.
"""

import time
from pathlib import Path

import pytest

from tests.drivers.commands import oltplab_done, oltplab_started
from tests.faults.servers import ENGINES, own_server

# One table at a time, each large enough (a second or more) for the kill to land mid-load.
TABLES, TABLE_SIZE = 3, 150_000
DATA = [f"--tables={TABLES}", f"--table-size={TABLE_SIZE}", "--threads=1"]
PREPARE_TIMEOUT_S = 180


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_kill_during_prepare_then_prepare_again(engine: str, server_dir: Path) -> None:
    cwd = server_dir.parent
    with own_server(engine, server_dir) as server:
        url = server.url
        prepare = oltplab_started("prepare", "oltp_read_write", "--db", url, *DATA, cwd=cwd)
        assert prepare.stdout is not None
        for line in prepare.stdout:  # sysbench's messages, flushed one by one
            if line.startswith("Inserting"):
                break
        time.sleep(0.3)  # rows of sbtest1 are arriving; sbtest2 and sbtest3 are not made yet
        assert prepare.poll() is None, "prepare ended before the kill: make the tables larger"
        server.kill()
        try:
            stdout, stderr = prepare.communicate(timeout=60)
        finally:
            if prepare.poll() is None:
                prepare.kill()
        assert prepare.returncode == 1, stdout + stderr
        assert stderr.startswith("oltplab: error: "), stderr
        assert stderr.count("\n") == 1, stderr
        assert "Traceback" not in stderr
        assert server.password not in stdout + stderr

        server.start()
        run_args = ["run", "oltp_read_write", "--db", url, *DATA, "--time=1"]
        refused = oltplab_done(*run_args, cwd=cwd)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "an earlier prepare did not finish" in refused.stderr, refused.stderr
        assert refused.stderr.count("\n") == 1, refused.stderr

        again = oltplab_done(
            "prepare", "oltp_read_write", "--db", url, *DATA, cwd=cwd, timeout_s=PREPARE_TIMEOUT_S
        )
        assert again.returncode == 0, again.stdout + again.stderr
        assert "An earlier prepare did not finish" in again.stdout, again.stdout
        for t in range(1, TABLES + 1):
            rows = server.query(f"SELECT COUNT(*) FROM sbtest{t}", database=server.database)
            assert int(rows[0][0]) == TABLE_SIZE, (t, rows)

        ran = oltplab_done(*run_args, "--out", str(cwd / "run"), cwd=cwd)
        assert ran.returncode == 0, ran.stdout + ran.stderr
