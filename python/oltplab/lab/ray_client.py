"""A lab's `[client] ray = "auto" | "HOST:PORT"` and `clients = N`: every cell runs distributed
over a Ray cluster (docs/distributed.md), checked with the rest of the lab file."""

from collections.abc import Mapping
from typing import Any, Protocol

from oltplab.documents.lab import ServerSpec, WorkloadSpec
from oltplab.exceptions import ConfigError
from oltplab.lab.tomlwhere import Path_

CLIENT_KEYS = {"ray": "Ray cluster address", "clients": "engine actors"}


class _Reader(Protocol):
    def fail(self, path: Path_, problem: str) -> ConfigError: ...


def read_client_ray(
    r: _Reader,
    client: Mapping[str, Any],
    servers: tuple[ServerSpec, ...],
    workloads: tuple[WorkloadSpec, ...],
) -> tuple[str | None, int | None]:
    """(ray address, clients) from [client], or a one-line error naming the key."""
    from oltplab.distributed import cluster

    path: Path_ = ("client",)
    ray, clients = client.get("ray"), client.get("clients")
    if clients is not None and (
        not isinstance(clients, int) or isinstance(clients, bool) or clients < 1
    ):
        raise r.fail((*path, "clients"), f"must be an integer >= 1, not {clients!r}")
    if ray is None:
        if clients is not None:
            raise r.fail((*path, "clients"), 'needs ray = "auto" (or "HOST:6379") beside it')
        return None, None
    if not isinstance(ray, str) or not cluster.is_address(ray):
        raise r.fail((*path, "ray"), f'must be "auto" or "HOST:PORT", not {ray!r}')
    if not cluster.ray_installed():
        raise r.fail((*path, "ray"), "needs Ray: pip install 'oltplab[ray]'")
    for s in servers:
        if s.url is not None and s.url.startswith("sqlite"):
            raise r.fail(
                ("servers", s.name, "url"),
                "a distributed lab needs a server every client reaches, not an SQLite file",
            )
    for i, w in enumerate(workloads):
        if w.script is not None:
            raise r.fail(("workloads", i, "script"), "a script runs on this host only, not on Ray")
        fewest = min(w.threads, default=None)
        if clients is not None and fewest is not None and fewest < clients:
            raise r.fail(
                ("workloads", i, "threads"),
                f"{fewest} thread(s) cannot be shared by {clients} clients; "
                "give at least one thread per client",
            )
    return ray, clients
