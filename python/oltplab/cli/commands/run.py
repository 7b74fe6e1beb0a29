"""`oltplab run [WORKLOAD] [--db URL] [--out DIR] [options]`."""

import dataclasses
import sys

from oltplab import runner
from oltplab.catalog import load_catalog
from oltplab.cli import exitcodes
from oltplab.cli.display import PrepareDisplay, RunDisplay
from oltplab.cli.parser import VerbArgs, parse_verb
from oltplab.cli.progress import StatusLine
from oltplab.defaultdb import DefaultDb
from oltplab.metrics import parse_metrics


def _preparing(default: DefaultDb) -> str:
    shape = ", ".join(f"{k}={v}" for k, v in default.data_options.items())
    return f"oltplab: preparing {default.path} ({shape})"


def _with_distributed_seed(parsed: VerbArgs) -> VerbArgs:
    """The seed a distributed run derives every client's from, drawn before the banner shows it."""
    from oltplab.distributed.shares import with_fixed_seed

    return dataclasses.replace(parsed, options=with_fixed_seed(parsed.options))


def _distributed(
    parsed: VerbArgs, args: list[str], display: RunDisplay, metrics: tuple[str, ...]
) -> runner.RunResult:
    from oltplab.distributed import cluster

    cluster.require_ray()  # before any work: one line saying how to install it
    from oltplab.distributed.driver import run

    assert parsed.ray is not None
    return run(
        parsed.workload,
        parsed.db,
        parsed.options,
        ray_address=parsed.ray,
        clients=parsed.clients,
        out=parsed.out,
        argv=["oltplab", "run", *args],
        on_event=display.on_event,
        metrics=metrics,
    )


def main(args: list[str]) -> int:
    catalog = load_catalog()
    parsed = parse_verb("run", args, catalog)
    if parsed is None:
        return exitcodes.OK
    metrics = parse_metrics(parsed.metrics)
    if parsed.ray is not None:
        parsed = _with_distributed_seed(parsed)
    status = StatusLine(sys.stderr)
    display = RunDisplay(sys.stdout, status, catalog.resolve(parsed.workload, parsed.options))
    prepare_display = PrepareDisplay(sys.stderr, status)  # keep stdout for the run's report
    hooks = runner.Hooks(
        on_event=display.on_event,
        on_auto_prepare=lambda default: prepare_display.announce(_preparing(default)),
        on_prepare_event=prepare_display.on_event,
    )
    try:
        if parsed.ray is not None:
            result = _distributed(parsed, args, display, metrics)
        else:
            result = runner.run(
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
