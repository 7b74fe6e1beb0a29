"""`oltplab lab run LAB.toml [--out DIR] [--dry-run]`, `oltplab lab status DIR [--json]`."""

import json
import sys
from pathlib import Path

from oltplab.cli import exitcodes
from oltplab.cli.commands.analysis_args import AnalysisParser
from oltplab.exceptions import ConfigError

_USAGE = """\
usage: oltplab lab run LAB.toml [--out DIR] [--scale NAME] [--dry-run] [--quiet]
       oltplab lab status DIR [--json]

A lab runs a whole study from one file: server configs x workloads x concurrency x repeats,
in interleaved order, each cell from restored data, with system and server metrics.
`lab run` on an existing DIR resumes it. See docs/labs.md.
"""


def _run(args: list[str]) -> int:
    p = AnalysisParser(prog="oltplab lab run", description="Run (or resume) a lab.")
    p.add_argument("lab_file", type=Path, metavar="LAB.toml")
    p.add_argument("--out", type=Path, metavar="DIR", help="lab directory [./lab-<name>]")
    p.add_argument("--dry-run", action="store_true", help="check the file, print the plan")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--scale", metavar="NAME", help="apply the lab file's [scales.NAME]")
    ns = p.parse_args(args)
    from oltplab.lab.execute import run_lab
    from oltplab.lab.labfile import read_lab_file
    from oltplab.lab.plan import plan_cells
    from oltplab.lab.servers import check_lab_dir_reachable

    spec, text = read_lab_file(ns.lab_file, scale=ns.scale)
    out = ns.out or Path(f"lab-{spec.name}")
    if ns.dry_run:
        check_lab_dir_reachable(spec, out)
        cells = plan_cells(spec)
        measured_s = len(cells) * (spec.time_s + spec.warmup_time_s)
        print(
            f"lab {spec.name}: {len(cells)} cells, {measured_s / 60:.1f} min measured, into {out}"
        )
        if spec.client_ray is not None:
            clients = spec.client_clients or "one per node"
            print(f"  each cell distributed on Ray ({spec.client_ray}): clients = {clients}")
        for n, cell in enumerate(cells, start=1):
            print(f"  {n:4d}  {cell.id}")
        return exitcodes.OK
    outcome = run_lab(spec, ns.lab_file, text, out, quiet=ns.quiet)
    print((out / "summary.txt").read_text(encoding="utf-8"), end="")
    _write_report(out)
    if outcome.interrupted:
        print(
            f"oltplab: interrupted; `oltplab lab run {ns.lab_file} --out {out}` resumes",
            file=sys.stderr,
        )
        return exitcodes.INTERRUPTED
    if outcome.failed:
        print(
            exitcodes.error_line(f"{len(outcome.failed)} cell(s) failed; see {out}/lab.json"),
            file=sys.stderr,
        )
        return exitcodes.FAILED
    return exitcodes.OK


def _write_report(out: Path) -> None:
    """DIR/report.html after every lab run and resume; a lab without the report extra (or
    without a done cell yet) says why there is none instead of failing."""
    from oltplab.exceptions import OltpLabError
    from oltplab.extras import missing_module_line, require_plotting

    try:
        require_plotting()
        from oltplab.report.html import write_lab_report

        print(f"report: {write_lab_report(out)}")
    except OltpLabError as e:
        print(f"oltplab: no report.html: {e}", file=sys.stderr)
    except ModuleNotFoundError as e:  # one of the report's own dependencies
        line = missing_module_line(e)
        if line is None:
            raise
        print(f"oltplab: no report.html: {line}", file=sys.stderr)


def _status(args: list[str]) -> int:
    p = AnalysisParser(prog="oltplab lab status", description="State and results of a lab.")
    p.add_argument("dir", type=Path, metavar="DIR")
    p.add_argument("--json", action="store_true")
    ns = p.parse_args(args)
    from oltplab.documents.analysis import document_json
    from oltplab.documents.lab import read_lab_document
    from oltplab.lab.summary import lab_results, lab_summary_text

    doc = read_lab_document(ns.dir)
    if ns.json:
        results = [r.to_document() for r in lab_results(ns.dir, doc)]
        print(json.dumps(doc.to_json() | {"results": document_json(results)}, indent=2))
    else:
        print(lab_summary_text(ns.dir, doc), end="")
        for cell in doc.cells:
            print(f"  {cell.status:11s}  {cell.id}")
    return exitcodes.OK


def main(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help"):
        (sys.stdout if args else sys.stderr).write(_USAGE)
        return exitcodes.OK if args else exitcodes.BAD_INPUT
    verbs = {"run": _run, "status": _status}
    verb = verbs.get(args[0])
    if verb is None:
        raise ConfigError(f"unknown lab command '{args[0]}'; choose one of: run, status")
    return verb(args[1:])
