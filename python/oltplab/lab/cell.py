"""One cell: the right server config running, the prepared data in place, a quiet host, then
one run directory under runs/<cell id> whose run.json names its lab, cell and config."""

import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oltplab import runner
from oltplab.documents.lab import (
    RUNS_DIR,
    SNAPSHOTS_DIR,
    CellRecord,
    LabDocument,
    PreparedData,
    ServerSpec,
    WorkloadSpec,
)
from oltplab.documents.run import HostBusy, LabRef, Pinning
from oltplab.lab import script
from oltplab.lab.data import DataShape, cell_writes, restore_snapshot, snapshot_server
from oltplab.lab.servers import LabServers
from oltplab.metrics.system import cpu_count, host_busy_pct
from oltplab.runners import LocalRunner, Runner
from oltplab.servers.pinning import cpus_allowed_list

# A host busier than this (share of all CPUs) before a cell is warned about.
BUSY_WARN_PCT = 10.0
BUSY_SAMPLE_S = 0.5


@dataclass
class DataState:
    """What a server's data directory holds: which shape, and whether a cell wrote to it."""

    shape: str | None = None  # unknown at start (a resumed lab): restore first
    dirty: bool = True


@dataclass
class LabContext:
    doc: LabDocument
    lab_dir: Path
    servers: LabServers
    # Where the cells' load comes from: here, or the Ray cluster of [client] ray.
    load: Runner = field(default_factory=LocalRunner)
    data: dict[str, DataState] = field(default_factory=dict)
    quiet: bool = False

    def say(self, text: str) -> None:
        if not self.quiet:
            print(f"oltplab lab: {text}", file=sys.stderr, flush=True)


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def run_options(ctx: LabContext, w: WorkloadSpec, cell: CellRecord) -> dict[str, Any]:
    spec = ctx.doc.lab
    options = dict(w.options) | {
        "threads": cell.threads,
        "time": _number(spec.time_s),
        "warmup_time": _number(spec.warmup_time_s),
        "report_interval": _number(spec.report_interval_s),
    }
    if cell.rate is not None:
        options["rate"] = _number(cell.rate)
    return options


def _prepare_options(w: WorkloadSpec) -> dict[str, Any]:
    options = dict(w.options)
    if "threads" not in options and w.name == "tpcc":
        # TPC-C loads one warehouse per loader: as many loaders as warehouses (up to the CPUs).
        units = int(options.get("warehouses") or options.get("scale", 1)) * int(
            options.get("tables", 1)
        )
        options["threads"] = max(1, min(units, cpu_count()))
    elif "threads" not in options and w.name != "bulk_insert":
        # Tables load in parallel, one connection each (as sysbench's prepare --threads).
        options["threads"] = max(1, min(int(options.get("tables", 1)), cpu_count()))
    return options


def place_data(ctx: LabContext, server: ServerSpec, config: str, w: WorkloadSpec) -> float | None:
    """Prepares (first time) or restores the data this cell needs; the restore's seconds
    (stop, copy, start with the cell's config) or None when no restore was needed."""
    if not server.managed:
        return None
    shape = DataShape.of_workload(w)
    snapshot = ctx.lab_dir / SNAPSHOTS_DIR / server.name / shape.id
    state = ctx.data.setdefault(server.name, DataState())
    if not snapshot.is_dir():
        managed, _ = ctx.servers.ensure(server, config)
        given = ", ".join(f"{k}={v}" for k, v in w.options.items())
        ctx.say(f"preparing {w.name} data on {server.name} ({given or 'defaults'})")
        started = time.monotonic()
        managed.recreate_database()
        if w.script is None:
            runner.prepare(w.name, managed.url, _prepare_options(w))
        else:
            script.prepare(w.script, managed.url, _prepare_options(w))
        prepare_s = time.monotonic() - started
        ctx.servers.stop(server.name)
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        snapshot_s = snapshot_server(managed, snapshot)
        ctx.doc.prepared.append(
            PreparedData(
                server=server.name,
                shape=shape.id,
                family=shape.family,
                options=shape.options,
                prepare_s=prepare_s,
                snapshot_s=snapshot_s,
                snapshot_dir=str(snapshot.relative_to(ctx.lab_dir)),
            )
        )
        ctx.data[server.name] = DataState(shape.id, dirty=False)
        return None
    policy = ctx.doc.lab.restore
    need = state.shape != shape.id or policy == "always" or (policy == "auto" and state.dirty)
    if not need:
        return None
    started = time.monotonic()
    ctx.servers.discard(server.name)
    restore_snapshot(snapshot, ctx.servers.base_dir(server.name) / "data")
    ctx.servers.ensure(server, config)
    ctx.data[server.name] = DataState(shape.id, dirty=False)
    return time.monotonic() - started


def _set_aside(run_dir: Path) -> None:
    """An earlier, unfinished attempt's directory is kept beside the new one, not lost."""
    if run_dir.exists() and any(run_dir.iterdir()):
        for n in range(1, 1000):
            aside = run_dir.with_name(f"{run_dir.name}.attempt-{n}")
            if not aside.exists():
                run_dir.rename(aside)
                return
    shutil.rmtree(run_dir, ignore_errors=True)


def execute_cell(ctx: LabContext, cell: CellRecord, url: str) -> runner.RunResult:
    """Runs the cell's load (its server is running with the right config and data)."""
    spec = ctx.doc.lab
    server, w = spec.server(cell.server), spec.workload(cell.workload)
    if spec.cooldown_s > 0:
        time.sleep(spec.cooldown_s)
    busy = host_busy_pct(BUSY_SAMPLE_S)
    cell.host_busy_pct = round(busy, 2)
    if busy > BUSY_WARN_PCT:
        ctx.say(
            f"warning: the host was {busy:.0f}% busy before {cell.id} (other processes): "
            "its numbers may be lower and noisier"
        )
    run_dir = ctx.lab_dir / RUNS_DIR / cell.id
    _set_aside(run_dir)
    cell.run_dir = str(run_dir.relative_to(ctx.lab_dir))
    fields = runner.LabFields(
        label=f"{cell.server}/{cell.config}",
        lab=LabRef(
            name=spec.name,
            dir=str(ctx.lab_dir.resolve()),
            cell=cell.id,
            server=cell.server,
            config=cell.config,
            repeat=cell.repeat,
            config_variables=ctx.doc.config_variables[cell.server][cell.config],
            restore_s=cell.restore_s,
        ),
        pinning=Pinning(
            client_cpus=spec.client_cpus,
            client_cpus_allowed=cpus_allowed_list(),
            server_cpus=server.cpus,
            server_cpus_allowed=ctx.servers.cpus_allowed(server.name),
        ),
        host_busy=HostBusy(busy_pct=busy, cores=os.cpu_count() or 1),
    )
    options, call = run_options(ctx, w, cell), None
    if w.script is not None:  # the engine's general options, and the script's call
        options, call = script.run_call(w.script, options)
    try:
        return ctx.load.run(
            w.script or w.name,
            url,
            options,
            out=run_dir,
            metrics=spec.metrics,
            lab=fields,
            script=call,
        )
    finally:
        if cell_writes(w):  # also when it failed or was interrupted: the data moved
            ctx.data.setdefault(cell.server, DataState()).dirty = True
