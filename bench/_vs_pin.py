"""bench/vs_sysbench.py's "pinned" rows: loopback TCP with the client on the first core and
the server on the others, so that neither takes CPU from the other (issue 22's throughput
pinned apart). Both tools are pinned the same way."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from _common import children

from oltplab.servers import ManagedServer

CLIENT_CPU = 0


def client_prefix() -> list[str]:
    """What runs a client on its core (taskset execs it: the client keeps its pid)."""
    return ["taskset", "-c", str(CLIENT_CPU)]


@contextmanager
def pinned_apart(server: ManagedServer) -> Iterator[None]:
    """The server on every core but the client's while the block runs, then on all again.
    Threads and processes it starts meanwhile (MariaDB's connection threads, PostgreSQL's
    backends) inherit the affinity of the thread or postmaster that starts them."""
    cpus = os.sched_getaffinity(0)
    others = cpus - {CLIENT_CPU}
    if not others or CLIENT_CPU not in cpus:
        sys.exit(f"vs_sysbench.py: pinned runs need core {CLIENT_CPU} and another; drop "
                 "--pinned-configs on this machine")  # fmt: skip
    set_server_cpus(server, others)
    try:
        yield
    finally:
        set_server_cpus(server, cpus)


def set_server_cpus(server: ManagedServer, cpus: set[int]) -> None:
    """Every thread of the server's processes (PostgreSQL: the postmaster and its children)."""
    pid = server.pid()
    if pid is None:
        return
    for process in [pid, *children(pid)]:
        for task in Path(f"/proc/{process}/task").glob("*"):
            with suppress(OSError):  # the thread or process has just exited
                os.sched_setaffinity(int(task.name), cpus)
