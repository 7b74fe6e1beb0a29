"""The engine actor: one per client machine. It runs the ordinary engine in a thread of
its own (the engine releases the GIL), keeps its progress events until the driver drains
them, and stops gracefully when asked (the engine's progress callback raises
KeyboardInterrupt, which the engine treats as Ctrl-C: the partial result is returned).

This class is plain Python; cluster.py makes it a Ray actor. Nothing here imports Ray.
"""

import os
import socket
import threading
import time
from typing import Any

from oltplab import engine
from oltplab._types import Json
from oltplab.host import host_facts


class EngineClient:
    def __init__(self, index: int) -> None:
        self.index = index
        self._lock = threading.Lock()
        self._events: list[Json] = []
        self._stop = threading.Event()
        self._finished = threading.Event()  # set when the run thread has its result or error
        self._result: Json | None = None
        self._error: str | None = None
        self._error_type: str | None = None  # the exception's class name, for the driver

    def now(self) -> float:
        """This host's wall clock: the clock-offset probe."""
        return time.time()

    def facts(self) -> Json:
        return host_facts() | {"pid": os.getpid(), "address": _address()}

    def prepare(self, spec: Json) -> Json:
        """Builds this client's share of the tables (spec["units"]); blocks until done."""
        return engine.prepare(spec)

    def start(self, spec: Json) -> None:
        """Starts the run (spec["start_at"]: when, on this host's clock) and returns at once."""
        threading.Thread(target=self._run, args=(spec,), daemon=True).start()

    def stop(self) -> None:
        """Ends the run at the next progress event (within one interval)."""
        self._stop.set()

    def drain(self) -> Json:
        """Events since the last drain; `done` with the result (or error) once the run ended."""
        with self._lock:
            events, self._events = self._events, []
            # Ray may run a drain before or during start: only the run thread says it is done.
            done = self._finished.is_set()
        return {
            "events": events,
            "done": done,
            "result": self._result,
            "error": self._error,
            "error_type": self._error_type,
        }

    def _on_event(self, event: Json) -> None:
        with self._lock:
            self._events.append(event)
        if self._stop.is_set():
            raise KeyboardInterrupt  # the engine's graceful stop

    def _run(self, spec: Json) -> None:
        try:
            self._result = engine.run(spec, self._on_event)
        except BaseException as e:  # reported to the driver, which decides
            self._error, self._error_type = str(e) or type(e).__name__, type(e).__name__
        finally:
            with self._lock:  # after the last event: a drain that sees done has every event
                self._finished.set()


def _address() -> Any:
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return None
