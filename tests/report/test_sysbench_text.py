"""sysbench's formats, compared with the exact samples in reference/sysbench.md §2.5-2.7."""

import dataclasses
from typing import Any

import pytest

from oltplab.report import sysbench_text
from oltplab.report.sysbench_text import CumulativeStats
from oltplab.rundir.intervals import IntervalRow
from tests import synthetic

# §2.6: MariaDB, 16 threads, 5 s. sysbench divides by its checkpoint timer (5.009153 s)
# and prints its exec timer (5.0088 s); CumulativeStats keeps both, as sb_stat_t does.
SAMPLE_FINAL = """\
SQL statistics:
    queries performed:
        read:                            113736
        write:                           32490
        other:                           16246
        total:                           162472
    transactions:                        8122   (1621.43 per sec.)
    queries:                             162472 (32435.02 per sec.)
    ignored errors:                      2      (0.40 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          5.0088s
    total number of events:              8122

Latency (ms):
         min:                                    1.18
         avg:                                    9.86
         max:                                   39.50
         95th percentile:                       15.55
         sum:                                80055.70

Threads fairness:
    events (avg/stddev):           507.6250/10.34
    execution time (avg/stddev):   5.0035/0.00

"""

SAMPLE_STATS = CumulativeStats(
    time_total_s=5.0088,
    time_interval_s=5.009153,
    events=8122,
    reads=113736,
    writes=32490,
    other=16246,
    errors=2,
    reconnects=0,
    latency_min_ms=1.18,
    latency_avg_ms=9.857,
    latency_max_ms=39.50,
    latency_sum_ms=80055.70,
    percentile=95,
    latency_pct_ms=15.55,
    events_avg=507.625,
    events_stddev=10.34,
    time_avg_s=5.0035,
    time_stddev_s=0.001,
)


def test_final_report_matches_sysbench_byte_for_byte() -> None:
    assert sysbench_text.final_report(SAMPLE_STATS) == SAMPLE_FINAL


def test_percentile_zero_prints_disabled() -> None:
    stats = CumulativeStats(**{**SAMPLE_STATS.__dict__, "percentile": 0})
    lines = sysbench_text.final_report(stats).splitlines()
    assert "         percentile stats:               disabled" in lines
    assert not any("th percentile" in line for line in lines)


@pytest.mark.parametrize(
    ("percentile", "label"),
    [
        (5, "          5th percentile:"),  # %3d pads to three digits, as sysbench
        (99, "         99th percentile:"),
        (100, "        100th percentile:"),
        (99.9, "       99.9th percentile:"),  # oltplab allows fractions: same column
    ],
)
def test_percentile_line_keeps_sysbench_columns(percentile: float, label: str) -> None:
    stats = CumulativeStats(**{**SAMPLE_STATS.__dict__, "percentile": percentile})
    line = next(x for x in sysbench_text.final_report(stats).splitlines() if "th percentile" in x)
    assert line == f"{label} {15.55:27.2f}"
    assert len(line) == len("         min: ") + 39


def _row(**rates: Any) -> IntervalRow:
    row = IntervalRow(
        t_s=2.0004,
        tps=0.0,
        qps=0.0,
        reads_per_s=0.0,
        writes_per_s=0.0,
        other_per_s=0.0,
        errors_per_s=0.0,
        lat_p50_ms=None,
        lat_p95_ms=None,
        lat_p99_ms=None,
        lat_max_ms=None,
        reconnects_per_s=0.0,
        interval_s=1.0,
        transactions=0,
        queries=0,
        errors=0,
        reconnects=0,
        threads=16,
    )
    return dataclasses.replace(row, **rates)


def test_interval_line_matches_sysbench_byte_for_byte() -> None:
    # §2.5's observed line.
    row = _row(
        tps=1564.80,
        qps=31394.35,
        reads_per_s=21984.08,
        writes_per_s=6272.18,
        other_per_s=3138.09,
        errors_per_s=1.0,
    )
    line = sysbench_text.interval_line(row, percentile=95, latency_pct_ms=16.41)
    assert line == (
        "[ 2s ] thds: 16 tps: 1564.80 qps: 31394.35 (r/w/o: 21984.08/6272.18/3138.09) "
        "lat (ms,95%): 16.41 err/s: 1.00 reconn/s: 0.00"
    )


def test_sub_second_intervals_print_their_decimals() -> None:
    row = _row()
    assert sysbench_text.interval_line(
        row, percentile=99.9, latency_pct_ms=0, decimals=sysbench_text.timestamp_decimals(0.5)
    ).startswith("[ 2.0s ] thds: 16 tps: 0.00 ")
    assert "lat (ms,99.9%): 0.00" in sysbench_text.interval_line(
        row, percentile=99.9, latency_pct_ms=0
    )


@pytest.mark.parametrize(
    ("interval_s", "decimals"), [(1.0, 0), (10.0, 0), (0.5, 1), (0.1, 1), (0.25, 2), (0.125, 3)]
)
def test_timestamp_decimals(interval_s: float, decimals: int) -> None:
    assert sysbench_text.timestamp_decimals(interval_s) == decimals


def test_preamble_matches_sysbench() -> None:
    # §2.6's preamble, with the blank lines sysbench's log_text calls add (print_run_mode).
    text = sysbench_text.preamble(
        "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)",
        threads=2,
        report_interval_s=1,
        rate_per_s=0,
        rand_seed=0,
    )
    assert text + sysbench_text.THREADS_STARTED == (
        "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n"
        "\n"
        "Running the test with following options:\n"
        "Number of threads: 2\n"
        "Report intermediate results every 1 second(s)\n"
        "Initializing random number generator from current time\n"
        "\n"
        "\n"
        "Initializing worker threads...\n"
        "\n"
        "Threads started!\n"
        "\n"
    )


def test_preamble_optional_lines() -> None:
    text = sysbench_text.preamble("b", threads=8, report_interval_s=0, rate_per_s=100, rand_seed=42)
    lines = text.splitlines()
    assert "Target transaction rate: 100/sec" in lines
    assert "Initializing random number generator from seed (42)." in lines
    assert not any(line.startswith("Report intermediate") for line in lines)
    assert lines.index("Target transaction rate: 100/sec") < lines.index("Number of threads: 8") + 2


def test_histogram_block_matches_sysbench_format() -> None:
    text = sysbench_text.histogram_block([[0.002, 264520], [0.5, 0], [1.234, 132260], [3.0, 1]])
    assert text == (
        "Latency histogram (values are in milliseconds)\n"
        "       value  ------------- distribution ------------- count\n"
        "       0.002 |****************************************" + " 264520\n"
        "       1.234 |********************" + " " * 20 + " 132260\n"
        "       3.000 |" + " " * 40 + " 1\n"
        " \n"
    )


def test_empty_histogram_prints_only_the_title() -> None:
    assert sysbench_text.histogram_block([]) == (
        "Latency histogram (values are in milliseconds)\n \n"
    )


def test_stats_from_a_manifest() -> None:
    from oltplab.rundir.manifest import final_manifest, initial_manifest

    events = synthetic.intervals(3)
    result = synthetic.run_result(events)
    manifest = final_manifest(
        initial_manifest(
            workload="oltp_read_write", options=result["options"], db_url="sqlite:///x", argv=None
        ),
        result,
    )
    stats = CumulativeStats.from_manifest(manifest)
    assert stats.events == 300
    assert stats.reads == 14 * 300
    assert stats.time_total_s == stats.time_interval_s == 3.0
    assert stats.percentile == 95
    assert stats.latency_sum_ms == pytest.approx(sum(v for e in events for v in e["_values"]) / 1e6)
    assert stats.events_avg == 150
    report = sysbench_text.final_report(stats)
    assert "    transactions:                        300    (100.00 per sec.)" in report
