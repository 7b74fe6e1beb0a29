"""Restoring in place: whatever a cell did to the files, the data directory ends byte-equal
to the snapshot, and only what differs is rewritten."""

import filecmp
import os
from pathlib import Path

from oltplab.lab.data import take_snapshot
from oltplab.lab.restore import restore_in_place


def _same(a: Path, b: Path) -> bool:
    left = sorted(str(p.relative_to(a)) for p in a.rglob("*"))
    right = sorted(str(p.relative_to(b)) for p in b.rglob("*"))
    if left != right:
        return False
    files = [r for r in left if (a / r).is_file()]
    _, mismatch, errors = filecmp.cmpfiles(a, b, files, shallow=False)
    return not mismatch and not errors


def test_every_kind_of_change_is_undone(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "base" / "1").mkdir(parents=True)
    big = os.urandom(3 * (1 << 20) + 123)
    (data / "base" / "1" / "table.ibd").write_bytes(big)
    (data / "ibdata1").write_bytes(b"x" * 5000)
    (data / "gone.log").write_text("keep me", encoding="utf-8")
    snapshot = tmp_path / "snap"
    take_snapshot(data, snapshot)

    with (data / "base" / "1" / "table.ibd").open("r+b") as f:  # a page rewritten in the middle
        f.seek(2 << 20)
        f.write(b"\0" * 100)
    with (data / "ibdata1").open("ab") as f:  # a file that grew
        f.write(b"y" * 9000)
    (data / "gone.log").unlink()  # a file the cell removed
    (data / "new" / "deep").mkdir(parents=True)  # files and directories the cell created
    (data / "new" / "deep" / "wal").write_bytes(b"z")
    (data / "base" / "1" / "extra").write_bytes(b"e")

    stats = restore_in_place(snapshot, data)
    assert _same(snapshot, data)
    assert stats.files_copied == 1  # gone.log
    assert stats.files_removed >= 2
    # The one 8 KiB page of the big file that changed, and ibdata1 cut back.
    assert stats.bytes_rewritten == (8 << 10) + 1


def test_an_unchanged_directory_rewrites_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "f").write_bytes(os.urandom(10_000))
    take_snapshot(data, tmp_path / "snap")
    stats = restore_in_place(tmp_path / "snap", data)
    assert stats.bytes_rewritten == 0
    assert stats.files_compared == 1
