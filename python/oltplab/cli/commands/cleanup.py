"""`oltplab cleanup [WORKLOAD] [--db URL] [options]`."""

import sys

from oltplab import runner
from oltplab.catalog import load_catalog
from oltplab.cli import exitcodes
from oltplab.cli.argv import wants_help
from oltplab.cli.commands import script_verbs
from oltplab.cli.display import PrepareDisplay, banner
from oltplab.cli.parser import is_script, parse_verb
from oltplab.cli.progress import StatusLine


def main(args: list[str]) -> int:
    if is_script(args):
        return (script_verbs.show_help if wants_help(args) else script_verbs.main)("cleanup", args)
    catalog = load_catalog()
    parsed = parse_verb("cleanup", args, catalog)
    if parsed is None:
        return exitcodes.OK
    print(f"{banner()}\n", flush=True)
    display = PrepareDisplay(sys.stdout, StatusLine(sys.stderr))  # messages only
    result = runner.cleanup(parsed.workload, parsed.db, parsed.options, on_event=display.on_event)
    if parsed.db is None:
        path = result["db"].removeprefix("sqlite://")
        done = "Removed" if result["removed"] else "Nothing to remove: no"
        print(f"{done} default database {path}")
    return exitcodes.OK
