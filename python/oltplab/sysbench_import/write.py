"""A parsed sysbench log -> a run directory: intervals.csv, latency.hlog (with
--histogram) and run.json, written last and atomically, as the rundir writer does."""

import csv
import os
from pathlib import Path
from typing import IO

from oltplab._fsutil import remove_empty_dir, write_json_atomic
from oltplab._version import __version__
from oltplab.documents.run import (
    HLOG_FILE,
    INTERVALS_FILE,
    MANIFEST_FILE,
    RunManifest,
    run_manifest_json,
)
from oltplab.rundir.writer import create_run_dir
from oltplab.sysbench_import import intervals
from oltplab.sysbench_import.hlog import hlog_lines
from oltplab.sysbench_import.manifest import manifest_of, percentile_rank
from oltplab.sysbench_import.parse import SysbenchLog


def _hlog(log: SysbenchLog) -> list[str] | None:
    if log.histogram_ms is None or log.report is None:
        return None
    return hlog_lines(log.histogram_ms, log.report.total_time_s, f"oltplab {__version__}")


def _sync(f: IO[str]) -> None:
    f.flush()
    os.fsync(f.fileno())


def write_run(log: SysbenchLog, out: Path, *, source: str, workload: str | None) -> RunManifest:
    """Writes the run directory `out` (new or empty); returns its run.json."""
    rank = percentile_rank(log)
    rate_mode = bool(log.preamble.rate_per_s) or any(
        line.queue_length is not None for line in log.intervals
    )
    hlog = _hlog(log)
    manifest = manifest_of(
        log,
        source=source,
        workload=workload,
        unknown_columns=intervals.unknown_columns(rank, rate_mode),
        flags=[intervals.INTERVAL_TIMES_AMBIGUOUS]
        if intervals.times_ambiguous(log.intervals)
        else [],
    )
    created = create_run_dir(out)
    try:
        with (out / INTERVALS_FILE).open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(intervals.header(rank))
            writer.writerows(intervals.rows(log.intervals, rank))
            _sync(f)
        if hlog is not None:
            with (out / HLOG_FILE).open("w", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in hlog))
                _sync(f)
        # Last: the data is on disk.
        write_json_atomic(out / MANIFEST_FILE, run_manifest_json(manifest))
    except BaseException:
        for name in (INTERVALS_FILE, HLOG_FILE, MANIFEST_FILE):
            (out / name).unlink(missing_ok=True)
        if created:
            remove_empty_dir(out)
        raise
    return manifest
