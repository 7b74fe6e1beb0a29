import io

from oltplab.cli.progress import StatusLine, bar, prepare_status, run_status
from oltplab.rundir.intervals import IntervalRow
from tests import synthetic


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_terminal_redraws_in_place_at_most_four_times_a_second() -> None:
    out, clock = io.StringIO(), Clock()
    status = StatusLine(out, is_tty=True, clock=clock)
    status.show("a")
    clock.now += 0.1
    status.show("b")  # too soon: skipped
    clock.now += 0.2
    status.show("c")
    status.clear()
    assert out.getvalue() == "\r\x1b[Ka\r\x1b[Kc\r\x1b[K"


def test_pipes_get_plain_lines_now_and_then() -> None:
    out, clock = io.StringIO(), Clock()
    status = StatusLine(out, is_tty=False, clock=clock, plain_every_s=10)
    status.show("a")  # the first 10 s stay quiet: short commands print nothing
    clock.now += 10
    status.show("b")
    clock.now += 1
    status.show("c")
    status.clear()
    assert out.getvalue() == "b\n"
    assert "\r" not in out.getvalue()


def test_texts() -> None:
    row = IntervalRow.from_event(synthetic.interval_event(3.0, transactions=250))
    text = run_status(row, time_limit_s=10, errors_total=2)
    assert text.startswith("running 3.0s/10s  250.0 tps  p95 ")
    assert text.endswith(" ms  errors 2")
    stepped = IntervalRow.from_event(synthetic.interval_event(3.0, transactions=250) | {"step": 1})
    assert run_status(stepped, time_limit_s=10, errors_total=0).startswith(
        "running 3.0s/10s step 1 "
    )
    assert bar(0.5, width=10) == "[#####.....]"
    assert prepare_status({1: (10, 10), 2: (0, 10)}) == (
        "loading [###############...............]  50%  10/20 rows  1/2 tables done"
    )
