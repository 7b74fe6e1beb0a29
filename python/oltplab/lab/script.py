"""Lua script workloads in labs (`[[workloads]] script = "path.lua"`, docs/labs.md): the file
and its options checked before anything starts, its prepare (the script's own, as
`oltplab sysbench PATH.lua prepare` runs it) and a cell's call of the engine.

A script's `options` are what its command line would hold: the engine's general options
(--rand-*, --mysql-ignore-errors, ...) go to the engine, and every option, those included, is
the script's `sysbench.opt`, as text, as sysbench gives it.
"""

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from oltplab import engine
from oltplab._types import Json
from oltplab.catalog import Catalog, flag_of, load_catalog, normalise_name
from oltplab.documents.lab import ServerSpec
from oltplab.exceptions import ConfigError, OltpLabError


def script_file(lab_file: str, given: str) -> Path:
    """The script a lab file names, relative to the lab file's directory."""
    path = (Path(lab_file).parent / given).resolve()
    if not path.is_file():
        raise ConfigError(
            f"no such script {path} (a path relative to the lab file); give the .lua file's path"
        )
    return path


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def option_text(value: Any) -> str:
    """A TOML value as sysbench's command line would spell it."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _general(options: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    known = catalog.script_options()
    return {normalise_name(k): v for k, v in options.items() if normalise_name(k) in known}


def _call(path: str, command: str | None, options: Mapping[str, Any]) -> Json:
    """The engine's `script` document: the script, its command and its options as typed."""
    args = {normalise_name(k): option_text(v) for k, v in options.items()}
    flags = [f"{flag_of(k)}={v}" for k, v in args.items()]
    argv = ["sysbench", path, *flags] + ([command] if command else [])
    return {"path": path, "command": command, "argv": argv, "args": args}


def describe_url(servers: Sequence[ServerSpec]) -> str:
    """A URL of the lab's kind of server, for loading a script to read its options."""
    pg = any(s.engine == "postgresql" or (s.url or "").startswith("postgres") for s in servers)
    return "postgresql://localhost/oltplab" if pg else "mysql://localhost/oltplab"


class ScriptOptions:
    """Checks a script's options one by one, so an error names the very key that is wrong:
    the engine's general options by the catalogue, the others by the script's declarations
    (`sysbench.cmdline.options`; a script that declares none takes any, as in sysbench)."""

    def __init__(self, path: str, db_hint: str) -> None:
        """`db_hint` is a URL of the lab's kind of server: loading a script connects to
        nothing. It loads as for `run` (oltp_common.lua refuses to load without a command)."""
        self.name = Path(path).name
        described = engine.script_describe(
            {"script": _call(path, "run", {}), "db": db_hint, "options": {}}
        )
        declared = described.get("options")
        self.declared = (
            None
            if declared is None
            else {normalise_name(declaration["name"]) for declaration in declared}
        )

    def check(self, key: str, value: Any) -> None:
        catalog, name = load_catalog(), normalise_name(key)
        if not isinstance(value, str | int | float | bool):
            raise ConfigError(f"must be a value (text, number or boolean), not {value!r}")
        if name in catalog.script_options():
            catalog.resolve_script(self.name, {key: value})
        elif self.declared is not None and name not in self.declared:
            raise ConfigError(
                f"unknown option {flag_of(name)} for {self.name}; it declares: "
                f"{', '.join(sorted(self.declared)) or 'none'}"
            )


def prepare(path: str, url: str, options: Mapping[str, Any]) -> None:
    """Runs the script's own `prepare` command against `url`; its FATAL lines are the error."""
    fatal: list[str] = []

    def on_event(event: Json) -> None:
        if event.get("event") == "log":
            fatal.append(str(event.get("text", "")).strip())

    spec = {
        "script": _call(path, "prepare", options),
        "db": url,
        "options": _general(options, load_catalog()),
    }
    done = engine.script_command(spec, on_event)
    if not done.get("ok"):
        why = "; ".join(fatal) or "its prepare returned false"
        raise OltpLabError(f"preparing with {Path(path).name} failed: {why}")


def run_call(path: str, options: Mapping[str, Any]) -> tuple[dict[str, Any], Json]:
    """(the engine's general options, the `script` call) for a cell's run of the script."""
    return _general(options, load_catalog()), _call(path, "run", options)
