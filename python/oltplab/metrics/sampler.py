"""Samples system.csv and server.csv on the run's interval grid.

The run's event handler passes each engine event to `on_event`; an "interval" event queues
its `t_s` and returns at once (the engine's reporter must never wait for us). A thread of
its own takes the sample and appends one row per file with exactly that `t_s`. When a sample
is late (a stalled server answering slowly, or this thread short of CPU beside a client of a
thousand connections), ticks that queued meanwhile get empty cells rather than values read at
the wrong time: a system row read right after the previous one would cover a few
milliseconds (CPU shares of 0 or 100%, rates of nothing). The next row on time covers
everything since the last sample: each row's `span_s` says how long that was.

The baseline is taken again when the load starts (the "started" event): rates measured from
`start()`, before the clients connect, would spread the first interval's work over the
connect time and count the connections' own set-up statements.
"""

import contextlib
import csv
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, cast

from oltplab._types import Json
from oltplab.documents.run import (
    METRICS_SPAN_COLUMN,
    SERVER_METRICS_FILE,
    SYSTEM_METRICS_FILE,
    MetricKind,
    RunManifest,
)
from oltplab.exceptions import ConfigError
from oltplab.metrics import system
from oltplab.metrics.server import ServerProbe, server_row
from oltplab.rundir.intervals import Column, t_s_cell

METRIC_KINDS = ("system", "server")
# Queued beside the ticks' t_s (never negative): close() asked to stop; the load started.
_STOP = -1.0
_BASELINE = -2.0


def parse_metrics(text: str | None) -> tuple[str, ...]:
    """`--metrics system,server` -> ("system", "server"); a ConfigError for unknown names."""
    if not text:
        return ()
    kinds = tuple(dict.fromkeys(k.strip() for k in text.split(",") if k.strip()))
    for kind in kinds:
        if kind not in METRIC_KINDS:
            raise ConfigError(
                f"--metrics: unknown kind '{kind}'; choose from: {', '.join(METRIC_KINDS)}"
            )
    return kinds


def _cell(value: float | None) -> str:
    if value is None:
        return ""
    if value.is_integer() and abs(value) < 1e18:  # byte counts and gauges: no exponent
        return str(int(value))
    return f"{value:.10g}"


class MetricsSampler:
    def __init__(self, run_dir: Path, kinds: Sequence[str], db_url: str) -> None:
        self.kinds = tuple(kinds)
        self._run_dir = run_dir
        self._probe = ServerProbe(db_url) if "server" in self.kinds else None
        self._ticks: queue.Queue[float] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._files: list[IO[str]] = []
        self._system_writer: csv.DictWriter[str] | None = None
        self._server_writer: csv.DictWriter[str] | None = None
        self.thread_cpu_s = 0.0  # this sampler's own CPU (inside the engine's client_cpu_s)
        self.child_cpu_s = 0.0  # its database client process's CPU (outside client_cpu_s)

    @property
    def cpu_s(self) -> float:
        """Everything sampling cost the client host in CPU seconds (complete after close)."""
        return self.thread_cpu_s + self.child_cpu_s

    @property
    def files(self) -> list[str]:
        """The files this sampler writes."""
        names = {"system": SYSTEM_METRICS_FILE, "server": SERVER_METRICS_FILE}
        return [names[kind] for kind in self.kinds]

    def recorded_in(self, manifest: RunManifest) -> RunManifest:
        """run.json's fields that name what this sampler writes (`manifest` updated)."""
        files = replace(
            manifest.files,
            system=SYSTEM_METRICS_FILE if "system" in self.kinds else None,
            server=SERVER_METRICS_FILE if "server" in self.kinds else None,
        )
        kinds = tuple(cast(MetricKind, k) for k in self.kinds)
        return replace(manifest, metrics=kinds, files=files)

    def discard(self) -> None:
        """Closes and removes the files (the load never started: nothing was measured)."""
        self.close()
        for name in self.files:
            (self._run_dir / name).unlink(missing_ok=True)

    def start(self) -> None:
        """Opens the files and takes the baseline samples (call just before the run)."""
        cpu_before_s = time.thread_time()
        self._start()
        self.thread_cpu_s += time.thread_time() - cpu_before_s
        self._thread = threading.Thread(target=self._work, name="oltplab-metrics", daemon=True)
        self._thread.start()

    def _start(self) -> None:
        self._system_prev = system.snapshot()
        if "system" in self.kinds:
            self._system_writer = self._open(SYSTEM_METRICS_FILE, system.columns(self._system_prev))
        if self._probe is not None:
            self._probe.start()
            self._server_prev = self._probe.sample()
            # Columns the server does not have (Threadpool_* without the pool) are left out.
            self._server_columns = [
                c for c in self._probe.columns() if c[0] in self._server_prev[1]
            ]
            self._server_writer = self._open(
                SERVER_METRICS_FILE, [name for name, _ in self._server_columns]
            )

    def on_event(self, event: Json) -> None:
        kind = event.get("event")
        if kind == "interval":
            self._ticks.put(float(event[Column.t_s]))
        elif kind == "started":
            self._ticks.put(_BASELINE)

    def close(self) -> None:
        """Writes the rows still queued, then closes the files and the server connection."""
        if self._thread is not None:
            self._ticks.put(_STOP)
            self._thread.join()
            self._thread = None
        if self._probe is not None:
            self.child_cpu_s += self._probe.close()
        for f in self._files:
            with contextlib.suppress(OSError):
                f.close()

    def _open(self, name: str, columns: list[str]) -> "csv.DictWriter[str]":
        f = (self._run_dir / name).open("w", newline="", encoding="utf-8")
        self._files.append(f)
        fields = [Column.t_s, METRICS_SPAN_COLUMN, *columns]
        writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        f.flush()
        return writer

    def _work(self) -> None:
        cpu_before_s = time.thread_time()
        while True:
            t_s = self._ticks.get()
            if t_s == _STOP:
                self.thread_cpu_s += time.thread_time() - cpu_before_s
                return
            if t_s == _BASELINE:
                self._rebaseline()
            else:
                self._sample(t_s, late=self._tick_waiting())

    def _rebaseline(self) -> None:
        self._system_prev = system.snapshot()
        if self._probe is not None:
            sample = self._probe.sample()
            if sample[1]:
                self._server_prev = sample

    def _tick_waiting(self) -> bool:
        """Another tick is queued: this one is stale. (The stop that close() queues right
        after the last tick is not one: the last interval is sampled on time.)"""
        with self._ticks.mutex:
            return any(t >= 0 for t in self._ticks.queue)

    def _sample(self, t_s: float, late: bool) -> None:
        if self._system_writer is not None:
            cells: dict[str, str] = {}
            if not late:
                now = system.snapshot()
                values = system.row(self._system_prev, now)
                span_s = now.at_s - self._system_prev.at_s
                self._system_prev = now
                cells = {METRICS_SPAN_COLUMN: _cell(span_s)}
                cells |= {k: _cell(v) for k, v in values.items()}
            self._system_writer.writerow({Column.t_s: t_s_cell(t_s)} | cells)
        if self._server_writer is not None and self._probe is not None:
            server_cells: dict[str, str] = {}
            if not late:
                sample = self._probe.sample()
                if sample[1]:
                    row = server_row(self._server_columns, self._server_prev, sample)
                    span_s = sample[0] - self._server_prev[0]
                    server_cells = {METRICS_SPAN_COLUMN: _cell(span_s)}
                    server_cells |= {k: _cell(v) for k, v in row.items()}
                    self._server_prev = sample
            self._server_writer.writerow({Column.t_s: t_s_cell(t_s)} | server_cells)
        for f in self._files:
            f.flush()
