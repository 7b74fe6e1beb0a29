"""sysbench's connection options -> the --db URL; passwords encoded and redacted."""

from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from oltplab.exceptions import ConfigError
from oltplab.redact import redact_argv, redact_url
from oltplab.sysbench_compat import db_url
from oltplab.sysbench_compat.target import DEFAULT_MYSQL_SOCKET

NO_ENV: dict[str, str] = {}


@pytest.mark.parametrize(
    ("connection", "url"),
    [
        ({}, f"mysql://sbtest@localhost:3306/sbtest?socket={DEFAULT_MYSQL_SOCKET}"),
        ({"mysql_host": "127.0.0.1"}, "mysql://sbtest@127.0.0.1:3306/sbtest"),
        (
            {"mysql_host": "db1", "mysql_port": "3398", "mysql_user": "sb", "mysql_password": "pw"},
            "mysql://sb:pw@db1:3398/sbtest",
        ),
        (
            {"mysql_host": "127.0.0.1", "mysql_password": "p@ss:w/rd%?#", "mysql_db": "my db"},
            "mysql://sbtest:p%40ss%3Aw%2Frd%25%3F%23@127.0.0.1:3306/my%20db",
        ),
        (  # a socket wins over host and port, as in libmysqlclient
            {"mysql_host": "10.0.0.1", "mysql_socket": "/tmp/my sql.sock"},
            "mysql://sbtest@localhost:3306/sbtest?socket=/tmp/my%20sql.sock",
        ),
        ({"mysql_host": "::1", "mysql_ssl": "on"}, "mysql://sbtest@[::1]:3306/sbtest?ssl=on"),
        ({"mysql_host": "h", "mysql_ssl": "off"}, "mysql://sbtest@h:3306/sbtest"),
        ({"db_driver": "pgsql"}, "postgresql://sbtest@localhost:5432/sbtest"),
        (
            {"db_driver": "pgsql", "pgsql_host": "/run/postgresql", "pgsql_port": "5433"},
            "postgresql://sbtest@localhost:5433/sbtest?host=/run/postgresql",
        ),
        (
            {
                "db_driver": "pgsql",
                "pgsql_host": "pg",
                "pgsql_user": "u@x",
                "pgsql_password": "a:b",
            },
            "postgresql://u%40x:a%3Ab@pg:5432/sbtest",
        ),
        (  # options of the other driver are accepted and unused, as in sysbench
            {"db_driver": "pgsql", "mysql_host": "elsewhere"},
            "postgresql://sbtest@localhost:5432/sbtest",
        ),
    ],
)
def test_urls(connection: dict[str, str], url: str) -> None:
    assert db_url(connection, NO_ENV) == url


def test_localhost_follows_mysql_unix_port() -> None:
    url = db_url({}, {"MYSQL_UNIX_PORT": "/var/run/other.sock"})
    assert url.endswith("?socket=/var/run/other.sock")


def test_sqlite_path_is_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    url = db_url({"db_driver": "sqlite", "sqlite_db": "sb.db"}, NO_ENV)
    assert url == f"sqlite://{tmp_path.resolve()}/sb.db"


@pytest.mark.parametrize(
    ("connection", "message"),
    [
        ({"db_driver": "oracle"}, "invalid database driver name: 'oracle'"),
        ({"db_driver": "sqlite"}, "--sqlite-db=PATH"),
        ({"mysql_port": "abc"}, "'mysql_port' option: 'abc'"),
        ({"mysql_port": "70000"}, "'mysql_port' option: '70000'"),
        ({"db_driver": "pgsql", "pgsql_port": "0"}, "'pgsql_port' option: '0'"),
        ({"mysql_host": "a,b"}, "--mysql-host: a list"),
        ({"mysql_ssl": "maybe"}, "'mysql_ssl' option: 'maybe'"),
        ({"mysql_host": "h", "mysql_port": "1,2"}, "--mysql-port: a list"),
    ],
)
def test_bad_connection_options(connection: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        db_url(connection, NO_ENV)
    assert message in str(err.value)


@pytest.mark.parametrize("password", ["secret", "p@ss:w/rd", "a b%c", "ünï"])
def test_password_round_trip_and_redaction(password: str) -> None:
    url = db_url({"mysql_host": "h", "mysql_password": password}, NO_ENV)
    assert unquote(urlsplit(url).password or "") == password
    redacted = redact_url(url)
    assert "***" in redacted
    assert password not in redacted
    assert (urlsplit(url).password or "") not in redacted


def test_argv_redaction() -> None:
    argv = ["oltplab", "sysbench", "--mysql-password=s1", "--pgsql-password", "s2", "run"]
    assert redact_argv(argv) == [
        "oltplab",
        "sysbench",
        "--mysql-password=***",
        "--pgsql-password",
        "***",
        "run",
    ]
