"""Throughput and latency against concurrency, per server and workload, with a Universal
Scalability Law fit and a Little's-law check per point (methodology.md §5); and against the
arrival rate in open loop (`rate_sweep`: the response time as the offered load nears what the
server can do, §4.3).

A point is every closed-loop run (or thread step) of one server, workload and connection
count (open loop: and rate): its throughput is the mean of the runs' steady means, its
interval between-run when there are several runs and within-run otherwise; its percentiles
come from the runs' steady-window histograms added together, never from averaged
percentiles."""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from oltplab.analysis._json import finite
from oltplab.analysis.latency import added, window_latency
from oltplab.analysis.quantiles import t_critical, z_critical
from oltplab.analysis.run_analysis import PartAnalysis, RunAnalysis, analyse, server_label
from oltplab.analysis.usl import UslFit, fit_usl
from oltplab.documents.analysis import (
    SweepDoc,
    SweepPointDoc,
    UslDoc,
    WindowLatency,
    document_json,
)
from oltplab.rundir import Run

MIN_USL_POINTS = 3


@dataclass(frozen=True)
class SweepPoint:
    server: str
    workload: str
    threads: int
    runs: int
    tps_mean: float
    tps_ci: tuple[float, float]
    tps_se: float
    latency_ms: WindowLatency  # the runs' steady windows' histograms added
    little_ratio: float | None  # X·R̄/N: near 1 in a healthy closed loop


@dataclass(frozen=True)
class Sweep:
    points: tuple[SweepPoint, ...]
    fits: dict[tuple[str, str], UslFit]  # (server, workload) -> fit
    warnings: tuple[str, ...]

    def to_document(self) -> SweepDoc:
        return SweepDoc(
            points=tuple(self._point_document(p) for p in self.points),
            usl=tuple(_usl_document(key, fit) for key, fit in self.fits.items()),
            warnings=self.warnings,
        )

    def _point_document(self, p: SweepPoint) -> SweepPointDoc:
        fit = self.fits.get((p.server, p.workload))
        latency = p.latency_ms
        return SweepPointDoc(
            server=p.server,
            workload=p.workload,
            threads=p.threads,
            runs=p.runs,
            tps=p.tps_mean,
            tps_ci_lo=finite(p.tps_ci[0]),
            tps_ci_hi=finite(p.tps_ci[1]),
            p50_ms=latency.p50,
            p95_ms=latency.p95,
            p99_ms=latency.p99,
            p99_9_ms=latency.p99_9,
            little_ratio=p.little_ratio,
            usl_tps=finite(fit.predict(p.threads)) if fit else None,
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per point: the document's points as a table."""
        return pd.DataFrame([document_json(p) for p in self.to_document().points])

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = document_json(self.to_document())
        return doc


def _usl_document(key: tuple[str, str], fit: UslFit) -> UslDoc:
    server, workload = key
    return UslDoc(
        server=server,
        workload=workload,
        alpha=finite(fit.alpha),
        beta=finite(fit.beta),
        gamma_tps=finite(fit.gamma_tps),
        alpha_se=finite(fit.alpha_se),
        beta_se=finite(fit.beta_se),
        gamma_se_tps=finite(fit.gamma_se_tps),
        peak_concurrency=finite(fit.peak_concurrency),
        peak_throughput_tps=finite(fit.peak_throughput_tps),
        r_squared=finite(fit.r_squared),
        nrmse_pct=finite(fit.nrmse_pct),
        n_points=fit.n_points,
        max_concurrency=fit.max_concurrency,
        warnings=fit.warnings,
    )


def sweep(runs: Sequence[Run | str | Path | RunAnalysis], level: float = 0.95) -> Sweep:
    """Points per (server, workload, threads) from closed-loop runs and thread steps."""
    groups: dict[tuple[str, str, int], list[tuple[RunAnalysis, PartAnalysis]]] = {}
    for run in runs:
        a = run if isinstance(run, RunAnalysis) else analyse(run)
        for part in a.steps or ((a.whole,) if a.whole else ()):
            if not part.rate_per_s and part.threads:
                key = (server_label(a.run), a.run.workload, part.threads)
                groups.setdefault(key, []).append((a, part))
    points = tuple(_point(key, members, level) for key, members in sorted(groups.items()))
    fits, warnings = {}, []
    for server, workload in sorted({(p.server, p.workload) for p in points}):
        mine = [p for p in points if (p.server, p.workload) == (server, workload)]
        if len(mine) < MIN_USL_POINTS:
            warnings.append(f"{server} {workload}: {len(mine)} concurrency levels; no USL fit")
            continue
        weights = [1 / p.tps_se**2 if p.tps_se > 0 else None for p in mine]
        usable = None if any(w is None for w in weights) else [float(w or 0) for w in weights]
        fit = fit_usl([p.threads for p in mine], [p.tps_mean for p in mine], usable)
        fits[(server, workload)] = fit
        warnings += [f"{server} {workload}: USL {w}" for w in fit.warnings]
        for p in mine:
            if p.little_ratio is not None and abs(p.little_ratio - 1) > 0.15:
                warnings.append(
                    f"{server} {workload} {p.threads} thr: Little's law off "
                    f"(throughput x mean latency = {p.little_ratio:.2f} x connections)"
                )
    return Sweep(points, fits, tuple(warnings))


@dataclass(frozen=True)
class _Pooled:
    """A point's runs pooled: the mean of their steady means with its interval, and the
    percentiles of their steady-window histograms added."""

    runs: int
    tps_mean: float
    tps_ci: tuple[float, float]
    tps_se: float
    latency_ms: WindowLatency


def _pooled(members: list[tuple[RunAnalysis, PartAnalysis]], level: float) -> _Pooled:
    means = np.array([part.steady.mean_tps for _, part in members])
    if len(members) >= 2:
        se = float(means.std(ddof=1) / math.sqrt(len(means)))
        q = t_critical(level, len(means) - 1)
    else:
        se = members[0][1].steady.se_tps
        q = z_critical(level)
    mean = float(means.mean())
    latency = window_latency(added([part.histogram for _, part in members]))
    return _Pooled(len(members), mean, (mean - q * se, mean + q * se), se, latency)


def _point(
    key: tuple[str, str, int], members: list[tuple[RunAnalysis, PartAnalysis]], level: float
) -> SweepPoint:
    server, workload, threads = key
    p = _pooled(members, level)
    mean_ms = p.latency_ms.mean
    little = p.tps_mean * mean_ms / 1000 / threads if mean_ms else None
    return SweepPoint(
        server, workload, threads, p.runs, p.tps_mean, p.tps_ci, p.tps_se, p.latency_ms, little
    )


@dataclass(frozen=True)
class RatePoint:
    """Open-loop runs of one server, workload, connection count and target rate: the
    achieved tps against the offered rate, and the response time (from the intended start)."""

    server: str
    workload: str
    threads: int
    rate_per_s: float
    runs: int
    tps_mean: float
    tps_ci: tuple[float, float]
    latency_ms: WindowLatency  # response time, the runs' steady windows added
    dropped: int | None  # arrivals the backlog could not hold, over the runs (None: unknown)


def rate_sweep(
    runs: Sequence[Run | str | Path | RunAnalysis], level: float = 0.95
) -> tuple[RatePoint, ...]:
    """Points per (server, workload, threads, rate) from open-loop runs and rate steps."""
    groups: dict[tuple[str, str, int, float], list[tuple[RunAnalysis, PartAnalysis]]] = {}
    for run in runs:
        a = run if isinstance(run, RunAnalysis) else analyse(run)
        for part in a.steps or ((a.whole,) if a.whole else ()):
            if part.rate_per_s:
                key = (server_label(a.run), a.run.workload, part.threads, part.rate_per_s)
                groups.setdefault(key, []).append((a, part))
    out = []
    for (server, workload, threads, rate), members in sorted(groups.items()):
        p = _pooled(members, level)
        dropped = [_dropped(a, part) for a, part in members]
        total = None if any(d is None for d in dropped) else sum(d or 0 for d in dropped)
        out.append(
            RatePoint(
                server, workload, threads, rate, p.runs, p.tps_mean, p.tps_ci, p.latency_ms, total
            )
        )
    return tuple(out)


def _dropped(a: RunAnalysis, part: PartAnalysis) -> int | None:
    """A whole run's dropped arrivals (run.json's open_loop); a step's are not kept apart."""
    summary = a.run.summary
    if part.step is not None or summary is None or summary.open_loop is None:
        return None
    return summary.open_loop.dropped
