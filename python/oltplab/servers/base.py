"""ManagedServer: a database server under test, run by oltplab from a private directory on a
loopback port, with a benchmark account (`sbtest`) and database ready for workloads.

    BASE/                   the server's own directory (given by the caller)
      server.json           engine and resolved settings: how other processes find it (0600)
      my.cnf | postgresql.conf   the configuration oltplab writes at each start
      data/                 the data directory (owned by the server's account, 0700)
      run/                  socket and pid file (0700)
      server.log            everything the server and its tools printed

Subclasses supply the engine-specific steps; the order of a start, the port choice, the
readiness wait and the stop live here.
"""

import contextlib
import os
import secrets
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Self

from oltplab import priority
from oltplab.exceptions import ConfigError, ServerError
from oltplab.redact import redact_url, userinfo
from oltplab.servers import process
from oltplab.servers.net import LOOPBACK, free_loopback_port
from oltplab.servers.osuser import check_reachable, give_to, make_reachable_dirs, server_account
from oltplab.servers.settings import ServerSettings
from oltplab.servers.state import read_state, write_state

# An automatically chosen port can be taken by another process before the server binds it.
_PORT_ATTEMPTS = 3
_PORT_TAKEN = "Address already in use"
_REAP_WAIT_S = 10.0
_UNIX_PATH_MAX_BYTES = 107  # sun_path is 108 bytes with its terminating NUL


class ManagedServer(ABC):
    engine: ClassVar[str]  # the name server.json and lab files use: "mariadb", "postgresql"
    display_name: ClassVar[str]
    url_scheme: ClassVar[str]
    tls_parameter: ClassVar[str]  # what a URL adds to ask for TLS
    daemon_account: ClassVar[str]  # the account to run as when oltplab runs as root
    # Variables oltplab sets itself (their names with _ for -), refused in settings.variables.
    managed_variables: ClassVar[frozenset[str]]

    def __init__(self, base_dir: Path, settings: ServerSettings | None = None) -> None:
        # Absolute: the path goes into configuration files and identifies our processes.
        self.base_dir = Path(base_dir).resolve()
        self.settings = _resolve_settings(self.base_dir, self.engine, settings)
        for name in self.settings.variables:
            if name.replace("-", "_") in self.managed_variables:
                raise ConfigError(
                    f"oltplab sets the {self.display_name} variable '{name}' itself; use the "
                    "server settings' port and max_connections, or leave it to oltplab"
                )
        self.os_user = server_account(self.daemon_account)
        self._proc: process.Popen | None = None

    # -- where things are ------------------------------------------------------------------

    @property
    def data_dir(self) -> Path:
        return self.base_dir / "data"

    @property
    def run_dir(self) -> Path:
        return self.base_dir / "run"

    @property
    def log_file(self) -> Path:
        return self.base_dir / "server.log"

    @property
    @abstractmethod
    def config_file(self) -> Path: ...

    @property
    @abstractmethod
    def pid_file(self) -> Path: ...

    @property
    @abstractmethod
    def socket_path(self) -> Path: ...

    # -- how to reach it ---------------------------------------------------------------------

    host: ClassVar[str] = LOOPBACK  # servers under test listen on loopback only

    @property
    def user(self) -> str:
        """The benchmark account (sysbench's default name, `sbtest`)."""
        return self.settings.user

    @property
    def database(self) -> str:
        return self.settings.database

    @property
    def port(self) -> int:
        if self.settings.port is None:
            raise ServerError(f"{self.display_name} in {self.base_dir} has no port yet: start it")
        return self.settings.port

    @property
    def password(self) -> str:
        if self.settings.password is None:
            raise ServerError(
                f"{self.display_name} in {self.base_dir} has no password yet: start it"
            )
        return self.settings.password

    @property
    def url(self) -> str:
        """The benchmark account's URL over TCP, password included (for `--db`)."""
        account = userinfo(self.user, self.password)
        return f"{self.url_scheme}://{account}{self.host}:{self.port}/{self.database}"

    @property
    def redacted_url(self) -> str:
        """`url` with the password masked: the form to print and store."""
        return redact_url(self.url)

    @property
    @abstractmethod
    def socket_url(self) -> str:
        """The benchmark account's URL over the Unix socket."""

    @property
    def tls_url(self) -> str:
        """`url` asking for TLS (the server must have been started with settings.tls)."""
        if not self.settings.tls:
            raise ConfigError(f"{self.display_name} in {self.base_dir} was not asked for TLS")
        return f"{self.url}?{self.tls_parameter}"

    @property
    def tls_dir(self) -> Path:
        return self.base_dir / "tls"

    @cached_property
    def version(self) -> str:
        """The server's version as its binary reports it, e.g. `10.11.6-MariaDB-0+deb12u1`."""
        return self._read_version()

    # -- life cycle --------------------------------------------------------------------------

    def start(self) -> None:
        """Initialises the data directory when new, starts the server, waits until it answers,
        checks that the settings took effect and sets up the benchmark account and database."""
        pid = self.pid()
        if pid is not None:
            raise ServerError(
                f"{self.display_name} in {self.base_dir} already runs (pid {pid}) at "
                f"{self.redacted_url}; stop it first"
            )
        self._find_programs()
        self._make_dirs()
        auto_port = self.settings.port is None
        if auto_port:
            self.settings = replace(self.settings, port=free_loopback_port())
        if self.settings.password is None:
            self.settings = replace(self.settings, password=secrets.token_hex(12))
        self._check_socket_path()
        write_state(self.base_dir, self.engine, self.settings)
        if not self.is_initialised():
            self._initialise()
        try:
            self._launch_on_a_port(auto_port)
            pid = self.pid()
            if pid is not None:  # its own session: give it the priority oltplab runs at
                priority.share_with_session(pid)
            self._configure()
        except BaseException:  # Ctrl-C included: never leave a half-started server behind
            self.kill()
            raise

    def stop(self) -> None:
        """Stops the server cleanly (a no-op when it does not run); kills it, and fails, when
        it does not stop within the settings' stop timeout."""
        pid = self.pid()
        if pid is not None:
            timeout_s = self.settings.stop_timeout_s
            since = process.log_size(self.log_file)
            try:
                self._shutdown(pid)
                problem = None if process.wait_gone(pid, timeout_s) else f"within {timeout_s:g} s"
            except ServerError as e:
                problem = f"cleanly ({e})"
            if problem is not None:
                self.kill()
                raise self._error(
                    f"did not stop {problem} and was killed (the next start recovers)", since
                )
        self._reap(wait=True)

    def kill(self) -> None:
        """Kills the server at once with SIGKILL, as a crash would; the next start recovers."""
        pid = self.pid()
        if pid is not None:
            process.kill_group(pid)
        self._reap(wait=True)

    def detach(self) -> None:
        """Lets this object go while the server keeps running (`oltplab server start`); the
        server is found again from its directory by `open_server`, which stops it."""
        if self._proc is not None:
            # Never waited for here: it outlives this object (and usually this process).
            self._proc.returncode = 0
            self._proc = None

    def pid(self) -> int | None:
        """The server's process id while it runs, else None."""
        self._reap()
        pid = process.read_pid_file(self.pid_file)
        if pid is not None and process.pid_alive(pid) and self._is_ours(pid):
            return pid
        if self._proc is not None:  # launched, pid file not written yet
            return self._proc.pid
        return None

    def is_running(self) -> bool:
        return self.pid() is not None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.redacted_url if self.settings.port is not None else str(self.base_dir)
        return f"<{type(self).__name__} {where}>"

    # -- administration ----------------------------------------------------------------------

    @abstractmethod
    def query(self, sql: str, database: str | None = None) -> list[list[str]]:
        """Runs `sql` as the server's administrator through the command-line client over the
        Unix socket; returns the rows of the last statement as lists of strings."""

    @abstractmethod
    def recreate_database(self) -> None:
        """Drops the benchmark database with everything in it and creates it empty again."""

    def _error(self, problem: str, since_byte: int = 0) -> ServerError:
        """A ServerError saying `problem`, naming the log file and quoting what it says."""
        excerpt = process.log_excerpt(self.log_file, since_byte)
        says = f"; it says:\n{excerpt}" if excerpt else ""
        return ServerError(f"{self.display_name} {problem}; see {self.log_file}{says}")

    def _wait_until(self, ready: Callable[[], bool], since_byte: int) -> None:
        """Waits until `ready()`; fails early, with the log, if the launched process exits."""
        deadline = time.monotonic() + self.settings.start_timeout_s
        while not ready():
            if self._proc is not None and self._proc.poll() is not None:
                raise self._error(
                    f"did not start: it exited with code {self._proc.returncode}", since_byte
                )
            if time.monotonic() >= deadline:
                raise self._error(
                    f"did not answer within {self.settings.start_timeout_s:g} s", since_byte
                )
            time.sleep(0.05)

    # -- engine-specific steps ---------------------------------------------------------------

    @abstractmethod
    def _find_programs(self) -> None:
        """Locates the programs the other steps use, failing with an install hint, so that a
        missing one is reported before anything is created."""

    @abstractmethod
    def is_initialised(self) -> bool: ...

    @abstractmethod
    def _initialise(self) -> None:
        """Creates the data directory's system tables (mariadb-install-db, initdb)."""

    @abstractmethod
    def _write_config(self) -> None: ...

    @abstractmethod
    def _launch(self, since_byte: int) -> None:
        """Starts the server and returns once it answers on its socket."""

    @abstractmethod
    def _configure(self) -> None:
        """Checks that the settings took effect; creates the benchmark account and database."""

    @abstractmethod
    def _shutdown(self, pid: int) -> None:
        """Asks the server to stop (returns without waiting for the process to exit)."""

    @abstractmethod
    def _read_version(self) -> str: ...

    # -- helpers -----------------------------------------------------------------------------

    def _make_dirs(self) -> None:
        make_reachable_dirs(self.base_dir, [self.os_user])
        for private in (self.data_dir, self.run_dir):
            private.mkdir(mode=0o700, exist_ok=True)
        self.log_file.touch(mode=0o640, exist_ok=True)
        give_to(self.os_user, self.run_dir, self.log_file)
        if self.data_dir.stat().st_uid != self.os_user.uid:
            give_to(self.os_user, self.data_dir)
        check_reachable(self.data_dir, self.os_user)

    def _launch_on_a_port(self, auto_port: bool) -> None:
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            if attempt > 1:  # the port chosen was taken meanwhile
                self.settings = replace(self.settings, port=free_loopback_port())
                self._check_socket_path()
                write_state(self.base_dir, self.engine, self.settings)
            self._write_config()
            since = process.log_size(self.log_file)
            try:
                self._launch(since)
                return
            except ServerError:
                self.kill()
                taken = _PORT_TAKEN in process.log_excerpt(self.log_file, since, lines=1000)
                if not (auto_port and taken and attempt < _PORT_ATTEMPTS):
                    raise

    def _check_socket_path(self) -> None:
        length = len(os.fsencode(self.socket_path))
        if length > _UNIX_PATH_MAX_BYTES:
            raise ConfigError(
                f"the socket path {self.socket_path} is {length} bytes long, but Unix sockets "
                f"allow {_UNIX_PATH_MAX_BYTES}; put the server in a shorter directory"
            )

    def _is_ours(self, pid: int) -> bool:
        # Guards against a stale pid file whose pid now belongs to another process.
        marker = f"{self.base_dir}/"
        return any(marker in arg for arg in process.cmdline(pid))

    def _reap(self, wait: bool = False) -> None:
        """Forgets the process we launched once it has exited (reaping it); with `wait`,
        after the short while that the kernel takes to finish a dead process."""
        if self._proc is None:
            return
        if wait:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=_REAP_WAIT_S)
        if self._proc.poll() is not None:
            self._proc = None


def _resolve_settings(base_dir: Path, engine: str, given: ServerSettings | None) -> ServerSettings:
    """The given settings, keeping the port and password of a server started here before
    (so its URL does not change), or the stored settings when none are given."""
    stored = read_state(base_dir)
    if stored is None:
        return given or ServerSettings()
    stored_engine, stored_settings = stored
    if stored_engine != engine:
        raise ConfigError(
            f"{base_dir} holds a {stored_engine} server, not {engine}; use another directory"
        )
    if given is None:
        return stored_settings
    return replace(
        given,
        port=given.port if given.port is not None else stored_settings.port,
        password=given.password if given.password is not None else stored_settings.password,
    )
