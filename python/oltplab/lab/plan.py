"""The cells of a lab and the order they run in.

A cell = server x config x workload x threads (or rate) x repeat. "interleaved" (the default)
runs every config once, then again: repeat is the outer loop, so slow drift (thermal, page
cache, a neighbour) spreads over all configs instead of biasing whichever ran last.
"""

import hashlib
import json
import random
from collections.abc import Iterator

from oltplab.documents.lab import CellRecord, LabSpec, ServerSpec, WorkloadSpec
from oltplab.redact import redact_url


def cell_id(server: str, config: str, workload: str, load: str, repeat: int) -> str:
    return f"{server}.{config}.{workload}.{load}.r{repeat}"


def _loads(w: WorkloadSpec) -> Iterator[tuple[int, float | None, str]]:
    """(threads, rate, its part of the cell id) for each cell of a workload."""
    if w.rate:
        pool = w.threads[0] if w.threads else 1
        for rate in w.rate:
            yield pool, rate, f"q{rate:g}"
    else:
        for threads in w.threads:
            yield threads, None, f"t{threads}"


def _cells_of(spec: LabSpec, repeat: int) -> Iterator[CellRecord]:
    for w in spec.workloads:
        for threads, rate, load in _loads(w):
            for s in spec.servers:
                for config in s.configs:
                    yield CellRecord(
                        id=cell_id(s.name, config, w.key, load, repeat),
                        server=s.name,
                        config=config,
                        workload=w.key,
                        threads=threads,
                        rate=rate,
                        repeat=repeat,
                    )


def plan_cells(spec: LabSpec) -> list[CellRecord]:
    """Every cell, in the order they run."""
    interleaved = [c for r in range(1, spec.repeats + 1) for c in _cells_of(spec, r)]
    if spec.order == "random":
        random.Random(spec.seed).shuffle(interleaved)
        return interleaved
    if spec.order == "sequential":  # all repeats of a cell together, one config at a time
        rank = {(s.name, c): i for i, (s, c) in enumerate(_configs(spec))}
        return sorted(interleaved, key=lambda c: (rank[(c.server, c.config)],))
    return interleaved


def _configs(spec: LabSpec) -> Iterator[tuple[ServerSpec, str]]:
    for s in spec.servers:
        for c in s.configs:
            yield s, c


def effective_variables(server: ServerSpec, config: str) -> dict[str, str]:
    """The server variables a config runs with: the server's settings, the config over them."""
    return {k: _text(v) for k, v in (server.settings | server.configs[config]).items()}


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    return str(value)


def config_differences(spec: LabSpec) -> dict[str, dict[str, dict[str, str]]]:
    """server -> config -> only the variables whose value differs between its configs."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for s in spec.servers:
        every = {c: effective_variables(s, c) for c in s.configs}
        names = {n for v in every.values() for n in v}
        differing = {n for n in names if len({v.get(n) for v in every.values()}) > 1}
        out[s.name] = {c: {n: v[n] for n in sorted(differing) if n in v} for c, v in every.items()}
    return out


def fingerprint(spec: LabSpec) -> str:
    return hashlib.sha256(json.dumps(spec.to_json(), sort_keys=True).encode()).hexdigest()[:16]


_SAME_LAB_KEYS = (
    "name",
    "time_s",
    "warmup_time_s",
    "order",
    "seed",
    "restore",
    "report_interval_s",
    "metrics",
    "client_cpus",
    "client_ray",
    "client_clients",
)


def resume_difference(old: LabSpec, new: LabSpec) -> str | None:
    """Why `new` cannot resume a lab started as `old`; None when it only adds cells (more
    repeats, thread counts, rates, workloads, configs or servers)."""
    for key in _SAME_LAB_KEYS:
        before, after = getattr(old, key), getattr(new, key)
        if before != after:
            return f"[lab] {key.removesuffix('_s')} changed from {before!r} to {after!r}"
    if new.repeats < old.repeats:
        return f"repeats went down from {old.repeats} to {new.repeats}"
    servers = {s.name: s for s in new.servers}
    for s in old.servers:
        why = _server_difference(s, servers.get(s.name))
        if why is not None:
            return why
    workloads = {w.key: w for w in new.workloads}
    for w in old.workloads:
        why = _workload_difference(w, workloads.get(w.key))
        if why is not None:
            return why
    return None


def _server_difference(old: ServerSpec, new: ServerSpec | None) -> str | None:
    if new is None:
        return f"server {old.name} was removed"
    if _redacted(old.url) != _redacted(new.url):  # lab.json keeps URLs redacted
        return f"server {old.name}'s url changed"
    for key in ("engine", "cpus", "max_connections", "settings"):
        if getattr(old, key) != getattr(new, key):
            return f"server {old.name}'s {key} changed"
    for config, variables in old.configs.items():
        if config not in new.configs:
            return f"config {old.name}.{config} was removed"
        if new.configs[config] != variables:
            return f"config {old.name}.{config} changed"
    return None


def _redacted(url: str | None) -> str | None:
    return None if url is None else redact_url(url)


def _workload_difference(old: WorkloadSpec, new: WorkloadSpec | None) -> str | None:
    if new is None:
        return f"workload {old.key} was removed"
    if new.options != old.options or new.name != old.name:
        return f"workload {old.key}'s options changed"
    if (new.script, new.script_sha256) != (old.script, old.script_sha256):
        return f"workload {old.key}'s script changed"
    for field, before, after in (
        ("threads", old.threads, new.threads),
        ("rate", old.rate, new.rate),
    ):
        missing = set(before) - set(after)
        if missing:
            return f"workload {old.key}'s {field} {sorted(missing)[0]:g} was removed"
    return None
