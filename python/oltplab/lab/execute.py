"""`oltplab lab run`: creates or resumes a lab directory and runs its pending cells.

Every state change of a cell is written to lab.json at once (atomically), so a lab killed at
any moment resumes from what lab.json says: done cells are kept; running (the process died),
interrupted, failed and pending ones run again.
"""

import time
from dataclasses import dataclass
from pathlib import Path

from oltplab.documents.lab import (
    LAB_FILE,
    LAB_TOML_COPY,
    SUMMARY_FILE,
    CellRecord,
    LabDocument,
    LabSpec,
    read_lab_document,
    write_lab_document,
)
from oltplab.exceptions import ConfigError, OltpLabError, ServerError
from oltplab.lab.cell import LabContext, execute_cell, place_data
from oltplab.lab.plan import config_differences, fingerprint, plan_cells, resume_difference
from oltplab.lab.servers import LabServers, check_lab_dir_reachable, server_accounts
from oltplab.lab.summary import lab_summary_text
from oltplab.redact import redact_url
from oltplab.rundir.manifest import iso_utc
from oltplab.runners import runner_for
from oltplab.servers.osuser import make_reachable_dirs
from oltplab.servers.pinning import parse_cpu_list, pin_self


@dataclass(frozen=True)
class LabOutcome:
    doc: LabDocument
    interrupted: bool

    @property
    def failed(self) -> list[CellRecord]:
        return [c for c in self.doc.cells if c.status == "failed"]


def _now() -> str:
    return iso_utc(time.time())


def new_document(spec: LabSpec, source: Path) -> LabDocument:
    cells = plan_cells(spec)
    return LabDocument(
        lab=spec,
        source=str(source.resolve()),
        fingerprint=fingerprint(spec),
        plan=[c.id for c in cells],
        cells=cells,
        config_variables=config_differences(spec),
        created_at=_now(),
        updated_at=_now(),
    )


def _redacted(spec: LabSpec, text: str) -> str:
    """The lab file as kept in DIR/lab.toml: external servers' passwords masked."""
    for server in spec.servers:
        if server.url is not None:
            text = text.replace(server.url, redact_url(server.url))
    return text


def open_lab(spec: LabSpec, source: Path, text: str, lab_dir: Path) -> LabDocument:
    """A new lab document in an empty (or new) directory, or the existing one, extended
    with the cells the lab file added; a one-line ConfigError when it cannot resume."""
    if (lab_dir / LAB_FILE).is_file():
        old = read_lab_document(lab_dir)
        why = resume_difference(old.lab, spec)
        if why is not None:
            raise ConfigError(
                f"{lab_dir} holds lab {old.lab.name!r} run from another lab file: {why}; "
                "give a new --out DIR, or undo the change to resume"
            )
        fresh = new_document(spec, source)
        known = {c.id: c for c in old.cells}
        fresh.cells = [known.get(c.id, c) for c in fresh.cells]
        fresh.prepared, fresh.created_at = old.prepared, old.created_at
        (lab_dir / LAB_TOML_COPY).write_text(
            _redacted(spec, text), encoding="utf-8"
        )  # cells may have been added
        return fresh
    if lab_dir.exists() and (not lab_dir.is_dir() or any(lab_dir.iterdir())):
        raise ConfigError(f"--out {lab_dir} is not empty and holds no lab; give a new directory")
    make_reachable_dirs(lab_dir, server_accounts(spec).values())
    (lab_dir / LAB_TOML_COPY).write_text(_redacted(spec, text), encoding="utf-8")
    return new_document(spec, source)


def _save(ctx: LabContext) -> None:
    ctx.doc.updated_at = _now()
    write_lab_document(ctx.lab_dir, ctx.doc)


def _fail_config(ctx: LabContext, cell: CellRecord, error: str) -> None:
    """A config the server refused fails every cell of that config still to run."""
    for other in ctx.doc.cells:
        if (other.server, other.config) == (cell.server, cell.config) and other.status != "done":
            other.status, other.error = "failed", error
    ctx.say(f"{cell.server}.{cell.config} failed: {error}")


def _fail_cell(ctx: LabContext, cell: CellRecord, error: str | None, position: str) -> bool:
    """The cell failed (the lab goes on: returns True, as _run_one); a managed server that
    died under it is named, with what its log said."""
    error = "; ".join(e for e in (error, ctx.servers.exit_note(cell.server)) if e) or "failed"
    cell.status, cell.error, cell.ended_at = "failed", error, cell.ended_at or _now()
    ctx.say(f"{position} {cell.id} failed: {error}")
    _save(ctx)
    return True


def _run_one(ctx: LabContext, cell: CellRecord, index: int, total: int) -> bool:
    """Runs one cell; False when the lab must stop (Ctrl-C)."""
    spec = ctx.doc.lab
    server = spec.server(cell.server)
    cell.status, cell.started_at, cell.error = "running", _now(), None
    cell.ended_at = cell.restore_s = cell.overhead_s = None
    _save(ctx)
    began = time.monotonic()
    try:
        if server.managed:
            cell.restore_s = place_data(ctx, server, cell.config, spec.workload(cell.workload))
            managed, _ = ctx.servers.ensure(server, cell.config)
            url = managed.url
        else:
            assert server.url is not None
            url = server.url
    except ServerError as e:
        _fail_config(ctx, cell, str(e))
        cell.ended_at = _now()
        _save(ctx)
        return True
    except OltpLabError as e:  # preparing the data failed: this cell fails, the lab goes on
        return _fail_cell(ctx, cell, str(e), f"[{index}/{total}]")
    try:
        result = execute_cell(ctx, cell, url)
    except KeyboardInterrupt:
        cell.status, cell.ended_at = "interrupted", _now()
        _save(ctx)
        return False
    except OltpLabError as e:
        return _fail_cell(ctx, cell, str(e), f"[{index}/{total}]")
    if ctx.servers.exit_note(cell.server) is not None:
        # The client reconnects after a lost connection, so a run can outlive a crash.
        return _fail_cell(ctx, cell, result.doc.error, f"[{index}/{total}]")
    summary = result.summary
    measured_s = 0.0 if summary is None else summary.duration_s + summary.warmup_s
    cell.overhead_s = round(time.monotonic() - began - measured_s, 3)
    cell.ended_at = _now()
    if result.stop_reason == "interrupted":
        cell.status = "interrupted"
        _save(ctx)
        return False
    if result.complete and summary is not None:
        cell.status = "done"
        p95 = summary.latency_ms.p95
        restore = f", restore {cell.restore_s:.1f} s" if cell.restore_s is not None else ""
        ctx.say(
            f"[{index}/{total}] {cell.id}: {summary.tps:.1f} tps, "
            f"p95 {p95 if p95 is None else round(p95, 2)} ms{restore}"
        )
        _save(ctx)
        return True
    return _fail_cell(ctx, cell, result.doc.error or result.stop_reason, f"[{index}/{total}]")


def run_lab(
    spec: LabSpec, source: Path, text: str, lab_dir: Path, *, quiet: bool = False
) -> LabOutcome:
    """Runs every cell not done yet; stops the servers it started whatever happens."""
    check_lab_dir_reachable(spec, lab_dir)
    doc = open_lab(spec, source, text, lab_dir)
    if spec.client_cpus is not None:
        pin_self(parse_cpu_list(spec.client_cpus))
    ctx = LabContext(
        doc=doc,
        lab_dir=lab_dir,
        servers=LabServers(spec, lab_dir),
        load=runner_for(spec.client_ray, spec.client_clients),
        quiet=quiet,
    )
    doc.status = "running"
    for cell in doc.cells:  # a resumed lab runs again what did not finish
        if cell.status != "done":
            cell.status = "pending"
    _save(ctx)
    ctx.servers.stop_leftovers()
    todo = [doc.cell(i) for i in doc.plan if doc.cell(i).status != "done"]
    interrupted = False
    try:
        for n, cell in enumerate(todo, start=1):
            if cell.status == "failed":
                continue  # its config was refused earlier in this invocation
            if not _run_one(ctx, cell, n, len(todo)):
                interrupted = True
                break
    except KeyboardInterrupt:
        interrupted = True
        for cell in doc.cells:
            if cell.status == "running":
                cell.status, cell.ended_at = "interrupted", _now()
    finally:
        ctx.servers.stop_all()
        failed = any(c.status == "failed" for c in doc.cells)
        doc.status = "interrupted" if interrupted else "failed" if failed else "done"
        _save(ctx)
    (lab_dir / SUMMARY_FILE).write_text(lab_summary_text(lab_dir, doc), encoding="utf-8")
    return LabOutcome(doc, interrupted)
