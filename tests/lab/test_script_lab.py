"""A lab whose workload is a sysbench Lua script (`script = "path.lua"`): Debian's
oltp_point_select.lua copied under a name that is not a built-in's, prepared once by its own
prepare, restored before the second cell (a script's cells count as writing), two cells on a
real server, run.json naming the script and its options, the lab's table, show and
report.html; and the lab file's script errors, one line each, exit 2, before anything runs."""

import json
import shutil
from pathlib import Path

import pytest

from oltplab.documents.lab import read_lab_document
from oltplab.rundir import load_run
from oltplab.servers import MariaDBServer, PostgresServer
from tests.drivers.commands import oltplab_cli, oltplab_done
from tests.known import known

DEBIAN_SCRIPT = Path("/usr/share/sysbench/oltp_point_select.lua")

LAB = """\
[lab]
name = "lua"
time = 2
repeats = 2
metrics = []

[servers.SERVER]
engine = "ENGINE"

[[workloads]]
script = "my_point_select.lua"
threads = [2]
options = OPTIONS
"""
OPTIONS = "{ tables = 1, table_size = 300, skip_trx = true }"


def _lab_file(where: Path, engine: str = "mariadb", options: str = OPTIONS) -> Path:
    shutil.copy(DEBIAN_SCRIPT, where / "my_point_select.lua")
    server = "mdb" if engine == "mariadb" else "pg"
    text = LAB.replace("SERVER", server).replace("ENGINE", engine).replace("OPTIONS", options)
    path = where / "lab.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _run_script_lab(tmp_path: Path, lab_dir: Path, engine: str) -> None:
    lab_file = _lab_file(tmp_path, engine)
    printed = oltplab_cli("lab", "run", str(lab_file), "--out", str(lab_dir), cwd=tmp_path)
    assert "my_point_select: tps" in printed, printed
    doc = read_lab_document(lab_dir)
    assert doc.status == "done"
    assert [c.status for c in doc.cells] == ["done", "done"]
    assert [c.workload for c in doc.cells] == ["my_point_select", "my_point_select"]
    assert len(doc.prepared) == 1
    assert doc.prepared[0].family == "lua"
    assert doc.prepared[0].options["table_size"] == 300
    # The first cell follows the prepare; the second restored (a script may have written).
    assert [c.restore_s is not None for c in doc.cells] == [False, True]
    for cell in doc.cells:
        run = load_run(lab_dir / str(cell.run_dir))
        assert run.complete
        assert run.doc.workload.name == "my_point_select.lua"
        assert str(run.doc.workload.options["table_size"]) == "300"
        assert str(run.doc.workload.options["skip_trx"]) == "on"
        assert str(run.doc.workload.options["threads"]) == "2"
        assert known(run.doc.lab).cell == cell.id
        summary = known(run.summary)
        assert summary.transactions > 0
        # oltp_point_select: one SELECT per event (skip_trx: no BEGIN/COMMIT).
        assert summary.queries.read == summary.transactions
    shown = oltplab_cli("show", str(lab_dir), cwd=tmp_path)
    assert "my_point_select" in shown
    html = tmp_path / "report.html"
    oltplab_cli("report", str(lab_dir), "-o", str(html), cwd=tmp_path)
    assert "my_point_select" in html.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_script_lab_on_mariadb(tmp_path: Path, lab_dir: Path, mariadb: MariaDBServer) -> None:
    del mariadb  # the lab starts its own server
    _run_script_lab(tmp_path, lab_dir, "mariadb")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_script_lab_on_postgresql(tmp_path: Path, lab_dir: Path, postgres: PostgresServer) -> None:
    del postgres
    _run_script_lab(tmp_path, lab_dir, "postgresql")


def test_dry_run_plans_script_cells(tmp_path: Path, lab_dir: Path) -> None:
    lab_file = _lab_file(tmp_path)
    printed = oltplab_cli(
        "lab", "run", str(lab_file), "--dry-run", "--out", str(lab_dir), cwd=tmp_path
    )
    assert "mdb.default.my_point_select.t2.r1" in printed, printed
    assert "mdb.default.my_point_select.t2.r2" in printed, printed


@pytest.mark.parametrize(
    ("edit", "key", "says"),
    [
        (("my_point_select.lua", "missing.lua"), "workloads[0].script", "no such script"),
        (
            ("table_size = 300", "table_sise = 300"),
            "workloads[0].options.table_sise",
            "--table-sise",
        ),
        (("script = ", 'name = "oltp_point_select"\nscript = '), "workloads[0].name", "not both"),
        (("table_size = 300", "threads = 4"), "workloads[0].options.threads", "threads = [...]"),
    ],
)
def test_script_workload_errors(
    tmp_path: Path, lab_dir: Path, edit: tuple[str, str], key: str, says: str
) -> None:
    lab_file = _lab_file(tmp_path)
    lab_file.write_text(lab_file.read_text().replace(*edit), encoding="utf-8")
    done = oltplab_done("lab", "run", str(lab_file), "--out", str(lab_dir), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    for part in (f"{lab_file}:", key, says):
        assert part in done.stderr, done.stderr
    assert not lab_dir.exists()  # refused before anything started


def test_lab_json_keeps_the_script(tmp_path: Path, lab_dir: Path) -> None:
    """lab.json's workloads name the script and its content's hash (a changed script is a
    changed lab: it refuses to resume)."""
    from oltplab.lab.labfile import read_lab_file
    from oltplab.lab.plan import resume_difference

    lab_file = _lab_file(tmp_path)
    before, _ = read_lab_file(lab_file)
    w = json.loads(json.dumps(before.to_json()))["workloads"][0]
    assert w["script"] == str(tmp_path / "my_point_select.lua")
    assert len(w["script_sha256"]) == 64
    (tmp_path / "my_point_select.lua").write_text(
        DEBIAN_SCRIPT.read_text() + "\n-- edited\n", encoding="utf-8"
    )
    after, _ = read_lab_file(lab_file)
    assert resume_difference(before, after) == "workload my_point_select's script changed"
