"""A change measured side by side (vs_sysbench.py --before): this checkout's oltplab against the
one before the change, run alternately in each pair; medians of the pairs' after / before ratios."""

from __future__ import annotations

from collections.abc import Sequence

from _common import fmt
from _vs_compare import METRICS, configs_of, median, ratio, tools_by_pair
from _vs_run import Run
from _vs_tools import BEFORE


def before_after_pairs(
    runs: Sequence[Run], config: tuple[str, str, int, str]
) -> list[tuple[Run, Run]]:
    """(after, before) of each pair of `config` in which both ran and succeeded."""
    return [
        (d["oltplab"], d[BEFORE])
        for d in tools_by_pair(runs, config, ok_only=True)
        if "oltplab" in d and BEFORE in d
    ]


def before_after_table(runs: Sequence[Run]) -> str:
    """after / before per metric: the medians of each, and (in bold) the median of the pairs'
    ratios, with each pair's ratio listed."""
    labels = [label for label, _, _ in METRICS]
    head = "| server | workload | threads | transport | pairs | " + " | ".join(labels) + " |\n"
    head += "|---|---|--:|---|--:|" + "---|" * len(labels) + "\n"
    rows = []
    for engine, workload, threads, transport in configs_of(runs):
        pairs = before_after_pairs(runs, (engine, workload, threads, transport))
        if not pairs:
            continue
        cells = []
        for _, get, spec in METRICS:
            each = [ratio(get(a), get(b)) for a, b in pairs]
            med_a, med_b = median([get(a) for a, _ in pairs]), median([get(b) for _, b in pairs])
            listed = ", ".join(fmt(r, ".2f") for r in each)
            both = f"{fmt(med_a, spec)} / {fmt(med_b, spec)}"
            cells.append(f"{both} (**{fmt(median(each), '.2f')}**: {listed})")
        rows.append(
            f"| {engine} | {workload} | {threads:,} | {transport} | {len(pairs)} | "
            + " | ".join(cells)
            + " |"
        )
    title = (
        "After / before (this checkout / --before), medians of the pairs "
        "(**median of the pairs' ratios**: each pair's)\n\n"
    )
    return title + head + "\n".join(rows) + "\n"
