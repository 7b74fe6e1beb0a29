import io

from oltplab.cli.display import RunDisplay
from oltplab.cli.progress import StatusLine
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
