"""Restoring a stopped server's data directory from its snapshot, writing only what differs.

A cell of a few seconds changes a few percent of a data set's pages, so comparing the files
chunk by chunk (both are usually in the page cache) and rewriting only the chunks that
differ costs far less than copying everything, and far less I/O to fsync. Files the cell
created are removed, files it removed are copied back whole, and a file that grew is cut to
the snapshot's length. Ownership and modes stay the server's: files are rewritten in place.
"""

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from oltplab.exceptions import ServerError

_CHUNK_BYTES = 1 << 20  # read and compared at once
# Rewritten at once when it differs: PostgreSQL's page (InnoDB's 16 KiB pages are two of
# these), so a changed page costs its own size, not the whole chunk's.
_PAGE_BYTES = 8 << 10


@dataclass
class RestoreStats:
    seconds: float = 0.0
    files_compared: int = 0
    files_copied: int = 0
    files_removed: int = 0
    bytes_rewritten: int = 0


def fsync_tree(root: Path, recursive: bool = True) -> None:
    """Waits until `root` (and, recursively, everything under it) is on disk: otherwise the
    kernel writes a copy back during the next cell, and its I/O lands in measured seconds."""
    for path in [root, *(root.rglob("*") if recursive and root.is_dir() else [])]:
        if path.is_symlink():
            continue
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _tree(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for p in root.rglob("*")}


def _copy_whole(source: Path, target: Path) -> None:
    done = subprocess.run(
        ["cp", "-a", "--reflink=auto", str(source), str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise ServerError(f"copying {source} to {target} failed: {done.stderr.strip()}")


def _rewrite_pages(fd: int, offset: int, want: bytes, have: bytes) -> int:
    """Writes the pages of `want` that differ from `have` at `offset`; returns the bytes."""
    written = 0
    wanted, had = memoryview(want), memoryview(have)
    for start in range(0, len(want), _PAGE_BYTES):
        page = wanted[start : start + _PAGE_BYTES]
        if page != had[start : start + _PAGE_BYTES]:
            os.pwrite(fd, page, offset + start)
            written += len(page)
    return written


def _sync_file(source: Path, target: Path) -> int:
    """Makes `target` equal to `source` in place; returns the bytes rewritten (fsynced)."""
    rewritten = 0
    size = source.stat().st_size
    with source.open("rb") as src, target.open("r+b") as dst:
        offset = 0
        while offset < size:
            want = src.read(_CHUNK_BYTES)
            have = dst.read(len(want))
            if want != have:
                rewritten += _rewrite_pages(dst.fileno(), offset, want, have)
            offset += len(want)
        if target.stat().st_size != size:
            dst.truncate(size)
            rewritten += 1
        if rewritten:
            os.fsync(dst.fileno())
    return rewritten


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def restore_in_place(snapshot_dir: Path, data_dir: Path) -> RestoreStats:
    """Makes `data_dir` (the server stopped) equal to `snapshot_dir`, file by file."""
    started = time.monotonic()
    stats = RestoreStats()
    want, have = _tree(snapshot_dir), _tree(data_dir)
    for rel in sorted(set(have) - set(want), reverse=True):  # children before parents
        if have[rel].exists() or have[rel].is_symlink():
            _remove(have[rel])
            stats.files_removed += 1
    for rel in sorted(want):  # parents before children
        source, target = want[rel], data_dir / rel
        kind_differs = target.exists() and (
            source.is_dir() != target.is_dir() or source.is_symlink() != target.is_symlink()
        )
        if kind_differs:
            _remove(target)
        if not target.exists() and not target.is_symlink():
            _copy_whole(source, target)  # a file, or a directory with everything under it
            fsync_tree(target)
            stats.files_copied += 1
        elif source.is_file() and not source.is_symlink():
            stats.files_compared += 1
            stats.bytes_rewritten += _sync_file(source, target)
    fsync_tree(data_dir, recursive=False)  # the directory's own entries
    stats.seconds = time.monotonic() - started
    return stats
