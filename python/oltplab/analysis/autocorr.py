"""Autocorrelation-aware standard error of a mean (methodology.md §3.2, §3.3 recipe 1).

Per-interval TPS is autocorrelated: for AR(1) with φ = 0.8 the naive s/√n is three times too
small (§3.2), and a naive CI covers the true mean about half the time (§3.4). The integrated
autocorrelation time τ turns n samples into n_eff = n/τ independent ones.
"""

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from oltplab.analysis._json import JsonDataclass
from oltplab.analysis.quantiles import t_critical

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class MeanCI(JsonDataclass):
    """Mean of a series with a Student-t CI on n_eff - 1 degrees of freedom (at least 1).

    `se` = s·√(τ/n) with s the sample standard deviation (ddof=1). With a single value the
    spread is unknown: `se`, `lo` and `hi` are NaN (None in JSON).
    """

    mean: float
    se: float
    n: int
    n_eff: float
    tau: float
    lo: float
    hi: float
    level: float


def autocorrelation(values: npt.ArrayLike) -> FloatArray:
    """Sample autocorrelation rho_k for k = 0 … n-1, by FFT (biased autocovariance, divisor n).

    The divisor n gives the (1 - k/n) taper of §3.2 and a positive semi-definite sequence.
    A constant series has rho = 1 at lag 0 and 0 elsewhere.
    """
    y = np.asarray(values, dtype=np.float64)
    n = y.size
    if n == 0:
        return np.empty(0)
    x = y - y.mean()
    size = 1 << (2 * n - 1).bit_length()  # zero-padding avoids circular wrap-around
    spectrum = np.fft.rfft(x, size)
    acov = np.fft.irfft(spectrum * np.conj(spectrum), size)[:n] / n
    rho = np.zeros(n)
    rho[0] = 1.0
    if acov[0] > 0.0:
        rho[1:] = acov[1:] / acov[0]
    return rho


def integrated_autocorr_time(values: npt.ArrayLike) -> float:
    """τ = 1 + 2 Σ_{k≥1} rho_k, truncated by Geyer's initial positive sequence; at least 1.

    The pair sums Γ_m = rho_{2m} + rho_{2m+1} are summed while positive (§3.3 recipe 1), which
    stops the sum before the noisy tail of rho takes over; τ = -1 + 2 Σ_m Γ_m.
    """
    rho = autocorrelation(values)
    if rho.size < 2:
        return 1.0
    pairs = rho[: rho.size // 2 * 2].reshape(-1, 2).sum(axis=1)
    non_positive = np.flatnonzero(pairs <= 0.0)
    stop = int(non_positive[0]) if non_positive.size else pairs.size
    return max(1.0, float(-1.0 + 2.0 * pairs[:stop].sum()))


def mean_ci(values: npt.ArrayLike, level: float = 0.95) -> MeanCI:
    """Mean with an autocorrelation-corrected CI: SE = s·√(τ/n), t on n_eff - 1 df (§3.3)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, not {level}")
    y = np.asarray(values, dtype=np.float64)
    n = y.size
    if n == 0:
        raise ValueError("mean_ci needs at least one value")
    mean = float(y.mean())
    if n == 1:
        nan = float("nan")
        return MeanCI(mean, nan, 1, 1.0, 1.0, nan, nan, level)
    tau = integrated_autocorr_time(y)
    n_eff = n / tau
    se = float(y.std(ddof=1)) * float(np.sqrt(tau / n))
    # Few effective samples mean a wide t: never fewer than 1 df (a Cauchy, not a crash).
    t = t_critical(level, max(1.0, n_eff - 1.0))
    return MeanCI(mean, se, n, n_eff, tau, mean - t * se, mean + t * se, level)
