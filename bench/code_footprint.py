"""How much code an event runs, from a callgrind profile made with `--dump-instr=yes`
(docs/performance-engine.md, "The code an event runs"): instructions per event, and the
distinct 64-byte lines and 4-KiB pages of code they come from. When the server runs between two
of a connection's statements on the same core, those lines are fetched again at every event, so
the lines are a cost of their own beside the instructions.

    valgrind --tool=callgrind --dump-instr=yes --collect-atstart=no \\
        --toggle-collect='*run_worker*' --callgrind-out-file=cg.out \\
        .venv/bin/python -m oltplab run ...
    .venv/bin/python bench/code_footprint.py cg.out EVENTS     # EVENTS: the run's transactions
"""

import argparse
import itertools
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

LINE_BYTES = 64
PAGE_BYTES = 4096


@dataclass(frozen=True)
class Footprint:
    instructions_per_event: float
    lines_per_event: float
    pages_per_event: float
    # The share of the lines' bytes that the executed instructions fill (the rest is code that
    # did not run: cold paths laid out between hot ones).
    density: float


def self_cost_by_address(text: str) -> Counter[int]:
    """Each instruction's own Ir from a callgrind out file with `positions: instr line`: a
    position is absolute (0x...), relative to the previous one (+n, -n) or the same (*); the cost
    line after a `calls=` line is the callee's inclusive cost, not this instruction's."""
    cost: Counter[int] = Counter()
    last = 0
    after_calls = False
    for line in text.splitlines():
        if line.startswith("calls="):
            after_calls = True
            continue
        if not line or not (line[0] in "+-*" or line.startswith("0x") or line[0].isdigit()):
            continue
        fields = line.split()
        last = _position(fields[0], last)
        if after_calls:
            after_calls = False
        elif len(fields) >= 3:
            cost[last] += int(fields[2])
    return cost


def _position(field: str, last: int) -> int:
    if field == "*":
        return last
    if field[0] in "+-":
        return last + int(field, 0)
    return int(field, 0)


def footprint(cost: Counter[int], events: int) -> Footprint:
    """A line (page) counts for an event as often as its most run instruction runs, at most once."""
    lines: Counter[int] = Counter()
    pages: Counter[int] = Counter()
    for address, ir in cost.items():
        lines[address // LINE_BYTES] = max(lines[address // LINE_BYTES], ir)
        pages[address // PAGE_BYTES] = max(pages[address // PAGE_BYTES], ir)
    hot = sorted(a for a, ir in cost.items() if ir >= events / 2)
    # An instruction's length is taken as the distance to the next one run (at most 15 bytes).
    hot_bytes = sum(min(15, b - a) for a, b in itertools.pairwise(hot)) + (4 if hot else 0)
    hot_lines = len({a // LINE_BYTES for a in hot})
    return Footprint(
        instructions_per_event=sum(cost.values()) / events,
        lines_per_event=sum(min(1.0, n / events) for n in lines.values()),
        pages_per_event=sum(min(1.0, n / events) for n in pages.values()),
        density=hot_bytes / (LINE_BYTES * hot_lines) if hot_lines else 0.0,
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("profile", type=Path, help="callgrind out file, made with --dump-instr=yes")
    ap.add_argument("events", type=int, help="the events (transactions) the profile covers")
    args = ap.parse_args()
    if args.events <= 0:
        ap.error("events must be above 0")
    f = footprint(self_cost_by_address(args.profile.read_text()), args.events)
    print(
        f"{f.instructions_per_event:,.0f} instructions, {f.lines_per_event:.0f} lines of code "
        f"({f.pages_per_event:.0f} pages) per event; the lines {f.density:.0%} filled by code run"
    )


if __name__ == "__main__":
    main()
