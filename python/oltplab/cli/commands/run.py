"""`oltplab run [WORKLOAD] [--db URL] [--out DIR] [options]`."""

import dataclasses
import sys

from oltplab import runner
from oltplab.catalog import load_catalog
from oltplab.cli import exitcodes
from oltplab.cli.display import PrepareDisplay, RunDisplay
from oltplab.cli.parser import parse_verb
from oltplab.cli.progress import StatusLine
from oltplab.defaultdb import DefaultDb
from oltplab.metrics import parse_metrics
from oltplab.runners import runner_for


def _preparing(default: DefaultDb) -> str:
    shape = ", ".join(f"{k}={v}" for k, v in default.data_options.items())
    return f"oltplab: preparing {default.path} ({shape})"


def main(args: list[str]) -> int:
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
    code = exitcodes.for_stop_reason(result.stop_reason)
    if code == exitcodes.OK and not result.complete:
        code = exitcodes.FAILED  # a distributed run that lost a client
    if code == exitcodes.INTERRUPTED:
        print(f"oltplab: interrupted; what was measured is in {result.path}", file=sys.stderr)
    elif code != exitcodes.OK:
        error = result.doc.error or result.stop_reason
        print(exitcodes.error_line(f"the run failed: {error}"), file=sys.stderr)
    return code
