"""Latency per statement kind (latency.hlog's tagged histograms, e.g. point_selects) and, in
TPC-C, per transaction type: p50-p99 range with p95 marked, per config, from the steady
windows' merged histograms."""

import altair as alt

from oltplab.analysis.latency import added, latency_ms, merged
from oltplab.analysis.run_analysis import SERVICE_TAG
from oltplab.report.html.charts.common import WIDTH, Datasets, ReportChart, colour, finish
from oltplab.report.html.model import Group


def statement_chart(
    group: Group, configs: list[str], palette: dict[str, str]
) -> ReportChart | None:
    found: list[dict[str, object]] = []
    for config in configs:
        runs = [r for r in group.runs if r.config == config]
        tags = sorted(
            {e.tag for r in runs for e in r.analysis.entries if e.tag not in (None, SERVICE_TAG)}
        )
        for tag in tags:
            total = added(
                [
                    merged(r.analysis.entries_of(tag), r.analysis.whole.window)
                    for r in runs
                    if r.analysis.whole
                ]
            )
            values = latency_ms(total, (50.0, 95.0, 99.0))
            if values["p50"] is None:
                continue
            found.append(
                {"config": config, "kind": tag}
                | {k: values[k] for k in ("count", "p50", "p95", "p99")}
            )
    if not found:
        return None
    mine = [c for c in configs if c in {f["config"] for f in found}]
    kinds = sorted({str(f["kind"]) for f in found})
    hue = colour(mine, palette)
    sets = Datasets()
    y = alt.Y("kind:N", title=None, sort=kinds)
    offset = alt.YOffset("config:N", sort=mine)
    tip = [alt.Tooltip("kind:N"), alt.Tooltip("config:N"), alt.Tooltip("count:Q", format=",")] + [
        alt.Tooltip(f"{k}:Q", format=",.3f", title=f"{k} ms") for k in ("p50", "p95", "p99")
    ]
    x = alt.X(
        "p50:Q",
        scale=alt.Scale(type="log", nice=False),
        title="latency (ms, log): p50 to p99, dot at p95",
    )
    base = alt.Chart().encode(y=y, yOffset=offset, color=hue, tooltip=tip)
    chart = alt.layer(
        base.mark_rule(strokeWidth=3, opacity=0.6).encode(x=x, x2=alt.X2("p99:Q")),
        base.mark_point(filled=True, size=60).encode(x=alt.X("p95:Q")),
        data=sets.ref("statements", found),
    ).properties(width=WIDTH, height=max(60, 22 * len(kinds) * len(mine)))
    return ReportChart(
        f"statements-{group.slug}",
        f"Latency per statement kind: {group.title}",
        "Per statement kind (or TPC-C transaction type): the bar spans p50 to p99, the dot is "
        "p95, from each config's steady-window histograms added together.",
        finish(chart, f"Latency per statement kind — {group.title}"),
        sets.values,
    )
