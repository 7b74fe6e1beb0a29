import pytest

from oltplab.rundir.intervals import COLUMNS, IntervalRow, csv_cells
from tests import synthetic

EXPECTED_COLUMNS = [
    "t_s",
    "tps",
    "qps",
    "reads_per_s",
    "writes_per_s",
    "other_per_s",
    "lat_p50_ms",
    "lat_p95_ms",
    "lat_p99_ms",
    "lat_max_ms",
    "errors_per_s",
    "reconnects_per_s",
    "interval_s",
    "transactions",
    "queries",
    "errors",
    "reconnects",
    "threads",
    "phase",
    "svc_p50_ms",
    "svc_p95_ms",
    "svc_p99_ms",
    "svc_max_ms",
    "lag_mean_ms",
    "lag_max_ms",
    "backlog",
    "late",
    "dropped",
    "client_cpu_pct",
    "step",
]


def test_open_loop_columns_come_from_the_event() -> None:
    event = synthetic.interval_event(2.0, interval_s=1.0, transactions=10)
    event |= {
        "phase": "warmup",
        "service_latency_ns": {"p50": 1e6, "p95": 2e6, "p99": 3e6, "max": 4e6},
        "lag_mean_ns": 500_000,
        "lag_max_ns": 9_000_000,
        "backlog": 7,
        "late": 3,
        "dropped": 2,
    }
    row = IntervalRow.from_event(event)
    assert row.phase == "warmup"
    assert (row.svc_p50_ms, row.svc_max_ms) == (1.0, 4.0)
    assert (row.lag_mean_ms, row.lag_max_ms) == (0.5, 9.0)
    assert (row.backlog, row.late, row.dropped) == (7, 3, 2)
    closed = IntervalRow.from_event(synthetic.interval_event(2.0, interval_s=1.0, transactions=10))
    assert closed.svc_p95_ms is None
    assert closed.phase == "run"
    assert closed.step is None
    assert csv_cells(closed)[-1] == ""


def test_a_step_plans_step_is_the_last_column() -> None:
    event = synthetic.interval_event(2.0, interval_s=1.0, transactions=10) | {"step": 2}
    row = IntervalRow.from_event(event)
    assert row.step == 2
    assert csv_cells(row)[-1] == "2"


def test_columns_in_the_documented_order() -> None:
    assert list(COLUMNS) == EXPECTED_COLUMNS


def test_rates_divide_by_the_measured_interval() -> None:
    event = synthetic.interval_event(2.0, interval_s=0.5, transactions=100, errors=3)
    row = IntervalRow.from_event(event)
    assert row.tps == 200
    assert row.qps == 20 * 200
    assert (row.reads_per_s, row.writes_per_s, row.other_per_s) == (2800, 800, 400)
    assert row.errors_per_s == 6
    assert row.queries == 2000
    assert row.lat_p95_ms == pytest.approx(event["latency_ns"]["p95"] / 1e6)
    assert row.threads == 2


def test_zero_throughput_interval_is_kept_with_empty_latency() -> None:
    row = IntervalRow.from_event(synthetic.interval_event(3.0, transactions=0))
    cells = dict(zip(COLUMNS, csv_cells(row), strict=True))
    assert cells["tps"] == "0"
    assert cells["transactions"] == "0"
    assert cells["lat_p95_ms"] == cells["lat_max_ms"] == ""


def test_csv_cells_keep_ns_precision_for_latency() -> None:
    event = synthetic.interval_event(1.0, transactions=1)
    event["latency_ns"] |= {"p50": 12_345, "max": 1_000_000}
    cells = dict(zip(COLUMNS, csv_cells(IntervalRow.from_event(event)), strict=True))
    assert cells["lat_p50_ms"] == "0.012345"
    assert cells["lat_max_ms"] == "1"
    assert cells["t_s"] == "1"
    assert cells["interval_s"] == "1"
