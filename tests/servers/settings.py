"""How the tests' private servers are configured (tests/conftest.py, with_servers.py)."""

from dataclasses import replace

from oltplab.servers import ServerSettings

# Room for issue 3's 2,000-connection test, with a few to spare for the tests' own clients;
# TLS so that the drivers' TLS paths are tested too (`tls_url`).
TEST_SERVER_SETTINGS = ServerSettings(max_connections=2200, tls=True)
# PostgreSQL also loads pg_stat_statements (part of Debian's postgresql-N package), so that tests
# count the statements the server ran per statement text (TPC-C's per-profile counts).
PG_TEST_SERVER_SETTINGS = replace(
    TEST_SERVER_SETTINGS, variables={"shared_preload_libraries": "pg_stat_statements"}
)

# Where with_servers.py's running servers are (its `mariadb` and `postgresql` subdirectories),
# for pytest to take instead of starting its own (tests/conftest.py).
SHARED_SERVERS_ENV = "OLTPLAB_TEST_SERVERS_DIR"
