"""`oltplab import` in-process: the line it prints, stdin, and one-line errors (exit 2)."""

import io
import json
from pathlib import Path

import pytest

from oltplab.cli.main import main
from oltplab.rundir import load_run
from tests.known import known
from tests.sysbench_import import logs

Capture = pytest.CaptureFixture[str]


def _one_line_error(err: str, needle: str) -> None:
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("oltplab: error: ")
    assert needle in err


def test_import_a_file(tmp_path: Path, capsys: Capture) -> None:
    log = tmp_path / "sb.log"
    log.write_text(logs.golden("run-report-interval"))
    assert main(["import", str(log), "--out", str(tmp_path / "run"), "--workload", "oltp_x"]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == (f"Imported {log} into {tmp_path / 'run'}: 3 intervals, complete\n", "")
    run = load_run(tmp_path / "run")
    assert (run.workload, known(run.doc.imported_from).file) == ("oltp_x", "sb.log")


def test_import_from_stdin_cut_short(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(logs.SUB_SECOND_CUT))
    assert main(["import", "-", "--out", str(tmp_path / "run")]) == 0
    assert capsys.readouterr().out.endswith(": 3 intervals, incomplete: no final report\n")
    run = load_run(tmp_path / "run")
    assert (run.complete, known(run.doc.imported_from).file) == (False, "-")


def test_histogram_line_names_the_hlog(tmp_path: Path, capsys: Capture) -> None:
    log = tmp_path / "h.log"
    log.write_text(logs.golden("run-histogram"))
    assert main(["import", str(log), "--out", str(tmp_path / "run")]) == 0
    assert capsys.readouterr().out.endswith(": 0 intervals, latency.hlog, complete\n")


def test_errors_are_one_line(tmp_path: Path, capsys: Capture) -> None:
    out = str(tmp_path / "run")
    assert main(["import", str(tmp_path / "missing.log"), "--out", out]) == 2
    _one_line_error(capsys.readouterr().err, "cannot read")
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\n")
    assert main(["import", str(notes), "--out", out]) == 2
    _one_line_error(capsys.readouterr().err, "is not sysbench output")
    assert not (tmp_path / "run").exists()  # nothing written for a bad input
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "keep").write_text("")
    log = tmp_path / "sb.log"
    log.write_text(logs.golden("run"))
    assert main(["import", str(log), "--out", out]) == 2
    _one_line_error(capsys.readouterr().err, "is not empty")
    assert main(["import", str(log)]) == 2
    _one_line_error(capsys.readouterr().err, "--out")


def test_help(capsys: Capture) -> None:
    assert main(["import", "--help"]) == 0
    assert "usage: oltplab import SYSBENCH_LOG --out DIR" in capsys.readouterr().out
    assert main(["--help"]) == 0
    assert "oltplab import sysbench.log --out DIR" in capsys.readouterr().out


class _BinaryStdin(io.TextIOWrapper):
    """sys.stdin as a process has it: text over a byte buffer."""


def test_import_from_stdin_that_is_not_utf8(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Latin-1 bytes in a log (a table comment, a host name) read as U+FFFD, as from a file;
    not a traceback."""
    raw = logs.RATE.replace("Threads started!", "Threads started! caf\xe9").encode("latin-1")
    monkeypatch.setattr("sys.stdin", _BinaryStdin(io.BytesIO(raw), encoding="utf-8"))
    assert main(["import", "-", "--out", str(tmp_path / "run")]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.endswith(": 2 intervals, complete\n")
    # Binary garbage is not sysbench output: one line, exit 2.
    monkeypatch.setattr("sys.stdin", _BinaryStdin(io.BytesIO(b"\xff\xfe\x00\x81" * 50)))
    assert main(["import", "-", "--out", str(tmp_path / "run2")]) == 2
    _one_line_error(capsys.readouterr().err, "is not sysbench output")


def test_import_json(tmp_path: Path, capsys: Capture) -> None:
    log = tmp_path / "h.log"
    log.write_text(logs.golden("run-histogram"))
    assert main(["import", str(log), "--out", str(tmp_path / "run"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == {
        "run": str(tmp_path / "run"),
        "source": "h.log",
        "intervals": 0,
        "latency_hlog": True,
        "complete": True,
        "state": "complete",
    }
