"""Options that belong to one database driver and change nothing with another: said once,
never silently ignored (issue 11). The engine reads each only for its own driver."""

from collections.abc import Mapping
from typing import Any

# option -> (the drivers it works with, its value that changes nothing anyway, what to do)
_OWNERS: dict[str, tuple[frozenset[str], str, str]] = {
    "sql_log": (
        frozenset({"sqlite"}),
        "",
        "it logs SQLite's statements; a server's own log shows its statements: MariaDB's "
        "general_log, PostgreSQL's log_statement=all",
    ),
    "db_ps_mode": (
        frozenset({"mysql", "mariadb", "postgresql", "postgres", "pgsql"}),
        "auto",
        "it applies to MySQL and PostgreSQL; SQLite's statements are always prepared",
    ),
    "mysql_ignore_errors": (
        frozenset({"mysql", "mariadb"}),
        "1213,1020,1205",
        "it applies to MySQL and MariaDB; with PostgreSQL, deadlocks, serialization failures and "
        "unique violations are always retried, as in sysbench",
    ),
}
_DRIVER_NAMES = {"mariadb": "mysql", "postgres": "pgsql", "postgresql": "pgsql"}


def driver_of(db_url: str | None) -> str:
    """The URL's scheme; no URL is the default SQLite database."""
    return "sqlite" if db_url is None else db_url.split(":", 1)[0].lower()


def ignored_option_warnings(db_url: str | None, given: Mapping[str, Any]) -> list[str]:
    """One warning per option given (with an effective value) that `db_url`'s driver ignores."""
    driver = driver_of(db_url)
    warnings = []
    for name, (drivers, inert, instead) in _OWNERS.items():
        if name not in given or driver in drivers or driver == "fake":
            continue
        if str(given[name]).replace(" ", "") == inert:
            continue
        flag = "--" + name.replace("_", "-")
        shown = _DRIVER_NAMES.get(driver, driver)
        warnings.append(f"{flag} has no effect with the {shown} driver; ignored ({instead})")
    return warnings
