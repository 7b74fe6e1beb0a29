"""bench/code_footprint.py: a callgrind profile's instructions, read as callgrind writes them
(absolute, relative and repeated positions; a call's inclusive cost not counted as the caller's
own), and the lines and pages of code they come from."""

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
from code_footprint import footprint, self_cost_by_address  # noqa: E402

# Two events: a function of three instructions run twice each, one of them a call whose
# inclusive cost (1,000) belongs to the callee; the callee, two lines and a page away, once
# per event; an instruction of a cold path, run once in all.
PROFILE = """# callgrind format
positions: instr line
events: Ir
summary: 13

fn=(1) caller
0x1000 10 2
+4 * 2
calls=2 0x3000 30
* 11 1000
+40 12 2
0x1800 13 1
fn=(2) callee
0x3000 30 2
+8 * 2
"""


def test_the_cost_lines_are_read_as_callgrind_writes_them() -> None:
    cost = self_cost_by_address(PROFILE)
    assert cost == {0x1000: 2, 0x1004: 2, 0x102C: 2, 0x1800: 1, 0x3000: 2, 0x3008: 2}


def test_lines_and_pages_count_once_per_event_and_rare_code_by_its_share() -> None:
    f = footprint(self_cost_by_address(PROFILE), events=2)
    assert f.instructions_per_event == 5.5
    # 0x1000 and 0x1004 share a line; 0x102C is in the same line (0x1000-0x103F); 0x3000 and
    # 0x3008 share one; 0x1800 runs in half the events.
    assert f.lines_per_event == 2.5
    # 0x1000-0x1FFF is one page, 0x3000 another.
    assert f.pages_per_event == 2.0
    assert 0 < f.density <= 1
