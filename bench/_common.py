"""What the scripts in bench/ share: the private servers, the host's facts and how busy it is,
/proc sampling of a client process, and writing a generated block into docs/performance.md."""

from __future__ import annotations

import hashlib
import os
import platform
import re
import resource
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import oltplab
from oltplab.servers import ManagedServer, ServerSettings, create_server

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "performance.md"
CLK_TCK = os.sysconf("SC_CLK_TCK")
MB = 1024 * 1024
# Room above the largest point: the pre-flight connection, the administrator, monitoring.
SPARE_CONNECTIONS = 100
# Descriptors the client needs besides its sockets (the engine's pre-flight check: 64).
SPARE_FDS = 64
PROG = Path(sys.argv[0]).name  # the script, in messages

# -- measuring processes from /proc ------------------------------------------------------------


def cpu_s(pid: int, with_children: bool = False) -> float | None:
    """User + system CPU time of a live process (all its threads), from /proc (clock ticks,
    10 ms); `with_children` adds its children that have exited and been waited for."""
    split = cpu_user_kernel_s(pid, with_children)
    return None if split is None else split[0] + split[1]


def cpu_user_kernel_s(pid: int, with_children: bool = False) -> tuple[float, float] | None:
    """User and system (kernel) CPU time of a live process, as `cpu_s`."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    user, kernel = int(fields[11]), int(fields[12])
    if with_children:
        user, kernel = user + int(fields[13]), kernel + int(fields[14])
    return user / CLK_TCK, kernel / CLK_TCK


def server_cpu_s(pid: int) -> float | None:
    """A server's CPU so far: its process with its exited children (cutime + cstime) and its
    live ones (PostgreSQL's postmaster and backends; MariaDB has none)."""
    own = cpu_s(pid, with_children=True)
    if own is None:
        return None
    return own + sum(process_run_s(child) or 0.0 for child in children(pid))


def process_run_s(pid: int) -> float | None:
    """A live single-threaded process's CPU time from /proc/PID/schedstat (nanoseconds).
    /proc/PID/stat truncates each process's times to whole 10-ms ticks: summed over 4,096
    PostgreSQL backends that had run a few milliseconds each, that said 2.2 s where the
    scheduler counted 15.1 (docs/performance-engine.md, "PostgreSQL at 4,096 connections")."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):  # a kernel without schedstats
        return cpu_s(pid)


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
    /proc files, so it is not repeated while the load runs), when there is a server."""

    def __init__(self, pid: int, server: ManagedServer | None, every_s: float = 0.05) -> None:
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
            at_snapshot = self.snapshot_at is not None and now >= self.snapshot_at
            if self.server is not None and at_snapshot and not self.server_mem:
                self.server_mem = server_memory_kb(self.server)
            self.done.wait(self.every_s)

    def at(self, t: float) -> Sample | None:
        """The last sample taken at or before `t`."""
        before = [s for s in self.samples if s.t <= t]
        return before[-1] if before else None

    def after(self, t: float) -> Sample | None:
        """The first sample taken at or after `t`."""
        return next((s for s in self.samples if s.t >= t), None)


# -- the host --------------------------------------------------------------------------------


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


def raise_client_fd_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= needed:
        return
    if hard != resource.RLIM_INFINITY and hard < needed:
        sys.exit(
            f"{PROG}: {needed} open files needed for the client, but the hard limit is "
            f"{hard}; raise it (ulimit -Hn, LimitNOFILE=) or lower --points"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))  # children inherit it


def check_ports(needed: int) -> None:
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    if high - low + 1 < needed:
        sys.exit(
            f"{PROG}: {needed} connections need as many local ports, but "
            f"net.ipv4.ip_local_port_range has {high - low + 1} ({low}-{high}); widen it"
        )


def server_settings(
    engine: str, max_connections: int, extra: Mapping[str, str | int] | None = None
) -> ServerSettings:
    variables: dict[str, str | int] = {}
    if engine == "postgresql":
        # Each backend is a process; keep its per-process memory at the defaults, stated.
        variables = {"shared_buffers": "128MB", "work_mem": "4MB"}
    return ServerSettings(max_connections=max_connections, variables=variables | dict(extra or {}))


def start_server(
    engine: str,
    base_dir: Path,
    max_connections: int,
    extra: Mapping[str, str | int] | None = None,
) -> ManagedServer:
    """A private server in `base_dir`/`engine`, sized for `max_connections`; `extra` server
    variables are added to (or override) server_settings'."""
    settings = server_settings(engine, max_connections, extra)
    server = create_server(engine, base_dir / engine, settings)
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


def per_txn_us(cpu_s: float | None, transactions: int) -> float | None:
    """CPU seconds per transaction, in µs (None when either is missing)."""
    return None if cpu_s is None or not transactions else cpu_s / transactions * 1e6


def table_head(columns: Sequence[str], left: int) -> str:
    """A Markdown table's header: the first `left` columns left-aligned, the rest right."""
    aligns = ["---"] * left + ["--:"] * (len(columns) - left)
    return f"| {' | '.join(columns)} |\n|{'|'.join(aligns)}|\n"


def write_docs(block: str, section: str, begin: str, end: str, path: Path = DOCS) -> None:
    """Replaces the generated block (from the `begin` marker to the `end` marker) of
    `section` (its heading line; the text around the block is kept), adding the section, or
    the file, when missing. `block` starts with `begin` and ends with `end`."""
    text = path.read_text() if path.exists() else "# Performance\n"
    if begin in text and end in text:
        before, rest = text.split(begin, 1)
        after = rest.split(end, 1)[1]
        text = before + block + after
    elif section in text:
        head, tail = text.split(section, 1)
        text = head + section + "\n\n" + block + "\n" + tail
    else:
        text = text.rstrip("\n") + f"\n\n{section}\n\n{block}\n"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text)
    tmp.replace(path)


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


def measured_on(facts: dict[str, Any]) -> str:
    """The start of a generated block's first sentence: when, on what, with which oltplab."""
    m = facts["machine"]
    return (
        f"Measured {facts['date']} on {m['cpu_model']}, {m['cores']} cores, "
        f"{m['memory_gib']} GiB, Linux {m['kernel']} ({m['os']}); oltplab "
        f"{facts['oltplab']} (git {facts['git']}, {facts['engine_build']} engine build)"
    )


def reproduce(command: str, end: str) -> list[str]:
    """A generated block's last lines: the command that wrote it, then the `end` marker."""
    return ["Reproduce:", "", "```", "make build-release", command, "```", "", end]


def get_ready(largest: int, base_dir: Path) -> None:
    """Before any server starts: enough open files and local ports for `largest`
    connections, and `base_dir` (reachable by the servers' own users)."""
    raise_client_fd_limit(largest + SPARE_FDS)
    check_ports(largest)
    base_dir.mkdir(parents=True, exist_ok=True)
    base_dir.chmod(0o711)


def common_facts(args: Any, argv: Sequence[str] | None) -> dict[str, Any]:
    """The facts every generated block states (from --engine-source, --tables, --table-size,
    --time and the command line), warning when the engine is not a release build."""
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
        "command": shlex.join([".venv/bin/python", f"bench/{PROG}", *shown_args(argv)]),
    }
    if facts["engine_build"] != "release":
        print(
            f"{PROG}: warning: the engine is a {facts['engine_build']} build; "
            "measure with `make build-release`",
            file=sys.stderr,
        )
    return facts
