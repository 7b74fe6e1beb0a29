"""Renders docs/options.md from the engine's catalogue, so that the page cannot drift from
the options the engine accepts (`make docs` writes it; a test checks it is current)."""

import sys

from oltplab.catalog import Catalog, OptionDef, load_catalog

INTRO = """\
# Options

Generated from the engine's option catalogue by `make docs`; `oltplab run WORKLOAD --help`
prints the same. Names, defaults and meanings are sysbench 1.0.20's unless the text says
otherwise; dashes and underscores are interchangeable (`--table-size` = `--table_size`);
values go as `--opt=value` or `--opt value`; booleans as `--skip-trx`, `--skip-trx=on|off`.
"""


def _default(d: OptionDef) -> str:
    if d.type == "bool":
        return "on" if d.default else "off"
    if isinstance(d.default, float) and d.default.is_integer():
        return str(int(d.default))
    return str(d.default) if d.default != "" else '""'


def _meaning(d: OptionDef) -> str:
    text = " ".join(d.help.split()).replace("|", "\\|")
    if d.choices:
        text += f" ({', '.join(d.choices)})"
    return text


def _row(d: OptionDef, used_by: str | None = None) -> str:
    cells = [f"`{d.flag}`", f"`{_default(d)}`", _meaning(d)]
    if used_by is not None:
        cells.insert(2, used_by)
    return "| " + " | ".join(cells) + " |"


def render(catalog: Catalog) -> str:
    lines = [INTRO, "## General options", "", "| option | default | meaning |", "|---|---|---|"]
    lines += [_row(d) for d in sorted(catalog.general, key=lambda d: d.name)]
    lines += ["", "## Workloads", "", "| workload | what one event does |", "|---|---|"]
    lines += [f"| `{w.name}` | {w.description} |" for w in catalog.workloads]
    users: dict[str, list[str]] = {}
    defs: dict[str, OptionDef] = {}
    for w in catalog.workloads:
        for d in w.options:
            users.setdefault(d.name, []).append(w.name)
            defs.setdefault(d.name, d)
    everyone = len(catalog.workloads)
    lines += [
        "",
        "## Workload options",
        "",
        "| option | default | workloads | meaning |",
        "|---|---|---|---|",
    ]
    for name in sorted(defs):
        names = users[name]
        used_by = "all" if len(names) == everyone else ", ".join(f"`{n}`" for n in names)
        lines.append(_row(defs[name], used_by))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render(load_catalog()))
