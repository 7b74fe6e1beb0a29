"""Throughput and latency against concurrency (seeds 000/001): log2 x with ticks at the
measured connection counts, tps from 0 with the points' intervals and the USL fit drawn;
p95 and p99 on a log y. Everything comes from the analysis's sweep."""

from typing import cast

import altair as alt
import numpy as np

from oltplab.analysis._json import finite
from oltplab.analysis.sweep import Sweep
from oltplab.report.html.charts.common import (
    WIDTH,
    Datasets,
    ReportChart,
    colour,
    faded,
    finish,
    legend_toggle,
)

# Points along each USL curve, evenly spaced in log2(N).
USL_SAMPLES = 80


def scaling_charts(
    workload: str, found: Sweep, configs: list[str], palette: dict[str, str], level: float
) -> list[ReportChart]:
    mine = [c for c in configs if c in {p.server for p in found.points}]
    threads = sorted({p.threads for p in found.points})
    points = [
        {
            "config": p.server,
            "threads": p.threads,
            "runs": p.runs,
            "tps": p.tps_mean,
            "tps_ci_lo": finite(p.tps_ci[0]),
            "tps_ci_hi": finite(p.tps_ci[1]),
        }
        for p in found.points
    ]
    x = alt.X(
        "threads:Q",
        # A little room either side, so the end points and their bars are not cut.
        scale=alt.Scale(
            type="log", base=2, domain=[threads[0] / 1.2, threads[-1] * 1.2], nice=False
        ),
        axis=alt.Axis(values=threads, format="d", title="connections (log2 scale)"),
    )
    pick = legend_toggle()
    hue = colour(mine, palette)
    tip = [
        alt.Tooltip("config:N"),
        alt.Tooltip("threads:Q", title="connections"),
        alt.Tooltip("tps:Q", format=",.1f"),
        alt.Tooltip("tps_ci_lo:Q", format=",.1f", title=f"{level:.0%} CI low"),
        alt.Tooltip("tps_ci_hi:Q", format=",.1f", title=f"{level:.0%} CI high"),
        alt.Tooltip("runs:Q"),
    ]
    sets = Datasets()
    base = alt.Chart(sets.ref("points", points)).encode(x=x, color=hue, opacity=faded(pick))
    measured = (
        base.mark_line(point=alt.OverlayMarkDef(size=50, filled=True), strokeWidth=1.5)
        .encode(
            y=alt.Y("tps:Q", title="throughput (tps)", scale=alt.Scale(domainMin=0, clamp=True)),
            tooltip=tip,
        )
        .add_params(pick)
    )
    bars = base.mark_errorbar(ticks=alt.TickConfig(size=6), thickness=1.2).encode(
        y=alt.Y("tps_ci_lo:Q", title="throughput (tps)"), y2=alt.Y2("tps_ci_hi:Q")
    )
    layers: list[alt.Chart] = [measured, bars]
    fits = _usl_rows(found, threads)
    fit_notes = []
    for (server, _), fit in found.fits.items():
        peak = f", N* {fit.peak_concurrency:.0f}" if fit.peak_concurrency else ""
        fit_notes.append(
            f"{server}: alpha {fit.alpha:.3g}, beta {fit.beta:.3g}{peak}, R² {fit.r_squared:.3f}"
        )
    if fits:
        layers.insert(
            0,
            alt.Chart(sets.ref("usl", fits))
            .mark_line(strokeDash=[5, 4], strokeWidth=1.2)
            .encode(
                x=x,
                y=alt.Y("usl_tps:Q"),
                color=hue,
                opacity=faded(pick),
                detail=alt.Detail("config:N"),
            ),
        )
    tps_chart = alt.layer(*layers).properties(width=WIDTH, height=300)
    caption = (
        f"Points: steady-state mean tps per connection count; bars: {level:.0%} intervals "
        "(between runs when repeated, within-run otherwise); dashed: Universal Scalability Law fit"
        + (f" ({'; '.join(fit_notes)})" if fit_notes else "")
        + ". The x axis is log2; lines join measured points only; bars are cut at 0 tps "
        "(the tables give the intervals as computed)."
    )
    latency, latency_sets = _latency_chart(found, x, mine, palette)
    return [
        ReportChart(
            f"scaling-tps-{workload}",
            f"Throughput vs concurrency: {workload}",
            caption,
            finish(tps_chart, f"Throughput vs concurrency — {workload}"),
            sets.values,
        ),
        ReportChart(
            f"scaling-latency-{workload}",
            f"p95 and p99 vs concurrency: {workload}",
            "Latency percentiles of the steady windows, from the runs' merged histograms "
            "(never averaged percentiles); solid p95, dashed p99; both axes logarithmic.",
            finish(latency, f"Latency vs concurrency — {workload}"),
            latency_sets.values,
        ),
    ]


def _usl_rows(found: Sweep, threads: list[int]) -> list[dict[str, object]]:
    grid = np.exp2(np.linspace(np.log2(threads[0]), np.log2(threads[-1]), USL_SAMPLES))
    out: list[dict[str, object]] = []
    for (server, _), fit in found.fits.items():
        out += [
            {"config": server, "threads": float(n), "usl_tps": float(y)}
            for n, y in zip(grid, fit.predict(grid), strict=True)
        ]
    return out


def _latency_chart(
    found: Sweep, x: alt.X, configs: list[str], palette: dict[str, str]
) -> tuple[alt.LayerChart, Datasets]:
    long = [
        {"config": p.server, "threads": p.threads, "percentile": name, "latency_ms": value}
        for p in found.points
        for name, value in (("p95", p.latency_ms.p95), ("p99", p.latency_ms.p99))
        if value is not None
    ]
    pick = legend_toggle()
    sets = Datasets()
    chart = (
        alt.Chart(sets.ref("latency", long))
        .mark_line(point=alt.OverlayMarkDef(size=40, filled=True), strokeWidth=1.5)
        .encode(
            x=x,
            y=alt.Y("latency_ms:Q", scale=alt.Scale(type="log"), title="latency (ms, log scale)"),
            color=colour(configs, palette),
            strokeDash=alt.StrokeDash(
                "percentile:N",
                scale=alt.Scale(domain=["p95", "p99"], range=[[1, 0], [5, 3]]),
                legend=alt.Legend(title="percentile", orient="top"),
            ),
            detail=alt.Detail("percentile:N"),
            opacity=faded(pick),
            tooltip=[
                alt.Tooltip("config:N"),
                alt.Tooltip("threads:Q", title="connections"),
                alt.Tooltip("percentile:N"),
                alt.Tooltip("latency_ms:Q", format=",.3f", title="ms"),
            ],
        )
        .add_params(pick)
    )
    return cast(alt.LayerChart, alt.layer(chart).properties(width=WIDTH, height=260)), sets
