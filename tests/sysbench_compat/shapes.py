"""Line shapes, to compare oltplab's drop-in output with sysbench's in structure.

A line's shape is the line with every number replaced by N, histogram bars removed and
whitespace collapsed: `[ 1s ] thds: 2 tps: 1262.51 ...` -> `[ Ns ] thds: N tps: N ...`.
Exact widths and formats are tested byte for byte in tests/report/test_sysbench_text.py.

golden/ holds what the Debian package sysbench 1.0.20+ds-5 printed against MariaDB 10.11
(127.0.0.1, user sbtest), with C="--mysql-host=... --mysql-port=... --mysql-user=sbtest
--mysql-password=...":
    prepare.txt               oltp_read_write $C --table-size=1000 prepare
    cleanup.txt               oltp_read_write $C --table-size=1000 cleanup
    prepare-parallel.txt      oltp_read_write $C --table-size=1000 --tables=2 --threads=2 prepare
    cleanup-parallel.txt      oltp_read_write $C --table-size=1000 --tables=2 --threads=2 cleanup
    run.txt                   oltp_read_write $C --table-size=1000 --tables=2 --time=2 run
    run-report-interval.txt   ... --threads=2 --time=3 --report-interval=1 run
    run-histogram.txt         ... --time=1 --histogram run
    run-percentile-99.txt     ... --time=1 --percentile=99 --rand-seed=7 run
    run-percentile-0.txt      ... --time=1 --percentile=0 run
    help.txt                  oltp_read_write help
"""

import re
from collections.abc import Iterable
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden"

_BAR = re.compile(r"\|\**")
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
# What prepare and cleanup print per table (sysbench's oltp_common.lua).
_MESSAGE = re.compile(
    r"Creating table 'sbtest\d+'\.\.\.|Inserting \d+ records into 'sbtest\d+'"
    r"|Creating a secondary index on 'sbtest\d+'\.\.\.|Dropping table 'sbtest\d+'\.\.\."
)
# sysbench's own banner and oltplab's drop-in banner have the same shape but other words.
_BANNER = re.compile(r"^sysbench N \(using .+\)$")


def shape(line: str) -> str:
    text = " ".join(_NUMBER.sub("N", _BAR.sub("|", line)).split())
    return "sysbench N (using ...)" if _BANNER.match(text) else text


def shapes(text: str) -> list[str]:
    return [shape(line) for line in text.splitlines()]


def runs(items: Iterable[str]) -> list[str]:
    """Consecutive repeats folded into one: the number of interval lines and of
    histogram rows depends on timing, not on structure."""
    out: list[str] = []
    for item in items:
        if not out or out[-1] != item:
            out.append(item)
    return out


def structure(text: str) -> list[str]:
    return runs(shapes(text))


def golden(name: str) -> str:
    return (GOLDEN / f"{name}.txt").read_text(encoding="utf-8")


def unordered_structure(text: str) -> list[str]:
    """For parallel prepare: its tables finish in any order, and sysbench's threads even
    print into each other's lines (`Creating table 'sbtest1'...Creating table 'sbtest2'...`).
    The non-empty lines left without the table messages, in order, then the sorted
    shapes of the messages."""
    rest = [shape(line) for line in _MESSAGE.sub("", text).splitlines() if line.strip()]
    return rest + sorted(shape(m.group(0)) for m in _MESSAGE.finditer(text))


def assert_same_structure(ours: str, theirs: str, *, ordered: bool = True) -> None:
    """Equal shape sequences (with repeats folded); `ordered=False` compares
    unordered_structure, for parallel prepare."""
    if ordered:
        mine, ref = structure(ours), structure(theirs)
    else:
        mine, ref = unordered_structure(ours), unordered_structure(theirs)
    assert mine == ref, "\n".join(
        ["structure differs (oltplab | sysbench):"]
        + [f"  {a!r:70} | {b!r}" for a, b in zip(mine, ref, strict=False)]
        + [f"  lengths {len(mine)} vs {len(ref)}"]
    )
