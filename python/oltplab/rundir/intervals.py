"""intervals.csv: one row per interval, computed from the engine's interval events.

Rates divide the interval's counts by its measured length, as sysbench does. An interval
with no transactions is kept (a stall is data); its latency cells are left empty.

The one definition of the file: `IntervalRow` gives the columns, their order and their
types (DTYPES, for pandas); `Column` names them for readers (`frame[Column.tps]`), and is
checked against IntervalRow when this module loads.
"""

from dataclasses import astuple, dataclass, fields
from enum import StrEnum

from oltplab._types import Json

NS_PER_MS = 1e6


@dataclass(frozen=True)
class IntervalRow:
    t_s: float  # end of the interval, seconds since the load started
    tps: float
    qps: float
    reads_per_s: float
    writes_per_s: float
    other_per_s: float
    lat_p50_ms: float | None
    lat_p95_ms: float | None
    lat_p99_ms: float | None
    lat_max_ms: float | None
    errors_per_s: float
    reconnects_per_s: float
    interval_s: float
    transactions: int
    queries: int
    errors: int
    reconnects: int
    threads: int
    # Which part of the run: "warmup" rows are stored but left out of the summary.
    phase: str = "run"
    # Open loop (--rate): service time from the actual start; empty in closed loop.
    svc_p50_ms: float | None = None
    svc_p95_ms: float | None = None
    svc_p99_ms: float | None = None
    svc_max_ms: float | None = None
    # Open loop: how late transactions started, arrivals waiting at the interval's end,
    # transactions more than 2 ms late, arrivals dropped from a full backlog.
    lag_mean_ms: float = 0.0
    lag_max_ms: float = 0.0
    backlog: int = 0
    late: int = 0
    dropped: int = 0
    # The client process's CPU in the interval, in percent of one core (200 = two cores).
    client_cpu_pct: float = 0.0
    # A step plan's step (0-based) of a measured row: run.json's segments[step]. Empty in
    # warm-up and without a plan.
    step: int | None = None

    @classmethod
    def from_event(cls, event: Json) -> "IntervalRow":
        interval_s = float(event["interval_s"])
        transactions = int(event["transactions"])
        reads, writes, others = int(event["reads"]), int(event["writes"]), int(event["others"])
        queries = reads + writes + others

        def per_s(n: int) -> float:
            return n / interval_s if interval_s > 0 else 0.0

        latency = event.get("latency_ns") or {}
        service = event.get("service_latency_ns") or {}

        def ms(key: str, summary: Json = latency) -> float | None:
            value = summary.get(key)
            return None if transactions == 0 or value is None else value / NS_PER_MS

        return cls(
            t_s=float(event["t_s"]),
            tps=per_s(transactions),
            qps=per_s(queries),
            reads_per_s=per_s(reads),
            writes_per_s=per_s(writes),
            other_per_s=per_s(others),
            lat_p50_ms=ms("p50"),
            lat_p95_ms=ms("p95"),
            lat_p99_ms=ms("p99"),
            lat_max_ms=ms("max"),
            errors_per_s=per_s(int(event["errors"])),
            reconnects_per_s=per_s(int(event["reconnects"])),
            interval_s=interval_s,
            transactions=transactions,
            queries=queries,
            errors=int(event["errors"]),
            reconnects=int(event["reconnects"]),
            threads=int(event["threads_running"]),
            phase=str(event.get("phase", "run")),
            svc_p50_ms=ms("p50", service),
            svc_p95_ms=ms("p95", service),
            svc_p99_ms=ms("p99", service),
            svc_max_ms=ms("max", service),
            lag_mean_ms=int(event.get("lag_mean_ns", 0)) / NS_PER_MS,
            lag_max_ms=int(event.get("lag_max_ns", 0)) / NS_PER_MS,
            backlog=int(event.get("backlog", 0)),
            late=int(event.get("late", 0)),
            dropped=int(event.get("dropped", 0)),
            client_cpu_pct=float(event.get("client_cpu_pct", 0.0)),
            step=None if event.get("step") is None else int(event["step"]),
        )


COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(IntervalRow))


class Column(StrEnum):
    """intervals.csv's column names, as IntervalRow's fields (in the same order)."""

    t_s = "t_s"
    tps = "tps"
    qps = "qps"
    reads_per_s = "reads_per_s"
    writes_per_s = "writes_per_s"
    other_per_s = "other_per_s"
    lat_p50_ms = "lat_p50_ms"
    lat_p95_ms = "lat_p95_ms"
    lat_p99_ms = "lat_p99_ms"
    lat_max_ms = "lat_max_ms"
    errors_per_s = "errors_per_s"
    reconnects_per_s = "reconnects_per_s"
    interval_s = "interval_s"
    transactions = "transactions"
    queries = "queries"
    errors = "errors"
    reconnects = "reconnects"
    threads = "threads"
    phase = "phase"
    svc_p50_ms = "svc_p50_ms"
    svc_p95_ms = "svc_p95_ms"
    svc_p99_ms = "svc_p99_ms"
    svc_max_ms = "svc_max_ms"
    lag_mean_ms = "lag_mean_ms"
    lag_max_ms = "lag_max_ms"
    backlog = "backlog"
    late = "late"
    dropped = "dropped"
    client_cpu_pct = "client_cpu_pct"
    step = "step"


if tuple(Column) != COLUMNS:  # a column added to one and not the other
    raise ImportError(f"rundir.intervals: Column {tuple(Column)} differs from {COLUMNS}")
# pandas dtypes, so that a column's type does not depend on the values of one run
# ("Int64": integers that may be empty).
_DTYPE_OF: dict[object, str] = {int: "int64", int | None: "Int64", str: "string"}
DTYPES: dict[str, str] = {f.name: _DTYPE_OF.get(f.type, "float64") for f in fields(IntervalRow)}

# Decimals kept per column: µs for times, ns for latencies, 1/1000 for rates.
_DECIMALS = {"t_s": 6, "interval_s": 6} | {c: 6 for c in COLUMNS if c.endswith("_ms")}


def _fixed(value: float, decimals: int) -> str:
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def t_s_cell(t_s: float) -> str:
    """How intervals.csv writes `t_s`: other files on the same grid (system.csv) write the same."""
    return _fixed(t_s, _DECIMALS["t_s"])


def csv_cells(row: IntervalRow) -> list[str]:
    cells = []
    for name, value in zip(COLUMNS, astuple(row), strict=True):
        if value is None:
            cells.append("")
        elif isinstance(value, int | str):
            cells.append(str(value))
        else:
            cells.append(_fixed(value, _DECIMALS.get(name, 3)))
    return cells
