"""What the drop-in mode prints besides the reports (report/sysbench_text.py): the banner,
the headers of prepare and cleanup, `TESTNAME help`, `--help`, and its stderr lines.

The banner keeps sysbench's shape, `sysbench 1.0.20 (using ...)`, so that scripts which
read the version from the first line still find 1.0.20 (the command line and the output
are 1.0.20's), while the parenthesis says what actually ran.
"""

from oltplab._version import __version__
from oltplab.catalog import Catalog, OptionDef

SYSBENCH_VERSION = "1.0.20"
BANNER = f"sysbench {SYSBENCH_VERSION} (using oltplab {__version__})"

# sysbench lists these among its general options (`sysbench --help`), not the script's.
_GENERAL_PREFIXES = ("rand_",)
_FORMATS = {"bool": "[=on|off]", "list": "=[LIST,...]", "str": "=STRING"}  # else "=N"


def command_header(command: str, threads: int) -> str:
    """What sysbench prints before prepare's or cleanup's messages: the banner and, when
    prepare runs on several threads (a parallel command), the worker start-up line."""
    text = BANNER + "\n\n"
    if command == "prepare" and threads > 1:
        text += "Initializing worker threads...\n\n"
    return text


def _help_lines(defs: list[OptionDef]) -> list[str]:
    """sb_print_options: `--name=FMT` padded to the longest plus one, help, [default]."""
    named = [(d, d.name + _FORMATS.get(d.type, "=N")) for d in sorted(defs, key=lambda d: d.name)]
    width = max((len(flag) for _, flag in named), default=0) + 1
    lines = []
    for d, flag in named:
        default = d.default_text
        lines.append(f"  --{flag:<{width}}{d.help}" + (f" [{default}]" if default else ""))
    return lines


def workload_help(test: str, workload: str, catalog: Catalog) -> str:
    """`sysbench TESTNAME help`: the banner, then the script's options, as sysbench 1.0.20."""
    general = {d.name for d in catalog.general}
    defs = [
        d
        for d in catalog.workload(workload).options
        if d.name not in general and not d.name.startswith(_GENERAL_PREFIXES)
    ]
    lines = [BANNER, "", f"{test} options:", *_help_lines(defs), "", ""]
    return "\n".join(lines)


def usage(catalog: Catalog) -> str:
    """`oltplab sysbench --help`."""
    return f"""\
usage: oltplab sysbench [options] TESTNAME prepare|run|cleanup|help

sysbench 1.0.20's command line for the OLTP family, with sysbench's output on stdout, so
that existing scripts and parsers keep working: replace `sysbench` by `oltplab sysbench`.

TESTNAME: {", ".join(catalog.names)}
  (also a path or file name ending in TESTNAME.lua: oltplab runs its own implementation)
options: as sysbench's (`oltplab sysbench TESTNAME help` lists a workload's); the general
  ones --threads, --time, --events, --rate, --report-interval (default 0), --percentile,
  --histogram, --rand-*, and --db-driver=mysql|pgsql with --mysql-host, --mysql-port,
  --mysql-socket, --mysql-user, --mysql-password, --mysql-db, --mysql-ssl,
  --mysql-ignore-errors, --pgsql-host, --pgsql-port, --pgsql-user, --pgsql-password,
  --pgsql-db, --db-ps-mode. --opt=value or --opt value; dashes and underscores alike.
oltplab's additions:
  --db-driver=sqlite --sqlite-db=PATH   an embedded SQLite file
  --out DIR                             `run` also writes a run directory there
  and every option of `oltplab run`: `oltplab run --help` lists them
not supported yet: --report-checkpoints, --config-file, prewarm.

exit status: 0 success, 1 the run failed, 2 bad input, 130 interrupted.
See docs/sysbench-compat.md for what differs from sysbench, and why.
"""


def fatal_line(message: str) -> str:
    """An error as sysbench words it, on one line."""
    return "FATAL: " + " ".join(message.split())


def warning_line(message: str) -> str:
    return "WARNING: " + " ".join(message.split())
