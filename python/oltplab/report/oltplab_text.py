"""oltplab's short summary, printed after sysbench's report: the percentiles sysbench
cannot give, errors by code, whether the run is complete, and where its files are."""

from pathlib import Path

from oltplab.documents.run import Latency, RunManifest, Segment, Summary
from oltplab.report.tpcc_text import tpcc_lines


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if value < 1 else f"{value:.2f}"


_FLAG_TEXT = {
    "client_cpu_saturated": "the client used nearly all CPU: it measured itself, not the server",
    "client_behind_schedule": "the client started transactions late while connections were free",
    "open_loop_dropped_arrivals": "arrivals dropped (full backlog): percentiles are lower bounds",
}


def _segment_line(segment: Segment) -> str:
    """One step of a step plan: its load, throughput and tail latency."""
    threads = segment.threads
    load = f"{threads} thread{'s' if threads != 1 else ''}"
    if segment.rate_per_s:
        load = f"{segment.rate_per_s:g}/s target, {load}"
    latency = segment.latency_ms
    label = f"step {segment.step}:"
    return (
        f"    {label:<16}{load}: {segment.tps:.2f} tps, "
        f"p95 {_ms(latency.p95)} ms, p99 {_ms(latency.p99)} ms"
    )


def _latency_line(latency: Latency, *, with_tail: bool) -> str:
    shown = [("p50", latency.p50), ("p95", latency.p95), ("p99", latency.p99)]
    if with_tail:
        shown.append(("p99.9", latency.p99_9))
    shown.append(("max", latency.max))
    return "  ".join(f"{name} {_ms(value)}" for name, value in shown)


def _summary_lines(summary: Summary) -> list[str]:
    errors = summary.errors
    by_code = ", ".join(f"{code}: {n}" for code, n in sorted(errors.by_code.items()) if n)
    lines = [
        f"    throughput:     {summary.tps:.2f} tps, {summary.qps:.2f} qps",
        f"    latency (ms):   {_latency_line(summary.latency_ms, with_tail=True)}",
        f"    errors:         {errors.total}" + (f" ({by_code})" if by_code else ""),
        f"    reconnects:     {summary.reconnects}",
    ]
    if summary.service_latency_ms:
        service = _latency_line(summary.service_latency_ms, with_tail=False)
        lines.append(f"    service (ms):   {service}")
    if summary.open_loop:
        ol = summary.open_loop
        lag = "-" if ol.lag_max_ms is None else f"{ol.lag_max_ms:.2f}"
        lines.append(
            f"    open loop:      {ol.rate_per_s:g}/s target, {ol.late} late, "
            f"{ol.dropped} dropped, max lag {lag} ms"
        )
    if summary.client_cpu_s is not None and summary.client_cpu_per_txn_us is not None:
        lines.append(
            f"    client CPU:     {summary.client_cpu_s:.2f} s, "
            f"{summary.client_cpu_per_txn_us:.1f} us per transaction"
        )
    if summary.saturated:
        lines.append(
            f"    saturated:      {summary.saturated} latencies above 1 h, recorded at 1 h"
        )
    if summary.tpcc:
        lines += tpcc_lines(summary.tpcc)
    return lines


def summary_text(manifest: RunManifest, run_dir: Path) -> str:
    summary = manifest.summary
    status = "complete" if manifest.complete else f"INCOMPLETE ({manifest.stop_reason})"
    head = f"    run:            {manifest.workload.name}, {manifest.load.threads} threads"
    lines = ["oltplab summary:"]
    if summary is not None:
        lines.append(f"{head}, {summary.duration_s:.2f} s, {status}")
        lines += _summary_lines(summary)
        lines += [_segment_line(segment) for segment in manifest.segments or ()]
    else:
        lines.append(f"{head}, {status}")
    for flag in manifest.flags or ():
        lines.append(f"    WARNING:        {flag}: {_FLAG_TEXT.get(flag, '')}")
    if manifest.error:
        lines.append(f"    error:          {manifest.error}")
    lines.append(f"    run directory:  {run_dir}")
    return "".join(line + "\n" for line in lines)
