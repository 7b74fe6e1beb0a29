"""Small file-system helpers shared by the run directory and the default database."""

import contextlib
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any


def fsync_dir(path: Path) -> None:
    """Makes a rename or a new file in `path` durable (the directory entry itself)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_json_atomic(path: Path, doc: Any) -> None:
    """Writes JSON so that readers see the old file or the new one, never a torn one, and
    the new one survives a power loss once this returns (file, then directory, fsynced)."""
    write_text_atomic(path, json.dumps(doc, indent=2, allow_nan=False) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Writes text atomically and durably, as write_json_atomic."""
    # A unique name opened exclusively (not mkstemp, whose 0600 mode would ignore the umask).
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with tmp.open("x", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


class AppendFile:
    """A text file written in whole lines that never keeps half of one: when a write fails
    (a full disk), the file is cut back to its last complete line, so that what was written
    before stays readable. Unbuffered: each `write` reaches the kernel before it returns."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        self._good = 0  # bytes of complete writes

    def write(self, text: str) -> None:
        assert self._fd is not None, f"{self.path} is closed"
        data = text.encode("utf-8")
        try:
            done = 0
            while done < len(data):
                done += os.write(self._fd, data[done:])
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._good)
            raise
        self._good += len(data)

    def sync(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    @property
    def closed(self) -> bool:
        return self._fd is None


def remove_sqlite_files(db_path: Path) -> None:
    """Removes a SQLite database with its -wal, -shm and -journal companions."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)


def remove_empty_dir(path: Path) -> None:
    """Removes `path` if it is an empty directory; leaves it (and any files in it) otherwise."""
    with contextlib.suppress(OSError):
        path.rmdir()


def empty_dir(path: Path) -> None:
    """Removes everything inside `path`, keeping the directory itself (its owner and mode)."""
    for child in path.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
