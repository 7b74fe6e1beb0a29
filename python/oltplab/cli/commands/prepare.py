"""`oltplab prepare [WORKLOAD] [--db URL] [options]`."""

import sys
from collections.abc import Mapping
from typing import Any

from oltplab._types import Json
from oltplab.catalog import load_catalog
from oltplab.cli import exitcodes
from oltplab.cli.argv import wants_help
from oltplab.cli.commands import script_verbs
from oltplab.cli.display import PrepareDisplay, banner
from oltplab.cli.parser import is_script, parse_verb
from oltplab.cli.progress import StatusLine
from oltplab.redact import redact_url
from oltplab.runners import runner_for


def prepared_what(workload: str, options: Mapping[str, Any], result: Json) -> str:
    """What prepare made, in the user's units: the engine's `tables` are its load units
    (for tpcc: two per warehouse, its districts and its stock, and each table set's items)."""
    if workload != "tpcc":
        return f"{result.get('tables', '?')} table(s)"
    effective = load_catalog().resolve(workload, options)
    sets, warehouses = effective["tables"], effective["warehouses"] or effective["scale"]
    return f"{warehouses} warehouse(s) in {sets} TPC-C table set(s) ({9 * sets} tables)"


def main(args: list[str]) -> int:
    if is_script(args):
        return (script_verbs.show_help if wants_help(args) else script_verbs.main)("prepare", args)
    catalog = load_catalog()
    parsed = parse_verb("prepare", args, catalog)
    if parsed is None:
        return exitcodes.OK
    print(f"{banner()}\n", flush=True)
    status = StatusLine(sys.stderr)
    display = PrepareDisplay(sys.stdout, status)
    try:
        load = runner_for(parsed.ray, parsed.clients)
        result = load.prepare(parsed.workload, parsed.db, parsed.options, on_event=display.on_event)
    finally:
        display.done()
    where = redact_url(parsed.db) if parsed.db else "the default SQLite database"
    print(f"Prepared {prepared_what(parsed.workload, parsed.options, result)} in {where} "
          f"in {result['duration_s']:.2f}s")  # fmt: skip
    return exitcodes.OK
