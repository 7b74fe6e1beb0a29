"""`oltplab sysbench ... --db-driver=sqlite` as a subprocess, through the real engine: what
it prints has the line shapes of sysbench 1.0.20's own output (golden/, see shapes.py),
stderr stays empty, and a run directory is left only with --out."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import oltplab
from tests.sysbench_compat.shapes import assert_same_structure, golden

SMALL = ["--table-size=1000", "--tables=2"]


def sysbench_cmd(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    package_root = str(Path(oltplab.__file__).resolve().parent.parent)
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]),
        "TMPDIR": str(cwd / "tmp"),  # to see that no temporary run directory is left
    }
    (cwd / "tmp").mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "oltplab", "sysbench", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding sb.db, prepared with SMALL by the drop-in mode."""
    cwd = tmp_path_factory.mktemp("sysbench-sqlite")
    ok(sysbench_cmd("oltp_read_write", *_db(), *SMALL, "prepare", cwd=cwd))
    return cwd


def _db(path: str = "sb.db") -> list[str]:
    return ["--db-driver=sqlite", f"--sqlite-db={path}"]


def test_prepare_and_cleanup(tmp_path: Path) -> None:
    one = ["--table-size=1000"]
    assert_same_structure(
        ok(sysbench_cmd("oltp_read_write", *_db(), *one, "prepare", cwd=tmp_path)),
        golden("prepare"),
    )
    assert_same_structure(
        ok(sysbench_cmd("oltp_read_write", *_db(), *one, "cleanup", cwd=tmp_path)),
        golden("cleanup"),
    )


def test_parallel_prepare_and_cleanup(tmp_path: Path) -> None:
    prepare = ok(
        sysbench_cmd("oltp_read_write", *_db(), *SMALL, "--threads=2", "prepare", cwd=tmp_path)
    )
    assert prepare.startswith("sysbench 1.0.20 (using oltplab ")
    assert prepare.splitlines()[2] == "Initializing worker threads..."
    assert_same_structure(prepare, golden("prepare-parallel"), ordered=False)
    cleanup = ok(
        sysbench_cmd("oltp_read_write", *_db(), *SMALL, "--threads=2", "cleanup", cwd=tmp_path)
    )
    assert_same_structure(cleanup, golden("cleanup-parallel"), ordered=False)


@pytest.mark.parametrize(
    ("options", "reference"),
    [
        (["--time=1"], "run"),
        (["--threads=2", "--time=3", "--report-interval=1"], "run-report-interval"),
        (["--time=1", "--histogram"], "run-histogram"),
        (["--time=1", "--percentile=99", "--rand-seed=7"], "run-percentile-99"),
        (["--time=1", "--percentile=0"], "run-percentile-0"),
    ],
)
def test_run_has_sysbench_structure(prepared: Path, options: list[str], reference: str) -> None:
    out = ok(sysbench_cmd("oltp_read_write", *_db(), *SMALL, *options, "run", cwd=prepared))
    assert_same_structure(out, golden(reference))
    assert not (prepared / "oltplab-runs").exists()
    assert list((prepared / "tmp").iterdir()) == []


def test_report_interval_defaults_to_zero(prepared: Path) -> None:
    """sysbench prints no interval line unless asked (oltplab's `run` reports each second)."""
    out = ok(sysbench_cmd("oltp_read_write", *_db(), *SMALL, "--time=2", "run", cwd=prepared))
    assert not [line for line in out.splitlines() if line.startswith("[")]


def test_options_anywhere_and_in_sysbench_spellings(prepared: Path) -> None:
    done = sysbench_cmd(
        "--max-requests=20",
        "oltp_read_only.lua",
        "--time",
        "0",
        *_db(),
        "run",
        "--num_threads=2",
        "--table_size=1000",
        "--tables=2",
        cwd=prepared,
    )
    assert done.returncode == 0, done.stderr
    assert "Number of threads: 2\n" in done.stdout
    assert "    total number of events:              20\n" in done.stdout
    assert done.stderr.count("WARNING: ") == 2


def test_deprecated_alias_warns_on_stderr(prepared: Path) -> None:
    done = sysbench_cmd(
        "oltp_point_select", *_db(), *SMALL, "--max-requests=5", "run", cwd=prepared
    )
    assert done.returncode == 0
    assert done.stderr == "WARNING: --max-requests is deprecated, use --events instead\n"


def test_rate(prepared: Path) -> None:
    """Open loop: sysbench's preamble line, and its second interval line per interval."""
    args = ["oltp_point_select", *_db(), *SMALL, "--rate=200", "--time=1", "run"]
    out = ok(sysbench_cmd(*args, cwd=prepared))
    assert "Number of threads: 1\nTarget transaction rate: 200/sec\n" in out
    done = sysbench_cmd(*args[:-1], "--time=2", "--report-interval=1", "run", cwd=prepared)
    assert done.returncode == 0
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("[ 1s ] thds: "))
    assert re.fullmatch(r"\[ 1s \] queue length: \d+, concurrency: \d+", lines[first + 1])


def test_out_leaves_a_run_directory_without_the_password(prepared: Path) -> None:
    args = [*_db(), *SMALL, "--events=50", "--time=0", "--mysql-password=hunter2", "--out", "r1"]
    out = ok(sysbench_cmd("oltp_read_write", *args, "run", cwd=prepared))
    assert "total number of events:              50" in out
    run_json = (prepared / "r1" / "run.json").read_text(encoding="utf-8")
    assert "hunter2" not in run_json
    manifest = json.loads(run_json)
    assert manifest["complete"] is True
    assert manifest["summary"]["transactions"] == 50
    assert manifest["argv"][:2] == ["oltplab", "sysbench"]
    assert "--mysql-password=***" in manifest["argv"]
    assert (prepared / "r1" / "intervals.csv").exists()


def test_help_is_sysbench_help(tmp_path: Path) -> None:
    out = ok(sysbench_cmd("oltp_read_write", "help", cwd=tmp_path))
    added = ("  --create_table_options=", "  --reconnect=")
    ours = "".join(line for line in out.splitlines(keepends=True) if not line.startswith(added))
    theirs = golden("help")
    assert ours.split("\n", 1)[1] == theirs.split("\n", 1)[1]


@pytest.mark.parametrize(
    ("args", "code", "stderr"),
    [
        (["oltp_read_write", "--bogus=1", "run"], 2, "FATAL: invalid option: --bogus\n"),
        (["oltp_read_write", "frob"], 2, "FATAL: Unknown command: frob"),
        (["nope", "run"], 2, "FATAL: Cannot find benchmark 'nope'"),
        (["oltp_read_write", *_db("missing.db"), "run"], 2, "FATAL: SQLite database"),
        (["oltp_read_write", *_db(), "--threads=0", "run"], 2, "FATAL: --threads"),
    ],
)
def test_bad_input(tmp_path: Path, args: list[str], code: int, stderr: str) -> None:
    done = sysbench_cmd(*args, cwd=tmp_path)
    assert done.returncode == code
    assert done.stderr.startswith(stderr)
    assert len(done.stderr.splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_verbosity_below_3_prints_no_report(prepared: Path) -> None:
    """As sysbench: the report is a notice (level 3); 2 keeps warnings, 0 and 1 drop them."""
    base = ["oltp_point_select", *_db(), *SMALL, "--events=20", "--time=0", "--max-requests=5"]
    quiet = sysbench_cmd(*base, "--verbosity=2", "run", cwd=prepared)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == ""
    assert quiet.stderr == "WARNING: --max-requests is deprecated, use --events instead\n"
    silent = sysbench_cmd(*base, "--verbosity=0", "run", cwd=prepared)
    assert (silent.returncode, silent.stdout, silent.stderr) == (0, "", "")
    loud = sysbench_cmd(*base, "--verbosity=5", "run", cwd=prepared)
    assert "SQL statistics:" in loud.stdout
    bad = sysbench_cmd(*base, "--verbosity=9", "run", cwd=prepared)
    assert bad.returncode == 2
    assert bad.stderr.startswith("FATAL: Invalid value for the 'verbosity' option")


def test_sysbench_script_options_that_change_nothing_are_accepted(prepared: Path) -> None:
    """Published scripts pass --thread-init-timeout and --luajit-cmd: accepted, silent (they
    change nothing, docs/sysbench-compat.md); a driver's option given with another warns."""
    done = sysbench_cmd(
        "oltp_point_select", *_db(), *SMALL, "--events=10", "--time=0",
        "--thread-init-timeout=60", "--luajit-cmd=off", "run", cwd=prepared,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    warned = sysbench_cmd(
        "oltp_point_select", *_db(), *SMALL, "--events=10", "--time=0", "--db-ps-mode=disable",
        "--mysql-ignore-errors=all", "run", cwd=prepared,
    )  # fmt: skip
    assert warned.returncode == 0, warned.stderr
    lines = warned.stderr.splitlines()
    assert len(lines) == 2, warned.stderr  # once each
    assert lines[0].startswith("WARNING: --db-ps-mode has no effect with the sqlite driver")
    assert lines[1].startswith("WARNING: --mysql-ignore-errors has no effect with the sqlite")
