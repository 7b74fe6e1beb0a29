"""The report's tables as HTML, from the analysis' own objects: every number cell carries its
exact value in `data-value` (for sorting, and for tests that check it against the analysis)
and shows it rounded; a value that is not defined (NaN) shows as a dash."""

import html
import math
from collections.abc import Sequence
from typing import Any

from oltplab.analysis.compare import Comparison
from oltplab.analysis.relative import RelativeTable
from oltplab.analysis.sweep import Sweep
from oltplab.report.html.model import ReportData


def _unknown(value: Any) -> bool:
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def number(value: Any, digits: int = 4) -> str:
    """A table cell for a number: exact value in data-value, shown to `digits` significant
    digits (thousands separated); empty when unknown."""
    if _unknown(value):
        return '<td class="num" data-value="">&ndash;</td>'
    return f'<td class="num" data-value="{value!r}">{_shown(value, digits)}</td>'


def _shown(value: float | int, digits: int = 4) -> str:
    """`digits` significant digits, thousands separated, never in e-notation."""
    if isinstance(value, int) or abs(value) >= 10 ** (digits - 1):
        return f"{value:,.0f}"
    return f"{value:,.{digits}g}"


def text(value: Any) -> str:
    return f"<td>{html.escape(str(value if value is not None else '&ndash;'))}</td>"


def swatch(config: str, colour: str) -> str:
    """A config's name with its chart colour."""
    return f'<td class="swatch" style="--c:{colour}">{html.escape(config)}</td>'


def ci_cell(lo: Any, hi: Any) -> str:
    if _unknown(lo) or _unknown(hi):
        return '<td class="num" data-value="">&ndash;</td>'
    return f'<td class="num" data-value="{lo!r}" data-hi="{hi!r}">[{_shown(lo)}, {_shown(hi)}]</td>'


def table(table_id: str, headers: Sequence[str], body: Sequence[str], caption: str = "") -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    rows = "".join(f"<tr>{r}</tr>" for r in body)
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return (
        f'<div class="scroll"><table class="sortable" id="{html.escape(table_id)}">{cap}'
        f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>"
    )


def runs_table(data: ReportData) -> str:
    """One row per run: `oltplab show`'s numbers."""
    level = f"{data.level:.0%}"
    body = []
    order = {c: i for i, c in enumerate(data.configs)}
    for r in sorted(
        data.runs, key=lambda r: (order[r.config], r.workload, r.threads, r.rate_per_s, r.name)
    ):
        s = r.whole.steady
        lat = r.whole.latency_ms
        body.append(
            swatch(r.config, data.colours[r.config])
            + f'<td class="name">{html.escape(r.name)}</td>'
            + number(r.threads)
            + number(r.rate_per_s or None)
            + number(s.mean_tps)
            + ci_cell(s.ci_lo_tps, s.ci_hi_tps)
            + number(s.median_tps)
            + number(s.cv_pct, 3)
            + number(r.warmup_s, 3)
            + number(lat.p95 if lat else None)
            + number(lat.p99 if lat else None)
            + number(lat.p99_9 if lat else None)
            + number(len(s.stalls))
            + text(", ".join(r.analysis.flags) or "")
        )
    headers = ["config", "run", "threads", "rate/s", "tps", f"tps {level} CI", "median tps"]
    headers += ["CV %", "warm-up s", "p95 ms", "p99 ms", "p99.9 ms", "stalls", "flags"]
    return table(
        "runs",
        headers,
        body,
        "Steady state of each run (oltplab show): mean tps with its autocorrelation-corrected "
        "interval, latency of the steady window from merged histograms.",
    )


def stalls_table(data: ReportData) -> str:
    """Every stall of every run, from the analysis (start, length, depth, what moved with it)."""
    body = []
    for r in data.runs:
        steady = r.whole.steady
        for stall, moved in zip(steady.stalls, r.whole.coincided, strict=True):
            body.append(
                swatch(r.config, data.colours[r.config])
                + f'<td class="name">{html.escape(r.name)}</td>'
                + number(stall.start_s - r.analysis.origin_s)
                + number(stall.duration_s)
                + number(stall.min_tps)
                + number(stall.mean_tps)
                + number(steady.stall_threshold_tps)
                + text(", ".join(sorted(moved)))
            )
    if not body:
        return '<p class="note">No stalls: no interval fell below its run\'s stall threshold.</p>'
    headers = ["config", "run", "start s", "length s", "min tps", "mean tps", "threshold tps"]
    return table(
        "stalls",
        [*headers, "metrics that moved with it"],
        body,
        "Stalls: consecutive intervals below a fraction of the run's steady median tps (times "
        "from the run's first interval; the timelines mark them).",
    )


def sweep_table(workload: str, found: Sweep, level: float) -> str:
    body = []
    for p in found.points:
        fit = found.fits.get((p.server, p.workload))
        body.append(
            text(p.server)
            + number(p.threads)
            + number(p.runs)
            + number(p.tps_mean)
            + ci_cell(*p.tps_ci)
            + number(p.latency_ms.p95)
            + number(p.latency_ms.p99)
            + number(fit.predict(p.threads) if fit else None)
        )
    headers = [
        "config",
        "connections",
        "runs",
        "tps",
        f"tps {level:.0%} CI",
        "p95 ms",
        "p99 ms",
        "USL tps",
    ]
    return table(
        f"sweep-{workload}",
        headers,
        body,
        f"{workload}: tps and p95 per config and connection count (runs pooled; percentiles "
        "from added histograms).",
    )


def relative_html(rel: RelativeTable) -> str:
    body = []
    for row in rel.rows:
        cells = text(row.workload) + number(row.threads)
        cells += number(row.rate_per_s or None) if rel.by_rate else ""
        cells += number(row.baseline)
        for server in rel.servers:
            m = row.ratios.get(server)
            if m is None:
                cells += '<td class="num" data-value="">&ndash;</td>'
                continue
            kind = ("better" if m.ratio > 1 else "worse") if m.significant else "same"
            lo, hi = m.ci.lo, m.ci.hi
            cells += (
                f'<td class="num rel {kind}" data-value="{m.ratio!r}" '
                f'data-lo="{lo!r}" data-hi="{hi!r}">'
                f"{m.ratio:.3f} <small>[{lo:.3f}, {hi:.3f}]</small>{' *' if m.significant else ''}"
                "</td>"
            )
        body.append(cells)
    rate = ["rate /s"] if rel.by_rate else []
    headers = ["workload", "threads", *rate, f"{rel.baseline} ({rel.metric})", *rel.servers]
    return table(
        "relative",
        headers,
        body,
        f"{rel.metric} relative to {rel.baseline} (absolute in its column): ratio [interval], "
        "* significant; green better, red worse, grey not significant.",
    )


def comparison_html(config: str, baseline: str, found: Comparison) -> str:
    body = []
    for m in (*found.metrics, *found.geomean):  # groups in compare's (numeric) order
        body.append(
            text(str(m.group) if m.group else "geometric mean")
            + text(m.name)
            + number(m.baseline)
            + number(m.candidate)
            + number(m.ratio)
            + ci_cell(m.ci.lo, m.ci.hi)
            + text("yes" if m.significant else "no")
            + text(m.method)
        )
    headers = [
        "group",
        "metric",
        baseline,
        config,
        "ratio",
        f"{found.level:.0%} CI",
        "significant",
        "method",
    ]
    return table(
        f"compare-{config}",
        headers,
        body,
        f"{config} against {baseline} (oltplab compare): ratio candidate/baseline.",
    )
