"""Ray: joining the cluster, placing one engine actor per node, and what a lost actor
looks like. The only module that imports Ray (lazily: Ray is an optional extra).
"""

import contextlib
import importlib.util
import logging
import socket
from dataclasses import dataclass
from typing import Any

from oltplab.distributed.actor import EngineClient
from oltplab.exceptions import ConfigError

INSTALL_HINT = "--ray needs Ray: pip install 'oltplab[ray]'"
# How long a placement group may wait for its nodes before the run is refused.
PLACEMENT_TIMEOUT_S = 30.0


def require_ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise ConfigError(INSTALL_HINT) from e
    return ray


def ray_installed() -> bool:
    """Whether Ray can be imported, without importing it (a second's work)."""
    return importlib.util.find_spec("ray") is not None


def is_address(address: str) -> bool:
    """`auto`, a ray:// URL or HOST:PORT."""
    if address == "auto" or "://" in address:
        return True
    host, _, port = address.rpartition(":")
    return bool(host) and port.isdigit()


def check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """A HOST:PORT that does not answer fails here, at once: Ray itself retries for minutes."""
    if not is_address(address):
        raise ConfigError(
            f"--ray={address} is not HOST:PORT or auto; give e.g. --ray=10.0.0.1:6379"
        )
    if address == "auto" or "://" in address:
        return
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as e:
        raise ConfigError(
            f"no Ray cluster answers at {address} ({e.strerror or e}); start one with "
            "`ray start --head`, or give its head's address with --ray=HOST:6379"
        ) from e


def connect(address: str) -> Any:
    """Joins the cluster at `address` (`auto`: the one this node belongs to)."""
    ray = require_ray()
    if ray.is_initialized():
        return ray
    check_reachable(address)
    try:
        ray.init(
            address=address,
            namespace="oltplab",
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
            configure_logging=False,
        )
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise ConfigError(
            f"cannot join the Ray cluster at {address}: {' '.join(str(e).split())[:200]}; "
            "start one with `ray start --head` (and `ray start --address=HEAD:6379` on each "
            "client machine), or give --ray=HOST:6379"
        ) from e
    return ray


def node_count(ray: Any) -> int:
    """The default --clients: one per live node, and no more than the cluster's CPUs (a node
    that just died is still listed alive until Ray's health check notices, its CPUs gone)."""
    alive = sum(1 for n in ray.nodes() if n.get("Alive"))
    cpus = int(ray.cluster_resources().get("CPU", alive))
    return max(1, min(alive, cpus))


@dataclass
class Placed:
    """The actors of a run and the placement group that holds them."""

    actors: list[Any]
    group: Any
    node_ids: list[str]


def place(ray: Any, clients: int) -> Placed:
    """N engine actors, spread one per node as far as the cluster allows (SPREAD)."""
    from ray.util.placement_group import placement_group
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    group = placement_group([{"CPU": 1}] * clients, strategy="SPREAD")
    try:
        ray.get(group.ready(), timeout=PLACEMENT_TIMEOUT_S)
    except ray.exceptions.GetTimeoutError as e:
        ray.util.remove_placement_group(group)
        cpus = ray.cluster_resources().get("CPU", 0)
        raise ConfigError(
            f"the Ray cluster cannot place {clients} clients of 1 CPU each "
            f"(it has {cpus:g} CPUs); add nodes or give fewer --clients"
        ) from e
    remote = ray.remote(EngineClient)
    actors = [
        remote.options(
            num_cpus=1,
            max_concurrency=4,  # drain/stop answer while the run thread works
            max_restarts=0,  # a restarted engine has lost its connections: never restart
            max_task_retries=0,
            scheduling_strategy=PlacementGroupSchedulingStrategy(
                placement_group=group, placement_group_bundle_index=i
            ),
        ).remote(i)
        for i in range(clients)
    ]
    table = ray.util.placement_group_table(group)
    bundles = table.get("bundles_to_node_id", {})
    return Placed(actors, group, [str(bundles.get(i, "")) for i in range(clients)])


def release(ray: Any, placed: Placed) -> None:
    """Ends every actor (no orphan load) and frees the placement group."""
    for actor in placed.actors:
        with contextlib.suppress(Exception):  # already dead
            ray.kill(actor, no_restart=True)
    ray.util.remove_placement_group(placed.group)


def lost_error(ray: Any) -> tuple[type[BaseException], ...]:
    """The errors that mean an actor (or its node) is gone."""
    return (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError)
