"""sysbench 1.0.20's own options (`sysbench --help`, reference/sysbench.md §2.1, §2.9) and
what the drop-in mode does with each. Workload options (--tables, --point-selects, ...)
and the general ones oltplab shares (--threads, --time, --percentile, ...) come from the
engine's catalogue instead; names here use underscores, as catalog.normalise_name makes.
"""

from dataclasses import dataclass
from enum import Enum


class Role(Enum):
    CONNECTION = "connection"  # becomes part of the --db URL (target.py)
    ALIAS = "alias"  # a deprecated name for a catalogue option
    IGNORED = "ignored"  # accepted; changes nothing oltplab measures or prints
    NOT_IMPLEMENTED = "not_implemented"  # accepted with a warning when not the default
    UNSUPPORTED = "unsupported"  # refused (exit 2) when not the default
    OWN = "own"  # oltplab's additions, or handled by the argv reader itself


@dataclass(frozen=True)
class SysbenchOption:
    role: Role
    is_bool: bool = False
    default: str = ""  # sysbench's default, to tell whether a value changes anything
    target: str = ""  # ALIAS: the option it stands for
    note: str = ""  # UNSUPPORTED: what to do instead


def _conn(is_bool: bool = False) -> SysbenchOption:
    return SysbenchOption(Role.CONNECTION, is_bool=is_bool)


SYSBENCH_OPTIONS: dict[str, SysbenchOption] = {
    # General database options; --db-ps-mode is in the catalogue.
    "db_driver": _conn(),
    "db_debug": SysbenchOption(Role.IGNORED, is_bool=True),
    # MySQL driver; --mysql-ignore-errors and --mysql-storage-engine are in the catalogue.
    "mysql_host": _conn(),
    "mysql_port": _conn(),
    "mysql_socket": _conn(),
    "mysql_user": _conn(),
    "mysql_password": _conn(),
    "mysql_db": _conn(),
    "mysql_ssl": _conn(is_bool=True),
    "mysql_ssl_cipher": SysbenchOption(Role.NOT_IMPLEMENTED),
    "mysql_compression": SysbenchOption(Role.NOT_IMPLEMENTED, is_bool=True, default="off"),
    "mysql_debug": SysbenchOption(Role.IGNORED, is_bool=True),
    "mysql_dry_run": SysbenchOption(
        Role.UNSUPPORTED, is_bool=True, default="off", note="oltplab always executes"
    ),
    # PostgreSQL driver.
    "pgsql_host": _conn(),
    "pgsql_port": _conn(),
    "pgsql_user": _conn(),
    "pgsql_password": _conn(),
    "pgsql_db": _conn(),
    # oltplab's extension: --db-driver=sqlite --sqlite-db=PATH.
    "sqlite_db": _conn(),
    # General options; --rate is in the catalogue.
    "report_checkpoints": SysbenchOption(
        Role.UNSUPPORTED, note="remove it; each run is one report"
    ),
    "config_file": SysbenchOption(
        Role.UNSUPPORTED, note="give the options on the command line instead"
    ),
    "forced_shutdown": SysbenchOption(Role.NOT_IMPLEMENTED, default="off"),
    "debug": SysbenchOption(Role.NOT_IMPLEMENTED, is_bool=True, default="off"),
    "validate": SysbenchOption(Role.NOT_IMPLEMENTED, is_bool=True, default="off"),
    "thread_stack_size": SysbenchOption(Role.IGNORED),
    # Every connection is opened (each with its connect timeout) before the clock starts.
    "thread_init_timeout": SysbenchOption(Role.IGNORED),
    # No LuaJIT: the workloads are compiled in.
    "luajit_cmd": SysbenchOption(Role.IGNORED),
    "verbosity": SysbenchOption(Role.OWN),  # below 3: no report (argv.py, commands/sysbench.py)
    "num_threads": SysbenchOption(Role.ALIAS, default="1", target="threads"),
    "max_time": SysbenchOption(Role.ALIAS, default="0", target="time"),
    "max_requests": SysbenchOption(Role.ALIAS, default="0", target="events"),
    "tx_rate": SysbenchOption(Role.ALIAS, default="0", target="rate"),
    "test": SysbenchOption(Role.OWN),  # deprecated --test=NAME: the test name
    "out": SysbenchOption(Role.OWN),  # oltplab: also write a run directory
}

# Defaults that differ between sysbench and oltplab's native commands.
SYSBENCH_DEFAULTS = {"report_interval": "0"}  # oltplab's `run` reports every second
