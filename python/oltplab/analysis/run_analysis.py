"""One run analysed: the steady state of its throughput, its stalls and what coincided with
them, the latency of the steady window from merged histograms, and the reasons to distrust
it (`oltplab show`). A step plan's steps are analysed one by one, each with its own
warm-up, since each step starts a new transient."""

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from hdrh.histogram import HdrHistogram

from oltplab.analysis._json import plain
from oltplab.analysis.latency import DEFAULT_RANKS, Window, latency_ms, merged
from oltplab.analysis.stall_length import Load, Timeline, measure_stalls
from oltplab.analysis.stalls import coincident_metrics
from oltplab.analysis.steady import STALL_FRACTION, SteadyState, steady_state
from oltplab.analysis.usl import LittleCheck, littles_law
from oltplab.analysis.warmup import BATCH_SIZE, MIN_BATCHES
from oltplab.exceptions import ConfigError
from oltplab.rundir import HlogEntry, Run, load_run

# Host and server metrics that a run directory may carry (DESIGN: system.csv, server.csv).
METRIC_FILES = ("system.csv", "server.csv")
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
    latency_ms: dict[str, Any] | None  # the steady window's merged histogram; None: no hlog
    service_latency_ms: dict[str, Any] | None  # open loop: from the actual start
    coincided: tuple[dict[str, Any], ...]  # per stall: metrics that moved with it
    little: LittleCheck | None  # closed loop only
    window: Window
    step: int | None = None
    # The steady window's transaction histogram (None: no hlog, or no interval inside), kept
    # so that sweeps and reports add runs' windows without decoding the log again. Never
    # mutate it: add it into a histogram of your own.
    histogram: HdrHistogram | None = field(default=None, repr=False, compare=False)

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
        out = list(self.run.manifest.get("flags") or [])
        if not self.run.complete:
            out.append("incomplete")
        if self.run.manifest.get("imported_from"):
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

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "run": str(self.path),
            "workload": (self.run.manifest.get("workload") or {}).get("name"),
            "server": server_label(self.run),
            "complete": self.run.complete,
            "steady_state": None,
            "stalls": [],
            "latency_ms": None,
            "flags": self.flags,
        }
        if self.whole is not None:
            doc |= _part_json(self.whole, self.origin_s)
            doc["steps"] = [
                {"step": p.step, "threads": p.threads, "rate_per_s": p.rate_per_s}
                | _part_json(p, self.origin_s)
                for p in self.steps
            ]
        result: dict[str, Any] = plain(doc)
        return result

    def to_frame(self) -> pd.DataFrame:
        """One row for the whole run and one per step: steady-state throughput, latency of the
        steady window and flags, for concatenating many runs into one table."""
        rows = []
        for part in (self.whole, *self.steps) if self.whole else ():
            doc = _part_json(part, self.origin_s)
            steady = {k: v for k, v in doc["steady_state"].items() if not isinstance(v, list)}
            ci_lo, ci_hi = part.steady.ci_lo_tps, part.steady.ci_hi_tps
            rows.append(
                {"run": self.path.name, "server": server_label(self.run), "step": part.step}
                | {"threads": part.threads, "rate_per_s": part.rate_per_s}
                | steady
                | {"tps_ci_lo": ci_lo, "tps_ci_hi": ci_hi, "stalls": len(part.steady.stalls)}
                | {f"{k}_ms": v for k, v in (part.latency_ms or {}).items() if k != "count"}
            )
        return pd.DataFrame(rows)


def _part_json(part: PartAnalysis, origin_s: float) -> dict[str, Any]:
    s = part.steady
    return {
        "steady_state": {
            "warmup_s": s.start_s - origin_s,
            "mser_cut_s": s.warmup_s,
            "reached": s.reached,
            "window_s": [s.start_s - origin_s, s.end_s - origin_s],
            "interval_s": s.interval_s,
            "intervals": s.intervals,
            "tps_mean": s.mean_tps,
            "tps_ci95" if s.level == 0.95 else "tps_ci": [s.ci_lo_tps, s.ci_hi_tps],
            "tps_median": s.median_tps,
            "tps_p1": s.p1_tps,
            "tps_p5": s.p5_tps,
            "tps_p95": s.p95_tps,
            "tps_min": s.min_tps,
            "tps_max": s.max_tps,
            "cv_pct": s.cv_pct,
            "tau": s.tau,
            "n_eff": s.n_eff,
            "drift_pct": s.drift_pct,
        },
        "stalls": [
            {
                "start_s": stall.start_s - origin_s,
                "duration_s": stall.duration_s,
                "min_tps": stall.min_tps,
                "mean_tps": stall.mean_tps,
                "threshold_tps": s.stall_threshold_tps,
                "estimated_from": stall.method,
                "low_intervals_s": stall.duration_s
                if stall.low_intervals_s is None
                else stall.low_intervals_s,
                "start_range_s": None
                if stall.start_range_s is None
                else [t - origin_s for t in stall.start_range_s],
                "coincided": coincided,
            }
            for stall, coincided in zip(s.stalls, part.coincided, strict=True)
        ],
        "latency_ms": part.latency_ms,
        "service_latency_ms": part.service_latency_ms,
        "littles_law": None
        if part.little is None
        else {
            "expected_concurrency": part.little.expected_concurrency,
            "ratio": part.little.ratio,
            "ok": part.little.ok,
        },
    }


def server_label(run: Run) -> str:
    """What a run ran against, for grouping runs by server: a lab's label when it has one,
    else the driver and the server's version."""
    target = run.manifest.get("target") or {}
    label = run.manifest.get("label") or target.get("label")
    if label:
        return str(label)
    version = target.get("server_version")
    driver = target.get("driver") or "unknown"
    return f"{driver} {version}" if version else str(driver)


@dataclass(frozen=True)
class _Settings:
    level: float
    stall_fraction: float
    ranks: tuple[float, ...]


def measured_intervals(run: Run) -> pd.DataFrame:
    """The run's intervals outside the warm-up phase, in time order."""
    frame = run.intervals
    if "phase" in frame.columns:
        frame = frame[frame["phase"].fillna("run") != "warmup"]
    return frame.sort_values("t_s").reset_index(drop=True)


def full_intervals(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` without runts (intervals shorter than RUNT_SHARE x the median interval)."""
    lengths = rows["interval_s"].astype(float)
    return rows[lengths >= RUNT_SHARE * float(lengths.median())].reset_index(drop=True)


def analyse(
    run: Run | str | Path,
    *,
    level: float = 0.95,
    stall_fraction: float = STALL_FRACTION,
    ranks: tuple[float, ...] = DEFAULT_RANKS,
) -> RunAnalysis:
    """Analyses a run directory (a path or a loaded Run)."""
    run = run if isinstance(run, Run) else load_run(run)
    everything = run.intervals
    if everything.empty:
        return RunAnalysis(run, None, (), 0.0, ())
    origin = float(everything["t_s"].iloc[0] - everything["interval_s"].iloc[0])
    measured = measured_intervals(run)
    entries = tuple(_hlog_entries(run))
    metrics = metric_frames(run)
    settings = _Settings(level, stall_fraction, ranks)
    whole = None
    if len(measured):
        whole = _analyse_part(run, measured, entries, metrics, None, settings)
    steps = []
    if "step" in measured.columns and measured["step"].notna().any():
        for step in sorted(int(x) for x in measured["step"].dropna().unique()):
            rows = measured[measured["step"] == step]
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
            rows["t_s"].to_numpy(float),
            rows["interval_s"].to_numpy(float),
            rows["tps"].to_numpy(float),
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
    ranks = settings.ranks
    window = Window(steady.start_s, steady.end_s)
    # No histograms at all (a sysbench log imported without --histogram): latency unknown,
    # which is not the same as a window without transactions (count 0).
    histogram = merged(transactions, window) if transactions else None
    response = latency_ms(histogram, ranks) if transactions else None
    service_entries = [e for e in entries if e.tag == SERVICE_TAG]
    service = latency_ms(merged(service_entries, window), ranks) if service_entries else None
    little = None
    mean_ms = response.get("mean") if response else None
    if not rate and mean_ms and threads:
        little = littles_law(threads, steady.mean_tps, float(mean_ms))
    coincided = tuple(
        {k: v for frame in metrics for k, v in coincident_metrics(stall, frame).items()}
        for stall in steady.stalls
    )
    return PartAnalysis(
        threads, rate, steady, response, service, coincided, little, window, step, histogram
    )


def _timeline(rows: pd.DataFrame) -> Timeline:
    lat_max_ms = rows["lat_max_ms"] if "lat_max_ms" in rows.columns else float("nan")
    return Timeline.of(
        rows["t_s"].to_numpy(float),
        rows["interval_s"].to_numpy(float),
        rows["transactions"].to_numpy(float),
        pd.to_numeric(lat_max_ms).to_numpy(float, na_value=float("nan"))
        if isinstance(lat_max_ms, pd.Series)
        else [lat_max_ms] * len(rows),
    )


def _load_of(run: Run, rows: pd.DataFrame, step: int | None) -> tuple[int, float]:
    load = run.manifest.get("load") or {}
    threads = int(load.get("threads") or 0)
    rate = float(load.get("rate_per_s") or 0.0)
    if step is not None:
        for segment in run.manifest.get("segments") or []:
            if segment.get("step") == step:
                return int(segment.get("threads") or threads), float(segment.get("rate_per_s") or 0)
    if "threads" in rows.columns and rows["threads"].notna().any() and not threads:
        threads = int(rows["threads"].max())
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
            if "t_s" in frame.columns:
                frames.append(frame)
    return frames
