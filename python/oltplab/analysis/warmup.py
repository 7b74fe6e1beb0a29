"""Warm-up detection by MSER-5 and a drift check on the kept window (methodology.md §1.2, §1.4).

The measured phase of a run may still carry a cold-start transient (buffer pool, checkpoint
age). MSER-5 picks the truncation point that minimises the marginal standard error of the
kept batch means; a drift check (fio `bw_slope` style) then tells whether the kept window is
flat enough to call steady.
"""

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from oltplab.analysis._json import JsonDataclass

BATCH_SIZE = 5
DRIFT_LIMIT_PCT = 2.0
# Below 4 batches the end-effect guard min(batch_size, k//4) is empty, and a last batch kept
# alone always has MSER 0, so the rule cannot say anything (§1.2 step 6).
MIN_BATCHES = 4

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Warmup(JsonDataclass):
    """Where the transient ends.

    `cut_intervals` raw intervals are dropped from the start (0 when `reached` is False: a
    failed MSER must not truncate, §1.2 step 5). `cut_batches` is MSER's d*, kept even when it
    was rejected, so that a report can say how far it wanted to cut. `drift_pct` is the OLS
    slope over the kept window times its length, as a percentage of its mean (§1.4).
    """

    cut_intervals: int
    cut_batches: int
    batches: int
    batch_size: int
    reached: bool
    drift_pct: float
    drift_limit_pct: float
    drifting: bool


def batch_means(values: npt.ArrayLike, batch_size: int = BATCH_SIZE) -> FloatArray:
    """Non-overlapping batch means; the ragged tail is dropped (§1.2 step 2)."""
    y = np.asarray(values, dtype=np.float64)
    k = y.size // batch_size
    means: FloatArray = y[: k * batch_size].reshape(k, batch_size).mean(axis=1)
    return means


def mser_curve(values: npt.ArrayLike, batch_size: int = BATCH_SIZE) -> FloatArray:
    """MSER(d) for every candidate d = 0 … k-1-e, in O(k) with suffix sums (§1.2 steps 3, 6).

    MSER(d) = Σ_{j≥d} (Z_j - Z̄_d)² / (k-d)²: the population variance of the kept batch
    means over (k-d). The last e = min(batch_size, k//4) batches are never candidates, because
    MSER is over-sensitive to a few close values at the very end. Empty below MIN_BATCHES.
    """
    z = batch_means(values, batch_size)
    k = z.size
    if k < MIN_BATCHES:
        return np.empty(0)
    z = z - z.mean()  # centring keeps the suffix-sum difference from cancelling at high TPS
    kept = np.arange(k, 0, -1, dtype=np.float64)  # k - d for d = 0 … k-1
    s1 = np.cumsum(z[::-1])[::-1]
    s2 = np.cumsum((z * z)[::-1])[::-1]
    sse = np.maximum(s2 - s1 * s1 / kept, 0.0)
    end_guard = min(batch_size, k // 4)
    curve: FloatArray = (sse / kept**2)[: k - end_guard]
    return curve


def drift_pct(values: npt.ArrayLike) -> float:
    """OLS slope per interval * window length (intervals) / mean, in percent (§1.4).

    Equal interval lengths are assumed, as everywhere in the per-interval statistics.
    A window with a zero mean has no relative drift: 0 when flat, ±inf otherwise.
    """
    y = np.asarray(values, dtype=np.float64)
    n = y.size
    if n < 2:
        return 0.0
    x = np.arange(n, dtype=np.float64) - (n - 1) / 2
    slope = float(np.dot(x, y - y.mean()) / np.dot(x, x))
    mean = float(y.mean())
    if mean == 0.0:
        return 0.0 if slope == 0.0 else float(np.copysign(np.inf, slope))
    return 100.0 * slope * n / mean


def detect_warmup(
    values: npt.ArrayLike,
    *,
    batch_size: int = BATCH_SIZE,
    drift_limit_pct: float = DRIFT_LIMIT_PCT,
) -> Warmup:
    """MSER-5 truncation point plus drift verdict for one measured series (§1.2, §1.4).

    `values` are per-interval observations (e.g. 1-s TPS) from the start of the measured
    phase. d* = argmin MSER(d) (the first on ties, so a flat series is not cut); if
    d* > k/2 the series never reached steady state and nothing is cut. The drift check runs on
    what is kept (the whole series when MSER failed).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    y = np.asarray(values, dtype=np.float64)
    k = y.size // batch_size
    curve = mser_curve(y, batch_size)
    if curve.size == 0:
        d_star, reached = 0, False  # too short to judge
    elif np.ptp(batch_means(y, batch_size)) == 0.0:
        d_star, reached = 0, True  # constant: steady from the first interval
    else:
        d_star = int(np.argmin(curve))
        reached = d_star <= k / 2
    cut = batch_size * d_star if reached else 0
    drift = drift_pct(y[cut:])
    return Warmup(
        cut_intervals=cut,
        cut_batches=d_star,
        batches=k,
        batch_size=batch_size,
        reached=reached,
        drift_pct=drift,
        drift_limit_pct=drift_limit_pct,
        drifting=bool(abs(drift) >= drift_limit_pct),
    )
