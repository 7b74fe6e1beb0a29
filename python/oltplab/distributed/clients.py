"""What the driver knows of each client while a distributed run goes: its share, its
actor, its clock, its own run directory (clients/<i>/), and how it ended or was lost."""

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from oltplab._types import Json
from oltplab.distributed.shares import Share
from oltplab.documents.run import ClientLoss, ClientRef, ClockOffset, DistributedClient
from oltplab.rundir import RunWriter
from oltplab.rundir.manifest import host_of, initial_manifest

CLIENTS_DIR = "clients"


@dataclass
class Client:
    share: Share
    actor: Any
    node_id: str
    facts: Json
    clock: ClockOffset
    writer: RunWriter
    start_at: float = 0.0  # on this client's clock
    started: Json | None = None  # its "started" event
    result: Json | None = None
    error: str | None = None  # the engine raised
    error_type: str | None = None  # its exception class
    lost: ClientLoss | None = None  # the actor or its node died
    clock_end: ClockOffset | None = None
    events: int = 0

    @property
    def index(self) -> int:
        return self.share.index

    @property
    def ended(self) -> bool:
        return self.result is not None or self.error is not None or self.lost is not None

    def start_late_s(self) -> float | None:
        return None if self.started is None else float(self.started["started_at"]) - self.start_at

    def mark_lost(self, error: BaseException, run_start: float) -> ClientLoss:
        """Records the loss and closes the client's directory as incomplete."""
        at_s = time.time() - run_start
        message = f"{type(error).__name__}: {' '.join(str(error).split())[:300]}"
        self.lost = ClientLoss(
            client=self.index,
            at_s=round(at_s, 3),
            threads=self.share.threads,
            rate_per_s=self.share.rate_per_s,
            error=message,
        )
        self.writer.abort(stop_reason="error", error=f"client lost at {at_s:.1f} s: {message}")
        return self.lost

    def record(self) -> DistributedClient:
        """This client in the merged run.json's `distributed.clients`."""
        result = self.result or {}
        return DistributedClient(
            index=self.index,
            dir=f"{CLIENTS_DIR}/{self.index}",
            node_id=self.node_id,
            hostname=self.facts.get("hostname"),
            address=self.facts.get("address"),
            threads=self.share.threads,
            first_thread=self.share.first_thread,
            rate_per_s=self.share.rate_per_s,
            events=self.share.events,
            rand_seed=self.share.rand_seed,
            clock=self.clock,
            clock_end=self.clock_end,
            connect_s=None if self.started is None else self.started.get("connect_s"),
            start_late_s=self.start_late_s(),
            stop_reason=result.get("stop_reason"),
            flags=tuple(result.get("flags") or ()),
            error=self.error,
            lost=self.lost is not None,
        )


def client_writer(
    run_dir: Path, share: Share, facts: Json, workload: str, options: Json, db_url: str
) -> RunWriter:
    """clients/<i>/: an ordinary run directory of the client's own share and host."""
    path = run_dir / CLIENTS_DIR / str(share.index)
    path.mkdir(parents=True)
    manifest = initial_manifest(workload=workload, options=options, db_url=db_url, argv=None)
    client = ClientRef(index=share.index, of="../..")
    manifest = replace(manifest, host=host_of(facts), client=client)
    return RunWriter.create(path, manifest, created_dir=True)


@dataclass
class Losses:
    items: list[ClientLoss] = field(default_factory=list)

    def describe(self) -> str | None:
        if not self.items:
            return None
        parts = [
            f"client {x.client} ({x.threads} threads) lost at {x.at_s:.1f} s" for x in self.items
        ]
        return "; ".join(parts) + ": the others went on; see distributed.losses in run.json"
