"""Relative change B/A with a confidence interval (methodology.md §3.6).

Preferred: several fresh runs per side, one mean per run, Welch's t on the logs
(`ratio_ci_runs`). Fallback: one run each, delta method on the two autocorrelation-corrected
means (`ratio_ci_within`); that interval holds within-run noise only, not the restart-to-restart
variance that dominates real comparisons (§0 item 1, §3.2).
"""

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from oltplab.analysis.autocorr import MeanCI
from oltplab.analysis.quantiles import t_critical, z_critical


class RatioCI(NamedTuple):
    """b/a and its CI; `df` is Welch's degrees of freedom (inf for the normal delta method)."""

    ratio: float
    lo: float
    hi: float
    df: float


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, not {level}")


def ratio_ci_within(a: MeanCI, b: MeanCI, level: float = 0.95) -> RatioCI:
    """b.mean/a.mean with CI r·exp(±z·SE(ln r)), SE(ln r)² = (SE_a/ā)² + (SE_b/b̄)² (§3.6).

    Single run each: the label belongs in the report ("within-run noise only").
    """
    _check_level(level)
    if a.mean <= 0.0 or b.mean <= 0.0:
        raise ValueError("a ratio CI needs two positive means")
    ratio = b.mean / a.mean
    se_log = math.hypot(a.se / a.mean, b.se / b.mean)
    z = z_critical(level)
    return RatioCI(ratio, ratio * math.exp(-z * se_log), ratio * math.exp(z * se_log), math.inf)


def ratio_ci_runs(a_means: npt.ArrayLike, b_means: npt.ArrayLike, level: float = 0.95) -> RatioCI:
    """Ratio of geometric means of per-run means, Welch t interval on the logs (§3.6).

    Raises ValueError with fewer than 2 runs on a side (no between-run variance to estimate;
    the caller decides whether to fall back on `ratio_ci_within`) or a non-positive mean.
    """
    _check_level(level)
    u = np.log(_positive_runs(a_means, "a"))
    v = np.log(_positive_runs(b_means, "b"))
    var_u = float(u.var(ddof=1)) / u.size
    var_v = float(v.var(ddof=1)) / v.size
    d = float(v.mean() - u.mean())
    se = math.sqrt(var_u + var_v)
    if se == 0.0:  # identical runs on both sides: no spread, a degenerate interval
        return RatioCI(math.exp(d), math.exp(d), math.exp(d), float(u.size + v.size - 2))
    df = (var_u + var_v) ** 2 / (var_u**2 / (u.size - 1) + var_v**2 / (v.size - 1))
    t = t_critical(level, df)
    return RatioCI(math.exp(d), _exp(d - t * se), _exp(d + t * se), df)


def _exp(x: float) -> float:
    """exp(x), inf past the float range: with 2 runs a side, a wild run and a high level
    (t on ~1 df is 636 at 99.9%) put the log bound beyond 709."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _positive_runs(means: npt.ArrayLike, side: str) -> npt.NDArray[np.float64]:
    x = np.asarray(means, dtype=np.float64)
    if x.size < 2:
        raise ValueError(
            f"side {side} has {x.size} run(s); a between-run CI needs at least 2 per side"
        )
    if not np.all(x > 0.0):
        raise ValueError(f"side {side} has a non-positive run mean; ratios need positive means")
    return x
