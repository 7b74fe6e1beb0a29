"""`oltplab show RUN_DIR... [--json]`: the analysed summary of runs (steady state, stalls,
steady-window latency, flags); with several connection counts, the concurrency sweep and
its USL fit."""

import json

from oltplab.cli import exitcodes
from oltplab.cli.commands.analysis_args import parser


def main(args: list[str]) -> int:
    p = parser("oltplab show", "Analysed summary of one or more run directories.")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR")
    p.add_argument(
        "--stall-fraction",
        type=float,
        default=0.1,
        help="a stall is an interval below this fraction of the steady median [0.1]",
    )
    ns = p.parse_args(args)
    # Imported here: numpy/scipy load only when an analysis command runs.
    from oltplab.analysis.run_analysis import analyse
    from oltplab.analysis.sweep import sweep
    from oltplab.report.analysis_text import show_text, sweep_text

    analyses = [analyse(r, level=ns.level, stall_fraction=ns.stall_fraction) for r in ns.runs]
    threads = {part.threads for a in analyses for part in (a.steps or [a.whole]) if part}
    swept = sweep(analyses, level=ns.level) if len(threads) >= 2 else None
    if ns.json:
        doc = analyses[0].to_json() if len(analyses) == 1 else [a.to_json() for a in analyses]
        if swept is not None:
            doc = {"runs": doc if isinstance(doc, list) else [doc], "sweep": swept.to_json()}
        print(json.dumps(doc, indent=2))
    else:
        print("\n\n".join(show_text(a) for a in analyses))
        if swept is not None:
            print(f"\n{sweep_text(swept)}")
    return exitcodes.OK
