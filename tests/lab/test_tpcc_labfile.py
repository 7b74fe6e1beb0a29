"""TPC-C cells in lab files: options checked like any workload's, data grouped by shape."""

from pathlib import Path

import pytest

from oltplab.cli.main import main
from oltplab.lab.data import DataShape, writes
from oltplab.lab.labfile import read_lab_text
from oltplab.lab.labfile_values import LabFileError

TPCC = """\
[lab]
name = "t"
time = 5

[servers.mdb]
engine = "mariadb"

[[workloads]]
name = "tpcc"
threads = [2, 4]
options = { warehouses = 1, trx_level = "RC" }
"""


def test_tpcc_lab_reads() -> None:
    lab = read_lab_text(TPCC, "t.toml")
    assert lab.workloads[0].name == "tpcc"
    assert lab.workloads[0].options == {"warehouses": 1, "trx_level": "RC"}


def test_unknown_tpcc_option_names_file_line_and_key() -> None:
    text = TPCC.replace("trx_level", "trx_levl")
    with pytest.raises(LabFileError) as info:
        read_lab_text(text, "t.toml")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("t.toml:11: workloads[0].options.trx_levl: unknown option")


def test_unknown_tpcc_option_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lab = tmp_path / "bad.toml"
    lab.write_text(TPCC.replace("warehouses = 1", "warehouse = 1"), encoding="utf-8")
    assert main(["lab", "run", str(lab), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "workloads[0].options.warehouse" in err[0]
    assert not (tmp_path / "out").exists()


def test_tpcc_data_shape_is_its_own_and_only_data_options_count() -> None:
    base = DataShape.of("tpcc", {"warehouses": 2})
    assert base.family == "tpcc"
    assert base.id != DataShape.of("oltp_read_write", {"tables": 1}).id
    # Run-only options (isolation, mix, think time) share the prepared data ...
    assert DataShape.of("tpcc", {"warehouses": 2, "trx_level": "RC", "weights": [1] * 5}) == base
    # ... what prepare writes does not.
    assert DataShape.of("tpcc", {"warehouses": 3}) != base
    assert DataShape.of("tpcc", {"warehouses": 2, "use_fk": True}) != base
    assert writes("tpcc")
