"""The `oltplab` command in-process, against the fake engine: output and exit codes."""

from pathlib import Path

import pytest

from oltplab.cli.main import main
from oltplab.exceptions import DriverError
from oltplab.rundir import load_run
from tests.fakecore import FakeCore

Capture = pytest.CaptureFixture[str]


def _one_line_error(err: str, *needles: str, alone: bool = True) -> None:
    """The error is one last line; with `alone`, stderr holds nothing else (bad input)."""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert [line for line in lines if line.startswith("oltplab: error: ")] == lines[-1:], err
    if alone:
        assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[-1]


def _run_dirs(root: Path) -> list[Path]:
    return sorted(p for p in (root / "oltplab-runs").iterdir() if p.is_dir())


def test_top_level_help_and_version(capsys: Capture) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for needle in ("prepare", "run", "cleanup", "sqlite:///", "postgresql://", "130 interrupted"):
        assert needle in out
    assert main([]) == 2
    assert "usage: oltplab" in capsys.readouterr().err
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("oltplab ")


def test_unknown_command(capsys: Capture) -> None:
    assert main(["runn"]) == 2
    _one_line_error(capsys.readouterr().err, "unknown command 'runn'")


def test_run_prints_sysbench_output_and_writes_the_run(
    fake_core: FakeCore, in_tmp: Path, capsys: Capture
) -> None:
    assert main(["run", "--time=3", "--threads", "2"]) == 0
    out, err = capsys.readouterr()
    assert "oltplab: preparing oltplab-runs/sbtest.db (auto_inc=True, " in err
    assert "Creating table 'sbtest1'..." in err  # auto-prepare messages stay off stdout
    assert "Running the test with following options:\nNumber of threads: 2\n" in out
    assert (
        "Threads started!\n\n[ 1s ] thds: 2 tps: 100.00 qps: 2000.00 (r/w/o: 1400.00/400.00/200.00)"
        in out
    )
    assert out.count("] thds: ") == 3
    assert "\nSQL statistics:\n" in out
    assert "    transactions:                        300    (100.00 per sec.)" in out
    assert "oltplab summary:" in out
    assert "Latency histogram" not in out
    (run_dir,) = _run_dirs(in_tmp)
    run = load_run(run_dir)
    assert run.complete
    assert run.doc.argv == ("oltplab", "run", "--time=3", "--threads", "2")
    assert f"run directory:  {run_dir.relative_to(in_tmp)}" in out


def test_run_with_histogram_and_no_interval_lines(
    fake_core: FakeCore, in_tmp: Path, capsys: Capture
) -> None:
    assert main(["run", "--time=2", "--histogram", "--report-interval=0"]) == 0
    out = capsys.readouterr().out
    assert "] thds: " not in out
    assert "Report intermediate" not in out
    assert out.index("Latency histogram (values are in milliseconds)") < out.index(
        "SQL statistics:"
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "--threads=0"], "--threads must be"),
        (["run", "--bogus"], "unknown option --bogus"),
        (["run", "nope"], "unknown workload 'nope'"),
        (["run", "--db", "sqlite:///nonexistent/x.db"], "run `oltplab prepare` first"),
        (["prepare", "--table-size=-1"], "--table-size must be"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    fake_core: FakeCore, in_tmp: Path, capsys: Capture, args: list[str], needle: str
) -> None:
    assert main(args) == 2
    _one_line_error(capsys.readouterr().err, needle)
    runs = in_tmp / "oltplab-runs"
    assert not runs.exists() or not [p for p in runs.iterdir() if p.is_dir()]  # no run left


def test_unwritable_out_is_bad_input(fake_core: FakeCore, in_tmp: Path, capsys: Capture) -> None:
    (in_tmp / "file").write_text("")
    assert main(["run", "--out", "file/run"]) == 2
    _one_line_error(capsys.readouterr().err, "cannot create the run directory")
    assert fake_core.calls == []


def test_interrupted_run_exits_130_with_the_partial_report(
    fake_core: FakeCore, in_tmp: Path, capsys: Capture
) -> None:
    fake_core.stop_reason, fake_core.stop_after = "interrupted", 2
    assert main(["run", "--out=r"]) == 130
    out, err = capsys.readouterr()
    assert "SQL statistics:" in out
    assert "INCOMPLETE (interrupted)" in out
    assert "interrupted" in err
    run = load_run(in_tmp / "r")
    assert (run.complete, run.doc.stop_reason) == (False, "interrupted")


def test_failed_run_exits_1_without_sysbench_report(
    fake_core: FakeCore, in_tmp: Path, capsys: Capture
) -> None:
    fake_core.stop_reason, fake_core.stop_after = "error", 1
    assert main(["run", "--out=r"]) == 1
    out, err = capsys.readouterr()
    assert "SQL statistics:" not in out
    assert "INCOMPLETE (error)" in out
    _one_line_error(err, "the run failed: database disk image is malformed", alone=False)
    assert load_run(in_tmp / "r").complete is False


@pytest.mark.parametrize(
    ("raised", "code"), [(DriverError("disk I/O error"), 1), (KeyboardInterrupt(), 130)]
)
def test_engine_raising_mid_run(
    fake_core: FakeCore, in_tmp: Path, capsys: Capture, raised: BaseException, code: int
) -> None:
    fake_core.raise_after_start = raised
    assert main(["run", "--out=r"]) == code
    assert "Traceback" not in capsys.readouterr().err
    assert load_run(in_tmp / "r").complete is False


def test_interrupted_prepare_exits_130(fake_core: FakeCore, in_tmp: Path, capsys: Capture) -> None:
    fake_core.sigint_in_prepare = True
    assert main(["prepare"]) == 130
    assert "prepare interrupted" in capsys.readouterr().err
    assert list((in_tmp / "oltplab-runs").iterdir()) == []  # no half-made database


def test_prepare_and_cleanup_of_the_default_database(
    fake_core: FakeCore, in_tmp: Path, capsys: Capture
) -> None:
    assert main(["prepare", "--tables=2"]) == 0
    out = capsys.readouterr().out
    assert "Creating table 'sbtest2'..." in out
    assert "Prepared 2 table(s) in the default SQLite database" in out
    assert main(["cleanup"]) == 0
    assert "Removed default database" in capsys.readouterr().out
    assert main(["cleanup"]) == 0
    assert "Nothing to remove" in capsys.readouterr().out


def test_prepare_run_cleanup_with_db(fake_core: FakeCore, in_tmp: Path, capsys: Capture) -> None:
    db = f"sqlite://{in_tmp}/sb.db"
    assert main(["prepare", "--db", db]) == 0
    assert main(["run", "--db", db, "--time=1", "--out=r"]) == 0
    assert main(["cleanup", "--db", db]) == 0
    assert "Dropping table 'sbtest1'..." in capsys.readouterr().out
    assert [c for c, _ in fake_core.calls] == ["prepare", "run", "cleanup"]


def test_workload_help(fake_core: FakeCore, capsys: Capture) -> None:
    assert main(["run", "select_random_points", "--help"]) == 0
    assert "--random-points=N" in capsys.readouterr().out
