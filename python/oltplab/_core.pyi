"""Stub of the compiled engine binding (crates/oltplab-py). Users import from `oltplab`.

Everything crosses the boundary as JSON text: one spec in, one result out, and
progress events (at most a few a second) through an optional callback.

Spec (prepare, run, cleanup):
    {"workload": "oltp_read_write",
     "db": "sqlite:///path/to.db",
     "options": {"threads": 8, "time": 10, "table-size": "10000", ...},
     "target": {"create": false, "sqlite_busy_timeout_ms": 5000, "sql_log": null}}
    Option names take - or _; values are native or text.

Progress events passed to `on_event` (JSON objects, "event" says which):
    {"event": "message", "text": "Creating table 'sbtest1'..."}
    {"event": "rows", "table": 1, "done": 5000, "total": 10000}
    {"event": "started", "threads": 8, "connect_s": 0.12, "started_at": 1763700000.5,
     "planned_s": 40.0}  (warm-up plus measured time; 0 when no --time bounds the run)
    {"event": "interval", "t_s": 2.0, "interval_s": 1.0, "threads_running": 8,
     "transactions": 120, "reads": 1680, "writes": 480, "others": 240,
     "errors": 0, "reconnects": 0, "errors_by_code": {"SQLITE_BUSY": 0},
     "latency_sum_ns", "latency_min_ns", "latency_max_ns", "saturated", "lag_sum_ns",
     "lag_max_ns", "late", "client_lag_sum_ns" (the exact counters, so that intervals add up),
     "latency_ns": {"min": .., "mean": .., "p50": .., "p95": .., "p99": .., "max": .., "pct": ..},
     "histograms": [{"tag": null | "point_selects", "start_s": 1.0, "interval_s": 1.0,
                     "max_ns": 1234567, "encoded": "HISTFAAA..."}],
     "phase": "warmup" | "run", "step": null | 0, ...}
    (t_s is the interval's end in seconds since the run started; start_s its start;
     "encoded" is a V2 compressed HdrHistogram in base64, values in nanoseconds;
     tag null is the transaction histogram, other tags are statement kinds;
     "pct" is the value at the --percentile option, 0 when that option is 0)

Result of run (JSON object):
    {"workload", "options" (every option, defaults filled), "driver", "server_version",
     "complete": bool, "stop_reason": "time" | "events" | "interrupted" | "error",
     "error": null | "message", "started_at": epoch s, "ended_at": epoch s,
     "connect_s", "duration_s", "interval_s", "transactions", "saturated" (latencies over 1 h),
     "queries": {"read", "write", "other", "total"},
     "errors": {"total", "by_code": {code: n}}, "reconnects",
     "latency_ns": {"min", "mean", "max", "sum", "p50", "p95", "p99", "p99_9", "pct"},
     "service_latency_ns", "percentiles_ns", "service_percentiles_ns", "late", "dropped",
     "lag_max_ns" (with the above: the measured block a segment repeats), "warmup_s",
     "rate_per_s", "client_cpu_s", "flags", "tpcc" (TPC-C only: tpmC, by_type, ...),
     "histograms": {"": "HISTF..." (transactions), "point_selects": "HISTF...", ...},
     "threads": [{"events": n, "latency_sum_ns": n}, ...],
     "histogram_ms": [[value_ms, count], ...]  (sysbench's log buckets; only with --histogram),
     "segments": null | [{"step", "rate_per_s", "threads", "start_s", "end_s", "duration_s",
                          "transactions", "queries", "errors", "reconnects", "latency_ns",
                          "service_latency_ns", "percentiles_ns", "service_percentiles_ns",
                          "late", "dropped", "lag_max_ns"}, ...]  (a step plan's steps)}

Result of prepare / cleanup: {"workload", "options", "driver", "server_version",
     "tables": n, "duration_s": s}

Distributed runs add spec fields: "start_at" (epoch seconds on the client's clock: connect,
then wait for it), "arrival_phase_s" (open loop: the arrival schedule shifted by this much),
"workers": {"first", "all"} (this client's threads numbered among all clients'), "units"
(prepare: the units, 1-based, this client builds) and "prepare_step": "begin" | "end" (one
client's marker and TPC-C schema steps around the others' loads; "begin" answers in "tables"
how many units need loading).
"""

from collections.abc import Callable
from typing import final

__all__ = [
    "ConfigError",
    "ConnectError",
    "DriverError",
    "NotPreparedError",
    "OltpLabError",
    "RunMerge",
    "__version__",
    "catalog",
    "check",
    "check_db_url",
    "cleanup",
    "merge_histograms",
    "prepare",
    "redact_db_url",
    "run",
]
__version__: str

def catalog() -> str:
    """JSON: {"general": [opt...], "workloads": [{"name", "description", "options": [opt...]}]}.

    Each opt: {"name", "type": "int"|"float"|"bool"|"str"|"list", "default", "help",
    and "min"/"max" (int, float) or "choices" (str)}.
    """

def prepare(spec_json: str, on_event: Callable[[str], None] | None = None) -> str: ...
def run(spec_json: str, on_event: Callable[[str], None] | None = None) -> str:
    """Runs the load.

    Ctrl-C stops it and returns the partial result with stop_reason "interrupted";
    before the load starts (while connecting) it raises KeyboardInterrupt.
    """

def cleanup(spec_json: str, on_event: Callable[[str], None] | None = None) -> str: ...
def redact_db_url(url: str) -> str:
    """The URL with its password masked, as the engine's parser reads it; never raises."""

def check_db_url(url: str) -> None:
    """Raises ConfigError when a server URL cannot be read one way only."""

def merge_histograms(encoded: list[str], ranks: list[float]) -> str:
    """Adds V2 compressed histograms (base64, 1 ns..1 h, 3 digits) exactly; refuses another
    shape. JSON: {"encoded", "count", "min_ns", "max_ns", "mean_ns",
    "percentiles_ns": [[rank, ns], ...]}."""

def check(spec_json: str, on_event: Callable[[str], None] | None = None) -> str:
    """TPC-C's consistency conditions; JSON {"driver", "table_sets", "passed", "conditions"}."""

@final
class RunMerge:
    """A distributed run's merge: the clients' interval events added into the run's, and their
    results into the run's result, by the code a local run reports and summarises itself with."""

    def __new__(cls, spec_json: str) -> RunMerge:
        """`spec_json`: the run as a whole (total threads and rate), as `run` takes it."""

    def interval(self, events_json: list[str]) -> str:
        """One interval event of each client (the same interval) -> the merged interval event
        (with "clients": how many it adds up); the measured ones add to the run's totals."""

    def finish(self, results_json: list[str], end_json: str) -> str:
        """The results of the clients that finished and the driver's view of the end,
        {"started_at", "ended_at", "interrupted", "error", "flags"} -> the run's result."""

class OltpLabError(Exception): ...
class ConfigError(OltpLabError): ...
class ConnectError(OltpLabError): ...
class NotPreparedError(OltpLabError): ...
class DriverError(OltpLabError): ...
