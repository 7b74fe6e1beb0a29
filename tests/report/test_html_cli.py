"""`oltplab report` on the command line: the files it writes, and bad input as one line
with exit 2."""

import json
import sys
from pathlib import Path

import pytest

from oltplab.cli.main import main
from tests.conftest import ROOT
from tests.report.html_fixtures import Built


def test_writes_html_png_and_svg(
    built: Built, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [str(p) for p in built.runs[:4]]
    out = tmp_path / "r.html"
    code = main(
        [
            "report",
            *runs,
            "-o",
            str(out),
            "--png",
            str(tmp_path / "png"),
            "--svg",
            str(tmp_path / "svg"),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert str(out) in printed
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "vegaEmbed" in html
    assert "http://" not in html.split("<script>", 1)[0]  # no external stylesheet or font
    pngs, svgs = sorted((tmp_path / "png").iterdir()), sorted((tmp_path / "svg").iterdir())
    assert len(pngs) == len(svgs) > 0
    assert "secret" not in html  # the run's URL password never reaches the report


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert "Traceback" not in err
    return err


def test_not_a_run_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path)]) == 2
    assert "neither a run directory" in _error(capsys)
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert "does not exist" in _error(capsys)
    lab_file = tmp_path / "threadpool.toml"
    lab_file.write_text("[lab]\n")
    assert main(["report", str(lab_file)]) == 2
    assert "is a lab file; report the lab directory" in _error(capsys)


def test_unwritable_output(
    built: Built, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "no-such-dir" / "r.html"
    assert main(["report", str(built.runs[0]), "-o", str(out)]) == 2
    assert "cannot write the report to" in _error(capsys)


def test_run_without_intervals(
    built: Built, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    manifest = json.loads((built.runs[0] / "run.json").read_text())
    (empty / "run.json").write_text(json.dumps(manifest))
    header = (built.runs[0] / "intervals.csv").read_text().splitlines()[0]
    (empty / "intervals.csv").write_text(header + "\n")
    assert main(["report", str(empty), "-o", str(tmp_path / "r.html")]) == 2
    assert "no run has measured intervals" in _error(capsys)
    # Beside a run that has intervals, it is left out with a note in the report.
    assert main(["report", str(empty), str(built.runs[0]), "-o", str(tmp_path / "r.html")]) == 0
    assert "no measured intervals; left out" in (tmp_path / "r.html").read_text()


def test_without_the_report_libraries(
    built: Built, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "vl_convert", None)  # import vl_convert raises ImportError
    assert main(["report", str(built.runs[0])]) == 2
    err = _error(capsys)
    assert err.startswith("oltplab: error: oltplab report needs vl-convert-python, which is not")
    assert "pip install altair vl-convert-python" in err


def test_an_imported_sysbench_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """sysbench's own output, imported, is reported too; without histograms there is no
    spectrum, and the report says so instead of failing."""
    log = ROOT / "tests" / "sysbench_compat" / "golden" / "run-report-interval.txt"
    assert main(["import", str(log), "--out", str(tmp_path / "imported")]) == 0
    out = tmp_path / "r.html"
    assert main(["report", str(tmp_path / "imported"), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "no latency histograms; no percentile spectrum" in printed
    assert 'id="timeline-' in out.read_text()


def test_bad_output_paths_fail_before_anything_is_written(
    built: Built, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = str(built.runs[0])
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    html = tmp_path / "r.html"
    assert main(["report", run, "-o", str(html), "--png", str(a_file)]) == 2
    assert f"--png {a_file} is a file" in _error(capsys)
    assert not html.exists()  # refused before the HTML was written
    assert main(["report", run, "-o", str(tmp_path)]) == 2
    assert "is a directory" in _error(capsys)
