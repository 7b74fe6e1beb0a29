"""run.json, typed: what rundir/manifest.py writes (schema/run.schema.json is the contract
that the test suite validates real output against; docs/run-directory.md explains each field).

TypedDicts, so that a run.json read from disk is the dict it always was, and a reader that
wants types writes `as_run_manifest(doc)["summary"]`.
"""

from typing import Any, NotRequired, TypedDict, cast

SCHEMA_VERSION = 1
MANIFEST_FILE = "run.json"
INTERVALS_FILE = "intervals.csv"
HLOG_FILE = "latency.hlog"
# Host and server metrics on the intervals' grid (same t_s as intervals.csv): written with
# `--metrics system,server` and by every lab cell.
SYSTEM_METRICS_FILE = "system.csv"
SERVER_METRICS_FILE = "server.csv"


class Tool(TypedDict):
    name: str
    version: str | None


class Workload(TypedDict):
    name: str
    options: dict[str, Any]


class Target(TypedDict):
    driver: str | None
    url: str | None  # password redacted
    server_version: str | None
    server_variables: NotRequired[dict[str, str]]  # as read after connecting


class Load(TypedDict):
    threads: int | None
    time_s: float | None
    events: int | None
    rate_per_s: float | None
    report_interval_s: float | None
    interval_s: float | None


# "p99.9" is not an identifier: the functional form.
LatencyMs = TypedDict(
    "LatencyMs",
    {
        "min": float | None,
        "mean": float | None,
        "p50": float | None,
        "p95": float | None,
        "p99": float | None,
        "p99.9": float | None,
        "max": float | None,
        "sum": float | None,
    },
)


class RankedLatency(TypedDict):
    rank: float
    latency_ms: float | None


class Errors(TypedDict):
    total: int
    by_code: dict[str, int]


class OpenLoop(TypedDict):
    rate_per_s: float
    late: int
    dropped: int
    lag_max_ms: float | None


class Summary(TypedDict):
    transactions: int
    queries: dict[str, int]
    tps: float
    qps: float
    errors: Errors
    reconnects: int
    duration_s: float
    latency_ms: LatencyMs
    service_latency_ms: LatencyMs | None
    percentiles: list[RankedLatency]
    service_percentiles: list[RankedLatency] | None
    connect_s: float | None
    warmup_s: float
    open_loop: OpenLoop | None
    percentile: RankedLatency | None
    saturated: int
    client_cpu_s: float | None
    client_cpu_per_txn_us: float | None
    # TPC-C runs only: tpmC, tpm_total, efficiency, by_type (docs/tpcc.md, Results)
    tpcc: NotRequired[dict[str, Any]]


class Fairness(TypedDict):
    events_avg: float
    events_stddev: float
    execution_time_avg_s: float
    execution_time_stddev_s: float


class Files(TypedDict):
    intervals: str
    hlog: str
    system: NotRequired[str]  # system.csv, when metrics were sampled
    server: NotRequired[str]  # server.csv


class LabRef(TypedDict):
    """In a lab cell's run.json: which lab, cell and config the run belongs to."""

    name: str
    dir: str  # the lab directory, absolute
    cell: str  # the cell id (lab.json's cells[].id)
    server: str
    config: str
    repeat: int
    # Only the server variables this config sets differently from the server's other configs.
    config_variables: dict[str, str]
    restore_s: float | None  # how long restoring the prepared data took before this cell


class Pinning(TypedDict):
    """CPU lists asked for, and what the kernel reports (Cpus_allowed_list) after start."""

    client_cpus: str | None
    client_cpus_allowed: str
    server_cpus: str | None
    server_cpus_allowed: str | None  # the server's main process; null when not managed


class HostBusy(TypedDict):
    """CPU used by others in the second before the cell started (the host should be idle)."""

    busy_pct: float
    cores: int


class RunManifest(TypedDict):
    schema_version: int
    tool: Tool
    argv: list[str] | None
    workload: Workload
    target: Target
    load: Load
    started_at: str | None
    ended_at: str | None
    complete: bool
    stop_reason: str | None
    error: str | None
    host: dict[str, Any] | None
    summary: Summary | None
    segments: list[dict[str, Any]] | None
    threads_fairness: Fairness | None
    histograms: dict[str, Any] | None
    files: Files
    flags: NotRequired[list[str]]
    imported_from: NotRequired[dict[str, Any]]
    label: NotRequired[str]
    lab: NotRequired[LabRef]
    pinning: NotRequired[Pinning]
    host_busy: NotRequired[HostBusy]
    metrics: NotRequired[list[str]]  # "system", "server": the metric files sampled


def as_run_manifest(doc: dict[str, Any]) -> RunManifest:
    """A decoded run.json as its typed shape (no copy: the reader checked its version)."""
    return cast(RunManifest, doc)
