"""run.json: the manifest and summary of one run (schema/run.schema.json, docs/run-directory.md).

Pure functions from the engine's documents (_core.pyi) to the manifest's type
(oltplab.documents.run); writer.py does the I/O.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, cast

from oltplab import percentiles
from oltplab._types import Json
from oltplab._version import __version__
from oltplab.documents.codec import decode, fields_of
from oltplab.documents.run import (
    HLOG_FILE,
    INTERVALS_FILE,
    SCHEMA_VERSION,
    Errors,
    Fairness,
    Files,
    Host,
    Latency,
    Load,
    Measured,
    OpenLoop,
    Queries,
    RankedLatency,
    RunManifest,
    Segment,
    StopReason,
    Summary,
    Target,
    Tool,
    TpccSummary,
    Workload,
)
from oltplab.host import host_facts
from oltplab.redact import redact_argv, redact_url

NS_PER_MS = 1e6
NS_PER_S = 1e9
# Engine key of the whole-run transaction histogram, and the name run.json gives it.
_TRANSACTIONS_KEY, _TRANSACTIONS_NAME = "", "transactions"


def iso_utc(epoch_s: float) -> str:
    stamp = datetime.fromtimestamp(epoch_s, tz=UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def _driver_of(url: str) -> str:
    return url.split(":", 1)[0]


def load_of(
    options: Mapping[str, Any], interval_s: float | None, rate_per_s: float | None = None
) -> Load:
    """`rate_per_s`: the engine's target rate when known (with --rate-steps, their mean)."""
    return Load(
        threads=options.get("threads"),
        time_s=options.get("time"),
        events=options.get("events"),
        rate_per_s=options.get("rate", 0) if rate_per_s is None else rate_per_s,
        report_interval_s=options.get("report_interval"),
        interval_s=interval_s,
    )


def initial_manifest(
    *, workload: str, options: Mapping[str, Any], db_url: str, argv: Sequence[str] | None
) -> RunManifest:
    """The manifest written before the load starts: complete=false, no summary."""
    return RunManifest(
        schema_version=SCHEMA_VERSION,
        tool=Tool(name="oltplab", version=__version__),
        argv=tuple(redact_argv(argv)) if argv is not None else None,
        workload=Workload(name=workload, options=dict(options)),
        target=Target(driver=_driver_of(db_url), url=redact_url(db_url), server_version=None),
        load=load_of(options, None),
        started_at=None,
        ended_at=None,
        complete=False,
        stop_reason=None,
        error=None,
        host=host_of(host_facts()),
        summary=None,
        segments=None,
        threads_fairness=None,
        histograms=None,
        files=Files(intervals=INTERVALS_FILE, hlog=HLOG_FILE),
    )


def host_of(facts: Json) -> Host:
    """run.json's host from host_facts() (a Ray actor's facts carry more: left out)."""
    return decode(Host, facts, "host facts")


def with_started(manifest: RunManifest, started: Json) -> RunManifest:
    """After the engine's "started" event: connections are open, the clock runs."""
    return replace(
        manifest,
        started_at=iso_utc(started["started_at"]),
        load=replace(manifest.load, threads=started["threads"]),
    )


def _ms(ns: float | None) -> float | None:
    return None if ns is None else ns / NS_PER_MS


def _ranked(pairs: Any, have: bool) -> tuple[RankedLatency, ...]:
    return tuple(
        RankedLatency(rank=rank, latency_ms=_ms(ns) if have else None) for rank, ns in pairs or []
    )


def _latency_ms(lat: Json, have: bool) -> Latency:
    def ms(key: str) -> float | None:
        return _ms(lat.get(key)) if have else None

    return Latency(
        min=ms("min"),
        mean=ms("mean"),
        p50=ms("p50"),
        p95=ms("p95"),
        p99=ms("p99"),
        p99_9=ms("p99_9"),
        max=ms("max"),
        sum=ms("sum"),
    )


def _measured_of(doc: Json) -> dict[str, Any]:
    """What a summary and a segment share (Measured's fields): the counts, rates and
    latencies of a measured stretch. `doc` is the engine's result or one of its segments
    (same field names)."""
    duration_s = float(doc["duration_s"])
    transactions = int(doc["transactions"])
    queries = doc["queries"]

    def per_s(n: int) -> float:
        return n / duration_s if duration_s > 0 else 0.0

    # No transaction, no latency: null rather than a misleading 0.
    have = transactions > 0
    service = doc.get("service_latency_ns")
    service_ranked = doc.get("service_percentiles_ns")
    measured = Measured(
        transactions=transactions,
        queries=decode(Queries, queries, "the engine's queries"),
        tps=per_s(transactions),
        qps=per_s(int(queries["total"])),
        errors=decode(Errors, doc["errors"], "the engine's errors"),
        reconnects=doc["reconnects"],
        duration_s=duration_s,
        latency_ms=_latency_ms(doc["latency_ns"], have),
        # Open loop: latency_ms runs from each transaction's intended start; this from the actual.
        service_latency_ms=_latency_ms(service, have) if service is not None else None,
        # Every --percentile rank: response time, and service time in open loop.
        percentiles=_ranked(doc.get("percentiles_ns"), have),
        service_percentiles=_ranked(service_ranked, have) if service_ranked is not None else None,
    )
    return fields_of(measured)


def summary_of(result: Json) -> Summary:
    transactions = int(result["transactions"])
    have = transactions > 0
    lat = result["latency_ns"]
    percentile = percentiles.first(result["options"].get("percentile"))
    client_cpu_s = result.get("client_cpu_s")
    tpcc = result.get("tpcc")  # TPC-C's own summary: tpmC and per-type results
    histogram = result.get("histogram_ms")  # --histogram: sysbench's buckets
    return Summary(
        **_measured_of(result),
        connect_s=result.get("connect_s"),
        warmup_s=result.get("warmup_s", 0.0),
        open_loop=OpenLoop(
            rate_per_s=result["rate_per_s"],
            late=result.get("late", 0),
            dropped=result.get("dropped", 0),
            lag_max_ms=_ms(result.get("lag_max_ns", 0)),
        )
        if result.get("rate_per_s")
        else None,
        percentile=RankedLatency(rank=percentile, latency_ms=_ms(lat.get("pct")) if have else None)
        if percentile > 0
        else None,
        saturated=result.get("saturated", 0),
        client_cpu_s=client_cpu_s,
        client_cpu_per_txn_us=1e6 * client_cpu_s / transactions
        if have and client_cpu_s is not None
        else None,
        histogram_ms=None if histogram is None else tuple((v, int(n)) for v, n in histogram),
        tpcc=None if tpcc is None else decode(TpccSummary, tpcc, "the engine's tpcc summary"),
    )


def segment_of(segment: Json) -> Segment:
    """One step of a step plan, summarised like the whole run (from its own histograms)."""
    return Segment(
        step=int(segment["step"]),
        rate_per_s=segment["rate_per_s"],
        threads=segment["threads"],
        start_s=segment["start_s"],
        end_s=segment["end_s"],
        **_measured_of(segment),
        late=segment.get("late", 0),
        dropped=segment.get("dropped", 0),
        lag_max_ms=_ms(segment.get("lag_max_ns", 0)),
    )


def segments_of(result: Json) -> tuple[Segment, ...] | None:
    segments = result.get("segments")
    return None if segments is None else tuple(segment_of(s) for s in segments)


def fairness_of(threads: Sequence[Json]) -> Fairness | None:
    """sysbench's "Threads fairness": mean and population stddev over connections."""
    if not threads:
        return None

    def mean_sd(values: list[float]) -> tuple[float, float]:
        mean = sum(values) / len(values)
        return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))

    events_avg, events_sd = mean_sd([float(t["events"]) for t in threads])
    time_avg, time_sd = mean_sd([t["latency_sum_ns"] / NS_PER_S for t in threads])
    return Fairness(
        events_avg=events_avg,
        events_stddev=events_sd,
        execution_time_avg_s=time_avg,
        execution_time_stddev_s=time_sd,
    )


def final_manifest(manifest: RunManifest, result: Json) -> RunManifest:
    """The manifest once the engine returned its result (complete, interrupted or failed)."""
    stop_reason = cast(StopReason, result["stop_reason"])
    complete = bool(result["complete"]) and stop_reason in ("time", "events")
    histograms = {
        (_TRANSACTIONS_NAME if k == _TRANSACTIONS_KEY else k): v
        for k, v in (result.get("histograms") or {}).items()
    }
    return replace(
        manifest,
        # The engine's values over the options known before the run: a script's own options
        # (which the engine hands to the script, not back) stay.
        workload=Workload(
            name=result["workload"], options=manifest.workload.options | dict(result["options"])
        ),
        target=replace(
            manifest.target,
            driver=result["driver"],
            server_version=result.get("server_version"),
            server_variables=dict(result.get("server_variables") or {}),
        ),
        load=load_of(result["options"], result.get("interval_s"), result.get("rate_per_s")),
        started_at=iso_utc(result["started_at"]),
        ended_at=iso_utc(result["ended_at"]),
        complete=complete,
        stop_reason=stop_reason,
        error=result.get("error"),
        summary=summary_of(result),
        # A step plan's steps, each summarised on its own; null without a plan.
        segments=segments_of(result),
        # Reasons to distrust the numbers (e.g. client_cpu_saturated): the client, not the server.
        flags=tuple(result.get("flags") or ()),
        threads_fairness=fairness_of(result.get("threads") or []),
        histograms=histograms or None,
    )


def aborted_manifest(
    manifest: RunManifest, *, stop_reason: StopReason, error: str | None, ended_at: float
) -> RunManifest:
    """The manifest when the engine raised instead of returning a result."""
    return replace(
        manifest, ended_at=iso_utc(ended_at), complete=False, stop_reason=stop_reason, error=error
    )
