"""Statistics over run data: warm-up, autocorrelation, ratios, stalls (methodology.md §1-§3)."""

from oltplab.analysis.autocorr import MeanCI, integrated_autocorr_time, mean_ci
from oltplab.analysis.ratio import RatioCI, ratio_ci_runs, ratio_ci_within
from oltplab.analysis.stalls import Stall, coincident_metrics, find_stalls
from oltplab.analysis.steady import SteadyState, steady_state
from oltplab.analysis.warmup import Warmup, detect_warmup, drift_pct, mser_curve

__all__ = [
    "MeanCI",
    "RatioCI",
    "Stall",
    "SteadyState",
    "Warmup",
    "coincident_metrics",
    "detect_warmup",
    "drift_pct",
    "find_stalls",
    "integrated_autocorr_time",
    "mean_ci",
    "mser_curve",
    "ratio_ci_runs",
    "ratio_ci_within",
    "steady_state",
]
