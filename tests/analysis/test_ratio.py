"""Relative change B/A with a CI, between runs and within one run each (methodology.md §3.6)."""

import math

import numpy as np
import pytest
from scipy import stats

from oltplab.analysis import mean_ci, ratio_ci_runs, ratio_ci_within
from tests.analysis.series import ar1

RESTART_NOISE = 0.03  # run-to-run spread of the per-run mean, as a log SD
TRUE_RATIO = 1.03
RUNS = 5
SEEDS = 2000


def run_means(seed: int, ratio: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-run means of A and B for SEEDS repetitions of a 5-vs-5 experiment."""
    rng = np.random.default_rng(seed)
    a = 10_000.0 * np.exp(rng.normal(0.0, RESTART_NOISE, (SEEDS, RUNS)))
    b = ratio * 10_000.0 * np.exp(rng.normal(0.0, RESTART_NOISE, (SEEDS, RUNS)))
    return a, b


def test_runs_ci_covers_the_true_ratio() -> None:
    a, b = run_means(30, TRUE_RATIO)
    cis = [ratio_ci_runs(a_i, b_i) for a_i, b_i in zip(a, b, strict=True)]
    covered = np.mean([ci.lo <= TRUE_RATIO <= ci.hi for ci in cis])
    assert 0.93 <= covered <= 0.97
    assert np.median([ci.ratio for ci in cis]) == pytest.approx(TRUE_RATIO, rel=0.005)


def test_identical_configs_are_rarely_significant() -> None:
    a, b = run_means(31, 1.0)
    false_alarms = np.mean([not ci.lo <= 1.0 <= ci.hi for ci in map(ratio_ci_runs, a, b)])
    assert false_alarms <= 0.07
    a, b = run_means(32, 1.10)  # and a 10% change is seen nearly always
    assert np.mean([ci.lo > 1.0 for ci in map(ratio_ci_runs, a, b)]) >= 0.95


def test_runs_ci_matches_welch_on_logs() -> None:
    a, b = [100.0, 104.0, 98.0], [110.0, 103.0, 107.0, 109.0]
    ci = ratio_ci_runs(a, b, 0.9)
    welch = stats.ttest_ind(np.log(b), np.log(a), equal_var=False)
    lo, hi = welch.confidence_interval(0.9)
    assert (ci.lo, ci.hi) == pytest.approx((math.exp(lo), math.exp(hi)))
    assert ci.df == pytest.approx(welch.df)
    assert ci.ratio == pytest.approx(math.exp(np.log(b).mean() - np.log(a).mean()))


def test_runs_ci_refuses_what_it_cannot_estimate() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        ratio_ci_runs([100.0], [101.0, 102.0])
    with pytest.raises(ValueError, match="non-positive"):
        ratio_ci_runs([100.0, 0.0], [101.0, 102.0])
    same = ratio_ci_runs([100.0, 100.0], [103.0, 103.0])
    assert same.lo == same.ratio == same.hi == pytest.approx(1.03)


def test_within_ci_covers_the_ratio_of_two_autocorrelated_series() -> None:
    rng = np.random.default_rng(33)
    seeds, n, sd = 300, 600, 300.0
    a_runs = 10_000.0 + ar1(rng, (seeds, n), 0.8, sd)
    b_runs = 10_000.0 * TRUE_RATIO + ar1(rng, (seeds, n), 0.8, sd)
    cis = [ratio_ci_within(mean_ci(a), mean_ci(b)) for a, b in zip(a_runs, b_runs, strict=True)]
    covered = np.mean([ci.lo <= TRUE_RATIO <= ci.hi for ci in cis])
    assert 0.88 <= covered <= 0.98
    assert all(ci.df == math.inf for ci in cis)


def test_within_ci_is_the_delta_method() -> None:
    a = mean_ci(10_000.0 + ar1(np.random.default_rng(34), (1, 600), 0.8, 300.0)[0])
    b = mean_ci(12_000.0 + ar1(np.random.default_rng(35), (1, 600), 0.8, 300.0)[0])
    ratio, lo, hi, _ = ratio_ci_within(a, b)
    se_log = math.hypot(a.se / a.mean, b.se / b.mean)
    assert ratio == pytest.approx(b.mean / a.mean)
    assert math.log(hi / ratio) == pytest.approx(stats.norm.ppf(0.975) * se_log)
    assert math.log(ratio / lo) == pytest.approx(math.log(hi / ratio))
