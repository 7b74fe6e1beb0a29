"""The report's tables as HTML: every number cell carries its exact value in `data-value`
(for sorting, and for tests that check it against the analysis JSON) and shows it rounded."""

import html
import math
from collections.abc import Sequence
from typing import Any

from oltplab.analysis.compare import Comparison
from oltplab.analysis.relative import RelativeTable
from oltplab.analysis.sweep import Sweep
from oltplab.report.html.model import ReportData


def number(value: Any, digits: int = 4) -> str:
    """A table cell for a number: exact value in data-value, shown to `digits` significant
    digits (thousands separated); empty when unknown."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
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
    if lo is None or hi is None:
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
    """One row per run: `oltplab show --json`'s numbers."""
    level = f"{data.level:.0%}"
    body = []
    order = {c: i for i, c in enumerate(data.configs)}
    for r in sorted(
        data.runs, key=lambda r: (order[r.config], r.workload, r.threads, r.rate_per_s, r.name)
    ):
        doc = r.doc
        s = doc["steady_state"]
        ci = s.get("tps_ci95") or s.get("tps_ci") or [None, None]
        lat = doc["latency_ms"] or {}
        body.append(
            swatch(r.config, data.colours[r.config])
            + f'<td class="name">{html.escape(r.name)}</td>'
            + number(r.threads)
            + number(r.rate_per_s or None)
            + number(s["tps_mean"])
            + ci_cell(*ci)
            + number(s["tps_median"])
            + number(s["cv_pct"], 3)
            + number(s["warmup_s"], 3)
            + number(lat.get("p95"))
            + number(lat.get("p99"))
            + number(lat.get("p99.9"))
            + number(len(doc["stalls"]))
            + text(", ".join(doc["flags"]) or "")
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
        for stall in r.doc["stalls"]:
            moved = ", ".join(sorted(stall.get("coincided") or {}))
            body.append(
                swatch(r.config, data.colours[r.config])
                + f'<td class="name">{html.escape(r.name)}</td>'
                + number(stall["start_s"])
                + number(stall["duration_s"])
                + number(stall["min_tps"])
                + number(stall["mean_tps"])
                + number(stall["threshold_tps"])
                + text(moved)
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
    for p in found.to_json()["points"]:
        body.append(
            text(p["server"])
            + number(p["threads"])
            + number(p["runs"])
            + number(p["tps"])
            + ci_cell(p["tps_ci_lo"], p["tps_ci_hi"])
            + number(p.get("p95_ms"))
            + number(p.get("p99_ms"))
            + number(p.get("usl_tps"))
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
    for row in rel.frame.to_dict(orient="records"):
        cells = text(row["workload"]) + number(row["threads"])
        cells += number(row["rate_per_s"]) if rel.by_rate else ""
        cells += number(row["baseline"])
        for server in rel.servers:
            ratio = row.get(server)
            if ratio is None or (isinstance(ratio, float) and math.isnan(ratio)):
                cells += '<td class="num" data-value="">&ndash;</td>'
                continue
            sig = bool(row.get(f"{server} sig"))
            kind = ("better" if ratio > 1 else "worse") if sig else "same"
            lo, hi = row.get(f"{server} lo"), row.get(f"{server} hi")
            cells += (
                f'<td class="num rel {kind}" data-value="{ratio!r}" '
                f'data-lo="{lo!r}" data-hi="{hi!r}">'
                f"{ratio:.3f} <small>[{lo:.3f}, {hi:.3f}]</small>{' *' if sig else ''}</td>"
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
        doc = m.to_json(found.level)
        body.append(
            text(str(m.group) if m.group else "geometric mean")
            + text(m.name)
            + number(doc["baseline"])
            + number(doc["candidate"])
            + number(doc["ratio"])
            + ci_cell(*(doc.get("ci95") or doc.get("ci") or [None, None]))
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
