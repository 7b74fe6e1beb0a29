"""Run directories synthesised through the real writers (RunWriter, the engine's event
shapes from tests/synthetic.py), with a shape worth drawing: a warm-up ramp, a checkpoint
sawtooth, noise and stalls. Latency histograms hold a few buckets with counts, so that a
600-interval run at thousands of tps is written in a fraction of a second."""

import csv
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from oltplab._types import Json
from oltplab.rundir import RunWriter
from oltplab.rundir.manifest import initial_manifest
from tests.synthetic import new_histogram, run_result, started_event

NS_PER_S = 1_000_000_000
# Latency shape around the mean: (share of transactions, multiple of the mean).
LATENCY_SHAPE = ((0.90, 0.8), (0.09, 1.6), (0.009, 4.0), (0.001, 12.0))


@dataclass(frozen=True)
class Shape:
    tps: float  # steady throughput
    seconds: int = 120
    interval_s: float = 1.0
    warmup_share: float = 0.1  # ramp from 40% over this share of the run
    sawtooth_period_s: float = 0.0  # checkpoint waves: 0 = flat
    sawtooth_depth: float = 0.25
    noise: float = 0.03
    stalls: Sequence[tuple[float, float]] = ()  # (start s, length s): tps ~ 0
    seed: int = 1


def tps_series(shape: Shape) -> np.ndarray:
    n = int(shape.seconds / shape.interval_s)
    t = np.arange(n) * shape.interval_s
    rng = np.random.default_rng(shape.seed)
    level = np.full(n, shape.tps)
    ramp = int(n * shape.warmup_share)
    if ramp:
        level[:ramp] *= np.linspace(0.4, 1.0, ramp)
    if shape.sawtooth_period_s:
        phase = (t % shape.sawtooth_period_s) / shape.sawtooth_period_s
        level *= 1 - shape.sawtooth_depth * phase
    level *= 1 + shape.noise * rng.standard_normal(n)
    for start, length in shape.stalls:
        level[(t >= start) & (t < start + length)] = 0.0
    clipped: np.ndarray = np.maximum(level, 0.0)
    return clipped


def interval_event(t_s: float, tps: float, interval_s: float, threads: int) -> Json:
    transactions = round(tps * interval_s)
    mean_ns = int(threads / max(tps, 1.0) * NS_PER_S)
    h = new_histogram()
    counts = [round(transactions * share) for share, _ in LATENCY_SHAPE]
    counts[0] += transactions - sum(counts)  # rounding's remainder to the common case
    values = [max(1000, int(mean_ns * factor)) for _, factor in LATENCY_SHAPE]
    buckets = [(v, c) for v, c in zip(values, counts, strict=True) if c > 0]  # ascending
    for value, count in buckets:
        h.record_value(value, count)
    total_ns = sum(v * c for v, c in buckets)
    encoded = h.encode().decode("ascii")

    def at(p: float) -> int:
        """The percentile from the buckets (get_value_at_percentile walks them in Python)."""
        seen = 0
        for value, count in buckets:
            seen += count
            if seen >= p / 100 * transactions:
                return value
        return 0

    return {
        "event": "interval",
        "t_s": t_s,
        "interval_s": interval_s,
        "threads_running": threads,
        "transactions": transactions,
        "reads": 14 * transactions,
        "writes": 4 * transactions,
        "others": 2 * transactions,
        "errors": 0,
        "reconnects": 0,
        "errors_by_code": {},
        "latency_ns": {
            "min": buckets[0][0] if buckets else 0,
            # get_mean_value() walks every bucket in Python: 0.2 s a call.
            "mean": total_ns / transactions if transactions else 0,
            "max": buckets[-1][0] if buckets else 0,
            "sum": total_ns,
            "p50": at(50),
            "p95": at(95),
            "p99": at(99),
            "p99_9": at(99.9),
            "pct": at(95),
        },
        "histograms": [
            {"tag": None, "start_s": t_s - interval_s, "interval_s": interval_s}
            | {"max_ns": buckets[-1][0] if buckets else 0, "encoded": encoded},
        ],
        "_values": [mean_ns] if transactions else [],
    }


def write_run(
    out: Path, shape: Shape, *, label: str, threads: int, variables: dict[str, Any] | None = None
) -> Path:
    """A complete run directory at `out`, labelled `label` (the report's config)."""
    opts = {"threads": threads, "time": shape.seconds, "report_interval": shape.interval_s}
    manifest = replace(
        initial_manifest(
            workload="oltp_read_write",
            options=opts,
            db_url="mysql://bench:secret@127.0.0.1:3306/sbtest",
            argv=["run", "oltp_read_write", f"--threads={threads}", f"--time={shape.seconds}"],
        ),
        label=label,
    )
    out.mkdir(parents=True)
    writer = RunWriter.create(out, manifest, created_dir=True)
    writer.on_event(started_event(threads))
    events = []
    for i, tps in enumerate(tps_series(shape)):
        event = interval_event((i + 1) * shape.interval_s, float(tps), shape.interval_s, threads)
        writer.on_event(event)
        events.append(event)
    result = run_result(events, threads=threads, opts=opts) | {
        "workload": "oltp_read_write",
        "driver": "mysql",
        "server_version": "10.11.14-MariaDB",
        "server_variables": variables or {},
    }
    writer.finish(result)
    return out


def write_server_csv(run_dir: Path, shape: Shape) -> None:
    """server.csv with a checkpoint age that saws with the run's checkpoint waves."""
    n = int(shape.seconds / shape.interval_s)
    period = shape.sawtooth_period_s or shape.seconds
    with (run_dir / "server.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_s", "interval_s", "checkpoint_age", "dirty_pages"])
        for i in range(n):
            t = (i + 1) * shape.interval_s
            age = ((t % period) / period) * 8e8
            w.writerow([t, shape.interval_s, round(age), round(age / 16384)])
