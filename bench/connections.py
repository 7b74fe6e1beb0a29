#!/usr/bin/env python3
"""Connection scaling: how many connections one oltplab process holds, and what each costs.

Starts a private MariaDB (and, with --engines mariadb,postgresql, a PostgreSQL) through
oltplab.servers, sized for the largest point, prepares oltp_read_only, and runs `oltplab run
oltp_read_only` as a subprocess at each number of connections for a fixed time. Per point it
reports what issue 6 compares with sysbench: connection set-up time (connect_s), the client's
RSS once connected, under load and at its peak (VmHWM), its CPU time (user + sys) per
transaction while the load ran, tps, p95/p99, errors, and the server's memory. Prints a
Markdown table; --write-docs puts it into docs/performance.md ("Connection scaling"), with the
machine, the versions and the command.

    make build-release
    .venv/bin/python bench/connections.py                       # MariaDB: 1, 1000, 4096, 10000
    .venv/bin/python bench/connections.py --engines mariadb,postgresql --write-docs

See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from _common import (
    DOCS,
    MB,
    ROOT,
    SPARE_CONNECTIONS,
    Sampler,
    common_facts,
    fmt,
    get_ready,
    host_busy_pct,
    measured_on,
    memory_available_kb,
    oltplab_argv,
    per_txn_us,
    reproduce,
    server_memory_kb,
    start_server,
    wait_idle,
    write_docs,
)

from oltplab.rundir import load_run
from oltplab.servers import ManagedServer

SECTION = "## Connection scaling"
BEGIN = "<!-- bench/connections.py: begin (generated; edit the script, not this block) -->"
END = "<!-- bench/connections.py: end -->"
WORKLOAD = "oltp_read_only"
# Per-connection costs are slopes over the points from this many connections up.
SLOPE_FROM = 100


@dataclass
class Point:
    engine: str
    connections: int
    time_s: float
    complete: bool = False
    error: str | None = None
    connect_s: float | None = None
    transactions: int = 0
    tps: float = 0.0
    p95_ms: float | None = None
    p99_ms: float | None = None
    errors: int = 0
    reconnects: int = 0
    # VmHWM of the oltplab process, last sampled before it exited. Not wait4's ru_maxrss:
    # that also counts the pages the child shared with this process between fork and exec.
    client_peak_rss_kb: int | None = None
    client_connected_rss_kb: int | None = None  # when the load started (all connected)
    client_connected_anon_kb: int | None = None
    client_load_rss_kb: int | None = None  # the most while the load ran (sampled)
    client_threads: int = 0
    client_cpu_total_s: float = 0.0  # ru_utime + ru_stime: start-up, connect, run, report
    client_cpu_before_load_s: float | None = None  # start-up + connect + prepare statements
    client_cpu_run_s: float | None = None  # from "Threads started!" to the end of the load
    run_wall_s: float | None = None
    server_idle: dict[str, int] = field(default_factory=dict)  # before the point connects
    server_loaded: dict[str, int] = field(default_factory=dict)  # in the middle of the load
    # The engine's own count (run.json, when this oltplab reports it): a cross-check.
    engine_cpu_per_txn_us: float | None = None
    flags: list[str] = field(default_factory=list)
    # The host's CPU use (all cores) in the seconds before the point, this script's servers
    # idle: what other work competed with the measurement. Not the load average, which also
    # remembers the previous point's thousands of server threads for a minute.
    host_busy_pct_before: float = 0.0
    run_dir: str = ""

    @property
    def skipped(self) -> bool:
        return (self.error or "").startswith("skipped")

    @property
    def failure(self) -> str:
        return str(self.error) if self.skipped else f"failed: {self.error}"

    @property
    def cpu_per_txn_us(self) -> float | None:
        return per_txn_us(self.client_cpu_run_s, self.transactions)

    @property
    def cpu_pct(self) -> float | None:
        """Client CPU while the load ran, in % of one core."""
        if self.client_cpu_run_s is None or not self.run_wall_s:
            return None
        return 100 * self.client_cpu_run_s / self.run_wall_s

    def server_mb(self, which: dict[str, int]) -> float | None:
        kb = which.get("rss_kb", which.get("pss_kb"))
        return None if kb is None else kb / 1024


def run_point(
    server: ManagedServer, connections: int, args: argparse.Namespace, out_dir: Path
) -> Point:
    point = Point(server.engine, connections, args.time)
    point.host_busy_pct_before = host_busy_pct()
    point.server_idle = server_memory_kb(server)
    run_dir = out_dir / f"{server.engine}-{connections}"
    shutil.rmtree(run_dir, ignore_errors=True)
    point.run_dir = str(run_dir)
    argv = oltplab_argv(
        "run", WORKLOAD, f"--db={server.url}", f"--threads={connections}",
        f"--time={args.time:g}", f"--tables={args.tables}", f"--table-size={args.table_size}",
        "--report-interval=1", f"--out={run_dir}",
    )  # fmt: skip
    env = os.environ | {"PYTHONUNBUFFERED": "1"}  # lines arrive as they are printed
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    sampler = Sampler(proc.pid, server)
    sampler.start()
    started = ended = None
    assert proc.stdout is not None
    assert proc.stderr is not None
    for line in proc.stdout:
        if line.startswith("Threads started!"):
            started = time.monotonic()
            sampler.snapshot_at = started + args.time / 2
        elif line.startswith("SQL statistics:"):
            ended = time.monotonic()
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    ended_wall = time.monotonic()
    sampler.done.set()
    sampler.join()

    point.client_peak_rss_kb = max((s.hwm_kb for s in sampler.samples), default=None)
    point.client_cpu_total_s = usage.ru_utime + usage.ru_stime
    point.client_threads = max((s.threads for s in sampler.samples), default=0)
    point.server_loaded = sampler.server_mem
    if started is not None:
        # The first sample after the line: the engine allocates its recorders just before it
        # reports the start, and a sample from before the line may miss them.
        at_start = sampler.after(started)
        at_end = sampler.at(ended or ended_wall)
        if at_start is not None:
            point.client_connected_rss_kb = at_start.rss_kb
            point.client_connected_anon_kb = at_start.anon_kb
            point.client_cpu_before_load_s = at_start.cpu_s
        if at_start is not None and at_end is not None:
            point.client_cpu_run_s = at_end.cpu_s - at_start.cpu_s
            point.run_wall_s = at_end.t - at_start.t
            point.client_load_rss_kb = max(
                s.rss_kb for s in sampler.samples if at_start.t <= s.t <= at_end.t
            )

    manifest_path = run_dir / "run.json"
    if proc.returncode != 0 or not manifest_path.exists():
        point.error = (stderr.strip() or f"exit code {proc.returncode}").splitlines()[-1]
        return point
    doc = load_run(run_dir).doc
    point.complete = doc.complete
    point.error = doc.error
    point.flags = list(doc.flags or ())
    if doc.summary is None:
        return point
    summary = doc.summary
    point.connect_s = summary.connect_s
    point.transactions = summary.transactions
    point.tps = summary.tps
    point.p95_ms = summary.latency_ms.p95
    point.p99_ms = summary.latency_ms.p99
    point.errors = summary.errors.total
    point.reconnects = summary.reconnects
    point.engine_cpu_per_txn_us = summary.client_cpu_per_txn_us
    return point


# -- servers and data --------------------------------------------------------------------------


def room_for(server: ManagedServer, n: int, done: Sequence[Point]) -> str | None:
    """Why `n` connections would not fit on this machine (PostgreSQL runs a process per
    connection), or None. Estimated from the points already measured on this server."""
    if server.engine != "postgresql":
        return None
    per_conn_kb = per_connection_kb(
        [p for p in done if p.engine == server.engine],
        lambda p: p.server_loaded.get("pss_kb"),
    )
    if per_conn_kb is None:
        per_conn_kb = 2048.0  # nothing measured yet: a backend that ran oltp_read_only
    need_kb = n * per_conn_kb * 1.3  # page tables, kernel stacks: +30 %
    have_kb = memory_available_kb()
    if need_kb > have_kb:
        return (
            f"{n:,} PostgreSQL backends need about {need_kb / MB:.1f} GiB, "
            f"{have_kb / MB:.1f} GiB is available"
        )
    pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
    tasks = int(Path("/proc/loadavg").read_text().split()[3].split("/")[1])  # threads too
    if tasks + n + 1000 > pid_max:
        return f"{n:,} more processes would exhaust kernel.pid_max={pid_max} ({tasks} in use)"
    return None


def prepare(server: ManagedServer, args: argparse.Namespace) -> float:
    data = [f"--tables={args.tables}", f"--table-size={args.table_size}"]
    server.recreate_database()
    t0 = time.monotonic()
    subprocess.run(
        oltplab_argv("prepare", WORKLOAD, f"--db={server.url}", *data),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.monotonic() - t0


def per_connection_kb(
    points: Sequence[Point], value: Callable[[Point], int | None]
) -> float | None:
    """Least-squares slope of `value` (KiB) over the number of connections, from
    SLOPE_FROM connections up: below, the fixed part still grows (the engine keeps up to 4
    recorder shards per core, 2.6 MiB of histograms each, and no more than one a connection)."""
    xy = [
        (p.connections, v)
        for p in points
        if p.complete and p.connections >= SLOPE_FROM and (v := value(p)) is not None
    ]
    if len(xy) < 2:
        return None
    n = len(xy)
    mx = sum(x for x, _ in xy) / n
    my = sum(y for _, y in xy) / n
    sxx = sum((x - mx) ** 2 for x, _ in xy)
    return sum((x - mx) * (y - my) for x, y in xy) / sxx if sxx else None


def table(points: Sequence[Point]) -> str:
    head = (
        "| server | connections | connect_s | client RSS MB: connected / under load / peak "
        "| client CPU/txn µs | client CPU % of a core | tps | p95 ms | p99 ms | errors "
        "| server memory MB: idle → loaded |\n"
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n"
    )
    rows = []
    for p in points:
        client = " / ".join(
            fmt(None if kb is None else kb / 1024, ".0f")
            for kb in (p.client_connected_rss_kb, p.client_load_rss_kb, p.client_peak_rss_kb)
        )
        idle, loaded = p.server_mb(p.server_idle), p.server_mb(p.server_loaded)
        server = f"{fmt(idle, '.0f')} → {fmt(loaded, '.0f')}"
        status = "" if p.complete else f" ({p.failure})"
        rows.append(
            f"| {p.engine} | {p.connections:,}{status} | {fmt(p.connect_s, '.2f')} "
            f"| {client} "
            f"| {fmt(p.cpu_per_txn_us, '.0f')} | {fmt(p.cpu_pct, '.0f')} | {p.tps:.0f} "
            f"| {fmt(p.p95_ms, '.0f')} | {fmt(p.p99_ms, '.0f')} | {p.errors + p.reconnects} "
            f"| {server} |"
        )
    return head + "\n".join(rows) + "\n"


def slopes(points: Sequence[Point]) -> list[str]:
    lines = []
    for engine in dict.fromkeys(p.engine for p in points):
        mine = [p for p in points if p.engine == engine]
        connected = per_connection_kb(mine, lambda p: p.client_connected_rss_kb)
        loaded = per_connection_kb(mine, lambda p: p.client_load_rss_kb)
        server = per_connection_kb(
            mine, lambda p: p.server_loaded.get("rss_kb", p.server_loaded.get("pss_kb"))
        )
        lines.append(
            f"- {engine}: client memory per connection {fmt(connected, '.1f')} KiB once "
            f"connected, {fmt(loaded, '.1f')} KiB under load; server "
            f"{fmt(server, '.0f')} KiB per connection under load (least-squares slopes over "
            f"the points from {SLOPE_FROM} connections up)."
        )
        biggest = max((p for p in mine if p.complete), key=lambda p: p.connections, default=None)
        if biggest is not None and biggest.connections >= 10_000 and biggest.client_peak_rss_kb:
            peak_mb = biggest.client_peak_rss_kb / 1024
            verdict = "met" if peak_mb <= 500 else "NOT met"
            lines.append(
                f"- {engine}: issue 6's goal, 10,000 connections within 500 MB of client RSS: "
                f"{verdict} ({biggest.connections:,} connections, peak {peak_mb:.0f} MB)."
            )
    return lines


def docs_block(points: Sequence[Point], facts: dict[str, Any]) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in facts["servers"].items())
    busy = ", ".join(f"{p.host_busy_pct_before:.0f} %" for p in points)
    lines = [
        BEGIN,
        "",
        f"{measured_on(facts)}; "
        f"{versions}. {WORKLOAD}, {facts['tables']} x {facts['table_size']:,}-row table, "
        f"{facts['time_s']:g} s per point, loopback TCP, prepared statements. Host CPU busy "
        f"in the 3 s before each point (other work; 100 % = every core): {busy}.",
        "",
        table(points),
        *slopes(points),
        "",
        *reproduce(facts["command"], END),
    ]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--engines", default="mariadb", help="mariadb,postgresql [mariadb]")
    ap.add_argument(
        "--points", default="1,1000,4096,10000",
        help="numbers of connections, comma-separated [1,1000,4096,10000]; per-connection "
        f"costs are slopes over the points from {SLOPE_FROM} up",
    )  # fmt: skip
    ap.add_argument(
        "--pg-points", default=None,
        help="PostgreSQL's points when they differ (each connection is a server process "
        "of a few MB: 10,000 need more memory than many machines have) [--points]",
    )  # fmt: skip
    ap.add_argument("--time", type=float, default=30.0, help="seconds of load per point [30]")
    ap.add_argument("--tables", type=int, default=1)
    ap.add_argument("--table-size", type=int, default=10_000)
    ap.add_argument(
        "--base-dir", type=Path, default=Path("/var/tmp/oltplab-bench-connections"),
        help="where the servers and run directories live (not under a 0700 directory: the "
        "servers run as mysql/postgres when this runs as root)",
    )  # fmt: skip
    ap.add_argument(
        "--engine-source", default=None,
        help="where the engine under test was built from, for the report, when it is not this "
        "checkout (e.g. `abc1234, clean`) [this checkout's `git describe --dirty`]",
    )  # fmt: skip
    ap.add_argument("--keep-servers", action="store_true", help="leave the servers running")
    ap.add_argument("--json", type=Path, help="also write every measurement here")
    ap.add_argument("--write-docs", action="store_true", help=f"update {DOCS.relative_to(ROOT)}")
    return ap.parse_args(argv)


def ints(text: str) -> list[int]:
    return sorted({int(x) for x in text.split(",") if x.strip()})


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    points_of = {e: ints(args.pg_points if e == "postgresql" and args.pg_points else args.points)
                 for e in engines}  # fmt: skip
    largest = max(max(p) for p in points_of.values())
    get_ready(largest, args.base_dir)
    out_dir = args.base_dir / "runs"
    out_dir.mkdir(exist_ok=True)
    facts = common_facts(args, argv)
    points: list[Point] = []
    for engine in engines:
        mine = points_of[engine]
        server = start_server(engine, args.base_dir, max(mine) + SPARE_CONNECTIONS)
        try:
            facts["servers"][server.display_name] = server.version
            prepared_s = prepare(server, args)
            print(f"{server.display_name} {server.version}: prepared in {prepared_s:.1f} s",
                  file=sys.stderr)  # fmt: skip
            for n in mine:
                wait_idle(server)
                problem = room_for(server, n, points)
                if problem is not None:
                    print(f"connections.py: skipping {n:,}: {problem}", file=sys.stderr)
                    points.append(Point(engine, n, args.time, error=f"skipped: {problem}"))
                    continue
                point = run_point(server, n, args, out_dir)
                points.append(point)
                print(table([point]).splitlines()[-1], file=sys.stderr)
        finally:
            if not args.keep_servers:
                server.stop()

    print(table(points))
    for line in slopes(points):
        print(line)
    if args.json:
        doc = {"facts": facts, "points": [asdict(p) | {
            "cpu_per_txn_us": p.cpu_per_txn_us, "cpu_pct": p.cpu_pct} for p in points]}  # fmt: skip
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    if args.write_docs:
        write_docs(docs_block(points, facts), SECTION, BEGIN, END)
        print(f"wrote {DOCS}", file=sys.stderr)
    return 0 if all(p.complete or p.skipped for p in points) else 1


if __name__ == "__main__":
    sys.exit(main())
