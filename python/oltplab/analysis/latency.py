"""Latency of a stretch of a run, from its interval histograms (latency.hlog): the
histograms of the intervals inside the stretch are added, never their percentiles averaged
(DESIGN's measurement rules; methodology.md §4.1)."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from hdrh.histogram import HdrHistogram

from oltplab import engine
from oltplab.documents.analysis import WindowLatency
from oltplab.rundir.hlog import HIGHEST_NS, LOWEST_NS, SIGNIFICANT_DIGITS, HlogEntry

NS_PER_MS = 1e6
DEFAULT_RANKS = (50.0, 95.0, 99.0, 99.9)  # WindowLatency's
# An interval belongs to a window when it lies inside it give or take this much: interval
# edges are printed to the millisecond in the log.
_EDGE_S = 0.002


@dataclass(frozen=True)
class Window:
    """A stretch of the run in seconds since the load started (the log's BaseTime)."""

    start_s: float
    end_s: float

    def holds(self, entry: HlogEntry) -> bool:
        return (
            entry.start_s >= self.start_s - _EDGE_S
            and entry.start_s + entry.interval_s <= self.end_s + _EDGE_S
        )


def merged(entries: Sequence[HlogEntry], window: Window | None = None) -> HdrHistogram | None:
    """The sum of the entries' histograms inside `window` (all when None); None when no
    entry falls inside. The engine adds them (the one histogram addition, exact; a log of
    another histogram shape is refused), and hdrh decodes the sum once."""
    inside = [e for e in entries if window is None or window.holds(e)]
    if not inside:
        return None
    total = engine.merge_histograms([e.encoded for e in inside], [])
    return HdrHistogram.decode(total["encoded"])


def added(histograms: Sequence[HdrHistogram | None]) -> HdrHistogram | None:
    """A new histogram holding the sum of `histograms` (None entries skipped; None when all
    are), leaving them untouched."""
    total: HdrHistogram | None = None
    for histogram in histograms:
        if histogram is None:
            continue
        if total is None:
            total = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
        total.add(histogram)
    return total


def percentiles_ms(histogram: HdrHistogram, ranks: Sequence[float]) -> list[float]:
    """The histogram's values at `ranks` in milliseconds, clamped into [min, max] as the
    engine's summary is (3 significant digits may round the top bucket above max). The
    histogram must not be empty."""
    low, high = histogram.get_min_value(), histogram.get_max_value()
    cumulative = np.cumsum(_counts(histogram))
    return [
        min(max(value_at_percentile(histogram, rank, cumulative), low), high) / NS_PER_MS
        for rank in ranks
    ]


def window_latency(histogram: HdrHistogram | None) -> WindowLatency:
    """count, min, mean, p50, p95, p99, p99.9 and max in milliseconds; all but the count
    None when the histogram is empty (or None)."""
    count = 0 if histogram is None else int(histogram.get_total_count())
    if histogram is None or count == 0:
        return WindowLatency(
            count=count, min=None, mean=None, p50=None, p95=None, p99=None, p99_9=None, max=None
        )
    p50, p95, p99, p99_9 = percentiles_ms(histogram, DEFAULT_RANKS)
    return WindowLatency(
        count=count,
        min=histogram.get_min_value() / NS_PER_MS,
        mean=mean_value(histogram) / NS_PER_MS,
        p50=p50,
        p95=p95,
        p99=p99,
        p99_9=p99_9,
        max=histogram.get_max_value() / NS_PER_MS,
    )


# hdrh walks every one of a histogram's ~34,000 counts in Python for each percentile and for
# the mean (20-600 ms a call); these read the same counts with numpy and return exactly what
# HdrHistogram.get_value_at_percentile and get_mean_value return (tests/analysis/test_latency.py).


def _counts(histogram: HdrHistogram) -> "np.ndarray":
    # A decoded histogram may carry a shorter counts payload than its array: the rest is 0.
    n = min(histogram.counts_len, histogram.encoder.payload.counts_len)
    return np.ctypeslib.as_array(histogram.counts)[:n]


def value_at_percentile(
    histogram: HdrHistogram, rank: float, cumulative: "np.ndarray | None" = None
) -> int:
    """HdrHistogram.get_value_at_percentile; `cumulative` (np.cumsum of the counts) may be
    passed when reading several ranks of one histogram."""
    if cumulative is None:
        cumulative = np.cumsum(_counts(histogram))
    target = histogram.get_target_count_at_percentile(rank)
    index = int(np.searchsorted(cumulative, target, side="left"))
    if index >= len(cumulative):
        return 0
    value = histogram.get_value_from_index(index)
    if rank:
        return int(histogram.get_highest_equivalent_value(value))
    return int(histogram.get_lowest_equivalent_value(value))


def mean_value(histogram: HdrHistogram) -> float:
    """HdrHistogram.get_mean_value: counts times their buckets' median equivalent values."""
    if not histogram.total_count:
        return 0.0
    counts = _counts(histogram)
    index = np.flatnonzero(counts)
    # get_value_from_index and _hdr_median_equiv_value, for every non-zero count at once.
    half_magnitude = histogram.sub_bucket_half_count_magnitude
    bucket = (index >> half_magnitude) - 1
    sub_bucket = (index & (histogram.sub_bucket_half_count - 1)) + histogram.sub_bucket_half_count
    sub_bucket = np.where(bucket < 0, sub_bucket - histogram.sub_bucket_half_count, sub_bucket)
    shift = np.maximum(bucket, 0) + histogram.unit_magnitude
    medians = (sub_bucket << shift) + ((1 << shift) >> 1)
    # Python integers for the sum: counts times nanoseconds can pass 2^63.
    total = sum(int(c) * int(m) for c, m in zip(counts[index], medians, strict=True))
    return float(total) / int(histogram.total_count)
