"""oltplab: sysbench-identical OLTP workloads from a Rust engine, honest latency, run
directories that pandas and any HdrHistogram tool can read.

    >>> import oltplab
    >>> result = oltplab.run("oltp_read_only", time=5, threads=4)  # doctest: +SKIP
    >>> result.summary["tps"], result.intervals["lat_p95_ms"].max()  # doctest: +SKIP

Without `db`, an embedded SQLite database under ./oltplab-runs/ is used and prepared when
it is missing or was prepared with other options. Option names are sysbench's, with
underscores (`table_size=1000`, `skip_trx=True`).
"""

from pathlib import Path
from typing import Any

from oltplab import runner
from oltplab._types import EventHandler, Json
from oltplab._version import __version__
from oltplab.catalog import DEFAULT_WORKLOAD
from oltplab.exceptions import (
    ConfigError,
    ConnectError,
    DriverError,
    EngineMissingError,
    NotPreparedError,
    OltpLabError,
)
from oltplab.rundir import Run, load_run
from oltplab.runner import RunResult


def prepare(
    workload: str = DEFAULT_WORKLOAD,
    db: str | None = None,
    *,
    on_event: EventHandler | None = None,
    **options: Any,
) -> Json:
    """Creates and loads the workload's tables (sysbench's `prepare`); returns the engine's
    prepare result. `db` is a URL such as `sqlite:///path/to.db`; without it, the default
    SQLite database under ./oltplab-runs/ is (re)made."""
    return runner.prepare(workload, db, options, on_event=on_event)


def run(
    workload: str = DEFAULT_WORKLOAD,
    db: str | None = None,
    out: str | Path | None = None,
    *,
    on_event: EventHandler | None = None,
    **options: Any,
) -> RunResult:
    """Runs the workload and writes a run directory (`out`, or ./oltplab-runs/<time>-<workload>/).

    Ctrl-C stops the load and returns the partial result (complete=False). `on_event`
    receives the engine's progress events as dicts (see oltplab/_core.pyi).
    """
    return runner.run(
        workload,
        db,
        options,
        out=Path(out) if out is not None else None,
        hooks=runner.Hooks(on_event=on_event),
    )


def cleanup(
    workload: str = DEFAULT_WORKLOAD,
    db: str | None = None,
    *,
    on_event: EventHandler | None = None,
    **options: Any,
) -> Json:
    """Drops the workload's tables (sysbench's `cleanup`); without `db`, deletes the default
    SQLite database."""
    return runner.cleanup(workload, db, options, on_event=on_event)


__all__ = [
    "ConfigError",
    "ConnectError",
    "DriverError",
    "EngineMissingError",
    "NotPreparedError",
    "OltpLabError",
    "Run",
    "RunResult",
    "__version__",
    "cleanup",
    "load_run",
    "prepare",
    "run",
]
