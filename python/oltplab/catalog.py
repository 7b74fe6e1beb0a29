"""Workloads and their options, as the engine declares them (`_core.catalog()`).

The engine is the one source of truth for names, types, defaults and help texts; the
CLI builds its parser from this catalogue. Values are *validated* by the engine only:
`OptionDef.coerce` here is a best-effort conversion for display and comparisons.
"""

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oltplab import engine
from oltplab._types import Json
from oltplab.documents.codec import decode
from oltplab.exceptions import ConfigError

DEFAULT_WORKLOAD = "oltp_read_write"

_TRUE = frozenset({"on", "true", "yes", "1", ""})
_FALSE = frozenset({"off", "false", "no", "0"})


def normalise_name(name: str) -> str:
    """`--table-size`, `table-size` and `table_size` all name the option `table_size`."""
    return name.lstrip("-").replace("-", "_")


def flag_of(name: str) -> str:
    """The option as the CLI spells it: `table_size` -> `--table-size`."""
    return "--" + name.replace("_", "-")


@dataclass(frozen=True)
class OptionDef:
    name: str
    type: str  # "int" | "float" | "bool" | "str" | "list"
    default: Any
    help: str = ""
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()

    @property
    def flag(self) -> str:
        return flag_of(self.name)

    @property
    def default_text(self) -> str:
        """The default as sysbench's help prints it: `on`/`off`, `10000`, `innodb`."""
        if self.type == "bool":
            return "on" if self.default else "off"
        if isinstance(self.default, float) and self.default.is_integer():
            return str(int(self.default))
        return "" if self.default is None else str(self.default)

    def coerce(self, value: Any) -> Any:
        """Converts CLI text to this option's type; returns `value` unchanged if it does not
        convert (the engine then rejects it with its own message)."""
        if not isinstance(value, str):
            return value
        text = value.strip()
        try:
            if self.type == "int":
                return int(text)
            if self.type == "float":
                return float(text)
        except ValueError:
            return value
        if self.type == "bool":
            low = text.lower()
            return True if low in _TRUE else False if low in _FALSE else value
        return value


@dataclass(frozen=True)
class WorkloadDef:
    name: str
    description: str = ""
    options: tuple[OptionDef, ...] = ()


@dataclass(frozen=True)
class Catalog:
    """`_core.catalog()`'s document, read by the codec (documents/codec.py)."""

    workloads: tuple[WorkloadDef, ...]
    general: tuple[OptionDef, ...] = ()

    @property
    def names(self) -> list[str]:
        return [w.name for w in self.workloads]

    def workload(self, name: str) -> WorkloadDef:
        for w in self.workloads:
            if w.name == name:
                return w
        if "://" in name:  # a database URL where the workload goes: never echo its password
            raise ConfigError(
                "a database URL was given where the workload goes; give it as --db URL"
            )
        raise ConfigError(f"unknown workload '{name}'; choose one of: {', '.join(self.names)}")

    def options_for(self, workload: str) -> dict[str, OptionDef]:
        """General options, then the workload's own, by name."""
        defs = {d.name: d for d in self.general}
        defs.update((d.name, d) for d in self.workload(workload).options)
        return defs

    def all_options(self) -> dict[str, OptionDef]:
        """Every option of every workload (to tell option values from the workload name)."""
        defs = {d.name: d for d in self.general}
        for w in self.workloads:
            defs.update((d.name, d) for d in w.options)
        return defs

    def resolve(self, workload: str, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every option's value: defaults, overridden by `given` (names with - or _).

        Raises ConfigError for an unknown workload or option name, before any work starts.
        """
        defs = self.options_for(workload)
        values = {name: d.default for name, d in defs.items()}
        for raw, value in given.items():
            name = normalise_name(raw)
            if name not in defs:
                raise ConfigError(
                    f"unknown option {flag_of(name)} for {workload}; "
                    f"see `oltplab run {workload} --help` for the options it takes"
                )
            values[name] = defs[name].coerce(value)
        return values


def parse_catalog(doc: Json) -> Catalog:
    return decode(Catalog, doc, "the engine's option catalogue")


@functools.cache
def load_catalog() -> Catalog:
    """The engine's catalogue, read once per process."""
    return parse_catalog(engine.catalog())
