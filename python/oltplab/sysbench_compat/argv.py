"""sysbench 1.0.20's command line, read as sysbench reads it (src/sysbench.c).

- The first argument that does not start with `--` names the test, the second the
  command; a third is an error. Options go anywhere, in any order; the last one wins.
- `--name=value`, and booleans also as `--name` (on). oltplab also takes `--name value`
  for options that take a value (sysbench requires the `=`).
- Dashes and underscores in option names are interchangeable.
- The test is a workload name or a file name or path ending in `<workload>.lua`; oltplab
  runs its own implementation of that workload, never the script's content.
- Deprecated aliases (--num-threads, --max-time, --max-requests, --tx-rate) take over
  their new names when set above their default, with sysbench's warning.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from oltplab._messages import without_url_secrets
from oltplab.catalog import Catalog, OptionDef, flag_of, normalise_name
from oltplab.exceptions import ConfigError
from oltplab.sysbench_compat import tpcc
from oltplab.sysbench_compat.options import (
    SYSBENCH_DEFAULTS,
    SYSBENCH_OPTIONS,
    Role,
    SysbenchOption,
)

COMMANDS = ("prepare", "run", "cleanup", "help", "check")
VERBOSITY_NOTICE, VERBOSITY_WARNING, VERBOSITY_MAX = 3, 2, 5  # sysbench's log levels
NOT_YET_COMMANDS = ("prewarm", "warmup")
_BOOL_WORDS = frozenset({"on", "off"})


@dataclass(frozen=True)
class Invocation:
    test: str  # as sysbench names it: the file name of a path (`help` prints it)
    workload: str  # the catalogue's workload
    command: str  # one of COMMANDS
    options: dict[str, str]  # catalogue options for the engine, names with underscores
    connection: dict[str, str]  # --db-driver and --mysql-*/--pgsql-*/--sqlite-* (target.py)
    out: Path | None  # --out DIR: also write a run directory
    warnings: tuple[str, ...]  # sysbench-style warnings, without the "WARNING: " prefix
    # sysbench's --verbosity: below 3 (notices) no report is printed, below 2 no warnings.
    verbosity: int = 3


@dataclass(frozen=True)
class _Given:
    name: str  # normalised: underscores
    value: str | None  # None: given without a value
    flag: str  # as typed, without its value (messages never echo values: passwords)


def split_args(
    args: Sequence[str], is_bool: Callable[[str], bool], is_known: Callable[[str], bool]
) -> tuple[list[str], list[_Given]]:
    positionals: list[str] = []
    given: list[_Given] = []
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if not token.startswith("--"):
            positionals.append(token)
            continue
        flag, eq, value = token.partition("=")
        name = normalise_name(flag)
        following = args[i] if i < len(args) else None
        if eq:
            given.append(_Given(name, value, flag))
        elif is_bool(name):
            if following is not None and following.lower() in _BOOL_WORDS:
                raise ConfigError(
                    f"'{following}' after {flag}: give a boolean's value with '=', "
                    f"as {flag}={following}"
                )
            given.append(_Given(name, None, flag))
        elif is_known(name) and following is not None and not following.startswith("--"):
            given.append(_Given(name, following, flag))  # the space form
            i += 1
        else:
            given.append(_Given(name, None, flag))
    return positionals, given


def _workload(test: str, catalog: Catalog) -> tuple[str, str]:
    """(sysbench's name of the test, the catalogue's workload)."""
    sname = PurePosixPath(test).name
    workload = sname.removesuffix(".lua")
    if workload not in catalog.names:
        raise ConfigError(f"Cannot find benchmark '{test}': no such built-in test, file or module")
    return sname, workload


def _command(positionals: list[str]) -> tuple[str, str]:
    if len(positionals) > 2:
        raise ConfigError(f"Unrecognized command line argument: {positionals[2]}")
    if not positionals:
        raise ConfigError(
            "no test name; usage: oltplab sysbench [options] TESTNAME prepare|run|cleanup|help"
        )
    if len(positionals) == 1:
        raise ConfigError(f"Command is required. Supported commands: {', '.join(COMMANDS)}")
    test, command = positionals
    if command in NOT_YET_COMMANDS:
        raise ConfigError(f"the '{command}' command is not supported by oltplab yet")
    if command not in COMMANDS:
        raise ConfigError(f"Unknown command: {command}; supported: {', '.join(COMMANDS)}")
    return test, command


def _script_options(workload: str) -> Mapping[str, SysbenchOption]:
    """sysbench's options plus those of the workload's script (sysbench-tpcc's)."""
    return SYSBENCH_OPTIONS | tpcc.SCRIPT_OPTIONS if workload == tpcc.WORKLOAD else SYSBENCH_OPTIONS


def _number(given: _Given) -> float:
    try:
        return float(given.value or "")
    except ValueError:
        raise ConfigError(f"Invalid value for the '{given.name}' option: '{given.value}'") from None


def _verbosity(given: _Given) -> int:
    value = given.value or ""
    if not value.isdigit() or int(value) > VERBOSITY_MAX:
        raise ConfigError(
            f"Invalid value for the 'verbosity' option: give 0 to {VERBOSITY_MAX} ({given.flag}=3)"
        )
    return int(value)


def _is_default(given: _Given, default: str, is_bool: bool) -> bool:
    value = "on" if given.value is None else given.value
    if is_bool:
        as_bool = OptionDef(given.name, "bool", False, "").coerce
        return bool(as_bool(value) == as_bool(default))
    try:
        return float(value) == float(default)
    except ValueError:
        return value.lower() == default.lower()


class _Collector:
    """Sorts the options of one command line into their destinations."""

    def __init__(
        self, workload_defs: Mapping[str, OptionDef], sysbench: Mapping[str, SysbenchOption]
    ) -> None:
        self.defs = workload_defs
        self.sysbench = sysbench
        self.options: dict[str, str] = {}
        self.connection: dict[str, str] = {}
        self.warnings: list[str] = []
        self.out: Path | None = None
        self.verbosity = VERBOSITY_NOTICE
        self._aliases: list[tuple[_Given, str]] = []

    def value_of(self, given: _Given, is_bool: bool) -> str:
        if given.value is not None:
            return given.value
        if is_bool:
            return "on"
        raise ConfigError(f"option {given.flag} needs a value: {given.flag}=VALUE")

    def add(self, given: _Given) -> None:
        if given.name in self.defs:  # the catalogue first: it may gain sysbench's names
            d = self.defs[given.name]
            self.options[given.name] = self.value_of(given, d.type == "bool")
            return
        sb = self.sysbench.get(given.name)
        if sb is None:
            raise ConfigError(f"invalid option: {given.flag}")
        if sb.role is Role.CONNECTION:
            self.connection[given.name] = self.value_of(given, sb.is_bool)
        elif sb.role is Role.ALIAS:
            if _number(given) > float(sb.default):
                self._aliases.append((given, sb.target))
        elif sb.role is Role.NOT_IMPLEMENTED:
            if not _is_default(given, sb.default, sb.is_bool):
                self.warnings.append(f"{given.flag} is not implemented by oltplab; ignored")
        elif sb.role is Role.UNSUPPORTED:
            if not _is_default(given, sb.default, sb.is_bool):
                raise ConfigError(f"{given.flag} is not supported by oltplab: {sb.note}")
        elif given.name == "out":
            self.out = Path(self.value_of(given, False))
        elif given.name == "verbosity":
            self.verbosity = _verbosity(given)
        # Role.IGNORED, and --test (read before): nothing to do

    def finish(self, workload: str) -> None:
        """Aliases override their new names, as in sysbench; then sysbench's defaults."""
        for given, target in self._aliases:
            self.warnings.append(f"{given.flag} is deprecated, use {flag_of(target)} instead")
            self.add(_Given(target, given.value, flag_of(target)))
        defaults = dict(SYSBENCH_DEFAULTS)
        if workload == tpcc.WORKLOAD:
            defaults |= tpcc.script_defaults(self.connection.get("db_driver", "sqlite"))
        for name, value in defaults.items():
            if name in self.defs:
                self.options.setdefault(name, value)


def parse_argv(args: Sequence[str], catalog: Catalog) -> Invocation:
    """Reads `oltplab sysbench ARGS` (without `--help`/`--version`, handled before).

    Raises ConfigError with sysbench's message where sysbench has one; a database URL that
    message quotes (a misplaced one) is shown without its password.
    """
    try:
        return _parse_argv(args, catalog)
    except ConfigError as e:
        raise ConfigError(without_url_secrets(str(e))) from None


def _parse_argv(args: Sequence[str], catalog: Catalog) -> Invocation:
    every = catalog.all_options()

    def is_bool(name: str) -> bool:
        if name in every:
            return every[name].type == "bool"
        sb = SYSBENCH_OPTIONS.get(name) or tpcc.SCRIPT_OPTIONS.get(name)
        return sb is not None and sb.is_bool

    def is_known(name: str) -> bool:
        return name in every or name in SYSBENCH_OPTIONS or name in tpcc.SCRIPT_OPTIONS

    positionals, given = split_args(args, is_bool, is_known)
    warnings: list[str] = []
    if any(g.name == "test" and not g.value for g in given):
        raise ConfigError("option --test needs a value: --test=TESTNAME, or give TESTNAME alone")
    tests = [g.value for g in given if g.name == "test" and g.value]
    if tests:
        warnings.append(
            "the --test option is deprecated. You can pass a script name or path "
            "on the command line without any options."
        )
        positionals = [tests[-1], *positionals]
    test, command = _command(positionals)
    sname, workload = _workload(test, catalog)
    if command == "check" and workload != tpcc.WORKLOAD:
        raise ConfigError(f"Unknown command: check; only sysbench-tpcc ({tpcc.WORKLOAD}) has it")
    collector = _Collector(catalog.options_for(workload), _script_options(workload))
    for g in given:
        collector.add(g)
    collector.finish(workload)
    return Invocation(
        test=sname,
        workload=workload,
        command=command,
        options=collector.options,
        connection=collector.connection,
        out=collector.out,
        warnings=(*warnings, *collector.warnings),
        verbosity=collector.verbosity,
    )
