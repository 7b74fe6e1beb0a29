"""PostgreSQL servers under test, from the distribution's binaries.

Tested with Debian 12's PostgreSQL 15. PostgreSQL refuses to run as root, so when oltplab runs
as root every PostgreSQL program runs as the `postgres` account. initdb makes that account's
name the superuser, who administers over the Unix socket by peer authentication; everyone
else, the benchmark account included, authenticates with a password (SCRAM).
"""

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
from oltplab.servers.binaries import find_program, postgres_bin_dir
from oltplab.servers.config_files import render_pg_conf, write_text
from oltplab.servers.net import LOOPBACK
from oltplab.servers.osuser import current_user, give_to
from oltplab.servers.settings import ConfigValue
from oltplab.servers.tls import ensure_certificate

_CLIENT_TIMEOUT_S = 120.0
_INITDB_TIMEOUT_S = 300.0
# How pg_ctl outlives its own -t when it has to give up.
_PG_CTL_GRACE_S = 30.0


@dataclass(frozen=True)
class _Programs:
    initdb: Path
    pg_ctl: Path
    postgres: Path
    psql: Path


class PostgresServer(ManagedServer):
    engine = "postgresql"
    display_name = "PostgreSQL"
    url_scheme = "postgresql"
    tls_parameter = "sslmode=require"
    daemon_account = "postgres"
    managed_variables: ClassVar[frozenset[str]] = frozenset(
        {"port", "listen_addresses", "unix_socket_directories", "max_connections",
         "data_directory", "config_file", "hba_file", "ident_file", "external_pid_file"}
    )  # fmt: skip

    @property
    def config_file(self) -> Path:
        return self.base_dir / "postgresql.conf"

    @property
    def pid_file(self) -> Path:
        return self.data_dir / "postmaster.pid"

    @property
    def socket_path(self) -> Path:
        return self.run_dir / f".s.PGSQL.{self.port}"

    @property
    def socket_url(self) -> str:
        s = self.settings
        socket_dir = quote(str(self.run_dir), safe="/")
        return (
            f"postgresql://{userinfo(s.user, self.password)}localhost:{self.port}/{s.database}"
            f"?socket={socket_dir}"
        )

    @property
    def admin_user(self) -> str:
        """The superuser: named after the account the server runs as (peer authentication)."""
        return self.os_user.name

    @cached_property
    def _programs(self) -> _Programs:
        bin_dir = postgres_bin_dir(self.settings.bin_dir)

        def find(name: str) -> Path:
            return find_program([name], bin_dir=bin_dir, what=f"PostgreSQL's {name}")

        return _Programs(find("initdb"), find("pg_ctl"), find("postgres"), find("psql"))

    def _find_programs(self) -> None:
        _ = self._programs

    def is_initialised(self) -> bool:
        return (self.data_dir / "PG_VERSION").is_file()

    def _initialise(self) -> None:
        argv: list[str | Path] = [
            self._programs.initdb,
            f"--pgdata={self.data_dir}",
            f"--username={self.admin_user}",
            "--encoding=UTF8",
            # Byte-order collation: the same results and speed whatever locales the host has.
            "--locale=C",
            "--auth-local=peer",
            "--auth-host=scram-sha-256",
        ]
        since = process.log_size(self.log_file)
        try:
            self._as_server(argv, "initdb", _INITDB_TIMEOUT_S, log=True)
        except BaseException as e:  # Ctrl-C included
            empty_dir(self.data_dir)  # a half-made data directory must not pass for a ready one
            if isinstance(e, ServerError):
                problem = str(e).split(":", 1)[0]  # "initdb failed (exit code 1)"
                raise self._error(
                    f"could not create its data directory ({problem})", since
                ) from None
            raise
        self._write_file(self.data_dir / "pg_hba.conf", self._hba())
        with (self.data_dir / "postgresql.conf").open("a", encoding="utf-8") as f:
            f.write(
                f"\n# oltplab's settings, rewritten at each start\ninclude '{self.config_file}'\n"
            )

    def _hba(self) -> str:
        # md5 when the passwords are stored so (password_encryption=md5 among the variables):
        # a client then authenticates with one hash, not SCRAM's 4,096 rounds of PBKDF2 on
        # both sides, which made sysbench's 4,096 connections miss its 30-s start limit.
        # An md5 line still takes a SCRAM-stored password with SCRAM.
        md5 = str(self.settings.variables.get("password_encryption", "")).lower() == "md5"
        method = "md5" if md5 else "scram-sha-256"
        return (
            "# Written by oltplab. TYPE DATABASE USER ADDRESS METHOD\n"
            f"local all {self.admin_user} peer\n"
            f"local all all {method}\n"
            f"host all all {LOOPBACK}/32 {method}\n"
        )

    def _write_config(self) -> None:
        s = self.settings
        settings: dict[str, ConfigValue] = {
            "port": self.port,
            "listen_addresses": LOOPBACK,
            "unix_socket_directories": str(self.run_dir),
            "max_connections": s.max_connections,
            "password_encryption": "scram-sha-256",
        }
        if s.tls:
            cert, key = ensure_certificate(self.tls_dir, self.os_user)
            settings |= {"ssl": True, "ssl_cert_file": str(cert), "ssl_key_file": str(key)}
        settings |= s.variables
        self._write_file(self.config_file, render_pg_conf(settings))

    def _write_file(self, path: Path, text: str) -> None:
        write_text(path, text)
        give_to(self.os_user, path)

    def _launch(self, since_byte: int) -> None:
        # Lock files left by a crash. Their pid may live on as a zombie that nobody has
        # reaped yet, which PostgreSQL would take for a running server (pid() ruled it out).
        socket_lock = self.socket_path.with_name(f"{self.socket_path.name}.lock")
        for stale in (self.pid_file, self.socket_path, socket_lock):
            stale.unlink(missing_ok=True)
        timeout_s = self.settings.start_timeout_s
        try:
            # -w: pg_ctl returns once the server accepts connections (postmaster.pid says so).
            self._as_server(
                [self._programs.pg_ctl, "start", "-D", self.data_dir, "-l", self.log_file,
                 "-w", "-t", str(max(1, round(timeout_s))), "-s"],
                "pg_ctl start",
                timeout_s + _PG_CTL_GRACE_S,
            )  # fmt: skip
        except ServerError as e:
            problem = str(e).split(":", 1)[0]  # "pg_ctl start failed (exit code 1)"
            raise self._error(f"did not start: {problem}", since_byte) from None

    def _configure(self) -> None:
        port, max_connections = self.query(
            "SELECT current_setting('port'), current_setting('max_connections')"
        )[0]
        if int(port) != self.port or int(max_connections) != self.settings.max_connections:
            raise self._error(
                f"runs with port={port}, max_connections={max_connections}, not the "
                f"{self.port} and {self.settings.max_connections} in {self.config_file}: "
                "something overrides them (postgresql.auto.conf, ALTER SYSTEM?)"
            )
        s = self.settings
        self.query(
            f"DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{s.user}') "
            f"THEN CREATE ROLE {s.user}; END IF; END$$;"
            f"ALTER ROLE {s.user} LOGIN PASSWORD '{self.password}';"
            # Reading the server's statistics and settings for run.json and server.csv.
            f"GRANT pg_read_all_stats, pg_read_all_settings TO {s.user};"
        )
        if not self.query(f"SELECT 1 FROM pg_database WHERE datname = '{s.database}'"):
            self.query(f"CREATE DATABASE {s.database} OWNER {s.user}")

    def query(self, sql: str, database: str | None = None) -> list[list[str]]:
        argv: list[str | Path] = [
            self._programs.psql, "--no-psqlrc", "--no-align", "--tuples-only", "--quiet",
            "--field-separator=\t", "--set=ON_ERROR_STOP=1",
            f"--host={self.run_dir}", f"--port={self.port}", f"--username={self.admin_user}",
            f"--dbname={database or 'postgres'}", f"--command={sql}",
        ]  # fmt: skip
        out = self._as_server(argv, f"{self.display_name} client", _CLIENT_TIMEOUT_S)
        return [line.split("\t") for line in out.splitlines()]

    def recreate_database(self) -> None:
        s = self.settings
        # FORCE ends the database's sessions, which would otherwise block the drop.
        self.query(f"DROP DATABASE IF EXISTS {s.database} WITH (FORCE)")
        self.query(f"CREATE DATABASE {s.database} OWNER {s.user}")

    def _shutdown(self, pid: int) -> None:
        timeout_s = self.settings.stop_timeout_s
        # Fast: roll back open transactions and disconnect clients, then a clean checkpoint.
        self._as_server(
            [self._programs.pg_ctl, "stop", "-D", self.data_dir, "-m", "fast",
             "-w", "-t", str(max(1, round(timeout_s))), "-s"],
            "pg_ctl stop",
            timeout_s + _PG_CTL_GRACE_S,
        )  # fmt: skip

    def _read_version(self) -> str:
        postgres = self._programs.postgres
        # --version is answered before the refusal to run as root, so no account switch.
        out = process.run(
            [postgres, "--version"], user=current_user(), what=f"{postgres} --version",
            timeout_s=30, cwd=Path("/"),
        )  # fmt: skip
        return out.strip().split("(PostgreSQL)", 1)[-1].strip()

    def _as_server(
        self, argv: list[str | Path], what: str, timeout_s: float, *, log: bool = False
    ) -> str:
        env = process.clean_env(self.os_user, {"PGCONNECT_TIMEOUT": "10"})
        return process.run(
            argv,
            user=self.os_user,
            what=what,
            timeout_s=timeout_s,
            cwd=self.base_dir,
            env=env,
            log_file=self.log_file if log else None,
        )
