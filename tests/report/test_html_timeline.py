"""A timeline draws every interval over its whole span [t_s - interval_s, t_s] (t_s ends an
interval: docs/run-directory.md), the first one from the run's start at 0 s, in the tps, the
latency and the metric panels, decimated or not. Checked from the chart's data and marks."""

import itertools
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from oltplab.report.html import build_report
from oltplab.report.html.decimate import MAX_ROWS
from tests.report.synthetic_runs import Shape, write_run, write_server_csv


def _layers(doc: Any) -> list[dict[str, Any]]:
    if isinstance(doc, dict):
        found = [doc] if "mark" in doc and "encoding" in doc else []
        return found + [layer for v in doc.values() for layer in _layers(v)]
    if isinstance(doc, list):
        return [layer for v in doc for layer in _layers(v)]
    return []


def _timeline(run: Path) -> dict[str, Any]:
    (chart,) = [c for c in build_report([run]).charts if c.name.startswith("timeline-")]
    spec: dict[str, Any] = chart.spec()
    return spec


def _drawn_spans(rows: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """(from, to) of each drawn step: step-before draws a point's value from the previous
    point's x to its own."""
    xs = sorted(r["t_s"] for r in rows)
    return list(itertools.pairwise(xs))


@pytest.mark.parametrize("interval_s", [1.0, 0.5])
def test_every_interval_is_drawn_over_its_whole_span(tmp_path: Path, interval_s: float) -> None:
    shape = Shape(tps=1000.0, seconds=12, interval_s=interval_s, noise=0.05, seed=4)
    run = write_run(tmp_path / "run", shape, label="a", threads=4)
    write_server_csv(run, shape)
    intervals = pd.read_csv(run / "intervals.csv")
    origin = intervals["t_s"].iloc[0] - intervals["interval_s"].iloc[0]
    expected = [
        (round(t - i - origin, 6), round(t - origin, 6))
        for t, i in zip(intervals["t_s"], intervals["interval_s"], strict=True)
    ]
    spec = _timeline(run)
    lines = [layer for layer in _layers(spec) if layer["mark"].get("type") == "line"]
    assert lines
    assert {layer["mark"]["interpolate"] for layer in lines} == {"step-before"}
    data = spec["datasets"]
    tps = data["tps"]
    assert min(r["t_s"] for r in tps) == 0.0  # the first second is drawn from 0
    assert [(round(a, 6), round(b, 6)) for a, b in _drawn_spans(tps)] == expected
    # The value drawn over each span is that interval's tps.
    by_end = {round(r["t_s"], 6): r["tps"] for r in tps}
    for (_, end), value in zip(expected, intervals["tps"], strict=True):
        assert by_end[end] == pytest.approx(value, rel=1e-4)
    first = sorted(tps, key=lambda r: r["t_s"])[:2]
    assert first[0]["tps"] == first[1]["tps"]  # the start point holds the first value
    p95 = [r for r in data["latency"] if r["percentile"] == "p95"]
    assert [(round(a, 6), round(b, 6)) for a, b in _drawn_spans(p95)] == expected
    checkpoint = data["metric-checkpoint_age"]
    assert [(round(a, 6), round(b, 6)) for a, b in _drawn_spans(checkpoint)] == expected


def test_a_decimated_timeline_starts_at_zero_too(tmp_path: Path) -> None:
    shape = Shape(tps=500.0, seconds=3 * MAX_ROWS, noise=0.2, seed=9)
    run = write_run(tmp_path / "long", shape, label="a", threads=4)
    tps = _timeline(run)["datasets"]["tps"]
    assert len(tps) < 2 * MAX_ROWS  # decimated
    times = sorted(r["t_s"] for r in tps)
    assert times[0] == 0.0
    assert times[1] == 1.0  # the first interval kept whole, whatever its tps
    assert times[-1] == float(shape.seconds)
