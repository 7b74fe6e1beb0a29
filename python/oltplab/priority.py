"""`nice -n -15 oltplab ...` that works across sessions.

fork keeps a process's nice, so a managed server started by a niced oltplab has its nice. But
on a kernel with autogroup scheduling (`/proc/sys/kernel/sched_autogroup_enabled` = 1, the
default of many distributions), CPU time is first shared between *sessions*, each an
autogroup with a nice of its own (0 unless set): a thread's nice only counts against threads
of its own session (man 7 sched, "The autogroup feature"). A managed server runs in a session
of its own (servers/process.spawn), so it would compete with every other session's builds as
a nice-0 group whatever `ps -o ni` shows, and so would oltplab itself, in its terminal's
session. Measured on a shared 2-core host: the niced server of a closed-loop cell used 15% of
a core; with its autogroup at the same nice, 60-75%.

So the priority the user asked for is given to the groups too: a server's session gets
oltplab's nice when it starts (`share_with_session`), and oltplab's own session for the
duration of a command (`own_session`), restored after it. Only ever lowered, never raised;
without autogroups, or without the right to lower a nice (CAP_SYS_NICE), nothing changes.
"""

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

_ENABLED = Path("/proc/sys/kernel/sched_autogroup_enabled")
_NICE = re.compile(r"nice\s+(-?\d+)")


def autogroups_enabled() -> bool:
    try:
        return _ENABLED.read_text(encoding="ascii").strip() == "1"
    except OSError:
        return False


def autogroup_nice(pid: int | None = None) -> int | None:
    """The nice of `pid`'s autogroup (this process's when None); None when unknown."""
    path = Path("/proc") / ("self" if pid is None else str(pid)) / "autogroup"
    try:
        found = _NICE.search(path.read_text(encoding="ascii"))
    except OSError:
        return None
    return int(found.group(1)) if found else None


def _set_autogroup_nice(pid: int | None, nice: int) -> bool:
    path = Path("/proc") / ("self" if pid is None else str(pid)) / "autogroup"
    try:
        path.write_text(f"{nice}\n", encoding="ascii")
    except OSError:  # EPERM without CAP_SYS_NICE; ESRCH for a process that just exited
        return False
    return True


def _lower_to(pid: int | None, nice: int) -> int | None:
    """Lowers `pid`'s autogroup nice to `nice`; the nice it had when changed, else None."""
    if not autogroups_enabled():
        return None
    before = autogroup_nice(pid)
    if before is None or nice >= before:
        return None
    return before if _set_autogroup_nice(pid, nice) else None


def share_with_session(pid: int) -> None:
    """Gives the session of `pid` (a server just started in a session of its own) this
    process's nice, when that is lower than its group's."""
    _lower_to(pid, os.nice(0))


@contextlib.contextmanager
def own_session() -> Iterator[None]:
    """Runs with this process's session at this process's nice (when lower), then restores the
    session's nice: the shell's other jobs get their share back."""
    before = _lower_to(None, os.nice(0))
    try:
        yield
    finally:
        if before is not None:
            _set_autogroup_nice(None, before)
