"""Integrated autocorrelation time and the corrected CI of a mean (methodology.md §3.2-§3.4)."""

import math

import numpy as np
import pytest
from scipy import stats

from oltplab.analysis import integrated_autocorr_time, mean_ci
from tests.analysis.series import ar1

PHI = 0.8
TRUE_TAU = (1 + PHI) / (1 - PHI)  # 9 for AR(1)
MEAN_TPS = 10_000.0
NOISE_SD = 300.0
N = 600
SEEDS = 400


@pytest.fixture(scope="module")
def ar1_runs() -> np.ndarray:
    return MEAN_TPS + ar1(np.random.default_rng(20), (SEEDS, N), PHI, NOISE_SD)


def test_tau_of_ar1_is_near_theory(ar1_runs: np.ndarray) -> None:
    taus = np.array([integrated_autocorr_time(run) for run in ar1_runs])
    assert 0.85 * TRUE_TAU <= np.median(taus) <= 1.15 * TRUE_TAU
    long_run = ar1(np.random.default_rng(21), (1, 100_000), PHI, NOISE_SD)[0]
    assert integrated_autocorr_time(long_run) == pytest.approx(TRUE_TAU, rel=0.1)


def test_tau_of_white_noise_is_near_one() -> None:
    runs = np.random.default_rng(22).normal(MEAN_TPS, NOISE_SD, (200, N))
    taus = np.array([integrated_autocorr_time(run) for run in runs])
    assert taus.min() >= 1.0
    assert np.median(taus) <= 1.3


def test_corrected_ci_covers_and_naive_does_not(ar1_runs: np.ndarray) -> None:
    cis = [mean_ci(run, 0.95) for run in ar1_runs]
    covered = np.mean([ci.lo <= MEAN_TPS <= ci.hi for ci in cis])
    assert 0.90 <= covered <= 0.98
    naive_half = stats.t.ppf(0.975, N - 1) * ar1_runs.std(axis=1, ddof=1) / math.sqrt(N)
    naive = np.mean(np.abs(ar1_runs.mean(axis=1) - MEAN_TPS) <= naive_half)
    assert naive < 0.7  # the correction is what makes the interval honest (§3.4: 0.46)


def test_mean_ci_fields_agree() -> None:
    values = MEAN_TPS + ar1(np.random.default_rng(23), (1, N), PHI, NOISE_SD)[0]
    ci = mean_ci(values, 0.9)
    assert ci.n == N
    assert ci.n_eff == pytest.approx(N / ci.tau)
    assert ci.se == pytest.approx(values.std(ddof=1) * math.sqrt(ci.tau / N))
    assert ci.mean == pytest.approx(values.mean())
    assert ci.hi - ci.mean == pytest.approx(ci.mean - ci.lo)
    wider = mean_ci(values, 0.99)
    assert wider.hi - wider.lo > ci.hi - ci.lo
    assert ci.to_json()["level"] == 0.9


def test_degenerate_series() -> None:
    flat = mean_ci(np.full(50, 7.0))
    assert (flat.tau, flat.se, flat.lo, flat.hi) == (1.0, 0.0, 7.0, 7.0)
    one = mean_ci([5.0])
    assert one.mean == 5.0
    assert math.isnan(one.se)
    assert one.to_json()["lo"] is None  # NaN is not JSON
    with pytest.raises(ValueError, match="at least one"):
        mean_ci([])


def test_interval_uses_t_on_n_eff_minus_one_df() -> None:
    for values in (np.arange(8, dtype=float), np.array([3.0, 5.0])):  # few effective samples
        ci = mean_ci(values)
        df = max(1.0, ci.n_eff - 1.0)
        assert ci.hi - ci.mean == pytest.approx(stats.t.ppf(0.975, df) * ci.se)
        assert math.isfinite(ci.lo)
        assert ci.lo < ci.mean < ci.hi
