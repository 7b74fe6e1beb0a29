"""The analysis documents, typed: what `oltplab show --json`, `compare --json`, `table --json`
and `lab status --json` print (docs/analysis.md). The analysis builds them from its own
objects (`to_document()`); the codec writes them. Times are seconds from the run's first
interval; a statistic that is not defined (NaN: one interval, a zero mean) is null.

Two shapes are the analysis' own as well: `WindowLatency` (a steady window's merged
histogram) and `MovedMetric` (a host or server metric that moved with a stall).
"""

from typing import Annotated, Any, Literal

from oltplab.documents.codec import JsonKey, document, encode

Interval = tuple[float | None, float | None]  # a confidence interval [lo, hi]


@document
class WindowLatency:
    """Milliseconds, from the histograms of a window's intervals added together; every value
    but `count` null when the window holds no transaction."""

    count: int
    min: float | None
    mean: float | None
    p50: float | None
    p95: float | None
    p99: float | None
    p99_9: Annotated[float | None, JsonKey("p99.9")]
    max: float | None

    def at(self, rank: float) -> float | None:
        """The percentile `rank` (50, 95, 99, 99.9); None for any other rank."""
        found = {50.0: self.p50, 95.0: self.p95, 99.0: self.p99, 99.9: self.p99_9}
        return found.get(float(rank))


@document
class MovedMetric:
    """A system.csv/server.csv column during a stall against the minute around it."""

    during: float  # its mean over the stall's intervals
    outside_median: float
    ratio: float | None  # None when outside_median is 0


# -- oltplab show --------------------------------------------------------------------------


@document
class SteadyStateDoc:
    warmup_s: float  # the warm-up cut: engine warm-up plus MSER-5's
    mser_cut_s: float
    reached: bool
    window_s: tuple[float, float]
    interval_s: float
    intervals: int
    tps_mean: float
    tps_median: float
    tps_p1: float
    tps_p5: float
    tps_p95: float
    tps_min: float
    tps_max: float
    cv_pct: float | None
    tau: float | None  # the integrated autocorrelation time, in intervals
    n_eff: float | None
    drift_pct: float | None
    # The mean's confidence interval: tps_ci95 at the default level, tps_ci at another.
    tps_ci95: Interval | None = None
    tps_ci: Interval | None = None


@document
class StallDoc:
    start_s: float
    duration_s: float
    min_tps: float
    mean_tps: float
    threshold_tps: float
    estimated_from: str  # "intervals", or "latency" (within an interval, stall_length.py)
    low_intervals_s: float  # the length of the intervals below the threshold
    # [lo, hi]: where the evidence bounds the start (docs/analysis.md); None for "intervals"
    start_range_s: tuple[float, float] | None
    coincided: dict[str, MovedMetric]


@document
class LittlesLawDoc:
    expected_concurrency: float
    ratio: float
    ok: bool


@document
class PartDoc:
    """The analysis of a measured stretch: the whole run, or one step of a plan."""

    steady_state: SteadyStateDoc | None  # null: no measured interval
    stalls: tuple[StallDoc, ...]
    latency_ms: WindowLatency | None  # null: no latency.hlog
    service_latency_ms: WindowLatency | None  # open loop only
    littles_law: LittlesLawDoc | None  # closed loop only


@document
class StepDoc(PartDoc):
    step: int
    threads: int
    rate_per_s: float


@document
class RunAnalysisDoc(PartDoc):
    """`oltplab show --json` of one run."""

    run: str  # the run directory
    workload: str
    server: str  # what it ran against: a lab's label, else driver and version
    complete: bool
    flags: tuple[str, ...]  # run.json's, and the analysis' reasons to distrust the numbers
    steps: tuple[StepDoc, ...]


# -- oltplab show: the concurrency sweep -----------------------------------------------------


@document
class SweepPointDoc:
    server: str
    workload: str
    threads: int
    runs: int
    tps: float
    tps_ci_lo: float | None
    tps_ci_hi: float | None
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    p99_9_ms: Annotated[float | None, JsonKey("p99.9_ms")]
    little_ratio: float | None  # X·R̄/N: near 1 in a healthy closed loop
    usl_tps: float | None  # the fit's throughput at this concurrency


@document
class UslDoc:
    """The Universal Scalability Law fitted to one server's and workload's points."""

    server: str
    workload: str
    alpha: float | None  # contention
    beta: float | None  # coherency
    gamma_tps: float | None  # throughput at one connection
    alpha_se: float | None
    beta_se: float | None
    gamma_se_tps: float | None
    peak_concurrency: float | None
    peak_throughput_tps: float | None
    r_squared: float | None
    nrmse_pct: float | None
    n_points: int
    max_concurrency: float
    warnings: tuple[str, ...]


@document
class SweepDoc:
    points: tuple[SweepPointDoc, ...]
    usl: tuple[UslDoc, ...]
    warnings: tuple[str, ...]


@document
class ShowSweepDoc:
    """`oltplab show --json` of runs at several connection counts."""

    runs: tuple[RunAnalysisDoc, ...]
    sweep: SweepDoc


# -- oltplab compare -------------------------------------------------------------------------


@document
class GroupDoc:
    workload: str
    threads: int
    step: int | None
    rate_per_s: float | None  # 0: closed loop; a rate both sides ran; None: rates not shared


@document
class RunCountsDoc:
    candidate: int
    baseline: int


ComparisonMethod = Literal["runs", "within-run"]  # between-run (Welch's t) or within-run SEs


@document
class MetricComparisonDoc:
    name: str  # "tps", "p95_ms", ...
    group: GroupDoc | Literal["geomean"]
    baseline: float
    candidate: float
    ratio: float  # candidate / baseline
    significant: bool
    method: ComparisonMethod
    runs: RunCountsDoc
    # The ratio's confidence interval: ci95 at the default level, ci at another.
    ci95: Interval | None = None
    ci: Interval | None = None


@document
class ComparisonDoc:
    """`oltplab compare --json`."""

    level: float
    metrics: tuple[MetricComparisonDoc, ...]
    geomean: tuple[MetricComparisonDoc, ...]
    warnings: tuple[str, ...]


# -- oltplab table ---------------------------------------------------------------------------

# One row: workload, threads, baseline (the baseline's value) and per other server its ratio
# "<server>", "<server> lo", "<server> hi" and "<server> sig": columns named by the servers.
RelativeRowDoc = dict[str, str | int | float | bool | None]


@document
class RelativeTableDoc:
    """`oltplab table --json`."""

    metric: str
    baseline: str
    servers: tuple[str, ...]
    rows: tuple[RelativeRowDoc, ...]
    warnings: tuple[str, ...]


# -- oltplab lab status / show LAB_DIR -------------------------------------------------------


@document
class LabCellEstimateDoc:
    """A metric of one config at one load, over the repeats (mean ± Student-t half-width)."""

    column: str  # "server/config"
    mean: float | None
    ci_half_width: float | None  # null with a single repeat
    values: tuple[float, ...]
    threads: float | None = None  # the load: connections (closed loop) ...
    rate: float | None = None  # ... or the target rate (open loop)


@document
class LabWorkloadDoc:
    workload: str
    load: Literal["threads", "rate"]
    columns: tuple[str, ...]
    tps: tuple[LabCellEstimateDoc, ...]
    p95_ms: tuple[LabCellEstimateDoc, ...]
    tpmC: tuple[LabCellEstimateDoc, ...] | None


@document
class LabResultsDoc:
    """`oltplab show LAB_DIR --json`."""

    lab: str
    status: str
    results: tuple[LabWorkloadDoc, ...]


def document_json(doc: Any) -> Any:
    """An analysis document (or a list of them) as JSON-ready data."""
    return encode(doc)
