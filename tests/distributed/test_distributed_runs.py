"""Issue 15's done-when, on a real 3-node Ray cluster (conftest.py) and the session's real
MariaDB: a distributed prepare and a 3-client closed-loop run whose merged numbers are
checked against the server's own counters and against an independent decode of every
client's latency.hlog; a 2-client open-loop run at a total rate with a server pause; a
node lost mid-run. Each run is an `oltplab` process joining the cluster.
"""

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

from oltplab.rundir.hlog import HIGHEST_NS, LOWEST_NS, SIGNIFICANT_DIGITS
from oltplab.servers import MariaDBServer
from tests.distributed.conftest import RayCluster
from tests.drivers.counters import delta, mariadb_status
from tests.test_schema import validate

pytestmark = pytest.mark.serial  # a 3-node Ray cluster takes the whole machine

TABLES, TABLE_SIZE = 3, 500
DATA = [f"--tables={TABLES}", f"--table-size={TABLE_SIZE}"]
NS_PER_MS = 1e6


def manifest(run_dir: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((run_dir / "run.json").read_text())
    return doc


def decoded_union(hlogs: list[Path]) -> HdrHistogram:
    """Every measured transaction of every client, decoded by the hdrhistogram package."""
    total = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
    for path in hlogs:
        reader = HistogramLogReader(str(path), HdrHistogram(LOWEST_NS, HIGHEST_NS, 3))
        while (h := reader.get_next_interval_histogram()) is not None:
            if h.get_tag() is None:
                total.add(h)
        reader.close()
    return total


@pytest.fixture(scope="module")
def prepared(
    ray_cluster: RayCluster, mariadb_empty_db: MariaDBServer
) -> subprocess.CompletedProcess[str]:
    return ray_cluster.oltplab(
        "prepare", "oltp_point_select", f"--db={mariadb_empty_db.url}", *DATA, "--clients=3"
    )


def test_prepare_deals_the_tables_over_the_clients(
    prepared: subprocess.CompletedProcess[str], mariadb_empty_db: MariaDBServer
) -> None:
    assert prepared.returncode == 0, prepared.stderr
    assert f"Prepared {TABLES} table(s)" in prepared.stdout
    for t in range(1, TABLES + 1):
        rows = mariadb_empty_db.query(f"SELECT COUNT(*) FROM sbtest{t}", database="sbtest")
        assert rows == [[str(TABLE_SIZE)]]


@pytest.fixture(scope="module")
def closed_loop(
    ray_cluster: RayCluster,
    mariadb_empty_db: MariaDBServer,
    prepared: subprocess.CompletedProcess[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str], dict[str, int]]:
    assert prepared.returncode == 0, prepared.stderr
    out = tmp_path_factory.mktemp("closed") / "run"
    before = mariadb_status(mariadb_empty_db)
    done = ray_cluster.oltplab(
        "run", "oltp_point_select", f"--db={mariadb_empty_db.url}", *DATA,
        "--threads=6", "--time=3", "--report-interval=0.5", "--percentile=50,95,99,99.9",
        "--clients=3", f"--out={out}",
    )  # fmt: skip
    return out, done, delta(mariadb_status(mariadb_empty_db), before)


def test_three_clients_add_up_to_the_server_counts(
    closed_loop: tuple[Path, subprocess.CompletedProcess[str], dict[str, int]],
) -> None:
    out, done, server = closed_loop
    assert done.returncode == 0, done.stderr
    merged = manifest(out)
    clients = [manifest(out / "clients" / str(i)) for i in range(3)]
    total = merged["summary"]["transactions"]
    assert total > 100
    assert total == sum(c["summary"]["transactions"] for c in clients)
    # One SELECT per transaction, plus each client's pre-flight check of each table.
    assert server["Com_select"] == total + 3 * TABLES
    assert merged["complete"] is True
    assert merged["load"]["threads"] == 6
    assert [c["load"]["threads"] for c in clients] == [2, 2, 2]
    for doc in (merged, *clients):
        validate(doc)  # schema/run.schema.json, distributed section included
    placed = merged["distributed"]["clients"]
    assert len({c["node_id"] for c in placed}) == 3  # one per node
    for c in placed:
        assert c["clock"]["bound_s"] < 0.05
        assert abs(c["clock"]["offset_s"]) <= 0.05
        assert c["connect_s"] is not None
        assert c["start_late_s"] is not None
        assert c["start_late_s"] < 0.05  # connected first, then started at the common instant


def nearest_rank_ns(union: HdrHistogram, rank: float, low_ns: int, high_ns: int) -> int:
    """The engine's percentile, computed here from the decoded values: the ceil(q * N)-th
    smallest value, as its bucket's highest equivalent, clamped into the exact [min, max]."""
    target = max(1, math.ceil(rank / 100 * union.get_total_count()))
    seen = 0
    for item in union.get_recorded_iterator():
        seen += item.count_at_value_iterated_to
        if seen >= target:
            value = union.get_highest_equivalent_value(item.value_iterated_to)
            return int(min(max(value, low_ns), high_ns))
    raise AssertionError("rank beyond the histogram")


def test_merged_percentiles_are_those_of_every_recorded_value(
    closed_loop: tuple[Path, subprocess.CompletedProcess[str], dict[str, int]],
) -> None:
    out = closed_loop[0]
    union = decoded_union([out / "clients" / str(i) / "latency.hlog" for i in range(3)])
    summary = manifest(out)["summary"]
    latency = summary["latency_ms"]
    assert union.get_total_count() == summary["transactions"]
    # min and max are exact (the clients' counters): the decoded values' buckets hold them.
    low_ns, high_ns = round(latency["min"] * NS_PER_MS), round(latency["max"] * NS_PER_MS)
    assert union.get_highest_equivalent_value(high_ns) == union.get_max_value()
    assert union.get_lowest_equivalent_value(low_ns) == union.get_min_value()
    clients_max = [
        manifest(out / "clients" / str(i))["summary"]["latency_ms"]["max"] for i in range(3)
    ]
    assert latency["max"] == max(clients_max)
    for key, rank in (("p50", 50), ("p99", 99), ("p99.9", 99.9)):
        assert latency[key] * NS_PER_MS == pytest.approx(
            nearest_rank_ns(union, rank, low_ns, high_ns), abs=0.5
        ), key
    # The merged hlog holds the same values as the clients' together.
    merged_hlog = decoded_union([out / "latency.hlog"])
    assert merged_hlog.get_total_count() == union.get_total_count()
    assert merged_hlog.get_value_at_percentile(99) == union.get_value_at_percentile(99)


def test_intervals_are_merged_by_time(
    closed_loop: tuple[Path, subprocess.CompletedProcess[str], dict[str, int]],
) -> None:
    out = closed_loop[0]
    merged = pd.read_csv(out / "intervals.csv")
    clients = [pd.read_csv(out / "clients" / str(i) / "intervals.csv") for i in range(3)]
    # One row per interval, not per client: 3 s in 0.5 s intervals (+ the short tail).
    assert len(merged) == max(len(c) for c in clients)
    assert 6 <= len(merged) <= 7
    full = min(len(c) for c in clients)
    assert list(merged["transactions"][:full]) == [
        sum(int(c["transactions"][k]) for c in clients) for k in range(full)
    ]
    assert merged["transactions"].sum() == manifest(out)["summary"]["transactions"]
    # Connections running at each interval's end (at 3 s the workers are finishing).
    assert (merged[merged["t_s"] < 2.9]["threads"] == 6).all()


def test_show_and_compare_read_a_distributed_run(
    closed_loop: tuple[Path, subprocess.CompletedProcess[str], dict[str, int]],
) -> None:
    out = closed_loop[0]
    for args in (["show", str(out)], ["compare", str(out), "--vs", str(out / "clients" / "0")]):
        shown = subprocess.run(
            [sys.executable, "-m", "oltplab", *args], capture_output=True, text=True, timeout=60
        )
        assert shown.returncode == 0, shown.stderr
        assert "oltp_point_select" in shown.stdout or "tps" in shown.stdout.lower()


class Pause:
    """SIGSTOP to the server `at_s` after the run's common start, SIGCONT `for_s` later."""

    def __init__(self, pid: int, run_dir: Path, at_s: float, for_s: float) -> None:
        self.pid, self.run_dir, self.at_s, self.for_s = pid, run_dir, at_s, for_s
        self.thread = threading.Thread(target=self._pause, daemon=True)

    def _pause(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the common start is in the first run.json
            try:
                start = manifest(self.run_dir)["distributed"]["start_at"]
                break
            except (FileNotFoundError, json.JSONDecodeError, KeyError):
                time.sleep(0.05)
        else:
            return
        start_s = pd.Timestamp(start).timestamp()
        time.sleep(max(0.0, start_s + self.at_s - time.time()))
        os.kill(self.pid, signal.SIGSTOP)
        try:
            time.sleep(self.for_s)
        finally:
            os.kill(self.pid, signal.SIGCONT)


def test_open_loop_holds_the_total_rate_and_shows_a_pause(
    ray_cluster: RayCluster,
    mariadb_empty_db: MariaDBServer,
    prepared: subprocess.CompletedProcess[str],
    tmp_path: Path,
) -> None:
    assert prepared.returncode == 0, prepared.stderr
    out, rate, pause_s = tmp_path / "run", 400, 1.0
    pid = mariadb_empty_db.pid()
    assert pid is not None
    pause = Pause(pid, out, at_s=2.0, for_s=pause_s)
    pause.thread.start()
    done = ray_cluster.oltplab(
        "run", "oltp_point_select", f"--db={mariadb_empty_db.url}", *DATA,
        "--threads=8", "--time=5", f"--rate={rate}", "--clients=2", f"--out={out}",
        "--percentile=50,99", "--rate-arrivals=uniform",
    )  # fmt: skip
    pause.thread.join()
    assert done.returncode == 0, done.stderr
    run = manifest(out)
    summary = run["summary"]
    # Uniform arrivals: the schedule is exact, so this checks the clients kept up with it
    # (Poisson's own variance at 2,000 arrivals would be 2.2%), both starting on time.
    assert "client_started_late" not in run["flags"], run["distributed"]["clients"]
    assert abs(summary["transactions"] / 5.0 - rate) / rate < 0.03
    # tps is over the run's duration: the 5 s of arrivals and the wait for the last answers
    # (up to half a second on a loaded host), as in one process.
    assert summary["duration_s"] > 4.95  # the clients' clocks are aligned to a few ms
    assert summary["tps"] == pytest.approx(summary["transactions"] / summary["duration_s"])
    assert [manifest(out / "clients" / str(i))["load"]["rate_per_s"] for i in range(2)] == [
        rate / 2,
        rate / 2,
    ]
    # Open loop: response time from the intended start, so the stall is in the p99 of the
    # merged run (as in one process) while the service time stays short.
    assert summary["latency_ms"]["p99"] > 0.5 * pause_s * 1000
    assert summary["service_latency_ms"]["p50"] < 50
    rows = pd.read_csv(out / "intervals.csv")
    assert rows["lat_max_ms"].max() > 0.8 * pause_s * 1000


def test_a_run_every_client_refuses_leaves_nothing(
    ray_cluster: RayCluster,
    mariadb_empty_db: MariaDBServer,
    prepared: subprocess.CompletedProcess[str],
    tmp_path: Path,
) -> None:
    assert prepared.returncode == 0, prepared.stderr
    out = tmp_path / "run"
    done = ray_cluster.oltplab(
        "run", "oltp_point_select", f"--db={mariadb_empty_db.url}", "--tables=9",
        "--time=2", "--threads=2", "--clients=2", f"--out={out}",
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("oltplab: error: client 0:")
    assert "sbtest" in line
    assert not out.exists()


def _wait_for_rows(out: Path, proc: subprocess.Popen[str], rows: int) -> None:
    deadline = time.monotonic() + 60
    while (
        not (out / "intervals.csv").exists()
        or len((out / "intervals.csv").read_text().splitlines()) <= rows
    ):
        assert time.monotonic() < deadline
        assert proc.poll() is None
        time.sleep(0.1)


def test_ctrl_c_stops_every_client_and_keeps_what_was_measured(
    ray_cluster: RayCluster,
    mariadb_empty_db: MariaDBServer,
    prepared: subprocess.CompletedProcess[str],
    tmp_path: Path,
) -> None:
    assert prepared.returncode == 0, prepared.stderr
    out = tmp_path / "run"
    tmp_path.joinpath("logs").mkdir()
    proc = ray_cluster.popen(
        "run", "oltp_point_select", f"--db={mariadb_empty_db.url}", *DATA,
        "--threads=2", "--time=60", "--clients=2", f"--out={out}",
        out=tmp_path / "logs",
    )  # fmt: skip
    try:
        _wait_for_rows(out, proc, 2)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)  # well before --time=60
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 130, (tmp_path / "logs" / "stderr").read_text()
    merged = manifest(out)
    assert merged["stop_reason"] == "interrupted"
    assert merged["complete"] is False
    assert [manifest(out / "clients" / str(i))["stop_reason"] for i in range(2)] == [
        "interrupted",
        "interrupted",
    ]
    rows = pd.read_csv(out / "intervals.csv")
    assert len(rows) >= 2
    assert rows["transactions"].sum() == merged["summary"]["transactions"] > 0


def test_a_lost_node_is_recorded_and_the_run_goes_on(
    ray_cluster: RayCluster,
    mariadb_empty_db: MariaDBServer,
    prepared: subprocess.CompletedProcess[str],
    tmp_path: Path,
) -> None:
    assert prepared.returncode == 0, prepared.stderr
    out = tmp_path / "run"
    tmp_path.joinpath("logs").mkdir()
    proc = ray_cluster.popen(
        "run", "oltp_point_select", f"--db={mariadb_empty_db.url}", *DATA,
        "--threads=3", "--time=6", "--clients=3", f"--out={out}",
        out=tmp_path / "logs",
    )  # fmt: skip
    try:
        _wait_for_rows(out, proc, 2)
        victim = ray_cluster.workers[-1]
        removed_at = time.time()
        ray_cluster.cluster.remove_node(victim, allow_graceful=False)
        code = proc.wait(timeout=90)
        exited_at = time.time()
    finally:
        if proc.poll() is None:
            proc.kill()
        ray_cluster.workers[-1] = ray_cluster.cluster.add_node(**_node_args())
        ray_cluster.cluster.wait_for_nodes(timeout=120)  # the victim seen dead by Ray
    stderr = (tmp_path / "logs" / "stderr").read_text()
    assert code == 1, stderr
    merged = manifest(out)
    assert merged["complete"] is False
    assert "client_lost" in merged["flags"]
    [loss] = merged["distributed"]["losses"]
    assert loss["threads"] == 1
    # Recorded when Ray reported the node gone: after the removal, before the run ended
    # (Ray's detection takes seconds more on a loaded host, so not necessarily within --time).
    start = datetime.fromisoformat(merged["distributed"]["start_at"]).timestamp()
    assert removed_at - start - 0.01 <= loss["at_s"] <= exited_at - start, removed_at - start
    survivors = [c for c in merged["distributed"]["clients"] if not c["lost"]]
    assert len(survivors) == 2
    assert all(c["stop_reason"] == "time" for c in survivors)
    rows = pd.read_csv(out / "intervals.csv")
    assert rows["t_s"].max() >= 5.9  # the others ran to the end
    assert rows["transactions"].sum() == merged["summary"]["transactions"]
    assert "lost" in stderr


def _node_args() -> dict[str, Any]:
    from tests.distributed.conftest import NODE_ARGS

    return NODE_ARGS
