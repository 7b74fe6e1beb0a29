"""sysbench's connection options -> the --db URL the engine takes.

sysbench 1.0.20's defaults (reference/sysbench.md §2.9): --db-driver=mysql; MySQL on
localhost:3306, PostgreSQL on localhost:5432; user sbtest, empty password, database
sbtest. User, password and database are percent-encoded, so any character survives.

Two rules of the C client libraries that sysbench inherits are kept, so that the same
command line reaches the same server:
- MySQL: a socket (--mysql-socket) wins over host and port; and host `localhost` means
  the client's default Unix socket ($MYSQL_UNIX_PORT, else /run/mysqld/mysqld.sock, as
  Debian's libmariadb), not TCP: pass --mysql-host=127.0.0.1 for TCP.
- PostgreSQL: a host starting with '/' is the directory of the server's socket.
oltplab's extension: --db-driver=sqlite with --sqlite-db=PATH.
"""

import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

from oltplab.catalog import OptionDef
from oltplab.defaultdb import sqlite_url
from oltplab.exceptions import ConfigError
from oltplab.redact import userinfo

DRIVERS = ("mysql", "pgsql", "sqlite")
DEFAULT_MYSQL_SOCKET = "/run/mysqld/mysqld.sock"
_DEFAULT_PORTS = {"mysql": 3306, "pgsql": 5432}


def _one(connection: Mapping[str, str], name: str, default: str) -> str:
    """A single value: sysbench's round-robin lists of hosts/ports are not supported."""
    value = connection.get(name, default)
    if name in ("mysql_host", "mysql_port", "mysql_socket") and "," in value:
        flag = "--" + name.replace("_", "-")
        raise ConfigError(
            f"{flag}: a list (connections spread round-robin) is not supported by oltplab "
            "yet; give one value"
        )
    return value


def _port(connection: Mapping[str, str], driver: str) -> int:
    name = f"{driver}_port"
    text = _one(connection, name, str(_DEFAULT_PORTS[driver]))
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 0 < port < 65536:
        raise ConfigError(f"Invalid value for the '{name}' option: '{text}'")
    return port


def _flag(connection: Mapping[str, str], name: str) -> bool:
    text = connection.get(name, "off")
    value = OptionDef(name, "bool", False, "").coerce(text)
    if not isinstance(value, bool):
        raise ConfigError(f"Invalid value for the '{name}' option: '{text}'")
    return value


def _authority(user: str, password: str, host: str, port: int) -> str:
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    return f"{userinfo(user, password or None)}{host}:{port}"


def _mysql(connection: Mapping[str, str], env: Mapping[str, str]) -> str:
    host = _one(connection, "mysql_host", "localhost")
    socket = _one(connection, "mysql_socket", "")
    if not socket and host == "localhost":
        socket = env.get("MYSQL_UNIX_PORT") or DEFAULT_MYSQL_SOCKET
    authority = _authority(
        connection.get("mysql_user", "sbtest"),
        connection.get("mysql_password", ""),
        "localhost" if socket else host,
        _port(connection, "mysql"),
    )
    params = []
    if socket:
        params.append("socket=" + quote(socket, safe="/"))
    if _flag(connection, "mysql_ssl"):
        params.append("ssl=on")
    query = "?" + "&".join(params) if params else ""
    return f"mysql://{authority}/{quote(connection.get('mysql_db', 'sbtest'), safe='')}{query}"


def _pgsql(connection: Mapping[str, str]) -> str:
    host = connection.get("pgsql_host", "localhost")
    socket_dir = host if host.startswith("/") else ""
    authority = _authority(
        connection.get("pgsql_user", "sbtest"),
        connection.get("pgsql_password", ""),
        "localhost" if socket_dir else host,
        _port(connection, "pgsql"),
    )
    query = "?host=" + quote(socket_dir, safe="/") if socket_dir else ""
    db = quote(connection.get("pgsql_db", "sbtest"), safe="")
    return f"postgresql://{authority}/{db}{query}"


def _sqlite(connection: Mapping[str, str]) -> str:
    path = connection.get("sqlite_db", "")
    if not path:
        raise ConfigError("--db-driver=sqlite needs the database file: --sqlite-db=PATH")
    return sqlite_url(Path(path))


def db_url(connection: Mapping[str, str], env: Mapping[str, str] | None = None) -> str:
    """The --db URL for the options in `connection` (names with underscores)."""
    driver = connection.get("db_driver", "mysql")
    if driver == "mysql":
        return _mysql(connection, os.environ if env is None else env)
    if driver == "pgsql":
        return _pgsql(connection)
    if driver == "sqlite":
        return _sqlite(connection)
    raise ConfigError(
        f"invalid database driver name: '{driver}'; oltplab knows {', '.join(DRIVERS)}"
    )
