"""oltplab: sysbench-identical OLTP workloads from a Rust engine, honest latency, run
directories that pandas and any HdrHistogram tool can read.

    >>> import oltplab
    >>> result = oltplab.run("oltp_read_only", time=5, threads=4)  # doctest: +SKIP
    >>> result.summary.tps, result.intervals[Column.lat_p95_ms].max()  # doctest: +SKIP
    >>> oltplab.analyse(result.path).whole.steady.mean_tps  # doctest: +SKIP
    >>> oltplab.compare(["runs/b1", "runs/b2"], ["runs/a1", "runs/a2"]).to_frame()  # doctest: +SKIP

Without `db`, an embedded SQLite database under ./oltplab-runs/ is used and prepared when
it is missing or was prepared with other options. Option names are sysbench's, with
underscores (`table_size=1000`, `skip_trx=True`). run.json is typed (`result.doc`, see
oltplab.documents.run); intervals.csv's columns are named by oltplab.rundir.intervals.Column.
"""

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from oltplab.analysis.compare import Comparison, compare
    from oltplab.analysis.relative import RelativeTable, relative_table
    from oltplab.analysis.run_analysis import RunAnalysis, analyse
    from oltplab.analysis.sweep import Sweep, sweep

# The analysis (numpy, scipy, pandas) is loaded on first use: `oltplab run` starts without it.
_ANALYSIS = {
    "Comparison": "compare",
    "compare": "compare",
    "RelativeTable": "relative",
    "relative_table": "relative",
    "RunAnalysis": "run_analysis",
    "analyse": "run_analysis",
    "Sweep": "sweep",
    "sweep": "sweep",
}


def __getattr__(name: str) -> Any:
    module = _ANALYSIS.get(name)
    if module is None:
        raise AttributeError(f"module 'oltplab' has no attribute '{name}'")
    return getattr(importlib.import_module(f"oltplab.analysis.{module}"), name)


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


def check(workload: str = "tpcc", db: str | None = None, **options: Any) -> Json:
    """TPC-C's consistency conditions (clause 3.3.2.1-12) on `db` (without it: the default
    SQLite database `prepare` and `run` use): {"driver", "table_sets",
    "passed", "conditions": [{"table_set", "number", "description", "offending", "status"}]}."""
    return runner.check(workload, db, options)


__all__ = [
    "Comparison",
    "ConfigError",
    "ConnectError",
    "DriverError",
    "EngineMissingError",
    "NotPreparedError",
    "OltpLabError",
    "RelativeTable",
    "Run",
    "RunAnalysis",
    "RunResult",
    "Sweep",
    "__version__",
    "analyse",
    "check",
    "cleanup",
    "compare",
    "load_run",
    "prepare",
    "relative_table",
    "run",
    "sweep",
]
