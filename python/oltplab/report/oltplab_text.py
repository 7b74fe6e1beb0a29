"""oltplab's short summary, printed after sysbench's report: the percentiles sysbench
cannot give, errors by code, whether the run is complete, and where its files are."""

from pathlib import Path

from oltplab._types import Json
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


def _segment_line(segment: Json) -> str:
    """One step of a step plan: its load, throughput and tail latency."""
    threads = int(segment["threads"])
    load = f"{threads} thread{'s' if threads != 1 else ''}"
    if segment["rate_per_s"]:
        load = f"{segment['rate_per_s']:g}/s target, {load}"
    latency = segment["latency_ms"]
    label = f"step {segment['step']}:"
    return (
        f"    {label:<16}{load}: {segment['tps']:.2f} tps, "
        f"p95 {_ms(latency['p95'])} ms, p99 {_ms(latency['p99'])} ms"
    )


def summary_text(manifest: Json, run_dir: Path) -> str:
    summary = manifest.get("summary")
    status = (
        "complete" if manifest.get("complete") else f"INCOMPLETE ({manifest.get('stop_reason')})"
    )
    load = manifest.get("load") or {}
    lines = ["oltplab summary:"]
    head = f"    run:            {manifest['workload']['name']}, {load.get('threads')} threads"
    if summary is not None:
        head += f", {summary['duration_s']:.2f} s"
        latency = summary["latency_ms"]
        errors = summary["errors"]
        by_code = ", ".join(f"{code}: {n}" for code, n in sorted(errors["by_code"].items()) if n)
        lines += [
            f"{head}, {status}",
            f"    throughput:     {summary['tps']:.2f} tps, {summary['qps']:.2f} qps",
            "    latency (ms):   "
            + "  ".join(
                f"{k} {_ms(latency.get(k))}" for k in ("p50", "p95", "p99", "p99.9", "max")
            ),
            f"    errors:         {errors['total']}" + (f" ({by_code})" if by_code else ""),
            f"    reconnects:     {summary['reconnects']}",
        ]
        if summary.get("service_latency_ms"):
            service = summary["service_latency_ms"]
            lines.append(
                "    service (ms):   "
                + "  ".join(f"{k} {_ms(service.get(k))}" for k in ("p50", "p95", "p99", "max"))
            )
        if summary.get("open_loop"):
            ol = summary["open_loop"]
            lines.append(
                f"    open loop:      {ol['rate_per_s']:g}/s target, {ol['late']} late, "
                f"{ol['dropped']} dropped, max lag {ol['lag_max_ms']:.2f} ms"
            )
        if summary.get("client_cpu_per_txn_us") is not None:
            lines.append(
                f"    client CPU:     {summary['client_cpu_s']:.2f} s, "
                f"{summary['client_cpu_per_txn_us']:.1f} us per transaction"
            )
        if summary.get("saturated"):
            lines.append(
                f"    saturated:      {summary['saturated']} latencies above 1 h, recorded at 1 h"
            )
        if summary.get("tpcc"):
            lines += tpcc_lines(summary["tpcc"])
        lines += [_segment_line(segment) for segment in manifest.get("segments") or []]
    else:
        lines.append(f"{head}, {status}")
    for flag in manifest.get("flags") or []:
        lines.append(f"    WARNING:        {flag}: {_FLAG_TEXT.get(flag, '')}")
    if manifest.get("error"):
        lines.append(f"    error:          {manifest['error']}")
    lines.append(f"    run directory:  {run_dir}")
    return "".join(line + "\n" for line in lines)
