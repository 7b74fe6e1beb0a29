"""The MariaDB under test (the session's `mariadb` fixture): reachable with the credentials
it hands out, configured as asked, private and on loopback only; and the whole life of a
second server of a test's own (start, restart, crash, stop, a bad configuration)."""

import os
import time
from pathlib import Path

import pytest

from oltplab.exceptions import ServerError
from oltplab.servers import MariaDBServer, ServerSettings
from oltplab.servers.net import listening_addresses
from tests.servers.clients import mariadb_cli
from tests.servers.lifecycle import assert_start_fails, check_life

SMALL = {"innodb_buffer_pool_size": "32M"}  # a test's own servers need little memory
BAD = ServerSettings(variables={**SMALL, "no_such_variable": 1})
BAD_MESSAGE = "unknown variable 'no_such_variable=1'"


def test_url_reaches_the_benchmark_database_over_tcp(mariadb: MariaDBServer) -> None:
    done = mariadb_cli(mariadb.url, "SELECT CURRENT_USER(), DATABASE()")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["sbtest@127.0.0.1", "sbtest"]


def test_socket_url_reaches_the_benchmark_database(mariadb: MariaDBServer) -> None:
    done = mariadb_cli(mariadb.socket_url, "SELECT CURRENT_USER(), DATABASE()")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["sbtest@localhost", "sbtest"]


def test_tls_url_reaches_the_benchmark_database_over_tls(mariadb: MariaDBServer) -> None:
    for url, encrypted in ((mariadb.tls_url, True), (mariadb.url, False)):
        done = mariadb_cli(url, "SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        assert done.returncode == 0, done.stderr
        assert (len(done.stdout.split()) == 2) == encrypted, done.stdout  # a cipher's name


def test_a_wrong_password_is_refused(mariadb: MariaDBServer) -> None:
    done = mariadb_cli(mariadb.url.replace(mariadb.password, "wrong"), "SELECT 1")
    assert done.returncode != 0
    assert "Access denied" in done.stderr


def test_redacted_url_hides_the_password(mariadb: MariaDBServer) -> None:
    assert mariadb.password not in mariadb.redacted_url
    assert mariadb.redacted_url == f"mysql://sbtest:***@127.0.0.1:{mariadb.port}/sbtest"


def test_settings_are_in_effect(mariadb: MariaDBServer) -> None:
    [row] = mariadb.query(
        "SELECT @@max_connections, @@max_prepared_stmt_count, @@bind_address, "
        "@@skip_name_resolve, @@open_files_limit, @@tmpdir"
    )
    max_connections = mariadb.settings.max_connections
    assert row[:4] == [str(max_connections), str(max_connections * 128), "127.0.0.1", "1"]
    assert int(row[4]) > max_connections
    assert row[5] == str(mariadb.run_dir)  # temporary tables stay out of the shared /tmp
    [[count]] = mariadb.query(
        "SELECT COUNT(*) FROM (SELECT table_name FROM information_schema.tables "
        "GROUP BY table_name ORDER BY MAX(create_time)) AS t"
    )  # an information_schema query that needs a temporary table works there
    assert int(count) > 0


def test_listens_on_loopback_only(mariadb: MariaDBServer) -> None:
    assert listening_addresses(mariadb.port) == {"127.0.0.1"}


def test_files_are_private_to_the_server_account(mariadb: MariaDBServer) -> None:
    for private in (mariadb.data_dir, mariadb.run_dir):
        st = private.stat()
        assert (st.st_mode & 0o777, st.st_uid) == (0o700, mariadb.os_user.uid)
    assert (mariadb.base_dir / "server.json").stat().st_mode & 0o777 == 0o600
    if os.geteuid() == 0:  # servers never run as root
        assert Path(f"/proc/{mariadb.pid()}").stat().st_uid == mariadb.os_user.uid != 0


def test_benchmark_account_may_read_server_state(mariadb: MariaDBServer) -> None:
    for sql in (
        "SHOW GLOBAL STATUS LIKE 'Com_select'",
        "SHOW GLOBAL VARIABLES LIKE 'max_connections'",
        "SHOW ENGINE INNODB STATUS",
        "SELECT COUNT(*) FROM performance_schema.global_status",
    ):
        done = mariadb_cli(mariadb.url, sql)
        assert done.returncode == 0, f"{sql}: {done.stderr}"


def test_recreate_database_empties_it(mariadb_empty_db: MariaDBServer) -> None:
    server = mariadb_empty_db
    server.query("CREATE TABLE leftover (id INT PRIMARY KEY)", database="sbtest")
    server.recreate_database()
    assert server.query("SHOW TABLES", database="sbtest") == []
    assert mariadb_cli(server.url, "CREATE TABLE t (id INT)").returncode == 0  # grants kept


def test_a_running_server_is_not_started_twice(mariadb: MariaDBServer) -> None:
    with pytest.raises(ServerError, match="already runs"):
        mariadb.start()


def test_life_of_a_second_server(mariadb: MariaDBServer, server_dir: Path) -> None:
    # 12,000 connections: what the 10,000-connection benchmark asks of the server.
    server = MariaDBServer(server_dir, ServerSettings(max_connections=12000, variables=SMALL))
    began = time.monotonic()
    server.start()
    try:
        started_s = time.monotonic() - began
        assert server.port != mariadb.port
        assert mariadb_cli(server.url, "SELECT 1").stdout.split() == ["1"]
        assert server.query("SELECT @@max_connections") == [["12000"]]
        check_life(
            server,
            lambda settings: MariaDBServer(server_dir, settings),
            ServerSettings(max_connections=50, variables=SMALL),
            lambda url: mariadb_cli(url, "SELECT 1").returncode == 0,
            BAD,
            BAD_MESSAGE,
        )
    finally:
        server.stop()
    assert started_s < 30, f"MariaDB took {started_s:.1f} s to start"


def test_a_bad_variable_fails_a_new_server_naming_the_log_file(server_dir: Path) -> None:
    assert_start_fails(MariaDBServer(server_dir, BAD), BAD_MESSAGE)  # in mariadb-install-db
