from pathlib import Path

import pytest

from oltplab.exceptions import ConfigError, ServerError
from oltplab.servers import (
    ManagedServer,
    MariaDBServer,
    PostgresServer,
    ServerSettings,
    create_server,
)
from oltplab.servers.config_files import render_mycnf, render_pg_conf
from oltplab.servers.state import read_state, write_state


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"port": 70000}, "port 70000 is out of range"),
        ({"max_connections": 0}, "max_connections must be at least 1"),
        ({"user": "sb test"}, "user name 'sb test' is not a plain identifier"),
        ({"database": "x;drop"}, "database name"),
        ({"password": "p@ss word"}, "password may hold only"),
        ({"variables": {"a b": 1}}, "variable name 'a b' is not valid"),
        ({"variables": {"x": "1\nport=1"}}, "control character"),
        ({"variables": {"x": [1]}}, "has a list value"),
        ({"start_timeout_s": 0}, "timeouts must be positive"),
    ],
)
def test_bad_settings_are_refused(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ServerSettings(**settings)  # type: ignore[arg-type]


def test_settings_survive_json() -> None:
    settings = ServerSettings(
        port=3307, max_connections=5, variables={"a": 1, "b": "x", "c": True},
        password="pw", bin_dir=Path("/opt/mariadb/bin"),
    )  # fmt: skip
    assert ServerSettings.from_json(settings.to_json()) == settings


def test_state_keeps_port_and_password_across_handles(tmp_path: Path) -> None:
    write_state(tmp_path, "postgresql", ServerSettings(port=5433, password="pw"))
    assert read_state(tmp_path) == ("postgresql", ServerSettings(port=5433, password="pw"))
    assert (tmp_path / "server.json").stat().st_mode & 0o777 == 0o600
    # New settings for the same directory keep the stored port and password (same URL).
    server = PostgresServer(tmp_path, ServerSettings(max_connections=7))
    assert (server.port, server.password, server.settings.max_connections) == (5433, "pw", 7)
    with pytest.raises(ConfigError, match="holds a postgresql server, not mariadb"):
        MariaDBServer(tmp_path)


@pytest.mark.parametrize("cls", [MariaDBServer, PostgresServer])
def test_variables_oltplab_manages_are_refused(cls: type[ManagedServer], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"sets the \w+ variable 'port' itself"):
        cls(tmp_path, ServerSettings(variables={"port": 1}))
    if cls is MariaDBServer:
        with pytest.raises(ConfigError, match="'bind-address' itself"):
            cls(tmp_path, ServerSettings(variables={"bind-address": "0.0.0.0"}))


def test_unknown_engine_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown server engine 'oracle'; choose one of"):
        create_server("oracle", tmp_path)


def test_url_needs_a_start_first(tmp_path: Path) -> None:
    with pytest.raises(ServerError, match="has no password yet: start it"):
        _ = MariaDBServer(tmp_path).url
    with pytest.raises(ServerError, match="has no port yet: start it"):
        _ = MariaDBServer(tmp_path, ServerSettings(password="pw")).url


def test_render_mycnf() -> None:
    text = render_mycnf({"mysqld": {"port": 3307, "skip_name_resolve": None, "flag": False}})
    assert text.splitlines()[1:] == ["", "[mysqld]", "port=3307", "skip_name_resolve", "flag=OFF"]


def test_render_pg_conf_quotes_strings() -> None:
    text = render_pg_conf({"port": 5433, "fsync": False, "search_path": "it's \\ here"})
    assert text.splitlines()[1:] == [
        "port = 5433",
        "fsync = off",
        "search_path = 'it''s \\\\ here'",
    ]
