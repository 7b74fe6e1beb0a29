"""run.json of an imported sysbench log: the numbers exactly as sysbench printed them, and
null wherever the log does not say (docs/sysbench-compat.md, "Importing a sysbench log")."""

from oltplab._types import Json
from oltplab._version import __version__
from oltplab.documents.run import (
    HLOG_FILE,
    INTERVALS_FILE,
    SCHEMA_VERSION,
    Errors,
    Fairness,
    Files,
    ImportedFrom,
    Latency,
    Load,
    Queries,
    RankedLatency,
    RunManifest,
    Summary,
    Target,
    Tool,
    Workload,
)
from oltplab.sysbench_import.parse import FinalReport, SysbenchLog

UNKNOWN_WORKLOAD = "unknown"


def percentile_rank(log: SysbenchLog) -> float | None:
    """--percentile as the log shows it: 0 when disabled, None when it does not say."""
    if log.report is not None:
        return log.report.percentile or 0.0
    return log.intervals[0].percentile if log.intervals else None


def options_of(log: SysbenchLog) -> Json:
    """The options the log shows, with run.json's names; the others are left out."""
    pre = log.preamble
    found = {
        "threads": pre.threads,
        "rate": pre.rate_per_s,
        "report_interval": pre.report_interval_s,
        "percentile": percentile_rank(log),
        "rand_seed": pre.rand_seed,
        "warmup_time": pre.warmup_s,
        "histogram": True if log.histogram_ms is not None else None,
    }
    return {name: value for name, value in found.items() if value is not None}


def _latency_ms(report: FinalReport) -> Latency:
    """The report's latency: exact min, avg, max and sum, and the one percentile it printed
    (null unless it is one of run.json's)."""

    def at(rank: float) -> float | None:
        return report.latency_pct_ms if report.percentile == rank else None

    return Latency(
        min=report.latency_min_ms,
        mean=report.latency_avg_ms,
        p50=at(50),
        p95=at(95),
        p99=at(99),
        p99_9=at(99.9),
        max=report.latency_max_ms,
        sum=report.latency_sum_ms,
    )


def summary_of(log: SysbenchLog) -> Summary | None:
    report = log.report
    if report is None:
        return None
    ranked = (
        RankedLatency(rank=report.percentile, latency_ms=report.latency_pct_ms)
        if report.percentile is not None
        else None
    )
    return Summary(
        transactions=report.transactions,
        queries=Queries(
            read=report.reads, write=report.writes, other=report.other, total=report.queries_total
        ),
        tps=report.tps,
        qps=report.qps,
        errors=Errors(total=report.errors, by_code={}),
        reconnects=report.reconnects,
        duration_s=report.total_time_s,
        connect_s=None,
        warmup_s=log.preamble.warmup_s or 0.0,
        latency_ms=_latency_ms(report),
        service_latency_ms=None,
        open_loop=None,
        percentile=ranked,
        percentiles=(ranked,) if ranked is not None else (),
        service_percentiles=None,
        client_cpu_s=None,  # sysbench does not say
        client_cpu_per_txn_us=None,
        histogram_ms=log.histogram_ms,
    )


def fairness_of(report: FinalReport | None) -> Fairness | None:
    if report is None:
        return None
    return Fairness(
        events_avg=report.events_avg,
        events_stddev=report.events_sd,
        execution_time_avg_s=report.time_avg_s,
        execution_time_stddev_s=report.time_sd_s,
    )


def interval_s_of(log: SysbenchLog) -> float | None:
    """The intervals' length: the report interval, else the first line's time; None without."""
    if not log.intervals:
        return None
    return log.preamble.report_interval_s or log.intervals[0].t_s


def manifest_of(
    log: SysbenchLog,
    *,
    source: str,
    workload: str | None,
    unknown_columns: list[str],
    flags: list[str],
) -> RunManifest:
    pre = log.preamble
    complete = log.report is not None and log.fatal is None
    return RunManifest(
        schema_version=SCHEMA_VERSION,
        tool=Tool(name="sysbench", version=pre.version),
        imported_from=ImportedFrom(
            file=source,
            banner=pre.banner,
            importer=f"oltplab {__version__}",
            unknown_columns=tuple(unknown_columns),
        ),
        argv=None,
        workload=Workload(name=workload or UNKNOWN_WORKLOAD, options=options_of(log)),
        target=Target(driver=None, url=None, server_version=None),
        load=Load(
            threads=pre.threads,
            time_s=None,
            events=None,
            rate_per_s=pre.rate_per_s,
            report_interval_s=pre.report_interval_s,
            interval_s=interval_s_of(log),
        ),
        started_at=None,
        ended_at=None,
        complete=complete,
        stop_reason="error" if log.fatal is not None else None,
        error=log.fatal,
        host=None,
        summary=summary_of(log),
        segments=None,
        flags=tuple(flags),
        threads_fairness=fairness_of(log.report),
        histograms=None,
        # latency.hlog is absent without --histogram: reading it raises FileNotFoundError.
        files=Files(intervals=INTERVALS_FILE, hlog=HLOG_FILE),
    )
