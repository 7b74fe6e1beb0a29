"""Reads a run directory: run.json as its type (oltplab.documents.run), intervals.csv as a
pandas DataFrame whose columns rundir/intervals.py names, latency.hlog as parsed entries
(decoding them is optional and needs hdrhistogram)."""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from oltplab.documents.run import (
    MANIFEST_FILE,
    SCHEMA_VERSION,
    OptionValue,
    RunManifest,
    Summary,
    run_manifest_of,
)
from oltplab.exceptions import ConfigError
from oltplab.rundir.hlog import Hlog, read_hlog
from oltplab.rundir.intervals import DTYPES

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Run:
    """One run directory. `run.doc` is run.json; `run.intervals` is intervals.csv."""

    path: Path
    doc: RunManifest

    @property
    def summary(self) -> Summary | None:
        return self.doc.summary

    @property
    def complete(self) -> bool:
        return self.doc.complete

    @property
    def workload(self) -> str:
        return self.doc.workload.name

    @property
    def options(self) -> Mapping[str, OptionValue]:
        """Every workload option the run used (names with underscores)."""
        return self.doc.workload.options

    @property
    def flags(self) -> tuple[str, ...]:
        """run.json's reasons to distrust the numbers (none: an empty tuple)."""
        return self.doc.flags or ()

    @cached_property
    def intervals(self) -> "pd.DataFrame":
        import pandas as pd  # imported here: the CLI's start-up does not need pandas

        return pd.read_csv(self.path / self.doc.files.intervals, dtype=DTYPES)

    def hlog(self) -> Hlog:
        return read_hlog(self.path / self.doc.files.hlog)


def load_run(path: str | Path) -> Run:
    """Loads a run directory (or its run.json); a one-line ConfigError when it cannot."""
    path = Path(path)
    run_dir = path.parent if path.name == MANIFEST_FILE else path
    manifest_path = run_dir / MANIFEST_FILE
    try:
        raw = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{run_dir} is not a run directory: it has no {MANIFEST_FILE}") from None
    except (OSError, ValueError) as e:
        raise ConfigError(f"cannot read {manifest_path}: {e}") from e
    version = raw.get("schema_version") if isinstance(raw, dict) else None
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ConfigError(
            f"{manifest_path} has schema_version {version!r}; this oltplab reads "
            f"up to {SCHEMA_VERSION}: upgrade oltplab"
        )
    return Run(run_dir, run_manifest_of(raw, str(manifest_path)))
