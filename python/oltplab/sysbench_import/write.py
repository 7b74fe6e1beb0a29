"""A parsed sysbench log -> a run directory: intervals.csv, latency.hlog (with
--histogram) and run.json, written last and atomically, as the rundir writer does."""

import csv
from pathlib import Path

from oltplab._fsutil import remove_empty_dir, write_json_atomic
from oltplab._types import Json
from oltplab._version import __version__
from oltplab.documents.run import HLOG_FILE, INTERVALS_FILE, MANIFEST_FILE
from oltplab.rundir.writer import create_run_dir
from oltplab.sysbench_import import intervals
from oltplab.sysbench_import.hlog import hlog_lines
from oltplab.sysbench_import.manifest import manifest_of, percentile_rank
from oltplab.sysbench_import.parse import SysbenchLog


def _hlog(log: SysbenchLog) -> list[str] | None:
    if log.histogram_ms is None or log.report is None:
        return None
    return hlog_lines(log.histogram_ms, log.report.total_time_s, f"oltplab {__version__}")


def write_run(log: SysbenchLog, out: Path, *, source: str, workload: str | None) -> Json:
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
        if hlog is not None:
            (out / HLOG_FILE).write_text("".join(line + "\n" for line in hlog), encoding="utf-8")
        write_json_atomic(out / MANIFEST_FILE, manifest)
    except BaseException:
        for name in (INTERVALS_FILE, HLOG_FILE, MANIFEST_FILE):
            (out / name).unlink(missing_ok=True)
        if created:
            remove_empty_dir(out)
        raise
    return manifest
