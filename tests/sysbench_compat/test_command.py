"""`oltplab sysbench` in-process, against the fake engine: exit codes, stderr, no extras."""

from pathlib import Path

import pytest

from oltplab.cli.main import main
from oltplab.rundir import load_run
from tests.fakecore import FakeCore

Capture = pytest.CaptureFixture[str]
DB = ["--db-driver=sqlite", "--sqlite-db=sb.db"]


def sysbench(*args: str) -> int:
    return main(["sysbench", "oltp_read_write", *DB, *args])


@pytest.fixture
def prepared(fake_core: FakeCore, in_tmp: Path, capsys: Capture) -> FakeCore:
    assert sysbench("prepare") == 0
    capsys.readouterr()
    return fake_core


def test_listed_in_top_level_help(capsys: Capture) -> None:
    assert main(["--help"]) == 0
    assert "  sysbench   drop-in mode" in capsys.readouterr().out


def test_usage_and_version(fake_core: FakeCore, capsys: Capture) -> None:
    assert main(["sysbench", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: oltplab sysbench [options] TESTNAME")
    assert main(["sysbench", "--version"]) == 0
    assert capsys.readouterr().out.startswith("sysbench 1.0.20 (using oltplab ")


def test_run_prints_sysbench_only(prepared: FakeCore, in_tmp: Path, capsys: Capture) -> None:
    assert sysbench("--time=2", "run") == 0
    out, err = capsys.readouterr()
    assert out.startswith("sysbench 1.0.20 (using oltplab ")
    assert "Threads fairness:" in out
    assert "oltplab summary" not in out
    assert not [line for line in out.splitlines() if line.startswith("[")]  # interval 0
    assert err == ""
    assert not (in_tmp / "oltplab-runs").exists()
    spec_options = prepared.calls[-1][1]["options"]
    assert spec_options["report_interval"] == "0"


def test_run_with_out_keeps_the_run(prepared: FakeCore, in_tmp: Path, capsys: Capture) -> None:
    assert sysbench("--time=2", "--out=r", "run") == 0
    assert load_run(in_tmp / "r").complete is True


def test_interrupted_run_prints_no_report(
    prepared: FakeCore, in_tmp: Path, capsys: Capture
) -> None:
    prepared.stop_reason, prepared.stop_after = "interrupted", 2
    assert sysbench("--out=r", "run") == 130
    out, err = capsys.readouterr()
    assert "SQL statistics:" not in out
    assert err == f"oltplab: interrupted; what was measured is in {Path('r')}\n"
    assert load_run(in_tmp / "r").complete is False


def test_failed_run_is_one_fatal_line(prepared: FakeCore, capsys: Capture) -> None:
    prepared.stop_reason, prepared.stop_after = "error", 1
    assert sysbench("run") == 1
    out, err = capsys.readouterr()
    assert "SQL statistics:" not in out
    assert err == "FATAL: the run failed: database disk image is malformed\n"


def test_interrupted_prepare_exits_130(fake_core: FakeCore, in_tmp: Path, capsys: Capture) -> None:
    fake_core.sigint_in_prepare = True
    assert sysbench("prepare") == 130
    assert capsys.readouterr().err.startswith("FATAL: ")


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--bogus", "run"], "FATAL: invalid option: --bogus\n"),
        (["--time=1", "run"], "FATAL: "),  # not prepared: the engine's NotPreparedError
    ],
)
def test_bad_input_exits_2(
    fake_core: FakeCore, in_tmp: Path, capsys: Capture, args: list[str], line: str
) -> None:
    assert sysbench(*args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(line)
    assert len(err.splitlines()) == 1
