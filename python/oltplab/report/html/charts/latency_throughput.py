"""Latency against throughput, open and closed loop on one chart: each config's open-loop
points (its offered rates, joined in rate order) and its closed-loop points (its connection
counts), at x = the achieved tps and y = the p95. A closed loop's p95 is a service time at
whatever rate the server allowed; an open loop's is what users arriving at that rate wait
(from the intended start). At the same throughput, where the two part, the closed loop
flattered (methodology.md §4.3 and §5.1: the hockey stick)."""

from collections.abc import Sequence

import altair as alt

from oltplab.analysis.sweep import RatePoint, SweepPoint
from oltplab.report.html.charts.common import (
    WIDTH,
    Datasets,
    ReportChart,
    colour,
    faded,
    finish,
    legend_toggle,
)

OPEN, CLOSED = "open loop (rate)", "closed loop (connections)"


def latency_throughput_chart(
    workload: str,
    rates: Sequence[RatePoint],
    closed: Sequence[SweepPoint],
    configs: list[str],
    palette: dict[str, str],
) -> ReportChart:
    rates = [p for p in rates if p.latency_ms.p95 is not None]
    closed = [p for p in closed if p.latency_ms.p95 is not None]
    rows = [
        {"config": p.server, "loop": OPEN, "load": f"{p.rate_per_s:g}/s", "order": p.rate_per_s}
        | {"tps": p.tps_mean, "p95_ms": p.latency_ms.p95, "p99_ms": p.latency_ms.p99}
        for p in rates
    ] + [
        {"config": p.server, "loop": CLOSED, "load": f"{p.threads} conn", "order": p.threads}
        | {"tps": p.tps_mean, "p95_ms": p.latency_ms.p95, "p99_ms": p.latency_ms.p99}
        for p in closed
    ]
    drawn = {p.server for p in rates} | {p.server for p in closed}
    mine = [c for c in configs if c in drawn]
    pick = legend_toggle()
    sets = Datasets()
    chart = (
        alt.Chart(sets.ref("points", rows))
        .mark_line(point=alt.OverlayMarkDef(size=55, filled=True), strokeWidth=1.5)
        .encode(
            x=alt.X("tps:Q", title="achieved throughput (tps)", scale=alt.Scale(zero=False)),
            y=alt.Y("p95_ms:Q", scale=alt.Scale(type="log"), title="p95 latency (ms, log scale)"),
            color=colour(mine, palette),
            strokeDash=alt.StrokeDash(
                "loop:N",
                scale=alt.Scale(domain=[OPEN, CLOSED], range=[[1, 0], [5, 3]]),
                legend=alt.Legend(title="load", orient="top"),
            ),
            shape=alt.Shape(
                "loop:N", scale=alt.Scale(domain=[OPEN, CLOSED], range=["circle", "square"])
            ),
            detail=alt.Detail("loop:N"),
            order=alt.Order("order:Q"),
            opacity=faded(pick),
            tooltip=[
                alt.Tooltip("config:N"),
                alt.Tooltip("loop:N"),
                alt.Tooltip("load:N"),
                alt.Tooltip("tps:Q", format=",.1f"),
                alt.Tooltip("p95_ms:Q", format=",.1f", title="p95 ms"),
                alt.Tooltip("p99_ms:Q", format=",.1f", title="p99 ms"),
            ],
        )
        .add_params(pick)
        .properties(width=WIDTH, height=300)
    )
    return ReportChart(
        f"latency-throughput-{workload}",
        f"Latency vs throughput, open and closed loop: {workload}",
        "x: achieved tps (steady-state mean over the runs); y: p95 of the runs' steady windows "
        "added (log). Solid, circles: open loop, one point per offered rate, the response time "
        "from each arrival's intended start; dashed, squares: closed loop, one point per "
        "connection count, the time from each transaction's actual start. An open-loop point "
        "left of its rate did not keep up (its backlog grew).",
        finish(chart, f"Latency vs throughput — {workload}"),
        sets.values,
    )
