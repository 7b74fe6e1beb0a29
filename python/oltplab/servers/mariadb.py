"""MariaDB (and MySQL-compatible) servers under test, from the distribution's binaries.

Tested with Debian 12's MariaDB 10.11. The data directory is created by mariadb-install-db;
the server reads only the my.cnf oltplab writes (--defaults-file), never /etc/mysql.
Administration goes through the `mariadb` client over the Unix socket, as the invoking OS
user, whom mariadb-install-db makes an administrator authenticated by socket credentials.
"""

import contextlib
import os
import re
import resource
import signal
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import ClassVar
from urllib.parse import quote

from oltplab._fsutil import empty_dir
from oltplab.exceptions import ServerError
from oltplab.redact import userinfo
from oltplab.servers import process
from oltplab.servers.base import ManagedServer
from oltplab.servers.binaries import find_program
from oltplab.servers.config_files import render_mycnf, write_text
from oltplab.servers.net import LOOPBACK
from oltplab.servers.osuser import current_user, give_to
from oltplab.servers.settings import ConfigValue
from oltplab.servers.tls import ensure_certificate

# MariaDB's own default, stated so that the open-files arithmetic below is visible. InnoDB
# keeps no file open per cached table, so more buys nothing for sysbench's few tables.
_TABLE_OPEN_CACHE = 2000
# sysbench prepares about 10 statements per table per connection; the server's default
# limit (16382) makes it fail with error 1461 at a few thousand connections.
_PREPARED_PER_CONNECTION = 128
_MAX_BACK_LOG = 65535
_CLIENT_TIMEOUT_S = 120.0
_INSTALL_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class _Programs:
    server: Path
    install_db: Path
    client: Path


class MariaDBServer(ManagedServer):
    engine = "mariadb"
    display_name = "MariaDB"
    url_scheme = "mysql"
    tls_parameter = "ssl=on"
    daemon_account = "mysql"
    managed_variables: ClassVar[frozenset[str]] = frozenset(
        {"datadir", "socket", "port", "bind_address", "pid_file", "log_error", "user",
         "basedir", "skip_networking", "max_connections"}
    )  # fmt: skip

    @property
    def config_file(self) -> Path:
        return self.base_dir / "my.cnf"

    @property
    def pid_file(self) -> Path:
        return self.run_dir / "mariadbd.pid"

    @property
    def socket_path(self) -> Path:
        return self.run_dir / "mariadbd.sock"

    @property
    def socket_url(self) -> str:
        s = self.settings
        socket = quote(str(self.socket_path), safe="/")
        return f"mysql://{userinfo(s.user, self.password)}localhost/{s.database}?socket={socket}"

    @cached_property
    def _programs(self) -> _Programs:
        bin_dir = self.settings.bin_dir
        return _Programs(
            server=find_program(["mariadbd", "mysqld"], bin_dir=bin_dir, what="MariaDB's server"),
            install_db=find_program(
                ["mariadb-install-db", "mysql_install_db"], bin_dir=bin_dir, what="its installer"
            ),
            client=find_program(["mariadb", "mysql"], bin_dir=bin_dir, what="MariaDB's client"),
        )

    def _find_programs(self) -> None:
        _ = self._programs

    def is_initialised(self) -> bool:
        return (self.data_dir / "mysql").is_dir()

    def _initialise(self) -> None:
        self._write_config()  # mariadb-install-db reads the data directory and variables from it
        argv: list[str | Path] = [
            self._programs.install_db,
            f"--defaults-file={self.config_file}",
            "--skip-test-db",
            "--auth-root-authentication-method=socket",
            # The administrator is whoever runs oltplab, authenticated by the socket's peer uid.
            f"--auth-root-socket-user={current_user().name}",
        ]
        if not self.os_user.is_current:
            argv.append(f"--user={self.os_user.name}")
        if self.settings.bin_dir is not None:  # a tarball install: share/ is beside bin/
            argv.append(f"--basedir={self.settings.bin_dir.parent}")
        since = process.log_size(self.log_file)
        # mariadb-install-db's bootstrap server has been seen to crash (signal 11 in its
        # temporary-table cleanup) on a heavily loaded machine: one more try from scratch.
        for attempt in (1, 2):
            try:
                process.run(
                    argv,
                    user=current_user(),
                    what="mariadb-install-db",
                    timeout_s=_INSTALL_TIMEOUT_S,
                    cwd=self.base_dir,
                    log_file=self.log_file,
                )
                return
            except BaseException as e:  # Ctrl-C included
                empty_dir(self.data_dir)  # a half-made data directory must not pass for ready
                if not isinstance(e, ServerError):
                    raise
                if attempt == 2:
                    problem = str(e).split(":", 1)[0]  # "mariadb-install-db failed (exit code 1)"
                    raise self._error(
                        f"could not create its data directory ({problem})", since
                    ) from None

    def _write_config(self) -> None:
        client = {"socket": str(self.socket_path), "user": current_user().name}
        write_text(self.config_file, render_mycnf({"mysqld": self._mysqld(), "client": client}))
        give_to(self.os_user, self.config_file)

    def _mysqld(self) -> dict[str, ConfigValue | None]:
        s = self.settings
        options: dict[str, ConfigValue | None] = {
            "datadir": str(self.data_dir),
            "socket": str(self.socket_path),
            "pid_file": str(self.pid_file),
            "log_error": str(self.log_file),
            # Temporary tables' files in the server's own directory, not the shared /tmp: there
            # other processes' files (a full disk, names left by a killed server) made its
            # temporary-table creation fail, and 10.11 crashes cleaning up after that failure
            # (signal 11 in ha_maria::drop_table, MDEV-30118's path).
            "tmpdir": str(self.run_dir),
            "port": self.port,
            "bind_address": LOOPBACK,
            "skip_name_resolve": None,  # no DNS lookups on connect: accounts name 127.0.0.1
            "max_connections": s.max_connections,
            # Defaults sized to max_connections; settings.variables override them.
            "max_prepared_stmt_count": max(16382, s.max_connections * _PREPARED_PER_CONNECTION),
            "table_open_cache": _TABLE_OPEN_CACHE,
            # A floor: one descriptor per connection and two per cached table. MariaDB asks
            # the kernel for more (up to 5 per connection) and, when the hard limit refuses,
            # shrinks the table cache, then max_connections (checked in _configure).
            "open_files_limit": s.max_connections + 2 * _TABLE_OPEN_CACHE + 64,
            # Thousands of clients connecting at once overflow the default accept queue
            # (at most 900), and the overflow waits for TCP SYN retries, a second or more.
            "back_log": min(s.max_connections, _MAX_BACK_LOG),
        }
        if s.bin_dir is not None:  # a tarball install: share/ (error messages) is beside bin/
            options["basedir"] = str(s.bin_dir.parent)
        if s.tls:
            cert, key = ensure_certificate(self.tls_dir, self.os_user)
            options |= {"ssl_cert": str(cert), "ssl_key": str(key)}
        for name, value in s.variables.items():
            options[name.replace("-", "_")] = value
        return options

    def _launch(self, since_byte: int) -> None:
        for stale in (self.socket_path, self.pid_file):  # left by a crash
            stale.unlink(missing_ok=True)
        argv: list[str | Path] = [self._programs.server, f"--defaults-file={self.config_file}"]
        if not self.os_user.is_current:
            # Started as root, mariadbd raises its open-files limit, then becomes this user.
            argv.append(f"--user={self.os_user.name}")
        self._proc = process.spawn(
            argv, user=current_user(), log_file=self.log_file, cwd=self.base_dir
        )
        self._wait_until(self._answers, since_byte)

    def _answers(self) -> bool:
        if not self.socket_path.exists():
            return False
        try:
            self.query("SELECT 1")
        except ServerError:
            return False
        return True

    def _configure(self) -> None:
        port, max_connections, open_files = self.query(
            "SELECT @@port, @@max_connections, @@open_files_limit"
        )[0]
        if int(port) != self.port:
            raise self._error(f"listens on port {port}, not {self.port}")
        want = self.settings.max_connections
        if int(max_connections) < want:
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            raise self._error(
                f"runs with max_connections={max_connections}, not {want}, because it got only "
                f"{open_files} open files (the hard limit here is {hard}); raise the hard "
                "limit (`ulimit -Hn`, LimitNOFILE=) or ask for fewer connections"
            )
        self.query(self._account_sql())

    def _account_sql(self) -> str:
        s = self.settings
        accounts = ", ".join(f"'{s.user}'@'{host}'" for host in ("localhost", LOOPBACK))
        # 'localhost' is the Unix socket, 127.0.0.1 is TCP (names are not resolved).
        creates = "".join(
            f"CREATE USER IF NOT EXISTS '{s.user}'@'{host}';"
            f"ALTER USER '{s.user}'@'{host}' IDENTIFIED BY '{self.password}';"
            for host in ("localhost", LOOPBACK)
        )
        return (
            f"CREATE DATABASE IF NOT EXISTS `{s.database}`;{creates}"
            f"GRANT ALL ON `{s.database}`.* TO {accounts};"
            # Reading the server's state for run.json and server.csv: SHOW ENGINE INNODB
            # STATUS, every thread in the process list, performance_schema's tables.
            f"GRANT PROCESS ON *.* TO {accounts};"
            f"GRANT SELECT ON performance_schema.* TO {accounts};"
        )

    def query(self, sql: str, database: str | None = None) -> list[list[str]]:
        argv: list[str | Path] = [
            self._programs.client,
            f"--defaults-file={self.config_file}",
            "--batch",
            "--skip-column-names",
            "--connect-timeout=10",
            "--execute",
            sql,
        ]
        if database is not None:
            argv.insert(2, f"--database={database}")
        out = process.run(
            argv,
            user=current_user(),
            what=f"{self.display_name} client",
            timeout_s=_CLIENT_TIMEOUT_S,
            cwd=self.base_dir,
        )
        return [line.split("\t") for line in out.splitlines()]

    def recreate_database(self) -> None:
        name = self.settings.database
        # Grants on `sbtest`.* outlive the database; a forgotten connection holding a lock
        # makes this fail after a minute instead of waiting for a year (the default).
        self.query(
            "SET SESSION lock_wait_timeout = 60;"
            f"DROP DATABASE IF EXISTS `{name}`; CREATE DATABASE `{name}`"
        )

    def _shutdown(self, pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)  # a normal shutdown, as `mariadb-admin shutdown` asks

    def _read_version(self) -> str:
        out = process.run(
            [self._programs.server, "--version"],
            user=current_user(),
            what=f"{self._programs.server} --version",
            timeout_s=30,
            cwd=Path("/"),
        )
        found = re.search(r"Ver\s+(\S+)", out)
        return found.group(1) if found else out.strip()
