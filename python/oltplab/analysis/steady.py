"""Steady-state summary of one measured throughput series (methodology.md §1.2, §2, §3.3).

Composes the pieces: MSER-5 finds the end of the transient, the kept window gets a mean with
an autocorrelation-corrected CI and the stability metrics of §2, and stalls are looked for in
the whole measured series (a stall during the transient is still a stall).

MSER-5 reads a deep stall as a transient: with a 6-s stall before mid-run it cuts everything up
to the stall (so the steady statistics lose it), after mid-run it declares "no steady state".
Stalls are reported on their own (§2), so MSER here judges a copy of the series in which stall
intervals (below stall_fraction x the whole series' median) read as that median; an episode at
the very first interval is start-up, not a stall, and stays visible to MSER.
"""

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from oltplab.analysis._json import JsonDataclass
from oltplab.analysis.autocorr import FloatArray, mean_ci
from oltplab.analysis.stalls import Stall, find_stalls, interval_lengths
from oltplab.analysis.warmup import DRIFT_LIMIT_PCT, detect_warmup

STALL_FRACTION = 0.1


@dataclass(frozen=True)
class SteadyState(JsonDataclass):
    """Statistics of the steady window [start_s, end_s] of one series.

    All TPS statistics are over the kept intervals, unweighted (intervals are assumed equal;
    `interval_s` is the median length, stated because every number here depends on it, §2).
    `ci_lo_tps`/`ci_hi_tps` are the `level` CI of the mean with SE = s·√(τ/n) (§3.3); `cv_pct`
    = 100·s/mean with ddof=1 (Percona's "jitter", §2). `warmup_s` is the time MSER-5 cut;
    when `reached` is False nothing was cut and the numbers describe a non-steady run.
    `drift_pct` is measured on the kept window as MSER saw it (stall intervals at the median),
    so a stall near the end does not read as a downward drift.
    `stalls` covers the whole measured series with threshold `stall_threshold_tps` =
    stall_fraction * `median_tps`.
    """

    start_s: float
    end_s: float
    interval_s: float
    intervals: int
    warmup_s: float
    cut_intervals: int
    reached: bool
    drift_pct: float
    drifting: bool
    mean_tps: float
    se_tps: float
    ci_lo_tps: float
    ci_hi_tps: float
    level: float
    tau: float
    n_eff: float
    median_tps: float
    p1_tps: float
    p5_tps: float
    p95_tps: float
    min_tps: float
    max_tps: float
    cv_pct: float
    stall_threshold_tps: float
    stalls: tuple[Stall, ...]

    @property
    def stalled_s(self) -> float:
        return sum(stall.duration_s for stall in self.stalls)


def steady_state(
    t_end_s: npt.ArrayLike,
    interval_s: npt.ArrayLike,
    tps: npt.ArrayLike,
    level: float = 0.95,
    stall_fraction: float = STALL_FRACTION,
    drift_limit_pct: float = DRIFT_LIMIT_PCT,
    stalled: npt.ArrayLike | None = None,
) -> SteadyState:
    """Summarise one measured series (the caller has dropped phase == "warmup" rows).

    Zero-TPS intervals are kept: dropping them would hide exactly the stalls (§2 pitfalls).
    `stalled`: rows a measured stall touched (stall_length.py), which MSER also reads as the
    median, with the rows below the threshold: the part-filled intervals on either side of a
    pause are the pause, not a transient.
    """
    t_end = np.asarray(t_end_s, dtype=np.float64)
    y = np.asarray(tps, dtype=np.float64)
    if y.size == 0 or t_end.shape != y.shape:
        raise ValueError(f"need matching non-empty series, got {t_end.size} times, {y.size} tps")
    lengths = interval_lengths(t_end, interval_s)
    warmup = detect_warmup(
        _without_stalls(y, stall_fraction * float(np.median(y)), stalled),
        drift_limit_pct=drift_limit_pct,
    )
    cut = warmup.cut_intervals
    kept = y[cut:]
    ci = mean_ci(kept, level)
    median = float(np.median(kept))
    p1, p5, p95 = (float(p) for p in np.percentile(kept, [1.0, 5.0, 95.0]))
    cv = 100.0 * float(kept.std(ddof=1)) / ci.mean if kept.size > 1 and ci.mean else float("nan")
    threshold = stall_fraction * median
    return SteadyState(
        start_s=float(t_end[cut] - lengths[cut]),
        end_s=float(t_end[-1]),
        interval_s=float(np.median(lengths)),
        intervals=int(kept.size),
        warmup_s=float(lengths[:cut].sum()),
        cut_intervals=cut,
        reached=warmup.reached,
        drift_pct=warmup.drift_pct,
        drifting=warmup.drifting,
        mean_tps=ci.mean,
        se_tps=ci.se,
        ci_lo_tps=ci.lo,
        ci_hi_tps=ci.hi,
        level=level,
        tau=ci.tau,
        n_eff=ci.n_eff,
        median_tps=median,
        p1_tps=p1,
        p5_tps=p5,
        p95_tps=p95,
        min_tps=float(kept.min()),
        max_tps=float(kept.max()),
        cv_pct=cv,
        stall_threshold_tps=threshold,
        stalls=tuple(find_stalls(t_end, lengths, y, threshold)),
    )


def _without_stalls(
    tps: FloatArray, threshold_tps: float, stalled: npt.ArrayLike | None = None
) -> FloatArray:
    """`tps` with stall intervals after the first non-stalled one read as the median."""
    low = tps < threshold_tps
    if stalled is not None:
        low |= np.asarray(stalled, dtype=bool)
    if low.all() or not low.any():
        return tps
    low[: int(np.argmin(low))] = False  # a leading low stretch is start-up: MSER must see it
    masked = tps.copy()
    masked[low] = np.median(tps)
    return masked
