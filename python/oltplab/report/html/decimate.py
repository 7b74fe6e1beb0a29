"""Decimation for long timelines that never hides a stall (reports.md §2): each bucket of
consecutive intervals keeps the rows holding its minimum and its maximum of every watched
column, so a one-interval dip or spike survives at any zoom level."""

from collections.abc import Sequence

import numpy as np
import pandas as pd

from oltplab.rundir.intervals import Column

# Beyond this many rows per series a timeline is decimated (about the pixel columns of a chart).
MAX_ROWS = 1200


def min_max_rows(
    frame: pd.DataFrame, columns: Sequence[str], max_rows: int = MAX_ROWS
) -> pd.DataFrame:
    """`frame` (in time order) itself when short enough, else per bucket the rows of each
    column's minimum and maximum (and the first row), in time order. Buckets are sized so
    that the result has at most about `max_rows` rows when one column is watched."""
    n = len(frame)
    if n <= max_rows:
        return frame
    bucket = -(-n // (max_rows // 2))  # ceil: two rows kept per bucket and column
    keep: set[int] = {0}  # the first row: the timeline starts where the run did
    starts = range(0, n, bucket)
    for column in columns:
        values = frame[column].to_numpy(dtype=float, na_value=np.nan)
        for start in starts:
            part = values[start : start + bucket]
            if np.isnan(part).all():
                keep.add(start)
                continue
            keep.add(start + int(np.nanargmin(part)))
            keep.add(start + int(np.nanargmax(part)))
    return frame.iloc[sorted(keep)]


def bucket_s(frame: pd.DataFrame, max_rows: int = MAX_ROWS) -> float | None:
    """The length in seconds of one decimation bucket (None: not decimated), for captions."""
    n = len(frame)
    if n <= max_rows:
        return None
    bucket = -(-n // (max_rows // 2))
    return float(frame[Column.interval_s].median()) * bucket
