import io
from pathlib import Path

from oltplab.cli.display import RunDisplay
from oltplab.cli.progress import StatusLine
from oltplab.rundir.manifest import final_manifest, initial_manifest
from oltplab.runner import RunResult
from tests import synthetic


def _display(**options: object) -> tuple[RunDisplay, io.StringIO]:
    out = io.StringIO()
    status = StatusLine(io.StringIO(), is_tty=False)
    return RunDisplay(out, status, synthetic.options(**options)), out


def test_the_last_partial_interval_is_not_printed() -> None:
    display, out = _display()
    display.on_event(synthetic.started_event())
    for event in synthetic.intervals(2):
        display.on_event(event)
    display.on_event(synthetic.interval_event(2.003, interval_s=0.003, transactions=1))
    lines = [line for line in out.getvalue().splitlines() if line.startswith("[")]
    assert [line.split("]")[0] for line in lines] == ["[ 1s ", "[ 2s "]


def test_sub_second_interval_lines() -> None:
    display, out = _display(report_interval=0.5, percentile=99.0)
    for event in synthetic.intervals(2, interval_s=0.5):
        display.on_event(event)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[ 0.5s ] thds: 2 tps: 200.00 ")
    assert "lat (ms,99%): " in lines[0]
    assert lines[1].startswith("[ 1.0s ] ")


def test_seeded_preamble() -> None:
    display, out = _display(rand_seed=7, report_interval=0)
    display.on_event(synthetic.started_event(threads=4))
    text = out.getvalue()
    assert text.startswith("oltplab ")
    assert "Number of threads: 4\nInitializing random number generator from seed (7).\n" in text
    assert text.endswith("Threads started!\n\n")


def test_drop_in_display_prints_sysbench_text_only(tmp_path: Path) -> None:
    """The drop-in mode's display: its own first line, no status line, no oltplab summary."""
    out = io.StringIO()
    header = "sysbench 1.0.20 (using oltplab x)"
    display = RunDisplay(out, None, synthetic.options(), header=header, summary=False)
    display.on_event(synthetic.started_event())
    events = synthetic.intervals(2)
    for event in events:
        display.on_event(event)
    raw = synthetic.run_result(events, histogram_ms=[[1.0, 3], [2.0, 1]])
    manifest = initial_manifest(
        workload="oltp_read_write", options=raw["options"], db_url="sqlite:///x.db", argv=None
    )
    display.finish(RunResult(tmp_path, final_manifest(manifest, raw), raw=raw))
    text = out.getvalue()
    assert text.startswith(header + "\n\nRunning the test with following options:\n")
    assert "Latency histogram (values are in milliseconds)\n" in text
    assert text.endswith("\n\n")
    assert text.splitlines()[-4] == "Threads fairness:"
    assert "oltplab summary" not in text


def test_rate_mode_adds_sysbenchs_queue_line() -> None:
    display, out = _display(rate=100.0)
    event = synthetic.interval_event(1.0, interval_s=1.0, transactions=100)
    display.on_event(event | {"backlog": 3, "in_flight": 2})
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[ 1s ] thds: ")
    assert lines[1] == "[ 1s ] queue length: 3, concurrency: 2"
    closed, closed_out = _display()
    closed.on_event(event)
    assert "queue length" not in closed_out.getvalue()
