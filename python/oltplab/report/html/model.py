"""The data a report draws, taken from the analysis API (oltplab.analysis): each run's
analysis, the runs grouped into comparable sets, the sweep with its USL fits, the relative
table and the comparisons. Nothing here computes a statistic of its own."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from oltplab.analysis import sameness
from oltplab.analysis.compare import Comparison, compare
from oltplab.analysis.relative import RelativeTable, relative_table
from oltplab.analysis.run_analysis import PartAnalysis, RunAnalysis, analyse, server_label
from oltplab.analysis.sweep import RatePoint, Sweep, SweepPoint, rate_sweep, sweep
from oltplab.documents.lab import LabDocument
from oltplab.exceptions import ConfigError
from oltplab.report.html.inputs import Inputs
from oltplab.report.html.palette import colours
from oltplab.rundir import load_run

COMPARED_METRICS = ("tps", "p95_ms", "p99_ms")


@dataclass(frozen=True)
class RunView:
    """One analysed run as the report shows it. `config` is the analysis's server label (a
    lab's label, else driver and version): the key of colours, sweeps and relative tables."""

    analysis: RunAnalysis
    name: str  # unique among the report's runs

    @property
    def config(self) -> str:
        return server_label(self.analysis.run)

    @property
    def workload(self) -> str:
        return self.analysis.run.workload

    @property
    def whole(self) -> PartAnalysis:
        """The whole run's analysis (a report leaves out runs without a measured interval)."""
        assert self.analysis.whole is not None
        return self.analysis.whole

    @property
    def warmup_s(self) -> float:
        """The warm-up cut, from the run's first interval (engine warm-up plus MSER-5's)."""
        return self.whole.steady.start_s - self.analysis.origin_s

    @property
    def threads(self) -> int:
        return self.whole.threads

    @property
    def rate_per_s(self) -> float:
        return self.whole.rate_per_s


@dataclass(frozen=True)
class Group:
    """Runs comparable number for number: one workload, connection count and target rate."""

    workload: str
    threads: int
    rate_per_s: float
    runs: tuple[RunView, ...]

    @property
    def title(self) -> str:
        load = f"{self.threads} threads" + (
            f", rate {self.rate_per_s:g}/s" if self.rate_per_s else ""
        )
        return f"{self.workload}, {load}"

    @property
    def slug(self) -> str:
        rate = f"-r{self.rate_per_s:g}" if self.rate_per_s else ""
        return f"{self.workload}-t{self.threads}{rate}"


@dataclass
class ReportData:
    runs: tuple[RunView, ...]
    configs: tuple[str, ...]  # in order of first appearance: the baseline first
    colours: dict[str, str]
    level: float
    labs: tuple[tuple[Path, LabDocument], ...] = ()  # lab directories and their lab.json
    notes: list[str] = field(default_factory=list)  # what the report left out, and why

    @cached_property
    def groups(self) -> tuple[Group, ...]:
        by_key: dict[tuple[str, int, float], list[RunView]] = {}
        for run in self.runs:
            by_key.setdefault((run.workload, run.threads, run.rate_per_s), []).append(run)
        return tuple(Group(w, t, r, tuple(v)) for (w, t, r), v in sorted(by_key.items()))

    @cached_property
    def workloads(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.workload for r in self.runs))

    def runs_of(self, config: str) -> list[RunView]:
        return [r for r in self.runs if r.config == config]

    @cached_property
    def sweeps(self) -> dict[str, Sweep]:
        """Per workload whose closed-loop runs span several connection counts. A workload
        whose runs differ in data size is left out with a note: one curve would mix them."""
        out = {}
        for workload in self.workloads:
            mine = [r for r in self.runs if r.workload == workload and not r.rate_per_s]
            if len({r.threads for r in mine}) < 2:
                continue
            mixed = [
                w
                for w in sameness.option_warnings([r.analysis.run for r in mine])
                if w.startswith("data size")
            ]
            if mixed:
                self.notes.append(
                    f"{workload}: no scaling chart, the runs mix data sizes ({mixed[0]})"
                )
                continue
            out[workload] = sweep([r.analysis for r in mine], level=self.level)
        return out

    @cached_property
    def rate_sweeps(self) -> dict[str, tuple[RatePoint, ...]]:
        """Per workload run in open loop at several rates."""
        out = {}
        for workload in self.workloads:
            mine = [r for r in self.runs if r.workload == workload and r.rate_per_s]
            if len({r.rate_per_s for r in mine}) >= 2:
                out[workload] = rate_sweep([r.analysis for r in mine], level=self.level)
        return out

    def closed_points(self, workload: str) -> tuple[SweepPoint, ...]:
        """A workload's closed-loop points, one connection count or more (no fit needed)."""
        mine = [r.analysis for r in self.runs if r.workload == workload and not r.rate_per_s]
        return sweep(mine, level=self.level).points if mine else ()

    @cached_property
    def relative(self) -> RelativeTable | None:
        if len(self.configs) < 2:
            return None
        return relative_table(
            [r.analysis for r in self.runs], baseline=self.configs[0], level=self.level
        )

    @cached_property
    def comparisons(self) -> dict[str, Comparison]:
        """Every other config against the baseline (the first config)."""
        if len(self.configs) < 2:
            return {}
        base = [r.analysis for r in self.runs_of(self.configs[0])]
        return {
            config: compare(
                [r.analysis for r in self.runs_of(config)],
                base,
                metrics=COMPARED_METRICS,
                level=self.level,
            )
            for config in self.configs[1:]
        }


def load(inputs: Inputs, level: float = 0.95) -> ReportData:
    """Analyses every run; runs without a measured interval are left out with a note, and a
    report with none left is bad input."""
    views: list[RunView] = []
    notes: list[str] = []
    taken: set[str] = set()
    for path in inputs.run_dirs:
        analysis = analyse(load_run(path), level=level)
        name = _unique(path, taken)
        if analysis.whole is None:
            notes.append(f"{name}: no measured intervals; left out of every chart and table")
            continue
        views.append(RunView(analysis, name))
    if not views:
        listed = ", ".join(str(p) for p in inputs.run_dirs)
        raise ConfigError(
            f"nothing to report: no run has measured intervals ({listed}); "
            "report runs that ran at least one interval"
        )
    configs = tuple(dict.fromkeys(v.config for v in views))
    return ReportData(tuple(views), configs, colours(configs), level, inputs.labs, notes)


def _unique(path: Path, taken: set[str]) -> str:
    """The directory's name, prefixed by its parent's when two runs share a name."""
    name = path.name
    if name in taken:
        name = f"{path.parent.name}/{path.name}"
    taken.add(name)
    return name


def ordered(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))
