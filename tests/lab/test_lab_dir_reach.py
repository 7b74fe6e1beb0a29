"""A lab directory that the managed servers' accounts cannot enter (root's `mktemp -d` is 0700,
and the servers run as `mysql` and `postgres`) is refused once, before anything starts; the
directories oltplab creates itself are made reachable, whatever the umask."""

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from oltplab.cli.main import main
from oltplab.documents.lab import read_lab_document
from oltplab.rundir import load_run
from tests.lab.conftest import write_lab

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="servers run as another account only when oltplab runs as root"
)

LAB = """\
[lab]
name = "reach"
time = 1
metrics = ["system"]

[servers.mdb]
engine = "mariadb"

[servers.pg]
engine = "postgresql"

[[workloads]]
name = "oltp_point_select"
threads = [1]
options = { tables = 1, table_size = 100 }
"""


def test_a_closed_directory_is_refused_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    closed = Path(tempfile.mkdtemp())  # what `mktemp -d` makes: 0700, root's
    try:
        lab_file = write_lab(tmp_path / "reach.toml", LAB)
        for dry_run in ([], ["--dry-run"]):
            code = main(["lab", "run", str(lab_file), "--out", str(closed / "lab"), *dry_run])
            err = capsys.readouterr().err
            assert code == 2, err
            assert err.count("\n") == 1, err
            assert err.startswith(f"oltplab: error: lab directory {closed / 'lab'}: the server ")
            assert f"which cannot enter {closed} (mode 0700)" in err
            assert f"allow it with `chmod o+x {closed}`" in err
            assert list(closed.iterdir()) == []  # no lab directory, no server, no cell
    finally:
        closed.rmdir()


@contextmanager
def _umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.timeout(300)
def test_directories_oltplab_creates_are_reachable(
    lab_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under umask 077 the lab directory, its new parent and the servers' directories would
    be 0700: each server must still reach its own, and both run their cell."""
    out = lab_dir / "new-parent" / "lab"
    lab_file = write_lab(lab_dir.parent / f"{lab_dir.name}.toml", LAB)
    with _umask(0o077):
        code = main(["lab", "run", str(lab_file), "--out", str(out), "--quiet"])
    assert code == 0, capsys.readouterr().err
    for created in (lab_dir, lab_dir / "new-parent", out, out / "servers", out / "servers/pg"):
        assert stat.S_IMODE(created.stat().st_mode) & stat.S_IXOTH, created
    doc = read_lab_document(out)
    assert [c.status for c in doc.cells] == ["done", "done"]
    for cell in doc.cells:
        assert load_run(out / "runs" / cell.id).complete
