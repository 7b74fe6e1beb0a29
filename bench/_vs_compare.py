"""Comparing the tools: oltplab / sysbench ratios per pair and their medians, whether the
server did the same work for both, and issue 22's goals."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from _vs_run import Run

# Statement counts per transaction match when they differ by less than this (retries after
# deadlocks and duplicate keys add a little to one tool or the other).
SAME_WORK_TOLERANCE = 0.02


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def median(values: Sequence[float | None]) -> float | None:
    have = [v for v in values if v is not None]
    return statistics.median(have) if have else None


# (label, how to read it from a run, format)
METRICS: list[tuple[str, Callable[[Run], float | None], str]] = [
    ("tps", lambda r: r.tps if r.ok else None, ".0f"),
    ("client CPU/txn µs", lambda r: r.cpu_per_txn_us if r.ok else None, ".1f"),
    ("peak RSS MB", lambda r: r.peak_rss_mb if r.ok else None, ".0f"),
    ("set-up s", lambda r: r.setup_s if r.ok else None, ".2f"),
    ("p95 ms", lambda r: r.p95_ms if r.ok else None, ".2f"),
]


@dataclass
class Goal:
    what: str
    engine: str
    target: str
    value: float | None
    note: str = ""

    @property
    def met(self) -> bool | None:
        if self.value is None:
            return None
        op, limit = self.target.split()
        return self.value >= float(limit) if op == "≥" else self.value <= float(limit)

    def verdict(self) -> str:
        return {None: "not measured", True: "**met**", False: "**not met**"}[self.met]


# A configuration: (engine, workload, threads, transport).
Config = tuple[str, str, int, str]


def tools_by_pair(
    runs: Sequence[Run], config: Config, ok_only: bool = False
) -> list[dict[str, Run]]:
    """The runs of `config`, pair by pair in order: each pair's runs by tool."""
    by_pair: dict[int, dict[str, Run]] = {}
    for r in runs:
        if (r.engine, r.workload, r.threads, r.transport) == config and (r.ok or not ok_only):
            by_pair.setdefault(r.pair, {})[r.tool] = r
    return [d for _, d in sorted(by_pair.items())]


def pairs_of(runs: Sequence[Run], config: Config) -> list[tuple[Run, Run]]:
    # --before adds a third tool, --no-sysbench leaves one out: pairs need both of these two.
    both = [d for d in tools_by_pair(runs, config) if "oltplab" in d and "sysbench" in d]
    return [(d["oltplab"], d["sysbench"]) for d in both]


def configs_of(runs: Sequence[Run]) -> list[Config]:
    return list(dict.fromkeys((r.engine, r.workload, r.threads, r.transport) for r in runs))


def median_ratio(
    pairs: Sequence[tuple[Run, Run]], get: Callable[[Run], float | None]
) -> float | None:
    return median([ratio(get(o), get(s)) for o, s in pairs])


def same_work(o: Run, s: Run) -> tuple[bool | None, float]:
    """Whether the server did the same statements per transaction for both tools, and the
    largest relative difference. Within SAME_WORK_TOLERANCE plus the larger of the two
    tools' retry rates: a retried transaction (deadlock, duplicate key) sends statements
    again, and retries are the server's doing, not the tool's."""
    a, b = o.per_txn(), s.per_txn()
    if not a or not b:
        return None, 0.0
    retries = max(o.errors / max(o.transactions, 1), s.errors / max(s.transactions, 1))
    kinds = set(a) | set(b)
    if o.engine == "postgresql" and "select" in kinds:
        # PostgreSQL's transactions include every connection's set-up (each prepare's Sync
        # is one), many per run transaction at thousands of connections: compare the
        # statements that pg_stat_statements counts.
        kinds -= {"commit", "rollback"}
    worst = 0.0
    for k in kinds:
        x, y = a.get(k, 0.0), b.get(k, 0.0)
        if max(x, y) < 0.01:
            continue  # a kind neither sends
        worst = max(worst, abs(x - y) / max(x, y))
    return worst <= SAME_WORK_TOLERANCE + retries, worst


def goals(runs: Sequence[Run], prepares: Sequence[Run]) -> list[Goal]:
    """Issue 22's goals, on loopback TCP (pinned apart: throughput; the socket rows are
    reported beside them)."""
    out = []
    read = {label: get for label, get, _ in METRICS}  # by name: the order is the table's
    tps_of, cpu_of = read["tps"], read["client CPU/txn µs"]
    rss_of, setup_of = read["peak RSS MB"], read["set-up s"]
    for config in configs_of(runs):
        engine, workload, threads, transport = config
        pairs = pairs_of(runs, config)
        label = f"{workload} at {threads:,} threads"
        if transport == "pinned" and threads == 8 and workload == "oltp_point_select":
            out.append(Goal(f"throughput pinned apart, {label}", engine, "≥ 1.0",
                            median_ratio(pairs, tps_of)))  # fmt: skip
        if transport != "tcp":
            continue
        if threads in (8, 64) and workload in ("oltp_point_select", "oltp_read_write"):
            out.append(Goal(f"client CPU/txn, {label}", engine, "≤ 0.9",
                            median_ratio(pairs, cpu_of), kernel_floor(pairs)))  # fmt: skip
        if threads == 8 and workload == "oltp_point_select":
            out += [
                Goal(f"client user-space CPU/txn, {label}", engine, "≤ 0.5",
                     median_ratio(pairs, lambda r: r.user_per_txn_us if r.ok else None)),
                Goal(f"throughput sharing the cores, {label}", engine, "≥ 1.0",
                     median_ratio(pairs, tps_of)),
            ]  # fmt: skip
        if threads == 4096:
            rss_goal = "≤ 0.07" if engine == "mariadb" else "≤ 0.1"
            out += [
                Goal(f"client CPU/txn, {label}", engine, "≤ 0.3",
                     median_ratio(pairs, cpu_of), kernel_floor(pairs)),
                Goal(f"peak client RSS, {label}", engine, rss_goal, median_ratio(pairs, rss_of)),
                Goal(f"connection set-up, {label}", engine, "≤ 0.2",
                     median_ratio(pairs, setup_of)),
            ]  # fmt: skip
    for engine in dict.fromkeys(p.engine for p in prepares):
        out.append(Goal("prepare time", engine, "≤ 0.5", prepare_ratio(prepares, engine)))
    return out


def kernel_floor(pairs: Sequence[tuple[Run, Run]]) -> str:
    """oltplab's kernel time per transaction over sysbench's whole CPU per transaction: the
    ratio oltplab would reach if its user-space code cost nothing."""
    ok = [(o, s) for o, s in pairs if o.ok and s.ok]
    floor = median([ratio(o.kernel_per_txn_us, s.cpu_per_txn_us) for o, s in ok])
    if floor is None:
        return ""
    return f"oltplab's kernel time alone: {floor:.2f} of sysbench's CPU/txn"


def prepare_ratio(prepares: Sequence[Run], engine: str) -> float | None:
    return median([ratio(o.wall_s, s.wall_s) for o, s in prepare_pairs(prepares, engine)])


def prepare_pairs(prepares: Sequence[Run], engine: str) -> list[tuple[Run, Run]]:
    by_pair: dict[int, dict[str, Run]] = {}
    for p in prepares:
        if p.engine == engine and p.ok:
            by_pair.setdefault(p.pair, {})[p.tool] = p
    # --before adds a third tool, --no-sysbench leaves one out: pairs need both of these two.
    both = [d for _, d in sorted(by_pair.items()) if "oltplab" in d and "sysbench" in d]
    return [(d["oltplab"], d["sysbench"]) for d in both]
