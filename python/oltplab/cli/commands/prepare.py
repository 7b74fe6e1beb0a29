"""`oltplab prepare [WORKLOAD] [--db URL] [options]`."""

import sys

from oltplab import runner
from oltplab.catalog import load_catalog
from oltplab.cli import exitcodes
from oltplab.cli.display import PrepareDisplay, banner
from oltplab.cli.parser import parse_verb
from oltplab.cli.progress import StatusLine
from oltplab.redact import redact_url


def main(args: list[str]) -> int:
    catalog = load_catalog()
    parsed = parse_verb("prepare", args, catalog)
    if parsed is None:
        return exitcodes.OK
    print(f"{banner()}\n", flush=True)
    status = StatusLine(sys.stderr)
    display = PrepareDisplay(sys.stdout, status)
    try:
        result = runner.prepare(
            parsed.workload, parsed.db, parsed.options, on_event=display.on_event
        )
    finally:
        display.done()
    where = redact_url(parsed.db) if parsed.db else "the default SQLite database"
    tables, duration_s = result.get("tables", "?"), result["duration_s"]
    print(f"Prepared {tables} table(s) in {where} in {duration_s:.2f}s")
    return exitcodes.OK
