"""What runs being compared should share, and the warnings when they do not
(issue 5: workload options, data size, client version, server configuration beyond the
variable under test). A comparison is only as good as the sameness of everything else."""

from collections.abc import Iterable, Sequence
from typing import Any

from oltplab.rundir import Run

# Options that name the run, not the work: they differ between runs by design.
_RUN_OPTIONS = {"rand_seed", "time", "events", "report_interval", "percentile", "histogram"}
# Options compared only inside a comparison group, since groups differ in them on purpose.
_LOAD_OPTIONS = {"threads", "rate"}
_DATA_OPTIONS = ("tables", "table_size")
# Server variables that name a path, a port, a host or a moment rather than a behaviour.
_VOLATILE_VARIABLE_PARTS = (
    "dir",
    "file",
    "path",
    "port",
    "socket",
    "hostname",
    "host_name",
    "pid",
    "uuid",
    "server_uid",
    "gtid_",
    "timestamp",
    "ssl_",
    "log_error",
    "version",  # compared as the server's version
)
# Beyond this many differing variables the comparison is not of one variable.
_MAX_VARIABLES_UNDER_TEST = 3


def comparable_variables(run: Run) -> dict[str, str]:
    """The run's server variables that describe behaviour (paths, ports and the like left out)."""
    variables = run.doc.target.server_variables or {}
    return {
        k: v
        for k, v in variables.items()
        if not any(part in k.lower() for part in _VOLATILE_VARIABLE_PARTS)
    }


def _differing(values: dict[str, Any]) -> bool:
    return len({repr(v) for v in values.values()}) > 1


def _names(runs: Sequence[Run]) -> dict[str, Run]:
    return {run.path.name: run for run in runs}


def option_warnings(runs: Sequence[Run]) -> list[str]:
    """Workload options (beyond the load: threads, rate) and data size that differ among
    runs of one comparison group."""
    warnings = []
    by_name = _names(runs)
    # Options some runs lack come from other oltplab versions: not a difference in the work.
    shared = set.intersection(*(set(r.options) for r in runs)) if runs else set()
    keys = sorted(shared - _RUN_OPTIONS - _LOAD_OPTIONS)
    data = [k for k in keys if k in _DATA_OPTIONS]
    rest = [k for k in keys if k not in _DATA_OPTIONS]
    for group, what in ((data, "data size"), (rest, "workload options")):
        for key in group:
            values = {name: r.options.get(key) for name, r in by_name.items()}
            if _differing(values):
                warnings.append(f"{what} differ: {key} = {_listing(values)}")
    return warnings


def client_warnings(runs: Sequence[Run]) -> list[str]:
    values = {name: f"{r.doc.tool.name} {r.doc.tool.version}" for name, r in _names(runs).items()}
    return [f"client versions differ: {_listing(values)}"] if _differing(values) else []


def server_warnings(side: str, runs: Sequence[Run]) -> list[str]:
    """Runs of one side should have run on the same server with the same configuration."""
    warnings = []
    versions = {name: r.doc.target.server_version for name, r in _names(runs).items()}
    if _differing(versions):
        warnings.append(f"{side} runs ran on different server versions: {_listing(versions)}")
    differing = differing_variables(runs)
    if differing:
        warnings.append(
            f"{side} runs differ in server variables: {', '.join(differing[:10])}"
            + (" …" if len(differing) > 10 else "")
        )
    return warnings


def differing_variables(runs: Iterable[Run]) -> list[str]:
    """Server variables (paths, ports and the like left out) whose values differ."""
    tables = [comparable_variables(r) for r in runs]
    tables = [t for t in tables if t]
    if len(tables) < 2:
        return []
    keys = sorted(set.intersection(*(set(t) for t in tables)))
    return [k for k in keys if len({t[k] for t in tables}) > 1]


def between_sides_warnings(candidates: Sequence[Run], baselines: Sequence[Run]) -> list[str]:
    """The server variables that differ between the sides are the variables under test;
    more than a few means the comparison is not of one change."""
    drivers = {r.doc.target.driver for r in (*candidates, *baselines)}
    if len(drivers) > 1:
        return [f"the sides ran on different database engines ({', '.join(map(str, drivers))})"]
    differing = differing_variables([candidates[0], baselines[0]])
    if len(differing) > _MAX_VARIABLES_UNDER_TEST:
        return [
            f"the sides differ in {len(differing)} server variables, not only the one under "
            f"test: {', '.join(differing[:10])}" + (" …" if len(differing) > 10 else "")
        ]
    return []


def _listing(values: dict[str, Any]) -> str:
    return ", ".join(f"{v} ({name})" for name, v in values.items())
