"""`oltplab table RUN_DIR... [--baseline SERVER] [--metric tps]`: a relative table, one
column per server, the baseline absolute and the others as ratios with intervals."""

import json

from oltplab.cli import exitcodes
from oltplab.cli.commands.analysis_args import parser


def main(args: list[str]) -> int:
    p = parser("oltplab table", "Relative table of runs grouped by server (rQPS style).")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run or lab directories, selectors")
    p.add_argument(
        "--baseline", help="the baseline's server label, or a selector (config=NAME) [first run's]"
    )
    p.add_argument("--metric", default="tps", help="tps or a percentile such as p95_ms [tps]")
    ns = p.parse_args(args)
    # Imported here: numpy/scipy load only when an analysis command runs.
    from oltplab.analysis.relative import relative_table
    from oltplab.lab.select import expand, label_of
    from oltplab.report.analysis_text import table_text

    baseline = None if ns.baseline is None else label_of(ns.baseline, ns.runs)
    runs = expand(ns.runs)
    table = relative_table(runs, baseline=baseline, metric=ns.metric, level=ns.level)
    if ns.json:
        print(json.dumps(table.to_json(), indent=2))
    else:
        print(table_text(table))
    return exitcodes.OK
