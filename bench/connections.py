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
import hashlib
import json
import os
import platform
import re
import resource
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import oltplab
from oltplab.servers import ManagedServer, ServerSettings, create_server

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "performance.md"
SECTION = "## Connection scaling"
BEGIN = "<!-- bench/connections.py: begin (generated; edit the script, not this block) -->"
END = "<!-- bench/connections.py: end -->"
WORKLOAD = "oltp_read_only"
CLK_TCK = os.sysconf("SC_CLK_TCK")
MB = 1024 * 1024
# Room above the largest point: the pre-flight connection, the administrator, monitoring.
SPARE_CONNECTIONS = 100
# Descriptors the client needs besides its sockets (the engine's pre-flight check: 64).
SPARE_FDS = 64
# Per-connection costs are slopes over the points from this many connections up.
SLOPE_FROM = 100


# -- measuring processes from /proc ------------------------------------------------------------


def cpu_s(pid: int) -> float | None:
    """User + system CPU time of a live process, from /proc (clock ticks, 10 ms)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def status_kb(pid: int, *keys: str) -> dict[str, int]:
    """Fields of /proc/PID/status in KiB (VmRSS, VmHWM, RssAnon, ...) or counts (Threads)."""
    out: dict[str, int] = {}
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name in keys:
            out[name] = int(value.split()[0])
    return out


def children(pid: int) -> list[int]:
    """Direct children of `pid` (PostgreSQL's backends under the postmaster)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2 :].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def pss_kb(pid: int) -> int:
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0
    match = re.search(r"^Pss:\s+(\d+) kB", text, re.MULTILINE)
    return int(match.group(1)) if match else 0


def server_memory_kb(server: ManagedServer) -> dict[str, int]:
    """MariaDB: the one process's RSS and peak. PostgreSQL: proportional set size (shared
    memory counted once) summed over the postmaster and every child, and their RSS sum."""
    pid = server.pid()
    if pid is None:
        return {}
    if server.engine == "mariadb":
        st = status_kb(pid, "VmRSS", "VmHWM")
        return {"rss_kb": st.get("VmRSS", 0), "hwm_kb": st.get("VmHWM", 0), "processes": 1}
    procs = [pid, *children(pid)]
    rss = sum(status_kb(p, "VmRSS").get("VmRSS", 0) for p in procs)
    return {"pss_kb": sum(pss_kb(p) for p in procs), "rss_sum_kb": rss, "processes": len(procs)}


@dataclass
class Sample:
    t: float  # time.monotonic()
    cpu_s: float
    rss_kb: int
    hwm_kb: int  # VmHWM: the process's peak RSS so far (since its exec)
    anon_kb: int
    threads: int


class Sampler(threading.Thread):
    """Samples the client's CPU time and memory every `every_s`; once `snapshot_at` is set,
    takes the server's memory once at that time (a PostgreSQL snapshot reads thousands of
    /proc files, so it is not repeated while the load runs)."""

    def __init__(self, pid: int, server: ManagedServer, every_s: float = 0.05) -> None:
        super().__init__(name="sampler", daemon=True)
        self.pid, self.server, self.every_s = pid, server, every_s
        self.samples: list[Sample] = []
        self.snapshot_at: float | None = None
        self.server_mem: dict[str, int] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            now = time.monotonic()
            cpu = cpu_s(self.pid)
            st = status_kb(self.pid, "VmRSS", "VmHWM", "RssAnon", "Threads")
            if cpu is None or not st:
                break  # exited
            self.samples.append(
                Sample(
                    now, cpu, st.get("VmRSS", 0), st.get("VmHWM", 0), st.get("RssAnon", 0),
                    st.get("Threads", 0),
                )
            )  # fmt: skip
            if self.snapshot_at is not None and now >= self.snapshot_at and not self.server_mem:
                self.server_mem = server_memory_kb(self.server)
            self.done.wait(self.every_s)

    def at(self, t: float) -> Sample | None:
        """The last sample taken at or before `t`."""
        before = [s for s in self.samples if s.t <= t]
        return before[-1] if before else None

    def after(self, t: float) -> Sample | None:
        """The first sample taken at or after `t`."""
        return next((s for s in self.samples if s.t >= t), None)


# -- one point ---------------------------------------------------------------------------------


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
        if self.client_cpu_run_s is None or not self.transactions:
            return None
        return self.client_cpu_run_s / self.transactions * 1e6

    @property
    def cpu_pct(self) -> float | None:
        """Client CPU while the load ran, in % of one core."""
        if self.client_cpu_run_s is None or not self.run_wall_s:
            return None
        return 100 * self.client_cpu_run_s / self.run_wall_s

    def server_mb(self, which: dict[str, int]) -> float | None:
        kb = which.get("rss_kb", which.get("pss_kb"))
        return None if kb is None else kb / 1024


def cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of all cores, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    total = sum(fields[:8])  # without guest time, which is counted in user already
    return total - idle, total


def host_busy_pct(window_s: float = 3.0) -> float:
    busy0, total0 = cpu_times()
    time.sleep(window_s)
    busy1, total1 = cpu_times()
    return 100.0 * (busy1 - busy0) / max(total1 - total0, 1)


def oltplab_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "oltplab", *args]


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
    manifest = json.loads(manifest_path.read_text())
    summary = manifest["summary"]
    point.complete = bool(manifest["complete"])
    point.error = manifest.get("error")
    point.connect_s = summary["connect_s"]
    point.transactions = summary["transactions"]
    point.tps = summary["tps"]
    point.p95_ms = summary["latency_ms"]["p95"]
    point.p99_ms = summary["latency_ms"]["p99"]
    point.errors = summary["errors"]["total"]
    point.reconnects = summary["reconnects"]
    point.engine_cpu_per_txn_us = summary.get("client_cpu_per_txn_us")
    point.flags = list(manifest.get("flags") or summary.get("flags") or [])
    return point


# -- servers and data --------------------------------------------------------------------------


def raise_client_fd_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= needed:
        return
    if hard != resource.RLIM_INFINITY and hard < needed:
        sys.exit(
            f"connections.py: {needed} open files needed for the client, but the hard limit is "
            f"{hard}; raise it (ulimit -Hn, LimitNOFILE=) or lower --points"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))  # children inherit it


def check_ports(needed: int) -> None:
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    if high - low + 1 < needed:
        sys.exit(
            f"connections.py: {needed} connections need as many local ports, but "
            f"net.ipv4.ip_local_port_range has {high - low + 1} ({low}-{high}); widen it"
        )


def server_settings(engine: str, max_connections: int) -> ServerSettings:
    variables: dict[str, str | int] = {}
    if engine == "postgresql":
        # Each backend is a process; keep its per-process memory at the defaults, stated.
        variables = {"shared_buffers": "128MB", "work_mem": "4MB"}
    return ServerSettings(max_connections=max_connections, variables=variables)


def start_server(engine: str, base_dir: Path, max_connections: int) -> ManagedServer:
    server = create_server(engine, base_dir / engine, server_settings(engine, max_connections))
    server.start()
    return server


def client_connections(server: ManagedServer) -> int:
    """Client sessions the server holds (the administrator's query counts itself)."""
    if server.engine == "mariadb":
        sql = "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS " \
              "WHERE VARIABLE_NAME = 'THREADS_CONNECTED'"  # fmt: skip
    else:
        sql = "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
    return int(server.query(sql)[0][0])


def wait_idle(server: ManagedServer, timeout_s: float = 120.0) -> None:
    """Waits until the previous point's sessions have gone: thousands of server threads or
    processes take a while to exit, and the next run's pre-flight check counts them."""
    deadline = time.monotonic() + timeout_s
    while client_connections(server) > 1 and time.monotonic() < deadline:
        time.sleep(0.5)


def memory_available_kb() -> int:
    return status_like(Path("/proc/meminfo"), "MemAvailable")


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


# -- facts and reporting -----------------------------------------------------------------------


def machine() -> dict[str, Any]:
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem_kb = status_like(Path("/proc/meminfo"), "MemTotal")
    return {
        "cpu_model": cpu,
        "cores": os.cpu_count(),
        "memory_gib": round(mem_kb / MB, 1),
        "kernel": platform.release(),
        "os": platform.freedesktop_os_release().get("PRETTY_NAME", platform.system()),
        "nofile_limit": resource.getrlimit(resource.RLIMIT_NOFILE),
        "ip_local_port_range": Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split(),
        "somaxconn": Path("/proc/sys/net/core/somaxconn").read_text().strip(),
    }


def status_like(path: Path, key: str) -> int:
    for line in path.read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def engine_build() -> str:
    """`release` or `debug` when the loaded engine is a copy of a cargo build it can find
    (maturin develop copies it), else `unknown`."""
    import oltplab._core as core

    so = Path(core.__file__)
    digest = sha256(so)
    targets = [ROOT / "target"]
    if os.environ.get("CARGO_TARGET_DIR"):
        targets.insert(0, Path(os.environ["CARGO_TARGET_DIR"]))
    for target in targets:
        for profile in ("release", "debug"):
            built = target / profile / "lib_core.so"
            same_size = built.exists() and built.stat().st_size == so.stat().st_size
            if same_size and sha256(built) == digest:
                return profile
    return "unknown"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def git_describe() -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return done.stdout.strip()


def fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


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
    m = facts["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in facts["servers"].items())
    busy = ", ".join(f"{p.host_busy_pct_before:.0f} %" for p in points)
    lines = [
        BEGIN,
        "",
        f"Measured {facts['date']} on {m['cpu_model']}, {m['cores']} cores, "
        f"{m['memory_gib']} GiB, Linux {m['kernel']} ({m['os']}); oltplab "
        f"{facts['oltplab']} (git {facts['git']}, {facts['engine_build']} engine build); "
        f"{versions}. {WORKLOAD}, {facts['tables']} x {facts['table_size']:,}-row table, "
        f"{facts['time_s']:g} s per point, loopback TCP, prepared statements. Host CPU busy "
        f"in the 3 s before each point (other work; 100 % = every core): {busy}.",
        "",
        table(points),
        *slopes(points),
        "",
        "Reproduce:",
        "",
        "```",
        "make build-release",
        facts["command"],
        "```",
        "",
        END,
    ]
    return "\n".join(lines)


def write_docs(block: str, path: Path = DOCS) -> None:
    """Replaces the generated block of the "Connection scaling" section (the text around it
    is kept), adding the section, or the file, when missing."""
    text = path.read_text() if path.exists() else "# Performance\n"
    if BEGIN in text and END in text:
        before, rest = text.split(BEGIN, 1)
        after = rest.split(END, 1)[1]
        text = before + block + after
    elif SECTION in text:
        head, tail = text.split(SECTION, 1)
        text = head + SECTION + "\n\n" + block + "\n" + tail
    else:
        text = text.rstrip("\n") + f"\n\n{SECTION}\n\n{block}\n"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text)
    tmp.replace(path)


# -- main --------------------------------------------------------------------------------------


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


def shown_args(argv: Sequence[str] | None) -> list[str]:
    """The command line to reproduce with: without --json, whose file is this machine's."""
    args, shown = list(sys.argv[1:] if argv is None else argv), []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--json":
            skip = True
        elif not arg.startswith("--json="):
            shown.append(arg)
    return shown


def ints(text: str) -> list[int]:
    return sorted({int(x) for x in text.split(",") if x.strip()})


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    points_of = {e: ints(args.pg_points if e == "postgresql" and args.pg_points else args.points)
                 for e in engines}  # fmt: skip
    largest = max(max(p) for p in points_of.values())
    raise_client_fd_limit(largest + SPARE_FDS)
    check_ports(largest)
    args.base_dir.mkdir(parents=True, exist_ok=True)
    args.base_dir.chmod(0o711)
    out_dir = args.base_dir / "runs"
    out_dir.mkdir(exist_ok=True)

    facts: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(),
        "oltplab": oltplab.__version__,
        "git": args.engine_source or git_describe(),
        "engine_build": engine_build(),
        "tables": args.tables,
        "table_size": args.table_size,
        "time_s": args.time,
        "servers": {},
        "command": shlex.join([".venv/bin/python", "bench/connections.py", *shown_args(argv)]),
    }
    if facts["engine_build"] != "release":
        print(
            f"connections.py: warning: the engine is a {facts['engine_build']} build; "
            "measure with `make build-release`",
            file=sys.stderr,
        )
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
        write_docs(docs_block(points, facts))
        print(f"wrote {DOCS}", file=sys.stderr)
    return 0 if all(p.complete or p.skipped for p in points) else 1


if __name__ == "__main__":
    sys.exit(main())
