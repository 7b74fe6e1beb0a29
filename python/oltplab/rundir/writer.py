"""Writes a run directory while the run progresses.

run.json is written (atomically) when the directory is created, again when the load
starts and once more at the end; it says complete=true only after every other file is
fsynced and closed. intervals.csv and latency.hlog are appended line by line as each
interval arrives, so a crash loses at most the interval in progress.

A failed write (a full disk) raises StorageError, which stops the run; the files keep every
complete line written before it, and run.json still says complete=false.
"""

import contextlib
import csv
import io
import os
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from oltplab._fsutil import AppendFile, remove_empty_dir, write_json_atomic
from oltplab._types import Json
from oltplab._version import __version__
from oltplab.documents.run import (
    HLOG_FILE,
    INTERVALS_FILE,
    MANIFEST_FILE,
    RunManifest,
    StopReason,
    run_manifest_json,
)
from oltplab.exceptions import ConfigError, StorageError
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


def storage_error(run_dir: Path, error: OSError) -> StorageError:
    """A failed write as one line: what failed, how to fix it, what was kept."""
    where = error.filename or run_dir
    reason = error.strerror or str(error)
    return StorageError(
        f"cannot write {where}: {reason}; free space under {run_dir.parent} or give another "
        f"--out. What was measured until then is kept in {run_dir} (marked incomplete)"
    )


@contextlib.contextmanager
def _storage(run_dir: Path) -> Iterator[None]:
    try:
        yield
    except OSError as e:
        raise storage_error(run_dir, e) from e


class RunWriter:
    def __init__(self, run_dir: Path, manifest: RunManifest, *, created_dir: bool) -> None:
        self.run_dir = run_dir
        self.manifest = manifest
        self._created_dir = created_dir
        self._intervals: AppendFile | None = None
        self._hlog: AppendFile | None = None

    @classmethod
    def create(cls, run_dir: Path, manifest: RunManifest, *, created_dir: bool) -> "RunWriter":
        """Starts the run directory: run.json (complete=false) and the intervals.csv header."""
        writer = cls(run_dir, manifest, created_dir=created_dir)
        with _storage(run_dir):
            writer._write_manifest()
            writer._intervals = AppendFile(run_dir / INTERVALS_FILE)
            writer._append_csv(list(COLUMNS))
        return writer

    # -- while the engine runs ----------------------------------------------------------

    def on_event(self, event: Json) -> None:
        with _storage(self.run_dir):
            self._on_event(event)

    def _on_event(self, event: Json) -> None:
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
            lines = (hlog.interval_line(h) + "\n" for h in event.get("histograms", []))
            self._hlog.write("".join(lines))

    # -- at the end ---------------------------------------------------------------------

    def finish(self, result: Json) -> RunManifest:
        """Writes the final run.json from the engine's result; returns it."""
        with _storage(self.run_dir):
            if self._hlog is None:
                self._open_hlog(float(result["started_at"]))
            return self._close_with(final_manifest(self.manifest, result))

    def abort(self, *, stop_reason: StopReason, error: str | None) -> RunManifest:
        """Marks the run incomplete when the engine raised instead of returning a result.
        Best effort: on a full disk the earlier run.json (complete=false) stays."""
        manifest = aborted_manifest(
            self.manifest, stop_reason=stop_reason, error=error, ended_at=time.time()
        )
        with contextlib.suppress(OSError):
            self._open_hlog(time.time())
        with contextlib.suppress(OSError):
            self._close_with(manifest)
        self._close_files()
        return manifest

    def discard(self) -> None:
        """Removes what this writer created: for runs that failed before the load started."""
        self._close_files()
        for name in (MANIFEST_FILE, INTERVALS_FILE, HLOG_FILE):
            (self.run_dir / name).unlink(missing_ok=True)
        if self._created_dir:
            remove_empty_dir(self.run_dir)

    # -- helpers ------------------------------------------------------------------------

    def _close_with(self, manifest: RunManifest) -> RunManifest:
        # Data on disk (fsynced: a power loss must not leave a complete run.json over a
        # truncated intervals.csv) before run.json can say complete.
        for f in (self._intervals, self._hlog):
            if f is not None:
                f.sync()
        self._close_files()
        self.manifest = manifest
        self._write_manifest()
        return manifest

    def _write_manifest(self) -> None:
        write_json_atomic(self.run_dir / MANIFEST_FILE, run_manifest_json(self.manifest))

    def _append_csv(self, cells: list[str]) -> None:
        assert self._intervals is not None
        line = io.StringIO()
        csv.writer(line, lineterminator="\n").writerow(cells)
        self._intervals.write(line.getvalue())

    def _open_hlog(self, start_epoch_s: float) -> None:
        if self._hlog is not None:
            return
        self._hlog = AppendFile(self.run_dir / HLOG_FILE)
        header = hlog.header_lines(start_epoch_s, f"oltplab {__version__}")
        self._hlog.write("".join(line + "\n" for line in header))

    def _close_files(self) -> None:
        for f in (self._intervals, self._hlog):
            if f is not None and not f.closed:
                f.close()
