"""`oltplab compare CANDIDATE... --vs BASELINE... [--metrics tps,p95_ms] [--json]`."""

import json

from oltplab.cli import exitcodes
from oltplab.cli.commands.analysis_args import parser


def main(args: list[str]) -> int:
    p = parser(
        "oltplab compare",
        "Ratios candidate/baseline of throughput and latency percentiles, with intervals: "
        "across runs (Welch on logs) when each side has several, within-run otherwise.",
    )
    p.add_argument(
        "candidates", nargs="+", metavar="CANDIDATE_RUN", help="run or lab directories, selectors"
    )
    p.add_argument(
        "--vs",
        nargs="+",
        required=True,
        metavar="BASELINE_RUN",
        dest="baselines",
        help="run or lab directories; with a lab candidate, selectors such as config=NAME",
    )
    p.add_argument(
        "--metrics",
        default="tps,p95_ms,p99_ms",
        help="comma-separated: tps, p50_ms, p95_ms, p99_ms, p99.9_ms … [tps,p95_ms,p99_ms]",
    )
    ns = p.parse_args(args)
    # Imported here: numpy/scipy load only when an analysis command runs.
    from oltplab.analysis.compare import compare
    from oltplab.lab.select import compare_sides
    from oltplab.report.analysis_text import compare_text

    metrics = [m.strip() for m in ns.metrics.split(",") if m.strip()]
    candidates, baselines = compare_sides(ns.candidates, ns.baselines)
    result = compare(candidates, baselines, metrics=metrics, level=ns.level)
    print(json.dumps(result.to_json(), indent=2) if ns.json else compare_text(result))
    return exitcodes.OK
