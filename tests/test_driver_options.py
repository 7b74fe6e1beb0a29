"""Options of one driver given with another are said once, never silently ignored."""

import pytest

from oltplab.driver_options import ignored_option_warnings


@pytest.mark.parametrize(
    ("db", "given", "flag"),
    [
        ("mysql://u@h/db", {"sql_log": "/tmp/q.log"}, "--sql-log"),
        ("postgresql://u@h/db", {"sql_log": "/tmp/q.log"}, "--sql-log"),
        ("sqlite:///x.db", {"db_ps_mode": "disable"}, "--db-ps-mode"),
        (None, {"db_ps_mode": "disable"}, "--db-ps-mode"),  # the default SQLite database
        ("postgresql://u@h/db", {"mysql_ignore_errors": "all"}, "--mysql-ignore-errors"),
        ("pgsql://u@h/db", {"mysql_ignore_errors": "1062"}, "--mysql-ignore-errors"),
    ],
)
def test_warns_once_per_ignored_option(db: str | None, given: dict[str, str], flag: str) -> None:
    warnings = ignored_option_warnings(db, given)
    assert len(warnings) == 1
    assert warnings[0].startswith(f"{flag} has no effect with the ")
    assert "ignored" in warnings[0]


@pytest.mark.parametrize(
    ("db", "given"),
    [
        ("sqlite:///x.db", {"sql_log": "/tmp/q.log"}),  # works there
        ("mysql://u@h/db", {"db_ps_mode": "disable", "mysql_ignore_errors": "all"}),
        ("mariadb://u@h/db", {"mysql_ignore_errors": "all"}),
        ("postgresql://u@h/db", {"db_ps_mode": "disable"}),
        ("sqlite:///x.db", {"db_ps_mode": "auto"}),  # the default changes nothing anyway
        ("postgresql://u@h/db", {"mysql_ignore_errors": "1213, 1020,1205"}),
        ("mysql://u@h/db", {"sql_log": ""}),
        ("mysql://u@h/db", {"threads": "8"}),
    ],
)
def test_silent_where_the_option_works(db: str, given: dict[str, str]) -> None:
    assert ignored_option_warnings(db, given) == []


def test_several_at_once() -> None:
    given = {"sql_log": "q.log", "mysql_ignore_errors": "all", "db_ps_mode": "disable"}
    warnings = ignored_option_warnings("postgresql://u@h/db", given)
    assert [w.split()[0] for w in warnings] == ["--sql-log", "--mysql-ignore-errors"]
