"""Exact merging of the clients' interval events: counts are added, histograms are added
(in the engine, from their V2 compressed form) and percentiles are read from the sum,
never averaged. A merged event has the engine's own shape, so the ordinary run-directory
writer stores it. Min, max and sum stay exact (from the clients' exact counters); like
the engine, percentiles are clamped into [min, max].
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from oltplab import engine
from oltplab._types import Json

# The engine's interval summary: p50, p95, p99, p99.9, then the --percentile rank.
_FIXED = (("p50", 50.0), ("p95", 95.0), ("p99", 99.0), ("p99_9", 99.9))
_COUNTS = ("transactions", "reads", "writes", "others", "errors", "reconnects")
_SUMS = ("late", "backlog", "in_flight", "dropped", "threads_running")
UNTAGGED, SERVICE = None, "service"
# The whole run's histograms are kept as a list of interval merges, folded into one every
# this many intervals: one engine call per tag per interval, not two.
_COMPACT_AT = 64


def _summary(merged: Json, exact: Json | None, percentile: float) -> Json:
    """The engine's LatencySummary from a merged histogram; `exact`: min/max/sum counters."""
    if merged["count"] == 0:
        return {k: 0 for k in ("min", "mean", "max", "sum", "p50", "p95", "p99", "p99_9", "pct")}
    if exact is None:  # service time: the histogram is all there is
        exact = {
            "min": merged["min_ns"],
            "max": merged["max_ns"],
            "sum": int(merged["mean_ns"] * merged["count"]),
        }
    low, high = int(exact["min"]), int(exact["max"])
    values = [min(max(int(v), low), high) for _, v in merged["percentiles_ns"]]
    doc = {key: values[i] for i, (key, _) in enumerate(_FIXED)}
    return doc | {
        "min": low,
        "max": high,
        "sum": int(exact["sum"]),
        "mean": int(exact["sum"]) / merged["count"],
        "pct": values[len(_FIXED)] if percentile > 0 else 0,
    }


def _ranks(percentile: float) -> list[float]:
    return [r for _, r in _FIXED] + [percentile if percentile > 0 else 50.0]


def _exact_latency(events: Sequence[Json]) -> Json | None:
    busy = [e["latency_ns"] for e in events if int(e["transactions"]) > 0]
    if not busy:
        return None
    return {
        "min": min(int(s["min"]) for s in busy),
        "max": max(int(s["max"]) for s in busy),
        "sum": sum(int(s["sum"]) for s in busy),
    }


def _histograms_by_tag(events: Sequence[Json]) -> dict[str | None, list[str]]:
    by_tag: dict[str | None, list[str]] = defaultdict(list)
    for event in events:
        for h in event.get("histograms", []):
            by_tag[h.get("tag")].append(h["encoded"])
    return by_tag


def merge_interval(events: Sequence[Json], percentile: float) -> Json:
    """One interval of every client (the same interval index, so the same time span)."""
    t_s = max(float(e["t_s"]) for e in events)
    interval_s = max(float(e["interval_s"]) for e in events)
    start_s = t_s - interval_s
    merged: Json = {"event": "interval", "t_s": t_s, "interval_s": interval_s}
    for key in (*_COUNTS, *_SUMS):
        merged[key] = sum(int(e.get(key, 0)) for e in events)
    codes: dict[str, int] = defaultdict(int)
    for e in events:
        for code, n in (e.get("errors_by_code") or {}).items():
            codes[code] += int(n)
    transactions = merged["transactions"]
    lag_sum_ns = sum(int(e.get("lag_mean_ns", 0)) * int(e["transactions"]) for e in events)
    merged |= {
        "errors_by_code": dict(codes),
        "phase": events[0].get("phase", "run"),
        "step": events[0].get("step"),
        "lag_mean_ns": lag_sum_ns // transactions if transactions else 0,
        "lag_max_ns": max(int(e.get("lag_max_ns", 0)) for e in events),
        # Every client's CPU added: percent of one core, over all client machines.
        "client_cpu_pct": sum(float(e.get("client_cpu_pct", 0.0)) for e in events),
        "clients": len(events),
    }
    histograms = []
    ranks = _ranks(percentile)
    for tag, encoded in _histograms_by_tag(events).items():
        sum_h = engine.merge_histograms(encoded, ranks if tag in (UNTAGGED, SERVICE) else [])
        if tag is UNTAGGED:
            merged["latency_ns"] = _summary(sum_h, _exact_latency(events), percentile)
        elif tag == SERVICE:
            merged["service_latency_ns"] = _summary(sum_h, None, percentile)
        histograms.append(
            {
                "tag": tag,
                "start_s": start_s,
                "interval_s": interval_s,
                "max_ns": sum_h["max_ns"],
                "encoded": sum_h["encoded"],
            }
        )
    merged["histograms"] = histograms
    return merged


@dataclass
class Totals:
    """The measured (run-phase) intervals added up: the whole run's counts and histograms."""

    percentile: float
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    errors_by_code: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    # Per tag: the measured intervals' merged histograms, added up lazily (see add).
    histograms: dict[str | None, list[str]] = field(default_factory=dict)
    exact: Json | None = None
    lag_max_ns: int = 0
    client_cpu_s: float = 0.0

    def add(self, client_events: Sequence[Json], merged: Json) -> None:
        if merged.get("phase", "run") != "run":
            return
        for key in (*_COUNTS, "late", "dropped"):
            self.counts[key] += int(merged[key])
        for code, n in merged["errors_by_code"].items():
            self.errors_by_code[code] += n
        for h in merged["histograms"]:
            pending = self.histograms.setdefault(h["tag"], [])
            pending.append(h["encoded"])
            if len(pending) >= _COMPACT_AT:  # bounded memory, one merge per _COMPACT_AT intervals
                pending[:] = [engine.merge_histograms(pending, [])["encoded"]]
        exact = _exact_latency(client_events)
        if exact is not None:
            if self.exact is None:
                self.exact = exact
            else:
                self.exact = {
                    "min": min(self.exact["min"], exact["min"]),
                    "max": max(self.exact["max"], exact["max"]),
                    "sum": self.exact["sum"] + exact["sum"],
                }
        self.lag_max_ns = max(self.lag_max_ns, int(merged["lag_max_ns"]))
        self.client_cpu_s += float(merged["client_cpu_pct"]) / 100.0 * float(merged["interval_s"])

    def encoded(self) -> dict[str | None, str]:
        """The whole run's histogram of each tag, V2 compressed."""
        return {
            tag: engine.merge_histograms(h, [])["encoded"] for tag, h in self.histograms.items()
        }

    def latency(self, tag: str | None, ranks: list[float]) -> tuple[Json, list[list[float]]]:
        """(the engine's LatencySummary, [[rank, ns], ...]) of the whole run's histogram."""
        merged = engine.merge_histograms(
            self.histograms.get(tag, []), _ranks(self.percentile) + ranks
        )
        exact = self.exact if tag is UNTAGGED else None
        summary = _summary(merged, exact, self.percentile)
        low, high = (summary["min"], summary["max"])
        extra = merged["percentiles_ns"][len(_FIXED) + 1 :]
        return summary, [[r, min(max(int(v), low), high)] for r, v in extra]
