"""lab.json, typed: a lab as resolved from its file, its plan and the state of every cell.

    DIR/lab.json             this document (rewritten atomically after every cell change)
    DIR/lab.toml             the lab file as given (a copy)
    DIR/runs/<cell id>/      one run directory per cell (run.json names its lab and cell)
    DIR/servers/<server>/    each managed server's directory (`oltplab server start` takes it)
    DIR/snapshots/<server>/<shape>/   the prepared data, copied while the server was stopped
    DIR/summary.txt          the results tables, as printed at the end

Dataclasses with explicit to_json/from_json: the lab writes them, `oltplab lab status`, `show`,
`compare`, `table` and the report read them.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from oltplab._fsutil import write_json_atomic
from oltplab.exceptions import ConfigError

LAB_FORMAT = 1
LAB_FILE = "lab.json"
LAB_TOML_COPY = "lab.toml"
SUMMARY_FILE = "summary.txt"
RUNS_DIR = "runs"
SERVERS_DIR = "servers"
SNAPSHOTS_DIR = "snapshots"

CellStatus = Literal["pending", "running", "done", "failed", "interrupted"]
CELL_STATUSES: tuple[str, ...] = get_args(CellStatus)
Order = Literal["interleaved", "sequential", "random"]
Restore = Literal["auto", "always", "never"]
ConfigValue = str | int | float | bool


@dataclass(frozen=True)
class ServerSpec:
    """[servers.NAME]: a managed MariaDB/PostgreSQL, or an external server (`url`)."""

    name: str
    engine: str  # "mariadb", "postgresql" or "external"
    url: str | None = None  # external only; stored redacted in lab.json
    cpus: str | None = None
    max_connections: int | None = None
    settings: dict[str, ConfigValue] = field(default_factory=dict)
    # config name -> the variables it sets over `settings`; {"default": {}} when none given
    configs: dict[str, dict[str, ConfigValue]] = field(default_factory=dict)

    @property
    def managed(self) -> bool:
        return self.engine != "external"


@dataclass(frozen=True)
class WorkloadSpec:
    """[[workloads]]: a cell per thread count (closed loop) or per rate (open loop)."""

    name: str
    threads: tuple[int, ...] = ()
    rate: tuple[float, ...] = ()  # open loop: transactions/s; `threads` then sizes the pool
    options: dict[str, Any] = field(default_factory=dict)
    label: str | None = None  # distinguishes two [[workloads]] of the same name
    # A sysbench Lua script instead of a built-in workload: its absolute path, and its content's
    # SHA-256 (part of the data shape; a changed script refuses to resume). `name` is its stem.
    script: str | None = None
    script_sha256: str | None = None

    @property
    def key(self) -> str:
        return self.label or self.name


@dataclass(frozen=True)
class LabSpec:
    """The lab file, resolved: defaults filled in, every name checked."""

    name: str
    time_s: float
    warmup_time_s: float
    repeats: int
    order: Order
    seed: int
    restore: Restore
    cooldown_s: float
    report_interval_s: float
    metrics: tuple[str, ...]
    client_cpus: str | None
    servers: tuple[ServerSpec, ...]
    workloads: tuple[WorkloadSpec, ...]
    client_ray: str | None = None  # [client] ray: every cell distributed over a Ray cluster
    client_clients: int | None = None  # [client] clients: its engine actors (None: one per node)

    def server(self, name: str) -> ServerSpec:
        return next(s for s in self.servers if s.name == name)

    def workload(self, key: str) -> WorkloadSpec:
        return next(w for w in self.workloads if w.key == key)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "time_s": self.time_s,
            "warmup_time_s": self.warmup_time_s,
            "repeats": self.repeats,
            "order": self.order,
            "seed": self.seed,
            "restore": self.restore,
            "cooldown_s": self.cooldown_s,
            "report_interval_s": self.report_interval_s,
            "metrics": list(self.metrics),
            "client_cpus": self.client_cpus,
            "client_ray": self.client_ray,
            "client_clients": self.client_clients,
            "servers": [_server_json(s) for s in self.servers],
            "workloads": [
                {
                    "name": w.name,
                    "label": w.label,
                    "threads": list(w.threads),
                    "rate": list(w.rate),
                    "options": dict(w.options),
                }
                | _script_json(w)
                for w in self.workloads
            ],
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> "LabSpec":
        return cls(
            name=doc["name"],
            time_s=doc["time_s"],
            warmup_time_s=doc["warmup_time_s"],
            repeats=doc["repeats"],
            order=doc["order"],
            seed=doc["seed"],
            restore=doc["restore"],
            cooldown_s=doc["cooldown_s"],
            report_interval_s=doc["report_interval_s"],
            metrics=tuple(doc["metrics"]),
            client_cpus=doc["client_cpus"],
            client_ray=doc.get("client_ray"),  # absent in labs from before Ray
            client_clients=doc.get("client_clients"),
            servers=tuple(ServerSpec(**s) for s in doc["servers"]),
            workloads=tuple(
                WorkloadSpec(
                    name=w["name"],
                    label=w.get("label"),
                    threads=tuple(w["threads"]),
                    rate=tuple(w["rate"]),
                    options=dict(w["options"]),
                    script=w.get("script"),
                    script_sha256=w.get("script_sha256"),
                )
                for w in doc["workloads"]
            ),
        )


def _script_json(w: WorkloadSpec) -> dict[str, Any]:
    """Only script workloads have the keys: other labs' fingerprints stay as they were."""
    if w.script is None:
        return {}
    return {"script": w.script, "script_sha256": w.script_sha256}


def _server_json(s: ServerSpec) -> dict[str, Any]:
    from oltplab.redact import redact_url  # the lab file's URL may hold a password

    return {
        "name": s.name,
        "engine": s.engine,
        "url": None if s.url is None else redact_url(s.url),
        "cpus": s.cpus,
        "max_connections": s.max_connections,
        "settings": dict(s.settings),
        "configs": {k: dict(v) for k, v in s.configs.items()},
    }


@dataclass
class CellRecord:
    """One cell = server x config x workload x threads (or rate) x repeat."""

    id: str  # also the name of its run directory under runs/
    server: str
    config: str
    workload: str  # the workload's key: its label, else its name
    threads: int
    rate: float | None
    repeat: int  # 1-based
    status: CellStatus = "pending"
    run_dir: str | None = None  # relative to the lab directory: runs/<id>
    started_at: str | None = None  # ISO 8601 UTC, when the cell (restore included) began
    ended_at: str | None = None
    restore_s: float | None = None  # restoring the prepared data (outside measured time)
    overhead_s: float | None = None  # everything of the cell outside the run's own time
    host_busy_pct: float | None = None  # CPU others used just before the cell
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> "CellRecord":
        known = {k: v for k, v in doc.items() if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass
class PreparedData:
    """One data shape prepared on one server, and its snapshot under snapshots/."""

    server: str
    shape: str  # e.g. "oltp-1a2b3c4d5e": family and a hash of the data options
    family: str  # "oltp", "oltp_empty", "bulk_insert"
    options: dict[str, Any]  # the data options (tables, table_size, ...)
    prepare_s: float
    snapshot_s: float
    snapshot_dir: str  # relative to the lab directory

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class LabDocument:
    lab: LabSpec
    source: str  # the lab file as given (absolute path)
    fingerprint: str  # hash of everything but the cell list: a change refuses to resume
    plan: list[str]  # cell ids in the order they run
    cells: list[CellRecord]
    # server -> config -> the variables that differ from the server's other configs
    config_variables: dict[str, dict[str, dict[str, str]]]
    created_at: str
    updated_at: str
    status: Literal["running", "done", "failed", "interrupted"] = "running"
    prepared: list[PreparedData] = field(default_factory=list)
    format: int = LAB_FORMAT

    def cell(self, cell_id: str) -> CellRecord:
        for c in self.cells:
            if c.id == cell_id:
                return c
        raise KeyError(cell_id)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "lab": self.lab.to_json(),
            "source": self.source,
            "fingerprint": self.fingerprint,
            "status": self.status,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "config_variables": self.config_variables,
            "prepared": [p.to_json() for p in self.prepared],
            "plan": list(self.plan),
            "cells": [c.to_json() for c in self.cells],
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> "LabDocument":
        return cls(
            format=doc["format"],
            lab=LabSpec.from_json(doc["lab"]),
            source=doc["source"],
            fingerprint=doc["fingerprint"],
            status=doc["status"],
            created_at=doc["created_at"],
            updated_at=doc["updated_at"],
            config_variables=doc["config_variables"],
            prepared=[PreparedData(**p) for p in doc.get("prepared", [])],
            plan=list(doc["plan"]),
            cells=[CellRecord.from_json(c) for c in doc["cells"]],
        )


def write_lab_document(lab_dir: Path, doc: LabDocument) -> None:
    write_json_atomic(lab_dir / LAB_FILE, doc.to_json())


def read_lab_document(lab_dir: Path) -> LabDocument:
    """Reads DIR/lab.json; a one-line ConfigError when it is missing or unreadable."""
    path = Path(lab_dir) / LAB_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{lab_dir} is not a lab directory: it has no {LAB_FILE}") from None
    except (OSError, ValueError) as e:
        raise ConfigError(f"cannot read {path}: {e}") from e
    if not isinstance(raw, dict) or raw.get("format") != LAB_FORMAT:
        raise ConfigError(f"{path} has format {raw.get('format')!r}; this oltplab reads 1")
    try:
        return LabDocument.from_json(raw)
    except (KeyError, TypeError) as e:
        raise ConfigError(f"{path} is damaged ({e}); run the lab into a new directory") from e


def is_lab_dir(path: Path) -> bool:
    return (Path(path) / LAB_FILE).is_file()
