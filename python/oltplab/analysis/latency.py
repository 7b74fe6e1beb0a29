"""Latency of a stretch of a run, from its interval histograms (latency.hlog): the
histograms of the intervals inside the stretch are added, never their percentiles averaged
(DESIGN's measurement rules; methodology.md §4.1)."""

from collections.abc import Sequence
from dataclasses import dataclass

from hdrh.histogram import HdrHistogram

from oltplab.percentiles import key_of
from oltplab.rundir.hlog import HIGHEST_NS, LOWEST_NS, SIGNIFICANT_DIGITS, HlogEntry

NS_PER_MS = 1e6
DEFAULT_RANKS = (50.0, 95.0, 99.0, 99.9)
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
    entry falls inside."""
    total: HdrHistogram | None = None
    for entry in entries:
        if window is not None and not window.holds(entry):
            continue
        if total is None:
            total = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
        total.add(entry.decode())
    return total


def latency_ms(
    histogram: HdrHistogram | None, ranks: Sequence[float] = DEFAULT_RANKS
) -> dict[str, float | int | None]:
    """count, min, mean, the ranks (keys p50, p95, p99.9 …) and max, in milliseconds;
    None values when the histogram is empty. Percentiles are clamped into [min, max], as
    the engine's summary is (3 significant digits may round the top bucket above max)."""
    count = 0 if histogram is None else int(histogram.get_total_count())
    out: dict[str, float | int | None] = {"count": count}
    if histogram is None or count == 0:
        return out | {"min": None, "mean": None} | dict.fromkeys(map(key_of, ranks)) | {"max": None}
    low, high = histogram.get_min_value(), histogram.get_max_value()
    out |= {"min": low / NS_PER_MS, "mean": histogram.get_mean_value() / NS_PER_MS}
    for rank in ranks:
        value = min(max(histogram.get_value_at_percentile(rank), low), high)
        out[key_of(rank)] = value / NS_PER_MS
    out["max"] = high / NS_PER_MS
    return out
