"""Relative tables in the style of sql-bench and Mark Callaghan's rQPS (methodology.md §3.7):
one row per workload and concurrency, the baseline server's value in absolute terms, every
other server as a ratio to it — with the interval rQPS tables lack, and significance."""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from oltplab.analysis.compare import compare
from oltplab.analysis.run_analysis import RunAnalysis, analyse, server_label
from oltplab.exceptions import ConfigError
from oltplab.rundir import Run


@dataclass(frozen=True)
class RelativeTable:
    """`frame` has columns workload, threads, rate_per_s (the open-loop rate of the row, None
    in closed loop), baseline (the baseline's value) and, per other server, `<server>`
    (ratio), `<server> lo`, `<server> hi`, `<server> sig`."""

    metric: str
    baseline: str
    servers: tuple[str, ...]  # the other columns, in order of first appearance
    frame: pd.DataFrame
    warnings: tuple[str, ...]

    @property
    def by_rate(self) -> bool:
        """Some row is an open-loop rate: the tables then show a rate column."""
        return "rate_per_s" in self.frame and bool(self.frame["rate_per_s"].notna().any())


def relative_table(
    runs: Sequence[Run | str | Path | RunAnalysis],
    *,
    baseline: str | None = None,
    metric: str = "tps",
    level: float = 0.95,
) -> RelativeTable:
    """Groups runs by server (a lab label, else driver and version); `baseline` names one
    (default: the first run's)."""
    by_server: dict[str, list[RunAnalysis]] = {}
    for run in runs:
        a = run if isinstance(run, RunAnalysis) else analyse(run)
        by_server.setdefault(server_label(a.run), []).append(a)
    if not by_server:
        raise ConfigError("a relative table needs runs")
    base = baseline or next(iter(by_server))
    if base not in by_server:
        raise ConfigError(
            f"no run of baseline '{base}'; the runs' servers are: {', '.join(by_server)}"
        )
    others = tuple(s for s in by_server if s != base)
    rows: dict[tuple[str, int, int, float], dict[str, object]] = {}
    warnings: list[str] = []
    for server in others:
        found = compare(by_server[server], by_server[base], metrics=[metric], level=level)
        warnings += [f"{server}: {w}" for w in found.warnings]
        for m in found.metrics:
            g = m.group
            assert g is not None
            row = rows.setdefault(
                g.sort_key(),
                {
                    "workload": g.workload,
                    "threads": g.threads,
                    "rate_per_s": g.rate_per_s,
                    "baseline": m.baseline,
                },
            )
            row |= {
                server: m.ratio,
                f"{server} lo": m.ci.lo,
                f"{server} hi": m.ci.hi,
                f"{server} sig": m.significant,
            }
    frame = pd.DataFrame([rows[k] for k in sorted(rows)])
    return RelativeTable(metric, base, others, frame, tuple(dict.fromkeys(warnings)))
