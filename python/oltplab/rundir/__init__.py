"""The run directory: the unit every part of oltplab reads (docs/run-directory.md)."""

from oltplab.rundir.hlog import Hlog, HlogEntry, read_hlog
from oltplab.rundir.reader import Run, load_run
from oltplab.rundir.writer import RunWriter, create_default_run_dir, create_run_dir

__all__ = [
    "Hlog",
    "HlogEntry",
    "Run",
    "RunWriter",
    "create_default_run_dir",
    "create_run_dir",
    "load_run",
    "read_hlog",
]
