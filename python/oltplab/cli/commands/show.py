"""`oltplab show RUN_DIR... [--json]`: the analysed summary of runs (steady state, stalls,
steady-window latency, flags); with several connection counts, the concurrency sweep and
its USL fit."""

import json

from oltplab.cli import exitcodes
from oltplab.cli.commands.analysis_args import parser


def _show_lab(lab_dir: str, *, as_json: bool) -> int:
    """A lab directory: its results tables (per workload, configs x concurrency)."""
    from pathlib import Path

    from oltplab.documents.analysis import LabResultsDoc, document_json
    from oltplab.documents.lab import read_lab_document
    from oltplab.lab.summary import lab_results, lab_summary_text

    doc = read_lab_document(Path(lab_dir))
    if as_json:
        results = tuple(r.to_document() for r in lab_results(Path(lab_dir), doc))
        shown = LabResultsDoc(lab=doc.lab.name, status=doc.status, results=results)
        print(json.dumps(document_json(shown), indent=2))
    else:
        print(lab_summary_text(Path(lab_dir), doc), end="")
    return exitcodes.OK


def main(args: list[str]) -> int:
    p = parser("oltplab show", "Analysed summary of one or more run directories.")
    p.add_argument(
        "runs", nargs="+", metavar="RUN_DIR", help="run directories, or one lab directory"
    )
    p.add_argument(
        "--stall-fraction",
        type=float,
        default=0.1,
        help="a stall is an interval below this fraction of the steady median [0.1]",
    )
    ns = p.parse_args(args)
    from oltplab.documents.lab import is_lab_dir

    if len(ns.runs) == 1 and is_lab_dir(ns.runs[0]):
        return _show_lab(ns.runs[0], as_json=ns.json)
    # Imported here: numpy/scipy load only when an analysis command runs.
    from oltplab.analysis.run_analysis import analyse
    from oltplab.analysis.sweep import sweep
    from oltplab.documents.analysis import ShowSweepDoc, document_json
    from oltplab.report.analysis_text import show_text, sweep_text

    analyses = [analyse(r, level=ns.level, stall_fraction=ns.stall_fraction) for r in ns.runs]
    threads = {part.threads for a in analyses for part in (a.steps or [a.whole]) if part}
    swept = sweep(analyses, level=ns.level) if len(threads) >= 2 else None
    if ns.json:
        docs = tuple(a.to_document() for a in analyses)
        # One run: its document; several: a list; several connection counts: with the sweep.
        shown: object = docs[0] if len(docs) == 1 else list(docs)
        if swept is not None:
            shown = ShowSweepDoc(runs=docs, sweep=swept.to_document())
        print(json.dumps(document_json(shown), indent=2))
    else:
        print("\n\n".join(show_text(a) for a in analyses))
        if swept is not None:
            print(f"\n{sweep_text(swept)}")
    return exitcodes.OK
