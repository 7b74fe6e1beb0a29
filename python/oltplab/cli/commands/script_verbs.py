"""`oltplab prepare|cleanup PATH.lua --db URL [options]`: a sysbench script's own prepare or
cleanup (docs/lua.md), run as sysbench runs it (a PARALLEL_COMMAND on --threads threads); and
`oltplab prepare|run|cleanup PATH.lua --help`."""

import time

from oltplab import engine
from oltplab.catalog import load_catalog
from oltplab.cli import exitcodes
from oltplab.cli.parser import parse_script_verb, script_arg, script_verb_help
from oltplab.redact import redact_url
from oltplab.sysbench_compat.argv import VERBOSITY_NOTICE
from oltplab.sysbench_compat.script import announce_native, script_printer, script_spec

# Loading a script to list its options connects to nothing: any URL of a known kind will do.
_NO_DATABASE = "mysql://localhost/sbtest"


def main(verb: str, args: list[str]) -> int:
    catalog = load_catalog()
    parsed = parse_script_verb(verb, args, catalog)
    announce_native(["oltplab", verb], args, parsed.script, catalog)
    argv = ["oltplab", verb, *args]
    call = {"path": parsed.script, "command": verb, "argv": argv, "args": parsed.args}
    spec = script_spec(call, parsed.db, parsed.options)
    if verb == "prepare":  # a SQLite file is created, as for a native prepare
        spec["target"] = {"create": True}
    started = time.monotonic()
    result = engine.script_command(spec, script_printer(VERBOSITY_NOTICE))
    if not result.get("ok"):
        return exitcodes.FAILED  # the script's FATAL line is on stderr already
    done = "Prepared" if verb == "prepare" else "Cleaned up"
    duration_s = time.monotonic() - started
    print(f"{done} {redact_url(parsed.db)} with {parsed.script} in {duration_s:.2f}s")
    return exitcodes.OK


def show_help(verb: str, args: list[str]) -> int:
    """oltplab's options for a script, then the script's own as sysbench's `help` lists them
    (its load error, if any, as sysbench's FATAL line: exit 1)."""
    print(script_verb_help(verb, load_catalog()))
    script = script_arg(args) or ""
    call = {"path": script, "command": "help", "argv": ["oltplab", verb, *args], "args": {}}
    spec = script_spec(call, _NO_DATABASE, {})
    described = engine.script_describe(spec)
    if described.get("options") is None:
        print(f"{script} declares no options: it takes any --name=value, as in sysbench.")
        return exitcodes.OK
    result = engine.script_command(spec, script_printer(VERBOSITY_NOTICE))
    return exitcodes.OK if result.get("ok") else exitcodes.FAILED
