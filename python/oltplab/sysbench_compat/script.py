"""sysbench Lua scripts in the drop-in mode (docs/lua.md): which test is a script, its command
line, and its help, prepare, cleanup and custom commands, run by the engine's script runtime.

A test is a script when it is a path to an existing file (even one named like a built-in:
`./tpcc.lua` is the user's sysbench-tpcc, /usr/share/sysbench/oltp_read_write.lua is sysbench's
own script), or a name that is not a built-in's found as sysbench finds it (the current
directory, then its Lua search path). A built-in's bare name (`tpcc`, `oltp_read_write.lua`)
keeps running the native workload, which sends the same statements.
"""

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from oltplab import engine
from oltplab._messages import without_url_secrets
from oltplab._types import Json
from oltplab.catalog import Catalog, OptionDef
from oltplab.exceptions import ConfigError
from oltplab.sysbench_compat.argv import VERBOSITY_NOTICE, _Collector, _Given, split_args
from oltplab.sysbench_compat.options import SYSBENCH_OPTIONS
from oltplab.sysbench_compat.output import BANNER, fatal_line, warning_line
from oltplab.sysbench_compat.target import db_url


def native_equivalent(test: str, catalog: Catalog) -> str | None:
    """The built-in workload a script's file name names (`./tpcc.lua` -> `tpcc`), if any."""
    name = PurePosixPath(test).name.removesuffix(".lua")
    return name if name in catalog.names else None


def script_path(test: str, catalog: Catalog) -> str | None:
    """The script `test` names, or None when it names one of oltplab's native workloads."""
    if native_equivalent(test, catalog) is not None:
        return test if "/" in test and Path(test).is_file() else None
    if Path(test).is_file():
        return test
    if "/" not in test:
        return engine.script_find(test)
    return None


def announce_native(prog: Sequence[str], args: Sequence[str], test: str, catalog: Catalog) -> None:
    """On stderr, when the script's file is named like a built-in: see native_notice."""
    workload = native_equivalent(test, catalog)
    if workload is not None:
        print(native_notice(prog, args, test, workload), file=sys.stderr, flush=True)


def native_notice(prog: Sequence[str], args: Sequence[str], test: str, workload: str) -> str:
    """The line saying that a file named like a built-in runs as written, and the command that
    runs oltplab's native workload instead (passwords masked)."""
    given = {test: workload, f"--test={test}": f"--test={workload}"}
    native = [given.get(a) or _masked(a) for a in args]
    command = " ".join([*prog, *native])
    return f"oltplab: {test} runs as a Lua script; the native {workload} is: {command}"


def _masked(arg: str) -> str:
    name, eq, _ = arg.partition("=")
    if eq and name.endswith("password"):
        return f"{name}=***"
    return without_url_secrets(arg)


@dataclass(frozen=True)
class ScriptInvocation:
    path: str  # as given, or as found on sysbench's Lua path
    name: str  # the test as typed (`kv` for ./kv.lua found by name): sysbench's name for it
    command: str | None  # None: load the script and stop, as sysbench does
    options: dict[str, str]  # the catalogue's general options, for the engine
    connection: dict[str, str]  # --db-driver and --mysql-*/--pgsql-* (target.py)
    args: dict[str, str | None]  # every option as typed: the script's, sysbench.opt
    argv: list[str]
    warnings: tuple[str, ...]
    verbosity: int
    out: Path | None = None  # --out DIR: `run` also writes a run directory


def _general_defs(catalog: Catalog) -> dict[str, OptionDef]:
    return catalog.script_options()


class _ScriptCollector(_Collector):
    """Options the drop-in knows go where they go; the rest are the script's own."""

    def __init__(self, catalog: Catalog) -> None:
        super().__init__(_general_defs(catalog), SYSBENCH_OPTIONS)
        self.args: dict[str, str | None] = {}

    def add(self, given: _Given) -> None:
        if given.name != "out":  # oltplab's own (a run directory), not the script's to see
            self.args[given.name] = given.value
        if given.name in self.defs or given.name in self.sysbench:
            super().add(given)


def parse_script_argv(
    args: Sequence[str], test: str, path: str, catalog: Catalog
) -> ScriptInvocation:
    defs = _general_defs(catalog)

    def is_bool(name: str) -> bool:
        if name in defs:
            return defs[name].type == "bool"
        sb = SYSBENCH_OPTIONS.get(name)
        return sb is not None and sb.is_bool

    def is_known(name: str) -> bool:
        return name in defs or name in SYSBENCH_OPTIONS

    positionals, given = split_args(args, is_bool, is_known)
    if len(positionals) > 2:
        raise ConfigError(f"Unrecognized command line argument: {positionals[2]}")
    collector = _ScriptCollector(catalog)
    for g in given:
        if g.name != "test":
            collector.add(g)
    collector.finish("")
    return ScriptInvocation(
        path=path,
        name=test,
        command=positionals[1] if len(positionals) > 1 else None,
        options=collector.options,
        connection=collector.connection,
        args=collector.args,
        argv=["sysbench", *args],
        warnings=tuple(collector.warnings),
        verbosity=collector.verbosity,
        out=collector.out,
    )


def script_call(inv: ScriptInvocation) -> Json:
    """The engine's `script` document: which script, which command, its options as typed."""
    call = {"path": inv.path, "command": inv.command, "argv": inv.argv, "args": inv.args}
    return call if inv.name == inv.path else {**call, "name": inv.name}


def _spec(inv: ScriptInvocation) -> Json:
    return script_spec(script_call(inv), db_url(inv.connection), inv.options)


def script_spec(call: Json, db: str, options: Mapping[str, Any]) -> Json:
    """The engine's document for a script's command: the call, the target, general options."""
    return {"script": call, "db": db, "options": dict(options)}


def report_hooks(spec: Json) -> frozenset[str]:
    """The sysbench report hooks the script sets when it loads (as sysbench reads them)."""
    hooks = engine.script_describe(spec)["hooks"]
    return frozenset(h for h in hooks if h.startswith("report_"))


def printer(inv: ScriptInvocation) -> Any:
    return script_printer(inv.verbosity)


def script_printer(verbosity: int) -> Any:
    """The script's output on stdout (below sysbench's notice level, nowhere), its FATAL
    lines on stderr."""

    def on_event(event: Mapping[str, Any]) -> None:
        if event.get("event") == "output" and verbosity >= VERBOSITY_NOTICE:
            sys.stdout.write(str(event["text"]))
            sys.stdout.flush()
        elif event.get("event") == "log":
            line = fatal_line if event.get("level") == "fatal" else warning_line
            print(line(str(event["text"])), file=sys.stderr, flush=True)

    return on_event


def run_script(inv: ScriptInvocation) -> int:
    """Runs the script's command as sysbench 1.0.20 does; returns the exit code."""
    for warning in inv.warnings:
        print(warning_line(warning), file=sys.stderr)
    if inv.verbosity >= VERBOSITY_NOTICE:
        print(BANNER + "\n", flush=True)
    if inv.command is None:  # sysbench loads the script and has nothing more to do
        engine.script_describe(_spec(inv))
        return 0
    result = engine.script_command(_spec(inv), printer(inv))
    return 0 if result.get("ok") else 1
