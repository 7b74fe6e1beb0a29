"""Each client's clock offset to the driver, measured by round trips (NTP's formulas):
driver t0 -> client t1 = t2 -> driver t3. Offset = t1 - (t0 + t3) / 2, delay = t3 - t0;
the true offset is within delay / 2 of the estimate whatever the asymmetry. The sample
with the smallest delay is kept (NTP keeps the best of its last eight).
"""

import time
from collections.abc import Callable

from oltplab.documents.run import ClockOffset  # as run.json's distributed.clients[] hold it

SAMPLES = 20


def estimate(samples: list[tuple[float, float, float]]) -> ClockOffset:
    """From (t0, t1, t3) triples: driver send, client clock, driver receive."""
    t0, t1, t3 = min(samples, key=lambda s: s[2] - s[0])
    delay_s = t3 - t0
    return ClockOffset(
        offset_s=t1 - (t0 + t3) / 2, delay_s=delay_s, bound_s=delay_s / 2, samples=len(samples)
    )


def measure(client_now: Callable[[], float], samples: int = SAMPLES) -> ClockOffset:
    """`client_now` asks the client for its wall clock (one round trip) and returns it."""
    taken = []
    for _ in range(samples):
        t0 = time.time()
        t1 = client_now()
        taken.append((t0, t1, time.time()))
    return estimate(taken)
