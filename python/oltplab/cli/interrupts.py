"""Remembers whether Ctrl-C was pressed.

The engine turns Ctrl-C into a graceful stop: `run` returns a partial result, while an
interrupted `prepare`, or a run interrupted while connecting, raises KeyboardInterrupt. The
CLI exits 130 in every case, so it records SIGINT itself while behaving exactly as Python's
default handler.
"""

import signal
import threading
from types import FrameType, TracebackType
from typing import Any


class InterruptWatch:
    def __init__(self) -> None:
        self.interrupted = False
        self._previous: Any = None  # whatever handler was installed
        self._installed = False

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        self.interrupted = True
        raise KeyboardInterrupt

    def __enter__(self) -> "InterruptWatch":
        # Signal handlers can only be set from the main thread (tests may call main() elsewhere).
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handler)
            self._installed = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is KeyboardInterrupt:
            self.interrupted = True
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
