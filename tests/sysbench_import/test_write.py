"""write_run: the run directory of an imported log validates, loads, and holds the printed
numbers; what the log does not say is null or empty."""

import json
from pathlib import Path

import pytest

from oltplab._types import Json
from oltplab.documents.run import run_manifest_json
from oltplab.exceptions import ConfigError
from oltplab.rundir import load_run
from oltplab.sysbench_import import parse_log, write_run
from tests.sysbench_import import logs
from tests.test_schema import validate


def _import(text: str, out: Path, workload: str | None = None) -> Json:
    """The run directory's run.json as written: the on-disk format is what these check."""
    manifest = write_run(parse_log(text, "in.log"), out, source="in.log", workload=workload)
    raw: Json = json.loads((out / "run.json").read_text())
    assert raw == run_manifest_json(manifest)
    validate(raw)
    return raw


def test_golden_report_interval(tmp_path: Path) -> None:
    m = _import(logs.golden("run-report-interval"), tmp_path / "r", "oltp_read_write")
    assert m["tool"] == {"name": "sysbench", "version": "1.0.20"}
    assert m["imported_from"]["file"] == "in.log"
    assert m["imported_from"]["banner"] == logs.BANNER
    assert m["workload"] == {
        "name": "oltp_read_write",
        "options": {"threads": 2, "rate": 0.0, "report_interval": 1.0, "percentile": 95.0},
    }
    assert m["load"] == {
        "threads": 2,
        "time_s": None,
        "events": None,
        "rate_per_s": 0.0,
        "report_interval_s": 1.0,
        "interval_s": 1.0,
    }
    assert (m["complete"], m["stop_reason"], m["error"]) == (True, None, None)
    assert (m["started_at"], m["ended_at"], m["host"], m["argv"]) == (None, None, None, None)
    assert m["target"] == {"driver": None, "url": None, "server_version": None}
    s = m["summary"]
    assert (s["transactions"], s["tps"], s["qps"], s["duration_s"]) == (
        3988,
        1328.19,
        26602.41,
        3.002,
    )
    assert s["queries"] == {"read": 55930, "write": 15963, "other": 7983, "total": 79876}
    assert (s["errors"], s["reconnects"]) == ({"total": 7, "by_code": {}}, 0)
    assert s["latency_ms"] == {
        "min": 0.69, "mean": 1.5, "max": 8.2, "sum": 5997.03,
        "p50": None, "p95": 1.96, "p99": None, "p99.9": None,
    }  # fmt: skip
    assert s["percentile"] == {"rank": 95.0, "latency_ms": 1.96}
    assert s["percentiles"] == [{"rank": 95.0, "latency_ms": 1.96}]
    assert "histogram_ms" not in s
    assert m["threads_fairness"] == {
        "events_avg": 1994.0,
        "events_stddev": 7.0,
        "execution_time_avg_s": 2.9985,
        "execution_time_stddev_s": 0.0,
    }
    assert m["files"] == {"intervals": "intervals.csv", "hlog": "latency.hlog"}
    assert not (tmp_path / "r" / "latency.hlog").exists()  # no --histogram, no histogram
    with pytest.raises(FileNotFoundError):
        load_run(tmp_path / "r").hlog()

    df = load_run(tmp_path / "r").intervals
    assert df["t_s"].tolist() == [1.0, 2.0, 3.0]
    assert df["interval_s"].tolist() == [1.0, 1.0, 1.0]
    assert df["transactions"].tolist() == [1237, 1427, 1322]
    assert df["queries"].tolist() == [24789, 28620, 26447]
    assert df["errors"].tolist() == [3, 3, 1]
    assert df["tps"].tolist() == [1236.73, 1427.32, 1322.0]
    assert df["reads_per_s"].tolist() == [17358.23, 20048.51, 18509.99]
    assert df["lat_p95_ms"].tolist() == [2.0, 1.96, 1.96]
    assert df["threads"].tolist() == [2, 2, 2]
    assert set(df["phase"]) == {"run"}
    for column in ("lat_p50_ms", "lat_p99_ms", "lat_max_ms", "lag_mean_ms", "client_cpu_pct"):
        assert df[column].isna().all(), column
        assert column in m["imported_from"]["unknown_columns"]


def test_histogram_kept_in_run_json_and_hlog(tmp_path: Path) -> None:
    m = _import(logs.golden("run-histogram"), tmp_path / "h")
    assert m["workload"]["name"] == "unknown"
    assert m["workload"]["options"]["histogram"] is True
    rows = m["summary"]["histogram_ms"]
    assert (len(rows), rows[0], rows[13], rows[-1]) == (30, [1.295, 2], [1.667, 76], [4.652, 1])
    assert m["files"]["hlog"] == "latency.hlog"
    entries = load_run(tmp_path / "h").hlog().entries
    assert [(e.tag, e.start_s, e.interval_s) for e in entries] == [(None, 0.0, 1.002)]
    histogram = entries[0].decode()
    assert histogram.get_total_count() == 585 == m["summary"]["transactions"]
    assert histogram.get_max_value() == pytest.approx(4.652e6, rel=1e-3)
    # 265 of the 585 values are at or below 1.667 ms, 332 at or below 1.697 ms.
    assert histogram.get_value_at_percentile(50) == pytest.approx(1.697e6, rel=1e-3)


@pytest.mark.parametrize(("name", "key", "value"), [("run-percentile-99", "p99", 2.07)])
def test_percentile_under_its_key(tmp_path: Path, name: str, key: str, value: float) -> None:
    s = _import(logs.golden(name), tmp_path / "p")["summary"]
    assert {k: v for k, v in s["latency_ms"].items() if k.startswith("p")} == {
        "p50": None, "p95": None, "p99": None, "p99.9": None, key: value,
    }  # fmt: skip
    assert s["percentile"] == {"rank": 99.0, "latency_ms": value}


def test_percentile_disabled(tmp_path: Path) -> None:
    m = _import(logs.golden("run-percentile-0"), tmp_path / "p")
    assert m["workload"]["options"]["percentile"] == 0.0
    assert (m["summary"]["percentile"], m["summary"]["percentiles"]) == (None, [])
    assert m["summary"]["latency_ms"]["p95"] is None


def test_rate_mode(tmp_path: Path) -> None:
    m = _import(logs.RATE, tmp_path / "r")
    assert m["load"]["rate_per_s"] == 200.0
    assert m["workload"]["options"] == {
        "threads": 4, "rate": 200.0, "report_interval": 1.0, "percentile": 95.0, "rand_seed": 42,
    }  # fmt: skip
    assert m["summary"]["open_loop"] is None  # sysbench reports no late or dropped starts
    assert "late" in m["imported_from"]["unknown_columns"]
    assert "svc_p95_ms" in m["imported_from"]["unknown_columns"]
    df = load_run(tmp_path / "r").intervals
    assert df["backlog"].tolist() == [0, 3]
    assert df["transactions"].tolist() == [199, 203]
    assert df["errors"].tolist() == [0, 1]


def test_cut_short_with_an_unusual_percentile(tmp_path: Path) -> None:
    m = _import(logs.SUB_SECOND_CUT, tmp_path / "c")
    assert (m["complete"], m["summary"], m["threads_fairness"]) == (False, None, None)
    assert m["load"]["interval_s"] == 0.5
    assert m["workload"]["options"]["percentile"] == 90.0
    header = (tmp_path / "c" / "intervals.csv").read_text().splitlines()[0].split(",")
    assert header[-1] == "lat_p90_ms"  # after the standard columns
    df = load_run(tmp_path / "c").intervals
    assert df["t_s"].tolist() == [0.5, 1.0, 1.5]
    assert df["interval_s"].tolist() == [0.5, 0.5, 0.5]
    assert df["transactions"].tolist() == [600, 655, 0]
    assert df["queries"].tolist() == [12000, 13105, 0]
    assert df["reconnects"].tolist() == [0, 0, 1]
    assert df["lat_p90_ms"].tolist()[:2] == [1.61, 1.55]
    assert df["lat_p90_ms"].isna().tolist() == [False, False, True]  # nothing completed
    assert df["lat_p95_ms"].isna().all()


def test_fatal_error_is_incomplete(tmp_path: Path) -> None:
    m = _import(logs.FATAL, tmp_path / "f")
    assert (m["complete"], m["stop_reason"]) == (False, "error")
    assert m["error"].startswith("mysql_drv_query() returned error 2013")
    assert load_run(tmp_path / "f").intervals["lat_p99_ms"].tolist() == [2.3]


def test_refuses_a_non_empty_out_dir(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("")
    with pytest.raises(ConfigError, match="is not empty"):
        _import(logs.golden("run"), tmp_path / "taken")
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["x"]


def test_a_late_report_that_printed_the_same_time(tmp_path: Path) -> None:
    """The second [ 3s ] line did not advance the printed clock: length 0, counts 0, flagged."""
    m = _import(logs.LATE_REPORT, tmp_path / "l")
    assert m["flags"] == ["interval_times_ambiguous"]
    df = load_run(tmp_path / "l").intervals
    assert df["t_s"].tolist() == [3.0, 3.0]
    assert df["interval_s"].tolist() == [3.0, 0.0]
    assert df["transactions"].tolist() == [1342, 0]
    assert df["tps"].tolist() == [447.44, 502.19]
    assert m["summary"]["transactions"] == 1348
