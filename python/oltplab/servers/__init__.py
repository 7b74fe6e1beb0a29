"""Database servers under test, run by oltplab from private directories on loopback ports.

    from oltplab.servers import MariaDBServer, ServerSettings
    with MariaDBServer(Path("/var/tmp/mdb"), ServerSettings(max_connections=12000)) as server:
        oltplab.run("oltp_read_only", db=server.url, threads=10000)

A server started in one process is found again from its directory by `open_server`, which is
how `oltplab server stop|status` reach a server that `oltplab server start` left running.
See docs/servers.md.
"""

from pathlib import Path

from oltplab.exceptions import ConfigError
from oltplab.servers.base import ManagedServer
from oltplab.servers.mariadb import MariaDBServer
from oltplab.servers.postgres import PostgresServer
from oltplab.servers.settings import ConfigValue, ServerSettings
from oltplab.servers.state import read_state

SERVER_CLASSES: dict[str, type[ManagedServer]] = {
    MariaDBServer.engine: MariaDBServer,
    PostgresServer.engine: PostgresServer,
}


def create_server(
    engine: str, base_dir: Path, settings: ServerSettings | None = None
) -> ManagedServer:
    """A server of `engine` ("mariadb" or "postgresql") in `base_dir` (not started)."""
    cls = SERVER_CLASSES.get(engine)
    if cls is None:
        raise ConfigError(
            f"unknown server engine '{engine}'; choose one of: {', '.join(SERVER_CLASSES)}"
        )
    return cls(base_dir, settings)


def open_server(base_dir: Path) -> ManagedServer:
    """The server started earlier in `base_dir` (running or not), with its stored settings."""
    stored = read_state(Path(base_dir))
    if stored is None:
        raise ConfigError(
            f"no oltplab server in {base_dir} (no server.json); start one there first"
        )
    return create_server(stored[0], base_dir)


__all__ = [
    "SERVER_CLASSES",
    "ConfigValue",
    "ManagedServer",
    "MariaDBServer",
    "PostgresServer",
    "ServerSettings",
    "create_server",
    "open_server",
]
