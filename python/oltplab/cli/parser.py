"""Per-verb argument parsing, built from the engine's option catalogue.

Parsing is two-step: the workload is found first (cli/argv.py), then a parser with that
workload's options parses the whole command line. Values stay text: the engine
validates them and names the problem and the fix.
"""

import argparse
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from oltplab._messages import without_url_secrets
from oltplab.catalog import DEFAULT_WORKLOAD, Catalog, OptionDef, flag_of
from oltplab.cli import helptext
from oltplab.cli.argv import find_workload, normalise_argv, wants_help
from oltplab.driver_options import ignored_option_warnings
from oltplab.exceptions import ConfigError

BOOL_METAVAR = "on|off"
_METAVARS = {"int": "N", "float": "N", "str": "STRING", "list": "LIST"}
# destinations that are not workload options
_OWN = ("workload", "db", "out", "metrics", "ray", "clients")
_DISTRIBUTED_VERBS = ("run", "prepare")


@dataclass(frozen=True)
class VerbArgs:
    workload: str
    db: str | None
    out: Path | None
    options: dict[str, str]  # as given on the command line, names with underscores
    metrics: str | None = None  # run: --metrics system,server
    ray: str | None = None  # --ray: the Ray cluster's address ("auto": this node's cluster)
    clients: int | None = None  # --clients: engine actors (with --ray)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse quotes the values it rejects: a misplaced URL must not show its password.
        raise ConfigError(without_url_secrets(message))


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """sysbench's look: `--table-size=N`, `--skip-trx[=on|off]`."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32, width=100)

    def _format_action_invocation(self, action: argparse.Action) -> str:
        if not action.option_strings or action.nargs == 0:  # positionals, -h/--help
            return super()._format_action_invocation(action)
        flag = action.option_strings[0]
        if action.metavar == BOOL_METAVAR:
            return f"{flag}[=on|off]"
        return f"{flag}={action.metavar}"

    def _split_lines(self, text: str, width: int) -> list[str]:
        # Paths such as oltplab-runs/sbtest.db must not break at their hyphens.
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def _option_help(d: OptionDef) -> str:
    text = d.help
    if d.choices and "{" not in text:
        text += " {" + ",".join(d.choices) + "}"
    return f"{text} [{d.default_text}]".replace("%", "%%")  # argparse %-formats help


def _add_options(group: Any, defs: list[OptionDef]) -> None:
    for d in sorted(defs, key=lambda d: d.name):
        metavar = BOOL_METAVAR if d.type == "bool" else _METAVARS.get(d.type, "VALUE")
        group.add_argument(
            d.flag, dest=d.name, metavar=metavar, default=argparse.SUPPRESS, help=_option_help(d)
        )


def build_parser(verb: str, catalog: Catalog, workload: str) -> argparse.ArgumentParser:
    wdef = catalog.workload(workload)
    out = " [--out DIR]" if verb == "run" else ""
    parser = _Parser(
        prog=f"oltplab {verb}",
        usage=f"oltplab {verb} [WORKLOAD] [--db URL]{out} [--OPTION=VALUE ...]",
        description=helptext.verb_description(verb, wdef),
        epilog=helptext.verb_epilog(verb, catalog),
        formatter_class=_HelpFormatter,
        add_help=False,
        allow_abbrev=False,
    )
    parser.add_argument("workload", nargs="?", default=DEFAULT_WORKLOAD, help=argparse.SUPPRESS)
    own = _add_own_options(parser, verb)
    if verb in _DISTRIBUTED_VERBS:
        own.add_argument("--ray", metavar="ADDRESS", help=helptext.RAY_OPTION_HELP)
        own.add_argument("--clients", metavar="N", help=helptext.CLIENTS_OPTION_HELP)
    general = {d.name for d in catalog.general}
    _add_options(parser.add_argument_group("general options"), list(catalog.general))
    _add_options(
        parser.add_argument_group(f"{workload} options"),
        [d for d in wdef.options if d.name not in general],
    )
    return parser


def _add_own_options(
    parser: argparse.ArgumentParser, verb: str, db_help: str = helptext.DB_OPTION_HELP
) -> Any:
    """The options that are oltplab's, not a workload's: --help, --db, run's --out, --metrics."""
    own = parser.add_argument_group("database and output")
    own.add_argument("-h", "--help", action="store_true", help="show this help and exit")
    own.add_argument("--db", metavar="URL", help=db_help)
    if verb == "run":
        own.add_argument("--out", metavar="DIR", type=Path, help=helptext.OUT_OPTION_HELP)
        own.add_argument("--metrics", metavar="LIST", help=helptext.METRICS_OPTION_HELP)
    return own


def script_verb_help(verb: str, catalog: Catalog) -> str:
    """`oltplab VERB PATH.lua --help`: oltplab's options and the general ones (the script
    lists its own: cli/commands/script_verbs.py)."""
    out = " [--out DIR]" if verb == "run" else ""
    parser = _Parser(
        prog=f"oltplab {verb}",
        usage=f"oltplab {verb} PATH.lua --db URL{out} [--OPTION=VALUE ...]",
        description=f"{helptext.SCRIPT_VERB_SUMMARY[verb]}\n\n{helptext.SCRIPT_OPTIONS_NOTE}",
        formatter_class=_HelpFormatter,
        add_help=False,
        allow_abbrev=False,
    )
    _add_own_options(parser, verb, helptext.SCRIPT_DB_OPTION_HELP)
    general = parser.add_argument_group("general options")
    _add_options(general, list(catalog.script_options().values()))
    return parser.format_help()


def _bool_hint(args: list[str], token: str) -> str | None:
    """A stray `on`/`off` after a boolean: `--skip-trx off` means `--skip-trx=off`."""
    i = args.index(token)
    before = args[i - 1] if i > 0 else ""
    if before.startswith("--") and before.endswith("=on"):
        flag = before.removesuffix("=on")
        return f"'{token}' after {flag}: give a boolean's value with '=', as {flag}={token}"
    return None


def _reject_extras(verb: str, workload: str, extras: list[str], args: list[str]) -> None:
    for token in extras:
        if token.startswith("-"):
            name = token.split("=", 1)[0]
            raise ConfigError(
                f"unknown option {name} for {workload}; "
                f"see `oltplab {verb} {workload} --help` for the options it takes"
            )
        hint = _bool_hint(args, token)
        raise ConfigError(hint or f"unexpected argument '{token}'; give the workload once, first")


def parse_verb(verb: str, args: list[str], catalog: Catalog) -> VerbArgs | None:
    """Parses `oltplab VERB ...`; prints the help and returns None for -h/--help. A database
    URL its errors quote (a misplaced one) is shown without its password."""
    try:
        return _parse_verb(verb, args, catalog)
    except ConfigError as e:
        raise ConfigError(without_url_secrets(str(e))) from None


def _parse_verb(verb: str, args: list[str], catalog: Catalog) -> VerbArgs | None:
    every = catalog.all_options().values()
    normalised = normalise_argv(args, [flag_of(d.name)[2:] for d in every if d.type == "bool"])
    normalised = _bare_ray(normalised, catalog)
    value_flags = [flag_of(d.name)[2:] for d in every if d.type != "bool"]
    value_flags += ["db", "out", "metrics", "ray", "clients"]
    workload = find_workload(normalised, value_flags) or DEFAULT_WORKLOAD
    if workload not in catalog.names and (hint := _bool_hint(normalised, workload)):
        raise ConfigError(hint)
    parser = build_parser(verb, catalog, workload)
    if wants_help(normalised):
        print(parser.format_help(), end="")
        return None
    namespace, extras = parser.parse_known_args(normalised)
    _reject_extras(verb, workload, extras, normalised)
    values = vars(namespace)
    options = {k: v for k, v in values.items() if k not in (*_OWN, "help")}
    for warning in ignored_option_warnings(values.get("db"), options):
        print(f"oltplab: warning: {warning}", file=sys.stderr)
    ray = getattr(namespace, "ray", None)
    return VerbArgs(
        workload=workload,
        db=getattr(namespace, "db", None),
        out=getattr(namespace, "out", None),
        metrics=getattr(namespace, "metrics", None),
        options=options,
        ray=ray,
        clients=_clients(ray, getattr(namespace, "clients", None)),
    )


def _bare_ray(args: list[str], catalog: Catalog) -> list[str]:
    """`--ray` alone (last, or before an option or the workload) means `--ray=auto`."""
    out = []
    for i, token in enumerate(args):
        following = args[i + 1] if i + 1 < len(args) else None
        bare = following is None or following.startswith("-") or following in catalog.names
        out.append("--ray=auto" if token == "--ray" and bare else token)
    return out


def _clients(ray: str | None, clients: str | None) -> int | None:
    if clients is None:
        return None
    if ray is None:
        raise ConfigError("--clients needs --ray: give --ray[=ADDRESS] --clients=N")
    try:
        n = int(clients)
    except ValueError:
        n = 0
    if n < 1:
        raise ConfigError(f"--clients={clients} is not a positive whole number; give e.g. 2")
    return n


@dataclass(frozen=True)
class ScriptVerbArgs:
    """`oltplab VERB PATH.lua --db URL [options]`: a sysbench script (docs/lua.md)."""

    script: str
    db: str
    out: Path | None
    metrics: str | None
    options: dict[str, str]  # the general options given, names with underscores
    args: dict[str, str | None]  # every option as typed, the script's own included (sysbench.opt)


def script_arg(args: list[str]) -> str | None:
    """The sysbench script given as the workload: the first argument that is not an option,
    when it names a .lua file."""
    first = next((a for a in args if not a.startswith("-")), None)
    return first if first is not None and first.endswith(".lua") else None


def is_script(args: list[str]) -> bool:
    return script_arg(args) is not None


def parse_script_verb(verb: str, args: list[str], catalog: Catalog) -> ScriptVerbArgs:
    """The general options go to the engine, the rest are the script's, checked by its
    declarations (sysbench.cmdline.options) when it loads."""
    defs = list(catalog.script_options().values())
    normalised = normalise_argv(args, [flag_of(d.name)[2:] for d in defs if d.type == "bool"])
    parser = _Parser(prog=f"oltplab {verb}", add_help=False, allow_abbrev=False)
    parser.add_argument("script")
    parser.add_argument("--db")
    if verb == "run":
        parser.add_argument("--out", type=Path)
        parser.add_argument("--metrics")
    parser.add_argument("--ray", nargs="?", const="auto")
    parser.add_argument("--clients")
    _add_options(parser, defs)
    namespace, extras = parser.parse_known_args(normalised)
    values = {k: v for k, v in vars(namespace).items() if v is not None}
    script, db = values.pop("script"), values.pop("db", None)
    if "ray" in values or "clients" in values:
        raise ConfigError(
            f"--ray: a sysbench script runs on this machine only (its Lua is not shipped to "
            f"Ray clients); drop --ray/--clients to run {script}"
        )
    out, metrics = values.pop("out", None), values.pop("metrics", None)
    if db is None:
        raise ConfigError(f"a script runs against a database you name: give --db URL for {script}")
    args_typed: dict[str, str | None] = {k: str(v) for k, v in values.items()}
    for token in extras:
        if not token.startswith("--"):
            raise ConfigError(f"unexpected argument '{token}'; give the script once, first")
        name, eq, value = token[2:].partition("=")
        args_typed[name.replace("-", "_")] = value if eq else None
    return ScriptVerbArgs(script, db, out, metrics, values, args_typed)
