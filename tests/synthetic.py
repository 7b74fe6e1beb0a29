"""Engine documents shaped exactly as python/oltplab/_core.pyi describes them, with real
V2-compressed HdrHistograms (from the hdrhistogram package), so that tests exercise the
same shapes the engine produces."""

import math
from collections.abc import Sequence
from typing import Any

from hdrh.histogram import HdrHistogram

from oltplab._types import Json

HIGHEST_NS = 3_600_000_000_000
STARTED_AT = 1_763_700_000.5  # 2025-11-21T04:40:00.500Z


def new_histogram() -> Any:
    return HdrHistogram(1, HIGHEST_NS, 3)


_BUCKETS = new_histogram()  # never recorded into: its bucket arithmetic only (latency_summary)


def encode(values_ns: Sequence[int]) -> str:
    h = new_histogram()
    for v in values_ns:
        h.record_value(v)
    encoded: bytes = h.encode()
    return encoded.decode("ascii")


def latency_summary(values_ns: Sequence[int], percentile: float = 95.0) -> Json:
    if not values_ns:
        keys = ("min", "mean", "max", "sum", "p50", "p95", "p99", "p99_9", "pct")
        return dict.fromkeys(keys, 0)
    ordered = sorted(values_ns)

    def at(p: float) -> int:
        """HdrHistogram's value at percentile `p`: the top of the bucket that holds the
        k-th smallest value (hdrh's own method walks every bucket from 0: seconds per run)."""
        k = max(int(min(p, 100.0) * len(ordered) / 100 + 0.5), 1)
        return int(_BUCKETS.get_highest_equivalent_value(ordered[k - 1]))

    return {
        "min": min(values_ns),
        "mean": sum(values_ns) / len(values_ns),
        "max": max(values_ns),
        "sum": sum(values_ns),
        "p50": at(50),
        "p95": at(95),
        "p99": at(99),
        "p99_9": at(99.9),
        "pct": at(percentile) if percentile > 0 else 0,
    }


def latencies(transactions: int, seed: int = 1) -> list[int]:
    """Deterministic, spread-out latencies in ns: 0.2 ms ... ~20 ms."""
    return [200_000 + ((i * 7919 + seed * 104_729) % 100) * 200_000 for i in range(transactions)]


def started_event(threads: int = 2, started_at: float = STARTED_AT) -> Json:
    return {"event": "started", "threads": threads, "connect_s": 0.012, "started_at": started_at}


def interval_event(
    t_s: float,
    *,
    interval_s: float = 1.0,
    threads: int = 2,
    transactions: int = 100,
    errors: int = 0,
    reconnects: int = 0,
    percentile: float = 95.0,
    values_ns: Sequence[int] | None = None,
) -> Json:
    """One interval of oltp_read_write-like traffic: 14 reads, 4 writes, 2 others a transaction.
    `values_ns`: the transactions' latencies (default: `transactions` spread-out ones)."""
    if values_ns is not None:
        transactions = len(values_ns)
    values = (
        list(values_ns) if values_ns is not None else latencies(transactions, round(t_s * 1000))
    )
    kind_values = [v // 20 for v in values]
    histograms: list[Json] = [
        {
            "tag": None,
            "start_s": t_s - interval_s,
            "interval_s": interval_s,
            "max_ns": max(values, default=0),
            "encoded": encode(values),
        },
    ]
    if transactions:
        histograms.append(
            {
                "tag": "point_selects",
                "start_s": t_s - interval_s,
                "interval_s": interval_s,
                "max_ns": max(kind_values),
                "encoded": encode(kind_values),
            }
        )
    return {
        "event": "interval",
        "t_s": t_s,
        "interval_s": interval_s,
        "threads_running": threads,
        "transactions": transactions,
        "reads": 14 * transactions,
        "writes": 4 * transactions,
        "others": 2 * transactions,
        "errors": errors,
        "reconnects": reconnects,
        "errors_by_code": {"SQLITE_BUSY": errors} if errors else {},
        "latency_ns": latency_summary(values, percentile),
        "histograms": histograms,
        "_values": values,  # not in the contract: lets run_result() rebuild the totals
    }


def intervals(n: int, *, interval_s: float = 1.0, transactions: int = 100) -> list[Json]:
    return [
        interval_event(interval_s * (i + 1), interval_s=interval_s, transactions=transactions)
        for i in range(n)
    ]


def options(**overrides: Any) -> Json:
    """Every option of oltp_read_write in the engine's catalogue, defaults filled."""
    from tests.fakecore import catalog_doc

    doc = catalog_doc()
    workload = next(w for w in doc["workloads"] if w["name"] == "oltp_read_write")
    defs = doc["general"] + workload["options"]
    return {d["name"]: d["default"] for d in defs} | overrides


def run_result(
    events: Sequence[Json],
    *,
    threads: int = 2,
    stop_reason: str = "time",
    error: str | None = None,
    opts: Json | None = None,
    histogram_ms: list[list[float]] | None = None,
) -> Json:
    """The run result whose totals are the sums of `events` (as the engine guarantees)."""
    opts = options(threads=threads) | (opts or {})
    values = [v for e in events for v in e["_values"]]
    transactions = sum(e["transactions"] for e in events)
    reads = sum(e["reads"] for e in events)
    writes = sum(e["writes"] for e in events)
    others = sum(e["others"] for e in events)
    errors = sum(e["errors"] for e in events)
    duration_s = events[-1]["t_s"] if events else 0.0
    per_thread = [
        transactions // threads + (1 if i < transactions % threads else 0) for i in range(threads)
    ]
    sum_ns = sum(values)
    return {
        "workload": "oltp_read_write",
        "options": opts,
        "driver": "sqlite",
        "server_version": "3.46.0",
        "complete": stop_reason in ("time", "events"),
        "stop_reason": stop_reason,
        "error": error,
        "started_at": STARTED_AT,
        "ended_at": STARTED_AT + duration_s + 0.01,
        "connect_s": 0.012,
        "duration_s": duration_s,
        "interval_s": events[0]["interval_s"] if events else 1.0,
        "transactions": transactions,
        "queries": {
            "read": reads,
            "write": writes,
            "other": others,
            "total": reads + writes + others,
        },
        "errors": {"total": errors, "by_code": {"SQLITE_BUSY": errors} if errors else {}},
        "reconnects": 0,
        "saturated": 0,
        "latency_ns": latency_summary(values, float(opts.get("percentile", 95))),
        "histograms": {"": encode(values), "point_selects": encode([v // 20 for v in values])},
        "threads": [
            {
                "events": n,
                "latency_sum_ns": math.floor(sum_ns * n / transactions) if transactions else 0,
            }
            for n in per_thread
        ],
        "histogram_ms": histogram_ms,
    }


def prepare_result(tables: int = 1) -> Json:
    return {
        "workload": "oltp_read_write",
        "options": options(),
        "driver": "sqlite",
        "server_version": "3.46.0",
        "tables": tables,
        "duration_s": 0.25,
    }
