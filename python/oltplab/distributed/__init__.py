"""Distributed load on Ray: one engine actor per client machine, started at one instant,
their intervals merged exactly by the engine (`engine.RunMerge`: counts added, histograms
added, never percentiles averaged; the result assembled as a local run's) into one ordinary
run directory, with each client's own under clients/<i>/. Callers reach it through
`oltplab.runners.RayRunner`.

Modules: shares (each client's part of the load), cluster (Ray: joining, placement,
losses), actor (the engine actor), clock (offsets by round trips), align (intervals by
time), clients (per-client state and directories), driver (the run), prepare (tables dealt
over clients). Ray is imported only when a distributed command runs
(`pip install 'oltplab[ray]'`).
"""

from oltplab.distributed.driver import run
from oltplab.distributed.prepare import prepare

__all__ = ["prepare", "run"]
