"""The merged run's result document, in the engine's own shape (so that run.json is
written by the ordinary code): totals from the merged measured intervals, exact latency
counters, percentiles from the summed histograms, the clients' flags rolled up.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from oltplab import percentiles
from oltplab._types import Json
from oltplab.distributed.merge import SERVICE, UNTAGGED, Totals

# A client that started this much after the common instant makes the run's start ragged.
START_LATE_LIMIT_S = 0.05


def _stop_reason(results: Sequence[Json], interrupted: bool) -> str:
    if interrupted or any(r["stop_reason"] == "interrupted" for r in results):
        return "interrupted"
    if any(r["stop_reason"] == "error" for r in results):
        return "error"
    if results and all(r["stop_reason"] == "events" for r in results):
        return "events"
    return "time"


def merged_result(
    *,
    options: Mapping[str, Any],
    results: Sequence[Json],
    totals: Totals,
    started_at: float,
    ended_at: float,
    flags: Sequence[str],
    interrupted: bool,
    error: str | None,
) -> Json:
    """`results`: the engine results of the clients that finished (lost ones have none);
    `options`: the run's options as the user gave them, totals not shares."""
    first = results[0] if results else {}
    ranks = percentiles.ranks(options.get("percentile"))
    latency_ns, percentiles_ns = totals.latency(UNTAGGED, ranks)
    open_loop = float(options.get("rate", 0) or 0) > 0
    service = totals.latency(SERVICE, ranks) if open_loop else None
    counts = totals.counts
    stop_reason = _stop_reason(results, interrupted)
    queries = {"read": counts["reads"], "write": counts["writes"], "other": counts["others"]}
    return {
        "workload": first.get("workload"),
        "options": dict(options),
        "driver": first.get("driver"),
        "server_version": first.get("server_version"),
        "server_variables": first.get("server_variables") or {},
        "complete": error is None and stop_reason in ("time", "events"),
        "stop_reason": stop_reason,
        "error": error,
        "started_at": started_at,
        "ended_at": ended_at,
        "connect_s": max((float(r["connect_s"]) for r in results), default=None),
        "duration_s": max((float(r["duration_s"]) for r in results), default=0.0),
        "interval_s": first.get("interval_s"),
        "warmup_s": first.get("warmup_s", 0.0),
        "transactions": counts["transactions"],
        "queries": queries | {"total": sum(queries.values())},
        "errors": {"total": counts["errors"], "by_code": dict(totals.errors_by_code)},
        "reconnects": counts["reconnects"],
        "saturated": sum(int(r.get("saturated", 0)) for r in results),
        "latency_ns": latency_ns,
        "percentiles_ns": percentiles_ns,
        "service_latency_ns": service[0] if service else None,
        "service_percentiles_ns": service[1] if service else None,
        "rate_per_s": float(options.get("rate", 0) or 0),
        "late": counts["late"],
        "dropped": counts["dropped"],
        "lag_max_ns": totals.lag_max_ns,
        "client_cpu_s": totals.client_cpu_s,
        "flags": list(flags),
        "histograms": {
            ("" if tag is UNTAGGED else tag): encoded
            for tag, encoded in totals.encoded().items()
            if tag != SERVICE
        },
        # sysbench's fairness over every connection of every client.
        "threads": [t for r in results for t in r.get("threads") or []],
        "segments": None,
    }


def rolled_up_flags(results: Sequence[Json], lost: bool, late_start: bool) -> list[str]:
    """Any client's reason to distrust the numbers is the run's."""
    flags: list[str] = []
    for r in results:
        flags += [f for f in r.get("flags") or [] if f not in flags]
    if lost:
        flags.append("client_lost")
    if late_start:
        flags.append("client_started_late")
    return flags
