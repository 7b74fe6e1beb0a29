"""`oltplab prepare [WORKLOAD] [--db URL] [options]`."""

import sys

from oltplab import runner
from oltplab._types import Json
from oltplab.catalog import load_catalog
from oltplab.cli import exitcodes
from oltplab.cli.display import PrepareDisplay, banner
from oltplab.cli.parser import VerbArgs, parse_verb
from oltplab.cli.progress import StatusLine
from oltplab.redact import redact_url


def _distributed(parsed: VerbArgs, display: PrepareDisplay) -> Json:
    from oltplab.distributed import cluster

    cluster.require_ray()
    from oltplab.distributed.prepare import prepare

    assert parsed.ray is not None
    return prepare(
        parsed.workload,
        parsed.db,
        parsed.options,
        ray_address=parsed.ray,
        clients=parsed.clients,
        on_event=display.on_event,
    )


def main(args: list[str]) -> int:
    catalog = load_catalog()
    parsed = parse_verb("prepare", args, catalog)
    if parsed is None:
        return exitcodes.OK
    print(f"{banner()}\n", flush=True)
    status = StatusLine(sys.stderr)
    display = PrepareDisplay(sys.stdout, status)
    try:
        if parsed.ray is not None:
            result = _distributed(parsed, display)
        else:
            result = runner.prepare(
                parsed.workload, parsed.db, parsed.options, on_event=display.on_event
            )
    finally:
        display.done()
    where = redact_url(parsed.db) if parsed.db else "the default SQLite database"
    tables, duration_s = result.get("tables", "?"), result["duration_s"]
    print(f"Prepared {tables} table(s) in {where} in {duration_s:.2f}s")
    return exitcodes.OK
