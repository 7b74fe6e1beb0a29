"""What a managed server is asked to be: its port, connection limit, extra server variables
and the benchmark account. Checked when built, so a bad value fails before anything runs."""

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from oltplab.exceptions import ConfigError

# A value of a server variable: my.cnf and postgresql.conf both take these four.
ConfigValue = str | int | float | bool

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
# Characters that need no escaping in a URL, a shell word or an SQL string literal.
_PASSWORD = re.compile(r"[A-Za-z0-9._~-]{1,64}")


@dataclass(frozen=True)
class ServerSettings:
    """Settings of one managed server (MariaDB or PostgreSQL).

    `port` and `password` left at None are chosen at the first start (a free loopback port,
    a random password) and then kept in the server's `server.json`, so the URL stays the same
    across restarts.
    """

    port: int | None = None
    max_connections: int = 1000
    # Extra server variables (my.cnf `[mysqld]` lines or postgresql.conf lines); they
    # override oltplab's defaults, e.g. {"innodb_buffer_pool_size": "4G"}.
    variables: Mapping[str, ConfigValue] = field(default_factory=dict)
    user: str = "sbtest"
    password: str | None = None
    database: str = "sbtest"
    # Where the server's programs are; None: the distribution's (Debian's) binaries.
    bin_dir: Path | None = None
    # Accept TLS too (a self-signed certificate): clients ask for it with `tls_url`.
    tls: bool = False
    start_timeout_s: float = 60.0
    # Generous: a server flushing a large buffer pool after a benchmark takes its time.
    stop_timeout_s: float = 300.0

    def __post_init__(self) -> None:
        if self.port is not None and not 1 <= self.port <= 65535:
            raise ConfigError(f"server port {self.port} is out of range; use 1-65535 or None")
        if self.max_connections < 1:
            raise ConfigError(f"max_connections must be at least 1, not {self.max_connections}")
        for what, name in (("user", self.user), ("database", self.database)):
            if not _IDENTIFIER.fullmatch(name):
                raise ConfigError(
                    f"server {what} name {name!r} is not a plain identifier; "
                    "use letters, digits and _ (at most 63)"
                )
        if self.password is not None and not _PASSWORD.fullmatch(self.password):
            raise ConfigError(
                "the server password may hold only letters, digits and . _ ~ - (1-64 of them)"
            )
        for name, value in self.variables.items():
            check_variable(name, value)
        if self.start_timeout_s <= 0 or self.stop_timeout_s <= 0:
            raise ConfigError("server start and stop timeouts must be positive")

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["variables"] = dict(self.variables)
        doc["bin_dir"] = None if self.bin_dir is None else str(self.bin_dir)
        return doc

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "ServerSettings":
        fields = dict(doc)
        if fields.get("bin_dir") is not None:
            fields["bin_dir"] = Path(fields["bin_dir"])
        try:
            return cls(**fields)
        except TypeError as e:  # a key this version does not know
            raise ConfigError(f"unreadable server settings ({e}); recreate the server") from e


def check_variable(name: str, value: object) -> None:
    """Rejects names and values that could break out of their configuration line."""
    if not _NAME.fullmatch(name):
        raise ConfigError(
            f"server variable name {name!r} is not valid; use letters, digits, _ . and -"
        )
    if not isinstance(value, str | int | float | bool):
        raise ConfigError(
            f"server variable {name} has a {type(value).__name__} value; "
            "use a string, a number or a boolean"
        )
    if isinstance(value, str) and any(ord(c) < 32 for c in value):
        raise ConfigError(f"server variable {name}'s value holds a control character; remove it")
