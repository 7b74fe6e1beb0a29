"""Prepared data: prepared once per server and data shape, kept as a copy of the stopped
server's data directory, and copied back before cells (`restore`).

Copies use `cp -a --reflink=auto`: on a filesystem with reflinks (XFS, Btrfs) a restore is
a metadata operation; elsewhere a plain copy, still far faster than preparing again.
"""

import hashlib
import json
import re
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oltplab.catalog import load_catalog, normalise_name
from oltplab.defaultdb import data_family, data_options
from oltplab.documents.lab import WorkloadSpec
from oltplab.exceptions import ServerError
from oltplab.lab.restore import fsync_tree, restore_in_place
from oltplab.servers import ManagedServer
from oltplab.servers.binaries import find_program, postgres_bin_dir

# Workloads that never change the data: under restore = "auto" they need no restore unless
# an earlier cell wrote.
READ_ONLY_WORKLOADS = frozenset(
    {
        "oltp_read_only",
        "oltp_point_select",
        "select_random_points",
        "select_random_ranges",
    }
)


@dataclass(frozen=True)
class DataShape:
    """What prepare writes: workloads with the same shape share prepared data."""

    family: str
    options: dict[str, Any]

    @property
    def id(self) -> str:
        digest = hashlib.sha256(
            json.dumps({"f": self.family, "o": self.options}, sort_keys=True).encode()
        ).hexdigest()[:10]
        return f"{self.family}-{digest}"

    @classmethod
    def of(cls, workload: str, options: Mapping[str, Any]) -> "DataShape":
        effective = load_catalog().resolve(workload, options)
        family = data_family(workload, effective)
        return cls(family, data_options(family, effective))

    @classmethod
    def of_workload(cls, w: WorkloadSpec) -> "DataShape":
        """A script's data are what its own prepare writes, which only its file and options
        can tell: the shape is the file's content and every option given (docs/labs.md)."""
        if w.script is None:
            return cls.of(w.name, w.options)
        given = {normalise_name(k): v for k, v in w.options.items()}
        return cls("lua", {"script": Path(w.script).name, "sha256": w.script_sha256} | given)


def writes(workload: str) -> bool:
    return workload not in READ_ONLY_WORKLOADS


def cell_writes(w: WorkloadSpec) -> bool:
    """Whether a cell of `w` may change the data; a script's cells may (who knows what)."""
    return w.script is not None or writes(w.name)


def copy_tree(source: Path, target: Path) -> None:
    """`cp -a --reflink=auto source/. target/` (ownership and modes kept: the server's),
    then fsync: the copy is on disk before the next cell starts."""
    target.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["cp", "-a", "--reflink=auto", f"{source}/.", f"{target}/"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise ServerError(f"copying {source} to {target} failed: {done.stderr.strip()}")
    fsync_tree(target)


def take_snapshot(data_dir: Path, snapshot_dir: Path) -> float:
    """Copies a stopped server's data directory; returns the seconds it took. The copy is
    made under a temporary name and renamed, so a half-made snapshot is never used."""
    started = time.monotonic()
    partial = snapshot_dir.with_name(snapshot_dir.name + ".partial")
    if partial.exists():
        shutil.rmtree(partial)
    copy_tree(data_dir, partial)
    partial.rename(snapshot_dir)
    return time.monotonic() - started


_WAL_SEGMENT = re.compile(r"[0-9A-F]{24}")


def _unneeded_wal(snapshot_dir: Path, bin_dir: Path | None) -> list[Path]:
    """PostgreSQL after a clean shutdown reads only the WAL segment holding its shutdown
    checkpoint at the next start; the others are recycled future segments (up to max_wal_size
    of them after a prepare: half of a 4 x 1M-row data directory) or already checkpointed."""
    program = find_program(
        ["pg_controldata"], bin_dir=postgres_bin_dir(bin_dir), what="PostgreSQL's pg_controldata"
    )
    done = subprocess.run(
        [str(program), str(snapshot_dir)], capture_output=True, text=True, check=False
    )
    facts = dict(
        (key.strip(), value.strip())
        for key, _, value in (line.partition(":") for line in done.stdout.splitlines())
    )
    redo = facts.get("Latest checkpoint's REDO WAL file")
    if done.returncode != 0 or facts.get("Database cluster state") != "shut down" or not redo:
        return []  # not cleanly shut down: keep everything
    return [
        f
        for f in (snapshot_dir / "pg_wal").iterdir()
        if _WAL_SEGMENT.fullmatch(f.name) and f.name != redo
    ]


def snapshot_server(server: ManagedServer, snapshot_dir: Path) -> float:
    """Copies a stopped managed server's data directory (PostgreSQL: without the WAL
    segments the next start does not read); returns the seconds it took."""
    started = time.monotonic()
    take_snapshot(server.data_dir, snapshot_dir)
    if server.engine == "postgresql":
        for segment in _unneeded_wal(snapshot_dir, server.settings.bin_dir):
            segment.unlink()
    return time.monotonic() - started


def restore_snapshot(snapshot_dir: Path, data_dir: Path) -> float:
    """Makes a stopped server's data directory the snapshot's again (rewriting only what
    differs: lab/restore.py); returns the seconds."""
    return restore_in_place(snapshot_dir, data_dir).seconds
