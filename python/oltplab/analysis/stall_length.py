"""A stall's true start and length from all the evidence a run directory holds
(docs/analysis.md, "How long a stall lasted").

Whole intervals below the threshold (stalls.find_stalls) measure a pause only to the interval
grid: a 3-s pause from 12.3 s to 15.3 s leaves two empty 1-s intervals, and the rows around
it only half-full. Two more facts pin the pause down:

- Before it, transactions complete at the rate R of the intervals just before: the N that
  completed in the interval where the pause began all did so before it, so it began N / R
  seconds into that interval (the last with completions before the pause ended).
- After it, the first interval with completions holds the transaction that waited longest:
  one that was in flight when the pause began (closed loop) or arrived just then (open
  loop). That is the interval after the stall, or the stall's last when a host slow to
  resume left it below the threshold too. A transaction completing at t after waiting d was
  blocked since t - d, so the pause lasted about d (less the longest wait of an ordinary
  interval, which any in-flight transaction had already spent).

A pause shorter than two intervals may leave no interval below the threshold at all (1.4 s
from 2.3 s leaves 0.3 of the rate in each 1-s interval it touches). Its trace is an interval
whose longest wait is far beyond the ordinary one, and in whose histogram not one transaction
but the load itself waited: every connection (closed loop), or the arrivals of the pause's
first half (open loop).
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from oltplab.analysis.stalls import FloatArray, Stall
from oltplab.rundir.hlog import HlogEntry

# An interval's longest wait hints at a stall when it is this many times the ordinary one ...
LATENCY_JUMP = 10.0
# ... and at least this share of an interval: shorter waits leave no mark on throughput.
MIN_WAIT_SHARE = 0.5
# The share of the waiters a pause predicts that the histogram must show.
WAITERS_SHARE = 0.5
# The steady rate before a stall is read from this many ordinary intervals before it: local,
# so that a warm-up or a drift elsewhere in the run does not move the estimate.
RATE_ROWS = 5
# Entries of latency.hlog belong to an interval when they start within this (ms rounding);
# interval edges computed from rounded times match within it too.
_EDGE_S = 0.002
NS_PER_S = 1e9


@dataclass(frozen=True)
class Timeline:
    """The measured intervals, in time order; `lat_max_s` is NaN where nothing completed."""

    start_s: FloatArray
    end_s: FloatArray
    transactions: FloatArray
    lat_max_s: FloatArray

    @classmethod
    def of(
        cls,
        t_end_s: npt.ArrayLike,
        interval_s: npt.ArrayLike,
        transactions: npt.ArrayLike,
        lat_max_ms: npt.ArrayLike,
    ) -> "Timeline":
        end = np.asarray(t_end_s, dtype=np.float64)
        length = np.broadcast_to(np.asarray(interval_s, dtype=np.float64), end.shape)
        return cls(
            end - length,
            end,
            np.asarray(transactions, dtype=np.float64),
            np.asarray(lat_max_ms, dtype=np.float64) / 1e3,
        )

    @property
    def tps(self) -> FloatArray:
        lengths = self.end_s - self.start_s
        return np.divide(self.transactions, lengths, out=np.zeros_like(lengths), where=lengths > 0)

    def adjoins(self, i: int) -> bool:
        """Whether row i starts where row i-1 ended (no missing rows between them)."""
        length = self.end_s[i] - self.start_s[i]
        return i > 0 and abs(self.start_s[i] - self.end_s[i - 1]) <= 0.5 * length


@dataclass(frozen=True)
class Load:
    """What the run offered: the steady completion rate, its connections, open or closed loop."""

    rate_tps: float
    threads: int
    open_loop: bool


def measure_stalls(
    stalls: Sequence[Stall],
    timeline: Timeline,
    load: Load,
    histograms: Sequence[HlogEntry] = (),
) -> tuple[Stall, ...]:
    """`stalls` (from whole intervals) with their start and length estimated from the rate
    before and the waits after, plus the stalls only the waits show; in time order."""
    if load.rate_tps <= 0 or timeline.start_s.size == 0:
        return tuple(stalls)
    ordinary = _outside(timeline, stalls)
    ordinary_s = _ordinary_wait_s(timeline, ordinary)
    measured = [_measured(stall, timeline, load, ordinary, ordinary_s) for stall in stalls]
    taken = {row for stall in measured for row in _rows_of(stall, timeline)}
    for row in _hinted_rows(timeline, ordinary_s, taken):
        if _queue_goes_on(row, timeline, ordinary_s, measured):
            continue
        if _load_waited(row, timeline, load, histograms):
            measured.append(_from_wait(row, timeline, load, ordinary, ordinary_s))
    return tuple(sorted(measured, key=lambda s: s.start_s))


def _outside(timeline: Timeline, stalls: Sequence[Stall]) -> npt.NDArray[np.bool_]:
    """The ordinary intervals: those no stall (in whole intervals) touches, nor the one right
    after it (its longest wait is the stall's, its completions a catch-up)."""
    inside = np.zeros(timeline.start_s.size, dtype=bool)
    for stall in stalls:
        inside |= (timeline.end_s > stall.start_s + _EDGE_S) & (
            timeline.start_s < stall.end_s - _EDGE_S
        )
        after = np.searchsorted(timeline.start_s, stall.end_s - _EDGE_S)
        inside[after : after + 1] = True
    return ~inside


def _ordinary_wait_s(timeline: Timeline, ordinary: npt.NDArray[np.bool_]) -> float:
    """The median longest wait of the ordinary intervals."""
    waits = timeline.lat_max_s[ordinary]
    waits = waits[np.isfinite(waits)]
    return float(np.median(waits)) if waits.size else 0.0


def _rate_of(rows: range, timeline: Timeline, ordinary: npt.NDArray[np.bool_], load: Load) -> float:
    """The median completion rate of the ordinary intervals among `rows` (those that exist):
    local, so that a warm-up or a drift elsewhere does not move it; the run's steady rate when
    there are none."""
    picked = [i for i in rows if 0 <= i < timeline.start_s.size and ordinary[i]]
    rate = float(np.median(timeline.tps[picked])) if picked else load.rate_tps
    return rate if rate > 0 else load.rate_tps


def _row_at(timeline: Timeline, start_s: float) -> int:
    return int(np.argmin(np.abs(timeline.start_s - start_s)))


def _row_holding(timeline: Timeline, t_s: float) -> int:
    """The interval that `t_s` falls in (0 before the first)."""
    return int(np.searchsorted(timeline.end_s, t_s, side="right"))


def _rows_of(stall: Stall, timeline: Timeline) -> range:
    first = _row_at(timeline, stall.start_s)
    # Interval ends are rounded (intervals.csv keeps microseconds): a stall's end computed
    # from them may pass its last interval's end by a microsecond, never by _EDGE_S.
    last = int(np.searchsorted(timeline.end_s, stall.end_s - _EDGE_S))
    return range(first, min(last, timeline.start_s.size - 1) + 1)


def _measured(
    stall: Stall,
    timeline: Timeline,
    load: Load,
    ordinary: npt.NDArray[np.bool_],
    ordinary_s: float,
) -> Stall:
    rows = _rows_of(stall, timeline)
    after = rows.stop
    if after >= timeline.start_s.size or not timeline.adjoins(after):
        return stall  # the run (or its record) ended within the stall: no wait to read
    # The pause's own wait ends in the first interval with completions after it: the one
    # after the stall, or the stall's last when the host was slow to catch up and left that
    # interval below the threshold too. It is the longest wait of them all.
    waits = np.nan_to_num(timeline.lat_max_s[rows.start : after + 1], nan=-1.0)
    if waits.max() < 0:
        return stall
    waited = rows.start + int(np.argmax(waits))
    began, ended, bounds = _pause_ending_in(
        waited, rows.start, timeline, load, ordinary, ordinary_s
    )
    return Stall(
        start_s=began,
        duration_s=ended - began,
        min_tps=stall.min_tps,
        mean_tps=stall.mean_tps,
        intervals=stall.intervals,
        method="latency",
        low_intervals_s=stall.duration_s,
        start_range_s=bounds,
    )


def _pause_ending_in(
    row: int,
    latest_origin: int,
    timeline: Timeline,
    load: Load,
    ordinary: npt.NDArray[np.bool_],
    ordinary_s: float,
) -> tuple[float, float, tuple[float, float]]:
    """When the pause whose longest wait ended in `row` began and ended, and the bounds of its
    start (`_start_range`). Nothing completes during a pause, so it began in `origin`, the last
    interval with completions before `row` (and no later than `latest_origin`, the stall's
    first: a slowdown's trickle is not its start), that many completions' worth of time into
    it at the rate of the ordinary intervals just before."""
    last = max(min(latest_origin, row - 1), 0)
    held = np.flatnonzero(timeline.transactions[: last + 1] > 0)
    origin = int(held[-1]) if held.size else last
    rate_tps = _rate_of(range(origin - RATE_ROWS, origin), timeline, ordinary, load)
    window = (float(timeline.start_s[origin]), float(timeline.end_s[origin]))
    lo, hi = _start_range(window, row, timeline, ordinary)
    estimate = window[0] + float(timeline.transactions[origin]) / rate_tps
    began = float(np.clip(estimate, lo, hi))
    return began, _ended_s(began, row, timeline, ordinary_s), (lo, hi)


def _start_range(
    window: tuple[float, float], after: int, timeline: Timeline, ordinary: npt.NDArray[np.bool_]
) -> tuple[float, float]:
    """Where the pause began, for certain, give or take L, the longest ordinary wait (what
    the client itself may be late by: a completion is counted when the client reads it, a
    transaction starts when the client gets to it). The throughput places it in `window`
    (the client saw the last completions up to L after it); the longest wait d, ending in row
    `after` = [a0, a1], belongs to a transaction that started at t - d, within L of the pause
    (in flight when it began, or started just after it on an answer already on its way): so
    it began in [a0 - d - L, a1 - d + L]. Both together, or `window` widened by L when they
    disagree (not a pause of this model)."""
    waits = timeline.lat_max_s[ordinary]
    longest_s = float(np.max(waits[np.isfinite(waits)], initial=0.0))
    wait_s = float(timeline.lat_max_s[after])
    lo = max(window[0] - longest_s, float(timeline.start_s[after]) - wait_s - longest_s)
    hi = min(window[1], float(timeline.end_s[after]) - wait_s + longest_s)
    return (lo, hi) if lo <= hi else (window[0] - longest_s, window[1])


def _ended_s(began_s: float, after: int, timeline: Timeline, ordinary_s: float) -> float:
    """When the pause ended: its start plus the longest wait that ended in row `after` (less
    what an ordinary transaction had already waited), within that row."""
    wait_s = float(timeline.lat_max_s[after])
    ended = began_s + wait_s - ordinary_s
    return float(np.clip(ended, timeline.start_s[after], timeline.end_s[after]))


def _hinted_rows(timeline: Timeline, ordinary_s: float, taken: set[int]) -> list[int]:
    lengths = timeline.end_s - timeline.start_s
    waits = np.nan_to_num(timeline.lat_max_s, nan=0.0)
    hinted = (waits >= MIN_WAIT_SHARE * lengths) & (waits >= LATENCY_JUMP * ordinary_s)
    return [int(i) for i in np.flatnonzero(hinted) if int(i) not in taken]


def _queue_goes_on(row: int, timeline: Timeline, ordinary_s: float, found: list[Stall]) -> bool:
    """Whether the long waits of `row` are a catch-up's: they began within a stall already
    found, or the interval before had long waits too (a queue draining, not a new pause)."""
    waited_since_s = timeline.start_s[row] - timeline.lat_max_s[row]
    if any(s.start_s < timeline.end_s[row] and waited_since_s < s.end_s for s in found):
        return True
    previous = timeline.lat_max_s[row - 1] if timeline.adjoins(row) else 0.0
    return bool(np.nan_to_num(previous) >= LATENCY_JUMP * ordinary_s)


def _load_waited(row: int, timeline: Timeline, load: Load, histograms: Sequence[HlogEntry]) -> bool:
    """Whether the long waits ending in `row` are the load's, not one transaction's."""
    wait_s = float(timeline.lat_max_s[row])
    expected = (
        load.rate_tps * wait_s / 2 if load.open_loop else float(max(load.threads, 1))
    )  # arrivals of the pause's first half waited at least half of it; or every connection
    needed = max(2.0, WAITERS_SHARE * expected) if expected >= 2 else expected
    entry = _entry_of(row, timeline, histograms)
    if entry is not None:
        # The backlog may take into the next interval to drain: count its waiters too.
        following = row + 1 < timeline.start_s.size and timeline.adjoins(row + 1)
        after = _entry_of(row + 1, timeline, histograms) if following else None
        waiters = sum(_count_at_least(e, wait_s / 2) for e in (entry, after) if e is not None)
        return waiters >= needed
    if load.open_loop:
        return False  # the catch-up hides the missing throughput: no evidence without histograms
    # Closed loop without histograms: the throughput lost around the wait must be the load's.
    rows = slice(max(row - 1, 0), row + 1)
    lost = load.rate_tps * float((timeline.end_s - timeline.start_s)[rows].sum()) - float(
        timeline.transactions[rows].sum()
    )
    return lost >= WAITERS_SHARE * load.rate_tps * wait_s


def _entry_of(row: int, timeline: Timeline, histograms: Sequence[HlogEntry]) -> HlogEntry | None:
    for entry in histograms:
        if entry.tag is None and abs(entry.start_s - timeline.start_s[row]) <= _EDGE_S:
            return entry
    return None


def _count_at_least(entry: HlogEntry, wait_s: float) -> int:
    histogram = entry.decode()
    threshold_ns = wait_s * NS_PER_S
    return sum(
        int(item.count_at_value_iterated_to)
        for item in histogram.get_recorded_iterator()
        if item.value_iterated_to >= threshold_ns
    )


def _from_wait(
    row: int,
    timeline: Timeline,
    load: Load,
    ordinary: npt.NDArray[np.bool_],
    ordinary_s: float,
) -> Stall:
    """The stall that ended in `row`, where no interval fell below the threshold."""
    began, ended, bounds = _pause_ending_in(row, row, timeline, load, ordinary, ordinary_s)
    first = min(_row_holding(timeline, began), row)
    tps = timeline.tps[first : row + 1]
    lengths = (timeline.end_s - timeline.start_s)[first : row + 1]
    return Stall(
        start_s=began,
        duration_s=ended - began,
        min_tps=float(tps.min()),
        mean_tps=float(np.dot(tps, lengths) / lengths.sum()),
        intervals=int(row - first + 1),
        method="latency",
        low_intervals_s=0.0,
        start_range_s=bounds,
    )
