"""Small file-system helpers shared by the run directory and the default database."""

import contextlib
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any


def write_json_atomic(path: Path, doc: Any) -> None:
    """Writes JSON so that readers see the old file or the new one, never a torn one."""
    write_text_atomic(path, json.dumps(doc, indent=2, allow_nan=False) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Writes text so that readers see the old file or the new one, never a torn one."""
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
