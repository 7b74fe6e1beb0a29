"""run.json, typed: the one definition of what a run directory's manifest holds.

Frozen dataclasses read and written by the codec (documents/codec.py): `run_manifest_of`
and `run_manifest_json` are the only ways in and out. schema/run.schema.json is the contract
for other tools; tests/documents/test_run_schema.py fails when the two drift apart (a
property, its being required or nullable, a nested object's type). docs/run-directory.md
explains each field.

Field names are the JSON keys, except `p99_9` ("p99.9"). A field without a default is one
every run.json has; a field defaulting to None one that only some runs have (the codec's
rules).
"""

from dataclasses import fields
from typing import Annotated, Any, Literal

from oltplab.documents.codec import JsonKey, decode, document, encode, fields_of

SCHEMA_VERSION = 1
MANIFEST_FILE = "run.json"
INTERVALS_FILE = "intervals.csv"
HLOG_FILE = "latency.hlog"
# Host and server metrics on the intervals' grid (same t_s as intervals.csv): written with
# `--metrics system,server` and by every lab cell.
SYSTEM_METRICS_FILE = "system.csv"
SERVER_METRICS_FILE = "server.csv"
# Their column after t_s: the seconds a row's rates cover, from the sample before it (more
# than the interval after a late row, whose cells are empty).
METRICS_SPAN_COLUMN = "span_s"

OptionValue = str | int | float | bool | None
StopReason = Literal["time", "events", "interrupted", "error"]
MetricKind = Literal["system", "server"]


@document
class Tool:
    name: Literal["oltplab", "sysbench"]
    version: str | None  # null: an imported log without sysbench's banner


@document
class ImportedFrom:
    """Only in a run directory written by `oltplab import` from sysbench's text output."""

    file: str  # the log's name, "-" for stdin
    banner: str | None
    importer: str  # "oltplab <version>"
    unknown_columns: tuple[str, ...]  # intervals.csv columns the log does not carry


@document
class Workload:
    name: str
    options: dict[str, OptionValue]  # every option, defaults filled in, names with "_"


@document
class Target:
    driver: str | None  # null when unknown (an imported log)
    url: str | None  # password redacted
    server_version: str | None
    server_variables: dict[str, str] | None = None  # as read after connecting


@document
class Load:
    threads: int | None
    time_s: float | None
    events: int | None
    rate_per_s: float | None  # 0: closed loop
    report_interval_s: float | None
    interval_s: float | None  # intervals.csv's; null until the run ends


@document
class Host:
    """The machine that generated the load."""

    hostname: str
    os: str
    kernel: str
    cpu_model: str | None
    cpu_cores: int | None
    memory_bytes: int | None
    python_version: str
    machine: str | None = None


@document
class Latency:
    """Milliseconds, from the merged transaction histogram (min, mean, max, sum exact); every
    value null when there was no transaction."""

    min: float | None
    mean: float | None
    p50: float | None
    p95: float | None
    p99: float | None
    p99_9: Annotated[float | None, JsonKey("p99.9")]
    max: float | None
    sum: float | None


@document
class RankedLatency:
    rank: float  # a --percentile rank, e.g. 99.9
    latency_ms: float | None


@document
class Queries:
    read: int
    write: int
    other: int
    total: int


@document
class Errors:
    total: int
    by_code: dict[str, int]


@document
class OpenLoop:
    rate_per_s: float
    late: int  # transactions that started more than 2 ms after their intended start
    dropped: int  # arrivals dropped from a full backlog
    lag_max_ms: float | None


@document
class TpccLatency:
    min: float
    mean: float
    p50: float
    p90: float
    p95: float
    p99: float
    p99_9: Annotated[float, JsonKey("p99.9")]
    max: float


@document
class TpccType:
    """One TPC-C transaction type's results over the measured time (after --warmup)."""

    count: int  # New-Order: rolled-back ones included
    rollbacks: int
    errors: int  # failed attempts that were retried
    latency_ms: TpccLatency | None
    share_pct: float | None = None


@document
class TpccByType:
    new_order: TpccType
    payment: TpccType
    order_status: TpccType
    delivery: TpccType
    stock_level: TpccType

    def items(self) -> tuple[tuple[str, TpccType], ...]:
        """(name, results) in the spec's order."""
        return tuple(fields_of(self).items())


# The five transaction types in the spec's order (also latency.hlog's tags of their latency).
TPCC_TYPES: tuple[str, ...] = tuple(f.name for f in fields(TpccByType))


@document
class TpccCRun:
    c_last: int | None = None
    c_id: int | None = None
    ol_i_id: int | None = None


@document
class TpccSummary:
    """summary.tpcc: TPC-C-like, unaudited (docs/tpcc.md)."""

    tpmC: float
    tpm_total: float
    efficiency: float | None  # null without --think-time=spec
    by_type: TpccByType
    label: str | None = None
    warehouses: int | None = None
    table_sets: int | None = None
    think_time: Literal["off", "spec"] | None = None
    weights: tuple[int, ...] | None = None
    c_last_load: int | None = None
    c_run: TpccCRun | None = None
    delivery_skipped_districts: int | None = None


@document
class Measured:
    """What the whole run's summary and a step's segment share: the counts, rates and
    latencies of a measured stretch."""

    transactions: int
    queries: Queries
    tps: float
    qps: float
    errors: Errors
    reconnects: int
    duration_s: float
    latency_ms: Latency
    service_latency_ms: Latency | None  # open loop: from each transaction's actual start
    percentiles: tuple[RankedLatency, ...]  # every --percentile rank
    service_percentiles: tuple[RankedLatency, ...] | None


@document
class Summary(Measured):
    connect_s: float | None
    warmup_s: float
    open_loop: OpenLoop | None
    percentile: RankedLatency | None  # the first --percentile (sysbench's "lat" column)
    client_cpu_s: float | None  # the client process's CPU, in core-seconds
    client_cpu_per_txn_us: float | None
    saturated: int | None = None  # latencies above 1 h, recorded as 1 h
    # --histogram: sysbench's latency histogram rows (value_ms, count), as its report prints.
    histogram_ms: tuple[tuple[float, int], ...] | None = None
    tpcc: TpccSummary | None = None  # workload tpcc only


@document
class Segment(Measured):
    """One step of a step plan (--rate-steps, --thread-steps), from its own histograms."""

    step: int  # 0-based: intervals.csv's step column
    rate_per_s: float  # 0 in closed loop
    threads: int
    start_s: float  # as intervals.csv's t_s
    end_s: float
    late: int
    dropped: int
    lag_max_ms: float | None


@document
class Fairness:
    events_avg: float
    events_stddev: float
    execution_time_avg_s: float
    execution_time_stddev_s: float


@document
class Files:
    intervals: str
    hlog: str
    system: str | None = None  # system.csv, when metrics were sampled
    server: str | None = None  # server.csv


@document
class LabRef:
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


@document
class Pinning:
    """CPU lists asked for, and what the kernel reports (Cpus_allowed_list) after start."""

    client_cpus: str | None
    client_cpus_allowed: str
    server_cpus: str | None
    server_cpus_allowed: str | None  # the server's main process; null when not managed


@document
class HostBusy:
    """CPU used by others in the second before the cell started (the host should be idle)."""

    busy_pct: float
    cores: int


@document
class ClockOffset:
    """A client's clock against the driver's, from round trips (distributed/clock.py)."""

    offset_s: float  # client clock minus driver clock
    delay_s: float  # the kept round trip
    bound_s: float  # |error| of offset_s is at most this (delay / 2)
    samples: int | None = None


@document
class DistributedClient:
    """One client of a distributed run: its share, node, clock and how it ended."""

    index: int
    dir: str  # its own run directory: clients/<index>
    threads: int
    rate_per_s: float
    clock: ClockOffset | None
    clock_end: ClockOffset | None  # measured again after the run; null when lost
    hostname: str | None
    address: str | None
    connect_s: float | None
    start_late_s: float | None  # after the common start, on its own clock
    stop_reason: str | None
    error: str | None  # the engine raised
    lost: bool  # the actor or its node died mid-run
    node_id: str | None = None
    first_thread: int | None = None  # its threads' numbers among all clients' start here
    events: int | None = None
    rand_seed: int | None = None
    flags: tuple[str, ...] | None = None


@document
class ClientLoss:
    client: int
    at_s: float  # since the common start
    threads: int
    error: str
    rate_per_s: float | None = None


@document
class MergeCost:
    intervals: int | None = None
    driver_cpu_s: float | None = None


@document
class Distributed:
    """Only in a run made with --ray (docs/distributed.md)."""

    ray_address: str
    start_at: str  # the common start, driver clock, ISO 8601 UTC
    clients: tuple[DistributedClient, ...]
    losses: tuple[ClientLoss, ...]
    start_margin_s: float | None = None
    merge: MergeCost | None = None


@document
class ClientRef:
    """Only in a distributed run's clients/<index>/run.json: which client this is."""

    index: int
    of: str | None = None  # the merged run's directory, relative to this one


@document
class RunManifest:
    """run.json."""

    schema_version: int
    tool: Tool
    argv: tuple[str, ...] | None  # passwords redacted; null from the Python API
    workload: Workload
    target: Target
    load: Load
    started_at: str | None  # ISO 8601 UTC, milliseconds
    ended_at: str | None
    complete: bool
    stop_reason: StopReason | None
    error: str | None
    host: Host | None
    summary: Summary | None
    segments: tuple[Segment, ...] | None  # a step plan's steps; null without a plan
    threads_fairness: Fairness | None
    histograms: dict[str, str] | None  # whole-run HdrHistograms: "transactions", per kind
    files: Files
    flags: tuple[str, ...] | None = None  # reasons to distrust the numbers
    imported_from: ImportedFrom | None = None
    label: str | None = None  # a lab cell's "server/config": groups runs by config
    lab: LabRef | None = None
    pinning: Pinning | None = None
    host_busy: HostBusy | None = None
    metrics: tuple[MetricKind, ...] | None = None  # the metric files sampled
    # CPU seconds sampling used: its thread (inside client_cpu_s) plus its database client
    # process (a child: outside client_cpu_s, given alone as sampler_child_cpu_s).
    sampler_cpu_s: float | None = None
    sampler_child_cpu_s: float | None = None
    distributed: Distributed | None = None
    client: ClientRef | None = None


def run_manifest_of(doc: Any, where: str = MANIFEST_FILE) -> RunManifest:
    """A decoded run.json as its type; DocumentError (a ConfigError) when its shape is not."""
    return decode(RunManifest, doc, where)


def run_manifest_json(manifest: RunManifest) -> dict[str, Any]:
    """The JSON object run.json holds."""
    doc: dict[str, Any] = encode(manifest)
    return doc
