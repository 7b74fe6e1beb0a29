"""Timelines (seeds 001/002/004): tps and p95/p99 per interval on one time axis, the warm-up
cut shaded and stalls marked as bands from the analysis (full-resolution data, so no
decimation can hide them), and below, on the same axis, the host and server metrics when the
run directories hold them. Drag or wheel on any panel zooms all of them."""

from typing import Any, cast

import altair as alt
import pandas as pd

from oltplab.analysis.run_analysis import metric_frames
from oltplab.report.html.charts.common import (
    WIDTH,
    Datasets,
    ReportChart,
    colour,
    faded,
    finish,
    legend_toggle,
    x_zoom,
)
from oltplab.report.html.decimate import bucket_s, min_max_rows
from oltplab.report.html.model import Group, RunView
from oltplab.report.html.palette import STALL_INK, WARMUP_GREY
from oltplab.rundir.intervals import Column

# Metric panels per timeline at most; named ones first (reports.md §1: why did TPS dip?).
MAX_METRIC_PANELS = 6
PREFERRED_METRICS = (
    "cpu_user_pct",
    "cpu_sys_pct",
    "cpu_iowait_pct",
    "innodb_checkpoint_age_bytes",
    "innodb_pages_dirty",
    "innodb_log_written_bytes_per_s",
    "threads_running",
    "threadpool_threads",
    "checkpoint_age",
    "dirty_pages",
)
NOT_METRICS = {Column.t_s, Column.interval_s, Column.phase, Column.step}


def timeline_chart(group: Group, configs: list[str], palette: dict[str, str]) -> ReportChart:
    mine = [c for c in configs if c in {r.config for r in group.runs}]
    hue = colour(mine, palette)
    series, notes = [], []
    for run in group.runs:
        frame = _series(run)
        bucket = bucket_s(frame)
        if bucket is not None:
            notes.append(f"{run.name}: min and max per {bucket:g} s bucket")
        series.append(from_start(min_max_rows(frame, ["tps", "p95_ms", "p99_ms"])))
    data = pd.concat(series, ignore_index=True)
    zoom, pick = x_zoom(), legend_toggle()
    # Panels share the x axis: only the bottom one is titled.
    x = alt.X("t_s:Q", title=None, scale=alt.Scale(nice=False))
    x_bottom = alt.X("t_s:Q", title="seconds since the run started", scale=alt.Scale(nice=False))
    sets = Datasets()
    marks = _annotations(group, sets)
    tps = (
        alt.Chart(sets.ref("tps", data[["run", "config", "t_s", "tps"]]))
        .mark_line(interpolate="step-before", strokeWidth=1.1)
        .encode(
            x=x,
            y=alt.Y("tps:Q", title="tps", scale=alt.Scale(zero=True)),
            color=hue,
            detail=alt.Detail("run:N"),
            opacity=faded(pick),
            tooltip=[
                alt.Tooltip("run:N"),
                alt.Tooltip("t_s:Q", title="time (s)", format=",.2f"),
                alt.Tooltip("tps:Q", format=",.1f"),
            ],
        )
        .add_params(zoom, pick)
    )
    panels: list[Any] = [alt.layer(*marks, tps).properties(width=WIDTH, height=220)]
    latency = _latency_panel(data, x, hue, pick, sets)
    if latency is not None:
        panels.append(
            alt.layer(*_annotations(group, sets), latency).properties(width=WIDTH, height=170)
        )
    metric_panels = _metric_panels(group, x, hue, pick, sets)
    panels += metric_panels
    panels[-1] = (
        panels[-1].encode(x=x_bottom)
        if isinstance(panels[-1], alt.Chart)
        else _titled(panels[-1], x_bottom)
    )
    chart = alt.vconcat(*panels, spacing=8).resolve_scale(x="shared", color="shared")
    runs = ", ".join(r.name for r in group.runs)
    interval = data[Column.interval_s].median()
    caption = (
        f"Runs: {runs}. Per-interval values ({interval:g} s intervals), drawn as steps over "
        "each interval's whole span, the first from the run's start (0 s). Grey: "
        "the warm-up cut (engine warm-up plus MSER-5); dark bands: stalls (intervals below "
        "the run's stall threshold). Latency: per-interval p95 (solid) and p99 (dashed), log scale."
        + (
            f" {len(metric_panels)} metric panel(s) from system.csv/server.csv below."
            if metric_panels
            else ""
        )
        + (f" Decimated: {'; '.join(notes)}." if notes else "")
        + " Drag to pan, wheel to zoom, double-click to reset."
    )
    return ReportChart(
        f"timeline-{group.slug}",
        f"Timeline: {group.title}",
        caption,
        finish(chart, f"Timeline — {group.title}"),
        sets.values,
    )


def from_start(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` (one run's rows in time order; t_s ends an interval of interval_s) with a first
    row at the start of its first interval, holding that interval's values. Steps drawn
    "before" give each row's value the span from the previous row to its own t_s: without
    this row the first interval would be a single point, invisible."""
    if frame.empty:
        return frame
    first = frame.iloc[[0]].copy()
    first[Column.t_s] = first[Column.t_s] - first[Column.interval_s]
    return pd.concat([first, frame], ignore_index=True)


def _series(run: RunView) -> pd.DataFrame:
    """The run's intervals, warm-up phase included, with times from the analysis's origin."""
    iv = run.analysis.run.intervals.sort_values(Column.t_s)
    return pd.DataFrame(
        {
            "run": run.name,
            "config": run.config,
            Column.t_s: iv[Column.t_s].astype(float) - run.analysis.origin_s,
            Column.interval_s: iv[Column.interval_s].astype(float),
            Column.tps: iv[Column.tps].astype(float),
            "p95_ms": iv[Column.lat_p95_ms].astype(float),
            "p99_ms": iv[Column.lat_p99_ms].astype(float),
        }
    )


def _annotations(group: Group, sets: Datasets) -> list[alt.Chart]:
    """Warm-up rectangles and stall bands, straight from the analysis."""
    warm = [
        {"run": r.name, "from_s": 0.0, "to_s": r.warmup_s} for r in group.runs if r.warmup_s > 0
    ]
    stalls = [
        {
            "run": r.name,
            "start_s": s.start_s - r.analysis.origin_s,
            "end_s": s.end_s - r.analysis.origin_s,
            "duration_s": s.duration_s,
            "min_tps": s.min_tps,
        }
        for r in group.runs
        for s in r.whole.steady.stalls
    ]
    out = []
    if warm:
        out.append(
            alt.Chart(sets.ref("warmup", warm))
            # Runs' warm-ups overlap: together they shade about as much as one.
            .mark_rect(color=WARMUP_GREY, opacity=min(0.25, 0.5 / len(warm)))
            .encode(
                x=alt.X("from_s:Q"),
                x2=alt.X2("to_s:Q"),
                tooltip=[alt.Tooltip("run:N"), alt.Tooltip("to_s:Q", title="warm-up cut (s)")],
            )
        )
    if stalls:
        out.append(
            alt.Chart(sets.ref("stalls", stalls))
            .mark_rect(color=STALL_INK, opacity=0.3, stroke=STALL_INK, strokeWidth=1)
            .encode(
                x=alt.X("start_s:Q"),
                x2=alt.X2("end_s:Q"),
                tooltip=[
                    alt.Tooltip("run:N"),
                    alt.Tooltip("start_s:Q", title="stall start (s)", format=",.2f"),
                    alt.Tooltip("duration_s:Q", title="length (s)", format=",.2f"),
                    alt.Tooltip("min_tps:Q", title="min tps", format=",.1f"),
                ],
            )
        )
    return out


def _latency_panel(
    data: pd.DataFrame, x: alt.X, hue: alt.Color, pick: alt.Parameter, sets: Datasets
) -> alt.Chart | None:
    long = (
        data.rename(columns={"p95_ms": "p95", "p99_ms": "p99"})
        .melt(
            id_vars=["run", "config", Column.t_s],
            value_vars=["p95", "p99"],
            var_name="percentile",
            value_name="ms",
        )
        .dropna(subset=["ms"])
    )
    long = long[long["ms"] > 0]
    if long.empty:
        return None
    chart: alt.Chart = (
        alt.Chart(sets.ref("latency", long))
        .mark_line(interpolate="step-before", strokeWidth=1)
        .encode(
            x=x,
            y=alt.Y("ms:Q", scale=alt.Scale(type="log"), title="latency (ms, log)"),
            color=hue,
            strokeDash=alt.StrokeDash(
                "percentile:N",
                scale=alt.Scale(domain=["p95", "p99"], range=[[1, 0], [4, 3]]),
                legend=alt.Legend(title="percentile", orient="top"),
            ),
            detail=alt.Detail("run:N"),
            opacity=faded(pick),
            tooltip=[
                alt.Tooltip("run:N"),
                alt.Tooltip("t_s:Q", title="time (s)", format=",.2f"),
                alt.Tooltip("percentile:N"),
                alt.Tooltip("ms:Q", format=",.3f"),
            ],
        )
    )
    return chart


def _metric_panels(
    group: Group, x: alt.X, hue: alt.Color, pick: alt.Parameter, sets: Datasets
) -> list[alt.Chart]:
    """One small panel per metric column of system.csv/server.csv, on the timeline's clock
    (their t_s is seconds since the load started, as intervals.csv's)."""
    per_metric: dict[str, list[pd.DataFrame]] = {}
    for run in group.runs:
        for frame in metric_frames(run.analysis.run):
            frame = frame.sort_values(Column.t_s)
            for name in _metric_columns(frame):
                part = pd.DataFrame(
                    {
                        "run": run.name,
                        "config": run.config,
                        Column.t_s: frame[Column.t_s].astype(float) - run.analysis.origin_s,
                        "value": frame[name].astype(float),
                        Column.interval_s: frame.get(Column.interval_s, 1.0),
                    }
                )
                per_metric.setdefault(name, []).append(from_start(min_max_rows(part, ["value"])))
    ranked = sorted(
        per_metric, key=lambda n: (PREFERRED_METRICS.index(n) if n in PREFERRED_METRICS else 99, n)
    )
    panels = []
    for name in ranked[:MAX_METRIC_PANELS]:
        data = pd.concat(per_metric[name], ignore_index=True)
        panels.append(
            alt.Chart(sets.ref(f"metric-{name}", data[["run", "config", "t_s", "value"]]))
            .mark_line(interpolate="step-before", strokeWidth=1)
            .encode(
                x=x,
                y=alt.Y("value:Q", title=name, axis=alt.Axis(titleFontSize=10)),
                color=hue,
                detail=alt.Detail("run:N"),
                opacity=faded(pick),
                tooltip=[
                    alt.Tooltip("run:N"),
                    alt.Tooltip("t_s:Q", format=",.2f"),
                    alt.Tooltip("value:Q", title=name, format=",.4~g"),
                ],
            )
            .properties(width=WIDTH, height=80)
        )
    return panels


def _metric_columns(frame: pd.DataFrame) -> list[str]:
    numeric = frame.select_dtypes("number").columns
    # A metric that never moved (0 throughout) says nothing about a dip.
    return [c for c in numeric if c not in NOT_METRICS and frame[c].nunique(dropna=True) > 1]


def _titled(layered: alt.LayerChart, x: alt.X) -> alt.LayerChart:
    """A layered panel whose line layer (the last) carries the titled x axis."""
    layers = list(layered.layer)
    layers[-1] = layers[-1].encode(x=x)
    # Altair lifts data the layers share up to the layer chart: keep it there.
    relayered = alt.layer(*layers, data=layered.data)
    return cast(alt.LayerChart, relayered.properties(width=layered.width, height=layered.height))
