"""latency.hlog must be readable by an independent HdrHistogram implementation."""

from pathlib import Path

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

from oltplab.rundir import hlog
from tests import synthetic


def _write_log(path: Path, events: list[dict[str, object]]) -> None:
    lines = hlog.header_lines(synthetic.STARTED_AT, "oltplab test")
    for event in events:
        lines += [hlog.interval_line(h) for h in event["histograms"]]  # type: ignore[attr-defined]
    path.write_text("\n".join(lines) + "\n")


def test_header_is_the_standard_one() -> None:
    lines = hlog.header_lines(synthetic.STARTED_AT, "oltplab 1.0")
    assert lines[1] == "#[Histogram log format version 1.3]"
    assert lines[2] == (
        "#[StartTime: 1763700000.500 (seconds since epoch), Fri Nov 21 04:40:00 UTC 2025]"
    )
    assert lines[3] == "#[BaseTime: 1763700000.500 (seconds since epoch)]"
    assert (
        lines[4]
        == '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"'
    )


def test_interval_lines_tag_statement_kinds_and_give_max_in_ms() -> None:
    histogram = {
        "tag": None,
        "start_s": 1.0,
        "interval_s": 1.0,
        "max_ns": 1_234_567,
        "encoded": "HISTFAAA",
    }
    assert hlog.interval_line(histogram) == "1.000,1.000,1.235,HISTFAAA"
    assert hlog.interval_line(histogram | {"tag": "point_selects"}).startswith(
        "Tag=point_selects,1.000,"
    )
    assert hlog.interval_line(histogram | {"tag": "a b,c"}).startswith("Tag=a_b_c,")


def test_hdrh_reader_decodes_every_interval(tmp_path: Path) -> None:
    events = synthetic.intervals(3)
    path = tmp_path / "latency.hlog"
    _write_log(path, events)
    reader = HistogramLogReader(str(path), HdrHistogram(1, synthetic.HIGHEST_NS, 3))
    decoded = []
    while (h := reader.get_next_interval_histogram()) is not None:
        decoded.append(h)
    reader.close()
    untagged = [h for h in decoded if h.get_tag() is None]
    assert [h.get_total_count() for h in untagged] == [100, 100, 100]
    assert {h.get_tag() for h in decoded} == {None, "point_selects"}
    # Timestamps are absolute once BaseTime is applied (the reader works in ms).
    assert untagged[0].get_start_time_stamp() == (synthetic.STARTED_AT + 0.0) * 1000
    assert reader.get_start_time_sec() == synthetic.STARTED_AT


def test_read_hlog_without_hdrh(tmp_path: Path) -> None:
    events = synthetic.intervals(2)
    path = tmp_path / "latency.hlog"
    _write_log(path, events)
    log = hlog.read_hlog(path)
    assert log.start_time_s == log.base_time_s == synthetic.STARTED_AT
    assert log.tags == ["point_selects"]
    untagged = log.tagged(None)
    assert [(e.start_s, e.interval_s) for e in untagged] == [(0.0, 1.0), (1.0, 1.0)]
    assert untagged[0].encoded == events[0]["histograms"][0]["encoded"]
    assert untagged[0].decode().get_total_count() == 100
