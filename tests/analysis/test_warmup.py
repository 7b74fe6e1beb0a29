"""MSER-5 and the drift check on series whose transient is known (methodology.md §1.2)."""

import math

import numpy as np
import pytest

from oltplab.analysis import detect_warmup, drift_pct, mser_curve
from tests.analysis.series import FloatArray, ar1, cold_start

MEAN_TPS = 10_000.0
NOISE_SD = 0.03 * MEAN_TPS
PHI = 0.8  # tau = 9: strongly autocorrelated, like real per-second TPS
DEPTH = 0.5
TIME_CONSTANT_S = 30.0
RUN_S = 900
BATCH = 5
SEEDS = 100


def remaining_bias_at(noise_sds: float) -> float:
    """Seconds after which the ramp's bias is below `noise_sds` noise standard deviations."""
    return TIME_CONSTANT_S * math.log(DEPTH * MEAN_TPS / (noise_sds * NOISE_SD))


def ramp_runs(seed: int) -> tuple[FloatArray, FloatArray]:
    rng = np.random.default_rng(seed)
    t_end_s = np.arange(1.0, RUN_S + 1.0)
    ramp = cold_start(t_end_s, MEAN_TPS, DEPTH, TIME_CONSTANT_S)
    return t_end_s, ramp + ar1(rng, (SEEDS, RUN_S), PHI, NOISE_SD)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cut_lands_where_the_ramp_has_decayed(seed: int) -> None:
    _, runs = ramp_runs(seed)
    found = [detect_warmup(run) for run in runs]
    cuts = np.array([w.cut_intervals for w in found])
    assert np.mean([w.reached for w in found]) >= 0.95
    # Truth: the ramp's bias falls below one noise SD. The typical cut is within 2 batches.
    assert abs(np.median(cuts) - remaining_bias_at(1.0)) <= 2 * BATCH
    # Each seed's cut is noisy (tau = 9), but leaves between 0.05 and 3 SDs of bias.
    sane = (cuts >= remaining_bias_at(3.0)) & (cuts <= remaining_bias_at(0.05))
    assert np.mean(sane) >= 0.9


def test_truncation_leaves_less_bias_than_the_standard_error() -> None:
    t_end_s, runs = ramp_runs(11)
    ramp_bias = MEAN_TPS - cold_start(t_end_s, MEAN_TPS, DEPTH, TIME_CONSTANT_S)
    se_tps = NOISE_SD * math.sqrt((1 + PHI) / (1 - PHI) / RUN_S)
    assert ramp_bias.mean() > 3 * se_tps  # untruncated, the ramp dominates the error
    kept_bias = np.array([ramp_bias[detect_warmup(run).cut_intervals :].mean() for run in runs])
    assert np.mean(kept_bias < se_tps) >= 0.9


def test_stationary_noise_is_barely_cut() -> None:
    runs = MEAN_TPS + ar1(np.random.default_rng(5), (SEEDS, 600), PHI, NOISE_SD)
    found = [detect_warmup(run) for run in runs]
    cuts = np.array([w.cut_intervals for w in found])
    assert np.mean([w.reached for w in found]) >= 0.95
    assert np.median(cuts) <= 2 * BATCH
    assert np.mean(cuts <= 0.1 * 600) >= 0.9  # the §1.4 "accept" band


def test_constant_series_is_steady_from_the_start() -> None:
    warmup = detect_warmup(np.full(300, 1234.5))
    assert (warmup.cut_intervals, warmup.reached, warmup.drifting) == (0, True, False)
    assert warmup.drift_pct == 0.0


@pytest.mark.parametrize("length", [0, 1, 9, 19])
def test_too_short_is_not_reached_and_not_cut(length: int) -> None:
    values = MEAN_TPS + np.random.default_rng(length).normal(0, NOISE_SD, length)
    warmup = detect_warmup(values)
    assert not warmup.reached
    assert warmup.cut_intervals == 0


def test_late_level_shift_is_not_steady() -> None:
    rng = np.random.default_rng(8)
    values = MEAN_TPS + rng.normal(0, 0.01 * MEAN_TPS, 600)
    values[450:] += 0.2 * MEAN_TPS  # a new regime in the last quarter
    warmup = detect_warmup(values)
    assert warmup.cut_batches > warmup.batches / 2  # MSER wanted to cut past the shift
    assert not warmup.reached
    assert warmup.cut_intervals == 0


def test_steady_climb_is_flagged_as_drifting() -> None:
    rng = np.random.default_rng(9)
    values = np.linspace(MEAN_TPS, 1.1 * MEAN_TPS, 600) + rng.normal(0, 0.01 * MEAN_TPS, 600)
    warmup = detect_warmup(values)
    assert warmup.drifting
    assert warmup.drift_pct > warmup.drift_limit_pct
    flat = detect_warmup(MEAN_TPS + rng.normal(0, 0.01 * MEAN_TPS, 600))
    assert not flat.drifting


def test_drift_pct_is_slope_times_window_over_mean() -> None:
    n, slope = 100, 0.1
    values = 1000.0 + slope * np.arange(n)
    assert drift_pct(values) == pytest.approx(100 * slope * n / values.mean())
    assert drift_pct(values[::-1]) == pytest.approx(-drift_pct(values))


def test_mser_curve_matches_its_definition() -> None:
    z_values = np.random.default_rng(10).normal(500.0, 20.0, 37 * BATCH + 3)  # ragged tail
    curve = mser_curve(z_values)
    z = z_values[: 37 * BATCH].reshape(37, BATCH).mean(axis=1)
    direct = [np.sum((z[d:] - z[d:].mean()) ** 2) / (37 - d) ** 2 for d in range(37)]
    end_guard = min(BATCH, 37 // 4)
    assert curve.size == 37 - end_guard
    np.testing.assert_allclose(curve, direct[: curve.size], rtol=1e-9)
