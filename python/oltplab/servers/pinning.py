"""CPU pinning (sched_setaffinity) of a process with every thread and every process of its
session, and reading back what the kernel applied (Cpus_allowed_list in /proc/PID/status).

A managed server runs in a session of its own (process.spawn), so "its session" is the
server: mariadbd with its threads, or PostgreSQL's postmaster with every backend. Threads and
processes created later inherit the mask from their creator.
"""

import contextlib
import os
from pathlib import Path

from oltplab.exceptions import ConfigError

_PROC = Path("/proc")


def parse_cpu_list(text: str) -> set[int]:
    """ "0-2,5" -> {0, 1, 2, 5}; a ConfigError naming the fix when malformed or not online."""
    cpus: set[int] = set()
    try:
        for part in text.split(","):
            lo, _, hi = part.strip().partition("-")
            first, last = int(lo), int(hi or lo)
            if first < 0 or last < first:
                raise ValueError
            cpus.update(range(first, last + 1))
    except ValueError:
        raise ConfigError(
            f'CPU list {text!r} is not valid; write it as taskset does, e.g. "0", "0-3", "0,2"'
        ) from None
    online = os.sched_getaffinity(0) | set(range(os.cpu_count() or 1))
    missing = sorted(cpus - online)
    if missing:
        raise ConfigError(
            f"CPU list {text!r} names CPU {missing[0]}, but this host has CPUs 0-{max(online)}"
        )
    return cpus


def _tasks(pid: int) -> list[int]:
    try:
        return [int(t.name) for t in (_PROC / str(pid) / "task").iterdir()]
    except OSError:
        return []


def _session_processes(pid: int) -> list[int]:
    try:
        sid = os.getsid(pid)
    except OSError:
        return []
    found = []
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if os.getsid(int(entry.name)) == sid:
                    found.append(int(entry.name))
    return found


def pin_session(pid: int, cpus: set[int]) -> None:
    """Pins every thread of every process in `pid`'s session (a managed server), and checks
    that the kernel applied it (Cpus_allowed_list of the main process)."""
    for proc in _session_processes(pid) or [pid]:
        for task in _tasks(proc):
            with contextlib.suppress(ProcessLookupError):  # a backend that just exited
                os.sched_setaffinity(task, cpus)
    _check(pid, cpus, "the server")


def pin_self(cpus: set[int]) -> None:
    """Pins this process and all its threads (the engine's runtime threads included)."""
    for task in _tasks(os.getpid()) or [0]:
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(task, cpus)
    _check(None, cpus, "oltplab")


def _check(pid: int | None, cpus: set[int], what: str) -> None:
    allowed = cpus_allowed_list(pid)
    if parse_cpu_list(allowed) != cpus:
        raise ConfigError(
            f"pinning {what} to CPUs {sorted(cpus)} did not take: the kernel reports "
            f"Cpus_allowed_list {allowed} (a cgroup cpuset may forbid them); choose CPUs "
            "this process may use"
        )


def cpus_allowed_list(pid: int | None = None) -> str:
    """The kernel's Cpus_allowed_list of `pid` (this process when None), e.g. "0-1"."""
    status = _PROC / ("self" if pid is None else str(pid)) / "status"
    for line in status.read_text(encoding="utf-8").splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    return ""
