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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from oltplab import runner
from oltplab._types import Json
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
from oltplab.sysbench_compat.script import (
    ScriptInvocation,
    announce_native,
    parse_script_argv,
    printer,
    report_hooks,
    run_script,
    script_call,
    script_path,
    script_spec,
)

__all__ = ["fatal_line", "main"]


@contextlib.contextmanager
def _run_dir(out: Path | None) -> Iterator[Path]:
    if out is not None:
        yield out
        return
    with tempfile.TemporaryDirectory(prefix="oltplab-sysbench-") as tmp:
        yield Path(tmp)


def _report_stream(verbosity: int) -> TextIO:
    """stdout, or nowhere below sysbench's notice level."""
    return sys.stdout if verbosity >= VERBOSITY_NOTICE else io.StringIO()


def _run(inv: Invocation, db: str, options: dict[str, Any], args: list[str]) -> int:
    how = _RunHow(inv.workload, inv.options, options, inv.verbosity, inv.out)
    return run_with_report(how, db, args)


@dataclass(frozen=True)
class _RunHow:
    workload: str  # a built-in's name, or a script's path
    given: dict[str, Any]  # the options for the engine
    effective: dict[str, Any]  # every option's value, for the report
    verbosity: int
    out: Path | None
    script: Json | None = None  # a script's call (sysbench_compat/script.py)
    on_event: Callable[[Json], None] | None = None  # besides the report: a script's output
    replaced: frozenset[str] = frozenset()  # the script's report hooks (display.py)


def run_with_report(how: _RunHow, db: str, args: list[str]) -> int:
    """Runs the load, printing sysbench's report; returns the exit code."""
    display = RunDisplay(
        _report_stream(how.verbosity),
        None,
        how.effective,
        header=BANNER,
        summary=False,
        replaced=how.replaced,
        sql=how.script is None,
    )
    extra = how.on_event

    def on_event(event: Json) -> None:
        display.on_event(event)
        if extra is not None:
            extra(event)

    with _run_dir(how.out) as out:
        result = runner.run(
            how.workload,
            db,
            how.given,
            out=out,
            argv=["oltplab", "sysbench", *args],
            hooks=runner.Hooks(on_event=on_event),
            script=how.script,
        )
        code = exitcodes.for_stop_reason(result.stop_reason)
        if code == exitcodes.OK:
            display.finish(result)
        elif code == exitcodes.INTERRUPTED:  # sysbench prints no report when interrupted
            kept = f"; what was measured is in {how.out}" if how.out is not None else ""
            print(f"oltplab: interrupted{kept}", file=sys.stderr)
        else:
            error = result.doc.error or result.stop_reason
            # A script's error is sysbench's own line (`thread_run' function failed: ...).
            line = error if how.script is not None else f"the run failed: {error}"
            print(fatal_line(line), file=sys.stderr)
    return code


def _prepare_or_cleanup(inv: Invocation, db: str, options: dict[str, Any]) -> int:
    out = _report_stream(inv.verbosity)
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


def _script_named(args: list[str], catalog: Catalog) -> tuple[str, str] | None:
    """The test as typed and the Lua script it names, if it names one
    (sysbench_compat/script.py)."""
    test = next((a for a in args if not a.startswith("--")), None)
    tests = [a.partition("=")[2] for a in args if a.startswith("--test=")]
    if tests:
        test = tests[-1]
    path = None if test is None else script_path(test, catalog)
    return None if test is None or path is None else (test, path)


def main(args: list[str]) -> int:
    catalog = load_catalog()
    if wants_help(args):
        print(usage(catalog), end="")
        return exitcodes.OK
    if "--version" in args:
        print(BANNER)
        return exitcodes.OK
    named = _script_named(args, catalog)
    if named is not None:
        test, script = named
        sinv = parse_script_argv(args, test, script, catalog)
        announce_native(["oltplab", "sysbench"], args, script, catalog)
        if sinv.command == "run":
            return _run_script(sinv, catalog, args)
        return run_script(sinv)
    inv = parse_argv(args, catalog)
    for warning in inv.warnings if inv.verbosity >= VERBOSITY_WARNING else ():
        print(warning_line(warning), file=sys.stderr)
    return _execute(inv, catalog, args)


def _run_script(inv: ScriptInvocation, catalog: Catalog, args: list[str]) -> int:
    """A script's `run`: its events on the engine, sysbench's report (docs/lua.md)."""
    for warning in inv.warnings if inv.verbosity >= VERBOSITY_WARNING else ():
        print(warning_line(warning), file=sys.stderr)
    effective = catalog.resolve_script(inv.path, inv.options)
    call = script_call(inv)
    replaced = report_hooks(script_spec(call, db_url(inv.connection), inv.options))
    how = _RunHow(
        inv.path, inv.options, effective, inv.verbosity, inv.out, call, printer(inv), replaced
    )
    return run_with_report(how, db_url(inv.connection), args)
