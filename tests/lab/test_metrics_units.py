"""The arithmetic of system.csv/server.csv rows, CPU lists, and --metrics parsing."""

import csv
import os
from pathlib import Path

import pytest

from oltplab.exceptions import ConfigError
from oltplab.metrics import parse_metrics
from oltplab.metrics.sampler import MetricsSampler
from oltplab.metrics.server import server_row
from oltplab.metrics.system import CpuTimes, SystemSnapshot, columns, row, snapshot
from oltplab.servers.pinning import cpus_allowed_list, parse_cpu_list


def _snap(at_s: float, busy: int, ctxt: int, writes: int) -> SystemSnapshot:
    cpu = CpuTimes(user=busy, system=0, iowait=0, idle=1000 - busy, total=1000)
    return SystemSnapshot(at_s, cpu, ctxt, 3, 0, 10, 20, {"vda": (0, 0, writes, writes * 8)}, 0)


def test_system_row_rates_over_the_elapsed_time() -> None:
    before = _snap(0.0, 0, 100, 0)
    now = SystemSnapshot(
        2.0,
        CpuTimes(user=300, system=100, iowait=100, idle=1500, total=2000),
        500,
        4,
        1,
        11,
        21,
        {"vda": (0, 0, 40, 40 * 8)},
        2_000_000,
    )
    values = row(before, now)
    assert values["cpu_user_pct"] == pytest.approx(30.0)
    assert values["cpu_sys_pct"] == pytest.approx(10.0)
    assert values["cpu_iowait_pct"] == pytest.approx(10.0)
    assert values["ctx_switches_per_s"] == pytest.approx(200.0)
    assert values["vda_writes_per_s"] == pytest.approx(20.0)
    assert values["vda_write_mb_per_s"] == pytest.approx(20 * 8 * 512 / 1e6)
    assert values["lo_bytes_per_s"] == pytest.approx(1e6)
    assert values["run_queue"] == 4.0
    assert set(values) == set(columns(now))


def test_a_real_snapshot_reads_proc() -> None:
    first = snapshot()
    assert first.cpu.total > 0
    assert first.mem_used_bytes > 0
    assert first.procs_running >= 1


def test_server_row_counters_become_rates_gauges_stay() -> None:
    cols = [("log_per_s", True), ("dirty", False), ("absent", False)]
    got = server_row(
        cols,
        (10.0, {"log_per_s": 1000.0, "dirty": 5.0}),
        (12.0, {"log_per_s": 5000.0, "dirty": 7.0}),
    )
    assert got == {"log_per_s": 2000.0, "dirty": 7.0, "absent": None}


def test_parse_metrics() -> None:
    assert parse_metrics("system, server,system") == ("system", "server")
    assert parse_metrics(None) == ()
    with pytest.raises(ConfigError, match="unknown kind 'disk'"):
        parse_metrics("disk")


def test_cpu_lists() -> None:
    assert parse_cpu_list("0") == {0}
    assert parse_cpu_list("0-1") <= set(range(os.cpu_count() or 1)) | {1}
    with pytest.raises(ConfigError, match="taskset"):
        parse_cpu_list("a-b")
    with pytest.raises(ConfigError, match="this host has CPUs"):
        parse_cpu_list("4096")
    assert cpus_allowed_list() != ""


def test_a_late_tick_gets_an_empty_system_row_and_the_next_covers_the_gap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two ticks queued before the sampler reads either (it was short of CPU): the first is
    stale; read right before the second, the second would cover no time at all (CPU 0% busy
    and 0% idle, rates of nothing). The first is left empty, the second covers the whole time.
    /proc is replaced by three snapshots: the baseline, 2 s later, and 1 ms after that."""
    cpu = [CpuTimes(0, 0, 0, 0, 0), CpuTimes(100, 50, 0, 50, 200), CpuTimes(100, 50, 0, 50, 200)]
    snaps = iter(
        SystemSnapshot(at_s, c, 0, 1, 0, 1, 1, {}, 0)
        for at_s, c in zip((0.0, 2.0, 2.001), cpu, strict=True)
    )
    monkeypatch.setattr("oltplab.metrics.system.snapshot", lambda: next(snaps))
    sampler = MetricsSampler(tmp_path, ["system"], "sqlite:///unused.db")
    sampler.on_event({"event": "interval", "t_s": 1.0})
    sampler.on_event({"event": "interval", "t_s": 2.0})
    sampler.start()  # the baseline sample, then the thread finds both ticks waiting
    sampler.close()
    with (tmp_path / "system.csv").open(encoding="utf-8") as f:
        stale, on_time = list(csv.DictReader(f))
    assert float(stale["t_s"]) == 1.0
    assert {v for k, v in stale.items() if k != "t_s"} == {""}
    assert float(on_time["t_s"]) == 2.0
    assert float(on_time["span_s"]) == pytest.approx(2.0)  # since the baseline: both intervals
    assert float(on_time["cpu_user_pct"]) == pytest.approx(50.0)
    assert float(on_time["cpu_idle_pct"]) == pytest.approx(25.0)


def test_the_baseline_is_taken_again_when_the_load_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """start() runs before the clients connect (5 s here, the host busy all along); the
    first row's rates cover the time from the "started" event, not the connect time."""
    snaps = iter([_snap(0.0, 1000, 0, 0), _snap(5.0, 1000, 0, 0), _snap(6.0, 250, 100, 0)])
    monkeypatch.setattr("oltplab.metrics.system.snapshot", lambda: next(snaps))
    sampler = MetricsSampler(tmp_path, ["system"], "sqlite:///unused.db")
    sampler.start()
    sampler.on_event({"event": "started"})
    sampler.on_event({"event": "interval", "t_s": 1.0})
    sampler.close()
    with (tmp_path / "system.csv").open(encoding="utf-8") as f:
        (first,) = list(csv.DictReader(f))
    assert float(first["span_s"]) == pytest.approx(1.0)
    assert float(first["ctx_switches_per_s"]) == pytest.approx(100.0)
