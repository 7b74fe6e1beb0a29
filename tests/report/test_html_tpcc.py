"""The report of real TPC-C runs (SQLite, and MariaDB through the tests' server): the chart
'Latency per transaction type' holds the five types in the spec's order (and `statement`),
never TPC-C's counters, each with the latency of its steady-window histograms, added here
with hdrh itself; and the TPC-C tables hold run.json's tpmC and per-type numbers."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram

import oltplab
from oltplab.analysis.latency import window_latency
from oltplab.documents.codec import fields_of
from oltplab.documents.run import TPCC_TYPES
from oltplab.report.html import Report, build_report
from oltplab.report.html.columns import compact
from oltplab.rundir.hlog import HIGHEST_NS, LOWEST_NS, SIGNIFICANT_DIGITS, read_hlog
from tests.known import known
from tests.report.html_fixtures import Tables


@pytest.fixture(scope="module", params=["sqlite", "mariadb"])
def tpcc_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    root = tmp_path_factory.mktemp(f"tpcc-{request.param}")
    if request.param == "sqlite":
        url = f"sqlite://{root / 'tpcc.db'}"
    else:
        url = request.getfixturevalue("mariadb_empty_db").url
    oltplab.prepare("tpcc", url, scale=1, threads=2)
    out = root / "run"
    oltplab.run("tpcc", url, out=out, scale=1, threads=4, time=8, report_interval=1)
    yield out
    oltplab.cleanup("tpcc", url, scale=1)


@pytest.fixture(scope="module")
def report(tpcc_run: Path) -> Report:
    return build_report([tpcc_run])


def test_the_chart_has_the_five_types_with_their_steady_window_latency(
    tpcc_run: Path, report: Report
) -> None:
    (chart,) = [c for c in report.charts if c.name.startswith("statements-")]
    assert chart.title.startswith("Latency per transaction type")
    rows = chart.rows()["statements"]
    assert [r["kind"] for r in rows] == [*TPCC_TYPES, "statement"]
    whole = report.data.runs[0].analysis.whole
    assert whole is not None
    window = whole.window
    entries = read_hlog(tpcc_run / "latency.hlog").entries
    for row in rows:
        total = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
        for entry in entries:
            if entry.tag == row["kind"] and window.holds(entry):
                total.add(HdrHistogram.decode(entry.encoded))
        expected = window_latency(total)
        assert row["count"] == expected.count, row
        assert row["count"] > 0
        for key, value in (("p50", expected.p50), ("p95", expected.p95), ("p99", expected.p99)):
            assert row[key] == compact(value), (row, key)


def test_the_tables_are_run_json_tpmc_and_per_type_numbers(
    tpcc_run: Path, report: Report, tmp_path: Path
) -> None:
    tpcc = known(known(report.data.runs[0].analysis.run.summary).tpcc)
    parser = Tables()
    parser.feed(report.write_html(tmp_path / "r.html").read_text())
    (total,) = parser.tables["tpcc"]
    assert float(total[4]) == tpcc.tpmC > 0
    assert float(total[5]) == tpcc.tpm_total
    by_type = {row[2]: row for row in parser.tables["tpcc-types"]}
    assert list(by_type) == list(TPCC_TYPES)
    # The engine's counts per type are the hlog's, tag for tag, over the measured time.
    entries = read_hlog(tpcc_run / "latency.hlog").entries
    for kind, row in by_type.items():
        result = fields_of(tpcc.by_type)[kind]
        assert int(row[3]) == result.count
        assert int(row[5]) == result.rollbacks
        latency = known(result.latency_ms)
        shown = (latency.p50, latency.p90, latency.p95, latency.p99, latency.max)
        assert [float(v) for v in row[7:12]] == list(shown)
        logged = 0
        for entry in entries:
            if entry.tag == kind:
                logged += HdrHistogram.decode(entry.encoded).get_total_count()
        assert logged == result.count, kind
