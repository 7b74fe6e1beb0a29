"""One run analysed: the steady state of its throughput, its stalls and what coincided with
them, the latency of the steady window from merged histograms, and the reasons to distrust
it (`oltplab show`). A step plan's steps are analysed one by one, each with its own
warm-up, since each step starts a new transient."""

import math
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from hdrh.histogram import HdrHistogram

from oltplab.analysis._json import finite
from oltplab.analysis.latency import Window, merged, window_latency
from oltplab.analysis.stall_length import Load, Timeline, measure_stalls
from oltplab.analysis.stalls import coincident_metrics
from oltplab.analysis.steady import STALL_FRACTION, SteadyState, steady_state
from oltplab.analysis.usl import LittleCheck, littles_law
from oltplab.analysis.warmup import BATCH_SIZE, MIN_BATCHES
from oltplab.documents.analysis import (
    LittlesLawDoc,
    MovedMetric,
    PartDoc,
    RunAnalysisDoc,
    StallDoc,
    SteadyStateDoc,
    StepDoc,
    WindowLatency,
    document_json,
)
from oltplab.documents.codec import fields_of
from oltplab.documents.run import METRICS_SPAN_COLUMN, SERVER_METRICS_FILE, SYSTEM_METRICS_FILE
from oltplab.exceptions import ConfigError
from oltplab.rundir import HlogEntry, Run, load_run
from oltplab.rundir.intervals import Column

# Host and server metrics that a run directory may carry (DESIGN: system.csv, server.csv).
METRIC_FILES = (SYSTEM_METRICS_FILE, SERVER_METRICS_FILE)
SERVICE_TAG = "service"
# MSER-5 may cut this share of the window and the run still counts as well warmed (§1.4).
LONG_WARMUP_SHARE = 0.10
# An interval shorter than this share of the median interval is a runt: a last interval cut
# short by --events or Ctrl-C, or the stub of a few ms that runs of older versions end with
# (the engine now merges the drain after --time into the last interval: docs/run-directory.md).
# The per-interval statistics weigh every interval alike, so its rate (thousands of tps from
# one transaction) would move the mean, the CV, the drift and MSER's verdict.
RUNT_SHARE = 0.5
# Below this many intervals MSER-5 has too few batches to judge a warm-up.
MSER_MIN_INTERVALS = BATCH_SIZE * MIN_BATCHES


@dataclass(frozen=True)
class PartAnalysis:
    """The analysis of one measured stretch: the whole run, or one step of a plan."""

    threads: int
    rate_per_s: float
    steady: SteadyState
    latency_ms: WindowLatency | None  # the steady window's merged histogram; None: no hlog
    service_latency_ms: WindowLatency | None  # open loop: from the actual start
    coincided: tuple[dict[str, MovedMetric], ...]  # per stall: metrics that moved with it
    little: LittleCheck | None  # closed loop only
    window: Window
    step: int | None = None
    # The steady window's transaction histogram (None: no hlog, or no interval inside), kept
    # so that sweeps and reports add runs' windows without decoding the log again. Never
    # mutate it: add it into a histogram of your own.
    histogram: HdrHistogram | None = field(default=None, repr=False, compare=False)

    def to_document(self, origin_s: float) -> PartDoc:
        """The stretch as `oltplab show --json` gives it (times from `origin_s`)."""
        s = self.steady
        return PartDoc(
            steady_state=_steady_doc(s, origin_s),
            stalls=tuple(
                StallDoc(
                    start_s=stall.start_s - origin_s,
                    duration_s=stall.duration_s,
                    min_tps=stall.min_tps,
                    mean_tps=stall.mean_tps,
                    threshold_tps=s.stall_threshold_tps,
                    estimated_from=stall.method,
                    low_intervals_s=stall.duration_s
                    if stall.low_intervals_s is None
                    else stall.low_intervals_s,
                    start_range_s=None
                    if stall.start_range_s is None
                    else (stall.start_range_s[0] - origin_s, stall.start_range_s[1] - origin_s),
                    coincided=coincided,
                )
                for stall, coincided in zip(s.stalls, self.coincided, strict=True)
            ),
            latency_ms=self.latency_ms,
            service_latency_ms=self.service_latency_ms,
            littles_law=None
            if self.little is None
            else LittlesLawDoc(
                expected_concurrency=self.little.expected_concurrency,
                ratio=self.little.ratio,
                ok=self.little.ok,
            ),
        )

    @property
    def judged(self) -> bool:
        """Whether the window was long enough for MSER-5 to say anything (§1.2 step 6)."""
        return self.steady.cut_intervals + self.steady.intervals >= MSER_MIN_INTERVALS

    def flags(self) -> list[str]:
        s = self.steady
        out = []
        if not s.reached:
            out.append("no_steady_state" if self.judged else "too_short_for_mser")
        elif s.warmup_s > LONG_WARMUP_SHARE * (s.end_s - s.start_s + s.warmup_s):
            out.append("long_warmup")
        if s.drifting:
            out.append("drifting")
        if s.stalls:
            out.append("stalls")
        if self.little is not None and not self.little.ok:
            out.append("littles_law_mismatch")
        return out


@dataclass(frozen=True)
class RunAnalysis:
    """`origin_s` is the load-clock time of the start of the run's first interval: JSON
    times are seconds from there."""

    run: Run
    whole: PartAnalysis | None  # None when the run has no measured interval
    steps: tuple[PartAnalysis, ...]
    origin_s: float
    entries: tuple[HlogEntry, ...] = field(repr=False)

    @property
    def path(self) -> Path:
        return self.run.path

    def entries_of(self, tag: str | None) -> list[HlogEntry]:
        """The latency log's entries of one tag (None: transactions)."""
        return [e for e in self.entries if e.tag == tag]

    @cached_property
    def flags(self) -> list[str]:
        out = list(self.run.flags)
        if not self.run.complete:
            out.append("incomplete")
        if self.run.doc.imported_from is not None:
            out.append("imported")
        if self.whole is None:
            return [*out, "no_measured_intervals"]
        # A step plan changes the load on purpose: the whole run's warm-up and drift verdicts
        # would read the plan itself; its steps are judged one by one.
        out += (
            [f for f in self.whole.flags() if f == "stalls"] if self.steps else self.whole.flags()
        )
        for step in self.steps:
            out += [f"step{step.step}:{flag}" for flag in step.flags()]
        return out

    def to_document(self) -> RunAnalysisDoc:
        """`oltplab show --json` of this run."""
        whole = (
            self.whole.to_document(self.origin_s)
            if self.whole is not None
            else PartDoc(
                steady_state=None,
                stalls=(),
                latency_ms=None,
                service_latency_ms=None,
                littles_law=None,
            )
        )
        steps = tuple(
            StepDoc(
                step=p.step or 0,
                threads=p.threads,
                rate_per_s=p.rate_per_s,
                **fields_of(p.to_document(self.origin_s)),
            )
            for p in self.steps
        )
        return RunAnalysisDoc(
            run=str(self.path),
            workload=self.run.workload,
            server=server_label(self.run),
            complete=self.run.complete,
            flags=tuple(self.flags),
            steps=steps,
            **fields_of(whole),
        )

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = document_json(self.to_document())
        return doc

    def to_frame(self) -> pd.DataFrame:
        """One row for the whole run and one per step: steady-state throughput, latency of the
        steady window and flags, for concatenating many runs into one table."""
        rows = []
        for part in (self.whole, *self.steps) if self.whole else ():
            doc = document_json(_steady_doc(part.steady, self.origin_s))
            steady = {k: v for k, v in doc.items() if not isinstance(v, list)}
            ci_lo, ci_hi = part.steady.ci_lo_tps, part.steady.ci_hi_tps
            latency = document_json(part.latency_ms) if part.latency_ms else {}
            rows.append(
                {"run": self.path.name, "server": server_label(self.run), "step": part.step}
                | {"threads": part.threads, "rate_per_s": part.rate_per_s}
                | steady
                | {"tps_ci_lo": ci_lo, "tps_ci_hi": ci_hi, "stalls": len(part.steady.stalls)}
                | {f"{k}_ms": v for k, v in latency.items() if k != "count"}
            )
        return pd.DataFrame(rows)


def _steady_doc(s: SteadyState, origin_s: float) -> SteadyStateDoc:
    ci = (finite(s.ci_lo_tps), finite(s.ci_hi_tps))
    return SteadyStateDoc(
        warmup_s=s.start_s - origin_s,
        mser_cut_s=s.warmup_s,
        reached=s.reached,
        window_s=(s.start_s - origin_s, s.end_s - origin_s),
        interval_s=s.interval_s,
        intervals=s.intervals,
        tps_mean=s.mean_tps,
        tps_ci95=ci if s.level == 0.95 else None,
        tps_ci=None if s.level == 0.95 else ci,
        tps_median=s.median_tps,
        tps_p1=s.p1_tps,
        tps_p5=s.p5_tps,
        tps_p95=s.p95_tps,
        tps_min=s.min_tps,
        tps_max=s.max_tps,
        cv_pct=finite(s.cv_pct),
        tau=finite(s.tau),
        n_eff=finite(s.n_eff),
        drift_pct=finite(s.drift_pct),
    )


def server_label(run: Run) -> str:
    """What a run ran against, for grouping runs by server: a lab's label when it has one,
    else the driver and the server's version."""
    if run.doc.label:
        return run.doc.label
    target = run.doc.target
    driver = target.driver or "unknown"
    return f"{driver} {target.server_version}" if target.server_version else driver


@dataclass(frozen=True)
class _Settings:
    level: float
    stall_fraction: float


def measured_intervals(run: Run) -> pd.DataFrame:
    """The run's intervals outside the warm-up phase, in time order."""
    frame = run.intervals
    if Column.phase in frame.columns:
        frame = frame[frame[Column.phase].fillna("run") != "warmup"]
    return frame.sort_values(Column.t_s).reset_index(drop=True)


def full_intervals(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` without runts (intervals shorter than RUNT_SHARE x the median interval)."""
    lengths = rows[Column.interval_s].astype(float)
    return rows[lengths >= RUNT_SHARE * float(lengths.median())].reset_index(drop=True)


def analyse(
    run: Run | str | Path,
    *,
    level: float = 0.95,
    stall_fraction: float = STALL_FRACTION,
) -> RunAnalysis:
    """Analyses a run directory (a path or a loaded Run)."""
    run = run if isinstance(run, Run) else load_run(run)
    everything = run.intervals
    if everything.empty:
        return RunAnalysis(run, None, (), 0.0, ())
    origin = float(everything[Column.t_s].iloc[0] - everything[Column.interval_s].iloc[0])
    measured = measured_intervals(run)
    entries = tuple(_hlog_entries(run))
    metrics = metric_frames(run)
    settings = _Settings(level, stall_fraction)
    whole = None
    if len(measured):
        whole = _analyse_part(run, measured, entries, metrics, None, settings)
    steps = []
    if Column.step in measured.columns and measured[Column.step].notna().any():
        for step in sorted(int(x) for x in measured[Column.step].dropna().unique()):
            rows = measured[measured[Column.step] == step]
            steps.append(_analyse_part(run, rows, entries, metrics, step, settings))
    if whole is not None and steps:
        whole = replace(whole, little=None)  # no one concurrency to check Little's law against
    return RunAnalysis(run, whole, tuple(steps), origin, entries)


def _analyse_part(
    run: Run,
    rows: pd.DataFrame,
    entries: tuple[HlogEntry, ...],
    metrics: list[pd.DataFrame],
    step: int | None,
    settings: "_Settings",
) -> PartAnalysis:
    rows = full_intervals(rows)

    def summarise(stalled: npt.NDArray[np.bool_] | None = None) -> SteadyState:
        return steady_state(
            rows[Column.t_s].to_numpy(float),
            rows[Column.interval_s].to_numpy(float),
            rows[Column.tps].to_numpy(float),
            level=settings.level,
            stall_fraction=settings.stall_fraction,
            stalled=stalled,
        )

    steady = summarise()
    transactions = [e for e in entries if e.tag is None]
    threads, rate = _load_of(run, rows, step)
    timeline = _timeline(rows)
    load = Load(steady.median_tps, threads, open_loop=bool(rate))
    stalls = measure_stalls(steady.stalls, timeline, load, transactions)
    if stalls != steady.stalls:  # MSER reads the rows the measured stalls touched as stalled
        stalled = np.zeros(len(rows), dtype=bool)
        for stall in stalls:
            stalled |= (timeline.end_s > stall.start_s) & (timeline.start_s < stall.end_s)
        steady = summarise(stalled)
    steady = replace(steady, stalls=stalls)
    window = Window(steady.start_s, steady.end_s)
    # No histograms at all (a sysbench log imported without --histogram): latency unknown,
    # which is not the same as a window without transactions (count 0).
    histogram = merged(transactions, window) if transactions else None
    response = window_latency(histogram) if transactions else None
    service_entries = [e for e in entries if e.tag == SERVICE_TAG]
    service = window_latency(merged(service_entries, window)) if service_entries else None
    little = None
    mean_ms = response.mean if response else None
    if not rate and mean_ms and threads:
        little = littles_law(threads, steady.mean_tps, mean_ms)
    coincided = tuple(
        {k: v for frame in metrics for k, v in coincident_metrics(stall, frame).items()}
        for stall in steady.stalls
    )
    return PartAnalysis(
        threads, rate, steady, response, service, coincided, little, window, step, histogram
    )


def _timeline(rows: pd.DataFrame) -> Timeline:
    if Column.lat_max_ms in rows.columns:
        lat_max_ms = pd.to_numeric(rows[Column.lat_max_ms]).to_numpy(float, na_value=math.nan)
    else:
        lat_max_ms = np.full(len(rows), math.nan)
    return Timeline.of(
        rows[Column.t_s].to_numpy(float),
        rows[Column.interval_s].to_numpy(float),
        rows[Column.transactions].to_numpy(float),
        lat_max_ms,
    )


def _load_of(run: Run, rows: pd.DataFrame, step: int | None) -> tuple[int, float]:
    load = run.doc.load
    threads = load.threads or 0
    rate = float(load.rate_per_s or 0.0)
    if step is not None:
        for segment in run.doc.segments or ():
            if segment.step == step:
                return segment.threads or threads, float(segment.rate_per_s)
    if Column.threads in rows.columns and rows[Column.threads].notna().any() and not threads:
        threads = int(rows[Column.threads].max())
    return threads, rate


def _hlog_entries(run: Run) -> list[HlogEntry]:
    try:
        return run.hlog().entries
    except FileNotFoundError:
        return []  # imported runs without --histogram have no histograms
    except (OSError, ValueError) as e:
        raise ConfigError(f"cannot read the latency log of {run.path}: {e}") from e


def metric_frames(run: Run) -> list[pd.DataFrame]:
    """The run's host and server metrics (system.csv, server.csv) that have a t_s column."""
    frames = []
    for name in METRIC_FILES:
        path = run.path / name
        if path.exists():
            frame = pd.read_csv(path)
            if Column.t_s in frame.columns:  # the intervals' grid
                # A row's span is when it was sampled, not something the host or server did.
                frames.append(frame.drop(columns=METRICS_SPAN_COLUMN, errors="ignore"))
    return frames
