"""Synthetic throughput series with known truth for the analysis tests."""

import numpy as np
import numpy.typing as npt
from scipy.signal import lfilter

FloatArray = npt.NDArray[np.float64]


def ar1(rng: np.random.Generator, shape: tuple[int, ...], phi: float, sd: float) -> FloatArray:
    """Zero-mean stationary AR(1) rows (last axis is time) with marginal standard deviation sd.

    The first value is drawn from the stationary law, so there is no start-up transient of
    the noise itself; rows are filtered at once (no Python loop over time).
    """
    innovations = rng.standard_normal(shape) * sd * np.sqrt(1.0 - phi * phi)
    first = rng.standard_normal(shape[:-1]) * sd
    filtered, _ = lfilter([1.0], [1.0, -phi], innovations, axis=-1, zi=(phi * first)[..., None])
    out: FloatArray = np.asarray(filtered, dtype=np.float64)
    return out


def cold_start(
    t_end_s: npt.ArrayLike, mean: float, depth: float, time_constant_s: float
) -> FloatArray:
    """The exponential cold-start ramp mean * (1 - depth * exp(-t/T)), sampled at interval ends."""
    t = np.asarray(t_end_s, dtype=np.float64)
    ramp: FloatArray = mean * (1.0 - depth * np.exp(-t / time_constant_s))
    return ramp
