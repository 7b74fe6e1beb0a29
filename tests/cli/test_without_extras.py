"""The `oltplab` command in an environment holding only what `pip install .` installs: every
installed package outside the default dependencies' closure (Ray, and the dev-only ones:
hypothesis, PIL, websocket, pytest itself ...) is made unimportable in the subprocesses
(tests/cli/no_extras/sitecustomize.py on PYTHONPATH). Every command must work, or say in one
line what is missing: a traceback fails the test. The closure is read from pyproject.toml, so
the test follows what the default install really is (with the report's libraries as an extra,
it blocks them and `oltplab report` must still answer in one line)."""

import importlib.metadata
import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from oltplab.cli.main import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
BLOCKER = Path(__file__).resolve().parent / "no_extras"
GOLDEN_LOG = ROOT / "tests" / "sysbench_compat" / "golden" / "run-report-interval.txt"
# What a fresh venv holds before `pip install .`, and oltplab itself.
_SEED = {"pip", "setuptools", "wheel", "oltplab"}


def _default_closure() -> set[str]:
    """The distributions `pip install .` brings: the default dependencies and theirs."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    todo = [Requirement(r) for r in project["dependencies"]]
    seen: set[str] = set()
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
            continue
        seen.add(name)
        try:
            todo += [Requirement(r) for r in importlib.metadata.requires(req.name) or []]
        except importlib.metadata.PackageNotFoundError:
            continue  # not installed here: nothing of it to block either
    return seen


def blocked_modules() -> set[str]:
    keep = _default_closure() | _SEED
    return {
        module
        for module, dists in importlib.metadata.packages_distributions().items()
        if not module.startswith("_") and all(canonicalize_name(d) not in keep for d in dists)
    }


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    blocked = blocked_modules()
    # The test means something only if the dev environment's extras are really blocked.
    assert {"ray", "hypothesis", "PIL", "websocket", "pytest"} <= blocked, blocked
    return os.environ | {
        "PYTHONPATH": str(BLOCKER),
        "OLTPLAB_BLOCKED_MODULES": ",".join(sorted(blocked)),
        "COLUMNS": "100",
    }


def oltplab(env: dict[str, str], cwd: Path, *args: str | Path) -> Result:
    done = subprocess.run(
        [sys.executable, "-m", "oltplab", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    result = Result(done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, (args, done.stderr)
    return result


def ok(env: dict[str, str], cwd: Path, *args: str | Path) -> Result:
    result = oltplab(env, cwd, *args)
    assert result.code == 0, (args, result.err)
    return result


def test_the_blocker_blocks(env: dict[str, str], tmp_path: Path) -> None:
    probe = "import importlib.util, sys; print(importlib.util.find_spec('ray')); import pytest"
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=False
    )
    assert done.stdout == "None\n"
    assert "ModuleNotFoundError" in done.stderr


def test_every_help(env: dict[str, str], tmp_path: Path) -> None:
    assert "usage" in ok(env, tmp_path, "--help").out.lower()
    assert ok(env, tmp_path, "--version").out.startswith("oltplab ")
    for command in COMMANDS:
        result = oltplab(env, tmp_path, command, "--help")
        assert result.code == 0, (command, result.err)
        assert "usage" in (result.out + result.err).lower(), command
    for sub in (("lab", "run"), ("lab", "status"), ("server", "start")):
        assert "usage" in ok(env, tmp_path, *sub, "--help").out.lower(), sub


def test_runs_analysis_report_import_and_a_lab(env: dict[str, str], tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'sb.db'}"
    data = ("--tables=1", "--table-size=200")
    ok(env, tmp_path, "prepare", "oltp_point_select", "--db", db, *data)
    for name in ("a", "b"):
        run = ("run", "oltp_point_select", "--db", db, *data, "--threads=2")
        ok(env, tmp_path, *run, "--time=2", "--report-interval=0.5", "--out", tmp_path / name)
    assert "tps" in ok(env, tmp_path, "show", tmp_path / "a").out
    assert "ratio" in ok(env, tmp_path, "compare", tmp_path / "a", "--vs", tmp_path / "b").out
    assert "baseline" in ok(env, tmp_path, "table", tmp_path / "a", tmp_path / "b").out
    ok(env, tmp_path, "import", GOLDEN_LOG, "--out", tmp_path / "imported")
    report = ("report", tmp_path / "a", tmp_path / "b", tmp_path / "imported")
    ok(env, tmp_path, *report, "-o", tmp_path / "r.html", "--png", tmp_path / "png")
    assert (tmp_path / "r.html").stat().st_size > 100_000
    assert list((tmp_path / "png").glob("*.png"))

    lab_file = tmp_path / "lab.toml"
    lab_file.write_text(
        f"""[lab]
name = "plain"
time = 1
report_interval = 0.5
metrics = ["system"]

[servers.db]
engine = "external"
url = "{db}"

[[workloads]]
name = "oltp_point_select"
threads = [1]
options = {{ tables = 1, table_size = 200 }}
""",
        encoding="utf-8",
    )
    result = ok(env, tmp_path, "lab", "run", lab_file, "--out", tmp_path / "lab", "--quiet")
    assert (tmp_path / "lab" / "report.html").is_file(), result.err
    ok(env, tmp_path, "cleanup", "oltp_point_select", "--db", db, *data)


def test_ray_says_how_to_install_it(env: dict[str, str], tmp_path: Path) -> None:
    result = oltplab(env, tmp_path, "run", "oltp_point_select", "--ray", "--time=1")
    assert result.code == 2
    assert result.err == "oltplab: error: --ray needs Ray: pip install 'oltplab[ray]'\n"


def test_a_missing_report_library_is_one_line(env: dict[str, str], tmp_path: Path) -> None:
    """A broken install (the report's libraries removed by hand): `oltplab report` and a lab's
    last step say so in one line, whatever imports them first."""
    broken = env | {"OLTPLAB_BLOCKED_MODULES": env["OLTPLAB_BLOCKED_MODULES"] + ",altair"}
    ok(env, tmp_path, "import", GOLDEN_LOG, "--out", tmp_path / "run")
    result = oltplab(broken, tmp_path, "report", tmp_path / "run", "-o", tmp_path / "r.html")
    assert result.code == 2
    assert result.err.startswith("oltplab: error: oltplab report needs altair, which is not")
    assert result.err.count("\n") == 1
    assert not (tmp_path / "r.html").exists()
