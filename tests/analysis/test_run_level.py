"""The run-level analysis end to end, on real embedded-SQLite runs (tests/analysis/runs.py):
`oltplab show`, `compare`, `table`, sweeps and imported sysbench logs, through the Python
API and the CLI. Issue 5's done-when: a run set compared with itself never differs
significantly, and fixed rates of 400 and 500 tps are reported at their ratio, inside the
interval."""

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import oltplab
from oltplab.analysis.compare import WITHIN_RUN_WARNING, Comparison, MetricComparison
from oltplab.analysis.ratio import ratio_ci_runs
from oltplab.analysis.usl import fit_usl
from oltplab.cli.main import main
from oltplab.rundir import load_run
from tests.analysis.runs import (
    RATE_TIME_S,
    STEP_THREADS,
    WARMUP_S,
    RealRuns,
    edited_copy,
    make_runs,
)
from tests.known import known
from tests.sysbench_import import logs

Capture = pytest.CaptureFixture[str]
RATIO = 500 / 400
RESOLUTION = 1e-3  # of the latency histograms: 3 significant digits
SHOW_STEADY_KEYS = {"warmup_s", "reached", "tps_mean", "tps_ci95", "tps_median", "tps_p5"}
COMPARE_METRIC_KEYS = {"name", "baseline", "candidate", "ratio", "ci95", "significant", "method"}

# The fixed-rate runs measure the client's own schedule: in the parallel phase, beside two other
# pytest processes on a loaded 2-core host, the engine fell behind and caught up in bursts, and
# the steady window of a 400/s run held 675 tps (6 tests failed at once, every one on `runs`).
pytestmark = pytest.mark.serial


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> RealRuns:
    return make_runs(tmp_path_factory.mktemp("real-runs"))


def _metric(found: Comparison, name: str) -> MetricComparison:
    (metric,) = [m for m in found.metrics if m.name == name]
    return metric


def _cli(capsys: Capture, *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _show_json(capsys: Capture, *runs: Path) -> Any:
    code, out, err = _cli(capsys, "show", *runs, "--json")
    assert (code, err) == (0, "")
    return json.loads(out)


def _one_line_error(code: int, err: str, needle: str) -> None:
    assert code == 2
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("oltplab: error: ")
    assert needle in err


# 1. A known ratio ----------------------------------------------------------------------


def test_rates_500_vs_400_across_runs_are_reported_at_their_ratio(runs: RealRuns) -> None:
    found = oltplab.compare(list(runs.rate500), list(runs.rate400))
    tps = _metric(found, "tps")
    assert tps.method == "runs"
    assert tps.runs == (2, 2)
    assert tps.baseline == pytest.approx(400, rel=0.03)
    assert tps.candidate == pytest.approx(500, rel=0.03)
    assert tps.ratio == pytest.approx(RATIO, rel=0.06)
    assert tps.significant
    # A 95% interval misses the truth in 5% of repetitions by design, so asserting that it
    # holds 1.25 would fail one module run in twenty. At 99.9% a miss is a 1-in-1000 event:
    # a failure here means the interval is too narrow (or biased), not bad luck.
    wide = _metric(oltplab.compare(list(runs.rate500), list(runs.rate400), level=0.999), "tps")
    assert wide.ci.lo <= RATIO <= wide.ci.hi
    assert wide.ci.lo <= tps.ci.lo
    assert tps.ci.hi <= wide.ci.hi


def test_rates_500_vs_400_one_run_each_are_within_run(runs: RealRuns) -> None:
    found = oltplab.compare([runs.rate500[0]], [runs.rate400[0]])
    tps = _metric(found, "tps")
    assert (tps.method, tps.runs) == ("within-run", (1, 1))
    assert tps.ratio == pytest.approx(RATIO, rel=0.06)
    assert tps.significant
    assert WITHIN_RUN_WARNING in found.warnings
    assert any("target rates differ (400/s, 500/s)" in w for w in found.warnings)


def test_compare_json_contract(runs: RealRuns) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "oltplab",
            "compare",
            *map(str, runs.rate500),
            "--vs",
            *map(str, runs.rate400),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(result.stdout)
    assert [m["name"] for m in doc["metrics"]] == ["tps", "p95_ms", "p99_ms"]
    for m in doc["metrics"]:
        assert set(m) >= COMPARE_METRIC_KEYS
        assert m["method"] == "runs"
        lo, hi = m["ci95"]
        assert lo <= m["ratio"] <= hi
        assert m["significant"] is (lo > 1 or hi < 1)
    tps = doc["metrics"][0]
    assert tps["ratio"] == pytest.approx(RATIO, rel=0.06)
    assert tps["significant"] is True
    assert all(isinstance(w, str) for w in doc["warnings"])
    assert doc["geomean"] == []  # one group: nothing to summarise


def test_compare_json_names_the_interval_by_its_level(capsys: Capture, runs: RealRuns) -> None:
    code, out, _ = _cli(
        capsys, "compare", runs.rate500[0], "--vs", runs.rate400[0], "--json", "--level", "0.99"
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["level"] == 0.99
    assert "ci" in doc["metrics"][0]
    assert "ci95" not in doc["metrics"][0]
    code, out, _ = _cli(
        capsys, "compare", runs.rate500[0], "--vs", runs.rate400[0], "--level", "0.999"
    )
    assert "candidate / baseline, 99.9% intervals" in out


# 2. A run set against itself -----------------------------------------------------------


@pytest.mark.parametrize("sides", ["2 vs 2", "1 vs 1"])
def test_a_run_set_against_itself_never_differs(runs: RealRuns, sides: str) -> None:
    same = list(runs.rate400) if sides == "2 vs 2" else [runs.rate400[0]]
    found = oltplab.compare(same, same)
    assert [m.name for m in found.metrics] == ["tps", "p95_ms", "p99_ms"]
    for m in found.metrics:
        assert m.method == ("runs" if sides == "2 vs 2" else "within-run")
        assert m.ratio == 1.0
        assert m.ci.lo <= 1.0 <= m.ci.hi
        assert not m.significant


def test_a_step_plan_against_itself_per_step_and_in_the_geomean(runs: RealRuns) -> None:
    found = oltplab.compare([runs.steps], [runs.steps])
    assert sorted({m.group.threads for m in found.metrics if m.group}) == list(STEP_THREADS)
    assert [m.name for m in found.geomean] == ["tps", "p95_ms", "p99_ms"]
    for m in (*found.metrics, *found.geomean):
        assert m.ratio == pytest.approx(1.0, abs=1e-12)
        assert not m.significant


# 3. show ---------------------------------------------------------------------------------


def _window_rows(run: Path, window: list[float]) -> pd.DataFrame:
    """The measured intervals.csv rows inside a steady window given in JSON seconds."""
    iv = load_run(run).intervals
    origin = iv["t_s"].iloc[0] - iv["interval_s"].iloc[0]
    start = iv["t_s"] - iv["interval_s"] - origin
    end = iv["t_s"] - origin
    inside = (start >= window[0] - 1e-3) & (end <= window[1] + 1e-3)
    rows: pd.DataFrame = iv[inside & (iv["phase"] != "warmup")]
    return rows


def test_show_json_contract_of_an_open_loop_run(capsys: Capture, runs: RealRuns) -> None:
    run = runs.rate500[0]
    doc = _show_json(capsys, run)
    steady = doc["steady_state"]
    assert SHOW_STEADY_KEYS | {"cv_pct"} <= set(steady)
    lo, hi = steady["tps_ci95"]
    assert lo <= steady["tps_mean"] <= hi
    assert steady["tps_mean"] == pytest.approx(500, rel=0.03)
    assert steady["tps_p5"] <= steady["tps_median"]
    assert 0 < steady["cv_pct"] < 50
    assert steady["reached"] is True  # 24 intervals: MSER-5 can judge
    # Times from the start of the first interval: the window starts after the cut warm-up
    # and ends with the load (the engine's closing runt interval is not part of it).
    window = steady["window_s"]
    assert window[0] == pytest.approx(steady["warmup_s"])
    assert window[1] == pytest.approx(RATE_TIME_S, abs=0.05)
    assert isinstance(doc["stalls"], list)
    assert isinstance(doc["flags"], list)
    for stall in doc["stalls"]:
        assert {"start_s", "duration_s", "min_tps"} <= set(stall)

    # Latency of the steady window from its merged histograms: every transaction of the
    # window's intervals is counted once, and the percentiles lie in the run's [min, max].
    whole = known(load_run(run).summary).latency_ms
    for key in ("latency_ms", "service_latency_ms"):
        lat = doc[key]
        assert lat["count"] == _window_rows(run, window)["transactions"].sum()
        assert lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
    # The run's min and max are exact; the window's are its histogram's bucket edges (lowest
    # and highest equivalent values), so they may lie outside by the histograms' resolution,
    # 3 significant digits.
    lat = doc["latency_ms"]
    assert known(whole.min) * (1 - RESOLUTION) <= lat["min"] <= lat["p50"]
    assert lat["max"] <= known(whole.max) * (1 + RESOLUTION)
    assert doc["service_latency_ms"]["p50"] <= lat["p50"]  # response includes the wait
    assert doc["littles_law"] is None  # open loop: concurrency is not fixed
    assert doc["steps"] == []


def test_show_leaves_the_engines_warmup_out_of_the_window(capsys: Capture, runs: RealRuns) -> None:
    doc = _show_json(capsys, runs.warmed)
    steady = doc["steady_state"]
    assert steady["warmup_s"] >= WARMUP_S
    iv = load_run(runs.warmed).intervals
    warm = iv[iv["phase"] == "warmup"]
    assert len(warm) >= 4
    window_rows = _window_rows(runs.warmed, steady["window_s"])
    # The engine's closing runt interval, if any, is left out of the per-interval statistics
    # but its transactions are in the window's histograms.
    lengths = window_rows["interval_s"]
    assert steady["intervals"] == (lengths >= lengths.median() / 2).sum()
    assert doc["latency_ms"]["count"] == window_rows["transactions"].sum()
    assert doc["service_latency_ms"] is None  # closed loop
    assert doc["littles_law"]["expected_concurrency"] > 0


def test_show_text(capsys: Capture, runs: RealRuns) -> None:
    code, out, err = _cli(capsys, "show", runs.rate500[0])
    assert (code, err) == (0, "")
    assert "warm-up cut: " in out
    assert "steady state reached" in out
    assert "tps: " in out
    assert "95% CI [" in out
    assert "service time (ms):" in out


# 4. Sweeps -------------------------------------------------------------------------------


def test_a_thread_step_run_is_a_sweep(capsys: Capture, runs: RealRuns) -> None:
    doc = _show_json(capsys, runs.steps)
    (run,) = doc["runs"]
    assert [s["threads"] for s in run["steps"]] == list(STEP_THREADS)
    assert [s["step"] for s in run["steps"]] == [0, 1, 2]
    # The whole run mixes the steps' loads: no Little's-law check and no warm-up or drift
    # verdict of its own; each step carries its own.
    assert run["littles_law"] is None
    assert not {"long_warmup", "drifting", "no_steady_state", "too_short_for_mser"} & set(
        run["flags"]
    )
    assert all(s["littles_law"] is not None for s in run["steps"])
    sweep = doc["sweep"]
    assert [p["threads"] for p in sweep["points"]] == list(STEP_THREADS)
    (usl,) = sweep["usl"]
    assert {"alpha", "beta", "gamma_tps", "peak_concurrency", "r_squared"} <= set(usl)
    assert any("only 3 points" in w for w in sweep["warnings"])
    for point, step in zip(sweep["points"], run["steps"], strict=True):
        assert point["runs"] == 1
        assert point["tps"] == pytest.approx(step["steady_state"]["tps_mean"])
        # One run per point: the point's merged histogram is the step's window's.
        assert point["p95_ms"] == step["latency_ms"]["p95"]


def test_sweep_of_separate_runs(runs: RealRuns) -> None:
    swept = oltplab.sweep(list(runs.by_threads))
    frame = swept.to_frame()
    assert list(frame["threads"]) == list(STEP_THREADS)
    assert (frame["runs"] == 1).all()
    assert len(swept.fits) == 1
    assert any("only 3 points" in w for w in swept.warnings)
    assert frame["usl_tps"].notna().all()
    for run, p95 in zip(runs.by_threads, frame["p95_ms"], strict=True):
        whole = oltplab.analyse(run).whole
        assert whole is not None
        assert whole.latency_ms is not None
        assert p95 == whole.latency_ms.p95


def test_a_wild_run_at_a_high_level_gives_an_open_interval() -> None:
    """Two runs a side, one of them 40x off (a p99 hit by a hiccup): at 99.9% Welch's t on
    ~1 df is 636, and the upper log bound passes exp's range; the bound is inf, not a crash."""
    ci = ratio_ci_runs([3.05, 3.96], [3.69, 147.1], level=0.999)
    assert ci.hi == math.inf
    assert 0 <= ci.lo < 1 < ci.ratio < math.inf


def test_a_peak_below_one_connection_is_one_connection() -> None:
    """SQLite's single writer can make throughput fall from one connection on; the USL then
    puts N* = sqrt((1 - alpha)/beta) below 1 (or at 0 with alpha = 1, where X(N*) was 0/0)."""
    for falling in ([1000.0, 700.0, 400.0], [1000.0, 900.0, 850.0]):  # the second: alpha = 1
        fit = fit_usl([1, 2, 4], falling)
        assert fit.peak_concurrency == 1.0
        assert fit.peak_throughput_tps == pytest.approx(fit.gamma_tps)


# 5. Relative tables ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def labelled(runs: RealRuns, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The fixed-rate runs as if from two servers: A ran at 400/s, B at 500/s."""
    root = tmp_path_factory.mktemp("labelled")
    out = []
    for label, side in (("A", runs.rate400), ("B", runs.rate500)):

        def labelled_as(manifest: dict[str, Any], label: str = label) -> None:
            manifest["label"] = label

        out += [edited_copy(run, root / run.name, labelled_as) for run in side]
    return out


def test_relative_table(labelled: list[Path]) -> None:
    table = oltplab.relative_table(labelled, baseline="A")
    assert (table.baseline, table.servers) == ("A", ("B",))
    (row,) = table.frame.to_dict(orient="records")
    assert (row["workload"], row["threads"]) == ("oltp_point_select", 4)
    assert row["baseline"] == pytest.approx(400, rel=0.03)
    assert row["B"] == pytest.approx(RATIO, rel=0.06)
    assert row["B lo"] <= row["B"] <= row["B hi"]
    assert row["B sig"]


def test_table_cli(capsys: Capture, labelled: list[Path]) -> None:
    code, out, err = _cli(capsys, "table", *labelled, "--baseline", "A")
    assert (code, err) == (0, "")
    head, columns, row = out.splitlines()[:3]
    assert head.startswith("tps: baseline A (absolute)")
    assert columns.split() == ["workload", "threads", "baseline", "B"]
    assert row.endswith(" *")
    workload, threads, baseline, ratio = row.split()[:4]
    assert (workload, threads) == ("oltp_point_select", "4")
    assert float(baseline.replace(",", "")) == pytest.approx(400, rel=0.03)
    assert float(ratio) == pytest.approx(RATIO, rel=0.06)
    code, _, err = _cli(capsys, "table", *labelled, "--baseline", "C")
    _one_line_error(code, err, "no run of baseline 'C'; the runs' servers are: A, B")


@pytest.fixture(scope="module")
def two_rates_each(runs: RealRuns, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A lab of rates: configs A and B each ran at 400/s and at 500/s."""
    root = tmp_path_factory.mktemp("two-rates")
    out = []
    for label, side in (
        ("A", (runs.rate400[0], runs.rate500[0])),
        ("B", (runs.rate400[1], runs.rate500[1])),
    ):

        def labelled_as(manifest: dict[str, Any], label: str = label) -> None:
            manifest["label"] = label

        out += [edited_copy(run, root / f"{label}-{run.name}", labelled_as) for run in side]
    return out


def test_configs_at_each_rate_are_compared_rate_by_rate(two_rates_each: list[Path]) -> None:
    """Both sides ran 400/s and 500/s: each rate is its own group (mixing them would compare
    a side's 400/s with the other's 500/s), in numeric order, each ratio near 1."""
    a, b = two_rates_each[:2], two_rates_each[2:]
    found = oltplab.compare(b, a, metrics=["tps"])
    assert [str(m.group) for m in found.metrics] == [
        "oltp_point_select 4 thr 400/s",
        "oltp_point_select 4 thr 500/s",
    ]
    for m, rate in zip(found.metrics, (400, 500), strict=True):
        assert m.group is not None
        assert m.group.rate_per_s == rate
        assert m.runs == (1, 1)
        assert m.baseline == pytest.approx(rate, rel=0.03)
        assert m.ratio == pytest.approx(1.0, rel=0.06)
    assert not any("target rates differ" in w for w in found.warnings)
    table = oltplab.relative_table(two_rates_each, baseline="A")
    assert table.by_rate
    rows = table.frame.to_dict(orient="records")
    assert [(r["threads"], r["rate_per_s"]) for r in rows] == [(4, 400.0), (4, 500.0)]
    assert [r["baseline"] for r in rows] == pytest.approx([400, 500], rel=0.03)


def test_table_cli_shows_the_rate_of_each_row(capsys: Capture, two_rates_each: list[Path]) -> None:
    code, out, err = _cli(capsys, "table", *two_rates_each, "--baseline", "A")
    assert (code, err) == (0, "")
    columns, *rows = out.splitlines()[1:3]
    assert columns.split() == ["workload", "threads", "rate", "baseline", "B"]
    assert rows[0].split()[:3] == ["oltp_point_select", "4", "400/s"]


def test_closed_loop_is_never_grouped_with_an_open_loop_rate(runs: RealRuns) -> None:
    """The candidate side also ran 500/s, which the baseline did not: that run is left out
    (warned), not mixed into the closed-loop group of the same connection count."""
    closed4 = runs.by_threads[2]  # 4 connections, as the fixed-rate runs
    found = oltplab.compare([closed4, runs.rate500[0]], [closed4], metrics=["tps"])
    (tps,) = found.metrics
    assert str(tps.group) == "oltp_point_select 4 thr"
    assert tps.runs == (1, 1)
    assert tps.ratio == pytest.approx(1.0)
    assert "oltp_point_select 4 thr (open loop): no baseline run; left out" in found.warnings


def test_groups_are_in_numeric_order(runs: RealRuns) -> None:
    found = oltplab.compare(list(runs.by_threads), list(runs.by_threads), metrics=["tps"])
    assert [m.group.threads for m in found.metrics if m.group] == list(STEP_THREADS)


# 6. Sameness warnings --------------------------------------------------------------------


def test_a_different_data_size_is_warned(runs: RealRuns, tmp_path: Path) -> None:
    def bigger(m: dict[str, Any]) -> None:
        m["workload"]["options"]["table_size"] = 100000

    copy = edited_copy(runs.rate400[1], tmp_path / "bigger", bigger)
    found = oltplab.compare([copy], [runs.rate400[0]])
    assert any(w.startswith("data size differ: table_size = ") for w in found.warnings)
    assert not any(
        "data size" in w for w in oltplab.compare(list(runs.rate400), [runs.rate400[0]]).warnings
    )


def test_an_incomplete_run_is_flagged(capsys: Capture, runs: RealRuns, tmp_path: Path) -> None:
    copy = edited_copy(runs.rate400[1], tmp_path / "cut", lambda m: m.update(complete=False))
    doc = _show_json(capsys, copy)
    assert doc["complete"] is False
    assert "incomplete" in doc["flags"]
    found = oltplab.compare([copy], [runs.rate400[0]])
    assert any(w.startswith("cut: incomplete") for w in found.warnings)


# 7. Imported sysbench logs ---------------------------------------------------------------


def test_an_imported_sysbench_log_is_analysed(capsys: Capture, tmp_path: Path) -> None:
    log = tmp_path / "sb.log"
    log.write_text(logs.golden("run-report-interval"))
    code, _, _ = _cli(capsys, "import", log, "--out", tmp_path / "run")
    assert code == 0
    doc = _show_json(capsys, tmp_path / "run")
    steady = doc["steady_state"]
    tps = load_run(tmp_path / "run").intervals["tps"]
    assert steady["tps_mean"] == pytest.approx(tps.mean())
    assert steady["intervals"] == len(tps) == 3
    # sysbench without --histogram leaves no histograms: the steady window's latency is
    # unknown (null), not a window without transactions.
    assert doc["latency_ms"] is None
    assert {"imported", "too_short_for_mser"} <= set(doc["flags"])
    found = oltplab.compare([tmp_path / "run"], [tmp_path / "run"])
    assert [m.name for m in found.metrics] == ["tps"]
    assert any("p95_ms not available (no latency histograms)" in w for w in found.warnings)
    code, out, _ = _cli(capsys, "show", tmp_path / "run")
    assert "latency (ms, steady window): unknown (the run has no latency histograms)" in out


def test_an_imported_log_without_intervals_has_no_steady_state(
    capsys: Capture, tmp_path: Path
) -> None:
    log = tmp_path / "sb.log"
    log.write_text(logs.golden("run-histogram"))
    assert _cli(capsys, "import", log, "--out", tmp_path / "run")[0] == 0
    doc = _show_json(capsys, tmp_path / "run")
    assert (doc["steady_state"], doc["latency_ms"], doc["stalls"]) == (None, None, [])
    assert "no_measured_intervals" in doc["flags"]


# 8. Bad input ----------------------------------------------------------------------------


def test_bad_input_is_one_line_and_exit_2(capsys: Capture, runs: RealRuns) -> None:
    code, _, err = _cli(capsys, "show", "/nonexistent")
    _one_line_error(code, err, "/nonexistent is not a run directory")
    code, _, err = _cli(capsys, "compare", runs.rate400[0])
    _one_line_error(code, err, "--vs")
    code, _, err = _cli(
        capsys, "compare", runs.rate400[0], "--vs", runs.rate500[0], "--metrics", "bogus"
    )
    _one_line_error(code, err, "unknown metric 'bogus': use tps or a percentile such as p95_ms")


def test_show_of_a_missing_run_from_the_shell() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "oltplab", "show", "/nonexistent"], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        "oltplab: error: /nonexistent is not a run directory: it has no run.json"
    ]
