"""examples/labs/threadpool.toml end to end in its small setting, in a process of its own
(it pins itself): 2 MariaDB configs x 2 thread counts x 2 repeats -> 8 run directories in
interleaved order, each showing its thread_handling as the server reported it, pinned as
configured, with metrics on the intervals' grid; the printed table is the run directories'."""

import csv
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from oltplab.cli.main import main
from oltplab.documents.lab import read_lab_document
from oltplab.lab.summary import estimate
from oltplab.rundir import load_run
from oltplab.servers import MariaDBServer
from tests.conftest import ROOT, discard_data
from tests.known import known
from tests.report.images import assert_drawn_images

EXAMPLE = ROOT / "examples" / "labs" / "threadpool.toml"


def _t_s(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as f:
        return [row["t_s"] for row in csv.DictReader(f)]


@pytest.fixture(scope="module")
def threadpool_lab(servers_root: Path, mariadb: MariaDBServer) -> Iterator[tuple[Path, str]]:
    """The example run once for the module: (lab directory, what it printed)."""
    del mariadb  # only for the packages: the lab starts its own server
    lab_dir = servers_root / "lab-threadpool"
    argv = ["lab", "run", str(EXAMPLE), "--scale", "small", "--out", str(lab_dir)]
    done = subprocess.run(
        [sys.executable, "-m", "oltplab", *argv],
        capture_output=True,
        text=True,
        timeout=580,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    yield lab_dir, done.stdout
    discard_data(lab_dir)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_threadpool_small_end_to_end(threadpool_lab: tuple[Path, str]) -> None:
    lab_dir, stdout = threadpool_lab
    doc = read_lab_document(lab_dir)
    assert doc.status == "done"
    assert len(doc.cells) == 8
    assert all(c.status == "done" for c in doc.cells)
    assert len(doc.prepared) == 1  # one server, one data shape: prepared once

    runs = {c.id: load_run(lab_dir / str(c.run_dir)) for c in doc.cells}
    assert all(r.complete for r in runs.values())
    started = [str(runs[cell_id].doc.started_at) for cell_id in doc.plan]
    assert started == sorted(started)  # ran in the planned (interleaved) order
    assert [doc.cell(i).config for i in doc.plan[:4]] == [
        "one-thread-per-connection",
        "pool-of-threads",
    ] * 2
    for cell in doc.cells:
        run = runs[cell.id].doc
        assert known(run.target.server_variables)["thread_handling"] == cell.config
        lab, pinning = known(run.lab), known(run.pinning)
        assert lab.cell == cell.id
        assert lab.config_variables == {"thread_handling": cell.config}
        assert pinning.client_cpus_allowed == "1"
        assert pinning.server_cpus_allowed == "0"
        intervals = _t_s(runs[cell.id].path / "intervals.csv")
        assert len(intervals) >= 4
        for name in ("system.csv", "server.csv"):
            assert _t_s(runs[cell.id].path / name) == intervals

    # The lab's report (oltplab report's page) is written at the end and named in the output.
    assert (lab_dir / "report.html").stat().st_size > 500_000
    assert f"report: {lab_dir / 'report.html'}" in stdout

    # The printed tables hold the run directories' own numbers.
    for threads in (4, 32):
        for config in ("one-thread-per-connection", "pool-of-threads"):
            tps = [
                known(runs[c.id].summary).tps
                for c in doc.cells
                if c.threads == threads and c.config == config
            ]
            e = estimate(tps)
            assert e is not None
            assert e.text(1) in stdout
    assert "tps relative to mariadb/one-thread-per-connection" in stdout


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_show_compare_table_take_the_lab(
    threadpool_lab: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The analysis commands read a lab directory, narrowed with selectors."""
    lab_dir, _ = threadpool_lab
    assert main(["show", str(lab_dir), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "done"
    assert shown["results"][0]["columns"] == [
        "mariadb/one-thread-per-connection",
        "mariadb/pool-of-threads",
    ]
    vs = ["--vs", "config=one-thread-per-connection", "--json"]
    assert main(["compare", str(lab_dir), "threads=32", *vs]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert {m["group"]["threads"] for m in compared["metrics"] if m["group"]} == {32}
    assert main(["table", str(lab_dir), "--baseline", "config=pool-of-threads", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert table["baseline"] == "mariadb/pool-of-threads"
    assert table["servers"] == ["mariadb/one-thread-per-connection"]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_png_and_svg_of_the_lab_report(threadpool_lab: tuple[Path, str], tmp_path: Path) -> None:
    """Every chart of a real lab's report as PNG and SVG (for blog posts): decoded, of the
    stated size, not blank."""
    lab_dir, _ = threadpool_lab
    png_dir, svg_dir = tmp_path / "png", tmp_path / "svg"
    argv = ["report", str(lab_dir), "-o", str(tmp_path / "r.html")]
    assert main([*argv, "--png", str(png_dir), "--svg", str(svg_dir)]) == 0
    pngs, svgs = list(png_dir.iterdir()), list(svg_dir.iterdir())
    names = {p.stem for p in pngs}
    # The lab's scaling, timelines and distributions are all there.
    assert any(n.startswith("scaling") for n in names), names
    assert sum(n.startswith("timeline") for n in names) >= 1, names
    assert_drawn_images(pngs, svgs)
