import json
from pathlib import Path

import pytest

from oltplab.defaultdb import DefaultDb, data_family, data_options
from oltplab.exceptions import DriverError
from tests import synthetic
from tests.fakecore import FakeCore


def _db(root: Path, workload: str = "oltp_read_write", **overrides: object) -> DefaultDb:
    return DefaultDb.for_workload(root, workload, synthetic.options(**overrides))


def test_families_and_files(tmp_path: Path) -> None:
    assert data_family("oltp_read_only", {}) == "oltp"
    assert data_family("oltp_insert", {"auto_inc": False}) == "oltp_empty"
    assert _db(tmp_path).path == tmp_path / "sbtest.db"
    assert _db(tmp_path, "bulk_insert").path == tmp_path / "bulk_insert.db"
    assert _db(tmp_path).sidecar == tmp_path / "sbtest.db.json"


def test_data_options_are_the_ones_that_shape_the_data() -> None:
    opts = synthetic.options(threads=8, time=60)
    assert data_options("oltp", opts) == {
        "auto_inc": True,
        "create_secondary": True,
        "create_table_options": "",
        "rand_pareto_h": 0.2,
        "rand_seed": 0,
        "rand_spec_iter": 12,
        "rand_spec_pct": 1,
        "rand_spec_res": 75,
        "rand_type": "special",
        "rand_zipfian_exp": 0.8,
        "secondary": False,
        "table_size": 10000,
        "tables": 1,
    }
    assert data_options("bulk_insert", opts) == {"threads": 8}


def test_prepare_then_current_until_a_data_option_changes(
    fake_core: FakeCore, tmp_path: Path
) -> None:
    db = _db(tmp_path)
    assert not db.is_current()
    db.prepare("oltp_read_write", {"tables": 1})
    assert db.path.is_file()
    assert db.is_current()
    assert json.loads(db.sidecar.read_text())["workload"] == "oltp_read_write"
    assert _db(tmp_path, threads=16, time=5).is_current()  # run-only options do not matter
    assert not _db(tmp_path, table_size=500).is_current()
    assert not _db(tmp_path, "oltp_insert", auto_inc=False).is_current()
    # Table options shape the tables too (e.g. SQLite's STRICT or WITHOUT ROWID).
    assert not _db(tmp_path, create_table_options="STRICT").is_current()
    db.sidecar.write_text("{not json")
    assert not db.is_current()


def test_prepare_writes_a_temp_file_and_replaces_only_on_success(
    fake_core: FakeCore, tmp_path: Path
) -> None:
    db = _db(tmp_path)
    db.prepare("oltp_read_write", {})
    old = db.path.read_bytes()
    (tmp_path / "sbtest.db-wal").write_bytes(b"stale wal of the old file")
    spec = fake_core.calls[-1][1]
    assert ".sbtest.db.preparing-" in spec["db"]
    assert spec["target"]["create"] is True

    fake_core.raise_in_prepare = DriverError("prepare interrupted; the data are incomplete")
    with pytest.raises(DriverError):
        _db(tmp_path, table_size=5).prepare("oltp_read_write", {"table_size": 5})
    # The old database and its description are untouched; no temp file is left.
    assert db.path.read_bytes() == old
    assert db.is_current()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "sbtest.db",
        "sbtest.db-wal",
        "sbtest.db.json",
    ]

    fake_core.raise_in_prepare = None
    new = _db(tmp_path, table_size=5)
    new.prepare("oltp_read_write", {"table_size": 5})
    assert new.is_current()
    assert not (tmp_path / "sbtest.db-wal").exists()  # a stale WAL would corrupt the new file


def test_remove(fake_core: FakeCore, tmp_path: Path) -> None:
    db = _db(tmp_path)
    assert db.remove() is False
    db.prepare("oltp_read_write", {})
    assert db.remove() is True
    assert list(tmp_path.iterdir()) == []
