"""The default database: an embedded SQLite file under the results root, used when no
--db is given, and (re)prepared when it is missing or was prepared with other options.

A sidecar JSON (`sbtest.db.json`) records the data-shaping options the file was prepared
with. Preparing writes to a temporary file that replaces the old one only on success, so
an interrupted or rejected prepare never leaves data that looks usable.
"""

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oltplab import engine
from oltplab._fsutil import remove_sqlite_files, write_json_atomic
from oltplab._types import EventHandler, Json
from oltplab._version import __version__
from oltplab.exceptions import ConfigError

DEFAULT_RESULTS_ROOT = Path("oltplab-runs")

# Options that change what prepare writes (besides every --rand-* option, which shapes k).
_OLTP_DATA_OPTIONS = frozenset(
    {"tables", "table_size", "auto_inc", "create_secondary", "secondary", "create_table_options"}
)
# What tpcc's prepare writes: table sets, warehouses (--warehouses overrides --scale), FKs.
_TPCC_DATA_OPTIONS = frozenset({"tables", "scale", "warehouses", "use_fk"})


def data_family(workload: str, options: Mapping[str, Any]) -> str:
    """Workloads whose prepared data are interchangeable share a family."""
    if workload in ("bulk_insert", "tpcc"):
        return workload  # its own schema (bulk_insert: one (id, k) table per thread)
    if workload == "oltp_insert" and options.get("auto_inc") is False:
        return "oltp_empty"  # oltp_insert without auto_inc prepares empty tables
    return "oltp"


def data_options(family: str, options: Mapping[str, Any]) -> dict[str, Any]:
    if family == "bulk_insert":
        names = {"threads"}  # bulk_insert prepares one table per thread
    elif family == "tpcc":
        names = {n for n in options if n in _TPCC_DATA_OPTIONS}
    else:
        names = {n for n in options if n in _OLTP_DATA_OPTIONS or n.startswith("rand_")}
    return {n: options[n] for n in sorted(names) if n in options}


def sqlite_url(path: Path) -> str:
    return f"sqlite://{path.resolve()}"


@dataclass(frozen=True)
class DefaultDb:
    path: Path
    family: str
    data_options: dict[str, Any]

    @classmethod
    def for_workload(
        cls, results_root: Path, workload: str, options: Mapping[str, Any]
    ) -> "DefaultDb":
        """`options`: every option value (Catalog.resolve)."""
        family = data_family(workload, options)
        name = f"{family}.db" if family in ("bulk_insert", "tpcc") else "sbtest.db"
        return cls(results_root / name, family, data_options(family, options))

    @property
    def url(self) -> str:
        return sqlite_url(self.path)

    @property
    def sidecar(self) -> Path:
        return self.path.with_name(self.path.name + ".json")

    def _identity(self) -> Json:
        # Round-trip through JSON so that the comparison sees what the sidecar stores.
        identity: Json = json.loads(
            json.dumps({"family": self.family, "options": self.data_options})
        )
        return identity

    def is_current(self) -> bool:
        """True when the file exists and was prepared with these data options."""
        if not self.path.is_file():
            return False
        try:
            recorded = json.loads(self.sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        identity = self._identity()
        return isinstance(recorded, dict) and all(recorded.get(k) == v for k, v in identity.items())

    def prepare(
        self, workload: str, options: Mapping[str, Any], on_event: EventHandler | None = None
    ) -> Json:
        """Prepares a fresh file in place of the old one. `options`: as the user gave them."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(
                f"cannot create {self.path.parent} for the default database: {e.strerror or e}; "
                "run from a writable directory or give --db"
            ) from e
        tmp = self.path.with_name(f".{self.path.name}.preparing-{os.getpid()}")
        remove_sqlite_files(tmp)
        try:
            spec = engine.build_spec(workload, sqlite_url(tmp), options, create=True)
            result = engine.prepare(spec, on_event)
        except BaseException:
            remove_sqlite_files(tmp)
            raise
        # Old description first, then the old data (a stale -wal would corrupt the new file).
        self.sidecar.unlink(missing_ok=True)
        remove_sqlite_files(self.path)
        tmp.replace(self.path)
        tmp_wal = Path(f"{tmp}-wal")
        if tmp_wal.exists():
            tmp_wal.replace(f"{self.path}-wal")
        Path(f"{tmp}-shm").unlink(missing_ok=True)  # an index of the WAL, rebuilt on open
        write_json_atomic(
            self.sidecar,
            self._identity()
            | {
                "workload": workload,
                "prepared_at": time.time(),
                "oltplab_version": __version__,
                "tables": result.get("tables"),
            },
        )
        return result

    def remove(self) -> bool:
        """Deletes the file and its sidecar; False if there was nothing to delete."""
        existed = self.path.exists()
        self.sidecar.unlink(missing_ok=True)
        remove_sqlite_files(self.path)
        return existed
