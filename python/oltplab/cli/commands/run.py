"""`oltplab run [WORKLOAD] [--db URL] [--out DIR] [options]`."""

import dataclasses
import sys

from oltplab import runner
from oltplab._types import Json
from oltplab.catalog import load_catalog
from oltplab.cli import exitcodes
from oltplab.cli.argv import wants_help
from oltplab.cli.commands import script_verbs
from oltplab.cli.display import PrepareDisplay, RunDisplay
from oltplab.cli.parser import is_script, parse_script_verb, parse_verb
from oltplab.cli.progress import StatusLine
from oltplab.defaultdb import DefaultDb
from oltplab.metrics import parse_metrics
from oltplab.runners import runner_for
from oltplab.sysbench_compat.argv import VERBOSITY_NOTICE
from oltplab.sysbench_compat.script import (
    announce_native,
    report_hooks,
    script_printer,
    script_spec,
)


def _preparing(default: DefaultDb) -> str:
    shape = ", ".join(f"{k}={v}" for k, v in default.data_options.items())
    return f"oltplab: preparing {default.path} ({shape})"


def _run_script(args: list[str]) -> int:
    """`oltplab run PATH.lua --db URL [options]`: a sysbench script's events (docs/lua.md)."""
    catalog = load_catalog()
    parsed = parse_script_verb("run", args, catalog)
    announce_native(["oltplab", "run"], args, parsed.script, catalog)
    call = {"path": parsed.script, "command": "run", "argv": ["oltplab", "run", *args]}
    replaced = report_hooks(script_spec(call, parsed.db, parsed.options))
    status = StatusLine(sys.stderr)
    effective = catalog.resolve_script(parsed.script, parsed.options)
    display = RunDisplay(sys.stdout, status, effective, replaced=replaced, sql=False)
    show = script_printer(VERBOSITY_NOTICE)

    def on_event(event: Json) -> None:
        display.on_event(event)
        show(event)

    try:
        result = runner.run(
            parsed.script,
            parsed.db,
            parsed.options,
            out=parsed.out,
            argv=["oltplab", "run", *args],
            hooks=runner.Hooks(on_event=on_event),
            metrics=parse_metrics(parsed.metrics),
            script=call | {"args": parsed.args},
        )
    finally:
        status.clear()
    display.finish(result)
    return _exit_code(result, script=True)


def main(args: list[str]) -> int:
    if is_script(args):
        return script_verbs.show_help("run", args) if wants_help(args) else _run_script(args)
    catalog = load_catalog()
    parsed = parse_verb("run", args, catalog)
    if parsed is None:
        return exitcodes.OK
    metrics = parse_metrics(parsed.metrics)
    load = runner_for(parsed.ray, parsed.clients)  # Ray: checked installed before any work
    parsed = dataclasses.replace(parsed, options=load.seeded(parsed.options))
    status = StatusLine(sys.stderr)
    display = RunDisplay(sys.stdout, status, catalog.resolve(parsed.workload, parsed.options))
    prepare_display = PrepareDisplay(sys.stderr, status)  # keep stdout for the run's report
    hooks = runner.Hooks(
        on_event=display.on_event,
        on_auto_prepare=lambda default: prepare_display.announce(_preparing(default)),
        on_prepare_event=prepare_display.on_event,
    )
    try:
        result = load.run(
            parsed.workload,
            parsed.db,
            parsed.options,
            out=parsed.out,
            argv=["oltplab", "run", *args],
            hooks=hooks,
            metrics=metrics,
        )
    finally:
        status.clear()
    display.finish(result)
    return _exit_code(result, script=False)


def _exit_code(result: runner.RunResult, *, script: bool) -> int:
    code = exitcodes.for_stop_reason(result.stop_reason)
    if code == exitcodes.OK and not result.complete:
        code = exitcodes.FAILED  # a distributed run that lost a client
    if code == exitcodes.INTERRUPTED:
        print(f"oltplab: interrupted; what was measured is in {result.path}", file=sys.stderr)
    elif code != exitcodes.OK:
        error = result.doc.error or result.stop_reason
        # A script's error is sysbench's own line (`thread_run' function failed: file:line: ...).
        line = error if script else f"the run failed: {error}"
        print(exitcodes.error_line(line), file=sys.stderr)
    return code
