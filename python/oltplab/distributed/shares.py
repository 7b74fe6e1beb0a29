"""How a load is split over N clients: each client's share of --threads, --rate,
--events and of the tables to prepare. Shares are whole numbers by largest remainder
(the first clients take one more), so they add up to the total exactly; a rate is split
in proportion to connections, so every connection is offered the same rate.
"""

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oltplab.exceptions import ConfigError


def split_count(total: int, clients: int) -> list[int]:
    """`total` over `clients`: floor(total / clients) each, one more for the first ones."""
    base, extra = divmod(total, clients)
    return [base + (1 if i < extra else 0) for i in range(clients)]


@dataclass(frozen=True)
class Share:
    index: int
    threads: int
    rate_per_s: float  # 0: closed loop
    events: int  # 0: no limit
    rand_seed: int  # differs per client, so that key streams and arrivals do not repeat
    first_thread: int = 0  # its threads' numbers among all clients' (0-based)


def client_seed(base_seed: int, index: int) -> int:
    """A per-client seed derived from the run's (never 0, which means "from the clock")."""
    return (base_seed * 1_000_003 + index + 1) % (1 << 63) or 1


def with_fixed_seed(options: Mapping[str, Any]) -> dict[str, Any]:
    """`--rand-seed=0` means "from the clock": a distributed run draws it once, in the
    driver, so that every client's seed derives from one recorded value."""
    seed = int(options.get("rand_seed") or 0) or time.time_ns() % (1 << 62) + 1
    return dict(options) | {"rand_seed": seed}


# Workloads whose run-wide constants come from the seed (TPC-C's C_RUN: clause 2.1.6 wants one
# for every terminal): every client takes the run's own seed, and its threads' global numbers
# (the engine's `workers`) keep their random streams apart, as in one process.
SHARED_SEED_WORKLOADS = frozenset({"tpcc"})


def split_load(
    effective: Mapping[str, Any], clients: int, base_seed: int, *, shared_seed: bool = False
) -> list[Share]:
    """Each client's share of the resolved options (`effective`: every option, defaults filled);
    `shared_seed`: every client keeps `base_seed` (SHARED_SEED_WORKLOADS)."""
    threads = int(effective.get("threads", 1))
    if threads < clients:
        raise ConfigError(
            f"--threads={threads} is fewer than --clients={clients}; "
            "give every client at least one connection"
        )
    thread_shares = split_count(threads, clients)
    rate = float(effective.get("rate", 0) or 0)
    events = split_count(int(effective.get("events", 0) or 0), clients)
    if any(e == 0 for e in events) and any(e > 0 for e in events):
        raise ConfigError(f"--events is fewer than --clients={clients}; give at least one each")
    return [
        Share(
            index=i,
            threads=thread_shares[i],
            rate_per_s=rate * thread_shares[i] / threads,
            events=events[i],
            rand_seed=base_seed if shared_seed else client_seed(base_seed, i),
            first_thread=sum(thread_shares[:i]),
        )
        for i in range(clients)
    ]


def split_units(units: int, clients: int) -> list[list[int]]:
    """Tables 1..units dealt round-robin: client i builds i+1, i+1+clients, ..."""
    return [list(range(i + 1, units + 1, clients)) for i in range(clients)]
