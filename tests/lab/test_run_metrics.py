"""`oltplab run --metrics system,server` on PostgreSQL: rows on the intervals' t_s, and a
CHECKPOINT forced mid-run shows in the checkpoint column."""

import csv
import threading
import time
from pathlib import Path

import pytest

import oltplab
from oltplab import runner
from oltplab.rundir import load_run
from oltplab.servers import PostgresServer
from tests.known import known


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.timeout(300)
def test_pg_checkpoint_shows_in_server_csv(
    postgres_empty_db: PostgresServer, tmp_path: Path
) -> None:
    server = postgres_empty_db
    oltplab.prepare("oltp_update_index", db=server.url, tables=1, table_size=1000)

    def force_checkpoint() -> None:
        time.sleep(2.5)
        server.query("CHECKPOINT")

    forcing = threading.Thread(target=force_checkpoint)
    forcing.start()
    result = runner.run(
        "oltp_update_index",
        server.url,
        {"threads": 2, "time": 5, "tables": 1, "table_size": 1000},
        out=tmp_path / "run",
        metrics=("system", "server"),
    )
    forcing.join()
    run = load_run(result.path)
    assert run.doc.metrics == ("system", "server")
    assert run.doc.files.server == "server.csv"
    # Sampling's whole cost is recorded: its thread and its psql child process.
    sampler_s, child_s = known(run.doc.sampler_cpu_s), known(run.doc.sampler_child_cpu_s)
    assert 0 < child_s < sampler_s < known(known(run.summary).client_cpu_s)
    intervals = [r["t_s"] for r in _rows(result.path / "intervals.csv")]
    system = _rows(result.path / "system.csv")
    server_rows = _rows(result.path / "server.csv")
    assert [r["t_s"] for r in system] == intervals
    assert [r["t_s"] for r in server_rows] == intervals
    checkpoints = [float(r["checkpoints_per_s"]) for r in server_rows if r["checkpoints_per_s"]]
    assert max(checkpoints) > 0
    assert max(float(r["wal_bytes_per_s"]) for r in server_rows if r["wal_bytes_per_s"]) > 0
    assert max(float(r["commits_per_s"]) for r in server_rows if r["commits_per_s"]) > 0
    # A tick the sampler reached late (a busy host) has an empty row: most are on time.
    idle = [float(r["cpu_idle_pct"]) for r in system if r["cpu_idle_pct"]]
    assert len(idle) >= len(system) / 2
    assert all(0 <= v <= 100 for v in idle)


def test_metrics_server_refused_for_sqlite(tmp_path: Path) -> None:
    from oltplab.exceptions import ConfigError

    with pytest.raises(ConfigError, match="--metrics server reads MariaDB/MySQL and PostgreSQL"):
        runner.run(
            "oltp_read_only",
            f"sqlite:///{tmp_path}/x.db",
            {"time": 1},
            out=tmp_path / "run",
            metrics=("server",),
        )
    assert not (tmp_path / "run").exists()
