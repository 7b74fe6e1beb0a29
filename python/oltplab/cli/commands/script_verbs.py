"""`oltplab prepare|cleanup PATH.lua --db URL [options]`: a sysbench script's own prepare or
cleanup (docs/lua.md), run as sysbench runs it (a PARALLEL_COMMAND on --threads threads)."""

import time

from oltplab import engine
from oltplab.catalog import load_catalog
from oltplab.cli import exitcodes
from oltplab.cli.parser import parse_script_verb
from oltplab.redact import redact_url
from oltplab.sysbench_compat.argv import VERBOSITY_NOTICE
from oltplab.sysbench_compat.script import announce_native, script_printer, script_spec


def main(verb: str, args: list[str]) -> int:
    catalog = load_catalog()
    parsed = parse_script_verb(verb, args, catalog)
    announce_native(["oltplab", verb], args, parsed.script, catalog)
    argv = ["oltplab", verb, *args]
    call = {"path": parsed.script, "command": verb, "argv": argv, "args": parsed.args}
    spec = script_spec(call, parsed.db, parsed.options)
    started = time.monotonic()
    result = engine.script_command(spec, script_printer(VERBOSITY_NOTICE))
    if not result.get("ok"):
        return exitcodes.FAILED  # the script's FATAL line is on stderr already
    done = "Prepared" if verb == "prepare" else "Cleaned up"
    duration_s = time.monotonic() - started
    print(f"{done} {redact_url(parsed.db)} with {parsed.script} in {duration_s:.2f}s")
    return exitcodes.OK
