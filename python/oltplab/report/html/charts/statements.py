"""Latency per statement kind (latency.hlog's tagged histograms, e.g. point_selects) and, in
TPC-C, per transaction type: p50-p99 range with p95 marked, per config, from the steady
windows' merged histograms."""

import altair as alt

from oltplab.analysis.latency import added, merged, window_latency
from oltplab.analysis.run_analysis import SERVICE_TAG
from oltplab.documents.run import TPCC_TYPES
from oltplab.report.html.charts.common import WIDTH, Datasets, ReportChart, colour, finish
from oltplab.report.html.model import Group

# TPC-C's latency.hlog tags that count events rather than time them (the engine's KINDS).
TPCC_COUNTER_SUFFIXES = ("_rollback", "_error")
TPCC_COUNTERS = {"delivery_skipped_district"}
TPCC_EVERY_STATEMENT = "statement"


def latency_kinds(tags: set[str]) -> list[str]:
    """The tags that hold latencies, in reading order: TPC-C's five types in the spec's
    order, then statement kinds by name, TPC-C's `statement` (every statement) last. TPC-C's
    counters kept as histograms (rollbacks, errors, skipped districts) are not latencies."""
    kept = {
        t
        for t in tags
        if t != SERVICE_TAG and not t.endswith(TPCC_COUNTER_SUFFIXES) and t not in TPCC_COUNTERS
    }
    first = [t for t in TPCC_TYPES if t in kept]
    rest = sorted(kept - set(first) - {TPCC_EVERY_STATEMENT})
    return first + rest + ([TPCC_EVERY_STATEMENT] if TPCC_EVERY_STATEMENT in kept else [])


def statement_chart(
    group: Group, configs: list[str], palette: dict[str, str]
) -> ReportChart | None:
    found: list[dict[str, object]] = []
    drawn: dict[str, set[str]] = {}  # config -> the kinds drawn
    for config in configs:
        runs = [r for r in group.runs if r.config == config]
        tags = latency_kinds({e.tag for r in runs for e in r.analysis.entries if e.tag})
        for tag in tags:
            total = added(
                [
                    merged(r.analysis.entries_of(tag), r.analysis.whole.window)
                    for r in runs
                    if r.analysis.whole
                ]
            )
            values = window_latency(total)
            if values.p50 is None:
                continue
            found.append(
                {"config": config, "kind": tag, "count": values.count}
                | {"p50": values.p50, "p95": values.p95, "p99": values.p99}
            )
            drawn.setdefault(config, set()).add(tag)
    if not found:
        return None
    mine = [c for c in configs if c in drawn]
    kinds = latency_kinds({tag for tags in drawn.values() for tag in tags})
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
    what = "transaction type" if any(k in TPCC_TYPES for k in kinds) else "statement kind"
    return ReportChart(
        f"statements-{group.slug}",
        f"Latency per {what}: {group.title}",
        f"Per {what}: the bar spans p50 to p99, the dot is p95, from each config's "
        "steady-window histograms added together"
        + (
            " (`statement`: every statement of every type)."
            if TPCC_EVERY_STATEMENT in kinds
            else "."
        ),
        finish(chart, f"Latency per {what} — {group.title}"),
        sets.values,
    )
