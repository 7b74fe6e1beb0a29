"""What merging costs the driver of a distributed run (docs/distributed.md): per interval,
N simulated clients' events (one transaction histogram and three statement-kind ones each,
V2 compressed, made by the hdrhistogram package) are merged exactly by the engine
(`engine.RunMerge`: decode, add, percentiles, encode, the run's totals) and written
(intervals.csv + latency.hlog through the ordinary RunWriter). Reports milliseconds of
driver CPU per interval.

    .venv/bin/python bench/merge_clients.py                 # 2, 8, 64 clients
    .venv/bin/python bench/merge_clients.py --clients 2,8,64,256 --values 10000
"""

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from hdrh.histogram import HdrHistogram

from oltplab import engine
from oltplab.rundir import RunWriter
from oltplab.rundir.hlog import HIGHEST_NS, LOWEST_NS, SIGNIFICANT_DIGITS
from oltplab.rundir.manifest import initial_manifest

# Statement kinds of oltp_read_only (the run's spec below) that each client reports.
KINDS = ("point_selects", "begin", "commit")
_SUMMARY = dict.fromkeys(("min", "mean", "max", "sum", "p50", "p95", "p99", "p99_9", "pct"), 0)


def histogram(values: int, rng: random.Random) -> tuple[str, int]:
    """Log-uniform 100 µs .. 100 ms, plus 0.1% up to 10 s (as reference/distributed.md)."""
    h = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
    for _ in range(values):
        top = 1e10 if rng.random() < 0.001 else 1e8
        h.record_value(int(10 ** rng.uniform(5, __import__("math").log10(top))))
    return h.encode().decode(), h.get_max_value()


def client_event(k: int, values: int, rng: random.Random, pool: list[Any]) -> dict[str, Any]:
    encoded, max_ns = rng.choice(pool)
    histograms = [
        {"tag": None, "start_s": k, "interval_s": 1.0, "max_ns": max_ns, "encoded": encoded}
    ]
    for kind in KINDS:
        e, m = rng.choice(pool)
        histograms.append({"tag": kind, "start_s": k, "interval_s": 1.0, "max_ns": m, "encoded": e})
    return {
        "event": "interval", "t_s": k + 1.0, "interval_s": 1.0, "phase": "run", "step": None,
        "threads_running": 100, "transactions": values, "reads": values, "writes": 0,
        "others": 0, "errors": 0, "reconnects": 0, "errors_by_code": {},
        "latency_sum_ns": values * 1_000_000, "latency_min_ns": 100_000,
        "latency_max_ns": max_ns, "saturated": 0, "lag_sum_ns": 0, "lag_max_ns": 0, "late": 0,
        "client_lag_sum_ns": 0, "latency_ns": _SUMMARY, "service_latency_ns": None,
        "lag_mean_ns": 0, "backlog": 0, "in_flight": 0, "dropped": 0, "client_cpu_pct": 0.0,
        "histograms": histograms,
    }  # fmt: skip


def measure(clients: int, values: int, intervals: int, pool: list[Any]) -> list[float]:
    rng = random.Random(clients)
    with tempfile.TemporaryDirectory() as tmp:
        manifest = initial_manifest(
            workload="oltp_point_select", options={}, db_url="mysql://x@h/db", argv=None
        )
        writer = RunWriter.create(Path(tmp), manifest, created_dir=False)
        writer.on_event({"event": "started", "threads": clients, "started_at": time.time()})
        spec = engine.build_spec("oltp_read_only", "mysql://x@h/db", {"threads": clients})
        merge = engine.RunMerge(spec)
        per_interval_ms = []
        for k in range(intervals):
            events = [client_event(k, values, rng, pool) for _ in range(clients)]
            began = time.process_time()
            merged = merge.interval(events)
            writer.on_event(merged)
            per_interval_ms.append(1000 * (time.process_time() - began))
        writer.abort(stop_reason="interrupted", error=None)
    return per_interval_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="2,8,64")
    parser.add_argument("--values", type=int, default=1000, help="latencies per histogram")
    parser.add_argument("--intervals", type=int, default=20)
    args = parser.parse_args()
    rng = random.Random(1)
    pool = [histogram(args.values, rng) for _ in range(16)]
    size = statistics.mean(len(e) for e, _ in pool)
    print(f"histograms: {args.values} values, {size:.0f} base64 bytes each; 4 per client")
    print("| clients | merge + write per interval, median (ms CPU) | p90 | max |")
    print("|---:|---:|---:|---:|")
    for n in (int(c) for c in args.clients.split(",")):
        ms = sorted(measure(n, args.values, args.intervals, pool))
        p90 = ms[int(0.9 * (len(ms) - 1))]
        print(f"| {n} | {statistics.median(ms):.2f} | {p90:.2f} | {ms[-1]:.2f} |")


if __name__ == "__main__":
    main()
