"""intervals.csv rows from sysbench's interval lines.

One row per printed line, nothing else: the time after the last printed line (up to
sysbench's "total time") has no row. Counts are the printed rates times the interval's
length (successive printed times), rounded. sysbench prints the times rounded (`[ 3s ]`),
and a report that comes late under load can print the same time as the next one: such a
row did not advance the printed clock, so its length is 0 and its counts are 0 (its rates
stay as printed), and run.json's `flags` get "interval_times_ambiguous".
The printed percentile goes to its own column (`lat_p95_ms`; a rank without a standard
column gets one, `lat_p90_ms`, appended after the standard ones). Columns the log does
not carry are left empty; `unknown_columns` names them, and also the integer columns that
must hold a number (`late`: sysbench does not report late starts).
"""

from itertools import pairwise

from oltplab import percentiles
from oltplab.rundir.intervals import COLUMNS, IntervalRow, csv_cells
from oltplab.sysbench_import.parse import IntervalLine

_STANDARD_PERCENTILE_COLUMNS = ("lat_p50_ms", "lat_p95_ms", "lat_p99_ms")
# Measured by oltplab, absent from sysbench's text: written empty.
_BLANK = ("lat_max_ms", "lag_mean_ms", "lag_max_ms", "client_cpu_pct")
# Not in sysbench's text but typed as integers (pandas int64): written as 0.
_ZERO = ("late",)
_SERVICE = ("svc_p50_ms", "svc_p95_ms", "svc_p99_ms", "svc_max_ms")
INTERVAL_TIMES_AMBIGUOUS = "interval_times_ambiguous"


def times_ambiguous(lines: tuple[IntervalLine, ...]) -> bool:
    """True when a printed time does not advance past the one before it."""
    return any(b.t_s <= a.t_s for a, b in pairwise(lines))


def percentile_column(rank: float | None) -> str | None:
    """The column of the printed percentile (None when there is none)."""
    if not rank or rank <= 0:
        return None
    return f"lat_{percentiles.key_of(rank)}_ms"


def header(rank: float | None) -> list[str]:
    column = percentile_column(rank)
    extra = [] if column is None or column in COLUMNS else [column]
    return [*COLUMNS, *extra]


def unknown_columns(rank: float | None, rate_mode: bool) -> list[str]:
    """The columns that the log does not carry (empty, or 0 for the integer ones)."""
    column = percentile_column(rank)
    missing = [c for c in _STANDARD_PERCENTILE_COLUMNS if c != column]
    missing += [*_BLANK, *_ZERO]
    return missing + list(_SERVICE) if rate_mode else missing


def rows(lines: tuple[IntervalLine, ...], rank: float | None) -> list[list[str]]:
    column = percentile_column(rank)
    names = header(rank)
    out = []
    start_s = 0.0
    for line in lines:
        interval_s = max(line.t_s - start_s, 0.0)
        start_s = max(start_s, line.t_s)
        transactions = round(line.tps * interval_s)
        pct_ms = line.latency_pct_ms if transactions > 0 and column is not None else None
        row = IntervalRow(
            t_s=line.t_s,
            tps=line.tps,
            qps=line.qps,
            reads_per_s=line.reads_per_s,
            writes_per_s=line.writes_per_s,
            other_per_s=line.other_per_s,
            lat_p50_ms=pct_ms if column == "lat_p50_ms" else None,
            lat_p95_ms=pct_ms if column == "lat_p95_ms" else None,
            lat_p99_ms=pct_ms if column == "lat_p99_ms" else None,
            lat_max_ms=None,
            errors_per_s=line.errors_per_s,
            reconnects_per_s=line.reconnects_per_s,
            interval_s=interval_s,
            transactions=transactions,
            queries=round(line.qps * interval_s),
            errors=round(line.errors_per_s * interval_s),
            reconnects=round(line.reconnects_per_s * interval_s),
            threads=line.threads,
            backlog=line.queue_length or 0,
        )
        cells = dict(zip(COLUMNS, csv_cells(row), strict=True))
        cells |= dict.fromkeys(_BLANK, "")
        if column is not None and column not in COLUMNS:
            cells[column] = "" if pct_ms is None else f"{pct_ms:g}"
        out.append([cells[name] for name in names])
    return out
