"""USL fit and Little's-law check (methodology.md §5) on synthetic curves with known parameters."""

import dataclasses
import json
import math

import numpy as np
import numpy.typing as npt
import pytest

from oltplab.analysis.usl import PLATEAU, fit_usl, littles_law

Floats = npt.NDArray[np.float64]
N: Floats = np.asarray([2.0**k for k in range(9)], dtype=np.float64)  # 1, 2, 4, ..., 256


def usl(n: Floats, alpha: float, beta: float, gamma: float) -> Floats:
    out: Floats = gamma * n / (1.0 + alpha * (n - 1.0) + beta * n * (n - 1.0))
    return out


def noisy(curve: Floats, noise: float, seed: int) -> Floats:
    """Multiplicative log-normal noise, as run-to-run throughput spread is."""
    out: Floats = curve * np.exp(np.random.default_rng(seed).normal(0.0, noise, curve.size))
    return out


def weights(x: Floats, noise: float) -> Floats:
    """1/SE² with the SE a fixed fraction of the mean (§5.2 recipe step 1)."""
    out: Floats = 1.0 / (noise * x) ** 2
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(("alpha", "beta"), [(0.05, 5e-4), (0.02, 1e-4)])
def test_recovers_known_parameters(alpha: float, beta: float, seed: int) -> None:
    x = noisy(usl(N, alpha, beta, 1000.0), 0.02, seed)
    fit = fit_usl(N, x, weights(x, 0.02))
    assert fit.alpha_se is not None
    assert fit.beta_se is not None
    assert fit.gamma_se_tps is not None
    assert abs(fit.alpha - alpha) <= 3 * fit.alpha_se
    assert abs(fit.beta - beta) <= 3 * fit.beta_se
    assert abs(fit.gamma_tps - 1000.0) <= 3 * fit.gamma_se_tps
    assert fit.peak_concurrency is not None
    assert fit.peak_throughput_tps is not None
    assert fit.peak_concurrency == pytest.approx(math.sqrt((1 - alpha) / beta), rel=0.2)
    assert fit.peak_throughput_tps == pytest.approx(fit.predict(fit.peak_concurrency))
    assert fit.r_squared > 0.99
    assert fit.nrmse_pct < 5.0
    assert (fit.n_points, fit.max_concurrency) == (9, 256.0)
    assert fit.warnings == ()


def test_unweighted_fit_and_unsorted_input() -> None:
    x = noisy(usl(N, 0.05, 5e-4, 1000.0), 0.01, 7)
    order = np.random.default_rng(0).permutation(N.size)
    fit = fit_usl(list(N[order]), list(x[order]))
    assert fit.alpha == pytest.approx(0.05, rel=0.2)
    assert fit.beta == pytest.approx(5e-4, rel=0.2)
    assert fit.warnings == ()


def test_standard_errors_shrink_with_less_noise() -> None:
    curve = usl(N, 0.05, 5e-4, 1000.0)
    loud = fit_usl(N, noisy(curve, 0.05, 11))
    quiet = fit_usl(N, noisy(curve, 0.005, 11))
    for name in ("alpha_se", "beta_se", "gamma_se_tps"):
        assert getattr(quiet, name) < getattr(loud, name) / 3, name


def test_alpha_interval_coverage() -> None:
    """±1.96 SE holds the true alpha in roughly 95 % of fits (a bit less: t with 6 df, not z)."""
    hits = 0
    for seed in range(100):
        x = noisy(usl(N, 0.05, 5e-4, 1000.0), 0.03, seed)
        fit = fit_usl(N, x, weights(x, 0.03))
        assert fit.alpha_se is not None
        hits += abs(fit.alpha - 0.05) <= 1.96 * fit.alpha_se
    assert 85 <= hits <= 99


def test_linear_scaling_has_no_peak() -> None:
    exact = fit_usl(N, 1000.0 * N)
    assert (exact.alpha, exact.beta) == (0.0, 0.0)
    assert exact.gamma_tps == pytest.approx(1000.0)
    assert exact.peak_concurrency is None
    assert exact.peak_throughput_tps is None
    assert exact.warnings == (
        "parameter at a bound (alpha = 0, beta = 0); its SE is not meaningful",
    )
    fit = fit_usl(N, noisy(N * 1000.0, 0.02, 5))
    assert fit.beta < 1e-5
    assert fit.peak_concurrency is None or any("extrapolated" in w for w in fit.warnings)
    assert not any(w == PLATEAU or w.startswith("poor fit") for w in fit.warnings)


def test_peak_beyond_twice_the_data_is_extrapolated() -> None:
    fit = fit_usl(N, noisy(usl(N, 0.01, 1e-6, 1000.0), 0.005, 3))
    assert fit.peak_concurrency is not None
    assert fit.peak_concurrency > 512
    assert any("is extrapolated, beyond 2x the largest measured N (256)" in w for w in fit.warnings)


@pytest.mark.parametrize("cap", [16.0, 32.0, 64.0])
@pytest.mark.parametrize("seed", [1, 2])
def test_thread_pool_plateau_is_flagged(cap: float, seed: int) -> None:
    x = noisy(np.minimum(N, cap) * 1000.0, 0.01, seed)
    fit = fit_usl(N, x, weights(x, 0.01))
    assert PLATEAU in fit.warnings
    assert any(w.startswith("poor fit") for w in fit_usl(N, x).warnings)


def test_few_points() -> None:
    n = np.array([1.0, 2.0, 4.0, 8.0])
    fit = fit_usl(n, noisy(usl(n, 0.05, 5e-4, 1000.0), 0.01, 1))
    assert "only 4 points (< 6); the result might not be accurate" in fit.warnings
    assert fit.alpha_se is not None
    three = fit_usl(n[:3], usl(n[:3], 0.05, 5e-4, 1000.0))
    assert (three.alpha_se, three.beta_se, three.gamma_se_tps) == (None, None, None)


@pytest.mark.parametrize(
    ("n", "x", "w"),
    [
        ([1, 2], [1.0, 2.0], None),
        ([1, 2, 4], [1.0, 2.0], None),
        ([1, 2, 4], [1.0, 2.0, 0.0], None),
        ([1, 2, 4], [1.0, 2.0, 3.0], [1.0, 1.0, math.inf]),
    ],
)
def test_bad_input(n: list[float], x: list[float], w: list[float] | None) -> None:
    with pytest.raises(ValueError, match=r"must|needs"):
        fit_usl(n, x, w)


def test_predict_and_json() -> None:
    fit = fit_usl(N, usl(N, 0.05, 5e-4, 1000.0))
    assert fit.predict(1.0) == pytest.approx(1000.0)
    assert isinstance(fit.predict(8.0), float)
    assert fit.predict([1.0, 2.0]) == pytest.approx(usl(np.array([1.0, 2.0]), 0.05, 5e-4, 1e3))
    doc = json.loads(json.dumps(fit.to_json(), allow_nan=False))
    assert doc["alpha"] == pytest.approx(0.05)
    assert doc["warnings"] == []
    odd = dataclasses.replace(fit, r_squared=math.nan, peak_concurrency=None, warnings=("w",))
    doc = odd.to_json()
    assert (doc["r_squared"], doc["peak_concurrency"], doc["warnings"]) == (None, None, ["w"])
    assert all(type(v) in (float, int, list) for k, v in doc.items() if v is not None), doc


def test_littles_law() -> None:
    good = littles_law(64, 32_000.0, 1.9)
    assert good.expected_concurrency == pytest.approx(60.8)
    assert good.ratio == pytest.approx(0.95)
    assert (good.ok, good.message) == (True, None)
    slow = littles_law(64, 32_000.0, 4.0)
    assert slow.ratio == pytest.approx(2.0)
    assert not slow.ok
    assert slow.message is not None
    assert "mismeasured" in slow.message
    busy_client = littles_law(64, 32_000.0, 1.0)
    assert not busy_client.ok
    assert busy_client.message is not None
    assert "client bottleneck" in busy_client.message
    assert littles_law(64, 32_000.0, 1.0, tolerance=0.6).ok
    with pytest.raises(ValueError, match="positive"):
        littles_law(0, 1.0, 1.0)
