"""Durability (issue 11): a power loss must not leave a complete run.json over a truncated
intervals.csv. Checked by recording, in order, every fsync and rename the writer makes: the
data files are fsynced before the final run.json replaces the old one, and the directory is
fsynced after each rename. A write that fails (a full disk) leaves no torn line."""

import errno
import os
from pathlib import Path

import pytest

from oltplab import _fsutil
from oltplab.exceptions import StorageError
from oltplab.rundir import RunWriter, load_run
from oltplab.rundir.manifest import initial_manifest
from tests import synthetic


def _writer(run_dir: Path) -> RunWriter:
    manifest = initial_manifest(
        workload="oltp_read_write", options=synthetic.options(), db_url="sqlite:///x.db", argv=None
    )
    run_dir.mkdir()
    return RunWriter.create(run_dir, manifest, created_dir=True)


def test_data_fsynced_before_run_json_says_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = _writer(tmp_path / "r")
    events = synthetic.intervals(3)
    writer.on_event(synthetic.started_event())
    for event in events:
        writer.on_event(event)
    log: list[str] = []
    real_fsync, real_replace = os.fsync, Path.replace

    def fsync(fd: int) -> None:
        log.append("fsync " + Path(f"/proc/self/fd/{fd}").readlink().name)
        real_fsync(fd)

    def replace(self: Path, target: Path) -> Path:
        log.append("rename " + Path(target).name)
        return real_replace(self, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(Path, "replace", replace)
    manifest = writer.finish(synthetic.run_result(events))
    assert manifest.complete is True
    rename = log.index("rename run.json")
    assert log.index("fsync intervals.csv") < rename
    assert log.index("fsync latency.hlog") < rename
    assert "fsync r" in log[rename + 1 :], log  # the directory, after the rename


def test_a_failed_write_leaves_no_torn_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f.csv"
    f = _fsutil.AppendFile(path)
    f.write("a,b\n1,2\n")
    real_write = os.write

    def half_then_full(fd: int, data: bytes) -> int:
        if len(data) > 4:
            return real_write(fd, data[:4])  # a short write, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(OSError, match="No space left on device"):
        f.write("3,4,5,6,7\n")
    monkeypatch.undo()
    f.close()
    assert path.read_text() == "a,b\n1,2\n"


def test_a_full_disk_mid_run_is_one_storage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = _writer(tmp_path / "r")
    writer.on_event(synthetic.started_event())
    events = synthetic.intervals(3)
    writer.on_event(events[0])

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(StorageError) as e:
        writer.on_event(events[1])
    message = str(e.value)
    assert "\n" not in message
    assert "No space left on device" in message
    assert "--out" in message
    # The runner then marks the run aborted: best effort, never raising on a full disk.
    writer.abort(stop_reason="error", error=message)
    monkeypatch.undo()
    run = load_run(tmp_path / "r")
    assert run.complete is False
    assert list(run.intervals["t_s"]) == [1.0]
