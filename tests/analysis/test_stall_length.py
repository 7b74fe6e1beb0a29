"""A stall's start and length, measured on synthetic runs of known truth (tests/analysis/
pauses.py): the simulated server stops completing anything for L seconds, as a SIGSTOP does.
Issue 11's goal: L >= 1 s reported within +-0.3 s of L and at the right start, for 1-s and
0.5-s intervals, closed and open loop. The real-server counterparts are in
tests/drivers/test_pause_length.py."""

from pathlib import Path

import pytest

from oltplab.analysis.run_analysis import analyse
from oltplab.documents.analysis import StallDoc
from tests.analysis.pauses import Load, Pause, closed_loop, open_loop, write_run

LENGTH_TOLERANCE_S = 0.3
START_TOLERANCE_S = 0.15
CLOSED = Load()
OPEN = Load(rate_per_s=200)
# Pauses that begin anywhere in an interval, including the ones that leave no interval below
# the threshold (1.0-1.4 s across a 1-s boundary) and the one the issue reports (3 s at 12.3).
PAUSES = [
    Pause(12.3, 3.0),
    Pause(12.3, 1.0),
    Pause(12.05, 1.4),
    Pause(12.95, 1.4),
    Pause(12.5, 2.3),
    Pause(12.0, 1.0),
    Pause(12.7, 1.2),
    Pause(6.4, 5.5),
]


def _stalls(
    tmp_path: Path, load: Load, pauses: list[Pause], interval_s: float, seed: int
) -> tuple[StallDoc, ...]:
    simulate = open_loop if load.rate_per_s else closed_loop
    run = write_run(tmp_path / "run", simulate(load, pauses, seed), load, interval_s)
    return analyse(run).to_document().stalls


@pytest.mark.parametrize("interval_s", [1.0, 0.5])
@pytest.mark.parametrize("load", [CLOSED, OPEN], ids=["closed", "open"])
@pytest.mark.parametrize("pause", PAUSES, ids=lambda p: f"{p.for_s}s-at-{p.at_s}")
def test_a_pause_is_measured_to_its_true_length(
    tmp_path: Path, interval_s: float, load: Load, pause: Pause
) -> None:
    stalls = _stalls(tmp_path, load, [pause], interval_s, seed=round(pause.at_s * 100))
    assert len(stalls) == 1, stalls
    stall = stalls[0]
    assert stall.duration_s == pytest.approx(pause.for_s, abs=LENGTH_TOLERANCE_S), stall
    assert stall.start_s == pytest.approx(pause.at_s, abs=START_TOLERANCE_S), stall
    assert stall.estimated_from == "latency"
    # The stated bounds hold the true start, and are narrower than an interval and a wait.
    assert stall.start_range_s is not None
    lo, hi = stall.start_range_s
    assert lo <= pause.at_s <= hi, stall
    assert lo <= stall.start_s <= hi
    # The intervals below the threshold are kept for reference: the old measure.
    assert stall.low_intervals_s <= pause.for_s + interval_s


@pytest.mark.parametrize("pause", PAUSES, ids=lambda p: f"{p.for_s}s-at-{p.at_s}")
def test_interval_edges_off_the_grid(tmp_path: Path, pause: Pause) -> None:
    """Real interval ends are late by a few hundred microseconds, and intervals.csv rounds
    the ends and the lengths to microseconds apart: the measure must not depend on edges
    lying on the round grid. (In CI a stall's end computed from such rounded values passed
    its last interval's end by 1 µs, and the interval after the pause was taken for the
    first one after it: 2.0 s measured as 2.5 s; fixed by matching edges within _EDGE_S.)"""
    run = write_run(
        tmp_path / "run", closed_loop(CLOSED, [pause], seed=7), CLOSED, 0.5, edge_jitter_s=0.0007
    )
    stalls = analyse(run).to_document().stalls
    assert len(stalls) == 1, stalls
    assert stalls[0].duration_s == pytest.approx(pause.for_s, abs=LENGTH_TOLERANCE_S)


@pytest.mark.parametrize("interval_s", [1.0, 0.5])
@pytest.mark.parametrize("pause", [Pause(12.3, 1.4, 0.6), Pause(12.3, 3.0, 0.6)], ids=str)
def test_a_slow_resumption_does_not_hide_the_pause(
    tmp_path: Path, interval_s: float, pause: Pause
) -> None:
    """A host slow to resume after SIGCONT (tests/drivers/test_pause_length.py under a load
    average of 90) leaves the interval the pause ended in below the threshold: the longest
    wait, the pause's own, then ends inside the stall's intervals, not in the one after them,
    whose longest wait is only the slow catch-up's (a 1.4-s pause was reported as 0.2 s from
    3.8 s)."""
    stalls = _stalls(tmp_path, CLOSED, [pause], interval_s, seed=11)
    assert len(stalls) == 1, stalls
    stall = stalls[0]
    assert stall.duration_s == pytest.approx(pause.for_s, abs=LENGTH_TOLERANCE_S), stall
    assert stall.start_s == pytest.approx(pause.at_s, abs=START_TOLERANCE_S), stall
    assert stall.start_range_s is not None
    lo, hi = stall.start_range_s
    assert lo <= pause.at_s <= hi, stall


def test_the_issues_example_is_no_longer_two_seconds(tmp_path: Path) -> None:
    """3 s from 12.3 s with 1-s intervals: two empty intervals, so 2.0 s before."""
    stall = _stalls(tmp_path, CLOSED, [Pause(12.3, 3.0)], 1.0, seed=1)[0]
    assert stall.low_intervals_s == pytest.approx(2.0)
    assert stall.duration_s == pytest.approx(3.0, abs=0.1)


@pytest.mark.parametrize("load", [CLOSED, OPEN], ids=["closed", "open"])
def test_two_pauses_are_two_stalls(tmp_path: Path, load: Load) -> None:
    pauses = [Pause(5.3, 1.5), Pause(20.6, 2.0)]
    stalls = _stalls(tmp_path, load, pauses, 0.5, seed=7)
    assert len(stalls) == 2, stalls
    for stall, pause in zip(stalls, pauses, strict=True):
        assert stall.duration_s == pytest.approx(pause.for_s, abs=LENGTH_TOLERANCE_S)
        assert stall.start_s == pytest.approx(pause.at_s, abs=START_TOLERANCE_S)


@pytest.mark.parametrize("interval_s", [1.0, 0.5])
@pytest.mark.parametrize("load", [CLOSED, OPEN], ids=["closed", "open"])
def test_no_pause_no_stall(tmp_path: Path, interval_s: float, load: Load) -> None:
    assert _stalls(tmp_path, load, [], interval_s, seed=3) == ()


def test_one_slow_transaction_is_not_a_stall(tmp_path: Path) -> None:
    """One connection waiting 3 s for a lock while the others go on: the longest wait jumps,
    but the load did not stop, and the histogram shows a single waiter."""
    done = [*closed_loop(CLOSED, [], seed=5), (15.3, 3.0)]
    run = write_run(tmp_path / "run", done, CLOSED, 1.0)
    assert analyse(run).to_document().stalls == ()


def test_an_open_loop_queue_draining_is_not_a_new_stall(tmp_path: Path) -> None:
    """At 70% of capacity (350 of ~500 tps) the backlog of a 3-s pause takes seconds to drain,
    with long waits in every interval of the catch-up: still one stall."""
    busy = Load(rate_per_s=350)
    stalls = _stalls(tmp_path, busy, [Pause(12.3, 3.0)], 0.5, seed=9)
    assert len(stalls) == 1, stalls
    assert stalls[0].duration_s == pytest.approx(3.0, abs=LENGTH_TOLERANCE_S)
