"""Stall episodes and the metrics that moved with them (methodology.md §2)."""

import numpy as np
import pandas as pd
import pytest

from oltplab.analysis import Stall, coincident_metrics, find_stalls
from oltplab.documents.analysis import MovedMetric
from tests.analysis.series import FloatArray, ar1

MEAN_TPS = 10_000.0
RUN_S = 300


def timeline(seed: int) -> tuple[FloatArray, FloatArray]:
    """300 one-second intervals of AR(1) throughput; t_s is each interval's end."""
    t_end_s = np.arange(1.0, RUN_S + 1.0)
    tps = MEAN_TPS + ar1(np.random.default_rng(seed), (1, RUN_S), 0.8, 0.03 * MEAN_TPS)[0]
    return t_end_s, tps


def stall_at(tps: FloatArray, start_s: int, duration_s: int, level_tps: float) -> FloatArray:
    out = tps.copy()
    out[start_s : start_s + duration_s] = level_tps  # row i covers (i, i+1] seconds
    return out


def test_injected_stall_is_found_with_exact_start_and_length() -> None:
    t_end_s, tps = timeline(40)
    tps = stall_at(tps, 120, 6, 0.01 * MEAN_TPS)
    stalls = find_stalls(t_end_s, 1.0, tps, 0.1 * float(np.median(tps)))
    assert stalls == [Stall(120.0, 6.0, 0.01 * MEAN_TPS, 0.01 * MEAN_TPS, 6)]
    assert stalls[0].end_s == 126.0


def test_separate_stalls_are_separate_episodes() -> None:
    t_end_s, tps = timeline(41)
    tps = stall_at(stall_at(tps, 50, 3, 0.0), 200, 10, 0.05 * MEAN_TPS)
    tps[204] = 0.0  # a zero inside an episode is part of it
    stalls = find_stalls(t_end_s, 1.0, tps, 0.1 * MEAN_TPS)
    assert [(s.start_s, s.duration_s, s.intervals) for s in stalls] == [
        (50.0, 3.0, 3),
        (200.0, 10.0, 10),
    ]
    assert stalls[1].min_tps == 0.0
    assert stalls[1].mean_tps == pytest.approx(0.05 * MEAN_TPS * 9 / 10)


def test_stall_at_the_end_is_reported() -> None:
    t_end_s, tps = timeline(42)
    tps = stall_at(tps, RUN_S - 4, 4, 0.0)
    stalls = find_stalls(t_end_s, 1.0, tps, 0.1 * MEAN_TPS)
    assert [(s.start_s, s.duration_s) for s in stalls] == [(RUN_S - 4.0, 4.0)]


def test_a_gap_in_the_timeline_splits_an_episode_and_lengths_are_per_row() -> None:
    t_end_s = np.array([0.5, 1.0, 1.5, 3.0, 3.5])  # the row ending at 2.0 s is missing
    tps = np.array([100.0, 0.0, 0.0, 0.0, 100.0])
    stalls = find_stalls(t_end_s, [0.5, 0.5, 0.5, 0.5, 0.5], tps, 10.0)
    assert [(s.start_s, s.duration_s) for s in stalls] == [(0.5, 1.0), (2.5, 0.5)]


def test_no_stall_in_steady_noise() -> None:
    t_end_s, tps = timeline(43)
    assert find_stalls(t_end_s, 1.0, tps, 0.1 * MEAN_TPS) == []


def test_coincident_metrics_name_what_moved() -> None:
    rng = np.random.default_rng(44)
    t_end_s = np.arange(1.0, RUN_S + 1.0)
    metrics = pd.DataFrame(
        {
            "t_s": t_end_s,
            "cpu_user_pct": rng.normal(60.0, 3.0, RUN_S),  # unaffected
            "iowait_pct": rng.normal(2.0, 0.2, RUN_S),
            "fsyncs_per_s": np.zeros(RUN_S),
            "host": "db1",  # not numeric: ignored
        }
    )
    during = (t_end_s > 120) & (t_end_s <= 126)
    metrics.loc[during, "iowait_pct"] = 40.0
    metrics.loc[during, "fsyncs_per_s"] = 3.0
    found = coincident_metrics(Stall(120.0, 6.0, 0.0, 0.0, 6), metrics, window_s=60.0)
    assert set(found) == {"iowait_pct", "fsyncs_per_s"}
    assert found["iowait_pct"].during == pytest.approx(40.0)
    assert found["iowait_pct"].outside_median == pytest.approx(2.0, rel=0.05)
    assert found["fsyncs_per_s"] == MovedMetric(during=3.0, outside_median=0.0, ratio=None)


def test_coincident_metrics_with_nothing_around_the_stall() -> None:
    metrics = pd.DataFrame({"t_s": [1000.0, 1001.0], "iowait_pct": [1.0, 50.0]})
    assert coincident_metrics(Stall(10.0, 2.0, 0.0, 0.0, 2), metrics) == {}
