"""prepare, run and cleanup as the API and the CLI share them: resolve the database
(the default SQLite file when none is given), drive the engine, write the run directory.
Nothing here prints; callers observe progress through hooks.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from oltplab import engine
from oltplab._fsutil import remove_empty_dir
from oltplab._types import EventHandler, Json
from oltplab.catalog import load_catalog
from oltplab.defaultdb import DEFAULT_RESULTS_ROOT, DefaultDb
from oltplab.documents.run import HostBusy, LabRef, Pinning, RunManifest
from oltplab.exceptions import NotPreparedError
from oltplab.metrics import MetricsSampler
from oltplab.redact import check_db_url
from oltplab.rundir import Run, RunWriter, create_default_run_dir, create_run_dir
from oltplab.rundir.manifest import initial_manifest


@dataclass(frozen=True)
class RunResult(Run):
    """A finished (or interrupted) run: its directory, run.json and the engine's result."""

    raw: Json

    @property
    def stop_reason(self) -> str:
        return str(self.doc.stop_reason)


@dataclass(frozen=True)
class LabFields:
    """What a lab cell adds to its run's run.json (docs/labs.md)."""

    label: str  # "server/config"
    lab: LabRef
    pinning: Pinning
    host_busy: HostBusy


def with_extras(
    manifest: RunManifest, sampler: MetricsSampler | None, lab: LabFields | None
) -> RunManifest:
    """The first run.json, naming the metric files `sampler` writes and `lab`'s cell."""
    if sampler is not None:
        manifest = sampler.recorded_in(manifest)
    if lab is None:
        return manifest
    return replace(
        manifest, label=lab.label, lab=lab.lab, pinning=lab.pinning, host_busy=lab.host_busy
    )


@dataclass(frozen=True)
class Hooks:
    on_event: EventHandler | None = None  # the run's events (started, interval, message)
    on_auto_prepare: Callable[[DefaultDb], None] | None = None  # the default db is (re)prepared
    on_prepare_event: EventHandler | None = None  # that prepare's events (message, rows)


NO_HOOKS = Hooks()


def prepare(
    workload: str,
    db: str | None,
    options: Mapping[str, Any],
    *,
    results_root: Path = DEFAULT_RESULTS_ROOT,
    on_event: EventHandler | None = None,
) -> Json:
    """Creates and loads the workload's tables; without `db`, (re)makes the default database."""
    effective = load_catalog().resolve(workload, options)  # unknown names fail before any work
    if db is None:
        default = DefaultDb.for_workload(results_root, workload, effective)
        return default.prepare(workload, options, on_event)
    return engine.prepare(engine.build_spec(workload, db, options, create=True), on_event)


def cleanup(
    workload: str,
    db: str | None,
    options: Mapping[str, Any],
    *,
    results_root: Path = DEFAULT_RESULTS_ROOT,
    on_event: EventHandler | None = None,
) -> Json:
    """Drops the workload's tables; without `db`, deletes the default database file.

    Returns the engine's cleanup result, or {"workload", "db", "removed": bool} for the
    default database.
    """
    effective = load_catalog().resolve(workload, options)
    if db is None:
        default = DefaultDb.for_workload(results_root, workload, effective)
        return {"workload": workload, "db": default.url, "removed": default.remove()}
    return engine.cleanup(engine.build_spec(workload, db, options), on_event)


def check(
    workload: str,
    db: str | None,
    options: Mapping[str, Any],
    *,
    results_root: Path = DEFAULT_RESULTS_ROOT,
) -> Json:
    """Runs the workload's consistency checks (TPC-C's clause 3.3.2) against `db`; without it,
    against the default SQLite database `prepare` and `run` use (which must exist)."""
    effective = load_catalog().resolve(workload, options)
    if db is None:
        default = DefaultDb.for_workload(results_root, workload, effective)
        if not default.is_current():
            raise NotPreparedError(
                f"no prepared default database for {workload} at this shape "
                f"({default.url}): run `oltplab prepare {workload}` with the same options first"
            )
        db = default.url
    return engine.check(engine.build_spec(workload, db, options))


def _target(
    workload: str,
    db: str | None,
    options: Mapping[str, Any],
    effective: Mapping[str, Any],
    results_root: Path,
    hooks: Hooks,
) -> str:
    """The database URL to run against, preparing the default database if needed."""
    if db is not None:
        return db
    default = DefaultDb.for_workload(results_root, workload, effective)
    if not default.is_current():
        if hooks.on_auto_prepare is not None:
            hooks.on_auto_prepare(default)
        default.prepare(workload, options, hooks.on_prepare_event)
    return default.url


def with_sampling_cost(manifest: RunManifest, sampler: MetricsSampler) -> RunManifest:
    """run.json's record of what sampling cost: all of it, and the part outside client_cpu_s."""
    return replace(manifest, sampler_cpu_s=sampler.cpu_s, sampler_child_cpu_s=sampler.child_cpu_s)


def _abort(
    writer: RunWriter, sampler: MetricsSampler | None, *, started: bool, error: BaseException
) -> None:
    """The engine raised: mark what was measured incomplete, or remove everything when the
    load never started."""
    if sampler is not None and started:
        sampler.close()
        writer.manifest = with_sampling_cost(writer.manifest, sampler)
    elif sampler is not None:
        sampler.discard()
    if not started:
        writer.discard()  # nothing was measured: leave nothing behind
    elif isinstance(error, KeyboardInterrupt):
        writer.abort(stop_reason="interrupted", error=None)
    else:
        writer.abort(stop_reason="error", error=str(error) or type(error).__name__)


def run(
    workload: str,
    db: str | None,
    options: Mapping[str, Any],
    *,
    out: Path | None = None,
    argv: Sequence[str] | None = None,
    results_root: Path = DEFAULT_RESULTS_ROOT,
    hooks: Hooks = NO_HOOKS,
    metrics: Sequence[str] = (),
    lab: LabFields | None = None,
    script: Json | None = None,
) -> RunResult:
    """Runs the load and writes its run directory (`out`, or one under `results_root`).

    `metrics` ("system", "server") samples system.csv/server.csv on the interval grid;
    `lab` adds a lab cell's fields to run.json. `script`: `workload` is a sysbench Lua script's
    path and this its call (docs/lua.md); run.json names it, with its own options as given.

    Ctrl-C: the engine returns the partial result, written with complete=false. If the
    engine raises after the load started, run.json is marked incomplete and the error
    re-raised; if it raises before, the run directory is removed.
    """
    catalog = load_catalog()
    if script is None:
        effective = catalog.resolve(workload, options)
    else:
        effective = catalog.resolve_script(workload, options) | dict(script.get("args") or {})
    if db is not None:
        check_db_url(db)  # before anything holding the URL is written
    # The run directory first, so that a bad --out fails before any work.
    if out is None:
        name = workload if script is None else PurePosixPath(workload).stem
        run_dir, created = create_default_run_dir(results_root, name, datetime.now()), True
    else:
        run_dir, created = out, create_run_dir(out)
    try:
        db_url = _target(workload, db, options, effective, results_root, hooks)
        manifest = initial_manifest(workload=workload, options=effective, db_url=db_url, argv=argv)
        sampler = MetricsSampler(run_dir, metrics, db_url) if metrics else None
        writer = RunWriter.create(run_dir, with_extras(manifest, sampler, lab), created_dir=created)
    except BaseException:
        if created:
            remove_empty_dir(run_dir)
        raise

    started = False

    def handle(event: Json) -> None:
        nonlocal started
        started = started or event.get("event") == "started"
        writer.on_event(event)
        if sampler is not None:
            sampler.on_event(event)
        if hooks.on_event is not None:
            hooks.on_event(event)

    try:
        if sampler is not None:
            sampler.start()
        result = engine.run(engine.build_spec(workload, db_url, options, script=script), handle)
    except BaseException as e:
        _abort(writer, sampler, started=started, error=e)
        raise
    if sampler is not None:
        sampler.close()  # its rows are on disk before run.json says complete
        writer.manifest = with_sampling_cost(writer.manifest, sampler)
    return RunResult(run_dir, writer.finish(result), raw=result)
