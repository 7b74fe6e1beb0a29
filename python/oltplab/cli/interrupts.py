"""Remembers whether Ctrl-C was pressed, or SIGTERM received.

The engine turns Ctrl-C into a graceful stop: `run` returns a partial result, while an
interrupted `prepare`, or a run interrupted while connecting, raises KeyboardInterrupt. The
CLI exits 130 in every case, so it records SIGINT itself while behaving exactly as Python's
default handler. SIGTERM (a supervisor, `kill`, a CI timeout) stops the work the same way,
so that what was measured is kept and marked incomplete; the exit code is then 143
(128 + SIGTERM), as a process killed by it reports, so the caller can tell the two apart.
"""

import signal
import threading
from types import FrameType, TracebackType
from typing import Any

WATCHED = (signal.SIGINT, signal.SIGTERM)


class InterruptWatch:
    def __init__(self) -> None:
        self.interrupted = False
        self.signum: int | None = None  # the signal that interrupted, when one did
        self._previous: dict[int, Any] = {}  # whatever handlers were installed

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        self.interrupted = True
        self.signum = self.signum or signum
        raise KeyboardInterrupt

    def __enter__(self) -> "InterruptWatch":
        # Signal handlers can only be set from the main thread (tests may call main() elsewhere).
        if threading.current_thread() is threading.main_thread():
            for signum in WATCHED:
                self._previous[signum] = signal.signal(signum, self._handler)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is KeyboardInterrupt:
            self.interrupted = True
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    @property
    def terminated(self) -> bool:
        return self.signum == signal.SIGTERM
