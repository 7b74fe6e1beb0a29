"""The PostgreSQL under test (the session's `postgres` fixture): reachable with the
credentials it hands out, configured as asked, private, on loopback only and never run as
root; and the whole life of a second server of a test's own."""

import os
import time
from pathlib import Path

import pytest

from oltplab.exceptions import ServerError
from oltplab.servers import PostgresServer, ServerSettings
from oltplab.servers.net import listening_addresses
from tests.servers.clients import psql_cli
from tests.servers.lifecycle import check_life

SMALL = {"shared_buffers": "16MB"}  # a test's own servers need little memory
BAD = ServerSettings(variables={**SMALL, "no_such_setting": 1})


def test_url_reaches_the_benchmark_database_over_tcp(postgres: PostgresServer) -> None:
    done = psql_cli(postgres.url, "SELECT current_user, current_database(), inet_server_addr()")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("|") == ["sbtest", "sbtest", "127.0.0.1\n"]


def test_socket_url_reaches_the_benchmark_database(postgres: PostgresServer) -> None:
    done = psql_cli(postgres.socket_url, "SELECT current_user, inet_server_addr() IS NULL")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "sbtest|t"  # no server address: the Unix socket


def test_tls_url_reaches_the_benchmark_database_over_tls(postgres: PostgresServer) -> None:
    sql = "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
    for url, encrypted in ((postgres.tls_url, "t"), (postgres.url, "f")):
        done = psql_cli(url, sql)
        assert (done.returncode, done.stdout.strip()) == (0, encrypted), done.stderr


@pytest.mark.parametrize("over", ["url", "socket_url", "tls_url"])
def test_a_wrong_password_is_refused(postgres: PostgresServer, over: str) -> None:
    url: str = getattr(postgres, over)
    done = psql_cli(url.replace(postgres.password, "wrong"), "SELECT 1")
    assert done.returncode != 0
    assert "password authentication failed" in done.stderr


def test_redacted_url_hides_the_password(postgres: PostgresServer) -> None:
    assert postgres.password not in postgres.redacted_url
    assert postgres.redacted_url == f"postgresql://sbtest:***@127.0.0.1:{postgres.port}/sbtest"


def test_settings_are_in_effect(postgres: PostgresServer) -> None:
    rows = postgres.query(
        "SELECT name, setting FROM pg_settings WHERE name IN "
        "('max_connections', 'listen_addresses', 'password_encryption', 'port') ORDER BY name"
    )
    assert rows == [
        ["listen_addresses", "127.0.0.1"],
        ["max_connections", str(postgres.settings.max_connections)],
        ["password_encryption", "scram-sha-256"],
        ["port", str(postgres.port)],
    ]


def test_listens_on_loopback_only(postgres: PostgresServer) -> None:
    assert listening_addresses(postgres.port) == {"127.0.0.1"}


def test_files_are_private_and_never_root(postgres: PostgresServer) -> None:
    for private in (postgres.data_dir, postgres.run_dir):
        st = private.stat()
        assert (st.st_mode & 0o777, st.st_uid) == (0o700, postgres.os_user.uid)
    assert (postgres.base_dir / "server.json").stat().st_mode & 0o777 == 0o600
    assert Path(f"/proc/{postgres.pid()}").stat().st_uid == postgres.os_user.uid != 0
    if os.geteuid() == 0:
        assert postgres.os_user.name == "postgres"


def test_benchmark_account_may_read_server_state(postgres: PostgresServer) -> None:
    # pg_read_all_stats: other sessions' queries are visible, not "<insufficient privilege>".
    sql = (
        "SELECT count(*) FILTER (WHERE query = '<insufficient privilege>'), "
        "count(*) FILTER (WHERE usename <> 'sbtest') > 0 FROM pg_stat_activity "
        "WHERE backend_type = 'client backend' OR usename IS NOT NULL"
    )
    done = psql_cli(postgres.url, sql)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("|")[0] == "0"
    for sql in ("SELECT sum(xact_commit) FROM pg_stat_database", "SHOW data_directory"):
        done = psql_cli(postgres.url, sql)
        assert done.returncode == 0, f"{sql}: {done.stderr}"


def test_recreate_database_empties_it(postgres_empty_db: PostgresServer) -> None:
    server = postgres_empty_db
    server.query("CREATE TABLE leftover (id INT PRIMARY KEY)", database="sbtest")
    server.recreate_database()
    assert server.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'") == []
    assert psql_cli(server.url, "CREATE TABLE t (id INT)").returncode == 0  # sbtest owns it


def test_a_running_server_is_not_started_twice(postgres: PostgresServer) -> None:
    with pytest.raises(ServerError, match="already runs"):
        postgres.start()


def test_life_of_a_second_server(postgres: PostgresServer, server_dir: Path) -> None:
    # 12,000 connections: what the 10,000-connection benchmark asks; it needs about 700 MB
    # of shared memory, so this also shows that the machine grants it.
    server = PostgresServer(server_dir, ServerSettings(max_connections=12000, variables=SMALL))
    began = time.monotonic()
    server.start()
    try:
        started_s = time.monotonic() - began
        assert server.port != postgres.port
        assert psql_cli(server.url, "SELECT 1").stdout.strip() == "1"
        assert server.query("SHOW max_connections") == [["12000"]]
        check_life(
            server,
            lambda settings: PostgresServer(server_dir, settings),
            ServerSettings(max_connections=50, variables=SMALL),
            lambda url: psql_cli(url, "SELECT 1").returncode == 0,
            BAD,
            'unrecognized configuration parameter "no_such_setting"',
        )
    finally:
        server.stop()
    assert started_s < 30, f"PostgreSQL took {started_s:.1f} s to start"


def test_md5_passwords_are_stored_and_asked_for_as_md5(server_dir: Path) -> None:
    variables = {**SMALL, "password_encryption": "md5"}
    server = PostgresServer(server_dir, ServerSettings(max_connections=20, variables=variables))
    server.start()
    try:
        stored = server.query(f"SELECT rolpassword FROM pg_authid WHERE rolname = '{server.user}'")
        assert stored[0][0].startswith("md5"), stored
        hba = (server.data_dir / "pg_hba.conf").read_text()
        assert "host all all 127.0.0.1/32 md5" in hba
        assert "scram" not in hba
        for url in (server.url, server.socket_url):
            assert psql_cli(url, "SELECT 1").stdout.strip() == "1"
            assert psql_cli(url.replace(server.password, "wrong"), "SELECT 1").returncode != 0
    finally:
        server.stop()
