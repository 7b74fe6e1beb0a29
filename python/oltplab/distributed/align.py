"""Lines the clients' intervals up by time. All clients start at one instant and use one
interval length, so every client's k-th interval covers the same span: interval k is
merged once every client still running has delivered it (by time, not by arrival). A
client that finished or was lost delivers no more; the others go on without it.
"""

from collections import deque

from oltplab._types import Json


class IntervalAligner:
    def __init__(self, clients: int) -> None:
        self._queues: list[deque[Json]] = [deque() for _ in range(clients)]
        self._ended = [False] * clients

    def push(self, client: int, interval: Json) -> None:
        self._queues[client].append(interval)

    def end(self, client: int) -> None:
        """The client will deliver no more intervals (it finished, or it was lost)."""
        self._ended[client] = True

    def ready(self) -> list[list[tuple[int, Json]]]:
        """Every interval that is now complete: per interval, (client, event) of each client."""
        out: list[list[tuple[int, Json]]] = []
        while True:
            pairs = zip(self._queues, self._ended, strict=True)
            waiting = any(not q and not ended for q, ended in pairs)
            if waiting or not any(self._queues):
                return out
            out.append([(i, q.popleft()) for i, q in enumerate(self._queues) if q])
