"""Writes the servers' configuration files: MariaDB's my.cnf and a postgresql.conf include."""

from collections.abc import Mapping
from pathlib import Path

from oltplab.servers.settings import ConfigValue

# None marks a bare option line (`skip-name-resolve`).
MyCnf = Mapping[str, Mapping[str, ConfigValue | None]]


def render_mycnf(sections: MyCnf) -> str:
    out = ["# Written by oltplab at each start: edit the server's settings, not this file."]
    for section, options in sections.items():
        out.append(f"\n[{section}]")
        for name, value in options.items():
            out.append(name if value is None else f"{name}={_mycnf_value(value)}")
    return "\n".join(out) + "\n"


def _mycnf_value(value: ConfigValue) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    return str(value)


def render_pg_conf(settings: Mapping[str, ConfigValue]) -> str:
    out = ["# Written by oltplab at each start: edit the server's settings, not this file."]
    out += [f"{name} = {_pg_value(value)}" for name, value in settings.items()]
    return "\n".join(out) + "\n"


def _pg_value(value: ConfigValue) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int | float):
        return str(value)
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def write_text(path: Path, text: str) -> None:
    """Replaces a small file whole (written beside it, then renamed)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)
