"""The lab's servers: one managed server per [servers.NAME] under DIR/servers/NAME, started
with the settings of the config a cell needs (a config change is a restart), pinned to its
CPUs, and only one server running at a time so that cells do not share the host."""

from dataclasses import dataclass, field
from pathlib import Path

from oltplab.documents.lab import SERVERS_DIR, LabSpec, ServerSpec
from oltplab.exceptions import ConfigError
from oltplab.lab.plan import effective_variables
from oltplab.servers import (
    SERVER_CLASSES,
    ManagedServer,
    ServerSettings,
    create_server,
    open_server,
    process,
)
from oltplab.servers.osuser import OsUser, closed_directory, server_account, unreachable_message
from oltplab.servers.pinning import cpus_allowed_list, parse_cpu_list, pin_session
from oltplab.servers.state import read_state

# Room above the largest thread count for the administrator and the metrics connection.
_SPARE_CONNECTIONS = 50


def max_connections(spec: LabSpec, server: ServerSpec) -> int:
    if server.max_connections is not None:
        return server.max_connections
    largest = max(max(w.threads, default=1) for w in spec.workloads)
    return max(ServerSettings().max_connections, largest + _SPARE_CONNECTIONS)


def server_accounts(spec: LabSpec) -> dict[str, OsUser]:
    """The operating-system account each managed server runs as, by server name."""
    return {
        s.name: server_account(SERVER_CLASSES[s.engine].daemon_account)
        for s in spec.servers
        if s.managed
    }


def check_lab_dir_reachable(spec: LabSpec, lab_dir: Path) -> None:
    """Refuses, before anything starts, a lab directory that a managed server's account cannot
    enter (a root's `mktemp -d` is 0700): otherwise every cell fails the same way."""
    for name, user in server_accounts(spec).items():
        closed = closed_directory(lab_dir.resolve() / SERVERS_DIR / name, user)
        if closed is not None:
            elsewhere = "choose a lab directory it can reach (--out, e.g. under /var/tmp)"
            raise ConfigError(
                f"lab directory {lab_dir}: {unreachable_message(user, closed, elsewhere)}"
            )


@dataclass
class LabServers:
    spec: LabSpec
    lab_dir: Path
    running: dict[str, tuple[str, ManagedServer]] = field(default_factory=dict)
    log_from: dict[str, int] = field(default_factory=dict)  # where each start's log begins

    def base_dir(self, name: str) -> Path:
        return self.lab_dir / SERVERS_DIR / name

    def stop_leftovers(self) -> None:
        """Stops servers a killed earlier lab process left running (resume)."""
        for s in self.spec.servers:
            if s.managed and read_state(self.base_dir(s.name)) is not None:
                open_server(self.base_dir(s.name)).stop()

    def handle(self, server: ServerSpec, config: str) -> ManagedServer:
        """The server object for `config` (not started)."""
        settings = ServerSettings(
            max_connections=max_connections(self.spec, server),
            variables=dict(server.settings | server.configs[config]),
        )
        return create_server(server.engine, self.base_dir(server.name), settings)

    def current(self, name: str) -> ManagedServer | None:
        entry = self.running.get(name)
        return None if entry is None else entry[1]

    def ensure(self, server: ServerSpec, config: str) -> tuple[ManagedServer, bool]:
        """The server running with `config` (other servers stopped); True if (re)started."""
        for other in list(self.running):
            if other != server.name:
                self.stop(other)
        entry = self.running.get(server.name)
        if entry is not None and entry[0] == config and entry[1].is_running():
            return entry[1], False
        self.stop(server.name)
        managed = self.handle(server, config)
        self.log_from[server.name] = process.log_size(managed.log_file)
        managed.start()
        self.running[server.name] = (config, managed)
        self.pin(server, managed)
        return managed, True

    def exit_note(self, name: str) -> str | None:
        """Why a cell failed when its server died under it (a crash: the client only saw the
        connection close): what the server's log said first since it started, and where the
        log is. None while it runs."""
        managed = self.current(name)
        if managed is None or managed.is_running():
            return None
        said = process.log_excerpt(managed.log_file, self.log_from.get(name, 0), lines=1)
        return (
            f"{managed.display_name} exited during the cell ({said or 'its log says nothing'}); "
            f"see {managed.log_file}"
        )

    def pin(self, server: ServerSpec, managed: ManagedServer) -> None:
        pid = managed.pid()
        if server.cpus is not None and pid is not None:
            pin_session(pid, parse_cpu_list(server.cpus))

    def cpus_allowed(self, name: str) -> str | None:
        managed = self.current(name)
        pid = managed.pid() if managed is not None else None
        return None if pid is None else cpus_allowed_list(pid)

    def stop(self, name: str) -> None:
        entry = self.running.pop(name, None)
        if entry is not None:
            entry[1].stop()

    def discard(self, name: str) -> None:
        """Kills the server (SIGKILL, no shutdown) because its data is about to be replaced by
        the snapshot: a clean shutdown would flush dirty pages that the restore then rewrites
        again. The restored files carry the snapshot's own redo/WAL from a clean shutdown, so
        the next start needs no crash recovery; the stale pid and socket files are removed by
        the next start (`_launch`)."""
        entry = self.running.pop(name, None)
        if entry is not None:
            entry[1].kill()
        elif read_state(self.base_dir(name)) is not None:
            open_server(self.base_dir(name)).kill()

    def stop_all(self) -> None:
        for name in list(self.running):
            self.stop(name)

    def variables_of(self, server: ServerSpec, config: str) -> dict[str, str]:
        return effective_variables(server, config)
