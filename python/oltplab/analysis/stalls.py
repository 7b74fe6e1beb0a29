"""Stall episodes in a throughput timeline and what moved with them (methodology.md §2).

A stall is a run of consecutive intervals below a threshold (by default 10% of the steady
median, §2). Zero-TPS intervals are the strongest evidence and are never dropped. For each
episode, `coincident_metrics` points at host/server counters that moved with it (checkpoint
writes, iowait, fsyncs), which is how a stall gets explained rather than averaged away.
"""

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from oltplab.analysis._json import JsonDataclass
from oltplab.documents.analysis import MovedMetric
from oltplab.rundir.intervals import Column

FloatArray = npt.NDArray[np.float64]
# A metric "changed notably" when its stall value is this many times the outside median,
# or less than its inverse (§2: stalls are reported with what explains them).
NOTABLE_FACTOR = 2.0


@dataclass(frozen=True)
class Stall(JsonDataclass):
    """One episode, in seconds since the load started. From whole intervals (`method`
    "intervals"), `start_s` is the start of its first interval below the threshold; measured
    by stall_length.py ("latency"), the start and length are estimated within an interval,
    `low_intervals_s` keeps the length of the intervals below the threshold (0 when the
    pause left none) and `start_range_s` the bounds of the start."""

    start_s: float
    duration_s: float
    min_tps: float
    mean_tps: float  # weighted by interval length
    intervals: int  # the intervals it touched
    method: str = "intervals"
    low_intervals_s: float | None = None
    # Measured: where the evidence places the start for certain (its estimate lies inside).
    start_range_s: tuple[float, float] | None = None

    @property
    def end_s(self) -> float:
        return self.start_s + self.duration_s


def interval_lengths(t_end_s: FloatArray, interval_s: npt.ArrayLike) -> FloatArray:
    """Per-row interval lengths: a scalar is broadcast, a sequence must match t_end_s."""
    lengths = np.broadcast_to(np.asarray(interval_s, dtype=np.float64), t_end_s.shape)
    return np.array(lengths)


def find_stalls(
    t_end_s: npt.ArrayLike,
    interval_s: npt.ArrayLike,
    tps: npt.ArrayLike,
    threshold_tps: float,
) -> list[Stall]:
    """Episodes of consecutive intervals with tps < threshold_tps, in time order.

    Rows are consecutive when the next interval starts where the previous ended (within half
    an interval), so a gap in the timeline (missing rows) splits an episode.
    """
    t_end = np.asarray(t_end_s, dtype=np.float64)
    y = np.asarray(tps, dtype=np.float64)
    if t_end.shape != y.shape:
        raise ValueError(f"t_end_s has {t_end.size} rows but tps has {y.size}")
    lengths = interval_lengths(t_end, interval_s)
    start = t_end - lengths
    low = y < threshold_tps
    # An episode begins at a low row whose predecessor is high, or that does not adjoin it.
    adjoins = np.zeros(y.size, dtype=bool)
    adjoins[1:] = np.abs(start[1:] - t_end[:-1]) <= 0.5 * lengths[1:]
    begins = low & ~np.concatenate(([False], low[:-1] & adjoins[1:]))
    stalls = []
    for first in np.flatnonzero(begins):
        last = first
        while last + 1 < y.size and low[last + 1] and adjoins[last + 1]:
            last += 1
        rows = slice(first, last + 1)
        duration = float(lengths[rows].sum())
        stalls.append(
            Stall(
                start_s=float(start[first]),
                duration_s=duration,
                min_tps=float(y[rows].min()),
                mean_tps=float(np.dot(y[rows], lengths[rows]) / duration) if duration else 0.0,
                intervals=int(last - first + 1),
            )
        )
    return stalls


def coincident_metrics(
    stall: Stall, metrics: pd.DataFrame, window_s: float = 60.0
) -> dict[str, MovedMetric]:
    """Numeric metric columns that changed notably during `stall`.

    `metrics` is a system.csv/server.csv-like frame with `t_s` = interval end. Rows whose
    interval overlaps the stall are "during" (their mean is reported); rows within `window_s`
    before or after it are the local baseline (their median), so slow trends over a long run
    do not count. A column is listed when during > 2x or < 0.5x the baseline, or when the
    baseline is 0 and the stall value is not. Returns {column: MovedMetric}, ratio None when
    the baseline is 0.
    """
    t_end = metrics[Column.t_s].to_numpy(dtype=np.float64)
    # A metric row covers (t - step, t]; its step is the sampling period of the frame.
    step = float(np.median(np.diff(t_end))) if t_end.size > 1 else 0.0
    during = (t_end > stall.start_s) & (t_end - step < stall.end_s)
    near = (t_end > stall.start_s - window_s) & (t_end - step < stall.end_s + window_s)
    outside = near & ~during
    found: dict[str, MovedMetric] = {}
    if not during.any() or not outside.any():
        return found
    numeric = metrics.select_dtypes(include="number").drop(columns=Column.t_s)
    for column in numeric.columns:
        values = numeric[column].to_numpy(dtype=np.float64)
        inside, base = values[during], values[outside]
        if np.isnan(inside).all() or np.isnan(base).all():
            continue
        value, baseline = float(np.nanmean(inside)), float(np.nanmedian(base))
        if baseline == 0.0:
            if value != 0.0:
                found[str(column)] = MovedMetric(during=value, outside_median=0.0, ratio=None)
            continue
        ratio = value / baseline
        if ratio > NOTABLE_FACTOR or ratio < 1.0 / NOTABLE_FACTOR:
            found[str(column)] = MovedMetric(during=value, outside_median=baseline, ratio=ratio)
    return found
