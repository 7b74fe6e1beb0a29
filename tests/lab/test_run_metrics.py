"""`oltplab run --metrics system,server` on PostgreSQL: rows on the intervals' t_s, and a
CHECKPOINT forced mid-run shows in the checkpoint column. On a MariaDB of the module's own:
server.csv's rates over their spans add up to the run's statements."""

import csv
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import oltplab
from oltplab import runner
from oltplab.rundir import load_run
from oltplab.servers import MariaDBServer, PostgresServer, ServerSettings
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


THREADS = 16


@pytest.fixture(scope="module")
def own_mariadb(module_server_dir: Path) -> Iterator[MariaDBServer]:
    """Questions is a global counter: a server no other test sends statements to."""
    with MariaDBServer(module_server_dir, ServerSettings(max_connections=50)) as server:
        oltplab.prepare("oltp_point_select", db=server.url, tables=1, table_size=1000)
        yield server


def test_server_rates_over_their_spans_add_up_to_the_statements(
    own_mariadb: MariaDBServer, tmp_path: Path
) -> None:
    """Every row's questions_per_s x span_s adds up to the statements from the baseline to the
    last sample: the run's transactions (one statement each), the statements in flight at the
    time limit (one per connection at most, not counted as transactions) and the sampler's
    own two per sample, no more. (Its baseline at the started event: tests/lab/
    test_metrics_units.py.)"""
    result = runner.run(
        "oltp_point_select",
        own_mariadb.url,
        {"threads": THREADS, "time": 2, "tables": 1, "table_size": 1000},
        out=tmp_path / "run",
        metrics=("server",),
    )
    server_rows = _rows(result.path / "server.csv")
    sampled = [r for r in server_rows if r["span_s"]]
    questions = round(sum(float(r["questions_per_s"]) * float(r["span_s"]) for r in sampled))
    transactions = sum(int(r["transactions"]) for r in _rows(result.path / "intervals.csv"))
    assert transactions > 0
    in_flight = THREADS  # a statement per connection under way at the time limit, uncounted
    assert 0 < questions <= transactions + in_flight + 2 * (len(server_rows) + 1), (
        questions,
        transactions,
    )
