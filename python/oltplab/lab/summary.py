"""The lab's results as the seeds print them: per workload, tps and p95 per config x
concurrency with 95% intervals over the repeats, and each config relative to the first."""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from oltplab.documents.analysis import LabCellEstimateDoc, LabWorkloadDoc
from oltplab.documents.lab import CellRecord, LabDocument
from oltplab.exceptions import ConfigError
from oltplab.rundir import load_run

LEVEL = 0.95


@dataclass(frozen=True)
class Estimate:
    mean: float
    half_width: float | None  # None with a single repeat
    values: tuple[float, ...]

    def text(self, digits: int) -> str:
        if self.half_width is None:
            return f"{self.mean:.{digits}f}"
        return f"{self.mean:.{digits}f} ± {self.half_width:.{digits}f}"


def estimate(values: Sequence[float], level: float = LEVEL) -> Estimate | None:
    """Mean and Student-t half-width over independent repeats."""
    if not values:
        return None
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return Estimate(mean, None, tuple(values))
    from oltplab.analysis.quantiles import t_critical  # the analysis package: only when used

    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_critical(level, n - 1) * sd / math.sqrt(n)
    return Estimate(mean, half, tuple(values))


@dataclass
class WorkloadResults:
    workload: str
    load_name: Literal["threads", "rate"]
    columns: list[str] = field(default_factory=list)  # "server/config", in lab order
    loads: list[float] = field(default_factory=list)
    tps: dict[tuple[float, str], Estimate | None] = field(default_factory=dict)
    p95_ms: dict[tuple[float, str], Estimate | None] = field(default_factory=dict)
    # TPC-C cells only: New-Orders per minute (summary.tpcc.tpmC, NOPM in HammerDB's words)
    tpmc: dict[tuple[float, str], Estimate | None] = field(default_factory=dict)

    def to_document(self) -> LabWorkloadDoc:
        def cells(
            table: dict[tuple[float, str], Estimate | None],
        ) -> tuple[LabCellEstimateDoc, ...]:
            return tuple(
                LabCellEstimateDoc(
                    threads=load if self.load_name == "threads" else None,
                    rate=load if self.load_name == "rate" else None,
                    column=column,
                    mean=None if e is None else e.mean,
                    ci_half_width=None if e is None else e.half_width,
                    values=() if e is None else e.values,
                )
                for (load, column), e in table.items()
            )

        return LabWorkloadDoc(
            workload=self.workload,
            load=self.load_name,
            columns=tuple(self.columns),
            tps=cells(self.tps),
            p95_ms=cells(self.p95_ms),
            tpmC=cells(self.tpmc) if self.tpmc else None,
        )


@dataclass
class _Values:
    tps: list[float] = field(default_factory=list)
    p95: list[float] = field(default_factory=list)
    tpmc: list[float] = field(default_factory=list)


def _metric_values(lab_dir: Path, cells: list[CellRecord]) -> _Values:
    out = _Values()
    for cell in cells:
        if cell.status != "done" or cell.run_dir is None:
            continue
        try:
            summary = load_run(lab_dir / cell.run_dir).summary
        except ConfigError:
            continue
        if summary is None:
            continue
        out.tps.append(summary.tps)
        if summary.latency_ms.p95 is not None:
            out.p95.append(summary.latency_ms.p95)
        if summary.tpcc is not None:
            out.tpmc.append(summary.tpcc.tpmC)
    return out


def lab_results(lab_dir: Path, doc: LabDocument) -> list[WorkloadResults]:
    """Numbers read from the cells' run directories (never from lab.json's copies)."""
    out = []
    for w in doc.lab.workloads:
        results = WorkloadResults(w.key, "rate" if w.rate else "threads")
        results.columns = [f"{s.name}/{c}" for s in doc.lab.servers for c in s.configs]
        mine = [c for c in doc.cells if c.workload == w.key]
        results.loads = list(
            dict.fromkeys(c.rate if c.rate is not None else float(c.threads) for c in mine)
        )
        for load in results.loads:
            for column in results.columns:
                group = [
                    c
                    for c in mine
                    if f"{c.server}/{c.config}" == column
                    and (c.rate if c.rate is not None else float(c.threads)) == load
                ]
                values = _metric_values(lab_dir, group)
                results.tps[(load, column)] = estimate(values.tps)
                results.p95_ms[(load, column)] = estimate(values.p95)
                if values.tpmc:
                    results.tpmc[(load, column)] = estimate(values.tpmc)
        out.append(results)
    return out


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.rjust(widths[i]) for i, cell in enumerate(r)) for r in [header, *rows]]
    return "\n".join(lines)


def _relative(r: WorkloadResults) -> str:
    from oltplab.analysis.ratio import ratio_ci_runs

    base = r.columns[0]
    others = r.columns[1:]
    rows = []
    for load in r.loads:
        row = [f"{load:g}"]
        a = r.tps[(load, base)]
        for column in others:
            b = r.tps[(load, column)]
            if a is None or b is None or a.mean <= 0:
                row.append("-")
            elif len(a.values) >= 2 and len(b.values) >= 2 and min(a.values + b.values) > 0:
                ci = ratio_ci_runs(a.values, b.values, LEVEL)
                row.append(f"{ci.ratio:.3f} [{ci.lo:.3f}, {ci.hi:.3f}]")
            else:
                row.append(f"{b.mean / a.mean:.3f}")
        rows.append(row)
    return _table([r.load_name, *others], rows)


def workload_text(r: WorkloadResults) -> str:
    parts = []
    tables = [("tps", r.tps, 1), ("p95 latency, ms", r.p95_ms, 2)]
    if r.tpmc:  # TPC-C: the headline number (TPC-C-like, unaudited)
        tables.insert(0, ("tpmC (New-Orders/min, TPC-C-like, unaudited)", r.tpmc, 0))
    for title, table, digits in tables:
        rows = [
            [f"{load:g}"]
            + [(e.text(digits) if (e := table.get((load, c))) else "-") for c in r.columns]
            for load in r.loads
        ]
        parts.append(
            f"{r.workload}: {title} (mean ± 95% CI over repeats)\n"
            + _table([r.load_name, *r.columns], rows)
        )
    if len(r.columns) > 1:
        parts.append(
            f"{r.workload}: tps relative to {r.columns[0]} (ratio [95% CI])\n" + _relative(r)
        )
    return "\n\n".join(parts)


def lab_summary_text(lab_dir: Path, doc: LabDocument) -> str:
    counts: dict[str, int] = {}
    for c in doc.cells:
        counts[c.status] = counts.get(c.status, 0) + 1
    state = ", ".join(f"{n} {s}" for s, n in counts.items())
    head = f"lab {doc.lab.name} in {lab_dir}: {doc.status} ({state})"
    body = [workload_text(r) for r in lab_results(lab_dir, doc)]
    failed = [
        f"  {c.id}: {' '.join((c.error or '').split())[:300]}"
        for c in doc.cells
        if c.status == "failed"
    ]
    tail = ["failed cells:\n" + "\n".join(failed)] if failed else []
    return "\n\n".join([head, *body, *tail]) + "\n"
