"""The steady-state summary of one measured series (methodology.md §1.2, §2, §3.3)."""

import json

import numpy as np
import pytest

from oltplab.analysis import detect_warmup, find_stalls, steady_state
from tests.analysis.series import ar1, cold_start

MEAN_TPS = 10_000.0
NOISE_SD = 0.03 * MEAN_TPS
RUN_S = 600


def test_ramp_is_cut_and_the_ci_covers_the_steady_mean() -> None:
    t_end_s = np.arange(1.0, RUN_S + 1.0)
    ramp = cold_start(t_end_s, MEAN_TPS, 0.5, 30.0)
    runs = ramp + ar1(np.random.default_rng(50), (100, RUN_S), 0.8, NOISE_SD)
    summaries = [steady_state(t_end_s, 1.0, run) for run in runs]
    covered = np.mean([s.ci_lo_tps <= MEAN_TPS <= s.ci_hi_tps for s in summaries])
    assert covered >= 0.85
    # The cut removes most of the ramp's bias from the point estimate.
    error_cut = np.median([abs(s.mean_tps - MEAN_TPS) for s in summaries])
    error_uncut = np.median(np.abs(runs.mean(axis=1) - MEAN_TPS))
    assert error_cut < 0.25 * error_uncut
    assert all(s.warmup_s == s.start_s == s.cut_intervals for s in summaries)


def test_summary_fields_follow_their_definitions() -> None:
    rng = np.random.default_rng(51)
    warmup_phase_s = 10.0  # the caller dropped these rows; times still count from load start
    t_end_s = warmup_phase_s + 0.5 * np.arange(1, 2 * RUN_S + 1)
    tps = cold_start(t_end_s - warmup_phase_s, MEAN_TPS, 0.5, 20.0)
    tps = tps + ar1(rng, (1, t_end_s.size), 0.8, NOISE_SD)[0]
    tps[700:712] = 0.0  # a 6-s stall of zeros: kept, counted, reported
    tps[3] = 0.0  # and one during the ramp: still a stall
    steady = steady_state(t_end_s, 0.5, tps, level=0.9)
    cut = steady.cut_intervals
    kept = tps[cut:]
    assert steady.reached
    assert cut > 0
    assert steady.warmup_s == pytest.approx(0.5 * cut)
    assert steady.start_s == pytest.approx(warmup_phase_s + 0.5 * cut)
    assert steady.end_s == t_end_s[-1]
    assert (steady.interval_s, steady.intervals, steady.level) == (0.5, kept.size, 0.9)
    assert steady.mean_tps == pytest.approx(kept.mean())
    assert steady.median_tps == pytest.approx(np.median(kept))
    assert steady.p5_tps == pytest.approx(np.percentile(kept, 5))
    assert steady.min_tps == 0.0
    assert steady.cv_pct == pytest.approx(100 * kept.std(ddof=1) / kept.mean())
    assert steady.n_eff == pytest.approx(kept.size / steady.tau)
    assert steady.stall_threshold_tps == pytest.approx(0.1 * steady.median_tps)
    stalls = [(s.start_s, s.duration_s) for s in steady.stalls]
    assert stalls == [(warmup_phase_s + 1.5, 0.5), (warmup_phase_s + 350.0, 6.0)]
    assert steady.stalled_s == 6.5
    assert list(steady.stalls) == find_stalls(t_end_s, 0.5, tps, steady.stall_threshold_tps)


@pytest.mark.parametrize("stall_at_s", [60, 250, 350, 500])
def test_a_stall_is_neither_cut_as_warmup_nor_fails_the_run(stall_at_s: int) -> None:
    t_end_s = np.arange(1.0, RUN_S + 1.0)
    runs = MEAN_TPS + ar1(np.random.default_rng(stall_at_s), (50, RUN_S), 0.8, NOISE_SD)
    runs[:, stall_at_s : stall_at_s + 6] = 0.0
    summaries = [steady_state(t_end_s, 1.0, run) for run in runs]
    assert np.mean([s.reached and s.start_s < stall_at_s for s in summaries]) >= 0.9
    assert all(len(s.stalls) == 1 and s.stalls[0].start_s == stall_at_s for s in summaries)
    raw = [detect_warmup(run) for run in runs]  # MSER on the raw series trips over the stall
    assert np.mean([w.reached and w.cut_intervals < stall_at_s for w in raw]) < 0.5


def test_to_json_is_plain_json() -> None:
    t_end_s = np.arange(1.0, 301.0)
    tps = MEAN_TPS + ar1(np.random.default_rng(52), (1, 300), 0.8, NOISE_SD)[0]
    tps[120:126] = 100.0
    doc = steady_state(t_end_s, 1.0, tps).to_json()
    assert json.loads(json.dumps(doc, allow_nan=False)) == doc
    assert doc["stalls"] == [
        {
            "start_s": 120.0,
            "duration_s": 6.0,
            "min_tps": 100.0,
            "mean_tps": 100.0,
            "intervals": 6,
            "method": "intervals",
            "low_intervals_s": None,
            "start_range_s": None,
        }
    ]


@pytest.mark.parametrize("length", [1, 3, 12])
def test_short_series_is_summarised_not_judged(length: int) -> None:
    t_end_s = np.arange(1.0, length + 1.0)
    steady = steady_state(t_end_s, 1.0, np.full(length, 50.0))
    assert not steady.reached
    assert steady.warmup_s == 0.0
    assert steady.mean_tps == 50.0
    json.dumps(steady.to_json(), allow_nan=False)


def test_empty_or_mismatched_series_is_refused() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        steady_state([], 1.0, [])
    with pytest.raises(ValueError, match="non-empty"):
        steady_state([1.0, 2.0], 1.0, [5.0])
