"""A distributed prepare: the units (tables; TPC-C: each table set's warehouses, their stock and
its items) are dealt over the clients (client i builds units i+1, i+1+N, ...), each client loads
its share with its share of --threads, in parallel, between one client's begin and end steps."""

import time
from collections.abc import Mapping
from typing import Any

from oltplab import engine
from oltplab._types import EventHandler, Json
from oltplab.catalog import load_catalog
from oltplab.distributed import cluster
from oltplab.distributed.driver import check_target
from oltplab.distributed.shares import split_count, split_units
from oltplab.exceptions import OltpLabError


def _engine_get(ray: Any, refs: Any) -> Any:
    """ray.get, with an engine's own error (tables already there, a refused connection)
    raised as itself: one line, not Ray's wrapped traceback."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as e:
        if isinstance(e.cause, OltpLabError):
            raise e.cause from None
        raise


def prepare(
    workload: str,
    db: str | None,
    options: Mapping[str, Any],
    *,
    ray_address: str,
    clients: int | None,
    on_event: EventHandler | None = None,
) -> Json:
    """Returns the engine's prepare result with the tables of every client added up."""
    db_url = check_target(db)
    effective = load_catalog().resolve(workload, options)
    ray = cluster.connect(ray_address)
    placed = cluster.place(ray, clients or cluster.node_count(ray))
    began = time.monotonic()

    def spec(n: int) -> Json:
        return engine.build_spec(workload, db_url, dict(options) | {"threads": n}, create=True)

    first = placed.actors[0]
    try:
        # One client begins (the unfinished-prepare marker; TPC-C's schema) and says how many
        # units (tables; TPC-C: warehouses, their stock, item tables) need loading; every client
        # loads its share; one client ends (TPC-C's indexes; the marker dropped) once all loaded. A
        # prepare cut short anywhere is refused by `run`, as a local one.
        begun: Json = _engine_get(ray, first.prepare.remote(spec(1) | {"prepare_step": "begin"}))
        units = int(begun["tables"])
        dealt = [u for u in split_units(units, len(placed.actors)) if u]
        most = max(int(effective.get("threads", 1)), len(dealt))
        threads = split_count(most, len(dealt)) if dealt else []
        refs = [
            actor.prepare.remote(spec(n) | {"units": mine})
            for actor, mine, n in zip(placed.actors[: len(dealt)], dealt, threads, strict=True)
        ]
        results: list[Json] = _engine_get(ray, refs)
        if units:
            _engine_get(ray, first.prepare.remote(spec(1) | {"prepare_step": "end"}))
    finally:
        cluster.release(ray, placed)
    if on_event is not None:
        if not units:
            on_event({"event": "message", "text": "the data are already loaded; nothing to do"})
        for i, mine in enumerate(dealt):
            on_event({"event": "message", "text": f"client {i} built units {mine}"})
    return begun | {
        "tables": sum(int(r["tables"]) for r in results),
        "duration_s": time.monotonic() - began,
        "clients": [{"index": i, "tables": mine} for i, mine in enumerate(dealt)],
    }
