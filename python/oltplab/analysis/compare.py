"""Candidate runs against baseline runs (`oltplab compare`): the ratio candidate/baseline of
throughput and of latency percentiles with a confidence interval (methodology.md §3.6).

Runs are grouped by what makes their numbers comparable: workload and connections (a step
plan's steps count as runs of their own), and the target rate where both sides ran it (a
lab's configs at each of its rates). Per group:
- several runs on each side: Welch's t on the logs of one number per run ("runs"), the
  honest method, since restart-to-restart variance dominates (§0 item 1);
- otherwise the within-run uncertainty: autocorrelation-corrected SE of the steady mean
  for throughput, sectioned histograms for percentiles ("within-run"), with a warning.
A geometric mean over the groups summarises a suite (§3.6, benchstat's geomean row).
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from oltplab.analysis import sameness
from oltplab.analysis._json import finite
from oltplab.analysis.autocorr import MeanCI
from oltplab.analysis.quantiles import t_critical, z_critical
from oltplab.analysis.ratio import RatioCI, ratio_ci_runs, ratio_ci_within
from oltplab.analysis.run_analysis import PartAnalysis, RunAnalysis, analyse
from oltplab.analysis.sections import percentile_log_se
from oltplab.documents.analysis import (
    ComparisonDoc,
    ComparisonMethod,
    GroupDoc,
    MetricComparisonDoc,
    RunCountsDoc,
    document_json,
)
from oltplab.exceptions import ConfigError
from oltplab.rundir import Run

DEFAULT_METRICS = ("tps", "p95_ms", "p99_ms")
WITHIN_RUN_WARNING = (
    "one run on a side: intervals hold within-run noise only, not the restart-to-restart "
    "variance that dominates real differences; repeat each side 3-5 times, interleaved (ABAB)"
)


@dataclass(frozen=True)
class GroupKey:
    """Runs comparable number for number. The target rate is part of it only when both sides
    ran that rate: comparing configs at each rate of a lab keeps the rates apart, while 500/s
    against 400/s may be the very thing compared (a warning says so)."""

    workload: str
    threads: int
    step: int | None  # a step plan's step; None for a run without a plan
    # 0: closed loop; an open-loop rate both sides ran; None: open-loop rates not grouped apart
    rate_per_s: float | None = 0.0

    def to_document(self) -> GroupDoc:
        return GroupDoc(
            workload=self.workload, threads=self.threads, step=self.step, rate_per_s=self.rate_per_s
        )

    def sort_key(self) -> tuple[str, int, int, float]:
        """Numbers in numeric order (4 before 32 threads)."""
        step = -1 if self.step is None else self.step
        return (
            self.workload,
            step,
            self.threads,
            -1.0 if self.rate_per_s is None else self.rate_per_s,
        )

    def __str__(self) -> str:
        step = f" step {self.step}" if self.step is not None else ""
        rate = " (open loop)" if self.rate_per_s is None else ""
        rate = f" {self.rate_per_s:g}/s" if self.rate_per_s else rate
        return f"{self.workload} {self.threads} thr{rate}{step}"


@dataclass(frozen=True)
class Sample:
    """One run (or step) as a comparison sees it."""

    analysis: RunAnalysis
    part: PartAnalysis


@dataclass(frozen=True)
class MetricComparison:
    name: str  # "tps", "p95_ms", …
    group: GroupKey | None  # None: the geometric mean over the groups
    baseline: float
    candidate: float
    ci: RatioCI
    method: ComparisonMethod
    runs: tuple[int, int]  # candidate, baseline

    @property
    def ratio(self) -> float:
        return self.ci.ratio

    @property
    def significant(self) -> bool:
        return self.ci.lo > 1.0 or self.ci.hi < 1.0

    def to_document(self, level: float = 0.95) -> MetricComparisonDoc:
        """`ci95` at the default level, else `ci` (the level is the Comparison's), as in
        `oltplab show`'s tps_ci95 / tps_ci."""
        ci = (finite(self.ci.lo), finite(self.ci.hi))
        return MetricComparisonDoc(
            name=self.name,
            group=self.group.to_document() if self.group else "geomean",
            baseline=self.baseline,
            candidate=self.candidate,
            ratio=self.ci.ratio,
            ci95=ci if level == 0.95 else None,
            ci=None if level == 0.95 else ci,
            significant=self.significant,
            method=self.method,
            runs=RunCountsDoc(candidate=self.runs[0], baseline=self.runs[1]),
        )


@dataclass(frozen=True)
class Comparison:
    metrics: tuple[MetricComparison, ...]
    geomean: tuple[MetricComparison, ...]
    warnings: tuple[str, ...]
    level: float

    def to_document(self) -> ComparisonDoc:
        """`oltplab compare --json`."""
        return ComparisonDoc(
            level=self.level,
            metrics=tuple(m.to_document(self.level) for m in self.metrics),
            geomean=tuple(m.to_document(self.level) for m in self.geomean),
            warnings=self.warnings,
        )

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = document_json(self.to_document())
        return doc

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for m in (*self.metrics, *self.geomean):
            group = document_json(m.group.to_document()) if m.group else {"workload": "geomean"}
            rows.append(
                group
                | {"name": m.name, "baseline": m.baseline, "candidate": m.candidate}
                | {"ratio": m.ratio, "ci_lo": m.ci.lo, "ci_hi": m.ci.hi}
                | {"significant": m.significant, "method": m.method}
            )
        return pd.DataFrame(rows)


def compare(
    candidates: Sequence[Run | str | Path | RunAnalysis],
    baselines: Sequence[Run | str | Path | RunAnalysis],
    *,
    metrics: Sequence[str] = DEFAULT_METRICS,
    level: float = 0.95,
) -> Comparison:
    if not candidates or not baselines:
        raise ConfigError("compare needs at least one candidate run and one baseline run (--vs)")
    names = [_check_metric(m) for m in metrics]
    cand = [_as_analysis(r) for r in candidates]
    base = [_as_analysis(r) for r in baselines]
    warnings = _sameness_warnings(cand, base)
    shared_rates = _rates(cand) & _rates(base)
    cand_groups, base_groups = _grouped(cand, shared_rates), _grouped(base, shared_rates)
    results: list[MetricComparison] = []
    for key in sorted(set(cand_groups) | set(base_groups), key=GroupKey.sort_key):
        if key not in cand_groups or key not in base_groups:
            side = "baseline" if key not in base_groups else "candidate"
            warnings.append(f"{key}: no {side} run; left out")
            continue
        rates = {s.part.rate_per_s for s in (*cand_groups[key], *base_groups[key])}
        if len(rates) > 1:
            listed = ", ".join(f"{r:g}/s" if r else "closed loop" for r in sorted(rates))
            warnings.append(f"{key}: target rates differ ({listed}): the ratio measures them")
        for name in names:
            found = _compare_metric(name, key, cand_groups[key], base_groups[key], level)
            if found is None:
                warnings.append(f"{key}: {name} not available (no latency histograms)")
            else:
                results.append(found)
    if any(m.method == "within-run" for m in results):
        warnings.append(WITHIN_RUN_WARNING)
    groups = {m.group for m in results}
    geomean = tuple(_geomean(name, results, level) for name in names) if len(groups) > 1 else ()
    unique = tuple(dict.fromkeys(warnings))
    return Comparison(tuple(results), tuple(g for g in geomean if g), unique, level)


def _check_metric(name: str) -> str:
    if name == "tps" or (name.startswith("p") and name.endswith("_ms") and _rank(name) > 0):
        return name
    raise ConfigError(
        f"unknown metric '{name}': use tps or a percentile such as p95_ms or p99.9_ms"
    )


def _rank(name: str) -> float:
    try:
        return float(name[1:].removesuffix("_ms"))
    except ValueError:
        return 0.0


def _as_analysis(run: Run | str | Path | RunAnalysis) -> RunAnalysis:
    return run if isinstance(run, RunAnalysis) else analyse(run)


def _parts(a: RunAnalysis) -> tuple[PartAnalysis, ...]:
    return a.steps or ((a.whole,) if a.whole else ())


def _rates(analyses: list[RunAnalysis]) -> set[float]:
    """The open-loop rates of a side's runs (or steps)."""
    return {p.rate_per_s for a in analyses for p in _parts(a) if p.rate_per_s > 0}


def _grouped(analyses: list[RunAnalysis], shared_rates: set[float]) -> dict[GroupKey, list[Sample]]:
    groups: dict[GroupKey, list[Sample]] = {}
    for a in analyses:
        for part in _parts(a):
            # Closed loop is never grouped with open loop; an open-loop rate only one side ran
            # joins the other side's (the rates may be what is compared: warned).
            rate = part.rate_per_s if part.rate_per_s in shared_rates | {0.0} else None
            key = GroupKey(a.run.workload, part.threads, part.step, rate)
            groups.setdefault(key, []).append(Sample(a, part))
    return groups


def _compare_metric(
    name: str, key: GroupKey, cand: list[Sample], base: list[Sample], level: float
) -> MetricComparison | None:
    c_values = [_value(name, s) for s in cand]
    b_values = [_value(name, s) for s in base]
    if any(v is None or v <= 0 for v in (*c_values, *b_values)):
        return None
    c = [float(v) for v in c_values if v is not None]
    b = [float(v) for v in b_values if v is not None]
    runs = (len(cand), len(base))
    if len(cand) >= 2 and len(base) >= 2:
        ci = ratio_ci_runs(b, c, level)
        return MetricComparison(name, key, _geo(b), _geo(c), ci, "runs", runs)
    c_ci, b_ci = _within(name, cand), _within(name, base)
    if c_ci is None or b_ci is None:
        return None
    ci = ratio_ci_within(b_ci, c_ci, level)
    return MetricComparison(name, key, b_ci.mean, c_ci.mean, ci, "within-run", runs)


def _value(name: str, sample: Sample) -> float | None:
    if name == "tps":
        return sample.part.steady.mean_tps
    latency = sample.part.latency_ms
    return latency.at(_rank(name)) if latency else None


def _within(name: str, samples: list[Sample]) -> MeanCI | None:
    """One side's value and its within-run SE: the mean over its runs, SEs combined."""
    values, ses = [], []
    for s in samples:
        value = _value(name, s)
        if value is None:
            return None
        if name == "tps":
            se = s.part.steady.se_tps
        else:
            log_se = percentile_log_se(s.analysis.entries_of(None), s.part.window, _rank(name))
            if log_se is None:
                return None
            se = log_se * value  # delta method: SE(x) = x·SE(ln x)
        values.append(value)
        ses.append(se)
    k = len(values)
    mean = sum(values) / k
    se = math.sqrt(sum(x * x for x in ses)) / k
    return MeanCI(mean, se, k, float(k), 1.0, math.nan, math.nan, 0.0)


def _geo(values: list[float]) -> float:
    return float(math.exp(np.mean(np.log(values))))


def _geomean(name: str, results: list[MetricComparison], level: float) -> MetricComparison | None:
    """Geometric mean of the groups' ratios; its CI from the groups' log-SEs (recovered from
    their intervals), combined as independent."""
    found = [m for m in results if m.name == name]
    if not found:
        return None
    logs = np.log([m.ratio for m in found])
    log_ses = [_log_se(m, level) for m in found]
    centre = float(logs.mean())
    se = math.sqrt(sum(s * s for s in log_ses)) / len(found)
    z = z_critical(level)
    ci = RatioCI(math.exp(centre), math.exp(centre - z * se), math.exp(centre + z * se), math.inf)
    method: ComparisonMethod = "runs" if all(m.method == "runs" for m in found) else "within-run"
    return MetricComparison(
        name,
        None,
        _geo([m.baseline for m in found]),
        _geo([m.candidate for m in found]),
        ci,
        method,
        (sum(m.runs[0] for m in found), sum(m.runs[1] for m in found)),
    )


def _log_se(m: MetricComparison, level: float) -> float:
    q = t_critical(level, m.ci.df) if math.isfinite(m.ci.df) else None
    q = q if q is not None else z_critical(level)
    return math.log(m.ci.hi / m.ci.lo) / (2 * q) if m.ci.lo > 0 else math.inf


def _sameness_warnings(cand: list[RunAnalysis], base: list[RunAnalysis]) -> list[str]:
    runs = [a.run for a in (*cand, *base)]
    warnings = sameness.option_warnings(runs) + sameness.client_warnings(runs)
    warnings += sameness.server_warnings("candidate", [a.run for a in cand])
    warnings += sameness.server_warnings("baseline", [a.run for a in base])
    warnings += sameness.between_sides_warnings([a.run for a in cand], [a.run for a in base])
    for a in (*cand, *base):
        distrust = [f for f in a.flags if f not in ("stalls", "imported")]
        if distrust:
            warnings.append(f"{a.path.name}: {', '.join(distrust)}")
    return warnings
