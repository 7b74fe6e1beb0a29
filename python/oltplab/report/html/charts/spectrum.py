"""The latency percentile spectrum per config (HdrHistogram's plotter): the steady windows'
histograms of all the config's runs added, read at percentiles up to 99.999 on a "nines"
axis (x = 1/(1-p), log), cut where the count no longer supports the percentile."""

from typing import Any

import altair as alt
from hdrh.histogram import HdrHistogram

from oltplab.analysis.latency import added, percentiles_ms
from oltplab.report.html.charts.common import (
    WIDTH,
    Datasets,
    ReportChart,
    colour,
    faded,
    finish,
    legend_toggle,
)
from oltplab.report.html.model import Group, RunView

# x = 1/(1-p) from 1 (p0) to 10^5 (p99.999), 12 points per decade.
RANKS = tuple(float(100 * (1 - 10 ** (-k / 12))) for k in range(0, 61))
NINES_LABELS = {1: "0%", 10: "90%", 100: "99%", 1000: "99.9%", 10000: "99.99%", 100000: "99.999%"}


def merged_steady(runs: list[RunView]) -> HdrHistogram | None:
    """The runs' steady-window transaction histograms added together (as the sweep does)."""
    return added([run.analysis.whole.histogram for run in runs if run.analysis.whole])


def spectrum_chart(group: Group, configs: list[str], palette: dict[str, str]) -> ReportChart | None:
    points: list[dict[str, Any]] = []
    counts: dict[str, int] = {}  # transactions per config drawn
    most_nines = 1.0
    for config in configs:
        runs = [r for r in group.runs if r.config == config]
        histogram = merged_steady(runs) if runs else None
        if histogram is None:
            continue
        count = int(histogram.get_total_count())
        if count == 0:
            continue
        counts[config] = count
        for rank, value in zip(RANKS, percentiles_ms(histogram, RANKS), strict=True):
            nines = 1 / (1 - rank / 100)
            # A percentile needs about 1/(1-p) samples behind it to mean anything.
            if nines > count:
                continue
            most_nines = max(most_nines, nines)
            points.append(
                {
                    "config": config,
                    "percentile": rank,
                    "nines": float(nines),
                    "ms": value,
                    "count": count,
                }
            )
    if not points:
        return None
    mine = list(counts)
    pick = legend_toggle()
    sets = Datasets()
    label = " : ".join(f"datum.value == {k} ? '{v}'" for k, v in NINES_LABELS.items()) + " : ''"
    chart = (
        alt.Chart(sets.ref("spectrum", points))
        .mark_line(interpolate="step-after", strokeWidth=1.6)
        .encode(
            x=alt.X(
                "nines:Q",
                scale=alt.Scale(type="log", domain=[1, most_nines], nice=False),
                axis=alt.Axis(values=list(NINES_LABELS), labelExpr=label, title="percentile"),
            ),
            y=alt.Y("ms:Q", scale=alt.Scale(type="log"), title="latency (ms, log)"),
            color=colour(mine, palette),
            opacity=faded(pick),
            tooltip=[
                alt.Tooltip("config:N"),
                alt.Tooltip("percentile:Q", format=".3f"),
                alt.Tooltip("ms:Q", format=",.3f"),
                alt.Tooltip("count:Q", title="transactions", format=","),
            ],
        )
        .add_params(pick)
        .properties(width=WIDTH, height=260)
    )
    total = sum(counts.values())
    return ReportChart(
        f"spectrum-{group.slug}",
        f"Latency percentile spectrum: {group.title}",
        "Transaction latency at each percentile, from each config's steady-window histograms "
        f"added together ({int(total):,} transactions in all); a line stops at the highest "
        "percentile its count supports. Both axes logarithmic.",
        finish(chart, f"Latency spectrum — {group.title}"),
        sets.values,
    )
