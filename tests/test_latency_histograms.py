"""The summary's percentiles agree with an independent computation from the stored
histograms, and the per-statement-kind histograms add up to the statements run."""

from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

import oltplab


def _merged(run_dir: Path, tag: str | None) -> HdrHistogram:
    """Every interval of one tag merged, decoded by the hdrh package (not by oltplab)."""
    reader = HistogramLogReader(
        str(run_dir / "latency.hlog"), HdrHistogram(1, 3_600_000_000_000, 3)
    )
    total = HdrHistogram(1, 3_600_000_000_000, 3)
    while (h := reader.get_next_interval_histogram()) is not None:
        if h.get_tag() == tag:
            total.add(h)
    reader.close()
    return total


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("lat")
    db = f"sqlite://{base / 'sb.db'}"
    oltplab.prepare("oltp_read_write", db, table_size=2000)
    result = oltplab.run(
        "oltp_read_write", db, out=base / "run", time=2, threads=2, percentile="50,95,99,99.9"
    )
    return result.path


def test_percentiles_agree_with_the_hlog(run_dir: Path) -> None:
    run = oltplab.load_run(run_dir)
    summary = run.summary
    assert summary is not None
    total = _merged(run_dir, None)
    assert total.get_total_count() == summary.transactions
    ranks = [p.rank for p in summary.percentiles]
    assert ranks == [50.0, 95.0, 99.0, 99.9]
    # Implementations round the rank of a percentile differently (ceil or nearest), so allow
    # one sample either way, then HdrHistogram's 3 significant digits.
    one_sample = 100.0 / total.get_total_count()
    for p in summary.percentiles:
        low_ms = total.get_value_at_percentile(max(p.rank - one_sample, 0.0)) / 1e6
        high_ms = total.get_value_at_percentile(min(p.rank + one_sample, 100.0)) / 1e6
        assert low_ms * 0.998 <= p.latency_ms <= high_ms * 1.002, p
    assert summary.latency_ms.p95 == summary.percentiles[1].latency_ms


def test_statement_kind_histograms_add_up(run_dir: Path) -> None:
    summary = oltplab.load_run(run_dir).summary
    assert summary is not None
    n = summary.transactions
    # sysbench's oltp_read_write per transaction; failed attempts' statements are not
    # timed (only completed statements are), so with no errors the counts are exact.
    assert summary.errors.total == 0
    expected = {"point_selects": 10, "simple_ranges": 1, "sum_ranges": 1, "order_ranges": 1}
    expected |= {"distinct_ranges": 1, "index_updates": 1, "non_index_updates": 1}
    expected |= {"deletes": 1, "inserts": 1, "begin": 1, "commit": 1}
    for kind, per_txn in expected.items():
        assert _merged(run_dir, kind).get_total_count() == per_txn * n, kind
    statements = sum(_merged(run_dir, k).get_total_count() for k in expected)
    assert statements == summary.queries.total
