"""Writes a run directory while the run progresses.

run.json is written (atomically) when the directory is created, again when the load
starts and once more at the end; it says complete=true only after every other file is
closed. intervals.csv and latency.hlog are appended and flushed as each interval
arrives, so a crash loses at most the interval in progress.
"""

import csv
import os
import time
from datetime import datetime
from pathlib import Path
from typing import IO

from oltplab._fsutil import remove_empty_dir, write_json_atomic
from oltplab._types import Json
from oltplab._version import __version__
from oltplab.documents.run import HLOG_FILE, INTERVALS_FILE, MANIFEST_FILE
from oltplab.exceptions import ConfigError
from oltplab.rundir import hlog
from oltplab.rundir.intervals import COLUMNS, IntervalRow, csv_cells
from oltplab.rundir.manifest import aborted_manifest, final_manifest, with_started


def create_run_dir(out: Path) -> bool:
    """Makes `out` ready to hold a run; True if this call created it.

    An existing directory must be empty, so that a run never mixes with another's files.
    """
    if out.exists():
        if not out.is_dir():
            raise ConfigError(f"--out {out} is a file; give a new or empty directory")
        if any(out.iterdir()):
            raise ConfigError(f"--out {out} is not empty; give a new or empty directory")
        if not os.access(out, os.W_OK | os.X_OK):
            raise ConfigError(f"--out {out} is not writable; choose another directory")
        return False
    try:
        out.mkdir(parents=True)
    except OSError as e:
        raise ConfigError(
            f"cannot create the run directory {out}: {e.strerror or e}; choose another --out"
        ) from e
    return True


def create_default_run_dir(results_root: Path, workload: str, now: datetime) -> Path:
    """Creates `<results_root>/<YYYYmmdd-HHMMSS>-<workload>` (with -2, -3... if taken)."""
    base = results_root / f"{now:%Y%m%d-%H%M%S}-{workload}"
    for n in range(1, 1000):
        path = base if n == 1 else base.with_name(f"{base.name}-{n}")
        try:
            path.mkdir(parents=True)
        except FileExistsError:
            continue
        except OSError as e:
            raise ConfigError(
                f"cannot create the run directory {path}: {e.strerror or e}; "
                "give a writable --out DIR or run from a writable directory"
            ) from e
        return path
    raise ConfigError(f"too many runs named {base}-*; give --out DIR")


class RunWriter:
    def __init__(self, run_dir: Path, manifest: Json, *, created_dir: bool) -> None:
        self.run_dir = run_dir
        self.manifest = manifest
        self._created_dir = created_dir
        self._intervals: IO[str] | None = None
        self._hlog: IO[str] | None = None

    @classmethod
    def create(cls, run_dir: Path, manifest: Json, *, created_dir: bool) -> "RunWriter":
        """Starts the run directory: run.json (complete=false) and the intervals.csv header."""
        writer = cls(run_dir, manifest, created_dir=created_dir)
        writer._write_manifest()
        writer._intervals = (run_dir / INTERVALS_FILE).open("w", newline="", encoding="utf-8")
        writer._append_csv(list(COLUMNS))
        return writer

    # -- while the engine runs ----------------------------------------------------------

    def on_event(self, event: Json) -> None:
        kind = event.get("event")
        if kind == "started":
            self.manifest = with_started(self.manifest, event)
            self._write_manifest()
            self._open_hlog(event["started_at"])
        elif kind == "interval":
            self._append_csv(csv_cells(IntervalRow.from_event(event)))
            if self._hlog is None:  # no "started" event: date the log from this interval
                self._open_hlog(time.time() - float(event["t_s"]))
            assert self._hlog is not None
            for histogram in event.get("histograms", []):
                self._hlog.write(hlog.interval_line(histogram) + "\n")
            self._hlog.flush()

    # -- at the end ---------------------------------------------------------------------

    def finish(self, result: Json) -> Json:
        """Writes the final run.json from the engine's result; returns it."""
        if self._hlog is None:
            self._open_hlog(float(result["started_at"]))
        return self._close_with(final_manifest(self.manifest, result))

    def abort(self, *, stop_reason: str, error: str | None) -> Json:
        """Marks the run incomplete when the engine raised instead of returning a result."""
        if self._hlog is None:
            self._open_hlog(time.time())
        manifest = aborted_manifest(
            self.manifest, stop_reason=stop_reason, error=error, ended_at=time.time()
        )
        return self._close_with(manifest)

    def discard(self) -> None:
        """Removes what this writer created: for runs that failed before the load started."""
        self._close_files()
        for name in (MANIFEST_FILE, INTERVALS_FILE, HLOG_FILE):
            (self.run_dir / name).unlink(missing_ok=True)
        if self._created_dir:
            remove_empty_dir(self.run_dir)

    # -- helpers ------------------------------------------------------------------------

    def _close_with(self, manifest: Json) -> Json:
        self._close_files()  # data on disk before run.json can say complete
        self.manifest = manifest
        self._write_manifest()
        return manifest

    def _write_manifest(self) -> None:
        write_json_atomic(self.run_dir / MANIFEST_FILE, self.manifest)

    def _append_csv(self, cells: list[str]) -> None:
        assert self._intervals is not None
        csv.writer(self._intervals, lineterminator="\n").writerow(cells)
        self._intervals.flush()

    def _open_hlog(self, start_epoch_s: float) -> None:
        if self._hlog is not None:
            return
        self._hlog = (self.run_dir / HLOG_FILE).open("w", encoding="utf-8")
        for line in hlog.header_lines(start_epoch_s, f"oltplab {__version__}"):
            self._hlog.write(line + "\n")
        self._hlog.flush()

    def _close_files(self) -> None:
        for f in (self._intervals, self._hlog):
            if f is not None and not f.closed:
                f.close()
