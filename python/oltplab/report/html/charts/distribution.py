"""Boxplots of per-interval tps per config (seed 002's point): every measured interval
against the steady window only, so that the warm-up's pull on the mean is visible. Box
P25-P75, median line, mean diamond, whiskers P5-P95 (stated in the caption)."""

import altair as alt
import numpy as np

from oltplab.analysis.run_analysis import full_intervals, measured_intervals
from oltplab.report.html.charts.common import Datasets, ReportChart, colour, finish
from oltplab.report.html.model import Group, RunView
from oltplab.rundir.intervals import Column

WHOLE = "every measured interval"
STEADY = "after the warm-up cut"
QUANTILES = (5.0, 25.0, 50.0, 75.0, 95.0)


def steady_and_whole_tps(run: RunView) -> tuple[np.ndarray, np.ndarray]:
    """A run's per-interval tps as its analysis saw them: every full measured interval, and
    those MSER-5 kept (the analysis's own rows and cut)."""
    frame = full_intervals(measured_intervals(run.analysis.run))
    tps = frame[Column.tps].to_numpy(float)
    return tps, tps[run.whole.steady.cut_intervals :]


def boxplot_chart(group: Group, configs: list[str], palette: dict[str, str]) -> ReportChart:
    stats = []
    mine = [c for c in configs if c in {r.config for r in group.runs}]
    for config in mine:
        everything, steady = [], []
        for run in (r for r in group.runs if r.config == config):
            whole, kept = steady_and_whole_tps(run)
            everything.append(whole)
            steady.append(kept)
        for phase, parts in ((WHOLE, everything), (STEADY, steady)):
            values = np.concatenate(parts)
            p5, p25, p50, p75, p95 = (float(v) for v in np.percentile(values, QUANTILES))
            stats.append(
                {
                    "config": config,
                    "phase": phase,
                    "n": int(values.size),
                    "mean": float(values.mean()),
                }
                | {"p5": p5, "p25": p25, "median": p50, "p75": p75, "p95": p95}
            )
    sets = Datasets()
    boxes = sets.ref("boxes", stats)
    hue = colour(mine, palette)
    y = alt.Y("config:N", title=None, sort=mine, axis=alt.Axis(labelLimit=260))
    tip = [
        alt.Tooltip("config:N"),
        alt.Tooltip("phase:N"),
        alt.Tooltip("n:Q", title="intervals"),
        *(
            alt.Tooltip(f"{k}:Q", format=",.1f")
            for k in ("mean", "p5", "p25", "median", "p75", "p95")
        ),
    ]
    base = alt.Chart().encode(y=y, color=hue, tooltip=tip)
    whisker = base.mark_rule(strokeWidth=1.2).encode(
        x=alt.X("p5:Q", title="tps per interval", scale=alt.Scale(zero=False)), x2=alt.X2("p95:Q")
    )
    box = base.mark_bar(size=16, opacity=0.35, stroke="#222", strokeWidth=0.6).encode(
        x=alt.X("p25:Q"), x2=alt.X2("p75:Q")
    )
    median = base.mark_tick(size=16, thickness=2, color="#222").encode(x=alt.X("median:Q"))
    mean = base.mark_point(
        shape="diamond", size=70, filled=True, stroke="#222", strokeWidth=0.8
    ).encode(x=alt.X("mean:Q"))
    layered = alt.layer(whisker, box, median, mean, data=boxes).properties(
        width=310, height=max(40, 34 * len(mine))
    )
    chart = layered.facet(
        column=alt.Column("phase:N", title=None, sort=[WHOLE, STEADY])
    ).resolve_scale(x="shared")
    return ReportChart(
        f"boxplot-{group.slug}",
        f"Per-interval throughput: {group.title}",
        "Per-interval tps of every run of each config, pooled: box P25-P75, line median, "
        "diamond mean, whiskers P5-P95. Left: every measured interval; right: only the steady "
        "window after the warm-up cut. Where the two differ, a whole-run mean misleads.",
        finish(chart, f"Per-interval tps — {group.title}"),
        sets.values,
    )
