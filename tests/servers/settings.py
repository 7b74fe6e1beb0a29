"""How the tests' private servers are configured (tests/conftest.py, with_servers.py)."""

from oltplab.servers import ServerSettings

# Room for issue 3's 2,000-connection test, with a few to spare for the tests' own clients;
# TLS so that the drivers' TLS paths are tested too (`tls_url`).
TEST_SERVER_SETTINGS = ServerSettings(max_connections=2200, tls=True)
