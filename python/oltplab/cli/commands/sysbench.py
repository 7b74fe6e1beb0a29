"""`oltplab sysbench [options] TESTNAME prepare|run|cleanup|help`: the drop-in mode.

sysbench 1.0.20's command line (sysbench_compat/argv.py) and exactly what sysbench prints
on stdout: no status line, no oltplab summary. Warnings and errors go to stderr as
sysbench's `WARNING:`/`FATAL:` lines (cli/main.py formats the errors raised here).
Without --out the run directory is a temporary one, removed at the end. --verbosity below 3
prints no report (sysbench's notices), below 2 no warnings either; errors always.
"""

import contextlib
import io
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from oltplab import runner
from oltplab.catalog import Catalog, load_catalog
from oltplab.cli import exitcodes
from oltplab.cli.argv import wants_help
from oltplab.cli.display import PrepareDisplay, RunDisplay
from oltplab.driver_options import ignored_option_warnings
from oltplab.sysbench_compat import Invocation, db_url, parse_argv, tpcc
from oltplab.sysbench_compat.argv import VERBOSITY_NOTICE, VERBOSITY_WARNING
from oltplab.sysbench_compat.output import (
    BANNER,
    command_header,
    fatal_line,
    usage,
    warning_line,
    workload_help,
)

__all__ = ["fatal_line", "main"]


@contextlib.contextmanager
def _run_dir(out: Path | None) -> Iterator[Path]:
    if out is not None:
        yield out
        return
    with tempfile.TemporaryDirectory(prefix="oltplab-sysbench-") as tmp:
        yield Path(tmp)


def _report_stream(inv: Invocation) -> TextIO:
    """stdout, or nowhere below sysbench's notice level."""
    return sys.stdout if inv.verbosity >= VERBOSITY_NOTICE else io.StringIO()


def _run(inv: Invocation, db: str, options: dict[str, Any], args: list[str]) -> int:
    display = RunDisplay(_report_stream(inv), None, options, header=BANNER, summary=False)
    with _run_dir(inv.out) as out:
        result = runner.run(
            inv.workload,
            db,
            inv.options,
            out=out,
            argv=["oltplab", "sysbench", *args],
            hooks=runner.Hooks(on_event=display.on_event),
        )
        code = exitcodes.for_stop_reason(result.stop_reason)
        if code == exitcodes.OK:
            display.finish(result)
        elif code == exitcodes.INTERRUPTED:  # sysbench prints no report when interrupted
            kept = f"; what was measured is in {inv.out}" if inv.out is not None else ""
            print(f"oltplab: interrupted{kept}", file=sys.stderr)
        else:
            error = result.doc.error or result.stop_reason
            print(fatal_line(f"the run failed: {error}"), file=sys.stderr)
    return code


def _prepare_or_cleanup(inv: Invocation, db: str, options: dict[str, Any]) -> int:
    out = _report_stream(inv)
    print(
        command_header(inv.command, int(options.get("threads") or 1)), end="", file=out, flush=True
    )
    display = PrepareDisplay(out, None)  # sysbench's messages, no progress bar
    work = runner.prepare if inv.command == "prepare" else runner.cleanup
    work(inv.workload, db, inv.options, on_event=display.on_event)
    return exitcodes.OK


def _check(inv: Invocation, db: str, options: dict[str, Any]) -> int:
    """sysbench-tpcc's `check`; unlike it, a failed condition fails the command (exit 1)."""
    print(command_header(inv.command, int(options.get("threads") or 1)), end="", flush=True)
    report = runner.check(inv.workload, db, inv.options)
    print(tpcc.check_lines(report), end="")
    return exitcodes.OK if report["passed"] else exitcodes.FAILED


def _execute(inv: Invocation, catalog: Catalog, args: list[str]) -> int:
    if inv.command == "help":
        print(workload_help(inv.test, inv.workload, catalog), end="")
        return exitcodes.OK
    db = db_url(inv.connection)
    if inv.verbosity >= VERBOSITY_WARNING:
        for warning in ignored_option_warnings(db, inv.options):
            print(warning_line(warning), file=sys.stderr)
    options = catalog.resolve(inv.workload, inv.options)
    if inv.command == "check":
        return _check(inv, db, options)
    if inv.command == "run":
        return _run(inv, db, options, args)
    return _prepare_or_cleanup(inv, db, options)


def main(args: list[str]) -> int:
    catalog = load_catalog()
    if wants_help(args):
        print(usage(catalog), end="")
        return exitcodes.OK
    if "--version" in args:
        print(BANNER)
        return exitcodes.OK
    inv = parse_argv(args, catalog)
    for warning in inv.warnings if inv.verbosity >= VERBOSITY_WARNING else ():
        print(warning_line(warning), file=sys.stderr)
    return _execute(inv, catalog, args)
