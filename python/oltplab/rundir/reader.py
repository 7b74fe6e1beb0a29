"""Reads a run directory: run.json as a dict, intervals.csv as a pandas DataFrame,
latency.hlog as parsed entries (decoding them is optional and needs hdrhistogram)."""

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oltplab._types import Json
from oltplab.documents.run import (
    HLOG_FILE,
    INTERVALS_FILE,
    MANIFEST_FILE,
    SCHEMA_VERSION,
    RunManifest,
    as_run_manifest,
)
from oltplab.exceptions import ConfigError
from oltplab.rundir.hlog import Hlog, read_hlog
from oltplab.rundir.intervals import DTYPES

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Run:
    """One run directory. `run["summary"]` reads run.json; `run.intervals` is a DataFrame."""

    path: Path
    manifest: Json

    def __getitem__(self, key: str) -> Any:
        return self.manifest[key]

    @property
    def document(self) -> RunManifest:
        """run.json with its typed shape (oltplab.documents.run)."""
        return as_run_manifest(self.manifest)

    @property
    def summary(self) -> Json | None:
        summary: Json | None = self.manifest.get("summary")
        return summary

    @property
    def complete(self) -> bool:
        return bool(self.manifest.get("complete"))

    def _file(self, key: str, default: str) -> Path:
        name: str = (self.manifest.get("files") or {}).get(key, default)
        return self.path / name

    @cached_property
    def intervals(self) -> "pd.DataFrame":
        import pandas as pd  # imported here: the CLI's start-up does not need pandas

        return pd.read_csv(self._file("intervals", INTERVALS_FILE), dtype=DTYPES)

    def hlog(self) -> Hlog:
        return read_hlog(self._file("hlog", HLOG_FILE))


def load_run(path: str | Path) -> Run:
    """Loads a run directory (or its run.json)."""
    path = Path(path)
    run_dir = path.parent if path.name == MANIFEST_FILE else path
    manifest_path = run_dir / MANIFEST_FILE
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{run_dir} is not a run directory: it has no {MANIFEST_FILE}") from None
    except (OSError, ValueError) as e:
        raise ConfigError(f"cannot read {manifest_path}: {e}") from e
    version = manifest.get("schema_version") if isinstance(manifest, dict) else None
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ConfigError(
            f"{manifest_path} has schema_version {version!r}; this oltplab reads "
            f"up to {SCHEMA_VERSION}: upgrade oltplab"
        )
    return Run(run_dir, manifest)
