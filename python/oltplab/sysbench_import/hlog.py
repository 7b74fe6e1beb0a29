"""latency.hlog from sysbench's --histogram block: one untagged whole-run entry that
records each printed bucket value (ms, 3 decimals) as many times as its count.

Encoding needs the `hdrhistogram` package; without it there is no latency.hlog (run.json
keeps the buckets either way). The log has no StartTime: sysbench does not print when the
run started, and the entry's timestamps are relative to the load's start.
"""

from collections.abc import Sequence

from oltplab.rundir.hlog import (
    FORMAT_VERSION,
    HIGHEST_NS,
    LEGEND,
    LOWEST_NS,
    SIGNIFICANT_DIGITS,
    interval_line,
)

NS_PER_MS = 1e6


def hlog_lines(
    histogram_ms: Sequence[tuple[float, int]], duration_s: float, logged_with: str
) -> list[str] | None:
    """The log's lines, or None when the hdrhistogram package is not installed."""
    try:
        from hdrh.histogram import HdrHistogram
    except ImportError:
        return None
    histogram = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
    for value_ms, count in histogram_ms:
        histogram.record_value(round(value_ms * NS_PER_MS), count)
    encoded: bytes = histogram.encode()
    entry = {
        "tag": None,
        "start_s": 0.0,
        "interval_s": duration_s,
        "max_ns": histogram.get_max_value() if histogram.get_total_count() else 0,
        "encoded": encoded.decode("ascii"),
    }
    return [
        f"#[Logged with {logged_with}; imported from sysbench's --histogram: one whole-run "
        "entry of its bucket values; values in nanoseconds; untagged: transactions]",
        f"#[Histogram log format version {FORMAT_VERSION}]",
        LEGEND,
        interval_line(entry),
    ]
