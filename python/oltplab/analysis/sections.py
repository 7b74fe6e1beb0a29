"""The uncertainty of a latency percentile within one run, by sectioning: the window is cut
into consecutive sections, each section's histograms are merged and its percentile read;
the spread of the sections' log-percentiles over √k is the standard error of the log of the
whole window's percentile (batch means applied to quantiles; methodology.md §3.3 recipe 2).
The point estimate stays the whole window's merged histogram's."""

import math
from collections.abc import Sequence

import numpy as np

from oltplab.analysis.latency import NS_PER_MS, Window, merged, value_at_percentile
from oltplab.rundir import HlogEntry

SECTIONS = 10
MIN_SECTIONS = 3


def percentile_log_se(
    entries: Sequence[HlogEntry], window: Window, rank: float, sections: int = SECTIONS
) -> float | None:
    """SE of ln(percentile at `rank`) over `window`; None when fewer than MIN_SECTIONS
    sections hold transactions (too short a window, or a log without histograms)."""
    inside = sorted((e for e in entries if window.holds(e)), key=lambda e: e.start_s)
    k = min(sections, len(inside))
    if k < MIN_SECTIONS:
        return None
    logs = []
    for chunk in np.array_split(np.arange(len(inside)), k):
        histogram = merged([inside[i] for i in chunk])
        if histogram is None or histogram.get_total_count() == 0:
            continue
        value = value_at_percentile(histogram, rank) / NS_PER_MS
        if value > 0:
            logs.append(math.log(value))
    if len(logs) < MIN_SECTIONS:
        return None
    return float(np.std(logs, ddof=1) / math.sqrt(len(logs)))
