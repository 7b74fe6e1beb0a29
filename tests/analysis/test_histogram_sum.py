"""Adding encoded histograms with the engine (analysis.latency.merged, engine.merge_histograms)
gives exactly what hdrh's decode + add gives: the same counts, total, min and max (but for
hdrh's taking an empty histogram's minimum as 0), on histograms of very different shapes,
empty ones and 9-byte counts among them; another shape is refused, never re-bucketed."""

import random

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram

from oltplab.analysis.latency import merged, percentiles_ms, window_latency
from oltplab.exceptions import OltpLabError
from oltplab.rundir.hlog import HIGHEST_NS, LOWEST_NS, SIGNIFICANT_DIGITS, HlogEntry


def encoded(values: list[tuple[int, int]], digits: int = SIGNIFICANT_DIGITS) -> str:
    h = HdrHistogram(LOWEST_NS, HIGHEST_NS, digits)
    for value, count in values:
        h.record_value(value, count)
    text: str = h.encode().decode("ascii")
    return text


def engine_sum(texts: list[str]) -> HdrHistogram | None:
    return merged([HlogEntry(None, float(i), 1.0, 0.0, t) for i, t in enumerate(texts)])


def hdrh_sum(texts: list[str]) -> HdrHistogram:
    total = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
    for text in texts:
        decoded = HdrHistogram.decode(text)
        # hdrh's one quirk left out: an empty histogram's get_min_value() is 0, and add()
        # takes it as the sum's minimum; the sum's true minimum is that of its values.
        if decoded.get_total_count():
            total.add(decoded)
    return total


def counts(h: HdrHistogram) -> "np.ndarray":
    n = min(h.counts_len, h.encoder.payload.counts_len)
    return np.trim_zeros(np.ctypeslib.as_array(h.counts)[:n], "b")


def assert_same(ours: HdrHistogram | None, theirs: HdrHistogram) -> None:
    assert ours is not None
    assert np.array_equal(counts(ours), counts(theirs))
    assert ours.get_total_count() == theirs.get_total_count()
    assert ours.get_min_value() == theirs.get_min_value()
    assert ours.get_max_value() == theirs.get_max_value()
    assert window_latency(ours) == window_latency(theirs)
    if ours.get_total_count():
        ranks = (50.0, 99.0, 99.99)
        assert percentiles_ms(ours, ranks) == percentiles_ms(theirs, ranks)


def intervals(seed: int) -> list[list[tuple[int, int]]]:
    """An hour-long run's worth of shapes: narrow, wide, empty (a stall), huge counts."""
    rng = random.Random(seed)
    out: list[list[tuple[int, int]]] = []
    for i in range(60):
        kind = i % 5
        if kind == 0:
            out.append([])
        elif kind == 1:
            out.append(
                [(int(rng.lognormvariate(13, 2)) + 1, rng.randint(1, 50)) for _ in range(500)]
            )
        elif kind == 2:
            out.append([(1 + rng.randrange(2048), rng.randint(1, 3)) for _ in range(300)])
        elif kind == 3:
            out.append([(HIGHEST_NS, 1), (1, 2**40 + rng.randrange(1000))])
        else:
            out.append([(250_000 + j * 997, 1000) for j in range(200)])
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sum_equals_hdrh_decode_and_add(seed: int) -> None:
    texts = [encoded(values) for values in intervals(seed)]
    assert_same(engine_sum(texts), hdrh_sum(texts))


def test_one_histogram_only_empty_ones_and_nine_byte_counts() -> None:
    one = [encoded([(1_234_567, 1)])]
    assert_same(engine_sum(one), hdrh_sum(one))
    empty = [encoded([]), encoded([])]
    total = engine_sum(empty)
    assert_same(total, hdrh_sum(empty))
    assert total is not None
    assert total.get_total_count() == 0
    huge = [encoded([(5_000, 2**55)]), encoded([(5_000, 3)])]  # a 9-byte varint
    assert_same(engine_sum(huge), hdrh_sum(huge))
    assert merged([]) is None


def test_another_shape_is_refused() -> None:
    other = [encoded([(5_000, 3)], digits=2)]
    with pytest.raises(OltpLabError, match=r"with 2 digits, not 1\.\.3600000000000 ns with 3"):
        engine_sum(other)
    with pytest.raises(OltpLabError, match="not base64"):
        engine_sum(["not base64!"])
