"""Distributed work beyond `run`, on the real 3-node Ray cluster (conftest.py) and the session's
MariaDB: a distributed prepare guarded by the unfinished-prepare marker; a lab whose
`[client] ray/clients` makes its cell a 2-client run with server and system metrics; and
`show`, `compare` (against a local run) and `report` reading that run like any other.
"""

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from oltplab.servers import MariaDBServer
from tests.distributed.conftest import RayCluster, oltplab
from tests.test_schema import validate

pytestmark = pytest.mark.serial  # a 3-node Ray cluster takes the whole machine

TABLES, TABLE_SIZE = 2, 300
DATA = [f"--tables={TABLES}", f"--table-size={TABLE_SIZE}"]
MARKER = "oltplab_unfinished_prepare"


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def tables_of(db: MariaDBServer) -> set[str]:
    return {row[0] for row in db.query("SHOW TABLES", database="sbtest")}


@pytest.fixture(scope="module")
def prepared(
    ray_cluster: RayCluster, mariadb_empty_db: MariaDBServer
) -> subprocess.CompletedProcess[str]:
    return ray_cluster.oltplab(
        "prepare", "oltp_point_select", f"--db={mariadb_empty_db.url}", *DATA, "--clients=2"
    )


def test_a_finished_distributed_prepare_is_unmarked_and_not_repeated(
    prepared: subprocess.CompletedProcess[str],
    ray_cluster: RayCluster,
    mariadb_empty_db: MariaDBServer,
) -> None:
    assert prepared.returncode == 0, prepared.stderr
    assert tables_of(mariadb_empty_db) == {"sbtest1", "sbtest2"}  # no marker left
    again = ray_cluster.oltplab(
        "prepare", "oltp_point_select", f"--db={mariadb_empty_db.url}", *DATA, "--clients=2"
    )
    assert again.returncode == 2
    err = again.stderr.strip()
    assert "already exist" in err
    assert "\n" not in err
    assert "Traceback" not in err


LAB = """\
[lab]
name = "ray"
time = 3

[client]
ray = "{address}"
clients = 2

[servers.db]
engine = "external"
url = "{url}"

[[workloads]]
name = "oltp_point_select"
threads = [4]
options = {{ tables = {tables}, table_size = {size} }}
"""


@pytest.fixture(scope="module")
def lab(
    ray_cluster: RayCluster,
    mariadb_empty_db: MariaDBServer,
    prepared: subprocess.CompletedProcess[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    assert prepared.returncode == 0, prepared.stderr
    root = tmp_path_factory.mktemp("lab")
    lab_file = root / "ray.toml"
    lab_file.write_text(
        LAB.format(
            address=ray_cluster.address, url=mariadb_empty_db.url, tables=TABLES, size=TABLE_SIZE
        )
    )
    done = oltplab("lab", "run", str(lab_file), "--out", str(root / "lab"), "--quiet")
    return root / "lab", done


def cell_run(lab_dir: Path) -> Path:
    doc = read_json(lab_dir / "lab.json")
    (cell,) = doc["cells"]
    return lab_dir / str(cell["run_dir"])


def test_a_lab_cell_runs_on_every_client_and_adds_up(
    lab: tuple[Path, subprocess.CompletedProcess[str]], ray_cluster: RayCluster
) -> None:
    lab_dir, done = lab
    assert done.returncode == 0, done.stderr
    doc = read_json(lab_dir / "lab.json")
    assert doc["lab"]["client_ray"] == ray_cluster.address
    assert doc["lab"]["client_clients"] == 2
    assert [c["status"] for c in doc["cells"]] == ["done"]
    run_dir = cell_run(lab_dir)
    merged = read_json(run_dir / "run.json")
    validate(merged)
    assert merged["complete"] is True
    assert merged["lab"]["name"] == "ray"  # the lab's own fields, as in a local cell
    assert merged["load"]["threads"] == 4
    placed = merged["distributed"]["clients"]
    assert len(placed) == 2
    assert len({c["node_id"] for c in placed}) == 2
    clients = [read_json(run_dir / "clients" / str(i) / "run.json") for i in range(2)]
    total = merged["summary"]["transactions"]
    assert total > 100
    assert total == sum(c["summary"]["transactions"] for c in clients)
    assert [c["load"]["threads"] for c in clients] == [2, 2]


def test_metrics_of_a_distributed_cell_are_on_the_merged_grid(
    lab: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    run_dir = cell_run(lab[0])
    merged = read_json(run_dir / "run.json")
    assert merged["metrics"] == ["system", "server"]
    intervals = pd.read_csv(run_dir / "intervals.csv")
    system = pd.read_csv(run_dir / "system.csv")
    server = pd.read_csv(run_dir / "server.csv")
    assert list(system["t_s"]) == list(intervals["t_s"]) == list(server["t_s"])
    assert system["cpu_idle_pct"].notna().mean() >= 0.5  # a tick sampled late: an empty row
    # Each row's rates cover its span_s, from the sample before it (a sample taken late
    # leaves its row empty, and the next one covers both: metrics/sampler.py), so the spans
    # add up to the statements the server ran from the baseline, taken again at the merged
    # "started" event (after the clients connected), to the last sample, after the load
    # ended. A sample's time on a busy host is not the interval's boundary (the sampler's
    # thread may get the CPU hundreds of ms late, while the rate swings tenfold from one
    # interval to the next), so the statements (one per transaction) are compared over the
    # whole run: no more than the transactions and the sampler's own two per sample, no
    # fewer than the transactions after the first interval (within which the baseline is
    # taken, as every sample within its interval: metrics/sampler.py).
    sampled = server["span_s"].notna()
    assert sampled.sum() >= len(server) - 1, server
    questions = round((server["questions_per_s"] * server["span_s"])[sampled].sum())
    transactions = intervals["transactions"]
    shown = f"{questions}\n{server[['t_s', 'span_s', 'questions_per_s']]}\n{intervals}"
    assert transactions.sum() - transactions[0] <= questions, shown
    assert questions <= transactions.sum() + 2 * (len(server) + 1), shown


@pytest.fixture(scope="module")
def local_run(
    mariadb_empty_db: MariaDBServer,
    lab: tuple[Path, subprocess.CompletedProcess[str]],
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    out = tmp_path_factory.mktemp("local") / "run"
    done = oltplab(
        "run", "oltp_point_select", f"--db={mariadb_empty_db.url}", *DATA,
        "--threads=4", "--time=3", f"--out={out}",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


def test_show_compare_and_report_read_a_distributed_run(
    lab: tuple[Path, subprocess.CompletedProcess[str]], local_run: Path, tmp_path: Path
) -> None:
    run_dir = cell_run(lab[0])
    summary = read_json(run_dir / "run.json")["summary"]
    intervals = pd.read_csv(run_dir / "intervals.csv")

    shown = oltplab("show", "--json", str(run_dir))
    assert shown.returncode == 0, shown.stderr
    analysis = json.loads(shown.stdout)
    steady = analysis["steady_state"]
    assert steady["mser_cut_s"] == 0  # too short to cut: the window is the whole run
    # The window ends with the last whole interval: transactions still in flight at the time
    # limit may complete a few ms later, in a short last interval the analysis leaves out.
    ends = intervals["t_s"].to_numpy()
    lengths = np.diff(ends, prepend=0.0)
    tail = ends > steady["window_s"][1] + 1e-9
    tail_transactions = round(float(np.dot(intervals["tps"].to_numpy()[tail], lengths[tail])))
    assert analysis["latency_ms"]["count"] == summary["transactions"] - tail_transactions
    assert steady["tps_mean"] == pytest.approx(intervals["tps"][~tail].mean(), rel=1e-3)
    shown_ms, merged_ms = analysis["latency_ms"], summary["latency_ms"]
    for q in ("p50", "p95"):  # the merged hlog's, within its 0.1 % buckets
        assert shown_ms[q] == pytest.approx(merged_ms[q], rel=2e-3)
    if tail.any():  # the run's slowest may be a straggler of the short last interval
        assert shown_ms["max"] <= merged_ms["max"] * (1 + 2e-3)
    else:
        assert shown_ms["max"] == pytest.approx(merged_ms["max"], rel=2e-3)
    # The analysis ranks with the hdrhistogram package's rounding, the engine with ceil(q*N):
    # in a sparse tail the two may be one recorded value apart (as in a local run).
    assert merged_ms["p95"] <= shown_ms["p99"] <= merged_ms["p99.9"]

    text = oltplab("show", str(run_dir))
    assert text.returncode == 0, text.stderr
    assert f"tps: {steady['tps_mean']:,.2f}" in text.stdout
    assert "4 threads" in text.stdout

    local_tps = json.loads(oltplab("show", "--json", str(local_run)).stdout)["steady_state"]
    compared = oltplab("compare", str(run_dir), "--vs", str(local_run))
    assert compared.returncode == 0, compared.stderr
    (row,) = [line for line in compared.stdout.splitlines() if " tps " in line]
    assert "4 thr" in row
    assert f"{steady['tps_mean']:,.2f}" in row
    assert f"{local_tps['tps_mean']:,.2f}" in row

    html, png = tmp_path / "r.html", tmp_path / "png"
    reported = oltplab(
        "report", str(run_dir), str(local_run), "-o", str(html), "--png", str(png),
        timeout_s=300,
    )  # fmt: skip
    assert reported.returncode == 0, reported.stderr
    page = html.read_text()
    assert "Distributed load" in page
    assert "2 clients on Ray" in page
    assert any(png.glob("*.png"))


def test_a_distributed_prepare_cut_short_is_refused_by_run_then_redone(
    ray_cluster: RayCluster,
    mariadb_empty_db: MariaDBServer,
    lab: tuple[Path, subprocess.CompletedProcess[str]],
    local_run: Path,
    tmp_path: Path,
) -> None:
    url = f"--db={mariadb_empty_db.url}"
    data = ["--tables=2", "--table-size=300000"]
    assert oltplab("cleanup", "oltp_point_select", url, *DATA).returncode == 0
    driver = ray_cluster.popen(
        "prepare", "oltp_point_select", url, *data, "--clients=2", out=tmp_path
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "sbtest1" not in tables_of(mariadb_empty_db):
        time.sleep(0.2)
    time.sleep(1.0)  # loading
    driver.send_signal(signal.SIGKILL)  # the driver's host dies: Ray ends its actors
    driver.wait(timeout=30)
    assert MARKER in tables_of(mariadb_empty_db)
    time.sleep(5)  # the orphaned actors are gone
    refused = oltplab("run", "oltp_point_select", url, *data, "--time=1")
    assert refused.returncode == 2
    assert "did not finish" in refused.stderr
    assert "Traceback" not in refused.stderr
    redone = ray_cluster.oltplab("prepare", "oltp_point_select", url, *DATA, "--clients=2")
    assert redone.returncode == 0, redone.stderr
    assert tables_of(mariadb_empty_db) == {"sbtest1", "sbtest2"}
    counted = mariadb_empty_db.query("SELECT COUNT(*) FROM sbtest2", database="sbtest")
    assert counted == [[str(TABLE_SIZE)]]
