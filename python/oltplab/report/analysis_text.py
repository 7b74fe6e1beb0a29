"""Plain-text renderings of the analysis: `oltplab show`, `compare` and `table`."""

from typing import Any

from oltplab.analysis.compare import Comparison, MetricComparison
from oltplab.analysis.relative import RelativeTable
from oltplab.analysis.run_analysis import PartAnalysis, RunAnalysis
from oltplab.analysis.sweep import Sweep
from oltplab.documents.analysis import WindowLatency


def _num(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def _pct(level: float) -> str:
    """A confidence level as a percentage: 95%, 99.9% (never rounded up to 100%)."""
    return f"{100 * level:.4g}%"


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value:.3g}" if value < 10 else f"{value:,.1f}"


def show_text(analysis: RunAnalysis) -> str:
    lines = [f"{analysis.path}  ({_describe(analysis)})"]
    if analysis.whole is None:
        return "\n".join([*lines, "  no measured interval", _flags(analysis.flags)])
    lines += _part_lines(analysis.whole, analysis.origin_s, indent="  ")
    for step in analysis.steps:
        load = f"{step.threads} thread{'s' if step.threads != 1 else ''}" + (
            f", rate {step.rate_per_s:g}/s" if step.rate_per_s else ""
        )
        lines.append(f"  step {step.step} ({load}):")
        lines += _part_lines(step, analysis.origin_s, indent="    ")
    lines.append(_flags(analysis.flags))
    return "\n".join(lines)


def _describe(analysis: RunAnalysis) -> str:
    doc = analysis.run.doc
    bits = [doc.workload.name, f"{doc.load.threads} threads"]
    if doc.load.rate_per_s:
        bits.append(f"rate {doc.load.rate_per_s:g}/s")
    bits.append(doc.target.server_version or "")
    return ", ".join(b for b in bits if b)


def _part_lines(part: PartAnalysis, origin_s: float, indent: str) -> list[str]:
    s = part.steady
    warm = s.start_s - origin_s
    verdict = (
        "steady state reached"
        if s.reached
        else "NO steady state (MSER-5 failed)"
        if part.judged
        else "steady state not judged: too few intervals for MSER-5"
    )
    lines = [
        f"{indent}warm-up cut: {warm:.1f} s ({verdict}; drift {s.drift_pct:+.1f}% over the "
        f"window {warm:.1f}-{s.end_s - origin_s:.1f} s, {s.intervals} x {s.interval_s:g} s)",
        f"{indent}tps: {_num(s.mean_tps)}  {_pct(s.level)} CI "
        f"[{_num(s.ci_lo_tps)}, {_num(s.ci_hi_tps)}]"
        f"  (autocorrelation time {s.tau:.1f} intervals, effective n {s.n_eff:.0f})",
        f"{indent}     median {_num(s.median_tps)}  p5 {_num(s.p5_tps)}  p1 {_num(s.p1_tps)}"
        f"  min {_num(s.min_tps)}  jitter (CV) {s.cv_pct:.1f}%",
        f"{indent}latency (ms, steady window): {_latency(part.latency_ms)}",
    ]
    if part.service_latency_ms:
        lines.append(f"{indent}service time (ms):           {_latency(part.service_latency_ms)}")
    if s.stalls:
        lines.append(f"{indent}stalls (< {_num(s.stall_threshold_tps)} tps):")
        for stall, moved in zip(s.stalls, part.coincided, strict=True):
            also = f"; coincided: {', '.join(moved)}" if moved else ""
            # Measured within the interval (docs/analysis.md): say what whole intervals showed.
            grid = stall.low_intervals_s
            shown = f" ({grid:.1f} s of whole intervals)" if stall.method == "latency" else ""
            lines.append(
                f"{indent}  at {stall.start_s - origin_s:.1f} s for {stall.duration_s:.1f} s"
                f"{shown}, min {_num(stall.min_tps)} tps{also}"
            )
    if part.little is not None and not part.little.ok:
        lines.append(f"{indent}Little's law: {part.little.message}")
    return lines


def _latency(lat: WindowLatency | None) -> str:
    if lat is None:
        return "unknown (the run has no latency histograms)"
    shown = (
        ("min", lat.min),
        ("mean", lat.mean),
        ("p50", lat.p50),
        ("p95", lat.p95),
        ("p99", lat.p99),
        ("p99.9", lat.p99_9),
        ("max", lat.max),
    )
    return "  ".join(f"{name} {_ms(value)}" for name, value in shown)


def _flags(flags: list[str]) -> str:
    return f"  flags: {', '.join(flags)}" if flags else "  flags: none"


def _ratio(m: MetricComparison) -> str:
    mark = " *" if m.significant else ""
    return f"{m.ratio:.3f} [{m.ci.lo:.3f}, {m.ci.hi:.3f}]{mark}"


def compare_text(comparison: Comparison) -> str:
    lines = [
        f"candidate / baseline, {_pct(comparison.level)} intervals; "
        "* = significant (interval excludes 1)",
        f"{'group':<32} {'metric':<9} {'baseline':>12} {'candidate':>12}  ratio [CI]  method",
    ]
    for m in (*comparison.metrics, *comparison.geomean):
        group = str(m.group) if m.group else "geometric mean"
        lines.append(
            f"{group:<32} {m.name:<9} {_value(m.name, m.baseline):>12} "
            f"{_value(m.name, m.candidate):>12}  {_ratio(m)}  {m.method}"
        )
    lines += [f"warning: {w}" for w in comparison.warnings]
    return "\n".join(lines)


def _value(name: str, value: float) -> str:
    return _num(value) if name == "tps" else _ms(value)


def table_text(table: RelativeTable) -> str:
    head = (
        f"{table.metric}: baseline {table.baseline} (absolute), others as ratios [CI], "
        "* significant"
    )
    rate = ["rate"] if table.by_rate else []
    cols = ["workload", "threads", *rate, "baseline", *table.servers]
    rows = [cols]
    for r in table.rows:
        cells = [r.workload, str(r.threads)]
        if rate:
            cells.append(f"{r.rate_per_s:g}/s" if r.rate_per_s else "-")
        cells.append(_value(table.metric, r.baseline))
        for server in table.servers:
            m = r.ratios.get(server)
            cells.append(
                "-"
                if m is None
                else f"{m.ratio:.3f} [{m.ci.lo:.2f}, {m.ci.hi:.2f}]"
                + (" *" if m.significant else "")
            )
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(cols))]
    out = [head] + ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(out + [f"warning: {w}" for w in table.warnings])


def sweep_text(sweep: Sweep) -> str:
    lines = ["concurrency sweep (closed loop):"]
    for p in sweep.points:
        fit = sweep.fits.get((p.server, p.workload))
        model = f"  USL {_num(fit.predict(p.threads))}" if fit else ""
        lines.append(
            f"  {p.server} {p.workload} {p.threads:>5} thr: tps {_num(p.tps_mean)} "
            f"[{_num(p.tps_ci[0])}, {_num(p.tps_ci[1])}]  p95 {_ms(p.latency_ms.p95)} ms"
            f"  p99 {_ms(p.latency_ms.p99)} ms{model}"
        )
    for (server, workload), fit in sweep.fits.items():
        peak = (
            f"peak at N*={fit.peak_concurrency:,.0f} ({_num(fit.peak_throughput_tps)} tps)"
            if fit.peak_concurrency
            else "no peak (no coherency cost)"
        )
        lines.append(
            f"  USL {server} {workload}: alpha {fit.alpha:.4g} ± {_num(fit.alpha_se, 4)}, "
            f"beta {fit.beta:.3g} ± {_num(fit.beta_se, 6)}, gamma {_num(fit.gamma_tps)} tps; "
            f"{peak}; R² {fit.r_squared:.3f}"
        )
    lines += [f"warning: {w}" for w in sweep.warnings]
    return "\n".join(lines)
