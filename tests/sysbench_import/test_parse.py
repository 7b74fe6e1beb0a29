"""parse_log on real sysbench 1.0.20 output and on synthetic variants: every number."""

from dataclasses import replace

import pytest

from oltplab.exceptions import ConfigError
from oltplab.report import sysbench_text
from oltplab.rundir.intervals import IntervalRow
from oltplab.sysbench_import.parse import (
    FinalReport,
    IntervalLine,
    Preamble,
    parse_log,
)
from tests.sysbench_import import logs

PREAMBLE_1 = Preamble(
    banner=logs.BANNER,
    version="1.0.20",
    threads=1,
    rate_per_s=0.0,
    report_interval_s=0.0,
    rand_seed=None,
    warmup_s=None,
)


def _report(**numbers: float | None) -> FinalReport:
    """A final report with no errors or reconnects; `numbers` gives the rest."""
    quiet = {"errors": 0, "errors_per_s": 0.0, "reconnects": 0, "reconnects_per_s": 0.0}
    return FinalReport(**(quiet | numbers))  # type: ignore[arg-type]


def test_golden_run() -> None:
    log = parse_log(logs.golden("run"), "run.txt")
    assert log.preamble == PREAMBLE_1
    assert (log.intervals, log.histogram_ms, log.fatal, log.complete) == ((), None, None, True)
    assert log.report == _report(
        reads=16380, writes=4680, other=2340, queries_total=23400,
        transactions=1170, tps=584.32, queries=23400, qps=11686.38,
        total_time_s=2.0014, events=1170,
        latency_min_ms=0.72, latency_avg_ms=1.71, latency_max_ms=4.73, latency_sum_ms=1998.83,
        percentile=95.0, latency_pct_ms=2.03,
        events_avg=1170.0, events_sd=0.0, time_avg_s=1.9988, time_sd_s=0.0,
    )  # fmt: skip


def test_golden_report_interval() -> None:
    log = parse_log(logs.golden("run-report-interval"), "x")
    assert log.preamble == Preamble(logs.BANNER, "1.0.20", 2, 0.0, 1.0, None, None)
    assert log.intervals == (
        IntervalLine(1.0, 2, 1236.73, 24788.62, 17358.23, 4951.93, 2478.46, 95, 2.00, 3.00, 0.0),
        IntervalLine(2.0, 2, 1427.32, 28620.43, 20048.51, 5714.28, 2857.64, 95, 1.96, 3.00, 0.0),
        IntervalLine(3.0, 2, 1322.00, 26446.99, 18509.99, 5293.00, 2644.00, 95, 1.96, 1.00, 0.0),
    )
    assert log.report == _report(
        reads=55930, writes=15963, other=7983, queries_total=79876,
        transactions=3988, tps=1328.19, queries=79876, qps=26602.41,
        errors=7, errors_per_s=2.33,
        total_time_s=3.0020, events=3988,
        latency_min_ms=0.69, latency_avg_ms=1.50, latency_max_ms=8.20, latency_sum_ms=5997.03,
        percentile=95.0, latency_pct_ms=1.96,
        events_avg=1994.0, events_sd=7.00, time_avg_s=2.9985, time_sd_s=0.0,
    )  # fmt: skip


def test_golden_histogram() -> None:
    log = parse_log(logs.golden("run-histogram"), "x")
    assert log.histogram_ms is not None
    assert len(log.histogram_ms) == 30
    assert log.histogram_ms[:4] == ((1.295, 2), (1.319, 1), (1.343, 1), (1.392, 2))
    assert log.histogram_ms[13] == (1.667, 76)
    assert log.histogram_ms[-3:] == ((3.304, 1), (3.748, 1), (4.652, 1))
    assert sum(count for _, count in log.histogram_ms) == 585  # every event
    assert log.report == _report(
        reads=8190, writes=2340, other=1170, queries_total=11700,
        transactions=585, tps=583.70, queries=11700, qps=11674.06,
        total_time_s=1.0016, events=585,
        latency_min_ms=1.28, latency_avg_ms=1.71, latency_max_ms=4.62, latency_sum_ms=999.01,
        percentile=95.0, latency_pct_ms=1.89,
        events_avg=585.0, events_sd=0.0, time_avg_s=0.9990, time_sd_s=0.0,
    )  # fmt: skip


def test_golden_percentiles() -> None:
    p99 = parse_log(logs.golden("run-percentile-99"), "x")
    assert p99.preamble == replace(PREAMBLE_1, rand_seed=7)
    assert p99.report == _report(
        reads=8722, writes=2492, other=1246, queries_total=12460,
        transactions=623, tps=621.94, queries=12460, qps=12438.78,
        total_time_s=1.0008, events=623,
        latency_min_ms=0.66, latency_avg_ms=1.60, latency_max_ms=4.78, latency_sum_ms=998.92,
        percentile=99.0, latency_pct_ms=2.07,
        events_avg=623.0, events_sd=0.0, time_avg_s=0.9989, time_sd_s=0.0,
    )  # fmt: skip
    disabled = parse_log(logs.golden("run-percentile-0"), "x")
    assert disabled.report == _report(
        reads=8876, writes=2536, other=1268, queries_total=12680,
        transactions=634, tps=632.16, queries=12680, qps=12643.26,
        total_time_s=1.0019, events=634,
        latency_min_ms=0.71, latency_avg_ms=1.58, latency_max_ms=4.93, latency_sum_ms=1001.14,
        percentile=None, latency_pct_ms=None,
        events_avg=634.0, events_sd=0.0, time_avg_s=1.0011, time_sd_s=0.0,
    )  # fmt: skip


def test_rate_mode() -> None:
    log = parse_log(logs.RATE, "x")
    assert log.preamble == Preamble(logs.BANNER, "1.0.20", 4, 200.0, 1.0, 42, None)
    assert log.intervals == (
        IntervalLine(1.0, 4, 198.93, 3984.55, 2789.04, 797.72, 397.86, 95, 3.55, 0.0, 0.0, 0, 1),
        IntervalLine(2.0, 4, 203.01, 4057.26, 2841.18, 810.05, 406.03, 95, 3.43, 1.0, 0.0, 3, 4),
    )
    assert log.report == FinalReport(
        reads=5628, writes=1608, other=804, queries_total=8040,
        transactions=402, tps=200.78, queries=8040, qps=4015.62,
        errors=1, errors_per_s=0.50, reconnects=0, reconnects_per_s=0.0,
        total_time_s=2.0022, events=402,
        latency_min_ms=1.02, latency_avg_ms=2.21, latency_max_ms=12.87, latency_sum_ms=888.42,
        percentile=95.0, latency_pct_ms=3.49,
        events_avg=100.5, events_sd=2.29, time_avg_s=0.2221, time_sd_s=0.01,
    )  # fmt: skip


def test_sub_second_intervals_in_a_log_cut_short() -> None:
    log = parse_log(logs.SUB_SECOND_CUT, "x")
    assert log.preamble == Preamble(logs.BANNER, "1.0.20", 2, 0.0, 0.5, None, None)
    assert log.intervals == (
        IntervalLine(0.5, 2, 1200.0, 24000.0, 16800.0, 4800.0, 2400.0, 90, 1.61, 0.0, 0.0),
        IntervalLine(1.0, 2, 1310.5, 26210.0, 18347.0, 5242.0, 2621.0, 90, 1.55, 2.0, 0.0),
        IntervalLine(1.5, 2, 0.0, 0.0, 0.0, 0.0, 0.0, 90, 0.0, 0.0, 2.0),
    )
    assert (log.report, log.complete, log.histogram_ms, log.fatal) == (None, False, None, None)


def test_fatal_error() -> None:
    log = parse_log(logs.FATAL, "x")
    assert log.fatal == (
        "mysql_drv_query() returned error 2013 (Lost connection to MySQL server during query) "
        "for query 'COMMIT'"
    )
    assert [line.t_s for line in log.intervals] == [1.0]
    assert log.intervals[0].percentile == 99
    assert log.report is None


def test_lines_printed_by_sysbench_text_read_back() -> None:
    """The parser is the inverse of report/sysbench_text.py (oltplab's own printer)."""
    text = sysbench_text.preamble(
        "sysbench 1.0.20 (using oltplab 0.1.0)",
        threads=3,
        report_interval_s=0.25,
        rate_per_s=50,
        rand_seed=0,
    )
    row = IntervalRow(
        0.75, 48.0, 960.0, 672.0, 192.0, 96.0, None, None, None, None, 4.0, 0.0,
        0.25, 12, 240, 1, 0, 3, backlog=2,
    )  # fmt: skip
    text += sysbench_text.THREADS_STARTED
    text += sysbench_text.interval_line(row, percentile=99.9, latency_pct_ms=7.5, decimals=2)
    text += "\n" + sysbench_text.queue_line(row, in_flight=3, decimals=2) + "\n"
    log = parse_log(text, "x")
    assert log.preamble == Preamble(
        "sysbench 1.0.20 (using oltplab 0.1.0)", "1.0.20", 3, 50.0, 0.25, None, None
    )
    assert log.intervals == (
        IntervalLine(0.75, 3, 48.0, 960.0, 672.0, 192.0, 96.0, 99.9, 7.5, 4.0, 0.0, 2, 3),
    )


def test_text_that_is_not_sysbench_output_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"^notes\.txt is not sysbench output: "):
        parse_log("hello\nworld\n", "notes.txt")
    with pytest.raises(ConfigError):
        parse_log("", "empty.log")
