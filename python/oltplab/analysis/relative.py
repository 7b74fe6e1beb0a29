"""Relative tables in the style of sql-bench and Mark Callaghan's rQPS (methodology.md §3.7):
one row per workload and concurrency, the baseline server's value in absolute terms, every
other server as a ratio to it — with the interval rQPS tables lack, and significance."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from oltplab.analysis._json import finite
from oltplab.analysis.compare import MetricComparison, compare
from oltplab.analysis.run_analysis import RunAnalysis, analyse, server_label
from oltplab.documents.analysis import RelativeRowDoc, RelativeTableDoc, document_json
from oltplab.exceptions import ConfigError
from oltplab.rundir import Run


@dataclass(frozen=True)
class RelativeRow:
    """One workload and concurrency: the baseline's value and each other server's ratio."""

    workload: str
    threads: int
    rate_per_s: float | None  # the row's open-loop rate; 0: closed loop; None: rates not shared
    baseline: float
    ratios: dict[str, MetricComparison] = field(default_factory=dict)  # server -> ratio

    def to_document(self, servers: Sequence[str]) -> RelativeRowDoc:
        """workload, threads, baseline and per server `<server>` (ratio), `<server> lo`,
        `<server> hi`, `<server> sig` (null when that server has no run at this load)."""
        row: RelativeRowDoc = {
            "workload": self.workload,
            "threads": self.threads,
            "rate_per_s": self.rate_per_s,
            "baseline": self.baseline,
        }
        for server in servers:
            m = self.ratios.get(server)
            row |= {
                server: None if m is None else m.ratio,
                f"{server} lo": None if m is None else finite(m.ci.lo),
                f"{server} hi": None if m is None else finite(m.ci.hi),
                f"{server} sig": None if m is None else m.significant,
            }
        return row


@dataclass(frozen=True)
class RelativeTable:
    metric: str
    baseline: str
    servers: tuple[str, ...]  # the other columns, in order of first appearance
    rows: tuple[RelativeRow, ...]  # by workload and concurrency
    warnings: tuple[str, ...]

    @property
    def by_rate(self) -> bool:
        """Some row is an open-loop rate: the tables then show a rate column."""
        return any(r.rate_per_s for r in self.rows)

    def to_document(self) -> RelativeTableDoc:
        """`oltplab table --json`."""
        return RelativeTableDoc(
            metric=self.metric,
            baseline=self.baseline,
            servers=self.servers,
            rows=tuple(r.to_document(self.servers) for r in self.rows),
            warnings=self.warnings,
        )

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = document_json(self.to_document())
        return doc

    @property
    def frame(self) -> pd.DataFrame:
        """The rows as a table: columns workload, threads, rate_per_s (the open-loop rate of
        the row; 0 in closed loop, None for open-loop rates the servers did not share),
        baseline and, per other server, `<server>` (ratio), `<server> lo`, `<server> hi`,
        `<server> sig`."""
        return pd.DataFrame([r.to_document(self.servers) for r in self.rows])


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
    rows: dict[tuple[str, int, int, float], RelativeRow] = {}
    warnings: list[str] = []
    for server in others:
        found = compare(by_server[server], by_server[base], metrics=[metric], level=level)
        warnings += [f"{server}: {w}" for w in found.warnings]
        for m in found.metrics:
            g = m.group
            assert g is not None
            row = rows.setdefault(
                g.sort_key(), RelativeRow(g.workload, g.threads, g.rate_per_s, baseline=m.baseline)
            )
            row.ratios[server] = m
    ordered = tuple(rows[k] for k in sorted(rows))
    return RelativeTable(metric, base, others, ordered, tuple(dict.fromkeys(warnings)))
