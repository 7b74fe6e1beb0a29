"""The fault tests' servers: each test runs one of its own (a kill or a SIGSTOP must not hit
the session's shared servers), small, and not waiting for the disk at each commit."""

from pathlib import Path

from oltplab.servers import ManagedServer, MariaDBServer, PostgresServer, ServerSettings
from oltplab.servers.settings import ConfigValue

ENGINES = ("mariadb", "postgresql")
_VARIABLES: dict[str, dict[str, ConfigValue]] = {
    "mariadb": {"innodb_buffer_pool_size": "64M", "innodb_flush_log_at_trx_commit": 2},
    "postgresql": {"shared_buffers": "32MB", "fsync": "off", "synchronous_commit": "off"},
}


def own_server(engine: str, server_dir: Path) -> ManagedServer:
    """An unstarted server of `engine` in `server_dir` (use it as a context manager)."""
    settings = ServerSettings(max_connections=50, variables=_VARIABLES[engine])
    if engine == "mariadb":
        return MariaDBServer(server_dir, settings)
    return PostgresServer(server_dir, settings)
