"""A distributed run: N engine actors on a Ray cluster started at one instant, their
intervals merged exactly as they arrive, one ordinary run directory written (plus each
client's own under clients/<i>/). Nothing here prints; progress goes to `on_event`.
"""

import contextlib
import math
import signal
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import Any

from oltplab import engine
from oltplab._fsutil import remove_empty_dir
from oltplab._types import EventHandler, Json
from oltplab.catalog import load_catalog
from oltplab.defaultdb import DEFAULT_RESULTS_ROOT
from oltplab.distributed import clock, cluster
from oltplab.distributed.align import IntervalAligner
from oltplab.distributed.clients import CLIENTS_DIR, Client, Losses, client_writer
from oltplab.distributed.shares import (
    SHARED_SEED_WORKLOADS,
    Share,
    split_load,
    with_fixed_seed,
)
from oltplab.documents.run import ClockOffset, Distributed, MergeCost
from oltplab.exceptions import (
    ConfigError,
    ConnectError,
    DriverError,
    NotPreparedError,
    OltpLabError,
)
from oltplab.metrics import MetricsSampler
from oltplab.rundir import RunWriter, create_default_run_dir, create_run_dir
from oltplab.rundir.manifest import initial_manifest, iso_utc
from oltplab.runner import LabFields, RunResult, with_extras

POLL_S = 0.2
# How long after an interval boundary the driver drains: the clients' interval events have
# left their engines by then (the clocks agree to well under this on a LAN).
BOUNDARY_LAG_S = 0.02
# An actor that does not answer a drain for this long is lost (a busy engine still answers:
# its threads are the engine's, not the actor's).
UNRESPONSIVE_S = 15.0
_PLANS = ("rate_steps", "thread_steps")
# A client that started this much after the common instant makes the run's start ragged.
START_LATE_LIMIT_S = 0.05


def check_target(db: str | None) -> str:
    if db is None or db.startswith("sqlite"):
        raise ConfigError(
            "--ray needs a database server every client can reach: give "
            "--db mysql://... or --db postgresql://... (an embedded SQLite file is not shared)"
        )
    return db


def start_margin_s(clients: Sequence[Client]) -> float:
    """Time to connect before the common start: 2 s, plus 2 ms per connection, and at least
    ten times the slowest clock round trip."""
    most = max(c.share.threads for c in clients)
    return max(2.0 + 0.002 * most, 10 * max(c.clock.delay_s for c in clients))


def _share_options(options: Mapping[str, Any], share: Share) -> dict[str, Any]:
    return dict(options) | {
        "threads": share.threads,
        "rate": share.rate_per_s,
        "events": share.events,
        "rand_seed": share.rand_seed,
    }


class _Run:
    """The state of one distributed run while it goes."""

    def __init__(
        self,
        writer: RunWriter,
        clients: list[Client],
        options: Mapping[str, Any],
        merge: engine.RunMerge,
        sampler: MetricsSampler | None,
    ):
        self.writer = writer
        self.merge = merge
        self.sampler = sampler
        self.interval_s = float(options.get("report_interval") or 1.0)
        self.clients = clients
        self.aligner = IntervalAligner(len(clients))
        self.losses = Losses()
        self.started_sent = False
        self.run_start = 0.0  # the common start, driver clock
        self.merged_intervals = 0
        self.merge_s = 0.0

    def live(self) -> list[Client]:
        return [c for c in self.clients if not c.ended]

    def take(self, client: Client, drained: Json, on_event: EventHandler | None) -> None:
        for event in drained["events"]:
            client.writer.on_event(event)
            client.events += 1
            if event.get("event") == "started":
                client.started = event
            elif event.get("event") == "interval":
                self.aligner.push(client.index, event)
        if drained["done"]:
            if drained["result"] is not None:
                client.result = drained["result"]
                client.writer.finish(drained["result"])
            else:
                client.error = drained["error"] or "the engine stopped without a result"
                client.error_type = drained.get("error_type")
                client.writer.abort(stop_reason="error", error=client.error)
            self.aligner.end(client.index)

    def lose(self, client: Client, error: BaseException, ray: Any) -> None:
        self.losses.items.append(client.mark_lost(error, self.run_start))
        self.aligner.end(client.index)
        with contextlib.suppress(Exception):  # already gone
            ray.kill(client.actor, no_restart=True)  # an unresponsive one must not load on

    def emit(self, on_event: EventHandler | None) -> None:
        events = [c.started for c in self.clients if c.started is not None]
        every = all(c.started is not None or c.ended for c in self.clients)
        if not self.started_sent and events and every:
            event = {
                "event": "started",
                "threads": sum(int(started["threads"]) for started in events),
                "connect_s": max((float(started["connect_s"]) for started in events), default=0),
                "started_at": self.run_start,
                "planned_s": max((float(started["planned_s"]) for started in events), default=0),
            }
            self._deliver(event, on_event)
            self.started_sent = True
        if not self.started_sent:
            return
        for group in self.aligner.ready():
            began = time.process_time()
            merged = self.merge.interval([e for _, e in group])
            self.merge_s += time.process_time() - began
            self.merged_intervals += 1
            self._deliver(merged, on_event)

    def _deliver(self, event: Json, on_event: EventHandler | None) -> None:
        self.writer.on_event(event)
        if self.sampler is not None:
            self.sampler.on_event(event)
        if on_event is not None:
            on_event(event)


def _poll(run: _Run, ray: Any, on_event: EventHandler | None) -> None:
    live = run.live()
    refs = [(c, c.actor.drain.remote()) for c in live]
    for c, ref in refs:
        try:
            drained = ray.get(ref, timeout=UNRESPONSIVE_S)
        except cluster.lost_error(ray) as e:
            run.lose(c, e, ray)
            continue
        run.take(c, drained, on_event)
    run.emit(on_event)


class _CtrlC:
    """The first Ctrl-C asks every client to stop (each returns what it measured); a second
    one abandons them. A flag, not an exception, so that a drain in progress is kept whole."""

    def __init__(self) -> None:
        self.count = 0
        self._previous: Any = None

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if self.count > 1:
            raise KeyboardInterrupt

    def __enter__(self) -> "_CtrlC":
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _drive(run: _Run, ray: Any, on_event: EventHandler | None) -> bool:
    """Polls until every client ended; returns whether Ctrl-C stopped the run."""
    stopping = False
    with _CtrlC() as ctrl_c:
        try:
            while run.live():
                if ctrl_c.count and not stopping:
                    stopping = True
                    for c in run.live():
                        c.actor.stop.remote()  # stops at its next interval, keeps its result
                _poll(run, ray, on_event)
                time.sleep(next_poll_s(time.time(), run.run_start, run.interval_s))
        except KeyboardInterrupt:  # the second Ctrl-C: stop waiting for the clients
            for c in run.live():
                run.lose(c, KeyboardInterrupt("abandoned after a second Ctrl-C"), ray)
    run.emit(on_event)
    return ctrl_c.count > 0


def next_poll_s(now: float, run_start: float, interval_s: float) -> float:
    """Seconds to the next drain: every POLL_S, and also just after each interval boundary
    (T0 + k*interval on the driver's clock), so that a merged interval, and the metrics sample
    it triggers, follow the boundary by a few milliseconds rather than up to POLL_S."""
    since = now - run_start
    k = math.floor(since / interval_s) + 1 if since >= 0 else 0
    to_boundary = run_start + k * interval_s + BOUNDARY_LAG_S - now
    return max(0.001, min(POLL_S, to_boundary))


def _prepare_clients(
    ray: Any,
    run_dir: Path,
    shares: list[Share],
    workload: str,
    effective: Mapping[str, Any],
    db: str,
    placed: cluster.Placed,
) -> list[Client]:
    facts = ray.get([a.facts.remote() for a in placed.actors])
    clients = []
    for share, actor, node_id, fact in zip(
        shares, placed.actors, placed.node_ids, facts, strict=True
    ):
        offset = _clock_of(ray, actor)
        writer = client_writer(run_dir, share, fact, workload, _share_options(effective, share), db)
        clients.append(Client(share, actor, node_id, fact, offset, writer))
    return clients


def _clock_of(ray: Any, actor: Any, samples: int = clock.SAMPLES) -> ClockOffset:
    def client_now() -> float:
        return float(ray.get(actor.now.remote()))

    return clock.measure(client_now, samples)


def distributed_plan(
    address: str, clients: list[Client], start_at: float, margin_s: float
) -> Distributed:
    return Distributed(
        ray_address=address,
        start_at=iso_utc(start_at),
        start_margin_s=margin_s,
        clients=tuple(c.record() for c in clients),
        losses=(),
    )


def run(
    workload: str,
    db: str | None,
    options: Mapping[str, Any],
    *,
    ray_address: str,
    clients: int | None,
    out: Path | None = None,
    argv: Sequence[str] | None = None,
    results_root: Path = DEFAULT_RESULTS_ROOT,
    on_event: EventHandler | None = None,
    metrics: Sequence[str] = (),
    lab: LabFields | None = None,
) -> RunResult:
    """Runs `workload` on `clients` engine actors and writes one merged run directory.

    `metrics` and `lab` as in `oltplab.run`: system.csv (the driver's host) and server.csv
    sampled by the driver on the merged interval grid; a lab cell's fields in run.json."""
    db_url = check_target(db)
    effective = with_fixed_seed(load_catalog().resolve(workload, options))
    if any(str(effective.get(p) or "") for p in _PLANS):
        raise ConfigError("--rate-steps/--thread-steps are not supported with --ray yet")
    base_seed = int(effective["rand_seed"])
    ray = cluster.connect(ray_address)
    clients = clients or cluster.node_count(ray)
    shared_seed = workload in SHARED_SEED_WORKLOADS
    shares = split_load(effective, clients, base_seed, shared_seed=shared_seed)
    if out is None:
        run_dir, created = create_default_run_dir(results_root, workload, datetime.now()), True
    else:
        run_dir, created = out, create_run_dir(out)
    placed = cluster.place(ray, clients)
    try:
        return _run_placed(
            ray,
            placed,
            run_dir,
            created,
            shares,
            workload,
            effective,
            db_url,
            argv,
            on_event,
            ray_address,
            _Extras(tuple(metrics), lab),
        )
    except BaseException:
        if created and not (run_dir / "run.json").exists():
            remove_empty_dir(run_dir)
        raise
    finally:
        cluster.release(ray, placed)


def _run_placed(
    ray: Any,
    placed: cluster.Placed,
    run_dir: Path,
    created: bool,
    shares: list[Share],
    workload: str,
    effective: dict[str, Any],
    db_url: str,
    argv: Sequence[str] | None,
    on_event: EventHandler | None,
    address: str,
    extras: "_Extras",
) -> RunResult:
    clients = _prepare_clients(ray, run_dir, shares, workload, effective, db_url, placed)
    sampler = MetricsSampler(run_dir, extras.metrics, db_url) if extras.metrics else None
    margin_s = start_margin_s(clients)
    start_at = time.time() + margin_s
    manifest = initial_manifest(workload=workload, options=effective, db_url=db_url, argv=argv)
    manifest = replace(manifest, distributed=distributed_plan(address, clients, start_at, margin_s))
    writer = RunWriter.create(
        run_dir, with_extras(manifest, sampler, extras.lab), created_dir=created
    )
    merge = engine.RunMerge(engine.build_spec(workload, db_url, effective))
    state = _Run(writer, clients, effective, merge, sampler)
    state.run_start = start_at
    for c in clients:
        c.start_at = start_at + c.clock.offset_s  # the same instant, on the client's clock
        spec = engine.build_spec(workload, db_url, _share_options(effective, c.share))
        numbers = {"first": c.share.first_thread, "all": sum(s.threads for s in shares)}
        timing = {"start_at": c.start_at, "workers": numbers}
        c.actor.start.remote(spec | timing | arrival_phase(effective, c.share))
    try:
        if sampler is not None:
            sampler.start()  # its baseline again at the merged "started" event (sampler.py)
        interrupted = _drive(state, ray, on_event)
    finally:
        if sampler is not None:
            sampler.close()  # its rows are on disk before run.json says complete
    if all(c.started is None and c.error is not None for c in clients):
        # Every engine refused the run before it started (no tables, a bad option): as a
        # local run, leave nothing behind and raise the engine's own error.
        for c in clients:
            c.writer.discard()
        remove_empty_dir(run_dir / CLIENTS_DIR)
        if sampler is not None:
            sampler.discard()
        writer.discard()
        raise refused(clients[0])
    for c in clients:
        if c.lost is None:
            c.clock_end = _clock_of(ray, c.actor, samples=5)
    return _finish(state, interrupted)


@dataclass(frozen=True)
class _Extras:
    metrics: tuple[str, ...]
    lab: LabFields | None  # a lab cell's fields in run.json


_ENGINE_ERRORS: dict[str, type[OltpLabError]] = {
    cls.__name__: cls for cls in (ConfigError, ConnectError, NotPreparedError, DriverError)
}


def refused(client: Client) -> OltpLabError:
    cls = _ENGINE_ERRORS.get(client.error_type or "", DriverError)
    return cls(f"client {client.index}: {client.error}")


def arrival_phase(options: Mapping[str, Any], share: Share) -> Json:
    """Uniform arrivals: client i's schedule shifted by i / total rate, so that the clients'
    arrivals interleave instead of coming in bursts of N (Poisson streams need no shift)."""
    rate = float(options.get("rate") or 0)
    if rate <= 0 or options.get("rate_arrivals") != "uniform":
        return {}
    return {"arrival_phase_s": share.index / rate}


def _finish(state: _Run, interrupted: bool) -> RunResult:
    clients = state.clients
    results = [c.result for c in clients if c.result is not None]
    failures = [f"client {c.index}: {c.error}" for c in clients if c.error is not None]
    late = any((c.start_late_s() or 0.0) > START_LATE_LIMIT_S for c in clients)
    error = "; ".join([*failures, *filter(None, [state.losses.describe()])]) or None
    ended = [float(result["ended_at"]) - c.clock.offset_s for c, result in _with_results(clients)]
    own_flags = {"client_lost": bool(state.losses.items), "client_started_late": late}
    result = state.merge.finish(
        results,
        started_at=state.run_start,
        ended_at=max(ended, default=time.time()),
        interrupted=interrupted,
        error=error,
        flags=[flag for flag, raised in own_flags.items() if raised],
    )
    planned = state.writer.manifest.distributed
    assert planned is not None  # written before the clients started
    distributed = replace(
        planned,
        clients=tuple(c.record() for c in clients),
        losses=tuple(state.losses.items),
        merge=MergeCost(intervals=state.merged_intervals, driver_cpu_s=state.merge_s),
    )
    state.writer.manifest = replace(state.writer.manifest, distributed=distributed)
    manifest = state.writer.finish(result)
    return RunResult(state.writer.run_dir, manifest, raw=result)


def _with_results(clients: list[Client]) -> list[tuple[Client, Json]]:
    return [(c, c.result) for c in clients if c.result is not None]
