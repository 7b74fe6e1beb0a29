"""The structural comparison itself (shapes.py) must tell real differences apart."""

import pytest

from tests.sysbench_compat.shapes import assert_same_structure, golden, shape


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "[ 12s ] thds: 16 tps: 1564.80 qps: 31394.35 (r/w/o: 21984.08/6272.18/3138.09) "
            "lat (ms,95%): 16.41 err/s: 1.00 reconn/s: 0.00",
            "[ Ns ] thds: N tps: N qps: N (r/w/o: N/N/N) lat (ms,N%): N err/s: N reconn/s: N",
        ),
        (
            "    transactions:                        8122   (1621.43 per sec.)",
            "transactions: N (N per sec.)",
        ),
        ("       0.381 |**********                               2", "N | N"),
        ("       0.381 |                                         2", "N | N"),
        ("sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)", "sysbench N (using ...)"),
        ("sysbench 1.0.20 (using oltplab 0.1.0)", "sysbench N (using ...)"),
    ],
)
def test_shape(line: str, expected: str) -> None:
    assert shape(line) == expected


def test_a_missing_block_is_a_difference() -> None:
    run = golden("run-histogram")
    without = run.replace("Latency histogram (values are in milliseconds)\n", "")
    with pytest.raises(AssertionError):
        assert_same_structure(without, run)
    with pytest.raises(AssertionError):
        assert_same_structure(golden("run-percentile-0"), golden("run-percentile-99"))


def test_interleaved_parallel_prepare_is_the_same() -> None:
    garbled = golden("prepare-parallel").replace(
        "Creating table 'sbtest1'...\nCreating table 'sbtest2'...\n",
        "Creating table 'sbtest1'...Creating table 'sbtest2'...\n\n",
    )
    assert garbled != golden("prepare-parallel")
    assert_same_structure(garbled, golden("prepare-parallel"), ordered=False)
    with pytest.raises(AssertionError):
        assert_same_structure(golden("prepare"), golden("prepare-parallel"), ordered=False)
