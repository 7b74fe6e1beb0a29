"""Open-loop runs at several rates (real SQLite runs, two configs A and B, each at 200/s and
400/s and once in closed loop): the analysis's rate sweep, and the report's chart of latency
against throughput with both loops, each point's numbers those of the runs' own analysis."""

from pathlib import Path
from typing import Any

import pytest

import oltplab
from oltplab.analysis.run_analysis import analyse
from oltplab.analysis.sweep import rate_sweep
from oltplab.report.html import Report, build_report
from oltplab.report.html.charts.latency_throughput import CLOSED, OPEN
from tests.analysis.runs import edited_copy

RATES = (200, 400)
THREADS = 2


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("rates")
    db = f"sqlite://{root / 'sb.db'}"
    oltplab.prepare("oltp_point_select", db, table_size=1000)
    common = {"threads": THREADS, "time": 3, "report_interval": 0.25}
    out = []
    for label in ("A", "B"):
        loads: list[dict[str, Any]] = [{"rate": r, "rate_arrivals": "uniform"} for r in RATES] + [
            {}
        ]
        for n, load in enumerate(loads):
            raw = root / f"raw-{label}-{n}"
            oltplab.run("oltp_point_select", db, out=raw, **(common | load))

            def labelled(manifest: dict[str, Any], label: str = label) -> None:
                manifest["label"] = label

            out.append(edited_copy(raw, root / f"{label}-{n}", labelled))
    return out


def test_rate_points_per_config_and_rate(runs: list[Path]) -> None:
    points = rate_sweep(runs)
    assert [(p.server, p.rate_per_s) for p in points] == [
        (label, float(r)) for label in ("A", "B") for r in RATES
    ]
    for p in points:
        assert (p.workload, p.threads, p.runs, p.dropped) == ("oltp_point_select", THREADS, 1, 0)
        assert p.tps_mean == pytest.approx(p.rate_per_s, rel=0.05)
        assert p.tps_ci[0] <= p.tps_mean <= p.tps_ci[1]


@pytest.fixture(scope="module")
def report(runs: list[Path]) -> Report:
    return build_report(runs)


def test_the_chart_puts_both_loops_at_their_own_numbers(runs: list[Path], report: Report) -> None:
    (chart,) = [c for c in report.charts if c.name == "latency-throughput-oltp_point_select"]
    rows = chart.rows()["points"]
    assert sorted((r["config"], r["loop"], r["load"]) for r in rows) == sorted(
        [(c, OPEN, f"{r}/s") for c in ("A", "B") for r in RATES]
        + [(c, CLOSED, f"{THREADS} conn") for c in ("A", "B")]
    )
    by_point = {(r["config"], r["load"]): r for r in rows}
    for path in runs:
        a = analyse(path)
        assert a.whole is not None
        assert a.whole.latency_ms is not None
        load = f"{a.whole.rate_per_s:g}/s" if a.whole.rate_per_s else f"{THREADS} conn"
        row = by_point[(a.run.doc.label, load)]
        # One run per point: its steady window is the point (5 significant digits kept).
        assert row["tps"] == pytest.approx(a.whole.steady.mean_tps, rel=1e-4)
        assert row["p95_ms"] == pytest.approx(a.whole.latency_ms.p95, rel=1e-4)
    chart.altair().to_dict(validate=True)  # the Vega-Lite schema accepts it
    assert chart.spec()["encoding"]["y"]["scale"]["type"] == "log"
    assert '<figure id="latency-throughput-oltp_point_select">' in report.html()
