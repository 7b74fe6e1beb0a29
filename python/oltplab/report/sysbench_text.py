"""sysbench 1.0.20's text output, byte for byte: the preamble, the interval line, the
--histogram block and the final report (reference/sysbench.md §2.5-2.7).

The final report is rendered from run.json, so that it can be reprinted from any run
directory. One extension: oltplab allows sub-second report intervals and fractional
percentiles. Interval timestamps then print with as many decimals as the interval needs
(`[ 0.5s ]`), and the percentile as `99.9th`; whole values print exactly as sysbench.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

from oltplab.documents.run import RunManifest
from oltplab.rundir.intervals import IntervalRow

HISTOGRAM_BAR_WIDTH = 40
THREADS_STARTED = "Threads started!\n\n"


def _number(value: float) -> str:
    """A whole number as sysbench's %d/%u, anything else as %g."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def timestamp_decimals(report_interval_s: float) -> int:
    """Decimals that tell the interval ends apart: 0 for whole seconds (sysbench's %.0f)."""
    for decimals in range(4):
        if math.isclose(report_interval_s, round(report_interval_s, decimals), abs_tol=1e-9):
            return decimals
    return 3


def preamble(
    banner: str, *, threads: int, report_interval_s: float, rate_per_s: float, rand_seed: int
) -> str:
    """What sysbench prints before "Threads started!" (print_run_mode and its neighbours)."""
    lines = [
        f"{banner}\n",
        "Running the test with following options:",
        f"Number of threads: {threads}",
    ]
    if rate_per_s > 0:
        lines.append(f"Target transaction rate: {_number(rate_per_s)}/sec")
    if report_interval_s > 0:
        lines.append(f"Report intermediate results every {_number(report_interval_s)} second(s)")
    if rand_seed:
        lines.append(f"Initializing random number generator from seed ({rand_seed}).\n")
    else:
        lines.append("Initializing random number generator from current time\n")
    lines += ["", "Initializing worker threads...\n"]
    return "".join(line + "\n" for line in lines)


def interval_line(
    row: IntervalRow,
    *,
    percentile: float,
    latency_pct_ms: float,
    decimals: int = 0,
    sql: bool = True,
) -> str:
    """db_report_intermediate's line, without the trailing newline; `sql` False:
    sb_report_intermediate's, for a script that never created the SQL driver."""
    at = f"[ {row.t_s:.{decimals}f}s ] thds: {row.threads}"
    latency = f"lat (ms,{_number(percentile)}%): {latency_pct_ms:4.2f}"
    if not sql:
        return f"{at} eps: {row.tps:4.2f} {latency}"
    return (
        f"{at} tps: {row.tps:4.2f} "
        f"qps: {row.qps:4.2f} (r/w/o: {row.reads_per_s:4.2f}/{row.writes_per_s:4.2f}/"
        f"{row.other_per_s:4.2f}) {latency} "
        f"err/s: {row.errors_per_s:4.2f} reconn/s: {row.reconnects_per_s:4.2f}"
    )


def queue_line(row: IntervalRow, *, in_flight: int, decimals: int = 0) -> str:
    """The second interval line sysbench prints in rate mode, without the trailing newline."""
    return f"[ {row.t_s:.{decimals}f}s ] queue length: {row.backlog}, concurrency: {in_flight}"


def histogram_block(rows: Sequence[Sequence[float]]) -> str:
    """--histogram's block from (value_ms, count) rows (sb_histogram_print)."""
    out = "Latency histogram (values are in milliseconds)\n"
    counts = [(float(v), int(c)) for v, c in rows if c > 0]
    if counts:
        out += "       value  ------------- distribution ------------- count\n"
        max_count = max(c for _, c in counts)
        for value_ms, count in counts:
            width = math.floor(count * HISTOGRAM_BAR_WIDTH / max_count + 0.5)
            out += f"{value_ms:12.3f} |{'*' * width:<{HISTOGRAM_BAR_WIDTH}} {count}\n"
    return out + " \n"


@dataclass(frozen=True)
class CumulativeStats:
    """sysbench's sb_stat_t at the end of a run, in the units the report prints."""

    time_total_s: float
    time_interval_s: float  # the "per sec." denominator (time since the last checkpoint)
    events: int
    reads: int
    writes: int
    other: int
    errors: int
    reconnects: int
    latency_min_ms: float
    latency_avg_ms: float
    latency_max_ms: float
    latency_sum_ms: float
    percentile: float  # 0: disabled
    latency_pct_ms: float
    events_avg: float
    events_stddev: float
    time_avg_s: float
    time_stddev_s: float
    # Further --percentile ranks (rank, ms), printed after the first as extra lines.
    more_percentiles: tuple[tuple[float, float], ...] = ()

    @classmethod
    def from_manifest(cls, manifest: RunManifest) -> "CumulativeStats":
        """From a run.json with a summary."""
        summary = manifest.summary
        assert summary is not None, "a run without a summary has no final report"
        latency, pct = summary.latency_ms, summary.percentile
        fair = manifest.threads_fairness
        return cls(
            time_total_s=summary.duration_s,
            time_interval_s=summary.duration_s,
            events=summary.transactions,
            reads=summary.queries.read,
            writes=summary.queries.write,
            other=summary.queries.other,
            errors=summary.errors.total,
            reconnects=summary.reconnects,
            latency_min_ms=latency.min or 0.0,
            latency_avg_ms=latency.mean or 0.0,
            latency_max_ms=latency.max or 0.0,
            latency_sum_ms=latency.sum or 0.0,
            percentile=pct.rank if pct else 0.0,
            latency_pct_ms=(pct.latency_ms or 0.0) if pct else 0.0,
            events_avg=fair.events_avg if fair else 0.0,
            events_stddev=fair.events_stddev if fair else 0.0,
            time_avg_s=fair.execution_time_avg_s if fair else 0.0,
            time_stddev_s=fair.execution_time_stddev_s if fair else 0.0,
            more_percentiles=tuple((p.rank, p.latency_ms or 0.0) for p in summary.percentiles[1:]),
        )


def _counter(label: str, count: int, seconds: float) -> str:
    rate = count / seconds if seconds > 0 else 0.0
    return f"    {label + ':':<37}{count:<6d} ({rate:.2f} per sec.)"


def final_report(s: CumulativeStats, *, sql: bool = True) -> str:
    """db_report_cumulative + sb_report_cumulative; `sql` False: the latter only, for a script
    that never created the SQL driver."""
    queries = s.reads + s.writes + s.other
    if s.percentile > 0:
        ranked = [(s.percentile, s.latency_pct_ms), *s.more_percentiles]
        pct_line = "\n".join(f"{_number(r) + 'th percentile:':>25} {ms:27.2f}" for r, ms in ranked)
    else:
        pct_line = "         percentile stats:               disabled"
    sql_lines = [
        "SQL statistics:",
        "    queries performed:",
        f"        read:                            {s.reads}",
        f"        write:                           {s.writes}",
        f"        other:                           {s.other}",
        f"        total:                           {queries}",
        _counter("transactions", s.events, s.time_interval_s),
        _counter("queries", queries, s.time_interval_s),
        _counter("ignored errors", s.errors, s.time_interval_s),
        _counter("reconnects", s.reconnects, s.time_interval_s),
    ]
    lines = [
        *(sql_lines if sql else []),
        "",
        "General statistics:",
        f"    total time:                          {s.time_total_s:.4f}s",
        f"    total number of events:              {s.events}",
        "",
        "Latency (ms):",
        f"         min: {s.latency_min_ms:39.2f}",
        f"         avg: {s.latency_avg_ms:39.2f}",
        f"         max: {s.latency_max_ms:39.2f}",
        pct_line,
        f"         sum: {s.latency_sum_ms:39.2f}",
        "",
        "Threads fairness:",
        f"    events (avg/stddev):           {s.events_avg:.4f}/{s.events_stddev:3.2f}",
        f"    execution time (avg/stddev):   {s.time_avg_s:.4f}/{s.time_stddev_s:3.2f}",
        "",
    ]
    return "".join(line + "\n" for line in lines)
