"""The numpy readings of a histogram equal hdrh's own, value for value, on histograms of
very different shapes (one value, a wide spread, counts in the top buckets, decoded ones)."""

import random

import pytest
from hdrh.histogram import HdrHistogram

from oltplab.analysis.latency import mean_value, value_at_percentile
from oltplab.rundir.hlog import HIGHEST_NS, LOWEST_NS, SIGNIFICANT_DIGITS

RANKS = (0.0, 1.0, 25.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 99.999, 100.0)


def histogram(values: list[tuple[int, int]]) -> HdrHistogram:
    h = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
    for value, count in values:
        h.record_value(value, count)
    return h


def shapes() -> list[list[tuple[int, int]]]:
    rng = random.Random(7)
    spread = [(int(rng.lognormvariate(13, 2)) + 1, rng.randint(1, 50)) for _ in range(2000)]
    return [
        [(1_234_567, 1)],
        [(5, 3), (HIGHEST_NS, 2)],
        spread,
        [(250_000 + i * 1000, 1000) for i in range(100)] + [(2_000_000_000, 1)],
    ]


@pytest.mark.parametrize("values", shapes())
def test_percentiles_and_mean_equal_hdrh(values: list[tuple[int, int]]) -> None:
    h = histogram(values)
    decoded = HdrHistogram.decode(h.encode())
    for subject in (h, decoded):
        for rank in RANKS:
            assert value_at_percentile(subject, rank) == subject.get_value_at_percentile(rank)
        assert mean_value(subject) == subject.get_mean_value()


def test_empty_histogram() -> None:
    h = histogram([])
    assert value_at_percentile(h, 99.0) == h.get_value_at_percentile(99.0) == 0
    assert mean_value(h) == h.get_mean_value() == 0.0
