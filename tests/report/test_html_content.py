"""What the report says: the numbers in its tables are the analysis JSON's, the charts'
specs have the scales and layers the issue asks for, and the images decode at their size."""

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from oltplab.analysis.run_analysis import analyse
from oltplab.analysis.sweep import sweep
from oltplab.report.html.decimate import min_max_rows
from tests.known import known
from tests.report.html_fixtures import STALL, Built, Tables
from tests.report.images import assert_drawn_images


@pytest.fixture(scope="module")
def tables(built: Built) -> dict[str, list[list[str]]]:
    parser = Tables()
    parser.feed(built.html.read_text())
    return parser.tables


def _same(cell: str, value: Any) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return cell == ""
    return float(cell) == float(value)


def test_runs_table_is_the_analysis(built: Built, tables: dict[str, list[list[str]]]) -> None:
    rows = {row[1]: row for row in tables["runs"]}
    assert len(rows) == len(built.runs)
    for path in built.runs:
        doc = analyse(path).to_document()
        row = rows[path.name]
        s, latency = known(doc.steady_state), known(doc.latency_ms)
        assert row[0] == doc.server
        assert _same(row[4], s.tps_mean)
        assert _same(row[5], known(s.tps_ci95)[0])
        assert _same(row[6], s.tps_median)
        assert _same(row[7], s.cv_pct)
        assert _same(row[8], s.warmup_s)
        assert _same(row[9], latency.p95)
        assert _same(row[10], latency.p99)
        assert _same(row[12], len(doc.stalls))


def test_sweep_table_is_the_sweep(built: Built, tables: dict[str, list[list[str]]]) -> None:
    closed = [p for p in built.runs if p.name != "sqlite-point-select"]
    points = sweep(closed).to_document().points
    rows = tables["sweep-oltp_read_write"]
    assert len(rows) == len(points)
    for row, point in zip(rows, points, strict=True):
        assert row[0] == point.server
        assert int(row[1]) == point.threads
        for cell, value in ((row[3], point.tps), (row[4], point.tps_ci_lo), (row[5], point.p95_ms)):
            assert _same(cell, value), (cell, value)


def test_relative_table_and_comparisons(tables: dict[str, list[list[str]]]) -> None:
    relative = tables["relative"]
    # The baseline's three connection counts; the SQLite run has no baseline to compare with.
    assert [int(r[1]) for r in relative] == [8, 32, 128]
    ratios = [float(r[3]) for r in relative]
    # pool-of-threads: synthesised 15% faster, against a sawtooth that costs the baseline
    # 12.5% on average: 1.15 / 0.875 = 1.31.
    assert all(1.2 < r < 1.45 for r in ratios), ratios
    assert tables["compare-pool-of-threads"]


def test_stalls_table_is_the_analysis(built: Built, tables: dict[str, list[list[str]]]) -> None:
    expected = [
        (path.name, stall.start_s, stall.duration_s, stall.min_tps)
        for path in built.runs
        for stall in analyse(path).to_document().stalls
    ]
    found = [(row[1], float(row[2]), float(row[3]), float(row[4])) for row in tables["stalls"]]
    assert sorted(found) == sorted(expected)
    assert len(found) >= 1


def test_stall_is_marked_where_it_was_synthesised(built: Built) -> None:
    chart = next(c for c in built.report.charts if c.name == "timeline-oltp_read_write-t32")
    stalls = chart.spec()["datasets"]["stalls"]
    start, length = STALL
    assert len(stalls) == 1
    # Times are from the start of the first interval; the synthesised clock starts there too.
    assert stalls[0]["start_s"] == pytest.approx(start, abs=1.0)
    assert stalls[0]["end_s"] - stalls[0]["start_s"] == pytest.approx(length, abs=1.0)


def test_specs_validate_and_have_the_scales(built: Built) -> None:
    for chart in built.report.charts:
        chart.altair().to_dict(validate=True)  # the Vega-Lite schema accepts every chart
    scaling = next(c for c in built.report.charts if c.name == "scaling-tps-oltp_read_write")
    scales = _scales(scaling.spec())
    assert {"type": "log", "base": 2} in [{k: s.get(k) for k in ("type", "base")} for s in scales]
    assert "usl" in scaling.spec()["datasets"]
    spectrum = next(c for c in built.report.charts if c.name.startswith("spectrum-"))
    nines = [p["nines"] for p in spectrum.spec()["datasets"]["spectrum"]]
    assert max(nines) >= 1000  # the spectrum reaches 99.9% and beyond when counts allow


def test_one_colour_per_config_in_every_chart(built: Built) -> None:
    seen: dict[str, str] = {}
    for chart in built.report.charts:
        for domain, colours in _colour_scales(chart.spec()):
            for config, colour in zip(domain, colours, strict=True):
                assert seen.setdefault(config, colour) == colour, (chart.name, config)
    assert len(seen) == 3


def _scales(doc: Any) -> list[dict[str, Any]]:
    if isinstance(doc, dict):
        found = [doc["scale"]] if isinstance(doc.get("scale"), dict) else []
        return found + [s for v in doc.values() for s in _scales(v)]
    if isinstance(doc, list):
        return [s for v in doc for s in _scales(v)]
    return []


def _colour_scales(doc: Any) -> list[tuple[list[str], list[str]]]:
    found = []
    if isinstance(doc, dict):
        scale = doc.get("scale") if doc.get("field") == "config" else None
        if isinstance(scale, dict) and "domain" in scale:
            found.append((scale["domain"], scale["range"]))
        for value in doc.values():
            found += _colour_scales(value)
    elif isinstance(doc, list):
        for value in doc:
            found += _colour_scales(value)
    return found


def test_png_and_svg_of_every_chart(built: Built, tmp_path: Path) -> None:
    pngs = built.report.write_images(tmp_path / "png", "png")
    svgs = built.report.write_images(tmp_path / "svg", "svg")
    assert len(pngs) == len(svgs) == len(built.report.charts)
    assert_drawn_images(pngs, svgs)


def test_decimation_keeps_a_one_interval_stall() -> None:
    n = 86_400
    tps = np.full(n, 1000.0) + np.sin(np.arange(n)) * 10
    tps[40_000] = 0.0
    tps[40_001] = 2000.0  # a spike right after the stall, in the same bucket
    frame = pd.DataFrame({"t_s": np.arange(n, dtype=float), "tps": tps, "interval_s": 1.0})
    kept = min_max_rows(frame, ["tps"])
    assert len(kept) <= 1300
    assert 0.0 in set(kept["tps"])
    assert 2000.0 in set(kept["tps"])
    assert kept["t_s"].is_monotonic_increasing


def test_a_flat_run_keeps_its_latency_panel_data(tmp_path: Path) -> None:
    """A run with no warm-up, no stall and no metric files: the latency panel is the last one
    and carries the titled x axis; its line must still be bound to the latency rows."""
    from oltplab.report.html import build_report
    from tests.report.synthetic_runs import Shape, write_run

    flat = Shape(tps=1000.0, seconds=20, warmup_share=0.0, noise=0.0)
    run = write_run(tmp_path / "flat", flat, label="flat", threads=4)
    (timeline,) = [c for c in build_report([run]).charts if c.name.startswith("timeline")]
    spec = timeline.spec()
    latency_panel = spec["vconcat"][1]
    names = {
        layer.get("data", latency_panel.get("data", {})).get("name")
        for layer in latency_panel["layer"]
    }
    assert names == {"latency"}, names
    # p95 and p99 of 20 intervals, and of the start point at 0 s (test_html_timeline.py).
    assert len(spec["datasets"]["latency"]) == 2 * (20 + 1)
