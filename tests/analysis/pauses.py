"""Synthetic runs of known truth for stall lengths: a simulated server that completes the
transactions of a closed loop (N connections, back to back) or an open loop (Poisson
arrivals served by N connections) and stops completing anything from `at_s` for `for_s`
seconds, as a SIGSTOP does. The completions are cut into interval events with their real
latencies and written through the run directory writer, so the analysis reads exactly what
it reads from a real run."""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from oltplab.rundir import RunWriter
from oltplab.rundir.manifest import initial_manifest
from tests import synthetic

NS_PER_S = 1e9


# How much slower a transaction runs while a host is slow to resume (Pause.sluggish_s).
SLUGGISH_FACTOR = 20.0


@dataclass(frozen=True)
class Pause:
    at_s: float
    for_s: float
    # After SIGCONT, this long a starved host runs transactions SLUGGISH_FACTOR times slower
    # (seen under a load average of 90: the interval after the pause fell below the threshold).
    sluggish_s: float = 0.0

    def delay(self, begin_s: float, done_s: float) -> float:
        """When a transaction that would run from begin_s to done_s completes."""
        resumed_s = self.at_s + self.for_s
        if begin_s < self.at_s < done_s:
            return done_s + self.for_s  # in flight: frozen with the server
        if self.at_s <= begin_s < resumed_s:
            return resumed_s + (done_s - begin_s)  # waits for SIGCONT
        if resumed_s <= begin_s < resumed_s + self.sluggish_s:
            return begin_s + SLUGGISH_FACTOR * (done_s - begin_s)
        return done_s


@dataclass(frozen=True)
class Load:
    threads: int = 4
    service_s: float = 0.008  # mean service time: ~500 tps closed loop at 4 connections
    rate_per_s: float = 0.0  # 0: closed loop
    run_s: float = 24.0


def _service(rng: np.random.Generator, load: Load) -> float:
    return float(rng.gamma(4.0, load.service_s / 4.0))


def closed_loop(load: Load, pauses: list[Pause], seed: int) -> list[tuple[float, float]]:
    """(completion time, latency) of every transaction, in seconds."""
    rng = np.random.default_rng(seed)
    done = []
    for _ in range(load.threads):
        t = float(rng.uniform(0, load.service_s))
        while True:
            end = t + _service(rng, load)
            for pause in pauses:
                end = pause.delay(t, end)
            if end > load.run_s:
                break
            done.append((end, end - t))
            t = end
    return done


def open_loop(load: Load, pauses: list[Pause], seed: int) -> list[tuple[float, float]]:
    """Response times: from the scheduled arrival, as the engine measures them."""
    rng = np.random.default_rng(seed)
    free = [0.0] * load.threads
    done = []
    arrival = 0.0
    while True:
        arrival += float(rng.exponential(1.0 / load.rate_per_s))
        k = int(np.argmin(free))
        begin = max(arrival, free[k])
        end = begin + _service(rng, load)
        for pause in pauses:
            end = pause.delay(begin, end)
        if arrival > load.run_s:
            break
        free[k] = end
        if end <= load.run_s:
            done.append((end, end - arrival))
    return done


def write_run(
    path: Path,
    done: list[tuple[float, float]],
    load: Load,
    interval_s: float,
    edge_jitter_s: float = 0.0,
) -> Path:
    """A run directory whose intervals hold `done`, cut every `interval_s` (each cut late by
    up to `edge_jitter_s`, as a real engine's timer fires: edges off the round grid)."""
    count = round(load.run_s / interval_s)
    by_interval: list[list[int]] = [[] for _ in range(count)]
    for end, latency in done:
        k = min(int(np.ceil(end / interval_s)) - 1, count - 1)
        by_interval[max(k, 0)].append(max(1, round(latency * NS_PER_S)))
    ends = [interval_s * (k + 1) + edge_jitter_s * ((k * 7919) % 1000) / 1000 for k in range(count)]
    events = [
        synthetic.interval_event(
            ends[k],
            interval_s=ends[k] - (ends[k - 1] if k else 0.0),  # rounded apart from the ends
            threads=load.threads,
            values_ns=values,
        )
        for k, values in enumerate(by_interval)
    ]
    opts = {"threads": load.threads, "rate": load.rate_per_s, "report_interval": interval_s}
    manifest = initial_manifest(
        workload="oltp_read_write",
        options=synthetic.options(**opts),
        db_url="sqlite:///x.db",
        argv=None,
    )
    path.mkdir(parents=True)
    writer = RunWriter.create(path, manifest, created_dir=True)
    writer.on_event(synthetic.started_event(threads=load.threads))
    for event in events:
        writer.on_event(event)
    writer.finish(synthetic.run_result(events, threads=load.threads, opts=opts))
    return path
