"""Universal Scalability Law fit and Little's-law check (methodology.md §5).

USL (§5.2): X(N) = gamma*N / (1 + alpha*(N-1) + beta*N*(N-1)), fitted as the R package `usl`
does: bounded nonlinear least squares from gamma0 = max(X/N), alpha0 = 0.01, beta0 = 1e-4, SEs
from the Jacobian. Throughput is in the caller's unit (tps in oltplab), hence `_tps` names.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import numpy.typing as npt
from scipy.optimize import least_squares

from oltplab.analysis._json import dataclass_json

Floats = npt.NDArray[np.float64]

MIN_POINTS = 6  # the `usl` package warns below this (§5.2)
POOR_R2 = 0.95  # scaling curves span decades, so R² is high even for a poor shape
POOR_NRMSE_PCT = 10.0
EXTRAPOLATION_FACTOR = 2.0  # §5.2 recipe step 5
REFIT_SHIFT_SE = 3.0  # §5.2 recipe step 4: a move of > 3 SE (2 gave ~5-15 % false alarms)
REFIT_SHIFT_FACTOR = 2.0  # ... and by more than a factor 2 means the model does not fit
PLATEAU = (
    "throughput flat at high concurrency (plateau — thread pool or admission control?) — "
    "the USL assumes retrograde or linear scaling"
)


@dataclass(frozen=True)
class UslFit:
    """alpha (contention), beta (coherency), gamma (X at N=1) with SEs, peak, fit quality (§5.2)."""

    alpha: float
    beta: float
    gamma_tps: float
    alpha_se: float | None  # None when n ≤ 3 (no residual degrees of freedom)
    beta_se: float | None
    gamma_se_tps: float | None
    # sqrt((1-alpha)/beta), at least 1; None if beta = 0 (not retrograde)
    peak_concurrency: float | None
    peak_throughput_tps: float | None  # X(N*)
    r_squared: float
    nrmse_pct: float  # RMS residual as % of the mean throughput
    n_points: int
    max_concurrency: float  # largest measured N
    warnings: tuple[str, ...]

    @overload
    def predict(self, n: float) -> float: ...
    @overload
    def predict(self, n: Sequence[float] | Floats) -> Floats: ...
    def predict(self, n: float | Sequence[float] | Floats) -> float | Floats:
        """Modelled throughput at concurrency `n` (scalar or array)."""
        x = _usl(np.asarray(n, dtype=np.float64), self.alpha, self.beta, self.gamma_tps)
        return float(x) if np.ndim(x) == 0 else x

    def to_json(self) -> dict[str, Any]:
        """Plain floats, NaN/inf as None, warnings as a list."""
        return dataclass_json(self)


@dataclass(frozen=True)
class LittleCheck:
    """Little's law N ≈ X·R̄ for a closed loop without think time (§5.1)."""

    expected_concurrency: float  # X·R̄
    ratio: float  # X·R̄ / N
    ok: bool
    message: str | None  # why the ratio is off, when not ok


def _usl(n: Floats, alpha: float, beta: float, gamma: float) -> Floats:
    out: Floats = gamma * n / (1.0 + alpha * (n - 1.0) + beta * n * (n - 1.0))
    return out


def _solve(n: Floats, x: Floats, w: Floats) -> tuple[Floats, Floats | None]:
    """(alpha, beta, gamma) and their SEs; gamma is fitted as gamma/gamma0 so the unknowns share
    a scale."""
    gamma0 = float(np.max(x / n))
    sw = np.sqrt(w)

    def resid(p: Floats) -> Floats:
        out: Floats = sw * (_usl(n, p[0], p[1], p[2] * gamma0) - x)
        return out

    start = np.array([0.01, 1e-4, 1.0])
    res = least_squares(
        resid, start, bounds=([0.0, 0.0, 0.0], [1.0, 1.0, np.inf]), x_scale="jac", method="trf"
    )
    p: Floats = np.where(res.active_mask < 0, 0.0, np.where(res.active_mask > 0, 1.0, res.x))
    scale = np.array([1.0, 1.0, gamma0])
    df = n.size - 3
    if df <= 0:
        return p * scale, None
    jac = np.asarray(res.jac, dtype=np.float64)
    rss = float(np.sum(resid(p) ** 2))
    cov = np.linalg.pinv(jac.T @ jac) * rss / df
    se: Floats = np.sqrt(np.clip(np.diag(cov), 0.0, None)) * scale
    return p * scale, se


def _peak(alpha: float, beta: float, gamma: float) -> tuple[float | None, float | None]:
    if beta <= 0.0:
        return None, None
    # Below one connection the model means nothing: when 1 - alpha < beta (alpha = 1 included,
    # where the formula gives 0 and X(0) is 0/0) throughput falls from N = 1 on, its peak.
    n_star = max(1.0, math.sqrt((1.0 - alpha) / beta))
    return n_star, float(_usl(np.array(n_star), alpha, beta, gamma))


def _quality(n: Floats, x: Floats, p: Floats) -> tuple[float, float]:
    """R² and NRMSE (% of mean X), unweighted, on the measured throughput."""
    r = x - _usl(n, float(p[0]), float(p[1]), float(p[2]))
    ss_tot = float(np.sum((x - x.mean()) ** 2))
    r2 = 1.0 - float(np.sum(r**2)) / ss_tot if ss_tot > 0.0 else math.nan
    return r2, 100.0 * math.sqrt(float(np.mean(r**2))) / float(x.mean())


def _plateau(n: Floats, x: Floats, w: Floats, p: Floats, se: Floats | None) -> bool:
    """§5.2 step 4 from the apparent peak (first N within 5 % of the best X): a flat line fits
    the points from there on 4x better than the falling model, or a refit up to there moves alpha
    or beta by more than 3 SE (of the two fits combined) and by more than a factor of 2."""
    k = int(np.argmax(x >= 0.95 * x.max()))
    if x.size - k < 3:  # fewer than two points beyond the apparent peak
        return False
    tail_x, tail_w = x[k:], w[k:]
    model = _usl(n[k:], float(p[0]), float(p[1]), float(p[2]))
    flat = float(np.sum(tail_w * (tail_x - np.average(tail_x, weights=tail_w)) ** 2))
    if model[-1] < 0.9 * model.max() and float(np.sum(tail_w * (tail_x - model) ** 2)) > 4 * flat:
        return True
    if se is None or k + 1 < 4:  # the refit needs a residual degree of freedom
        return False
    sub, sub_se = _solve(n[: k + 1], x[: k + 1], w[: k + 1])
    for i in (0, 1):
        lo, hi = sorted((float(sub[i]), float(p[i])))
        spread = math.hypot(float(se[i]), float(sub_se[i]) if sub_se is not None else 0.0)
        if hi - lo > REFIT_SHIFT_SE * spread and hi > REFIT_SHIFT_FACTOR * lo:
            return True
    return False


def fit_usl(
    concurrency: Sequence[float] | Floats,
    throughput: Sequence[float] | Floats,
    weights: Sequence[float] | Floats | None = None,
) -> UslFit:
    """Fit the USL to mean throughput per concurrency (§5.2); `weights` are 1/SE² (recipe 1).

    Warnings: n < 6; R² < 0.95 or NRMSE > 10 %; N* beyond 2x the largest N; a parameter at a
    bound; a plateau (flat tail the model does not follow, or an unstable refit up to the peak).
    """
    n = np.asarray(concurrency, dtype=np.float64)
    x = np.asarray(throughput, dtype=np.float64)
    w = np.ones_like(n) if weights is None else np.asarray(weights, dtype=np.float64)
    if n.ndim != 1 or n.shape != x.shape or n.shape != w.shape:
        raise ValueError("concurrency, throughput and weights must be 1-D and of one length")
    if n.size < 3:
        raise ValueError(f"a USL fit has 3 parameters and needs at least 3 points, not {n.size}")
    if not (np.all(n > 0) and np.all(x > 0) and np.all(w > 0) and np.all(np.isfinite(w))):
        raise ValueError("concurrency, throughput and weights must be positive and finite")
    order = np.argsort(n)
    n, x, w = n[order], x[order], w[order]
    p, se = _solve(n, x, w)
    alpha, beta, gamma = (float(v) for v in p)
    n_star, x_star = _peak(alpha, beta, gamma)
    r2, nrmse = _quality(n, x, p)
    warns: list[str] = []
    if n.size < MIN_POINTS:
        warns.append(f"only {n.size} points (< {MIN_POINTS}); the result might not be accurate")
    if not r2 >= POOR_R2 or nrmse > POOR_NRMSE_PCT:
        warns.append(
            f"poor fit (R² {r2:.3f}, NRMSE {nrmse:.1f} % of mean throughput; "
            f"want R² ≥ {POOR_R2} and NRMSE ≤ {POOR_NRMSE_PCT:g} %)"
        )
    if n_star is not None and n_star > EXTRAPOLATION_FACTOR * n[-1]:
        warns.append(
            f"peak concurrency N* = {n_star:.0f} is extrapolated, beyond "
            f"{EXTRAPOLATION_FACTOR:g}x the largest measured N ({n[-1]:g})"
        )
    bounded = (("alpha", alpha, 1.0), ("beta", beta, 1.0), ("gamma", gamma, math.inf))
    at = [f"{name} = {v:g}" for name, v, hi in bounded if v in (0.0, hi)]
    if at:
        warns.append(f"parameter at a bound ({', '.join(at)}); its SE is not meaningful")
    if _plateau(n, x, w, p, se):
        warns.append(PLATEAU)
    ses = [None, None, None] if se is None else [float(v) for v in se]
    return UslFit(
        alpha, beta, gamma, ses[0], ses[1], ses[2], n_star, x_star, r2, nrmse, int(n.size),
        float(n[-1]), tuple(warns),
    )  # fmt: skip


def littles_law(
    concurrency: float, tps: float, mean_latency_ms: float, tolerance: float = 0.15
) -> LittleCheck:
    """Closed-loop check N ≈ X·R̄ (§5.1); ok when |X·R̄/N - 1| ≤ `tolerance`.

    Each connection's cycle is R̄ plus client-side time (driver, result handling, think time),
    so X·R̄/N ≤ 1 in a healthy loop; 15 % leaves room for a busy client and window edges while
    a client that spends more than that outside the server is worth flagging.
    """
    if concurrency <= 0 or tps < 0 or mean_latency_ms < 0:
        raise ValueError("concurrency must be positive, tps and latency non-negative")
    expected = tps * mean_latency_ms / 1000.0
    ratio = expected / concurrency
    ok = abs(ratio - 1.0) <= tolerance
    message = None
    if ratio < 1.0 - tolerance:
        message = (
            f"X·R̄ = {expected:.3g} is {ratio:.0%} of N = {concurrency:g}: connections spend "
            "time outside the server (client bottleneck, network, think time)"
        )
    elif ratio > 1.0 + tolerance:
        message = (
            f"X·R̄ = {expected:.3g} exceeds N = {concurrency:g} ({ratio:.0%}): latency or "
            "throughput is mismeasured (different windows, queueing counted in latency?)"
        )
    return LittleCheck(expected, ratio, ok, message)
